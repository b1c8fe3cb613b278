"""What each step changes: code lines apart from re-tuned knobs (scripts/stepdiff.py), the
diff blocks a page asks for, and the tunables tables read from the .cu files."""

from plots import diffs, tunables
from plots.tests.helpers import (GeneratedRepoTestCase, TempDirTestCase, make_repo, run_tool,
                                 section, table_lines)


class DiffCountsTest(TempDirTestCase):
    def test_counts_and_retuned_knobs(self):
        old, new = self.tmp / "old.cu", self.tmp / "new.cu"
        old.write_text("constexpr int A = 1;  // a\nconstexpr bool B = true;\nb\nc\n}\n\n}\n")
        new.write_text("constexpr int A = 16; // a\nconstexpr bool B = true;\nB\nc\nd\n}\n\n}\n")
        self.assertEqual(diffs.diff_counts(old, new), (2, 1, [("A", "1", "16")]))
        self.assertEqual(diffs.diff_counts(old, old), (0, 0, []))


class DiffDocsTest(GeneratedRepoTestCase):
    def test_diff_sizes_table(self):
        text = self.read("docs/step-diffs.md")
        self.assertTrue(text.startswith("# What each step changes"))
        self.assertEqual(table_lines(section(text, "diff-sizes"), "| 0"), [
            "| 02_coalesce | 01_initial | 3 | 3 | `BLOCK_X` 16 → 32, `BLOCK_Y` 16 → 32 | "
            "+5 / −5 | `scripts/stepdiff.sh 2` |",
            "| 03_smem_tiling | 02_coalesce | 13 | 6 | `BLOCK_Y` 32 → 8 | +14 / −7 | "
            "`scripts/stepdiff.sh 3` |",
            "| 04_no_markers | 03_smem_tiling | — | — | — | — | no `.cu` file to compare |",
        ])

    def test_diff_against_an_older_step(self):
        block = section(self.read("steps/03_smem_tiling/README.md"), "diff-vs-1")
        self.assertIn("`scripts/stepdiff.sh 1 3`: 15 lines of code added, 8 removed; re-tuned "
                      "knobs: `BLOCK_X` 16 → 32, `BLOCK_Y` 16 → 8.", block)
        self.assertIn("```diff\n--- steps/01_initial/initial.cu\n"
                      "+++ steps/03_smem_tiling/smem_tiling.cu\n", block)
        self.assertIn("+  __shared__ float As[32 * 32];", block)
        # Code only: the old file's knobs carry the new values (alignment included).
        self.assertIn("\n constexpr int BLOCK_X = 32;  // threads per block along N\n", block)
        self.assertIn("\n constexpr int BLOCK_Y = 8;   // threads per block along M\n", block)

    def test_step_tunables_table(self):
        block = section(self.read("steps/03_smem_tiling/README.md"), "tunables")
        self.assertEqual(table_lines(block)[2:], [
            "| `BLOCK_X` | 32 | same | threads per block along N |",
            "| `BLOCK_Y` | 8 | **32** (re-tuned) | threads per block along M |",
            "| `TILE` | 32 | new | K-width of a shared tile |",
        ])
        self.assertIn("[docs/tunables.md](../../docs/tunables.md)", block)

    def test_tunable_values_across_steps(self):
        block = section(self.read("docs/tunables.md"), "tunable-values")
        self.assertEqual(table_lines(block), [
            "| tunable | 01 | 02 | 03 |",
            "| :--- | ---: | ---: | ---: |",
            "| `BLOCK_X` | 16 | **32** | 32 |",
            "| `BLOCK_Y` | 16 | **32** | **8** |",
            "| `TILE` |  |  | 32 |",
        ])


class TunableMeaningTest(TempDirTestCase):
    def test_a_tunable_without_a_meaning_is_flagged(self):
        repo = make_repo(self.tmp)
        source = repo / "steps/03_smem_tiling/smem_tiling.cu"
        source.write_text(source.read_text().replace("constexpr int TILE = 32;",
                                                     "constexpr int TILE = 32;\n"
                                                     "constexpr bool FAST = true;"))
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 0)
        self.assertIn("docs/tunables.md: no row for FAST (steps/03_smem_tiling)", err)
        block = section((repo / "steps/03_smem_tiling/README.md").read_text(), "tunables")
        self.assertIn("| `FAST` | true | new | _not described yet: add a row to "
                      "docs/tunables.md_ |", block)
        self.assertEqual(tunables.undescribed(repo, ["03_smem_tiling"],
                                              tunables.read_meanings(repo)),
                         ["FAST (steps/03_smem_tiling)"])
