"""Tuning sweeps (results/<gpu>/tuning/<step>.csv): the short table on a step page (the best
and the worst configurations at the headline size, and the one shipped), the full table in
docs/tuning/<step>.md, and the lookup of the sweep row behind each re-tuned knob."""

from __future__ import annotations

from pathlib import Path

from plots.figures import HEADLINE_SIZES
from plots.markdown import gflops_cell, md_table, provenance, ratio_cell, relative_link, size_cell
from plots.markdown import with_unverified_note
from plots.results import GpuResults
from plots.schema import Row

NO_TUNING = "_No tuning sweep recorded for this step yet._"
BEST, WORST = 5, 3  # rows shown on a step page, as the blog series' tuning sections did
DEFAULT = "default"
DEFAULT_NOTE = "`default` = the step's built-in value of that tunable."


def tuning_page(step: str) -> Path:
    return Path("docs") / "tuning" / f"{step}.md"


def _names(rows: list[Row]) -> list[str]:
    names: list[str] = []  # tunable names in order of first appearance
    for row in rows:
        names += [name for name, _ in row.variant if name not in names]
    return names or ["variant"]  # a sweep of nothing but the default row


def matches(row: Row, values: dict[str, str], defaults: dict[str, str]) -> bool:
    """Whether the row was measured with these tunable values: every swept value agrees, and
    every value that differs from the step's defaults was swept (else the row ran with the
    default)."""
    swept = dict(row.variant)
    return (all(values.get(name) == value for name, value in swept.items())
            and all(name in swept for name, value in values.items()
                    if defaults.get(name) != value))


def headline_size(rows: list[Row]) -> int:
    """The size the page ranks configurations at: the larger headline size swept, else the
    largest size swept."""
    sizes = {row.m for row in rows if row.is_square}
    for size in reversed(HEADLINE_SIZES):
        if size in sizes:
            return size
    return max(sizes) if sizes else max(row.m for row in rows)


def ranked(rows: list[Row], size: int) -> list[Row]:
    return sorted((row for row in rows if row.is_square and row.m == size),
                  key=lambda r: (-r.gflops, r.variant))


def rank_of(rows: list[Row], values: dict[str, str], defaults: dict[str, str]
            ) -> tuple[int, int, Row] | None:
    """(rank, of how many, the row) of the configuration at the headline size, if swept."""
    order = ranked(rows, headline_size(rows))
    for i, row in enumerate(order):
        if matches(row, values, defaults):
            return i + 1, len(order), row
    return None


def _cells(row: Row, names: list[str]) -> list[str]:
    return [dict(row.variant).get(name, DEFAULT) for name in names]


def step_tuning_section(step: str, gpus: list[GpuResults], defaults: dict[str, str],
                        md_file: Path, repo: Path) -> str:
    """The tuning block of a step page: best and worst configurations, the shipped one."""
    blocks = []
    for gpu in gpus:
        rows = gpu.tuning.get(step)
        if not rows:
            continue
        names, size = _names(rows), headline_size(rows)
        order = ranked(rows, size)
        shown = sorted(set(range(min(BEST, len(order))))
                       | set(range(max(0, len(order) - WORST), len(order)))
                       | {i for i, row in enumerate(order) if matches(row, defaults, defaults)})
        body, previous = [], -1
        for i in shown:
            if i > previous + 1:
                body.append(["…"] * (len(names) + 3))
            shipped = " (shipped)" if matches(order[i], defaults, defaults) else ""
            body.append([f"{i + 1}{shipped}", *_cells(order[i], names),
                         gflops_cell(order[i], order[i].gflops), ratio_cell(order[i])])
            previous = i
        full = relative_link(repo / tuning_page(step), md_file)
        blocks.append("\n\n".join([
            f"### {gpu.name}",
            (f"_All {len(order)} configurations at M=N=K={size}" if len(shown) == len(order)
             else f"_{len(order)} configurations at M=N=K={size}: the best {BEST}, the worst "
                  f"{WORST} and the one this step ships")
            + f". All {len(rows)} rows of the sweep, at every size: "
              f"[{tuning_page(step).as_posix()}]({full})._",
            with_unverified_note(md_table(["rank", *names, "GFLOPS", "ratio to cuBLAS"], body,
                                          "r" * (len(names) + 3)), [order[i] for i in shown]),
            DEFAULT_NOTE,
            provenance(rows),
        ]))
    return "\n\n".join(blocks) or NO_TUNING


def full_tuning_file(step: str, gpus: list[GpuResults], defaults: dict[str, str]) -> str | None:
    """docs/tuning/<step>.md: every row of the step's sweeps; None if it has none."""
    blocks = []
    for gpu in gpus:
        for title, rows in ((gpu.name, gpu.tuning.get(step)),
                            (f"{gpu.name}: the earlier sweeps the page cites "
                             f"(`results/{gpu.slug}/sweeps/{step}.csv`, `scripts/sweeps.txt`)",
                             gpu.sweeps.get(step))):
            if not rows:
                continue
            names = _names(rows)
            rows = sorted(rows, key=lambda r: (r.m * r.n * r.k, r.m, r.n, -r.gflops, r.variant))
            body = [[*_cells(row, names), size_cell(row), gflops_cell(row, row.gflops),
                     ratio_cell(row), "shipped" if matches(row, defaults, defaults) else ""]
                    for row in rows]
            header = names + ["size", "GFLOPS", "ratio to cuBLAS", "as shipped"]
            blocks.append("\n\n".join([
                f"## {title}",
                with_unverified_note(md_table(header, body, "r" * (len(header) - 1) + "l"), rows),
                DEFAULT_NOTE,
                provenance(rows),
            ]))
    if not blocks:
        return None
    return "\n\n".join([
        f"# Tuning sweep of step {step}: every configuration",
        f"Generated by `scripts/regenerate.sh` from `results/<gpu>/tuning/{step}.csv` "
        f"(`scripts/tune.sh`'s rows) and `results/<gpu>/sweeps/{step}.csv`; do not "
        f"edit by hand. The step's page, [steps/{step}/README.md](../../steps/{step}/README.md), "
        "shows the best and the worst of these. Fastest first within each size; \"shipped\" "
        "marks the configuration of the step's `.cu` file.",
        *blocks]) + "\n"
