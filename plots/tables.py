"""The results tables: the summary of README.md and docs/overview.md, each step's results
table, and the block that shows the speed-against-accuracy plot."""

from __future__ import annotations

import re
from pathlib import Path

from plots.figures import ACCURACY_PLOT, HEADLINE_PLOT, HEADLINE_SIZES, RATIO_PLOT, SIZE_PLOT
from plots.journey import JOURNEY_PLOT
from plots.markdown import (MISSING, accuracy_cells, accuracy_note, cublas_gflops_cell,
                            error_number, gflops_cell, md_table, percent_of_cublas, provenance,
                            ratio_cell, relative_link, size_cell, with_unverified_note)
from plots.results import GpuResults
from plots.steps import step_number
from plots.survey import SURVEY_PAGE, Survey, geomean_percent

NO_RESULTS = "_No results yet: run the benchmarks, then `scripts/regenerate.sh`._"
ACCURACY_SIZE = HEADLINE_SIZES[-1]  # the summary's accuracy columns are at this size
NO_ACCURACY_PLOT = ("_No speed-against-accuracy plot yet: no results row carries the accuracy "
                    "columns (`err_rms_vs_cublas`); re-measure with `scripts/bench.sh`._")


def summary_section(gpus: list[GpuResults], steps: list[str], md_file: Path,
                    repo: Path, surveys: list[Survey] = ()) -> str:
    """The results-summary block of README.md and docs/overview.md; a GPU with survey rows
    (plots/survey.py) gets a column of each step's geometric mean over the survey."""
    gpus = [gpu for gpu in gpus if gpu.rows]
    if not gpus:
        return NO_RESULTS
    sizes = HEADLINE_SIZES
    header = (["step"] + [f"GFLOPS at {s}" for s in sizes]
              + [f"% of cuBLAS at {s}" for s in sizes]
              + [f"error RMS (u) at {ACCURACY_SIZE}", f"vs cuBLAS at {ACCURACY_SIZE}"])
    blocks = []
    for gpu in gpus:
        survey = next((s for s in surveys if s.slug == gpu.slug and s.rows), None)
        body, partial = [], False
        for step in steps:
            rows = [gpu.row(step, size) for size in sizes]
            body.append([step]
                        + [gflops_cell(row, row.gflops) if row else MISSING for row in rows]
                        + [percent_of_cublas(row) for row in rows]
                        + accuracy_cells(gpu.row(step, ACCURACY_SIZE)))
            if survey is not None:
                cell, short = geomean_percent(survey, step)
                body[-1].append(cell)
                partial |= short
        plots_dir = repo / "docs" / "plots" / gpu.slug

        def link(name: str) -> str:
            return relative_link(plots_dir / name, md_file)

        used = [row for row in (gpu.row(s, size) for s in steps for size in sizes) if row]
        table = md_table(header + (["% of cuBLAS, survey geomean"] if survey else []), body)
        notes = [accuracy_note(md_file, repo)]
        if survey is not None:
            notes.append(
                f"The survey column: the geometric mean of the step's speed over cuBLAS SGEMM, "
                f"timed in the same run, at the {len(survey.shapes)} shapes of the "
                f"[shape survey]({relative_link(repo / SURVEY_PAGE, md_file)})"
                + ("; (n of N): the step has checked rows at only n of them." if partial else "."))
        blocks.append("\n\n".join([
            f"### {gpu.name}",
            with_unverified_note(table, used),
            *notes,
            f"![GFLOPS per step at M=N=K=2048 and 4096 on {gpu.name}]"
            f"({link(HEADLINE_PLOT + '.png')})",
            f"More plots: [the journey, every step at every bench shape with the FP32 FFMA "
            f"peak and the 3xTF32 ceiling]({link(JOURNEY_PLOT + '.png')}), "
            f"[GFLOPS against size]({link(SIZE_PLOT)}), "
            f"[speed relative to cuBLAS]({link(RATIO_PLOT)}).",
            provenance(used or list(gpu.rows.values())),
        ]))
    return "\n\n".join(blocks)


def step_results_section(step: str, gpus: list[GpuResults], md_file: Path, repo: Path) -> str:
    """The results block of steps/<step>/README.md: every square size, per GPU."""
    gpus = [gpu for gpu in gpus if gpu.rows]
    if not any(gpu.rows_of(step) for gpu in gpus):
        return "_No results yet for this step._"
    header = ["size", "GFLOPS", "best GFLOPS", "cuBLAS GFLOPS", "ratio to cuBLAS",
              "error max (u)", "error RMS (u)", "vs cuBLAS", "reps"]
    blocks = []
    for gpu in gpus:
        rows = gpu.rows_of(step)
        if not rows:
            blocks.append(f"### {gpu.name}\n\n_{MISSING}: no results for this step on this GPU._")
            continue
        body = [[size_cell(row), gflops_cell(row, row.gflops), gflops_cell(row, row.gflops_best),
                 cublas_gflops_cell(row), ratio_cell(row), error_number(row.err_max_u),
                 *accuracy_cells(row), str(row.reps)]
                for row in rows]
        blocks.append("\n\n".join([f"### {gpu.name}",
                                   with_unverified_note(md_table(header, body), rows),
                                   accuracy_note(md_file, repo),
                                   provenance(rows)]))
    return "\n\n".join(blocks)


def accuracy_plot_section(gpus: list[GpuResults], files: set[Path], md_file: Path,
                          repo: Path) -> str:
    """The speed-vs-accuracy block: the plot of each GPU that has one (files: those written)."""
    parts = []
    for gpu in gpus:
        path = repo / "docs" / "plots" / gpu.slug / ACCURACY_PLOT
        if path in files:
            tf32 = gpu.controls.get("cublas_tf32")
            context = ("cuBLAS with one TF32 pass is the labelled cross, in a panel of its own "
                       "on its own scales: context only, it fails the FP32-grade check" if tf32
                       else
                       "no cuBLAS TF32 control measured on this GPU")
            parts.append(f"![Speed against accuracy on {gpu.name}]"
                         f"({relative_link(path, md_file)})\n\n"
                         f"_{gpu.name}: x is a step's RMS error over cuBLAS SGEMM's on the "
                         f"same inputs, y its speed over cuBLAS SGEMM's in the same run; "
                         f"{context}._")
    return "\n\n".join(parts) or NO_ACCURACY_PLOT


SPEEDS = re.compile(r"<!-- BEGIN (speeds-(\d+(?:-\d+)+)) -->")  # e.g. speeds-10-11-12


def speeds_sections(text: str, steps: list[str], gpus: list[GpuResults]) -> dict[str, str]:
    """The `speeds-NN-MM-...` blocks a page asks for: those steps side by side, every size."""
    sections = {}
    for match in SPEEDS.finditer(text):
        numbers = [int(n) for n in match.group(2).split("-")]
        chosen = [next((s for s in steps if step_number(s) == n), None) for n in numbers]
        blocks = []
        for gpu in (gpu for gpu in gpus if gpu.rows):
            sizes = sorted({size for step in chosen if step
                            for size in (row.m for row in gpu.rows_of(step))})
            body = [[str(size)] + [f"{gflops_cell(row, row.gflops)} ({ratio_cell(row)})"
                                   if step and (row := gpu.row(step, size)) else MISSING
                                   for step in chosen] for size in sizes]
            if body:
                header = ["size"] + [f"{step or f'{n:02d}'} GFLOPS (ratio to cuBLAS)"
                                     for step, n in zip(chosen, numbers)]
                blocks.append(f"### {gpu.name}\n\n{md_table(header, body)}")
        sections[match.group(1)] = "\n\n".join(blocks) or "_No results yet for these steps._"
    return sections
