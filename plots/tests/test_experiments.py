"""Experiment blocks (plots/experiments.py): a development run's CSV as a table per GPU."""

import csv
import tempfile
import unittest
from dataclasses import dataclass
from pathlib import Path

from plots.experiments import TRANSPOSE_SHAPES, experiment_sections, experiment_table

FIELDS = ["step", "variant", "m", "n", "k", "inputs", "ratio_to_cublas", "err_rms_vs_cublas", "verified"]


@dataclass
class Gpu:
    slug: str
    name: str


def write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def row(step="33_x", variant="", m=4096, n=4096, k=4096, inputs="", ratio="1.5", rms="", verified="0"):
    return dict(step=step, variant=variant, m=m, n=n, k=k, inputs=inputs, ratio_to_cublas=ratio,
                err_rms_vs_cublas=rms, verified=verified)


class ExperimentTable(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())

    def test_variants_by_shapes_in_file_order(self):
        path = write(self.dir / "e.csv", [row(variant="b", ratio="1.25"), row(variant="a", m=2048, ratio="2"),
                                          row(variant="b", m=2048, ratio="1.123456")])
        table, unchecked = experiment_table(path)
        lines = table.splitlines()
        self.assertEqual(lines[0], "| variant | 4096×4096×4096 | 2048×4096×4096 |")
        self.assertEqual(lines[2], "| 33_x: b | 1.250 | 1.123 |")
        self.assertEqual(lines[3], "| 33_x: a | — | 2.000 |")
        self.assertTrue(unchecked)

    def test_checked_rows_carry_their_error_and_inputs(self):
        path = write(self.dir / "e.csv", [row(step="34_y", variant="SGEMM_SPLIT=pipeline", inputs="exponents=-118,118",
                                              ratio="0.8312", rms="0.239381", verified="1")])
        table, unchecked = experiment_table(path)
        self.assertIn("| 34_y: SGEMM_SPLIT=pipeline, inputs exponents=-118,118 | 0.831 (0.24) |", table)
        self.assertFalse(unchecked)

    def test_repeated_runs_share_a_cell(self):
        path = write(self.dir / "e.csv", [row(ratio="1.6"), row(ratio="1.7")])
        self.assertIn("| 33_x | 1.600 / 1.700 |", experiment_table(path)[0])

    def test_a_survey_is_a_row_per_shape_with_each_variants_geometric_mean(self):
        sizes = range(1, TRANSPOSE_SHAPES + 2)
        rows = [row(variant=v, m=64 * i, ratio=str(r)) for v, r in (("a", 2.0), ("b", 0.5)) for i in sizes]
        rows[0]["ratio_to_cublas"] = "8.0"  # a's ratios: 8, then 2 at every other shape
        lines = experiment_table(write(self.dir / "e.csv", rows))[0].splitlines()
        self.assertEqual(lines[0], "| shape | 33_x: a | 33_x: b |")
        self.assertEqual(lines[2], "| 64×4096×4096 | 8.000 | 0.500 |")
        self.assertEqual(len(lines), 2 + len(sizes) + 1)
        mean_a = 2.0 * 4.0 ** (1 / len(sizes))
        self.assertEqual(lines[-1], f"| geometric mean ({len(sizes)} shapes) | {mean_a:.3f} | 0.500 |")

    def test_a_survey_with_a_missing_cell_has_no_mean(self):
        rows = [row(variant=v, m=64 * i) for v in "ab" for i in range(1, TRANSPOSE_SHAPES + 2)]
        lines = experiment_table(write(self.dir / "e.csv", rows[:-1]))[0].splitlines()
        self.assertIn("| — |", lines[-1])
        self.assertNotIn("geometric mean", lines[-1])

    def test_sections_per_gpu_with_the_file_linked(self):
        results = self.dir / "results"
        write(results / "gpu-a" / "experiments" / "e1.csv", [row()])
        page = self.dir / "steps" / "33_x" / "README.md"
        text = "<!-- BEGIN experiment-e1 -->\n<!-- END experiment-e1 -->\n<!-- BEGIN experiment-e2 -->"
        sections = experiment_sections(text, results, [Gpu("gpu-a", "GPU A"), Gpu("gpu-b", "GPU B")], page)
        self.assertEqual(set(sections), {"experiment-e1", "experiment-e2"})
        self.assertIn("### GPU A", sections["experiment-e1"])
        self.assertNotIn("GPU B", sections["experiment-e1"])
        self.assertIn("(../../results/gpu-a/experiments/e1.csv)", sections["experiment-e1"])
        self.assertIn("timed without a check", sections["experiment-e1"])
        self.assertIn("No rows yet", sections["experiment-e2"])


if __name__ == "__main__":
    unittest.main()
