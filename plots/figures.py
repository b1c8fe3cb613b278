"""The figures: GFLOPS per step at the headline sizes, GFLOPS against size, the ratio heat map,
and (plots/accuracy_plot.py) speed against accuracy. Written to docs/plots/<gpu-slug>/."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
import matplotlib.style
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator, PercentFormatter

from plots.accuracy_plot import has_accuracy, plot_speed_vs_accuracy
from plots.markdown import MISSING, percent
from plots.results import GpuResults

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
            ax.text(c, r, percent(ratio), ha="center", va="center", fontsize=8,
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
        files = {
            out_dir / f"{HEADLINE_PLOT}.png": figure_bytes(headline, "png"),
            out_dir / f"{HEADLINE_PLOT}.svg": figure_bytes(headline, "svg"),
            out_dir / SIZE_PLOT: figure_bytes(plot_gflops_vs_size(gpu, steps), "png"),
            out_dir / RATIO_PLOT: figure_bytes(plot_ratio_heatmap(gpu, steps), "png"),
        }
        if has_accuracy(gpu):
            files[out_dir / ACCURACY_PLOT] = figure_bytes(plot_speed_vs_accuracy(gpu, steps),
                                                          "png")
        return files
