"""Markdown building blocks: tables, the formatting of each kind of cell, provenance lines."""

from __future__ import annotations

import math
import os
from pathlib import Path

from plots.schema import Row

MISSING = "missing"
NO_VALUE = "—"  # em dash: a value that cannot be given (step missing, cuBLAS not timed, ...)
UNVERIFIED = "⚠"
UNVERIFIED_NOTE = (
    f"{UNVERIFIED} not verified (`verified` = 0): the result was not checked against the "
    "reference in that run."
)
ACCURACY_NOTE = (
    "Errors are against an FP64 reference, in units of u = 2^-24 "
    "([methodology](DOCS/methodology.md)); \"vs cuBLAS\" is the step's RMS error over cuBLAS "
    f"SGEMM's on the same inputs. {NO_VALUE} in those columns: not measured in that run."
)


def md_table(header: list[str], body: list[list[str]], align: str = "") -> str:
    """A GitHub table. align has one letter per column, l or r; by default the first column
    is left-aligned and the others (numbers) right-aligned."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join(":---" if a == "l" else "---:" for a in align) + " |"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def relative_link(target: Path, md_file: Path) -> str:
    """A link from md_file to target, relative, so that it works on GitHub and locally."""
    return Path(os.path.relpath(target, md_file.parent)).as_posix()


def gflops_cell(row: Row, value: float) -> str:
    return f"{value:.1f}" + ("" if row.verified else f" {UNVERIFIED}")


def percent(ratio: float) -> str:
    return f"{100 * ratio:.1f}%" if ratio < 0.1 else f"{100 * ratio:.0f}%"


def percent_of_cublas(row: Row | None) -> str:
    return percent(row.ratio_to_cublas) if row and row.has_cublas else NO_VALUE


def cublas_gflops_cell(row: Row) -> str:
    return f"{row.cublas_gflops:.1f}" if row.has_cublas else NO_VALUE


def ratio_cell(row: Row) -> str:
    return f"{row.ratio_to_cublas:.3f}" if row.has_cublas else NO_VALUE


def error_number(value: float | None) -> str:
    """An error in units of u, or a ratio of errors: about three significant digits."""
    if value is None:
        return NO_VALUE
    if not math.isfinite(value):
        return str(value)
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 0.01 or value == 0:
        return f"{value:.2f}"
    return f"{value:.1e}"


def accuracy_cells(row: Row | None) -> list[str]:
    """RMS error (u) and the RMS error relative to cuBLAS's, as two cells."""
    if row is None:
        return [NO_VALUE, NO_VALUE]
    return [error_number(row.err_rms_u), error_number(row.err_rms_vs_cublas)]


def accuracy_note(md_file: Path, repo: Path) -> str:
    docs = relative_link(repo / "docs", md_file)
    return ACCURACY_NOTE.replace("DOCS/", "" if docs == "." else docs + "/")


def size_cell(row: Row) -> str:
    return str(row.m) if row.is_square else f"{row.m}×{row.n}×{row.k}"


def with_unverified_note(table: str, rows: list[Row]) -> str:
    return table + ("\n\n" + UNVERIFIED_NOTE if any(not row.verified for row in rows) else "")


def _distinct(values) -> str:
    return ", ".join(sorted({str(v) for v in values if str(v)})) or "unknown"


def provenance(rows: list[Row]) -> str:
    """One line naming everything that the numbers depend on. The commit each row ran at
    stays in the CSV (git_rev), not on the pages: a page names no commit."""
    first = min(row.timestamp for row in rows).date()
    last = max(row.timestamp for row in rows).date()
    dates = str(first) if first == last else f"{first} to {last}"
    return (
        f"_Driver {_distinct(r.driver for r in rows)}, "
        f"CUDA runtime {_distinct(r.runtime for r in rows)}, "
        f"cuBLAS {_distinct(r.cublas for r in rows)}, "
        f"SM clock {_distinct(f'{r.sm_clock_mhz} MHz' for r in rows)}, "
        f"{_distinct(r.sm_count for r in rows)} SMs, "
        f"arch {_distinct(r.arch for r in rows)}, "
        f"build {_distinct(f'`{r.build_type}`' for r in rows if r.build_type)}, "
        f"measured {dates} (UTC)._"
    )
