"""The journey: every step's speed at every bench shape, one panel per shape, the chapters
marked, with the two ceilings a reader measures the steps against:

- the FP32 FFMA peak: SMs x FP32 lanes per SM x 2 FLOP (a fused multiply-add) x SM clock, from
  the rows' own sm_count, sm_clock_mhz and arch columns (the clock is the one the harness
  reports, so the line is a napkin figure, not a measurement);
- the 3xTF32 ceiling: cuBLAS with one TF32 pass at that shape (results/<gpu>/controls/
  cublas_tf32.csv) divided by 3, since 3xTF32 issues three TF32 products per FP32 product.

A step without a row at a shape (not measured yet) keeps its slot, hatched and labelled, so
that it never reads as a zero. Above the fastest step of each chapter: its speed over cuBLAS
SGEMM in the same run; the fastest step of the panel in bold.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from plots.palette import chapter_of, chapters_present, step_color
from plots.results import GpuResults
from plots.schema import Row
from plots.steps import step_number

JOURNEY_PLOT = "journey"  # .png and .svg
TF32_CONTROL = "cublas_tf32"
TF32_PASSES = 3
NOT_MEASURED = "not measured"
PEAK_COLOR = "#b2182b"
CEILING_COLOR = "#542788"
# FP32 FMA lanes per SM by compute capability (the CUDA C++ Programming Guide's table of
# arithmetic instruction throughput: 32-bit floating-point multiply-add per clock per SM).
FP32_LANES = {50: 128, 52: 128, 53: 128, 60: 64, 61: 128, 62: 128, 70: 64, 72: 64, 75: 64,
              80: 64, 86: 128, 87: 128, 89: 128, 90: 128, 100: 128, 101: 128, 103: 128,
              110: 128, 120: 128, 121: 128}

Shape = tuple[int, int, int]
_LABEL_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1}


def _arch(text: str) -> int | None:
    """The compute capability in an arch column: "90", "90a", "native=80", "sm_90" ..."""
    found = re.findall(r"\d{2,3}", text)
    return int(found[0]) if found else None


def fp32_peak(rows: list[Row]) -> tuple[float, str] | None:
    """(GFLOPS, how it was computed) of the FP32 FFMA peak, from the most common (SMs, clock,
    arch) of the rows; None when the arch's lanes per SM are not known here."""
    if not rows:
        return None
    counted = Counter((row.sm_count, row.sm_clock_mhz, _arch(row.arch)) for row in rows)
    (sms, mhz, arch), _ = max(counted.items(), key=lambda item: (item[1], item[0][:2]))
    lanes = FP32_LANES.get(arch) if arch is not None else None
    if lanes is None or sms <= 0 or mhz <= 0:
        return None
    gflops = sms * lanes * 2 * mhz / 1000
    return gflops, (f"{sms} SMs × {lanes} FP32 lanes × 2 FLOP × {mhz} MHz "
                    f"= {gflops / 1000:.1f} TFLOPS")


def shapes(gpu: GpuResults, steps: list[str]) -> list[Shape]:
    """The panels: the square sizes, then the other shapes in shape order."""
    squares = [(size, size, size) for size in gpu.sizes]
    return squares + [shape for shape in gpu.shapes_of(steps) if shape not in squares]


def row_at(gpu: GpuResults, step: str, shape: Shape) -> Row | None:
    m, n, k = shape
    return gpu.row(step, m) if m == n == k else gpu.shape_row(step, shape)


def cublas_at(gpu: GpuResults, shape: Shape) -> float | None:
    m, n, k = shape
    return gpu.cublas_gflops(m) if m == n == k else gpu.shape_cublas_gflops(shape)


def tf32x3_ceiling(gpu: GpuResults, shape: Shape) -> float | None:
    """cuBLAS's one-pass TF32 GFLOPS at this shape over 3; None where it was not measured."""
    row = gpu.control_row(TF32_CONTROL, shape)
    return row.gflops / TF32_PASSES if row is not None else None


def shape_title(shape: Shape) -> str:
    m, n, k = shape
    return f"M=N=K={m}" if m == n == k else f"M×N×K = {m}×{n}×{k}"


def chapter_bests(gpu: GpuResults, steps: list[str], shape: Shape) -> dict[str, Row]:
    """The fastest measured step of each chapter at this shape, by step."""
    best: dict[object, tuple[str, Row]] = {}
    for step in steps:
        row = row_at(gpu, step, shape)
        chapter = chapter_of(step)
        if row is None or chapter is None:
            continue
        if chapter not in best or row.gflops > best[chapter][1].gflops:
            best[chapter] = (step, row)
    return dict(best.values())


def _panel(ax, gpu: GpuResults, steps: list[str], shape: Shape, peak: float | None) -> None:
    x = np.arange(len(steps))
    rows = [row_at(gpu, step, shape) for step in steps]
    cublas = cublas_at(gpu, shape)
    ceiling = tf32x3_ceiling(gpu, shape)
    tops = [row.gflops / 1000 for row in rows if row]
    top = max([*tops, *(v / 1000 for v in (peak, ceiling, cublas) if v)], default=1.0) * 1.17
    ax.set_ylim(0, top)
    ax.set_xlim(-0.6, len(steps) - 0.4)

    # The chapters: a pale band each, its step range at the top.
    for chapter in chapters_present(steps):
        members = [i for i, step in enumerate(steps) if chapter_of(step) is chapter]
        ax.axvspan(members[0] - 0.5, members[-1] + 0.5, color=chapter.tint(), zorder=0,
                   linewidth=0)
        if chapter.steps:
            ax.text((members[0] + members[-1]) / 2, 0.985, chapter.steps,
                    transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=8,
                    color=chapter.strong(), fontweight="bold", bbox=_LABEL_BOX, zorder=5)

    for xi, step, row in zip(x, steps, rows):
        if row is None:
            # Not measured: a hatched, empty slot, never a zero-height bar.
            ax.bar(xi, top, 0.8, color="none", edgecolor="0.6", hatch="////", linewidth=0,
                   zorder=1)
            ax.text(xi, 0.03 * top, NOT_MEASURED, rotation=90, ha="center", va="bottom",
                    fontsize=7, color="0.3", style="italic", zorder=4,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        else:
            ax.bar(xi, row.gflops / 1000, 0.8, color=step_color(step, steps), zorder=2,
                   hatch=None if row.verified else "xx", edgecolor="white", linewidth=0.5)

    if peak:
        ax.axhline(peak / 1000, color=PEAK_COLOR, linewidth=1.6, zorder=3)
    if ceiling:
        ax.axhline(ceiling / 1000, color=CEILING_COLOR, linewidth=1.6, linestyle="-.",
                   zorder=3)
    if cublas:
        ax.axhline(cublas / 1000, color="black", linewidth=1.4, linestyle="--", zorder=3)

    bests = chapter_bests(gpu, steps, shape)
    fastest = max(bests.values(), key=lambda row: row.gflops, default=None)
    for step, row in bests.items():
        if not row.has_cublas:
            continue
        i = steps.index(step)
        ax.annotate(f"{row.ratio_to_cublas:.2f}×", (i, row.gflops / 1000), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8,
                    rotation=90, zorder=5, bbox=_LABEL_BOX,
                    fontweight="bold" if row is fastest else "normal")

    ax.set_xticks(x, [f"{step_number(step):02d}" if step_number(step) is not None else step
                      for step in steps], fontsize=7)
    ax.tick_params(axis="x", length=0, pad=2)
    ax.set_title(shape_title(shape), fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def plot_journey(gpu: GpuResults, steps: list[str]) -> Figure:
    kernels = [step for step in steps if step_number(step) != 0]
    panels = shapes(gpu, kernels)
    columns = 1 if len(panels) == 1 else 2 if len(panels) in (2, 4) else 3
    lines = math.ceil(len(panels) / columns)
    fig = Figure(figsize=(5.4 * columns + 0.6, 3.6 * lines + 1.9), dpi=100,
                 layout="constrained")
    axes = fig.subplots(lines, columns, squeeze=False)
    all_rows = [*gpu.rows.values(), *gpu.shapes.values()]
    peak = fp32_peak(all_rows)
    for ax, shape in zip(axes.flat, panels):
        _panel(ax, gpu, kernels, shape, peak[0] if peak else None)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("TFLOPS (FP32 results)")
    for ax in axes.flat[max(0, len(panels) - columns):len(panels)]:
        ax.set_xlabel("step", fontsize=9)

    handles = [Patch(color=chapter.strong(), label=chapter.label)
               for chapter in chapters_present(kernels)]
    if peak:
        handles.append(Line2D([], [], color=PEAK_COLOR, linewidth=1.6,
                              label="FP32 FFMA peak"))
    ceilings = any(tf32x3_ceiling(gpu, shape) for shape in panels)
    if ceilings:
        handles.append(Line2D([], [], color=CEILING_COLOR, linewidth=1.6, linestyle="-.",
                              label="3xTF32 ceiling"))
    handles.append(Line2D([], [], color="black", linewidth=1.4, linestyle="--",
                          label="cuBLAS SGEMM"))
    if any(row_at(gpu, step, shape) is None for step in kernels for shape in panels):
        handles.append(Patch(facecolor="white", edgecolor="0.6", hatch="////",
                             label=NOT_MEASURED))
    if any(not row.verified for row in all_rows):
        handles.append(Patch(facecolor="0.7", edgecolor="white", hatch="xx",
                             label="not verified"))
    # The title heads the legend: a suptitle and an "outside" legend would overlap.
    fig.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 5),
               fontsize=9, frameon=False,
               title=f"The journey: SGEMM per step at each bench shape, {gpu.name}",
               title_fontproperties={"size": 13})

    notes = []
    if peak:
        notes.append(f"FP32 FFMA peak = {peak[1]} (the SM clock the rows report).")
    if ceilings:
        notes.append(f"3xTF32 ceiling = cuBLAS with one TF32 pass at that shape ÷ "
                     f"{TF32_PASSES} (it fails the FP32-grade check; the 3xTF32 steps pass it).")
    notes.append("Above each chapter's fastest step: its speed over cuBLAS SGEMM in the same "
                 "run (the panel's fastest in bold).")
    # Under the panels, as the figure's x label: constrained layout makes room for it.
    fig.supxlabel("\n".join(notes), fontsize=8.5, color="0.2", linespacing=1.5)
    return fig
