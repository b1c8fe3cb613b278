"""The journey: a panel per bench shape, the chapters marked, the FP32 FFMA peak and the 3xTF32
ceiling drawn, steps without rows shown as not measured (never as zeros)."""

import dataclasses
import shutil
import unittest

import matplotlib
import matplotlib.style

from plots import journey
from plots.figures import _RC, figure_bytes
from plots.results import load_results
from plots.tests.helpers import (A100, H100, GeneratedRepoTestCase, TempDirTestCase,
                                 assert_nothing_cut_off, figure_texts, make_repo, run_tool,
                                 synthetic_gpu)


def texts(fig) -> list[str]:
    return [text.get_text() for text in figure_texts(fig)]


class PeakAndCeilingTest(unittest.TestCase):
    def test_fp32_peak_from_the_rows(self):
        gpu, _ = synthetic_gpu()
        gflops, how = journey.fp32_peak(list(gpu.rows.values()))
        self.assertAlmostEqual(gflops, 132 * 128 * 2 * 1980 / 1000)
        self.assertEqual(how, "132 SMs × 128 FP32 lanes × 2 FLOP × 1980 MHz = 66.9 TFLOPS")

    def test_fp32_lanes_follow_the_arch(self):
        row = next(iter(synthetic_gpu()[0].rows.values()))
        a100 = dataclasses.replace(row, sm_count=108, sm_clock_mhz=1410, arch="native=80")
        self.assertAlmostEqual(journey.fp32_peak([a100])[0], 108 * 64 * 2 * 1410 / 1000)
        # An arch whose lanes per SM are not known draws no peak rather than a wrong one.
        self.assertIsNone(journey.fp32_peak([dataclasses.replace(row, arch="unknown")]))
        self.assertIsNone(journey.fp32_peak([dataclasses.replace(row, arch="999")]))
        self.assertIsNone(journey.fp32_peak([]))

    def test_most_common_provenance_wins(self):
        row = next(iter(synthetic_gpu()[0].rows.values()))
        odd = dataclasses.replace(row, sm_clock_mhz=1000)
        self.assertAlmostEqual(journey.fp32_peak([row, row, odd])[0],
                               132 * 128 * 2 * 1980 / 1000)

    def test_ceiling_is_the_tf32_control_over_three(self):
        gpu, _ = synthetic_gpu()
        self.assertAlmostEqual(journey.tf32x3_ceiling(gpu, (4096, 4096, 4096)), 300000 / 3)
        # The non-square shapes' control rows are read too.
        self.assertAlmostEqual(journey.tf32x3_ceiling(gpu, (256, 256, 16384)), 200000 / 3)
        self.assertIsNone(journey.tf32x3_ceiling(gpu, (512, 512, 512)))
        self.assertIsNone(journey.tf32x3_ceiling(synthetic_gpu(with_control=False)[0],
                                                 (4096, 4096, 4096)))


class JourneyFigureTest(unittest.TestCase):
    def figure(self, **kwargs):
        gpu, steps = synthetic_gpu(**kwargs)
        with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
            return journey.plot_journey(gpu, steps), gpu, steps

    def test_a_panel_per_shape_and_the_chapters(self):
        fig, _, _ = self.figure()
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
        self.assertEqual(titles, ["M=N=K=1024", "M=N=K=2048", "M=N=K=4096", "M=N=K=8192",
                                  "M×N×K = 1024×1024×8192", "M×N×K = 256×256×16384"])
        words = texts(fig)
        for chapter in ("01–09", "10–12", "13–21", "22–40"):
            self.assertEqual(words.count(chapter), 6, chapter)  # one per panel
        for label in ("01–09 the blog series", "10–12 MoYe.jl's pipeline",
                      "13–21 CUDA cores to cuBLAS", "22–40 3xTF32 on tensor cores",
                      "FP32 FFMA peak", "3xTF32 ceiling", "cuBLAS SGEMM", "not measured"):
            self.assertIn(label, words)
        notes = fig.get_supxlabel()
        self.assertIn("FP32 FFMA peak = 132 SMs × 128 FP32 lanes × 2 FLOP × 1980 MHz", notes)
        self.assertIn("3xTF32 ceiling = cuBLAS with one TF32 pass at that shape ÷ 3", notes)

    def test_lines_at_the_peak_the_ceiling_and_cublas(self):
        fig, _, _ = self.figure()
        ax = fig.axes[2]  # M=N=K=4096
        levels = sorted(line.get_ydata()[0] for line in ax.get_lines())
        self.assertEqual(len(levels), 3)
        for got, want in zip(levels, sorted([50.0, 132 * 128 * 2 * 1980 / 1e6, 300 / 3])):
            self.assertAlmostEqual(got, want)

    def test_missing_steps_are_marked_not_drawn_as_zero(self):
        fig, gpu, steps = self.figure()
        kernels = steps[1:]
        for ax in fig.axes:
            # One "not measured" slot per missing step (23 and 24), one filled bar per row.
            self.assertEqual([t.get_text() for t in ax.texts].count(journey.NOT_MEASURED), 2)
            bars = [p for p in ax.patches if p.get_zorder() == 2]  # not the chapter bands
            self.assertEqual(len(bars), len(kernels) - 2)
            self.assertTrue(all(bar.get_height() > 0 for bar in bars))
        ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        self.assertEqual(ticks, [f"{n:02d}" for n in range(1, 26)])  # the slots stay

    def test_nothing_missing_no_legend_entry(self):
        fig, _, _ = self.figure(missing=())
        self.assertNotIn("not measured", texts(fig))

    def test_fastest_of_each_chapter_labelled(self):
        fig, _, _ = self.figure()
        labels = [t for t in fig.axes[2].texts if t.get_text().endswith("×")]
        self.assertEqual(sorted(t.get_text() for t in labels),
                         sorted(["0.88×", "0.92×", "0.99×", "2.07×"]))
        bold = [t.get_text() for t in labels if t.get_fontweight() == "bold"]
        self.assertEqual(bold, ["2.07×"])

    def test_without_control_no_ceiling(self):
        fig, _, _ = self.figure(with_control=False)
        self.assertNotIn("3xTF32 ceiling", texts(fig))
        self.assertEqual(len(fig.axes[0].get_lines()), 2)

    def test_nothing_cut_off(self):
        fig, _, _ = self.figure()
        assert_nothing_cut_off(self, fig)

    def test_svg_deterministic(self):
        def svg():
            with matplotlib.rc_context(_RC):  # the fixed svg.hashsalt, as plot_files sets
                return figure_bytes(self.figure()[0], "svg")
        first = svg()
        self.assertEqual(first, svg())
        self.assertNotIn(b"<dc:date>", first)


class GeneratedJourneyTest(GeneratedRepoTestCase):
    def test_written_for_every_gpu(self):
        for gpu in (H100, A100):
            for name in ("journey.png", "journey.svg"):
                self.assertTrue((self.repo / "docs/plots" / gpu / name).is_file())
        self.assertIn(f"(docs/plots/{H100}/journey.png)", self.read("README.md"))

    def test_fixture_slots(self):
        """03_smem_tiling has a directory and no rows: a not-measured slot in every panel."""
        gpu = next(g for g in load_results(self.repo / "results") if g.slug == H100)
        svg = (self.repo / "docs/plots" / H100 / "journey.svg").read_text()
        steps = ["01_initial", "02_coalesce", "03_smem_tiling", "04_no_markers",
                 "05_vectorize", "13_split_k"]
        panels = journey.shapes(gpu, steps)
        missing = sum(journey.row_at(gpu, step, shape) is None
                      for step in steps for shape in panels)
        # Each slot's label, plus the legend's entry.
        self.assertEqual(svg.count("<!-- not measured -->"), missing + 1)
        self.assertIn("<!-- 3xTF32 ceiling -->", svg)
        a100 = (self.repo / "docs/plots" / A100 / "journey.svg").read_text()
        self.assertNotIn("<!-- 3xTF32 ceiling -->", a100)  # no control measured there
        self.assertIn("64 FP32 lanes", a100)  # sm_80


class NoControlsTest(TempDirTestCase):
    def test_draws_without_controls(self):
        repo = make_repo(self.tmp)
        shutil.rmtree(repo / "results" / H100 / "controls")
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 0, err)
        self.assertTrue((repo / "docs/plots" / H100 / "journey.svg").is_file())


if __name__ == "__main__":
    unittest.main()
