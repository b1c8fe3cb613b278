"""Accuracy by input class (plots/inputs.py, the `inputs` block) and the bench loaders' skipping
of rows on other inputs (plots/results.py), on synthetic rows."""

import contextlib
import csv
import dataclasses
import io
from pathlib import Path

from plots import schema
from plots.inputs import FAILS, NO_INPUTS, inputs_section, load_inputs, option_text
from plots.markdown import NO_VALUE
from plots.results import load_results
from plots.tests.helpers import (A100, FIXTURES, H100, TempDirTestCase, make_repo, run_tool,
                                 section, table_lines)

TEMPLATE = schema.read_results_csv(FIXTURES / "results" / H100 / "02_coalesce.csv")[0]
EXPONENTS = {"tiny": "exponents=-118,118", "huge": "exponents=118,-118",
             "subnormal": "exponents=-134,120"}


def row(step="26_scaled", size=1024, inputs="", **changes) -> schema.Row:
    values = dict(step=step, m=size, n=size, k=size, inputs=inputs, verified=True,
                  err_rms_vs_cublas=0.24, ratio_to_cublas=1.5, cublas_ms_median=1.0)
    return dataclasses.replace(TEMPLATE, **(values | changes))


def field_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):  # the variant
        return ";".join(f"{name}={v}" for name, v in value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def write_rows(path: Path, rows: list[schema.Row]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(schema.HEADER)
        for r in rows:
            writer.writerow([field_text(getattr(r, name)) for name in schema.HEADER])
    return path


def quietly(function, *args):
    """Calls function; returns (its result, what it printed on stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        result = function(*args)
    return result, err.getvalue()


class BenchLoadersSkipOtherInputsTest(TempDirTestCase):
    def test_results_loaders_skip_rows_with_an_inputs_label(self):
        gpu_dir = self.tmp / "results" / H100
        ordinary = row(gflops=1000.0)
        write_rows(gpu_dir / "26_scaled.csv", [
            ordinary,
            # Later rows of the same shape on other inputs must not replace the ordinary one,
            # nor add a size of their own.
            row(inputs=EXPONENTS["tiny"], gflops=2000.0),
            row(inputs="specials", gflops=3000.0),
            row(size=2048, inputs="ld-pad=1,2,3", gflops=4000.0),
            row(size=1024, inputs="exponents=-40,40", m=1024, n=1024, k=8192),
        ])
        write_rows(gpu_dir / "tuning" / "26_scaled.csv",
                   [row(variant=(("BK", "16"),), inputs=EXPONENTS["huge"])])
        write_rows(gpu_dir / "sweeps" / "26_scaled.csv",
                   [row(variant=(("BK", "32"),), inputs=EXPONENTS["huge"])])
        write_rows(gpu_dir / "controls" / "cublas_tf32.csv",
                   [row(step="cublas_tf32", inputs=EXPONENTS["subnormal"], verified=False)])
        (gpu,), err = quietly(load_results, self.tmp / "results")
        self.assertEqual(gpu.row("26_scaled", 1024), ordinary)
        self.assertEqual(gpu.sizes, [1024])
        self.assertEqual(gpu.shapes, {})
        self.assertEqual(gpu.tuning, {})
        self.assertEqual(gpu.sweeps, {})
        self.assertEqual(gpu.controls["cublas_tf32"], [])
        self.assertIn("26_scaled.csv: rows on other inputs (exponents=-118,118, "
                      "exponents=-40,40, ld-pad=1,2,3, specials) are ignored here", err)
        self.assertIn("cublas_tf32.csv: rows on other inputs", err)

    def test_results_loaders_do_not_read_the_inputs_folder(self):
        gpu_dir = self.tmp / "results" / H100
        write_rows(gpu_dir / "26_scaled.csv", [row()])
        write_rows(gpu_dir / "inputs" / "tiny" / "26_scaled.csv",
                   [row(size=2048, inputs=EXPONENTS["tiny"])])
        (gpu,), err = quietly(load_results, self.tmp / "results")
        self.assertEqual(gpu.sizes, [1024])
        self.assertEqual(err, "")


class InputsBlockTest(TempDirTestCase):
    def write_results(self) -> Path:
        results = self.tmp / "results"
        h100 = results / H100
        write_rows(h100 / "20_pairs.csv", [row("20_pairs", s, err_rms_vs_cublas=0.51,
                                               ratio_to_cublas=1.115) for s in (1024, 4096)])
        write_rows(h100 / "26_scaled.csv", [row("26_scaled", s, err_rms_vs_cublas=0.2,
                                                ratio_to_cublas=1.9) for s in (1024, 4096)])
        for cls, label in EXPONENTS.items():
            for step in ("26_scaled", "20_pairs"):
                fails = cls == "subnormal" and step == "26_scaled"
                rows = [row(step, s, label, verified=not fails,
                            err_rms_vs_cublas=218368.0 if fails else 0.239,
                            ratio_to_cublas=1.744) for s in (4096, 1024)]
                if cls == "huge" and step == "20_pairs":
                    rows = rows[:1]  # 1024 not measured
                write_rows(h100 / "inputs" / cls / f"{step}.csv", rows)
        # A class this tool does not know comes after the known ones; its rows' label is shown.
        write_rows(h100 / "inputs" / "another" / "26_scaled.csv",
                   [row("26_scaled", 1024, "exponents=-40,40", err_rms_vs_cublas=None,
                        verified=False)])
        # A GPU with bench rows and no rows on other inputs gets no block.
        write_rows(results / A100 / "26_scaled.csv", [row(gpu="NVIDIA A100-SXM4-40GB")])
        return results

    def block(self, md_file: str) -> str:
        results = self.write_results()
        gpus, _ = quietly(load_results, results)
        return inputs_section(load_inputs(results), gpus, self.tmp / md_file, self.tmp)

    def test_inputs_table(self):
        text = self.block("docs/methodology.md")
        self.assertTrue(text.startswith("### NVIDIA H100 80GB HBM3\n\nInputs: ordinary"))
        self.assertNotIn("A100", text)
        lines = table_lines(text)
        self.assertEqual(lines[0], "| step | size | ordinary | tiny | huge | subnormal | another "
                                   "| ratio to cuBLAS (ordinary / tiny / huge / subnormal / "
                                   "another) |")
        self.assertEqual(lines[1], "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        self.assertEqual(lines[2:], [
            f"| 20_pairs | 1024 | 0.51 | 0.24 | {NO_VALUE} | 0.24 | {NO_VALUE} "
            f"| 1.115 / 1.744 / {NO_VALUE} / 1.744 / {NO_VALUE} |",
            f"| 20_pairs | 4096 | 0.51 | 0.24 | 0.24 | 0.24 | {NO_VALUE} "
            f"| 1.115 / 1.744 / 1.744 / 1.744 / {NO_VALUE} |",
            f"| 26_scaled | 1024 | 0.20 | 0.24 | 0.24 | 218,368 ({FAILS}) | {NO_VALUE} "
            "| 1.900 / 1.744 / 1.744 / 1.744 / 1.500 |",
            f"| 26_scaled | 4096 | 0.20 | 0.24 | 0.24 | 218,368 ({FAILS}) | {NO_VALUE} "
            f"| 1.900 / 1.744 / 1.744 / 1.744 / {NO_VALUE} |",
        ])

    def test_explanation_and_provenance(self):
        text = self.block("docs/methodology.md")
        explanation = text.split("\n\n")[1]
        self.assertIn("tiny (`--exponents -118,118`), huge (`--exponents 118,-118`), subnormal "
                      "(`--exponents -134,120`) and another (`--exponents -40,40`), where "
                      "`--exponents EA,EB` scales A by 2^EA and B by 2^EB ([tiny, huge and "
                      "subnormal inputs](#tiny-huge-and-subnormal-inputs))", explanation)
        self.assertIn("RMS error over cuBLAS SGEMM's on the same inputs", explanation)
        self.assertIn("speed over cuBLAS SGEMM's timed in the same run", explanation)
        self.assertTrue(explanation.endswith(f"; {NO_VALUE}: not measured."))
        self.assertNotIn("\n", explanation)
        self.assertTrue(text.endswith("measured 2024-11-21 (UTC)._"))

    def test_link_from_a_step_page(self):
        text = self.block("steps/26_scaled/README.md")
        self.assertIn("](../../docs/methodology.md#tiny-huge-and-subnormal-inputs)", text)

    def test_no_rows(self):
        results = self.tmp / "results"
        write_rows(results / H100 / "26_scaled.csv", [row()])
        (results / H100 / "inputs" / "tiny").mkdir(parents=True)
        gpus, _ = quietly(load_results, results)
        self.assertEqual(load_inputs(results), [])
        self.assertEqual(inputs_section(load_inputs(results), gpus, self.tmp / "x.md", self.tmp),
                         NO_INPUTS)
        self.assertEqual(inputs_section([], [], self.tmp / "x.md", self.tmp), NO_INPUTS)

    def test_inputs_folder_skips_ordinary_rows_and_variants(self):
        results = self.tmp / "results"
        write_rows(results / H100 / "inputs" / "tiny" / "26_scaled.csv", [
            row(inputs=EXPONENTS["tiny"], err_rms_vs_cublas=0.3),
            row(inputs=EXPONENTS["tiny"], err_rms_vs_cublas=0.25),  # the last one counts
            row(inputs=""),  # an ordinary row filed here
            row(inputs=EXPONENTS["tiny"], variant=(("BK", "16"),)),
            row(inputs=EXPONENTS["tiny"], m=1024, n=1024, k=8192),
        ])
        (inputs,), err = quietly(load_inputs, results)
        self.assertEqual(list(inputs.rows), [("tiny", "26_scaled", 1024)])
        self.assertEqual(inputs.rows[("tiny", "26_scaled", 1024)].err_rms_vs_cublas, 0.25)
        self.assertIn("rows without an `inputs` label are ignored here", err)

    def test_option_text(self):
        self.assertEqual(option_text("exponents=-118,118"), "--exponents -118,118")
        self.assertEqual(option_text("specials;ld-pad=1,0,0"), "--specials --ld-pad 1,0,0")


class InputsBlockRegisteredTest(TempDirTestCase):
    def test_methodology_and_a_step_page_that_asks(self):
        repo = make_repo(self.tmp)
        markers = "<!-- BEGIN inputs -->\n<!-- END inputs -->\n"
        (repo / "docs" / "methodology.md").write_text("# Methodology\n\n" + markers)
        (repo / "common").mkdir()
        (repo / "common" / "verify.hpp").write_text("")  # no limit: no accuracy-margins block
        page = repo / "steps" / "02_coalesce" / "README.md"
        page.write_text(page.read_text() + "\n" + markers)
        write_rows(repo / "results" / H100 / "inputs" / "tiny" / "02_coalesce.csv",
                   [row("02_coalesce", 1024, EXPONENTS["tiny"], err_rms_vs_cublas=3.34)])
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 0, err)
        for path, link in ((repo / "docs" / "methodology.md", "(#tiny"),
                           (page, "(../../docs/methodology.md#tiny")):
            block = section(path.read_text(), "inputs")
            self.assertIn(link, block)
            # The fixture's ordinary 1024 row of 02_coalesce (vs cuBLAS 1.08) beside the tiny one.
            self.assertIn("| 02_coalesce | 1024 | 1.08 | 3.34 | 0.080 / 1.500 |", block)
        self.assertNotIn("Inputs: ordinary",
                         (repo / "steps" / "01_initial" / "README.md").read_text())
        self.assertNotIn("no <!-- BEGIN inputs --> markers", err)
        self.assertEqual(run_tool("--repo", repo, "--check")[0], 0)
