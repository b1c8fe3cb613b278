"""The non-square shapes (where K dominates): their own `shapes` blocks on step pages and in
docs/overview.md; never in the square tables or the plots."""

from plots import accuracy_plot
from plots.markdown import UNVERIFIED_NOTE
from plots.results import GpuResults, load_results
from plots.shapes import NO_SHAPES, NO_SHAPES_STEP, overview_shapes_section
from plots.tests.helpers import (A100, H100, GeneratedRepoTestCase, TempDirTestCase,
                                 make_repo, run_tool, section, table_lines)


class ShapesTest(GeneratedRepoTestCase):
    def gpu(self, slug: str) -> GpuResults:
        return next(g for g in load_results(self.repo / "results") if g.slug == slug)

    def test_loaded_apart_from_the_square_rows(self):
        gpu = self.gpu(H100)
        self.assertEqual(sorted(gpu.shapes), [("02_coalesce", (4096, 2048, 1024)),
                                              ("13_split_k", (256, 256, 16384)),
                                              ("13_split_k", (1024, 1024, 8192))])
        self.assertEqual(gpu.sizes, [1024, 2048, 4096, 8192])
        self.assertEqual([row.m for row in gpu.rows_of("13_split_k")], [2048, 4096])
        # The later of the two 1024x1024x8192 runs wins, as for the square sizes.
        self.assertEqual(gpu.shape_row("13_split_k", (1024, 1024, 8192)).gflops, 42000)
        # Ordered by K: the K-heavier shape last.
        self.assertEqual(gpu.shapes_of(["02_coalesce", "13_split_k"]),
                         [(4096, 2048, 1024), (1024, 1024, 8192), (256, 256, 16384)])
        self.assertEqual(gpu.shape_cublas_gflops((256, 256, 16384)), 30000)
        self.assertIsNone(gpu.shape_cublas_gflops((512, 512, 512)))
        self.assertEqual(self.gpu(A100).shapes, {})

    def test_a_step_measured_only_at_the_shapes_is_a_step(self):
        row = self.gpu(H100).shape_row("13_split_k", (1024, 1024, 8192))
        gpu = GpuResults("x", {}, {}, {}, {("14_only_shapes", (1024, 1024, 8192)): row})
        self.assertEqual(gpu.steps, {"14_only_shapes"})
        self.assertEqual(gpu.sizes, [])

    def test_never_in_the_square_tables_or_the_accuracy_plot(self):
        summary = section(self.read("README.md"), "results-summary")
        self.assertIn("| 13_split_k | 45000.0 | 46000.0 | 90% | 92% | — | — |", summary)
        results = section(self.read("steps/02_coalesce/README.md"), "results")
        self.assertNotIn("×", results)
        # The plot takes its points from the square rows only: the shapes' accuracy is not
        # among them (02_coalesce's three square points, as in test_accuracy_plot).
        gpu = self.gpu(H100)
        points = sorted(p for row in gpu.rows.values() if (p := accuracy_plot._point(row)))
        self.assertEqual(points, [(1.04, 0.08), (1.08, 0.08), (1.2, 0.095)])
        self.assertTrue(any(accuracy_plot._point(row) for row in gpu.shapes.values()))

    def test_step_page_block(self):
        block = section(self.read("steps/02_coalesce/README.md"), "shapes")
        self.assertNotIn("stale shapes", block)
        self.assertEqual(table_lines(block), [
            "| shape (M×N×K) | GFLOPS | cuBLAS GFLOPS | ratio to cuBLAS | error max (u) | "
            "error RMS (u) | vs cuBLAS | reps |",
            "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            "| 4096×2048×1024 | 3500.0 | 50000.0 | 0.070 | 2.00 | 0.30 | 0.97 | 10 |"])
        self.assertIn("### NVIDIA H100 80GB HBM3", block)
        # The A100 has no non-square rows at all: no heading for it.
        self.assertNotIn("A100", block)
        self.assertIn("([methodology](../../docs/methodology.md))", block)
        self.assertIn("build `Release -O3 -DNDEBUG -lineinfo`, measured 2024-11-21 (UTC)._",
                      block)
        self.assertNotIn("a1b2c3d4e5f6", block)  # the rows' git_rev: pages name no commit
        self.assertNotIn(UNVERIFIED_NOTE, block)
        self.assertTrue(self.read("steps/02_coalesce/README.md").endswith("Closing words.\n"))

    def test_page_without_the_marker(self):
        self.assertNotIn("shapes", self.read("steps/01_initial/README.md"))
        # An optional block: a page without it gets no warning (01_initial has other blocks).
        self.assertNotIn("01_initial/README.md has no", self.err)

    def test_overview_block(self):
        block = section(self.read("docs/overview.md"), "shapes")
        self.assertEqual(table_lines(block), [
            "| step | ratio to cuBLAS at 1024×1024×8192 | ratio to cuBLAS at 256×256×16384 |",
            "| :--- | ---: | ---: |",
            "| 13_split_k | 1.050 | 0.900 ⚠ |"])
        self.assertIn(UNVERIFIED_NOTE, block)
        self.assertIn("_cuBLAS SGEMM at these shapes, the median of its runs beside every "
                      "step: 40000.0 GFLOPS at 1024×1024×8192, 30000.0 GFLOPS at "
                      "256×256×16384._", block)
        self.assertIn("(under [steps/](../steps/))", block)
        # Steps before the chapters, and their shapes, are not in it; nor is the A100.
        self.assertNotIn("02_coalesce", block)
        self.assertNotIn("4096×2048×1024", block)
        self.assertEqual(block.count("###"), 1)

    def test_overview_missing_cells(self):
        gpus = load_results(self.repo / "results")
        steps = ["01_initial", "02_coalesce", "13_split_k"]
        md_file = self.repo / "docs" / "overview.md"
        block = overview_shapes_section(gpus, steps, md_file, self.repo, first=2)
        self.assertIn("| step | ratio to cuBLAS at 4096×2048×1024 | ratio to cuBLAS at "
                      "1024×1024×8192 | ratio to cuBLAS at 256×256×16384 |", block)
        self.assertIn("| 02_coalesce | 0.070 | missing | missing |", block)
        self.assertIn("| 13_split_k | missing | 1.050 | 0.900 ⚠ |", block)
        self.assertNotIn("01_initial", block)
        self.assertEqual(overview_shapes_section(gpus, steps, md_file, self.repo, first=14),
                         NO_SHAPES)


class NoShapesTest(TempDirTestCase):
    def test_results_without_non_square_rows(self):
        repo = make_repo(self.tmp)
        (repo / "results" / H100 / "13_split_k.csv").unlink()
        path = repo / "results" / H100 / "02_coalesce.csv"
        path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                if ",4096,2048,1024," not in line))
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 0, err)
        self.assertEqual(section((repo / "steps/02_coalesce/README.md").read_text(),
                                 "shapes").strip(), NO_SHAPES_STEP)
        self.assertEqual(section((repo / "docs/overview.md").read_text(), "shapes").strip(),
                         NO_SHAPES)
        # The rest of the page is as with the shapes: the square tables do not depend on them.
        with_shapes = make_repo(self.tmp / "with")
        run_tool("--repo", with_shapes)
        for name in ("results", "tuning"):
            self.assertEqual(
                section((repo / "steps/02_coalesce/README.md").read_text(), name),
                section((with_shapes / "steps/02_coalesce/README.md").read_text(), name))
