"""Speed against accuracy: drawn only from rows with the accuracy columns; cuBLAS one-pass
TF32 is a context point, never a step."""

import csv
import shutil

from plots import accuracy_plot
from plots.results import load_results
from plots.tables import NO_ACCURACY_PLOT
from plots.tests.helpers import (A100, H100, GeneratedRepoTestCase, TempDirTestCase, make_repo,
                                 run_tool, section)


class AccuracyPlotTest(GeneratedRepoTestCase):
    def test_plot_where_rows_have_accuracy(self):
        self.assertTrue((self.repo / "docs/plots" / H100 / "speed_vs_accuracy.png").is_file())
        # The A100's rows come from files without the accuracy columns: no plot there.
        self.assertFalse((self.repo / "docs/plots" / A100 / "speed_vs_accuracy.png").exists())
        readme = section(self.read("README.md"), "speed-vs-accuracy")
        self.assertIn(f"(docs/plots/{H100}/speed_vs_accuracy.png)", readme)
        self.assertNotIn(A100, readme)
        self.assertIn("cuBLAS with one TF32 pass is the labelled cross",
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
