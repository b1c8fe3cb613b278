"""Speed against accuracy: one point per step and size, cuBLAS one-pass TF32 as context.

x: the step's RMS error over cuBLAS SGEMM's on the same inputs (err_rms_vs_cublas, log scale);
y: the step's speed over cuBLAS SGEMM's in the same run (ratio_to_cublas). A step has its
colour (plots/palette.py), a size its marker; the step numbers stand beside the points, one
label for the points that fall together, placed so that no two labels overlap.

cuBLAS with one TF32 pass (results/<gpu>/controls/cublas_tf32.csv) is drawn as crosses
labelled with their size, in a panel of its own, on its own scales: it is several times faster and a hundred times less accurate, and on
the steps' scales it would squeeze them into a corner. It fails the FP32-grade check, so it is
never a step and never enters a "% of cuBLAS" figure.
Only the square bench sizes are drawn (GpuResults.rows, labelled M=N=K=size); the non-square
shapes (e.g. 1024x1024x8192) are in the `shapes` tables (plots/shapes.py), not here.
"""

from __future__ import annotations

import math

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter
from matplotlib.transforms import Bbox

from plots.palette import chapters_present, step_color
from plots.results import GpuResults
from plots.schema import Row
from plots.steps import step_number

TF32_CONTROL = "cublas_tf32"
SIZE_MARKERS = "osD^vph*<>"  # one per square size, in size order
LABEL_SIZE = 8.5
CLUSTER_PX = 6  # points closer than this (in pixels) share one label
# A stack: this many label groups within this width, closer on average than this in y.
COLUMN_PX, COLUMN_LEAST, COLUMN_SPACING_PX = 24, 5, 24
STACK_GAP_PX = 26
LABEL_MARGIN_PX = 5  # from the column's points to its stacked labels
_GAPS = (6, 14, 24, 36, 50, 66)  # label distances tried, in pixels, nearest first
_DIRECTIONS = ((1, 0), (1, 1), (1, -1), (0, 1), (0, -1), (-1, 0), (-1, 1), (-1, -1))


def _point(row: Row) -> tuple[float, float] | None:
    """(error relative to cuBLAS, speed relative to cuBLAS), or None if not both measured."""
    x = row.err_rms_vs_cublas
    if x is None or not math.isfinite(x) or x <= 0 or not row.has_cublas:
        return None
    return x, row.ratio_to_cublas


def has_accuracy(gpu: GpuResults) -> bool:
    """Whether any step row has both numbers; without one there is nothing to plot. Step 00
    (cuBLAS itself) is the reference lines, not a point."""
    return any(_point(row) for (step, _), row in gpu.rows.items() if step_number(step) != 0)


def step_ranges(numbers: list[int]) -> str:
    """Step numbers as a label: runs of three or more as a range ("15–20, 24")."""
    numbers = sorted(set(numbers))
    parts, start = [], 0
    for i in range(1, len(numbers) + 1):
        if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
            run = numbers[start:i]
            parts.append(f"{run[0]:02d}–{run[-1]:02d}" if len(run) >= 3
                         else ", ".join(f"{n:02d}" for n in run))
            start = i
    return ", ".join(parts)


def clusters(points: list[tuple[float, float, int]], radius: float
             ) -> list[tuple[float, float, list[int]]]:
    """Groups (x, y, step number) display points that fall together: each point joins the
    first group whose first point lies within radius, else starts one. Each group as (mean x,
    mean y, its step numbers), in a deterministic order (top to bottom, then left to right)."""
    groups: list[list[tuple[float, float, int]]] = []
    for point in sorted(points):
        for group in groups:
            if math.hypot(point[0] - group[0][0], point[1] - group[0][1]) < radius:
                group.append(point)
                break
        else:
            groups.append([point])
    result = [(sum(p[0] for p in g) / len(g), sum(p[1] for p in g) / len(g),
               sorted({p[2] for p in g})) for g in groups]
    return sorted(result, key=lambda c: (-c[1], c[0]))


def columns(groups: list[tuple[float, float, list[int]]], width: float, least: int,
            spacing: float) -> tuple[list[list], list]:
    """Splits the groups into columns and the rest. A column: at least `least` groups within
    `width` pixels of x, closer on average than `spacing` pixels in y (too crowded to label
    one by one: their labels are stacked beside them). The rest are placed one by one."""
    order = sorted(groups, key=lambda g: (g[0], -g[1]))
    stacks, rest, i = [], [], 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and order[j + 1][0] - order[i][0] <= width:
            j += 1
        ys = [g[1] for g in order[i:j + 1]]
        if j - i + 1 >= least and (max(ys) - min(ys)) / (j - i) < spacing:
            stacks.append(order[i:j + 1])
            i = j + 1
        else:
            rest.append(order[i])
            i += 1
    return stacks, sorted(rest, key=lambda c: (-c[1], c[0]))


def spread(wanted: list[float], height: float, low: float, high: float) -> list[float]:
    """Centres for boxes of this height, in the order of wanted (ascending), that do not
    overlap and move the boxes as little as they can (in the least-squares sense: boxes that
    would overlap form a block centred on their wanted places), kept within [low, high] where
    they fit."""
    blocks: list[list[float]] = []  # each block: the wanted places of its boxes, in order
    bases: list[float] = []  # the centre of each block's first box

    def base(block: list[float]) -> float:
        return sum(y - k * height for k, y in enumerate(block)) / len(block)

    for y in wanted:
        blocks.append([y])
        bases.append(y)
        while len(blocks) > 1 and bases[-1] < bases[-2] + len(blocks[-2]) * height:
            merged = blocks[-2] + blocks[-1]
            blocks[-2:] = [merged]
            bases[-2:] = [base(merged)]
    placed = [b + k * height for block, b in zip(blocks, bases) for k in range(len(block))]
    if placed:  # inside the bounds: shift the whole set where it sticks out
        shift = max(0.0, low + height / 2 - placed[0]) or min(0.0, high - height / 2
                                                               - placed[-1])
        placed = [y + shift for y in placed]
    return placed


def _points_of(groups, points):
    """The points that lie in these groups (within CLUSTER_PX of a group's centre)."""
    return [p for p in points
            if any(math.hypot(p[0] - g[0], p[1] - g[1]) <= CLUSTER_PX for g in groups)]


def _overlap(a: Bbox, b: Bbox) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def _label(ax, renderer, x: float, y: float, numbers: list[int], **kwargs):
    text = ax.annotate(step_ranges(numbers), ax.transData.inverted().transform((x, y)),
                       xytext=(0, 0), textcoords="offset points", fontsize=LABEL_SIZE,
                       va="center", zorder=3,  # under the points (4): lines pass behind
                       arrowprops={"arrowstyle": "-", "color": "0.45", "linewidth": 0.7,
                                   "shrinkA": 1, "shrinkB": 4}, **kwargs)
    return text, text.get_window_extent(renderer)


def _move(text, ox: float, oy: float) -> None:
    """Sets a label's offset from its points, given in pixels (stored in points, so that the
    offset is the same in any output format)."""
    points_per_pixel = 72 / text.figure.dpi
    text.xyann = (ox * points_per_pixel, oy * points_per_pixel)


def place_labels(ax, renderer, points: list[tuple[float, float, int]]) -> list[Bbox]:
    """Writes one label per group of points that fall together. Where many groups stand in
    a narrow column (the steps with cuBLAS's own error, at x = 1), their labels are stacked
    beside the column, alternately right and left, in the order of the points, each joined to
    its points by a line. Every other label goes to the nearest spot (the directions around its points, at
    growing distances) that overlaps no label placed before, no point and nothing outside
    the axes. Returns the labels' boxes, in pixels."""
    inside = ax.get_window_extent(renderer).padded(-2)
    marks = [Bbox.from_bounds(x - 4, y - 4, 8, 8) for x, y, _ in points]
    placed: list[Bbox] = []
    lines: list[Bbox] = []
    stacks, rest = columns(clusters(points, CLUSTER_PX), COLUMN_PX, COLUMN_LEAST,
                           COLUMN_SPACING_PX)
    for stack in stacks:
        stack = sorted(stack, key=lambda g: (g[1], g[0]))
        # Alternate sides, right first, so that each side holds half of the labels.
        for side, members in ((1, stack[::2]), (-1, stack[1::2])):
            if not members:
                continue
            edge = (max if side > 0 else min)(g[0] for g in stack) + side * STACK_GAP_PX
            labels = [_label(ax, renderer, x, y, numbers, ha="left" if side > 0 else "right")
                      for x, y, numbers in members]
            height = max(box.height for _, box in labels) + 1
            ys = spread([g[1] for g in members], height, inside.y0, inside.y1)
            own = {(round(x), round(y)) for x, y, _ in _points_of(stack, points)}
            foreign = [mark for mark, (x, y, _) in zip(marks, points)
                       if (round(x), round(y)) not in own]
            for (x, y, _), (text, box), ly in zip(members, labels, ys):
                at = edge
                for _ in range(len(foreign) + 1):  # move the label past any other point
                    box_at = Bbox.from_bounds(at if side > 0 else at - box.width,
                                              ly - box.height / 2, box.width, box.height)
                    hit = [mark for mark in foreign if _overlap(box_at, mark)]
                    if not hit:
                        break
                    at = (max(m.x1 for m in hit) + 3 if side > 0
                          else min(m.x0 for m in hit) - 3)
                _move(text, at - x, ly - y)
                placed.append(box_at)
                # The line to the points: an obstacle for the labels placed after.
                lines.append(Bbox([[min(x, at), min(y, ly) - 1], [max(x, at), max(y, ly) + 1]]))
    for cx, cy, numbers in rest:
        text, size = _label(ax, renderer, cx, cy, numbers, ha="center")
        w, h = size.width, size.height
        best = None
        for gap in _GAPS:
            for dx, dy in _DIRECTIONS:
                # The box's near edge sits `gap` pixels from the point in that direction.
                ox = dx * (gap + w / 2) if dx else 0.0
                oy = dy * (gap + h / 2) if dy else 0.0
                box = Bbox.from_bounds(cx + ox - w / 2, cy + oy - h / 2, w, h)
                # A margin around the other labels, so that two never read as one.
                cost = (sum(_overlap(box.padded(LABEL_MARGIN_PX), other) for other in placed)
                        + sum(_overlap(box, other) for other in marks + lines)
                        + (0 if inside.contains(box.x0, box.y0)
                           and inside.contains(box.x1, box.y1) else w * h))
                if best is None or cost < best[0]:
                    best = (cost, ox, oy, box)
                if cost == 0:
                    break
            if best[0] == 0:
                break
        _, ox, oy, box = best
        _move(text, ox, oy)
        if math.hypot(ox, oy) < 12 + max(w, h) / 2:
            text.arrow_patch.set_visible(False)  # near enough to need no line
        placed.append(box)
    return placed


def _plain_log_ticks(ax) -> None:
    """Ticks at 1, 2, 3, 5 times the powers of ten inside the x range, written as plain numbers
    (a log axis that spans less than a decade would otherwise show one label or none)."""
    low, high = ax.get_xlim()
    ticks = [m * 10.0 ** e for e in range(math.floor(math.log10(low)),
                                           math.ceil(math.log10(high)) + 1)
             for m in (1, 2, 3, 5) if low <= m * 10.0 ** e <= high]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_speed_vs_accuracy(gpu: GpuResults, steps: list[str]) -> Figure:
    sizes = gpu.sizes
    markers = {size: SIZE_MARKERS[i % len(SIZE_MARKERS)] for i, size in enumerate(sizes)}
    kernels = [step for step in steps if step_number(step) != 0]
    tf32 = [(row.m, p) for row in gpu.controls.get(TF32_CONTROL, []) if (p := _point(row))]

    fig = Figure(figsize=(13, 8.2), dpi=100, layout="constrained")
    if tf32:
        ax, side = fig.subplots(1, 2, width_ratios=[3.3, 1])
    else:
        ax, side = fig.add_subplot(), None

    drawn, label_points = [], []
    for step in kernels:
        for size in sizes:
            row = gpu.row(step, size)
            p = _point(row) if row else None
            if p is None:
                continue
            ax.scatter(*p, s=52, color=step_color(step, steps), marker=markers[size],
                       edgecolors="black", linewidths=0.5, zorder=4)
            drawn.append((step, p))
    xs = [p[0] for _, p in drawn]
    ys = [p[1] for _, p in drawn]
    ax.set_xscale("log")
    ax.set_xlim(min(xs + [1.0]) / 1.6, max(xs + [1.0]) * 1.6)
    _plain_log_ticks(ax)
    ax.set_ylim(0, max(ys + [1.0]) * 1.15)
    ax.axvline(1, color="0.4", linestyle=":", linewidth=1.2, zorder=1)
    ax.axhline(1, color="0.4", linestyle=":", linewidth=1.2, zorder=1)
    ax.text(1, 0.995, " cuBLAS SGEMM's error", transform=ax.get_xaxis_transform(),
            va="top", fontsize=8, color="0.3")
    ax.text(0.005, 1, "cuBLAS SGEMM's speed", transform=ax.get_yaxis_transform(),
            va="bottom", fontsize=8, color="0.3")
    ax.set_xlabel("RMS error over cuBLAS SGEMM's on the same inputs\n"
                  "(log scale; left is more accurate)")
    ax.set_ylabel("speed over cuBLAS SGEMM in the same run (up is faster)")
    ax.set_title("The steps", fontsize=11)
    ax.grid(which="both", alpha=0.3)

    if side is not None:
        for size, (x, y) in tf32:
            side.scatter(x, y, s=80, color="black", marker="X", zorder=4)
            side.annotate(f"M=N=K={size}", (x, y), xytext=(7, 0), textcoords="offset points",
                          va="center", fontsize=8)
        txs = [p[0] for _, p in tf32]
        tys = [p[1] for _, p in tf32]
        side.set_xscale("log")
        side.set_xlim(min(txs) / 1.8, max(txs) * 3.5)
        _plain_log_ticks(side)
        side.set_ylim(0, max(tys) * 1.15)
        side.set_title("cuBLAS, one TF32 pass: context,\nit fails the FP32-grade check",
                       fontsize=10)
        side.set_xlabel("RMS error over cuBLAS SGEMM's\n(log scale; its own scales)")
        side.grid(which="both", alpha=0.3)

    handles = [Line2D([], [], linestyle="none", marker=markers[size], color="0.6",
                      markeredgecolor="black", markersize=7, label=f"M=N=K={size}")
               for size in sizes]
    handles += [Patch(color=chapter.strong(), label=chapter.label)
                for chapter in chapters_present([step for step, _ in drawn])]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4),
               fontsize=9, frameon=False,
               title="The numbers beside the points are step numbers; a step's colour is a "
                     "shade of its chapter's", title_fontsize=9)
    fig.suptitle(f"Speed against accuracy, one point per step and size\n{gpu.name}",
                 fontsize=12)

    # Lay the figure out once, freeze it, then place the labels in pixels.
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    label_points = [(*ax.transData.transform(p), step_number(step)) for step, p in drawn
                    if step_number(step) is not None]
    place_labels(ax, renderer, label_points)
    return fig

