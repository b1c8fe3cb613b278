"""`experiment-NAME` blocks: a development run's rows, results/<gpu>/experiments/NAME.csv, as one
table per GPU that has the file, so that a page or a step's notes cite an experiment's numbers
through the plot tool instead of typing them.

A table has one row per variant (the CSV's step, its variant label and its inputs, in the
file's order) and one column per shape (M x N x K, in the file's order). A cell is the ratio
to cuBLAS SGEMM in the same run; where the row was verified, its RMS error over cuBLAS's on the
same inputs follows in parentheses. Rows timed without a check (--time-only: verified 0 and no
error columns) show the ratio alone: the table says which rows those are. Several rows of one
variant and shape (repeated runs) are listed in file order, separated by " / ".

An experiment over more than TRANSPOSE_SHAPES shapes (a survey) is drawn the other way round, one
row per shape and one column per variant, and where every variant ran every shape once, a last
row gives each variant's geometric mean of the ratios."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

from plots.markdown import md_table, relative_link

EXPERIMENT = re.compile(r"<!-- BEGIN (experiment-([A-Za-z0-9_.-]+)) -->")
MISSING = "—"
TRANSPOSE_SHAPES = 20  # more shapes than this (a survey): a row per shape


def _label(row: dict[str, str]) -> str:
    parts = [row.get("step", "")]
    if row.get("variant"):
        parts.append(row["variant"])
    if row.get("inputs"):
        parts.append(f"inputs {row['inputs']}")
    return ": ".join(parts[:2]) + ("".join(f", {p}" for p in parts[2:]))


def _cell(row: dict[str, str]) -> str:
    ratio = f"{float(row['ratio_to_cublas']):.3f}"
    rms = row.get("err_rms_vs_cublas", "")
    if row.get("verified") == "1" and rms:
        return f"{ratio} ({float(rms):.2f})"
    return ratio


def experiment_table(path: Path) -> tuple[str, bool]:
    """The table of one experiment CSV, and whether some of its rows were not checked."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    variants: list[str] = []
    shapes: list[str] = []
    cells: dict[tuple[str, str], list[str]] = {}
    ratios: dict[tuple[str, str], list[float]] = {}
    unchecked = False
    for row in rows:
        label, shape = _label(row), f"{row['m']}×{row['n']}×{row['k']}"
        if label not in variants:
            variants.append(label)
        if shape not in shapes:
            shapes.append(shape)
        cells.setdefault((label, shape), []).append(_cell(row))
        ratios.setdefault((label, shape), []).append(float(row["ratio_to_cublas"]))
        unchecked = unchecked or row.get("verified") != "1"
    if len(shapes) <= TRANSPOSE_SHAPES:
        body = [[label] + [" / ".join(cells.get((label, shape), [MISSING])) for shape in shapes]
                for label in variants]
        return md_table(["variant"] + shapes, body), unchecked
    body = [[shape] + [" / ".join(cells.get((label, shape), [MISSING])) for label in variants] for shape in shapes]
    if all(len(ratios.get((label, shape), [])) == 1 for label in variants for shape in shapes):
        means = []
        for label in variants:
            logs = [math.log(ratios[(label, shape)][0]) for shape in shapes]
            means.append(f"{math.exp(sum(logs) / len(logs)):.3f}")
        body.append([f"geometric mean ({len(shapes)} shapes)"] + means)
    return md_table(["shape"] + variants, body), unchecked


def experiment_sections(text: str, results_dir: Path, gpus: list, md_file: Path) -> dict[str, str]:
    """The `experiment-NAME` blocks that `text` asks for."""
    sections = {}
    for match in EXPERIMENT.finditer(text):
        name = match.group(2)
        blocks = []
        for gpu in gpus:
            path = results_dir / gpu.slug / "experiments" / f"{name}.csv"
            if not path.is_file():
                continue
            table, unchecked = experiment_table(path)
            note = ("Ratio to cuBLAS SGEMM in the same run; in parentheses, where the row was "
                    "checked, the RMS error over cuBLAS's on the same inputs")
            if unchecked:
                note += "; a ratio alone: timed without a check (some variants compute wrong results on purpose)"
            link = relative_link(path, md_file)
            blocks.append(f"### {gpu.name or gpu.slug}\n\n{table}\n\n_{note}. Rows: [{path.name}]({link})._")
        sections[match.group(1)] = "\n\n".join(blocks) or f"_No rows yet: results/<gpu>/experiments/{name}.csv._"
    return sections
