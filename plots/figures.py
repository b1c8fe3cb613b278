"""The figures, written to docs/plots/<gpu-slug>/: the journey (plots/journey.py, every step at
every bench shape with the FP32 FFMA peak and the 3xTF32 ceiling), GFLOPS per step at the
headline sizes, GFLOPS against size (a panel per chapter), the ratio heat map (every shape,
chapters ruled off) and (plots/accuracy_plot.py) speed against accuracy. A step has one colour
in every figure (plots/palette.py): a shade of its chapter's hue."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
import matplotlib.style
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator, PercentFormatter

from plots.accuracy_plot import has_accuracy, plot_speed_vs_accuracy
from plots.journey import (JOURNEY_PLOT, NOT_MEASURED, PEAK_COLOR, fp32_peak, plot_journey,
                           row_at, shapes)
from plots.markdown import MISSING, percent
from plots.palette import chapter_of, chapters_present, step_color, step_style
from plots.results import GpuResults
from plots.steps import step_number

# The headline plot and the summary tables compare steps at these sizes, as the step-by-step
# SGEMM blog series did.
HEADLINE_SIZES = (2048, 4096)
HEADLINE_PLOT = "steps_2048_4096"
SIZE_PLOT = "gflops_vs_size.png"
RATIO_PLOT = "ratio_to_cublas.png"
ACCURACY_PLOT = "speed_vs_accuracy.png"

DPI = 100

# Applied on top of matplotlib's built-in defaults (see plot_files); the salt makes SVG ids
# reproducible.
_RC = {"svg.hashsalt": "sgemm-steps", "font.size": 10}
SIZE_COLORS = ("#4c72b0", "#dd8452")  # bars for the two headline sizes
CUBLAS_COLORS = ("#1b2f57", "#8c3a0a")  # darker shades of the same hues for cuBLAS lines


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
    """GFLOPS against matrix size, one panel per chapter: the chapter's steps in shades of its
    hue (a marker each), the other chapters faint behind them, cuBLAS as a thick black dashed
    line and the FP32 FFMA peak as a red line, on one shared scale."""
    kernels = [step for step in steps if step_number(step) != 0]
    chapters = chapters_present(kernels) or [None]
    columns = 1 if len(chapters) == 1 else 2
    lines = -(-len(chapters) // columns)
    fig = Figure(figsize=(7.2 * columns, 4.2 * lines + 0.8), dpi=DPI, layout="constrained")
    axes = fig.subplots(lines, columns, squeeze=False, sharex=True, sharey=True)
    sizes = gpu.sizes
    series = {step: [(size, row.gflops) for size in sizes if (row := gpu.row(step, size))]
              for step in kernels}
    cublas = [(size, value) for size in sizes if (value := gpu.cublas_gflops(size)) is not None]
    peak = fp32_peak(list(gpu.rows.values()))
    for ax, chapter in zip(axes.flat, chapters):
        members = [step for step in kernels if chapter_of(step) is chapter]
        for step in kernels:  # the other chapters: faint, for context, no legend entry
            if step not in members and series[step]:
                ax.plot(*zip(*series[step]), color=step_color(step, steps), alpha=0.22,
                        linewidth=1)
        for step in members:
            color, marker = step_style(step, steps)
            if series[step]:
                ax.plot(*zip(*series[step]), marker=marker, color=color, linewidth=1.8,
                        markersize=6, label=step)
            else:
                # An invisible handle keeps the step in the legend, labelled as not measured.
                ax.plot([], [], linestyle="none", label=f"{step}: {NOT_MEASURED}")
        if cublas:
            ax.plot(*zip(*cublas), color="black", linestyle="--", linewidth=2.5, marker="s",
                    markersize=5, label="cuBLAS SGEMM", zorder=3)
        if peak:
            ax.axhline(peak[0], color=PEAK_COLOR, linewidth=1.4,
                       label=f"FP32 FFMA peak ({peak[0] / 1000:.1f} TFLOPS)")
        ax.set_title(chapter.label if chapter else "steps", fontsize=11,
                     color=chapter.strong() if chapter else "black")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, borderaxespad=0)
        ax.grid(which="both", alpha=0.3)
    for ax in axes.flat[len(chapters):]:
        ax.set_visible(False)
    ax = axes.flat[0]
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(sizes, [str(size) for size in sizes])
    for ax in axes.flat[:len(chapters)]:
        ax.tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("GFLOPS (FP32 results, log scale)")
    fig.supxlabel("matrix size M=N=K (log2 scale)", fontsize=10)
    fig.suptitle(f"SGEMM GFLOPS against matrix size, one panel per chapter (the others faint)"
                 f"\n{gpu.name}", fontsize=12)
    return fig


def plot_ratio_heatmap(gpu: GpuResults, steps: list[str]) -> Figure:
    """Speed relative to cuBLAS per step (rows) and shape (columns: the square sizes, then the
    non-square shapes); chapters separated by white rules; cells not measured are grey."""
    panels = shapes(gpu, steps)
    fig = Figure(figsize=(4.6 + 1.05 * len(panels), 8.4), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    cells = [[row_at(gpu, step, shape) for shape in panels] for step in steps]
    ratios = np.array([[row.ratio_to_cublas if row and row.has_cublas else np.nan
                        for row in line] for line in cells], dtype=float).reshape(
                            len(steps), len(panels))
    vmax = max([1.0, *ratios[~np.isnan(ratios)]])
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="0.85")
    image = ax.imshow(np.ma.masked_invalid(ratios), cmap=cmap, vmin=0, vmax=vmax, aspect="auto")
    for (r, c), ratio in np.ndenumerate(ratios):
        if np.isnan(ratio):
            ax.text(c, r, "no cuBLAS" if cells[r][c] else NOT_MEASURED, ha="center",
                    va="center", fontsize=8, color="0.3", style="italic")
        else:
            ax.text(c, r, percent(ratio), ha="center", va="center", fontsize=8,
                    color="white" if ratio < 0.6 * vmax else "black")
    # A white rule between chapters, and between the square sizes and the other shapes.
    for r in range(1, len(steps)):
        if chapter_of(steps[r]) is not chapter_of(steps[r - 1]):
            ax.axhline(r - 0.5, color="white", linewidth=3)
    squares = sum(1 for m, n, k in panels if m == n == k)
    if 0 < squares < len(panels):
        ax.axvline(squares - 0.5, color="white", linewidth=3)
    ax.set_xticks(range(len(panels)),
                  [str(m) if m == n == k else f"{m}×{n}\n×{k}" for m, n, k in panels])
    ax.set_yticks(range(len(steps)), steps)
    for label, step in zip(ax.get_yticklabels(), steps):
        chapter = chapter_of(step)
        label.set_color(chapter.strong() if chapter else "black")
    ax.tick_params(length=0)
    ax.set_xlabel("matrix size M=N=K, then the shapes M×N×K where K dominates")
    ax.set_ylabel("step (coloured by chapter)")
    ax.set_title(f"SGEMM speed relative to cuBLAS (100% = as fast)\n{gpu.name}")
    colorbar = fig.colorbar(image, ax=ax, format=PercentFormatter(xmax=1.0))
    colorbar.set_label("speed relative to cuBLAS (cuBLAS time / step time)")
    return fig


def plot_files(gpu: GpuResults, steps: list[str], repo: Path) -> dict[Path, bytes]:
    out_dir = repo / "docs" / "plots" / gpu.slug
    # The "default" style ignores any user matplotlibrc, which would change the output.
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        headline = plot_headline(gpu, steps)
        journey = plot_journey(gpu, steps)
        files = {
            out_dir / f"{JOURNEY_PLOT}.png": figure_bytes(journey, "png"),
            out_dir / f"{JOURNEY_PLOT}.svg": figure_bytes(journey, "svg"),
            out_dir / f"{HEADLINE_PLOT}.png": figure_bytes(headline, "png"),
            out_dir / f"{HEADLINE_PLOT}.svg": figure_bytes(headline, "svg"),
            out_dir / SIZE_PLOT: figure_bytes(plot_gflops_vs_size(gpu, steps), "png"),
            out_dir / RATIO_PLOT: figure_bytes(plot_ratio_heatmap(gpu, steps), "png"),
        }
        if has_accuracy(gpu):
            files[out_dir / ACCURACY_PLOT] = figure_bytes(plot_speed_vs_accuracy(gpu, steps),
                                                          "png")
        return files
