"""The re-tunes table of docs/overview.md: for each neighbouring pair of steps, the knobs whose
value changed, and the sweep row that chose the new value next to the row with the old one."""

from __future__ import annotations

from pathlib import Path

from plots.diffs import diff_counts, knobs_text
from plots.markdown import md_table
from plots.results import GpuResults
from plots.steps import previous_steps, step_number, step_source
from plots.tuning import headline_size, rank_of
from plots.tunables import step_tunables


def _ranked(found) -> str:
    if found is None:
        return "not swept"
    rank, total, row = found
    return f"{row.ratio_to_cublas:.3f} of cuBLAS (rank {rank} of {total})"


def retunes_section(repo: Path, steps: list[str], gpus: list[GpuResults]) -> str:
    """One row per pair that re-tunes a knob, per GPU with tuning sweeps."""
    blocks = []
    for gpu in [gpu for gpu in gpus if gpu.tuning] or [None]:
        body = []
        for previous, step in previous_steps(steps, repo):
            old, new = step_source(repo, previous), step_source(repo, step)
            if not (old and new):
                continue
            retuned = diff_counts(old, new)[2]
            if not retuned:
                continue
            defaults = step_tunables(repo, step)
            with_old = dict(defaults, **{name: value for name, value, _ in retuned})
            rows = gpu.tuning.get(step) if gpu else None
            if rows:
                size = headline_size(rows)
                link = f"[{step}](tuning/{step}.md)"
                evidence = [str(size), _ranked(rank_of(rows, defaults, defaults)),
                            _ranked(rank_of(rows, with_old, defaults))]
            else:
                link, evidence = step, ["—", "no sweep recorded", "no sweep recorded"]
            body.append([link, f"{step_number(previous):02d}", knobs_text(retuned), *evidence])
        header = ["step", "after", "re-tuned knobs (before → shipped)", "size",
                  "shipped values", "the step before's values"]
        table = md_table(header, body, "llllll") if body else "_No step re-tunes a knob._"
        title = f"### {gpu.name}\n\n" if gpu else ""
        blocks.append(title + table)
    return "\n\n".join(blocks) + ("\n\n_Speed at the size shown, from the step's tuning sweep "
                                  "(`results/<gpu>/tuning/`); rank among the configurations "
                                  "swept at that size. \"not swept\": the sweep has no row "
                                  "with those values._")
