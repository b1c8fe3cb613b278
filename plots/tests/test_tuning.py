"""Tuning tables: the best and worst configurations on the page, every row one link away, and
the sweep rows behind each re-tuned knob in docs/overview.md."""

import csv

from plots.tests.helpers import (FIXTURES, H100, GeneratedRepoTestCase, TempDirTestCase,
                                 make_repo, run_tool, section, table_lines)
from plots.tuning import NO_TUNING


class TuningTest(GeneratedRepoTestCase):
    def test_small_sweep_shows_every_configuration(self):
        tuning = section(self.read("steps/02_coalesce/README.md"), "tuning")
        self.assertEqual(table_lines(tuning), [
            "| rank | BLOCK_X | BLOCK_Y | GFLOPS | ratio to cuBLAS |",
            "| ---: | ---: | ---: | ---: | ---: |",
            "| 1 | 32 | 8 | 4550.0 | 0.091 |",
            "| 2 | 64 | default | 4250.0 | 0.085 |",
            "| 3 (shipped) | default | default | 4000.0 | 0.080 |",
            "| 4 | 16 | 16 | 3200.0 | 0.064 |",
        ])
        self.assertIn("_All 4 configurations at M=N=K=4096. All 5 rows of the sweep, at every "
                      "size: [docs/tuning/02_coalesce.md](../../docs/tuning/02_coalesce.md)._",
                      tuning)
        self.assertEqual(section(self.read("steps/01_initial/README.md"), "tuning").strip(),
                         NO_TUNING)

    def test_full_table_file(self):
        full = self.read("docs/tuning/02_coalesce.md")
        self.assertEqual(table_lines(full), [
            "| BLOCK_X | BLOCK_Y | size | GFLOPS | ratio to cuBLAS | as shipped |",
            "| ---: | ---: | ---: | ---: | ---: | :--- |",
            "| 32 | 8 | 2048 | 4400.0 | 0.088 |  |",
            "| 32 | 8 | 4096 | 4550.0 | 0.091 |  |",
            "| 64 | default | 4096 | 4250.0 | 0.085 |  |",
            "| default | default | 4096 | 4000.0 | 0.080 | shipped |",
            "| 16 | 16 | 4096 | 3200.0 | 0.064 |  |",
        ])
        self.assertIn("(../../steps/02_coalesce/README.md)", full)
        self.assertFalse((self.repo / "docs/tuning/01_initial.md").exists())

    def test_retunes_name_the_sweep_rows(self):
        retunes = section(self.read("docs/overview.md"), "retunes")
        self.assertIn("| [02_coalesce](tuning/02_coalesce.md) | 01 | `BLOCK_X` 16 → 32, "
                      "`BLOCK_Y` 16 → 32 | 4096 | 0.080 of cuBLAS (rank 3 of 4) | "
                      "0.064 of cuBLAS (rank 4 of 4) |", retunes)
        self.assertIn("| 03_smem_tiling | 02 | `BLOCK_Y` 32 → 8 | — | no sweep recorded | "
                      "no sweep recorded |", retunes)


class LargeSweepTest(TempDirTestCase):
    def test_best_worst_and_shipped(self):
        """12 configurations: the best 5, an ellipsis, the shipped one (rank 7), an ellipsis,
        the worst 3."""
        repo = make_repo(self.tmp)
        path = repo / "results" / H100 / "tuning" / "02_coalesce.csv"
        with open(FIXTURES / "results" / H100 / "tuning" / "02_coalesce.csv") as file:
            rows = list(csv.reader(file))
        header, template = rows[0], rows[1]
        gflops, variant = header.index("gflops"), header.index("variant")
        lines = [header]
        for i in range(12):
            row = list(template)
            row[variant] = f"BLOCK_X={32 if i == 6 else 100 + i}"  # 32: the shipped value
            row[gflops] = str(5000 - 100 * i)
            lines.append(row)
        with open(path, "w", newline="") as file:
            csv.writer(file, lineterminator="\n").writerows(lines)
        self.assertEqual(run_tool("--repo", repo)[0], 0)
        tuning = section((repo / "steps/02_coalesce/README.md").read_text(), "tuning")
        ranks = [line.split(" | ")[0] for line in table_lines(tuning)[2:]]
        self.assertEqual(ranks, ["| 1", "| 2", "| 3", "| 4", "| 5", "| …", "| 7 (shipped)",
                                 "| …", "| 10", "| 11", "| 12"])
        self.assertIn("12 configurations at M=N=K=4096: the best 5, the worst 3 and the one "
                      "this step ships", tuning)
        self.assertEqual(len(table_lines((repo / "docs/tuning/02_coalesce.md").read_text())),
                         14)
