"""Speed against accuracy: one point per step and size, cuBLAS one-pass TF32 as context.

x: the step's RMS error over cuBLAS SGEMM's on the same inputs (err_rms_vs_cublas, log scale);
y: the step's speed over cuBLAS SGEMM's in the same run (ratio_to_cublas). cuBLAS with one
TF32 pass (results/<gpu>/controls/cublas_tf32.csv) is drawn as a labelled context point: it
fails the FP32-grade check, so it is never a step and never enters a "% of cuBLAS" figure.
Only the square bench sizes are drawn (GpuResults.rows, labelled M=N=K=size); the non-square
shapes (e.g. 1024x1024x8192) are in the `shapes` tables (plots/shapes.py), not here.
"""

from __future__ import annotations

import math

import matplotlib
from matplotlib.figure import Figure

from plots.results import GpuResults
from plots.schema import Row
from plots.steps import step_number

LABELLED_FROM = 13  # steps of the later chapters (13+) get a label beside their points
TF32_CONTROL = "cublas_tf32"
TF32_LABEL = "cuBLAS, one TF32 pass\n(fails the FP32-grade check)"


def _point(row: Row) -> tuple[float, float] | None:
    """(error relative to cuBLAS, speed relative to cuBLAS), or None if not both measured."""
    x = row.err_rms_vs_cublas
    if x is None or not math.isfinite(x) or x <= 0 or not row.has_cublas:
        return None
    return x, row.ratio_to_cublas


def has_accuracy(gpu: GpuResults) -> bool:
    """Whether any step row has both numbers; without one there is nothing to plot."""
    return any(_point(row) for row in gpu.rows.values())


def plot_speed_vs_accuracy(gpu: GpuResults, steps: list[str]) -> Figure:
    fig = Figure(figsize=(10, 6.5), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    sizes = gpu.sizes
    colors = matplotlib.colormaps["tab10"]
    for i, size in enumerate(sizes):
        points = [(step, p) for step in steps
                  if (row := gpu.row(step, size)) and (p := _point(row))]
        if not points:
            continue
        later = [(step, p) for step, p in points if (step_number(step) or 0) >= LABELLED_FROM]
        earlier = [p for step, p in points if (step_number(step) or 0) < LABELLED_FROM]
        if earlier:
            ax.scatter(*zip(*earlier), s=28, color=colors(i), alpha=0.55, linewidths=0,
                       label=f"M=N=K={size}")
        if later:
            ax.scatter(*zip(*(p for _, p in later)), s=70, color=colors(i), marker="D",
                       edgecolors="black", linewidths=0.8,
                       label=None if earlier else f"M=N=K={size}")
            for step, (x, y) in later:
                ax.annotate(str(step_number(step)), (x, y), xytext=(5, 4),
                            textcoords="offset points", fontsize=9)
    tf32 = [p for row in gpu.controls.get(TF32_CONTROL, []) if (p := _point(row))]
    if tf32:
        ax.scatter(*zip(*tf32), s=80, color="black", marker="X", label="cuBLAS, one TF32 pass")
        x, y = max(tf32, key=lambda p: p[1])
        ax.annotate(TF32_LABEL, (x, y), xytext=(-10, -6), textcoords="offset points",
                    ha="right", va="top", fontsize=9)
    ax.axvline(1, color="0.4", linestyle=":", linewidth=1.2)
    ax.axhline(1, color="0.4", linestyle=":", linewidth=1.2)
    ax.text(1, 1.0, " cuBLAS SGEMM", transform=ax.get_xaxis_transform(), va="top",
            fontsize=8, color="0.3")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("RMS error over cuBLAS SGEMM's on the same inputs (log scale; left is more "
                  "accurate)")
    ax.set_ylabel("speed over cuBLAS SGEMM in the same run (up is faster)")
    ax.set_title(f"Speed against accuracy, one point per step and size\n{gpu.name}")
    ax.grid(which="both", alpha=0.3)
    later_steps = [s for s in steps if (step_number(s) or 0) >= LABELLED_FROM
                   and any(_point(r) for r in gpu.rows_of(s))]
    if later_steps:
        fig.text(0.01, 0.005, "Labelled (diamonds): " + ", ".join(later_steps), fontsize=8)
    fig.legend(loc="outside right upper", fontsize=9)
    return fig
