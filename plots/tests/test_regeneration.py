"""Regeneration: deterministic, idempotent, --check writes nothing, --results."""

from plots.generate import generate
from plots.schema import display_path
from plots.tests.helpers import TempDirTestCase, make_repo, run_tool, section, snapshot


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
                         f"{display_path(repo / 'docs/overview.md')}")

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

    def test_generate_writes_nothing(self):
        repo = make_repo(self.tmp)
        before = snapshot(repo)
        outputs = generate(repo, repo / "results")
        self.assertEqual(snapshot(repo), before)
        self.assertIn(repo / "docs" / "tuning" / "02_coalesce.md", outputs)
