"""Speed against accuracy: drawn only from rows with the accuracy columns; cuBLAS one-pass
TF32 is a context point, never a step."""

import csv
import itertools
import shutil
import unittest

import matplotlib
import matplotlib.style
from matplotlib.text import Annotation, Text

from plots import accuracy_plot
from plots.figures import _RC
from plots.results import load_results
from plots.tables import NO_ACCURACY_PLOT
from plots.tests.helpers import (A100, H100, GeneratedRepoTestCase, TempDirTestCase,
                                 assert_nothing_cut_off, drawn, make_repo, run_tool, section,
                                 synthetic_gpu)


class AccuracyPlotTest(GeneratedRepoTestCase):
    def test_plot_where_rows_have_accuracy(self):
        self.assertTrue((self.repo / "docs/plots" / H100 / "speed_vs_accuracy.png").is_file())
        # The A100's rows come from files without the accuracy columns: no plot there.
        self.assertFalse((self.repo / "docs/plots" / A100 / "speed_vs_accuracy.png").exists())
        readme = section(self.read("README.md"), "speed-vs-accuracy")
        self.assertIn(f"(docs/plots/{H100}/speed_vs_accuracy.png)", readme)
        self.assertNotIn(A100, readme)
        self.assertIn("cuBLAS with one TF32 pass is the labelled cross, in a panel of its own",
                      section(self.read("docs/overview.md"), "speed-vs-accuracy"))

    def test_control_is_never_a_step(self):
        gpu = next(g for g in load_results(self.repo / "results") if g.slug == H100)
        self.assertNotIn("cublas_tf32", gpu.steps)
        self.assertEqual([row.m for row in gpu.controls["cublas_tf32"]], [2048, 4096])
        self.assertTrue(all(not row.verified for row in gpu.controls["cublas_tf32"]))
        # cuBLAS's own median GFLOPS at 4096 comes from the steps' rows, not the control's.
        self.assertEqual(gpu.cublas_gflops(4096), 50000.0)
        self.assertNotIn("cublas_tf32", self.read("docs/overview.md").split("retunes")[0])

    def test_points(self):
        gpu = next(g for g in load_results(self.repo / "results") if g.slug == H100)
        points = sorted(p for row in gpu.rows.values() if (p := accuracy_plot._point(row)))
        # 02_coalesce at 1024, 2048 (the later row) and 8192; 4096 was timed only.
        self.assertEqual(points, [(1.04, 0.08), (1.08, 0.08), (1.2, 0.095)])


class NoAccuracyTest(TempDirTestCase):
    def test_skipped_gracefully(self):
        repo = make_repo(self.tmp)
        (repo / "results" / H100 / "02_coalesce.csv").unlink()
        shutil.rmtree(repo / "results" / H100 / "controls")
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 0, err)
        self.assertFalse(list((repo / "docs/plots").rglob("speed_vs_accuracy.png")))
        self.assertEqual(section((repo / "README.md").read_text(),
                                 "speed-vs-accuracy").strip(), NO_ACCURACY_PLOT)

    def test_control_without_steps_accuracy_draws_nothing(self):
        """The control alone is context for steps that have no accuracy: no plot."""
        repo = make_repo(self.tmp)
        path = repo / "results" / H100 / "02_coalesce.csv"
        with open(path) as file:
            rows = list(csv.reader(file))
        column = rows[0].index("err_rms_vs_cublas")
        for row in rows[1:]:
            row[column] = ""
        with open(path, "w", newline="") as file:
            csv.writer(file, lineterminator="\n").writerows(rows)
        self.assertEqual(run_tool("--repo", repo)[0], 0)
        self.assertFalse(list((repo / "docs/plots").rglob("speed_vs_accuracy.png")))


class LabelsTest(unittest.TestCase):
    def test_step_ranges(self):
        self.assertEqual(accuracy_plot.step_ranges([20, 15, 16, 17, 18, 19]), "15–20")
        self.assertEqual(accuracy_plot.step_ranges([2, 1]), "01, 02")
        self.assertEqual(accuracy_plot.step_ranges([10, 12, 13, 14, 24]), "10, 12–14, 24")

    def test_points_that_fall_together_share_a_label(self):
        groups = accuracy_plot.clusters([(100, 50, 17), (101, 51, 18), (100, 50, 17),
                                         (100, 90, 5)], radius=6)
        self.assertEqual([numbers for _, _, numbers in groups], [[5], [17, 18]])

    def test_spread(self):
        placed = accuracy_plot.spread([10, 11, 12, 40], 5, 0, 100)
        self.assertEqual(placed, sorted(placed))
        self.assertTrue(all(b - a >= 5 - 1e-9 for a, b in zip(placed, placed[1:])))
        self.assertAlmostEqual(sum(placed[:3]) / 3, 11)  # the crowded three, centred
        self.assertEqual(placed[3], 40)  # one with room stays where it is
        low = accuracy_plot.spread([0, 0, 0], 10, 0, 100)
        self.assertEqual(low, [5, 15, 25])  # kept inside the bounds


class ReadableTest(unittest.TestCase):
    """A whole tutorial's worth of points: most steps share cuBLAS's error (x = 1)."""

    @classmethod
    def setUpClass(cls):
        gpu, steps = synthetic_gpu()
        with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
            cls.fig = accuracy_plot.plot_speed_vs_accuracy(gpu, steps)
        cls.renderer = drawn(cls.fig)
        cls.main, cls.side = cls.fig.axes[:2]
        cls.labels = [t for t in cls.main.texts if isinstance(t, Annotation)]

    def test_no_two_labels_overlap(self):
        # The text's own box (an Annotation's box would include its line to the points).
        boxes = [Text.get_window_extent(label, self.renderer) for label in self.labels]
        for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2):
            self.assertFalse(a.overlaps(b), (self.labels[i].get_text(),
                                             self.labels[j].get_text()))

    def test_every_step_labelled(self):
        named = set()
        for label in self.labels:
            for part in label.get_text().split(", "):
                first, _, last = part.partition("–")
                named.update(range(int(first), int(last or first) + 1))
        self.assertEqual(named, set(range(1, 26)) - {23, 24})  # no rows for 23 and 24

    def test_control_in_its_own_panel(self):
        self.assertIn("one TF32 pass", self.side.get_title())
        self.assertLess(self.main.get_ylim()[1], 3)  # the steps' scale, not the control's
        self.assertGreater(self.side.get_ylim()[1], 8)
        self.assertEqual(len(self.side.texts), 4)  # each cross labelled with its size

    def test_caption_clear_of_the_axis_label(self):
        legend = self.fig.legends[0].get_window_extent(self.renderer)
        for ax in (self.main, self.side):
            self.assertFalse(legend.overlaps(ax.xaxis.label.get_window_extent(self.renderer)))
            self.assertFalse(legend.overlaps(ax.get_tightbbox(self.renderer)))

    def test_nothing_cut_off(self):
        assert_nothing_cut_off(self, self.fig)
