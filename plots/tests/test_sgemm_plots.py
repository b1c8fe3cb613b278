"""Tests of plots/sgemm_plots.py and scripts/stepdiff.sh.

Run from the repository root, with the pinned matplotlib (scripts/regenerate.sh installs it):

    .venv-plots/bin/python -m unittest discover -s plots/tests -t .

Every test works on a copy of fixtures/ in a temporary directory, never on the repository.
"""

import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from plots import sgemm_plots

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO_ROOT = Path(__file__).resolve().parents[2]
H100 = "nvidia-h100-80gb-hbm3"
A100 = "nvidia-a100-sxm4-40gb"

PLOT_FILES = ("gflops_vs_size.png", "ratio_to_cublas.png",
              "steps_2048_4096.png", "steps_2048_4096.svg")


def make_repo(parent: Path) -> Path:
    """A fixture repository (steps/, READMEs, docs/) with the fixture results/ inside it."""
    repo = parent / "repo"
    shutil.copytree(FIXTURES / "repo", repo)
    shutil.copytree(FIXTURES / "results", repo / "results")
    return repo


def run_tool(*args) -> tuple[int, str, str]:
    """Runs the tool in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = sgemm_plots.main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def section(text: str, name: str) -> str:
    """What lies between a pair of markers."""
    return text.split(f"<!-- BEGIN {name} -->")[1].split(f"<!-- END {name} -->")[0]


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)


class MalformedCsvTest(TempDirTestCase):
    """Bad input is reported as `path:line: problem` with exit code 2 and no traceback."""

    def check_error(self, fixture: str, line: int, message: str):
        repo = make_repo(self.tmp)
        bad = repo / "results" / H100 / fixture
        shutil.copy(FIXTURES / "malformed" / fixture, bad)
        before = snapshot(repo)
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 2)
        self.assertEqual(err.strip(), f"{sgemm_plots.display_path(bad)}:{line}: {message}")
        self.assertEqual(snapshot(repo), before, "nothing may be written after an error")

    def test_bad_header(self):
        self.check_error("bad_header.csv", 1,
                         "bad header: missing column(s) ms_min; unexpected column(s) ms_minimum")

    def test_non_numeric_field(self):
        self.check_error("non_numeric.csv", 3,
                         "column 'ms_median': expected a number, got 'fast'")

    def test_short_row(self):
        self.check_error("short_row.csv", 2, "expected 27 fields, got 20")

    def write_csv(self, *lines: str) -> Path:
        path = self.tmp / "one.csv"
        path.write_text("\n".join(lines) + "\n")
        return path

    def test_field_checks(self):
        header = ",".join(sgemm_plots.HEADER)
        row = (FIXTURES / "results" / H100 / "00_cublas.csv").read_text().splitlines()[1]
        fields = row.split(",")
        cases = {
            "verified": ("yes", "column 'verified': expected 0 or 1, got 'yes'"),
            "m": ("0", "column 'm': expected a positive integer, got '0'"),
            "variant": ("TILE", "column 'variant': expected NAME=VALUE;NAME=VALUE..., "
                                "got 'TILE'"),
            "timestamp": ("yesterday", "column 'timestamp': expected an ISO 8601 timestamp, "
                                       "got 'yesterday'"),
            "gflops": ("nan", "column 'gflops': expected a finite number, got 'nan'"),
        }
        for column, (value, message) in cases.items():
            with self.subTest(column=column):
                bad = list(fields)
                bad[sgemm_plots.HEADER.index(column)] = value
                path = self.write_csv(header, row, ",".join(bad))
                with self.assertRaises(sgemm_plots.InputError) as caught:
                    sgemm_plots.read_results_csv(path)
                self.assertEqual(str(caught.exception),
                                 f"{sgemm_plots.display_path(path)}:3: {message}")

    def test_empty_file(self):
        path = self.write_csv()
        path.write_text("")
        with self.assertRaisesRegex(sgemm_plots.InputError, r":1: empty file"):
            sgemm_plots.read_results_csv(path)

    def test_command_line_entry_points(self):
        """Both ways of running the tool exit 2 with the message alone, no traceback."""
        repo = make_repo(self.tmp)
        shutil.copy(FIXTURES / "malformed" / "short_row.csv", repo / "results" / H100)
        for command in (["plots/sgemm_plots.py"], ["-m", "plots.sgemm_plots"]):
            with self.subTest(command=command):
                result = subprocess.run([sys.executable, *command, "--repo", str(repo)],
                                        cwd=REPO_ROOT, capture_output=True, text=True)
                self.assertEqual(result.returncode, 2)
                self.assertNotIn("Traceback", result.stderr)
                self.assertRegex(result.stderr, r"short_row\.csv:2: expected 27 fields, got 20")


class MarkerTest(unittest.TestCase):
    TEXT = "intro\n<!-- BEGIN results -->\nold\n<!-- END results -->\noutro\n"

    def test_replaces_only_between_markers(self):
        new = sgemm_plots.replace_section(self.TEXT, "results", "new table", Path("x.md"))
        self.assertEqual(new, "intro\n<!-- BEGIN results -->\n\nnew table\n\n"
                              "<!-- END results -->\noutro\n")

    def test_idempotent(self):
        once = sgemm_plots.replace_section(self.TEXT, "results", "table", Path("x.md"))
        twice = sgemm_plots.replace_section(once, "results", "table", Path("x.md"))
        self.assertEqual(once, twice)

    def test_no_markers(self):
        self.assertIsNone(sgemm_plots.replace_section("text\n", "results", "t", Path("x.md")))

    def test_malformed_markers_are_errors(self):
        cases = {
            "a\n<!-- END results -->\n<!-- BEGIN results -->\n":
                "x.md:2: <!-- END results --> comes before <!-- BEGIN results -->",
            "<!-- BEGIN results -->\n<!-- BEGIN results -->\n<!-- END results -->\n":
                "x.md:1: expected exactly one <!-- BEGIN results --> and one "
                "<!-- END results -->, found 2 and 1",
            "a\n<!-- BEGIN results -->\n":
                "x.md:2: expected exactly one <!-- BEGIN results --> and one "
                "<!-- END results -->, found 1 and 0",
        }
        for text, message in cases.items():
            with self.subTest(text=text):
                with self.assertRaises(sgemm_plots.InputError) as caught:
                    sgemm_plots.replace_section(text, "results", "t", Path("x.md"))
                self.assertEqual(str(caught.exception), message)


class GeneratedDocsTest(unittest.TestCase):
    """One generation run over the fixtures; the tests read what it produced."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.repo = make_repo(Path(cls._tmp.name))
        cls.code, cls.out, cls.err = run_tool("--repo", cls.repo)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def read(self, relative: str) -> str:
        return (self.repo / relative).read_text(encoding="utf-8")

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
        self.assertEqual(new.split(end)[1], original.split(end)[1])
        self.assertNotIn("stale content", new)

    def test_summary_tables(self):
        summary = section(self.read("README.md"), "results-summary")
        self.assertIn("### NVIDIA H100 80GB HBM3", summary)
        self.assertIn("### NVIDIA A100-SXM4-40GB", summary)
        self.assertIn("| step | GFLOPS at 2048 | GFLOPS at 4096 | % of cuBLAS at 2048 | "
                      "% of cuBLAS at 4096 |", summary)
        # The later of the two 2048 rows of 02_coalesce wins.
        self.assertIn("| 02_coalesce | 4750.0 | 4000.0 | 9.5% | 8.0% |", summary)
        # A step found only in the data is listed too.
        self.assertIn("| 05_vectorize | 35500.0 | 35500.0 | 71% | 71% |", summary)
        self.assertIn("build `Release -O3 -DNDEBUG -lineinfo`, git 0f9e8d7c6b5a-dirty, "
                      "a1b2c3d4e5f6, measured 2024-11-21 (UTC)", summary)

    def test_image_links_relative_to_each_file(self):
        image = f"{H100}/steps_2048_4096.png)"
        self.assertIn(f"(docs/plots/{image}", self.read("README.md"))
        self.assertIn(f"(plots/{image}", self.read("docs/overview.md"))

    def test_missing_step(self):
        summary = section(self.read("README.md"), "results-summary")
        a100 = summary.split("### NVIDIA A100-SXM4-40GB")[1].split("###")[0]
        self.assertIn("| 02_coalesce | missing | missing | — | — |", a100)
        self.assertIn("| 05_vectorize | missing | missing | — | — |", a100)
        results = section(self.read("steps/02_coalesce/README.md"), "results")
        self.assertIn("### NVIDIA A100-SXM4-40GB\n\n_missing: no results for this step on "
                      "this GPU._", results)
        # The headline plot annotates each missing bar: H100 lacks 03 and 04 at both sizes.
        svg = (self.repo / "docs/plots" / H100 / "steps_2048_4096.svg").read_text()
        self.assertEqual(svg.count("<!-- missing -->"), 4)

    def test_step_without_results_anywhere(self):
        readme = self.read("steps/03_smem_tiling/README.md")
        self.assertEqual(section(readme, "results").strip(), "_No results yet for this step._")
        self.assertEqual(section(readme, "tuning").strip(), sgemm_plots.NO_TUNING)
        self.assertTrue(readme.endswith("Closing words.\n"))

    def test_step_results_table(self):
        results = section(self.read("steps/02_coalesce/README.md"), "results")
        self.assertIn("| size | GFLOPS | best GFLOPS | cuBLAS GFLOPS | ratio to cuBLAS | reps |",
                      results)
        self.assertIn("| 2048 | 4750.0 | 4896.9 | 50000.0 | 0.095 | 10 |", results)
        self.assertIn("| 8192 | 4000.0 | 4123.7 | 50000.0 | 0.080 | 5 |", results)
        # The non-square row (4096×2048×1024, 3500 GFLOPS) is not a plotted/tabled shape.
        self.assertNotIn("3500.0", results)

    def test_unverified_rows_are_flagged(self):
        results = section(self.read("steps/01_initial/README.md"), "results")
        self.assertIn("| 1024 | 444.0 ⚠ | 457.7 ⚠ |", results)
        self.assertIn(sgemm_plots.UNVERIFIED_NOTE, results)

    def test_run_without_cublas(self):
        """Zeros in the cublas_* columns mean cuBLAS was not timed: a dash, never 0%."""
        results = section(self.read("steps/01_initial/README.md"), "results")
        self.assertIn("| 4096 | 555.0 | 572.2 | — | — | 10 |", results)
        summary = section(self.read("README.md"), "results-summary")
        self.assertIn("| 01_initial | 555.0 | 555.0 | 3.0% | — |", summary)

    def test_tuning_table(self):
        tuning = section(self.read("steps/02_coalesce/README.md"), "tuning")
        table = [line for line in tuning.splitlines() if line.startswith("|")]
        self.assertEqual(table, [
            "| BLOCK_X | BLOCK_Y | size | GFLOPS | ratio to cuBLAS |",
            "| ---: | ---: | ---: | ---: | ---: |",
            "| 32 | 8 | 2048 | 4400.0 | 0.088 |",
            "| 32 | 8 | 4096 | 4550.0 | 0.091 |",
            "| 64 | default | 4096 | 4250.0 | 0.085 |",
            "| default | default | 4096 | 4000.0 | 0.080 |",
            "| 16 | 16 | 4096 | 3200.0 | 0.064 |",
        ])
        self.assertEqual(section(self.read("steps/01_initial/README.md"), "tuning").strip(),
                         sgemm_plots.NO_TUNING)

    def test_file_without_markers_untouched(self):
        name = "steps/04_no_markers/README.md"
        self.assertEqual(self.read(name), (FIXTURES / "repo" / name).read_text())
        self.assertIn("04_no_markers/README.md has no", self.err)

    def test_diff_sizes_generated_wholesale(self):
        diffs = self.read("docs/step-diffs.md")
        self.assertTrue(diffs.startswith("# What each step changes"))
        table = [line for line in section(diffs, "diff-sizes").splitlines()
                 if line.startswith("| 0")]
        self.assertEqual(table, [
            "| 02_coalesce | 01_initial | 3 | 3 | `scripts/stepdiff.sh 2` |",
            "| 03_smem_tiling | 02_coalesce | 12 | 6 | `scripts/stepdiff.sh 3` |",
            "| 04_no_markers | 03_smem_tiling | — | — | no `.cu` file to compare |",
        ])

    def test_no_volatile_metadata(self):
        plots = self.repo / "docs" / "plots" / H100
        self.assertNotIn(b"Software", (plots / "steps_2048_4096.png").read_bytes())
        self.assertNotIn(b"<dc:date>", (plots / "steps_2048_4096.svg").read_bytes())


class ProfileTest(unittest.TestCase):
    """Profile tables from results/<gpu>/profiles/ (ncu_4096.csv and sass_stats.txt)."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.repo = make_repo(Path(cls._tmp.name))
        cls.code, cls.out, cls.err = run_tool("--repo", cls.repo)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def profile(self, step: str) -> str:
        return section((self.repo / "steps" / step / "README.md").read_text(), "profile")

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
                     "| barrier stall ratio | 162,378.6 |",
                     "| short_scoreboard stall ratio | 246,556.3 |",
                     "| FFMA | LDS | LDS.128 | STS | LDG | LDL/STL | BAR |",
                     "| 1088 | 0 | 64 | 16 | 80 | 45 | 2 |"):
            self.assertIn(line, text)
        self.assertNotIn("sm__throughput", text)

    def test_empty_metric_cell(self):
        self.assertIn("| barrier stall ratio | — |", self.profile("01_initial"))

    def test_sass_only_and_missing_profile(self):
        text = self.profile("03_smem_tiling")
        self.assertIn("| 33 | 32 | 8 | 4 | 5 | 0 | 2 |", text)
        self.assertNotIn("registers / thread", text)
        self.assertEqual(self.profile("00_cublas").strip(),
                         "_No profile recorded for this step._")

    def test_comparison_table(self):
        text = section((self.repo / "steps/02_coalesce/README.md").read_text(), "compare")
        self.assertIn("### NVIDIA H100 80GB HBM3", text)
        for line in ("| metric | 01_initial at 02's tile | 02_coalesce |",
                     "| FMA pipe active | 56.5% | 66.1% |",
                     "| warp instructions executed | 2,661,941,248 | 2,578,407,424 |",
                     "| short_scoreboard stall ratio | 104,700.8 | — |"):
            self.assertIn(line, text)
        self.assertNotIn("barrier stall ratio", text)  # no column has it
        # A page without compare markers is left alone ("not generated" is never warned).
        self.assertNotIn("Comparison", (self.repo / "steps/03_smem_tiling/README.md").read_text())

    def test_summary_table(self):
        text = section((self.repo / "docs/overview.md").read_text(), "profile-summary")
        lines = [line for line in text.splitlines() if line.startswith("| 0")]
        self.assertEqual([line.split(" | ")[0] for line in lines],
                         ["| 00_cublas", "| 01_initial", "| 02_coalesce", "| 03_smem_tiling",
                          "| 04_no_markers", "| 05_vectorize"])
        self.assertEqual(lines[2], "| 02_coalesce | 128 | 23.8% | 49.1% | 2,796,822,528 | 76.8% "
                                   "| 269,110,744 | 81.1% | 617.9 |")
        self.assertEqual(lines[0], "| 00_cublas" + " | —" * 8 + " |")

    def test_no_profile_markers_no_warning(self):
        # README.md has results-summary but no profile markers: no "not generated" warning.
        self.assertNotIn("not generated", self.err)
        self.assertNotIn("Profile", (self.repo / "README.md").read_text())


class ProfileInputTest(TempDirTestCase):
    def check_error(self, fixture: str, target: str, message: str):
        repo = make_repo(self.tmp)
        bad = repo / "results" / H100 / "profiles" / target
        shutil.copy(FIXTURES / "malformed" / fixture, bad)
        before = snapshot(repo)
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 2)
        self.assertEqual(err.strip(), f"{sgemm_plots.display_path(bad)}:{message}")
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


class RegenerationTest(TempDirTestCase):
    def test_second_run_changes_nothing(self):
        repo = make_repo(self.tmp)
        self.assertEqual(run_tool("--repo", repo)[0], 0)
        first = snapshot(repo)
        code, out, _ = run_tool("--repo", repo)
        self.assertEqual(code, 0)
        self.assertIn("0 file(s) updated", out)
        self.assertEqual(snapshot(repo), first)
        self.assertEqual(run_tool("--repo", repo, "--check")[0], 0)

    def test_deterministic_across_copies(self):
        """Two generations from scratch, in different directories, give identical bytes."""
        repos = [make_repo(self.tmp / name) for name in ("a", "b")]
        for repo in repos:
            self.assertEqual(run_tool("--repo", repo)[0], 0)
        self.assertEqual(snapshot(repos[0]), snapshot(repos[1]))

    def test_check_writes_nothing_and_reports_stale_files(self):
        repo = make_repo(self.tmp)
        before = snapshot(repo)
        code, out, _ = run_tool("--repo", repo, "--check")
        self.assertEqual(code, 1)
        self.assertEqual(snapshot(repo), before)
        self.assertIn("README.md", out)
        self.assertIn("steps_2048_4096.png", out)

        run_tool("--repo", repo)
        (repo / "docs/overview.md").write_text("<!-- BEGIN results-summary -->\n"
                                               "<!-- END results-summary -->\n")
        code, out, _ = run_tool("--repo", repo, "--check")
        self.assertEqual(code, 1)
        self.assertEqual(out.strip(), f"out of date: "
                         f"{sgemm_plots.display_path(repo / 'docs/overview.md')}")

    def test_results_dir_option_and_no_results(self):
        repo = make_repo(self.tmp)
        empty = self.tmp / "empty-results"
        empty.mkdir()
        code, _, _ = run_tool("--repo", repo, "--results", empty)
        self.assertEqual(code, 0)
        self.assertFalse((repo / "docs" / "plots").exists())
        self.assertIn("_No results yet", section((repo / "README.md").read_text(),
                                                 "results-summary"))
        self.assertIn("_No results yet for this step._",
                      (repo / "steps/01_initial/README.md").read_text())

    def test_results_dir_not_found(self):
        repo = make_repo(self.tmp)
        before = snapshot(repo)
        code, _, err = run_tool("--repo", repo, "--results", self.tmp / "typo")
        self.assertEqual(code, 2)
        self.assertIn("typo not found", err)
        self.assertEqual(snapshot(repo), before)

    def test_existing_step_diffs_keeps_its_text(self):
        repo = make_repo(self.tmp)
        (repo / "docs/step-diffs.md").write_text(
            "# Mine\n<!-- BEGIN diff-sizes -->\n<!-- END diff-sizes -->\nEnd.\n")
        run_tool("--repo", repo)
        text = (repo / "docs/step-diffs.md").read_text()
        self.assertTrue(text.startswith("# Mine\n<!-- BEGIN diff-sizes -->\n\n| step |"))
        self.assertTrue(text.endswith("<!-- END diff-sizes -->\nEnd.\n"))


class DiffTest(TempDirTestCase):
    def test_diff_line_counts(self):
        old, new = self.tmp / "old.cu", self.tmp / "new.cu"
        old.write_text("a\nb\nc\n}\n\n}\n")
        new.write_text("a\nB\nc\nd\n}\n\n}\n")
        self.assertEqual(sgemm_plots.diff_line_counts(old, new), (2, 1))
        self.assertEqual(sgemm_plots.diff_line_counts(old, old), (0, 0))

    @unittest.skipUnless(shutil.which("bash") and shutil.which("diff"), "needs bash and diff")
    def test_stepdiff_script(self):
        repo = make_repo(self.tmp)
        (repo / "scripts").mkdir()
        shutil.copy(REPO_ROOT / "scripts" / "stepdiff.sh", repo / "scripts")
        # --stat imports plots.sgemm_plots from the repository it belongs to.
        (repo / "plots").mkdir()
        for name in ("__init__.py", "sgemm_plots.py", "requirements.txt"):
            shutil.copy(REPO_ROOT / "plots" / name, repo / "plots")

        def stepdiff(*args):
            return subprocess.run(["bash", repo / "scripts" / "stepdiff.sh", *args],
                                  capture_output=True, text=True)

        stat = stepdiff("--stat", "3")
        self.assertEqual(stat.stdout, "steps/02_coalesce/coalesce.cu -> "
                         "steps/03_smem_tiling/smem_tiling.cu: 12 lines added, "
                         "6 lines removed\n")
        for args in (["1", "2"], ["2"], ["initial", "02_coalesce"], ["steps/01_initial/", "2"]):
            with self.subTest(args=args):
                result = stepdiff(*args)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertTrue(result.stdout.startswith(
                    "--- steps/01_initial/initial.cu\n+++ steps/02_coalesce/coalesce.cu\n"))
        errors = {("9",): "unknown step '9'", ("1",): "has no previous step",
                  ("4",): "steps/04_no_markers has no no_markers.cu"}
        for args, message in errors.items():
            with self.subTest(args=args):
                result = stepdiff(*args)
                self.assertEqual(result.returncode, 2)
                self.assertIn(message, result.stderr)


if __name__ == "__main__":
    unittest.main()
