"""The results tables: README/overview summary and each step page's results table."""

from plots.markdown import UNVERIFIED_NOTE
from plots.schema import read_results_csv
from plots.tests.helpers import (A100, FIXTURES, H100, PLOT_FILES, GeneratedRepoTestCase,
                                 section)
from plots.tuning import NO_TUNING


class GeneratedDocsTest(GeneratedRepoTestCase):
    def test_success_and_plot_files(self):
        self.assertEqual(self.code, 0, self.err)
        for gpu in (H100, A100):
            for name in PLOT_FILES:
                self.assertTrue((self.repo / "docs" / "plots" / gpu / name).is_file(), name)

    def test_text_outside_markers_preserved(self):
        original = (FIXTURES / "repo" / "README.md").read_text()
        new = self.read("README.md")
        begin, end = "<!-- BEGIN results-summary -->", "<!-- END results-summary -->"
        self.assertEqual(new.split(begin)[0], original.split(begin)[0])
        self.assertTrue(new.split(end)[1].endswith("Text after the results, kept as is.\n"))
        self.assertNotIn("stale content", new)

    def test_summary_tables(self):
        summary = section(self.read("README.md"), "results-summary")
        self.assertIn("### NVIDIA H100 80GB HBM3", summary)
        self.assertIn("### NVIDIA A100-SXM4-40GB", summary)
        self.assertIn("| step | GFLOPS at 2048 | GFLOPS at 4096 | % of cuBLAS at 2048 | "
                      "% of cuBLAS at 4096 | error RMS (u) at 4096 | vs cuBLAS at 4096 |",
                      summary)
        # The later of the two 2048 rows of 02_coalesce wins; 4096 was timed only (no error).
        self.assertIn("| 02_coalesce | 4750.0 | 4000.0 | 9.5% | 8.0% | — | — |", summary)
        # A step found only in the data is listed too; the cuBLAS TF32 control never is.
        self.assertIn("| 05_vectorize | 35500.0 | 35500.0 | 71% | 71% | — | — |", summary)
        self.assertNotIn("tf32", summary.lower().split("errors are against")[0])
        self.assertIn("build `Release -O3 -DNDEBUG -lineinfo`, measured 2024-11-21 (UTC)",
                      summary)
        self.assertIn("in units of u = 2^-24 ([methodology](docs/methodology.md))", summary)
        self.assertIn("([methodology](methodology.md))",
                      section(self.read("docs/overview.md"), "results-summary"))

    def test_image_links_relative_to_each_file(self):
        image = f"{H100}/steps_2048_4096.png)"
        self.assertIn(f"(docs/plots/{image}", self.read("README.md"))
        self.assertIn(f"(plots/{image}", self.read("docs/overview.md"))

    def test_missing_step(self):
        summary = section(self.read("README.md"), "results-summary")
        a100 = summary.split("### NVIDIA A100-SXM4-40GB")[1].split("###")[0]
        self.assertIn("| 02_coalesce | missing | missing | — | — | — | — |", a100)
        self.assertIn("| 05_vectorize | missing | missing | — | — | — | — |", a100)
        results = section(self.read("steps/02_coalesce/README.md"), "results")
        self.assertIn("### NVIDIA A100-SXM4-40GB\n\n_missing: no results for this step on "
                      "this GPU._", results)
        # The headline plot annotates each missing bar: H100 lacks 03 and 04 at both sizes.
        svg = (self.repo / "docs/plots" / H100 / "steps_2048_4096.svg").read_text()
        self.assertEqual(svg.count("<!-- missing -->"), 4)

    def test_step_without_results_anywhere(self):
        readme = self.read("steps/03_smem_tiling/README.md")
        self.assertEqual(section(readme, "results").strip(), "_No results yet for this step._")
        self.assertEqual(section(readme, "tuning").strip(), NO_TUNING)
        self.assertTrue(readme.endswith("Closing words.\n"))

    def test_step_results_table(self):
        results = section(self.read("steps/02_coalesce/README.md"), "results")
        self.assertIn("| size | GFLOPS | best GFLOPS | cuBLAS GFLOPS | ratio to cuBLAS | "
                      "error max (u) | error RMS (u) | vs cuBLAS | reps |", results)
        self.assertIn("| 1024 | 3200.0 | 3299.0 | 40000.0 | 0.080 | 3.50 | 0.52 | 1.08 | 10 |",
                      results)
        self.assertIn("| 2048 | 4750.0 | 4896.9 | 50000.0 | 0.095 | 4.50 | 0.66 | 1.20 | 10 |",
                      results)
        self.assertIn("| 4096 | 4000.0 | 4123.7 | 50000.0 | 0.080 | — | — | — | 10 |", results)
        self.assertIn("| 8192 | 4000.0 | 4123.7 | 50000.0 | 0.080 | 9.00 | 1.30 | 1.04 | 5 |",
                      results)
        self.assertIn("([methodology](../../docs/methodology.md))", results)
        # The non-square row (4096×2048×1024, 3500 GFLOPS) is not a plotted/tabled shape.
        self.assertNotIn("3500.0", results)

    def test_old_csv_rows_read_as_not_measured(self):
        results = section(self.read("steps/01_initial/README.md"), "results")
        self.assertIn("| 4096 | 555.0 | 572.2 | — | — | — | — | — | 10 |", results)

    def test_unverified_rows_are_flagged(self):
        results = section(self.read("steps/01_initial/README.md"), "results")
        self.assertIn("| 1024 | 444.0 ⚠ | 457.7 ⚠ |", results)
        self.assertIn(UNVERIFIED_NOTE, results)

    def test_run_without_cublas(self):
        """Zeros in the cublas_* columns mean cuBLAS was not timed: a dash, never 0%."""
        results = section(self.read("steps/01_initial/README.md"), "results")
        self.assertIn("| 4096 | 555.0 | 572.2 | — | — |", results)
        summary = section(self.read("README.md"), "results-summary")
        self.assertIn("| 01_initial | 555.0 | 555.0 | 3.0% | — |", summary)

    def test_file_without_markers_untouched(self):
        name = "steps/04_no_markers/README.md"
        self.assertEqual(self.read(name), (FIXTURES / "repo" / name).read_text())
        self.assertIn("04_no_markers/README.md has no", self.err)

    def test_no_volatile_metadata(self):
        plots = self.repo / "docs" / "plots" / H100
        for name in ("steps_2048_4096", "journey"):
            self.assertNotIn(b"Software", (plots / f"{name}.png").read_bytes())
            self.assertNotIn(b"<dc:date>", (plots / f"{name}.svg").read_bytes())

    def test_no_commit_in_generated_markdown(self):
        """The rows keep their git_rev; no page, table or tuning file shows it."""
        revs = {row.git_rev for path in (self.repo / "results").rglob("*.csv")
                if "profiles" not in path.parts for row in read_results_csv(path)}
        self.assertIn("a1b2c3d4e5f6", revs)
        for page in self.repo.rglob("*.md"):
            text = page.read_text(encoding="utf-8")
            for rev in revs:
                self.assertNotIn(rev, text, page)

    def test_steps_side_by_side(self):
        block = section(self.read("steps/03_smem_tiling/README.md"), "speeds-1-2-9")
        self.assertIn("| size | 01_initial GFLOPS (ratio to cuBLAS) | 02_coalesce GFLOPS (ratio "
                      "to cuBLAS) | 09 GFLOPS (ratio to cuBLAS) |", block)
        self.assertIn("| 2048 | 600.0 (0.012) | 4750.0 (0.095) | missing |", block)
        self.assertIn("| 4096 | 555.0 (—) | missing | missing |", block)
