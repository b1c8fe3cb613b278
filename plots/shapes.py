"""The non-square shapes of the bench (those where K dominates, e.g. 1024×1024×8192 and
256×256×16384): the `shapes` block of a step page (the step against cuBLAS at each shape, with
the errors) and of docs/overview.md (the later chapters' steps side by side, as ratios to
cuBLAS, so that a reader sees where split-K matters). The square tables never show these
rows; of the plots, the journey and the ratio heat map do (a panel, a column per shape)."""

from __future__ import annotations

from pathlib import Path

from plots.markdown import (MISSING, UNVERIFIED, accuracy_cells, accuracy_note,
                            cublas_gflops_cell, error_number, gflops_cell, md_table, provenance,
                            ratio_cell, relative_link, size_cell, with_unverified_note)
from plots.results import GpuResults
from plots.steps import step_number

CHAPTERS_FROM = 13  # the overview's block lists the steps of the chapters beyond the blog
NO_SHAPES_STEP = "_No results at the non-square shapes yet for this step._"
NO_SHAPES = (f"_No results at the non-square shapes yet for steps {CHAPTERS_FROM} and on: "
             "run `scripts/bench.sh`, then `scripts/regenerate.sh`._")


def shape_name(shape: tuple[int, int, int]) -> str:
    return "×".join(str(n) for n in shape)


def step_shapes_section(step: str, gpus: list[GpuResults], md_file: Path, repo: Path) -> str:
    """The shapes block of steps/<step>/README.md: every non-square shape, per GPU."""
    gpus = [gpu for gpu in gpus if gpu.shapes]
    if not any(gpu.shape_rows_of(step) for gpu in gpus):
        return NO_SHAPES_STEP
    header = ["shape (M×N×K)", "GFLOPS", "cuBLAS GFLOPS", "ratio to cuBLAS", "error max (u)",
              "error RMS (u)", "vs cuBLAS", "reps"]
    blocks = []
    for gpu in gpus:
        rows = gpu.shape_rows_of(step)
        if not rows:
            blocks.append(f"### {gpu.name}\n\n_{MISSING}: no results at the non-square shapes "
                          "for this step on this GPU._")
            continue
        body = [[size_cell(row), gflops_cell(row, row.gflops), cublas_gflops_cell(row),
                 ratio_cell(row), error_number(row.err_max_u), *accuracy_cells(row),
                 str(row.reps)]
                for row in rows]
        blocks.append("\n\n".join([f"### {gpu.name}",
                                   with_unverified_note(md_table(header, body), rows),
                                   accuracy_note(md_file, repo),
                                   provenance(rows)]))
    return "\n\n".join(blocks)


def overview_shapes_section(gpus: list[GpuResults], steps: list[str], md_file: Path,
                            repo: Path, first: int = CHAPTERS_FROM) -> str:
    """The shapes block of docs/overview.md: steps `first` and on (rows) at every non-square
    shape (columns), as the ratio to cuBLAS in the same run, per GPU."""
    chapter = [step for step in steps if (step_number(step) or -1) >= first]
    blocks = []
    for gpu in gpus:
        shapes = gpu.shapes_of(chapter)
        if not shapes:
            continue
        header = ["step"] + [f"ratio to cuBLAS at {shape_name(shape)}" for shape in shapes]
        body = [[step] + [_ratio(gpu, step, shape) for shape in shapes] for step in chapter]
        used = [row for step in chapter for shape in shapes
                if (row := gpu.shape_row(step, shape))]
        cublas = ", ".join(f"{value:.1f} GFLOPS at {shape_name(shape)}" for shape in shapes
                           if (value := gpu.shape_cublas_gflops(shape)) is not None)
        parts = [f"### {gpu.name}", with_unverified_note(md_table(header, body), used)]
        if cublas:
            parts.append("_cuBLAS SGEMM at these shapes, the median of its runs beside every "
                         f"step: {cublas}._")
        parts.append(provenance(used))
        blocks.append("\n\n".join(parts))
    if not blocks:
        return NO_SHAPES
    pages = relative_link(repo / "steps", md_file)
    return "\n\n".join(blocks) + (
        f"\n\nEach step's page (under [steps/]({pages}/)) has the GFLOPS and the errors at "
        "these shapes.")


def _ratio(gpu: GpuResults, step: str, shape: tuple[int, int, int]) -> str:
    row = gpu.shape_row(step, shape)
    if row is None:
        return MISSING
    return ratio_cell(row) + ("" if row.verified else f" {UNVERIFIED}")
