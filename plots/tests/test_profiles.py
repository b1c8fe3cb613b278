"""Profile tables from results/<gpu>/profiles/, and the glossary's definitions of every figure."""

import shutil
import unittest

from plots.profiles import COMPARE_METRICS, FFMA_SHARE, FIGURES, NCU_METRICS
from plots.schema import display_path
from plots.tests.helpers import (FIXTURES, H100, REPO_ROOT, GeneratedRepoTestCase,
                                 TempDirTestCase, make_repo, run_tool, section, snapshot,
                                 table_lines)


class ProfileTest(GeneratedRepoTestCase):
    def profile(self, step: str) -> str:
        return section(self.read(f"steps/{step}/README.md"), "profile")

    def test_step_ncu_and_sass_tables(self):
        self.assertEqual(self.code, 0, self.err)
        text = self.profile("02_coalesce")
        self.assertIn("### NVIDIA H100 80GB HBM3", text)
        for line in ("| registers / thread | 128 |",
                     "| blocks / SM limited by registers | 2 |",
                     "| warps active | 23.8% |",
                     "| FMA pipe active | 49.1% |",
                     "| warp instructions executed | 2,796,822,528 |",
                     # 68719476736 / 32 / 2796822528
                     "| FFMA share of instructions | 76.8% |",
                     "| shared-load wavefronts | 671,763,928 |",
                     "| shared bank conflicts, loads | 269,110,744 |",
                     "| shared bank conflicts, stores | 1,623,821 |",
                     "| L2 hit rate | 81.1% |",
                     "| DRAM read (MB) | 617.9 |",
                     "| barrier stall (cycles / warp) | 162,378.6 |",
                     "| short_scoreboard stall (cycles / warp) | 246,556.3 |",
                     "| FFMA | LDS | LDS.128 | STS | LDG | LDL/STL | BAR |",
                     "| 1088 | 0 | 64 | 16 | 80 | 45 | 2 |"):
            self.assertIn(line, text)
        self.assertNotIn("sm__throughput", text)
        self.assertIn("defined, with its unit, in the "
                      "[glossary](../../docs/glossary.md#profiler-figures)", text)

    def test_empty_metric_cell(self):
        self.assertIn("| barrier stall (cycles / warp) | — |", self.profile("01_initial"))

    def test_sass_only_and_missing_profile(self):
        text = self.profile("03_smem_tiling")
        self.assertIn("| 33 | 32 | 8 | 4 | 5 | 0 | 2 |", text)
        self.assertNotIn("registers / thread", text)
        self.assertEqual(self.profile("00_cublas").strip(),
                         "_No profile recorded for this step._")

    def test_comparison_table(self):
        text = section(self.read("steps/02_coalesce/README.md"), "compare")
        self.assertIn("### NVIDIA H100 80GB HBM3", text)
        for line in ("| metric | 01_initial at 02's tile | 02_coalesce |",
                     "| FMA pipe active | 56.5% | 66.1% |",
                     "| warp instructions executed | 2,661,941,248 | 2,578,407,424 |",
                     "| short_scoreboard stall (cycles / warp) | 104,700.8 | — |"):
            self.assertIn(line, text)
        self.assertNotIn("barrier stall", text)  # no column has it
        # A page without compare markers is left alone ("not generated" is never warned).
        self.assertNotIn("Comparison", self.read("steps/03_smem_tiling/README.md"))

    def test_summary_table(self):
        text = section(self.read("docs/overview.md"), "profile-summary")
        lines = table_lines(text, "| 0")
        self.assertEqual([line.split(" | ")[0] for line in lines],
                         ["| 00_cublas", "| 01_initial", "| 02_coalesce", "| 03_smem_tiling",
                          "| 04_no_markers", "| 05_vectorize"])
        self.assertEqual(lines[2], "| 02_coalesce | 128 | 23.8% | 49.1% | 2,796,822,528 | 76.8% "
                                   "| 269,110,744 | 81.1% | 617.9 |")
        self.assertEqual(lines[0], "| 00_cublas" + " | —" * 8 + " |")
        self.assertIn("[glossary](glossary.md#profiler-figures)", text)

    def test_no_profile_markers_no_warning(self):
        # README.md has results-summary but no profile markers: no "not generated" warning.
        self.assertNotIn("not generated", self.err)
        self.assertNotIn("Profile", self.read("README.md"))

    def test_glossary_defines_every_figure_shown(self):
        text = section(self.read("docs/glossary.md"), "profiler-figures")
        rows = {line.split(" | ")[0][2:]: line for line in table_lines(text)[2:]}
        for figure in {*NCU_METRICS, *COMPARE_METRICS}:
            self.assertIn(figure.label, rows)
            self.assertIn(f"| {figure.unit} |", rows[figure.label])
        self.assertEqual(len(rows), len(FIGURES))
        self.assertIn("| barrier stall (cycles / warp) | cycles / warp | waiting at "
                      "`__syncthreads()`", text)


class ProfileInputTest(TempDirTestCase):
    def check_error(self, fixture: str, target: str, message: str):
        repo = make_repo(self.tmp)
        bad = repo / "results" / H100 / "profiles" / target
        shutil.copy(FIXTURES / "malformed" / fixture, bad)
        before = snapshot(repo)
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 2)
        self.assertEqual(err.strip(), f"{display_path(bad)}:{message}")
        self.assertEqual(snapshot(repo), before)

    def test_non_numeric_ncu_value(self):
        self.check_error("ncu_non_numeric.csv", "ncu_4096.csv",
                         "2: column 'launch__registers_per_thread': expected a number, "
                         "got 'lots'")

    def test_compare_without_variant_column(self):
        self.check_error("compare_no_variant.csv", "compare_4096.csv",
                         "1: bad header: expected step,variant,<metric>,<metric>... with "
                         "distinct names")

    def test_odd_sass_line(self):
        self.check_error("sass_odd.txt", "sass_stats.txt",
                         "1: expected STEP followed by INSTRUCTION COUNT pairs")

    def test_no_profiles(self):
        repo = make_repo(self.tmp)
        shutil.rmtree(repo / "results" / H100 / "profiles")
        self.assertEqual(run_tool("--repo", repo)[0], 0)
        self.assertEqual(section((repo / "docs/overview.md").read_text(),
                                 "profile-summary").strip(), "_No profiles recorded yet._")
        self.assertEqual(section((repo / "steps/02_coalesce/README.md").read_text(),
                                 "profile").strip(), "_No profile recorded for this step._")


class MetricNamesTest(unittest.TestCase):
    """Every Nsight Compute metric a table shows is one the project collects: the names live in
    scripts/ncu_metrics.txt (lines `SET METRIC`), read by the collection scripts."""

    LIST = REPO_ROOT / "scripts" / "ncu_metrics.txt"

    @unittest.skipUnless(LIST.is_file(), "scripts/ncu_metrics.txt not in this checkout")
    def test_shown_metrics_are_collected(self):
        collected = {line.split()[1] for line in self.LIST.read_text().splitlines()
                     if line.strip() and not line.startswith("#")}
        shown = {m.metric for m in (*NCU_METRICS, *COMPARE_METRICS) if m.metric != FFMA_SHARE}
        shown.add("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")  # FFMA share's input
        self.assertEqual(shown - collected, set())
