"""Plots and markdown tables for sgemm-steps, generated from the harness's results CSVs.

Run from the repository root (scripts/regenerate.sh sets up the pinned virtualenv first):

    python3 -m plots.sgemm_plots [--results DIR] [--repo DIR] [--check]

Inputs:  results/<gpu-slug>/<step>.csv and results/<gpu-slug>/tuning/<step>.csv;
         optionally results/<gpu-slug>/profiles/ncu_4096.csv, .../profiles/sass_stats.txt
         and .../profiles/compare_4096.csv (profiled variants shown side by side on a page)
Outputs: docs/plots/<gpu-slug>/*.png (and .svg for the headline plot);
         the marked sections of README.md, docs/overview.md and steps/*/README.md;
         the diff-size table of docs/step-diffs.md.

Every output is deterministic, so `--check` can tell whether the committed docs are stale.
Exit codes: 0 ok, 1 --check found stale files, 2 bad input (reported as `path:line: problem`).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import difflib
import io
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path

try:
    import matplotlib
    import matplotlib.style
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator, PercentFormatter
except ImportError as exc:
    # Reported by main() with a hint; diff_line_counts() (used by scripts/stepdiff.sh) needs
    # only the standard library, so importing this module must still work.
    _IMPORT_ERROR: ImportError | None = exc
else:
    _IMPORT_ERROR = None

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = Path(__file__).resolve().parent / "requirements.txt"

# The headline plot and the summary tables compare steps at these sizes, like the seed blog.
HEADLINE_SIZES = (2048, 4096)
HEADLINE_PLOT = "steps_2048_4096"
SIZE_PLOT = "gflops_vs_size.png"
RATIO_PLOT = "ratio_to_cublas.png"

DPI = 100
MISSING = "missing"
NO_VALUE = "—"  # em dash: a value that cannot be given (step missing, cuBLAS not timed, ...)
UNVERIFIED = "⚠"
UNVERIFIED_NOTE = (
    f"{UNVERIFIED} not verified (`verified` = 0): the result was not checked against the "
    "reference in that run."
)
NO_TUNING = "_No tuning sweep recorded for this step yet._"

STEP_NAME = re.compile(r"(\d+)_(.+)")


# --------------------------------------------------------------------------------------------
# Input schema and CSV parsing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One CSV row. The field order is the CSV header order, which the harness writes exactly."""

    step: str
    variant: tuple[tuple[str, str], ...]  # (NAME, VALUE) pairs; empty for the step's defaults
    m: int
    n: int
    k: int
    alpha: float
    beta: float
    reps: int
    ms_median: float
    ms_min: float
    gflops: float
    gflops_best: float
    cublas_ms_median: float
    cublas_gflops: float
    ratio_to_cublas: float
    max_err_over_bound: float
    verified: bool
    gpu: str
    sm_count: int
    sm_clock_mhz: int
    driver: str
    runtime: str
    cublas: str
    arch: str
    build_type: str
    git_rev: str
    timestamp: dt.datetime

    @property
    def is_square(self) -> bool:
        return self.m == self.n == self.k

    @property
    def has_cublas(self) -> bool:
        """The harness writes zeros in the cublas_* columns when it did not time cuBLAS."""
        return self.cublas_ms_median > 0


HEADER = tuple(f.name for f in fields(Row))


class InputError(Exception):
    """A problem in an input file; main() prints it as `path:line: message` and exits 2."""

    def __init__(self, path: Path, line: int | None, message: str):
        where = f"{display_path(path)}:{line}" if line else display_path(path)
        super().__init__(f"{where}: {message}")


def display_path(path: Path) -> str:
    """Paths in messages: relative to the current directory when below it, else absolute."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


# Field parsers: each takes the raw text and returns the value or raises ValueError(reason).


def _nonempty(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    return text


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected an integer, got {text!r}") from None


def _positive_int(text: str) -> int:
    value = _int(text)
    if value <= 0:
        raise ValueError(f"expected a positive integer, got {text!r}")
    return value


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None


def _finite_float(text: str) -> float:
    value = _float(text)
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    value = _finite_float(text)
    if value <= 0:
        raise ValueError(f"expected a positive number, got {text!r}")
    return value


def _verified(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError(f"expected 0 or 1, got {text!r}")
    return text == "1"


def _variant(text: str) -> tuple[tuple[str, str], ...]:
    if not text:
        return ()
    pairs = []
    for item in text.split(";"):
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"expected NAME=VALUE;NAME=VALUE..., got {text!r}")
        pairs.append((name, value))
    return tuple(pairs)


def _timestamp(text: str) -> dt.datetime:
    try:
        stamp = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"expected an ISO 8601 timestamp, got {text!r}") from None
    # The harness writes UTC; a timestamp without an offset is taken to be UTC as well.
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.astimezone(dt.timezone.utc)


_PARSERS = {
    "step": _nonempty,
    "variant": _variant,
    "m": _positive_int,
    "n": _positive_int,
    "k": _positive_int,
    "alpha": _finite_float,
    "beta": _finite_float,
    "reps": _positive_int,
    "ms_median": _positive_float,
    "ms_min": _positive_float,
    "gflops": _finite_float,
    "gflops_best": _finite_float,
    "cublas_ms_median": _finite_float,
    "cublas_gflops": _finite_float,
    "ratio_to_cublas": _finite_float,
    # Shown nowhere; a NaN/inf here (a kernel that wrote NaNs) is data, not a malformed file.
    "max_err_over_bound": _float,
    "verified": _verified,
    "gpu": _nonempty,
    "sm_count": _int,
    "sm_clock_mhz": _int,
    "driver": str,
    "runtime": str,
    "cublas": str,
    "arch": str,
    "build_type": str,
    "git_rev": str,
    "timestamp": _timestamp,
}
assert tuple(_PARSERS) == HEADER


def _check_header(path: Path, header: list[str]) -> None:
    if header == list(HEADER):
        return
    problems = []
    missing = [name for name in HEADER if name not in header]
    unexpected = [name for name in header if name not in HEADER]
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if missing:
        problems.append("missing column(s) " + ", ".join(missing))
    if unexpected:
        problems.append("unexpected column(s) " + ", ".join(unexpected))
    if duplicated:
        problems.append("duplicated column(s) " + ", ".join(duplicated))
    if not problems:
        problems.append("columns out of order, expected " + ",".join(HEADER))
    raise InputError(path, 1, "bad header: " + "; ".join(problems))


def read_results_csv(path: Path) -> list[Row]:
    """Parses and validates one results CSV, raising InputError on the first problem."""
    rows = []
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            reader = csv.reader(file)
            try:
                header = next(reader, None)
                if header is None:
                    raise InputError(path, 1, "empty file, expected the CSV header")
                _check_header(path, header)
                for record in reader:
                    if not record:  # a blank line carries no data
                        continue
                    rows.append(_parse_record(path, reader.line_num, record))
            except csv.Error as exc:
                raise InputError(path, reader.line_num, f"malformed CSV: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    return rows


def _parse_record(path: Path, line: int, record: list[str]) -> Row:
    if len(record) != len(HEADER):
        raise InputError(path, line, f"expected {len(HEADER)} fields, got {len(record)}")
    values = []
    for name, text in zip(HEADER, record):
        try:
            values.append(_PARSERS[name](text))
        except ValueError as exc:
            raise InputError(path, line, f"column '{name}': {exc}") from None
    return Row(*values)


# --------------------------------------------------------------------------------------------
# Results sets (one per results/<gpu-slug>/ directory) and step discovery
# --------------------------------------------------------------------------------------------


def _keep_last(rows: list[Row]) -> list[Row]:
    """Drops all but the last of the rows that share (step, variant, m, n, k)."""
    return list({(r.step, r.variant, r.m, r.n, r.k): r for r in rows}.values())


@dataclass
class GpuResults:
    slug: str  # the results/<gpu-slug> directory name, reused for docs/plots/<gpu-slug>
    rows: dict[tuple[str, int], Row]  # default-variant, square shapes, keyed (step, size)
    tuning: dict[str, list[Row]]  # tuning rows per step

    @property
    def name(self) -> str:
        all_rows = [*self.rows.values(), *(r for rs in self.tuning.values() for r in rs)]
        return " / ".join(sorted({row.gpu for row in all_rows}))

    @property
    def steps(self) -> set[str]:
        return {step for step, _ in self.rows}

    @property
    def sizes(self) -> list[int]:
        return sorted({size for _, size in self.rows})

    def row(self, step: str, size: int) -> Row | None:
        return self.rows.get((step, size))

    def rows_of(self, step: str) -> list[Row]:
        return [self.rows[key] for key in sorted(self.rows) if key[0] == step]

    def cublas_gflops(self, size: int) -> float | None:
        """cuBLAS at one size: the median of the cuBLAS runs timed alongside every step."""
        values = [row.cublas_gflops for (_, s), row in self.rows.items()
                  if s == size and row.has_cublas]
        return statistics.median(values) if values else None


def load_results(results_dir: Path) -> list[GpuResults]:
    if not results_dir.is_dir():
        warn(f"{display_path(results_dir)} does not exist; generating docs without results")
        return []
    results = []
    for gpu_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        main_files = sorted(gpu_dir.glob("*.csv"))
        tuning_files = sorted((gpu_dir / "tuning").glob("*.csv"))
        if not main_files and not tuning_files:
            continue
        main_rows = []
        for path in main_files:
            file_rows = read_results_csv(path)
            main_rows += file_rows
            if any(row.variant for row in file_rows):
                warn(f"{display_path(path)}: rows with a variant are ignored here "
                     "(tuning sweeps belong in tuning/)")
        # Only the default variant of square shapes goes into the plots and tables.
        rows = {(row.step, row.m): row for row in _keep_last(main_rows)
                if not row.variant and row.is_square}
        tuning: dict[str, list[Row]] = {}
        for row in _keep_last([row for path in tuning_files for row in read_results_csv(path)]):
            tuning.setdefault(row.step, []).append(row)
        results.append(GpuResults(gpu_dir.name, rows, tuning))
    return results


def step_sort_key(step: str) -> tuple:
    """Orders steps by their number (so 100_x follows 99_y); unnumbered names go last."""
    match = STEP_NAME.fullmatch(step)
    return (0, int(match.group(1)), step) if match else (1, 0, step)


def step_number(step: str) -> int | None:
    match = STEP_NAME.fullmatch(step)
    return int(match.group(1)) if match else None


def step_dirs(repo: Path) -> list[str]:
    """Step directory names under steps/, in step order."""
    steps_root = repo / "steps"
    if not steps_root.is_dir():
        return []
    names = [p.name for p in steps_root.iterdir() if p.is_dir() and STEP_NAME.fullmatch(p.name)]
    return sorted(names, key=step_sort_key)


def step_source(repo: Path, step: str) -> Path | None:
    """The kernel of a step: steps/NN_slug/slug.cu, or else the directory's only .cu file."""
    directory = repo / "steps" / step
    preferred = directory / (STEP_NAME.fullmatch(step).group(2) + ".cu")
    if preferred.is_file():
        return preferred
    candidates = sorted(directory.glob("*.cu"))
    return candidates[0] if len(candidates) == 1 else None


# --------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------

# Applied on top of matplotlib's built-in defaults (see plot_files); the salt makes SVG ids
# reproducible.
_RC = {"svg.hashsalt": "sgemm-steps", "font.size": 10}
SIZE_COLORS = ("#4c72b0", "#dd8452")  # bars for the two headline sizes
CUBLAS_COLORS = ("#1b2f57", "#8c3a0a")  # darker shades of the same hues for cuBLAS lines
MARKERS = "os^vD<>phX*"


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    # Software (PNG) and Date (SVG) would embed the matplotlib version and the current time.
    metadata = {"Software": None} if fmt == "png" else {"Date": None}
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()


def _annotate_missing(ax, x: float) -> None:
    ax.text(x, 0.01, MISSING, transform=ax.get_xaxis_transform(), rotation=90,
            ha="center", va="bottom", fontsize=8, color="0.35", style="italic")


def plot_headline(gpu: GpuResults, steps: list[str]) -> Figure:
    """Grouped bars of GFLOPS per step at 2048 and 4096, cuBLAS as dashed lines."""
    fig = Figure(figsize=(12, 6.5), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(steps))
    width = 0.8 / len(HEADLINE_SIZES)
    for i, size in enumerate(HEADLINE_SIZES):
        offsets = x + (i - (len(HEADLINE_SIZES) - 1) / 2) * width
        present = [(xi, row.gflops) for xi, step in zip(offsets, steps)
                   if (row := gpu.row(step, size))]
        ax.bar([p[0] for p in present], [p[1] for p in present], width,
               color=SIZE_COLORS[i], label=f"M=N=K={size}")
        for xi, step in zip(offsets, steps):
            if gpu.row(step, size) is None:
                _annotate_missing(ax, xi)
        cublas = gpu.cublas_gflops(size)
        if cublas is not None:
            ax.axhline(cublas, color=CUBLAS_COLORS[i], linestyle="--", linewidth=2,
                       label=f"cuBLAS at {size}: {cublas:.0f} GFLOPS")
    ax.set_xticks(x, steps, rotation=40, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(steps) - 0.4)
    ax.set_xlabel("step")
    ax.set_ylabel("GFLOPS (FP32, higher is better)")
    ax.set_title(f"SGEMM per step at M=N=K=2048 and 4096\n{gpu.name}")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    # Below the axes, so that it never hides the tallest bars.
    fig.legend(loc="outside lower center", ncols=2 * len(HEADLINE_SIZES))
    return fig


def plot_gflops_vs_size(gpu: GpuResults, steps: list[str]) -> Figure:
    """GFLOPS against matrix size for every step, with cuBLAS as a thick black dashed line."""
    fig = Figure(figsize=(11, 6.5), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    sizes = gpu.sizes
    colors = matplotlib.colormaps["tab20"]  # pairs of dark and light shades of 10 hues
    for i, step in enumerate(steps):
        points = [(size, row.gflops) for size in sizes if (row := gpu.row(step, size))]
        if points:
            # The 10 dark shades first, then the light ones, so neighbouring steps differ.
            color = colors((2 * i + i // 10) % 20)
            ax.plot(*zip(*points), marker=MARKERS[i % len(MARKERS)], color=color,
                    linewidth=1.5, label=step)
        else:
            # An invisible handle keeps the step in the legend, labelled as missing.
            ax.plot([], [], linestyle="none", label=f"{step}: {MISSING}")
    cublas = [(size, value) for size in sizes if (value := gpu.cublas_gflops(size)) is not None]
    if cublas:
        ax.plot(*zip(*cublas), color="black", linestyle="--", linewidth=3, marker="s",
                label="cuBLAS", zorder=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(sizes, [str(size) for size in sizes])
    ax.set_xlabel("matrix size M=N=K (log2 scale)")
    ax.set_ylabel("GFLOPS (FP32, log scale)")
    ax.set_title(f"SGEMM GFLOPS against matrix size\n{gpu.name}")
    ax.grid(which="both", alpha=0.3)
    fig.legend(loc="outside right upper", fontsize=9)
    return fig


def plot_ratio_heatmap(gpu: GpuResults, steps: list[str]) -> Figure:
    """Speed relative to cuBLAS per step (rows) and size (columns); missing cells are grey."""
    fig = Figure(figsize=(9, 8), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    sizes = gpu.sizes
    cells = [[gpu.row(step, size) for size in sizes] for step in steps]
    ratios = np.array([[row.ratio_to_cublas if row and row.has_cublas else np.nan
                        for row in line] for line in cells], dtype=float)
    vmax = max([1.0, *ratios[~np.isnan(ratios)]])
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="0.85")
    image = ax.imshow(np.ma.masked_invalid(ratios), cmap=cmap, vmin=0, vmax=vmax, aspect="auto")
    for (r, c), ratio in np.ndenumerate(ratios):
        if np.isnan(ratio):
            ax.text(c, r, "no cuBLAS" if cells[r][c] else MISSING, ha="center", va="center",
                    fontsize=8, color="0.3", style="italic")
        else:
            ax.text(c, r, _percent(ratio), ha="center", va="center", fontsize=8,
                    color="white" if ratio < 0.6 * vmax else "black")
    ax.set_xticks(range(len(sizes)), [str(size) for size in sizes])
    ax.set_yticks(range(len(steps)), steps)
    ax.set_xlabel("matrix size M=N=K")
    ax.set_ylabel("step")
    ax.set_title(f"SGEMM speed relative to cuBLAS (100% = as fast)\n{gpu.name}")
    colorbar = fig.colorbar(image, ax=ax, format=PercentFormatter(xmax=1.0))
    colorbar.set_label("speed relative to cuBLAS (cuBLAS time / step time)")
    return fig


def plot_files(gpu: GpuResults, steps: list[str], repo: Path) -> dict[Path, bytes]:
    out_dir = repo / "docs" / "plots" / gpu.slug
    # The "default" style ignores any user matplotlibrc, which would change the output.
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        headline = plot_headline(gpu, steps)
        return {
            out_dir / f"{HEADLINE_PLOT}.png": figure_bytes(headline, "png"),
            out_dir / f"{HEADLINE_PLOT}.svg": figure_bytes(headline, "svg"),
            out_dir / SIZE_PLOT: figure_bytes(plot_gflops_vs_size(gpu, steps), "png"),
            out_dir / RATIO_PLOT: figure_bytes(plot_ratio_heatmap(gpu, steps), "png"),
        }


# --------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------


def _gflops(row: Row, value: float) -> str:
    return f"{value:.1f}" + ("" if row.verified else f" {UNVERIFIED}")


def _percent(ratio: float) -> str:
    return f"{100 * ratio:.1f}%" if ratio < 0.1 else f"{100 * ratio:.0f}%"


def _percent_of_cublas(row: Row | None) -> str:
    return _percent(row.ratio_to_cublas) if row and row.has_cublas else NO_VALUE


def _cublas_gflops_cell(row: Row) -> str:
    return f"{row.cublas_gflops:.1f}" if row.has_cublas else NO_VALUE


def _ratio_cell(row: Row) -> str:
    return f"{row.ratio_to_cublas:.3f}" if row.has_cublas else NO_VALUE


def _size(row: Row) -> str:
    return str(row.m) if row.is_square else f"{row.m}×{row.n}×{row.k}"


def md_table(header: list[str], body: list[list[str]], align: str = "") -> str:
    """A GitHub table. align has one letter per column, l or r; by default the first column
    is left-aligned and the others (numbers) right-aligned."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join(":---" if a == "l" else "---:" for a in align) + " |"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def _with_unverified_note(table: str, rows: list[Row]) -> str:
    return table + ("\n\n" + UNVERIFIED_NOTE if any(not row.verified for row in rows) else "")


def _distinct(values) -> str:
    return ", ".join(sorted({str(v) for v in values if str(v)})) or "unknown"


def provenance(rows: list[Row]) -> str:
    """One line naming everything that the numbers depend on."""
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
        f"git {_distinct(r.git_rev for r in rows)}, measured {dates} (UTC)._"
    )


def summary_section(gpus: list[GpuResults], steps: list[str], md_file: Path,
                    repo: Path) -> str:
    """The results-summary block of README.md and docs/overview.md."""
    gpus = [gpu for gpu in gpus if gpu.rows]
    if not gpus:
        return "_No results yet: run the benchmarks, then `scripts/regenerate.sh`._"
    sizes = HEADLINE_SIZES
    header = (["step"] + [f"GFLOPS at {s}" for s in sizes]
              + [f"% of cuBLAS at {s}" for s in sizes])
    blocks = []
    for gpu in gpus:
        body = []
        for step in steps:
            rows = [gpu.row(step, size) for size in sizes]
            body.append([step]
                        + [_gflops(row, row.gflops) if row else MISSING for row in rows]
                        + [_percent_of_cublas(row) for row in rows])
        plots_dir = repo / "docs" / "plots" / gpu.slug

        def link(name: str) -> str:  # relative to the markdown file, so it works on GitHub
            return Path(os.path.relpath(plots_dir / name, md_file.parent)).as_posix()

        used = [row for row in (gpu.row(s, size) for s in steps for size in sizes) if row]
        blocks.append("\n\n".join([
            f"### {gpu.name}",
            _with_unverified_note(md_table(header, body), used),
            f"![GFLOPS per step at M=N=K=2048 and 4096 on {gpu.name}]"
            f"({link(HEADLINE_PLOT + '.png')})",
            f"More plots: [GFLOPS against size]({link(SIZE_PLOT)}), "
            f"[speed relative to cuBLAS]({link(RATIO_PLOT)}).",
            provenance(used or list(gpu.rows.values())),
        ]))
    return "\n\n".join(blocks)


def step_results_section(step: str, gpus: list[GpuResults]) -> str:
    """The results block of steps/<step>/README.md: every square size, per GPU."""
    gpus = [gpu for gpu in gpus if gpu.rows]
    if not any(gpu.rows_of(step) for gpu in gpus):
        return "_No results yet for this step._"
    header = ["size", "GFLOPS", "best GFLOPS", "cuBLAS GFLOPS", "ratio to cuBLAS", "reps"]
    blocks = []
    for gpu in gpus:
        rows = gpu.rows_of(step)
        if not rows:
            blocks.append(f"### {gpu.name}\n\n_{MISSING}: no results for this step on this GPU._")
            continue
        body = [[_size(row), _gflops(row, row.gflops), _gflops(row, row.gflops_best),
                 _cublas_gflops_cell(row), _ratio_cell(row), str(row.reps)]
                for row in rows]
        blocks.append("\n\n".join([f"### {gpu.name}",
                                   _with_unverified_note(md_table(header, body), rows),
                                   provenance(rows)]))
    return "\n\n".join(blocks)


def step_tuning_section(step: str, gpus: list[GpuResults]) -> str:
    """The tuning block: one column per tunable, best variant first within each size."""
    blocks = []
    for gpu in gpus:
        rows = gpu.tuning.get(step)
        if not rows:
            continue
        names: list[str] = []  # tunable names in order of first appearance
        for row in rows:
            names += [name for name, _ in row.variant if name not in names]
        rows = sorted(rows, key=lambda r: (r.m * r.n * r.k, r.m, r.n, -r.gflops, r.variant))
        # "default" marks a tunable left at the step's built-in value; the row where every
        # tunable is "default" is the step as shipped.
        names = names or ["variant"]  # a sweep of nothing but the default row
        header = names + ["size", "GFLOPS", "ratio to cuBLAS"]
        body = [[dict(row.variant).get(name, "default") for name in names]
                + [_size(row), _gflops(row, row.gflops), _ratio_cell(row)]
                for row in rows]
        blocks.append("\n\n".join([
            f"### {gpu.name}",
            _with_unverified_note(md_table(header, body, "r" * len(header)), rows),
            "`default` = the step's built-in value of that tunable.",
            provenance(rows),
        ]))
    return "\n\n".join(blocks) or NO_TUNING


def diff_line_counts(old: Path, new: Path) -> tuple[int, int]:
    """(lines added, lines removed) going from one file to the other, counted with difflib."""
    old_lines = Path(old).read_text(encoding="utf-8", errors="replace").splitlines()
    new_lines = Path(new).read_text(encoding="utf-8", errors="replace").splitlines()
    # autojunk would treat frequent lines ("}", blank) as junk and inflate the counts.
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def diff_sizes_section(repo: Path, steps: list[str]) -> str:
    """Lines added/removed by each step relative to the step before it (step 00 excluded)."""
    kernels = [step for step in steps if step_number(step) != 0]
    numbers = [step_number(step) for step in kernels]
    body = []
    for previous, step in zip(kernels, kernels[1:]):
        # The short form `stepdiff.sh N` is ambiguous if two step directories share a number.
        if numbers.count(step_number(step)) == 1:
            command = f"`scripts/stepdiff.sh {step_number(step)}`"
        else:
            command = f"`scripts/stepdiff.sh {previous} {step}`"
        old, new = step_source(repo, previous), step_source(repo, step)
        if old and new:
            added, removed = diff_line_counts(old, new)
            body.append([step, previous, str(added), str(removed), command])
        else:
            body.append([step, previous, NO_VALUE, NO_VALUE, "no `.cu` file to compare"])
    if not body:
        return "_Not enough steps to compare yet._"
    return md_table(["step", "compared with", "lines added", "lines removed", "show the diff"],
                    body, "llrrl")


STEP_DIFFS_TEMPLATE = """\
# What each step changes

Each step is a small edit of the step before it. The table counts the lines of the kernel's
`.cu` file that each step adds and removes relative to the previous step (counted with
Python's difflib). Run the command in the last column from the repository root to read the
diff; `scripts/stepdiff.sh --stat N` prints just the counts.

<!-- BEGIN diff-sizes -->
<!-- END diff-sizes -->
"""


# --------------------------------------------------------------------------------------------
# Profiles (results/<gpu-slug>/profiles/): Nsight Compute metrics and static SASS counts
# --------------------------------------------------------------------------------------------

NCU_FILE = "ncu_4096.csv"
SASS_FILE = "sass_stats.txt"
COMPARE_FILE = "compare_4096.csv"
NO_PROFILE = "_No profile recorded for this step._"
NO_COMPARISON = "_No comparison recorded for this step._"
COMPARE_CAPTION = ("_Nsight Compute at M=N=K=4096, one launch each. A column is a step as "
                   "shipped, or a step built with other tunables: `scripts/compare.txt` lists "
                   "them, `scripts/device_run.sh OUT compare=scripts/compare.txt` measures "
                   "them._")
NO_PROFILES = "_No profiles recorded yet._"
NCU_CAPTION = "_Nsight Compute, kernel `sgemm_kernel` at M=N=K=4096, one launch._"
SASS_CAPTION = "_Static instruction counts in the kernel's SASS (not executed counts)._"
FFMA_SHARE = "ffma-share"  # derived: FFMA thread instructions / 32 / warp instructions


def _count(value: float) -> str:
    return f"{round(value):,}"


def _pct(value: float) -> str:
    return f"{value:,.1f}%"


def _mb(value: float) -> str:
    return f"{value / 1e6:,.1f}"


def _ratio(value: float) -> str:
    return f"{value:,.1f}"


# (label, metric, formatter); the metric is a column of ncu_4096.csv or FFMA_SHARE.
NCU_METRICS = (
    ("registers / thread", "launch__registers_per_thread", _count),
    ("blocks / SM limited by registers", "launch__occupancy_limit_registers", _count),
    ("warps active", "sm__warps_active.avg.pct_of_peak_sustained_active", _pct),
    ("FMA pipe active", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", _pct),
    ("warp instructions executed", "smsp__inst_executed.sum", _count),
    ("FFMA share of instructions", FFMA_SHARE, _pct),
    ("shared-load wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", _count),
    ("shared bank conflicts, loads",
     "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", _count),
    ("shared bank conflicts, stores",
     "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", _count),
    ("L2 hit rate", "lts__t_sector_hit_rate.pct", _pct),
    ("DRAM read (MB)", "dram__bytes_read.sum", _mb),
    *((f"{name} stall ratio", f"smsp__average_warp_latency_issue_stalled_{name}.ratio", _ratio)
      for name in ("barrier", "long_scoreboard", "mio_throttle", "short_scoreboard")),
)
# The rows of a page's comparison table (profiles/compare_4096.csv); a metric that no column
# has is left out.
COMPARE_METRICS = (
    ("registers / thread", "launch__registers_per_thread", _count),
    ("FMA pipe active", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", _pct),
    ("warp instructions executed", "smsp__inst_executed.sum", _count),
    ("shared-load wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", _count),
    ("shared-store wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", _count),
    *((f"{name} stall ratio", f"smsp__average_warp_latency_issue_stalled_{name}.ratio", _ratio)
      for name in ("short_scoreboard", "long_scoreboard", "barrier", "mio_throttle",
                   "dispatch_stall", "wait", "math_pipe_throttle", "not_selected")),
)
# The columns of the cross-step table in docs/overview.md (labels from NCU_METRICS).
SUMMARY_METRICS = ("registers / thread", "warps active", "FMA pipe active",
                   "warp instructions executed", "FFMA share of instructions",
                   "shared bank conflicts, loads", "L2 hit rate", "DRAM read (MB)")
SUMMARY_HEADERS = ("regs / thread", "warps active", "FMA pipe active", "warp instructions",
                   "FFMA share", "smem ld bank conflicts", "L2 hit rate", "DRAM read (MB)")


@dataclass
class GpuProfiles:
    slug: str
    ncu: dict[str, dict[str, float]]  # step -> metric -> value
    sass: dict[str, list[tuple[str, int]]]  # step -> (instruction, static count), file order
    name: str = ""
    # page step -> [(column label, metric -> value)], in file order
    compare: dict[str, list[tuple[str, dict[str, float]]]] = field(default_factory=dict)

    def ncu_cells(self, step: str) -> dict[str, str] | None:
        """Formatted values by label; None if the step has no ncu row."""
        metrics = self.ncu.get(step)
        if metrics is None:
            return None
        metrics = dict(metrics)
        ffma, insts = (metrics.get("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
                       metrics.get("smsp__inst_executed.sum"))
        if ffma is not None and insts:
            metrics[FFMA_SHARE] = 100 * ffma / 32 / insts
        return {label: fmt(metrics[metric]) if metric in metrics else NO_VALUE
                for label, metric, fmt in NCU_METRICS}


def _read_metric_rows(path: Path, keys: tuple[str, ...]
                      ) -> list[tuple[tuple[str, ...], dict[str, float]]]:
    """Rows `KEY...,<metric>,<metric>...`: the key fields, then the metrics (an empty cell is a
    metric not collected)."""
    rows = []
    expected = ",".join(keys)
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            reader = csv.reader(file)
            try:
                header = next(reader, None)
                if (not header or tuple(header[:len(keys)]) != keys
                        or len(set(header)) != len(header)):
                    raise InputError(path, 1, f"bad header: expected {expected},<metric>,"
                                              "<metric>... with distinct names")
                for record in reader:
                    if not record:
                        continue
                    line = reader.line_num
                    if len(record) != len(header):
                        raise InputError(path, line,
                                         f"expected {len(header)} fields, got {len(record)}")
                    values = {}
                    for name, text in zip(header[len(keys):], record[len(keys):]):
                        if not text.strip():
                            continue
                        try:
                            values[name] = _finite_float(text.replace(",", ""))
                        except ValueError as exc:
                            raise InputError(path, line, f"column '{name}': {exc}") from None
                    rows.append((tuple(_nonempty_field(path, line, record[i], key)
                                       for i, key in enumerate(keys)), values))
            except csv.Error as exc:
                raise InputError(path, reader.line_num, f"malformed CSV: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    return rows


def read_ncu_csv(path: Path) -> dict[str, dict[str, float]]:
    """step,<metric>,<metric>...: one row per step; an empty cell is a metric not collected."""
    return {key[0]: values for key, values in _read_metric_rows(path, ("step",))}


def read_compare_csv(path: Path) -> dict[str, list[tuple[str, dict[str, float]]]]:
    """step,variant,<metric>...: the columns of each step page's comparison table, in order."""
    table: dict[str, list[tuple[str, dict[str, float]]]] = {}
    for (step, variant), values in _read_metric_rows(path, ("step", "variant")):
        table.setdefault(step, []).append((variant, values))
    return table


def _nonempty_field(path: Path, line: int, text: str, column: str = "step") -> str:
    if not text.strip():
        raise InputError(path, line, f"column '{column}': must not be empty")
    return text.strip()


def read_sass_stats(path: Path) -> dict[str, list[tuple[str, int]]]:
    """Lines `STEP NAME COUNT NAME COUNT ...`; blank lines and # comments are skipped."""
    stats: dict[str, list[tuple[str, int]]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    for line_number, line in enumerate(lines, 1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        step, rest = tokens[0], tokens[1:]
        if not rest or len(rest) % 2:
            raise InputError(path, line_number,
                             "expected STEP followed by INSTRUCTION COUNT pairs")
        counts = []
        for name, text in zip(rest[::2], rest[1::2]):
            try:
                counts.append((name, _int(text)))
            except ValueError as exc:
                raise InputError(path, line_number, f"'{name}': {exc}") from None
        stats[step] = counts
    return stats


def load_profiles(results_dir: Path, gpus: list[GpuResults]) -> list[GpuProfiles]:
    if not results_dir.is_dir():
        return []
    names = {gpu.slug: gpu.name for gpu in gpus}
    profiles = []
    for gpu_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        ncu_path, sass_path = gpu_dir / "profiles" / NCU_FILE, gpu_dir / "profiles" / SASS_FILE
        compare_path = gpu_dir / "profiles" / COMPARE_FILE
        if not any(path.is_file() for path in (ncu_path, sass_path, compare_path)):
            continue
        profiles.append(GpuProfiles(
            gpu_dir.name,
            read_ncu_csv(ncu_path) if ncu_path.is_file() else {},
            read_sass_stats(sass_path) if sass_path.is_file() else {},
            names.get(gpu_dir.name) or gpu_dir.name,
            read_compare_csv(compare_path) if compare_path.is_file() else {}))
    return profiles


def step_profile_section(step: str, profiles: list[GpuProfiles]) -> str:
    """The profile block of steps/<step>/README.md: ncu metrics and SASS counts per GPU."""
    blocks = []
    for gpu in profiles:
        cells, sass = gpu.ncu_cells(step), gpu.sass.get(step)
        if cells is None and sass is None:
            continue
        parts = [f"### {gpu.name}"]
        if cells is not None:
            parts += [NCU_CAPTION, md_table(["metric", "value"],
                                            [[label, value] for label, value in cells.items()])]
        if sass is not None:
            parts += [SASS_CAPTION, md_table([name for name, _ in sass],
                                             [[str(count) for _, count in sass]],
                                             "r" * len(sass))]
        blocks.append("\n\n".join(parts))
    return "\n\n".join(blocks) or NO_PROFILE


def step_compare_section(step: str, profiles: list[GpuProfiles]) -> str:
    """The comparison block of steps/<step>/README.md: profiled variants side by side."""
    blocks = []
    for gpu in profiles:
        columns = gpu.compare.get(step)
        if not columns:
            continue
        body = [[label] + [fmt(values[metric]) if metric in values else NO_VALUE
                           for _, values in columns]
                for label, metric, fmt in COMPARE_METRICS
                if any(metric in values for _, values in columns)]
        blocks.append("\n\n".join([f"### {gpu.name}", COMPARE_CAPTION,
                                     md_table(["metric", *(name for name, _ in columns)], body)]))
    return "\n\n".join(blocks) or NO_COMPARISON


def profile_summary_section(profiles: list[GpuProfiles], steps: list[str]) -> str:
    """The profile-summary block of docs/overview.md: key ncu metrics, one row per step."""
    profiles = [gpu for gpu in profiles if gpu.ncu]
    if not profiles:
        return NO_PROFILES
    blocks = []
    for gpu in profiles:
        body = []
        for step in sorted(set(steps) | set(gpu.ncu), key=step_sort_key):
            cells = gpu.ncu_cells(step)
            body.append([step] + [cells[label] if cells else NO_VALUE
                                  for label in SUMMARY_METRICS])
        blocks.append("\n\n".join([f"### {gpu.name}", NCU_CAPTION,
                                     md_table(["step", *SUMMARY_HEADERS], body),
                                     f"{NO_VALUE} = no profile recorded for that step."]))
    return "\n\n".join(blocks)


# --------------------------------------------------------------------------------------------
# Marked sections
# --------------------------------------------------------------------------------------------


def _line_of(text: str, marker: str) -> int:
    return text[:text.index(marker)].count("\n") + 1


def replace_section(text: str, name: str, content: str, path: Path) -> str | None:
    """Replaces what lies between the `name` markers; None if the text has neither marker."""
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    n_begin, n_end = text.count(begin), text.count(end)
    if n_begin == n_end == 0:
        return None
    if n_begin != 1 or n_end != 1:
        raise InputError(path, _line_of(text, begin if begin in text else end),
                         f"expected exactly one {begin} and one {end}, "
                         f"found {n_begin} and {n_end}")
    start, stop = text.index(begin) + len(begin), text.index(end)
    if start > stop:
        raise InputError(path, _line_of(text, end), f"{end} comes before {begin}")
    return f"{text[:start]}\n\n{content.strip()}\n\n{text[stop:]}"


# Sections that a file may lack without a warning (the markers are added as docs are written).
OPTIONAL_SECTIONS = ("profile", "profile-summary", "compare")


def update_sections(path: Path, sections: dict[str, str], template: str | None = None
                    ) -> bytes | None:
    """The new content of a markdown file with its marked sections regenerated.

    Returns None (after a warning) when the file should be left alone: it does not exist and
    there is no template to create it from, or it has none of the markers.
    """
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    elif template is not None:
        text = template
    else:
        warn(f"{display_path(path)} does not exist; skipped")
        return None
    unmarked = []
    for name, content in sections.items():
        new_text = replace_section(text, name, content, path)
        if new_text is None:
            unmarked.append(name)
        else:
            text = new_text
    markers = ", ".join(f"<!-- BEGIN {name} -->" for name in unmarked)
    if len(unmarked) == len(sections):
        warn(f"{display_path(path)} has no {markers} markers; file left untouched")
        return None
    unmarked = [name for name in unmarked if name not in OPTIONAL_SECTIONS]
    if unmarked:
        markers = ", ".join(f"<!-- BEGIN {name} -->" for name in unmarked)
        warn(f"{display_path(path)} has no {markers} markers; that part is not generated")
    return text.encode("utf-8")


# --------------------------------------------------------------------------------------------
# Putting it together
# --------------------------------------------------------------------------------------------


def generate(repo: Path, results_dir: Path) -> dict[Path, bytes]:
    """Every output file and its content; nothing is written here."""
    gpus = load_results(results_dir)
    profiles = load_profiles(results_dir, gpus)
    directories = step_dirs(repo)
    # Steps from steps/ and from every results set, so a step absent from one GPU's results
    # still shows there as missing.
    steps = sorted(set(directories).union(*(gpu.steps for gpu in gpus)), key=step_sort_key)

    outputs: dict[Path, bytes] = {}
    for gpu in gpus:
        if gpu.rows:
            outputs.update(plot_files(gpu, steps, repo))

    def add(path: Path, content: bytes | None) -> None:
        if content is not None:
            outputs[path] = content

    for md_file in (repo / "README.md", repo / "docs" / "overview.md"):
        sections = {"results-summary": summary_section(gpus, steps, md_file, repo)}
        if md_file == repo / "docs" / "overview.md":
            sections["profile-summary"] = profile_summary_section(profiles, steps)
        add(md_file, update_sections(md_file, sections))
    for step in directories:
        add(repo / "steps" / step / "README.md", update_sections(
            repo / "steps" / step / "README.md",
            {"results": step_results_section(step, gpus),
             "tuning": step_tuning_section(step, gpus),
             "profile": step_profile_section(step, profiles),
             "compare": step_compare_section(step, profiles)}))
    add(repo / "docs" / "step-diffs.md", update_sections(
        repo / "docs" / "step-diffs.md", {"diff-sizes": diff_sizes_section(repo, directories)},
        template=STEP_DIFFS_TEMPLATE))
    return outputs


def stale_files(outputs: dict[Path, bytes]) -> list[Path]:
    return [path for path, content in sorted(outputs.items())
            if not path.is_file() or path.read_bytes() != content]


def _pinned_matplotlib() -> str | None:
    for line in REQUIREMENTS.read_text().splitlines():
        if line.startswith("matplotlib=="):
            return line.split("==", 1)[1].strip()
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sgemm_plots", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=REPO_ROOT,
                        help="repository root to write docs into (default: %(default)s)")
    parser.add_argument("--results", type=Path,
                        help="results directory (default: REPO/results)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if any generated file would change")
    args = parser.parse_args(argv)

    if _IMPORT_ERROR is not None:
        print(f"error: {_IMPORT_ERROR}; run scripts/regenerate.sh, which installs "
              "plots/requirements.txt into .venv-plots", file=sys.stderr)
        return 2
    pinned = _pinned_matplotlib()
    if matplotlib.__version__ != pinned:
        warn(f"matplotlib {matplotlib.__version__} is not the pinned {pinned}; plots may "
             "differ from the committed ones (scripts/regenerate.sh uses the pinned version)")

    # A fresh checkout has no results/ yet, but a --results that does not exist is a typo that
    # would otherwise replace every table with "no results yet".
    if args.results and not args.results.is_dir():
        print(f"error: results directory {args.results} not found", file=sys.stderr)
        return 2
    try:
        outputs = generate(args.repo, args.results or args.repo / "results")
        stale = stale_files(outputs)
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{exc.filename or 'error'}: {exc.strerror or exc}", file=sys.stderr)
        return 2

    if args.check:
        for path in stale:
            print(f"out of date: {display_path(path)}")
        if stale:
            print("run scripts/regenerate.sh to update them", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(outputs[path])
        print(f"wrote {display_path(path)}")
    print(f"{len(stale)} file(s) updated, {len(outputs) - len(stale)} already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
