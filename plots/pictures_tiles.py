"""The geometry pictures of the step pages (docs/pictures/NN_name.svg), drawn from the steps'
knobs: each picture reads the `SGEMM_KNOB(NAME, value)` lines of its step's `.cu` file (and a
few constants written there), so it stays true when a knob moves.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_tiles` writes them all
to docs/pictures/ (`--png DIR` also writes PNG twins there, to look at them).

Drawing is in pixels of an 800-pixel-wide page, y growing downwards; 1 unit of a tile is one
element of a matrix, scaled to fit."""

from __future__ import annotations

import io
import re
import struct
import sys
import textwrap
from functools import partial
from math import ceil
from pathlib import Path
from typing import Callable

import matplotlib
import matplotlib.patches
import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from plots.steps import step_dirs, step_number, step_source
from plots.tunables import step_tunables

PICTURES_DIR = Path("docs") / "pictures"
DPI = 100
WIDTH = 800  # pixels: the page width the pictures are drawn for
# The "default" style ignores any user matplotlibrc; the salt makes the SVG's ids reproducible.
_RC = {
    "svg.hashsalt": "sgemm-steps-pictures",
    "font.size": 10,
    "font.family": "DejaVu Sans",
    "hatch.linewidth": 0.6,
}

# One colour per operand, in every picture.
A_COLOR = "#4c72b0"
B_COLOR = "#dd8452"
C_COLOR = "#55a868"
MARK = "#c44e52"  # what the picture is about: one thread, one warp, one k
INK = "#222222"
MUTED = "#666666"


def tint(color: str, amount: float) -> str:
    """color mixed with white: amount 1 is the colour, 0 white (opaque: overlaps stay clean)."""
    r, g, b = matplotlib.colors.to_rgb(color)
    mix = [1 - amount * (1 - c) for c in (r, g, b)]
    return matplotlib.colors.to_hex(mix)


# ---- knobs and constants of a step ---------------------------------------------------------------


def step_dir(repo: Path, number: int) -> str:
    """The step directory with this number (exactly one)."""
    found = [step for step in step_dirs(repo) if step_number(step) == number]
    if len(found) != 1:
        raise ValueError(
            f"pictures: expected one step numbered {number:02d} under steps/, found {found}"
        )
    return found[0]


def knobs(repo: Path, number: int) -> dict[str, int | bool]:
    """NAME -> value of the step's knobs (ints and bools)."""
    values = {}
    for name, text in step_tunables(repo, step_dir(repo, number)).items():
        values[name] = {"true": True, "false": False}.get(text, None)
        if values[name] is None:
            values[name] = int(text)
    return values


def source_text(repo: Path, number: int) -> str:
    step = step_dir(repo, number)
    source = step_source(repo, step)
    if source is None:
        raise ValueError(f"pictures: steps/{step} has no kernel file")
    return source.read_text(encoding="utf-8")


def constant(repo: Path, number: int, name: str) -> int:
    """An integer constant written in the step's source (`NAME = 64`), for sizes that are not
    knobs but that a picture draws (wgmma's shape)."""
    match = re.search(rf"\b{name}\s*=\s*(\d+)\b", source_text(repo, number))
    if not match:
        raise ValueError(f"pictures: no `{name} = <number>` in step {number:02d}'s source")
    return int(match.group(1))


# ---- drawing -------------------------------------------------------------------------------------


class Canvas:
    """A white page `height` pixels tall, drawn in pixel coordinates (y down)."""

    def __init__(self, height: int, width: int = WIDTH):
        self.width, self.height = width, height
        self.fig = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor="white")
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(height, 0)
        self.ax.set_axis_off()

    def rect(self, x, y, w, h, fill="none", edge=INK, lw=0.8, hatch=None, z=1, ls="-"):
        self.ax.add_patch(
            Rectangle(
                (x, y),
                w,
                h,
                facecolor=fill,
                edgecolor=edge,
                linewidth=lw,
                hatch=hatch,
                zorder=z,
                linestyle=ls,
            )
        )

    def grid(self, x, y, w, h, rows, cols, color="#bbbbbb", lw=0.5, z=2):
        """Inner lines that cut the rectangle into rows x cols cells."""
        for r in range(1, rows):
            self.line(x, y + h * r / rows, x + w, y + h * r / rows, color=color, lw=lw, z=z)
        for c in range(1, cols):
            self.line(x + w * c / cols, y, x + w * c / cols, y + h, color=color, lw=lw, z=z)

    def line(self, x0, y0, x1, y1, color=INK, lw=0.8, z=3, ls="-"):
        self.ax.plot(
            [x0, x1],
            [y0, y1],
            color=color,
            linewidth=lw,
            zorder=z,
            linestyle=ls,
            solid_capstyle="butt",
        )

    def text(
        self,
        x,
        y,
        s,
        size=10,
        ha="left",
        va="center",
        color=INK,
        weight="normal",
        z=5,
        rotation=0,
        style="normal",
        mono=False,
        backdrop=False,
    ):
        """backdrop: on a white box, for a label that lines pass behind."""
        self.ax.text(
            x,
            y,
            s,
            fontsize=size,
            ha=ha,
            va=va,
            color=color,
            fontweight=weight,
            zorder=z,
            rotation=rotation,
            fontstyle=style,
            linespacing=1.3,
            family="DejaVu Sans Mono" if mono else "DejaVu Sans",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 2} if backdrop else None,
        )

    def arrow(self, x0, y0, x1, y1, color=INK, lw=1.2, rad=0.0, z=4, style="-|>", ls="-"):
        self.ax.add_patch(
            FancyArrowPatch(
                (x0, y0),
                (x1, y1),
                arrowstyle=style,
                mutation_scale=12,
                color=color,
                linewidth=lw,
                zorder=z,
                linestyle=ls,
                connectionstyle=f"arc3,rad={rad}",
                shrinkA=0,
                shrinkB=0,
            )
        )

    def span(self, x0, y0, x1, y1, label, color=MUTED, size=9, side=1, gap=4, z=5, ha=None):
        """A dimension line from (x0, y0) to (x1, y1) with end ticks and a label beside its middle
        (side: +1 below / right of it, -1 above / left)."""
        self.line(x0, y0, x1, y1, color=color, lw=0.8, z=z)
        horizontal = abs(y1 - y0) < abs(x1 - x0)
        tick = 3
        for x, y in ((x0, y0), (x1, y1)):
            if horizontal:
                self.line(x, y - tick, x, y + tick, color=color, lw=0.8, z=z)
            else:
                self.line(x - tick, y, x + tick, y, color=color, lw=0.8, z=z)
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        if horizontal:
            self.text(
                mx,
                my + side * gap,
                label,
                size=size,
                color=color,
                ha=ha or "center",
                va="top" if side > 0 else "bottom",
            )
        else:
            self.text(
                mx + side * gap,
                my,
                label,
                size=size,
                color=color,
                ha=ha or ("left" if side > 0 else "right"),
                va="center",
            )

    def ring(self, x, y, color=MARK, radius=7, lw=1.4):
        """A circle around a point too small to see at page width (one element)."""
        self.ax.add_patch(
            matplotlib.patches.Circle(
                (x, y), radius, facecolor="none", edgecolor=color, linewidth=lw, zorder=6
            )
        )

    def text_boxes(self) -> list[tuple[str, tuple[float, float, float, float]]]:
        """(text, (x0, y0, x1, y1)) of every label in pixels, to check that none leaves the page
        or covers another."""
        renderer = FigureCanvasAgg(self.fig).get_renderer()
        boxes = []
        for t in self.ax.texts:
            box = t.get_window_extent(renderer)
            boxes.append(
                (t.get_text(), (box.x0, self.height - box.y1, box.x1, self.height - box.y0))
            )
        return boxes

    def save(self, fmt: str) -> bytes:
        # Date (SVG) and Software (PNG) would embed the time and matplotlib's version.
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        buffer = io.BytesIO()
        self.fig.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata, facecolor="white")
        return buffer.getvalue()


def _render(draw: Callable[[Path], Canvas], repo: Path, fmt: str = "svg") -> bytes:
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        return draw(Path(repo)).save(fmt)


def _svg(draw: Callable[[Path], Canvas], repo: Path) -> str:
    return _render(draw, repo, "svg").decode("utf-8")


def round_up(value: int, multiple: int) -> int:
    return ceil(value / multiple) * multiple


# ---- 03: shared-memory tiles ---------------------------------------------------------------------


def draw_shared_tiles(repo: Path) -> Canvas:
    k = knobs(repo, 3)
    threads_x, threads_y, split = k["THREADS_X"], k["THREADS_Y"], k["TUNE_SPLIT"]
    bm, bn = threads_y, threads_x  # one output per thread
    # A few tiles of each matrix, every tile to scale.
    m, n, kk = 4 * bm, 3 * bn, 3 * split
    scale = min(450 / (kk + n), 420 / (kk + m))
    left, top = 30, 50
    ax_, ay = left, top + kk * scale  # A: M x K, left of C
    bx, by = left + kk * scale, top  # B: K x N, above C
    cx, cy = bx, ay  # C: M x N
    block_row, block_col, k_tile = 1, 1, 1
    tile_y = cy + block_row * bm * scale
    tile_x = cx + block_col * bn * scale
    a_tile_x = ax_ + k_tile * split * scale
    b_tile_y = by + k_tile * split * scale

    note_y = tile_y + bm * scale / 2  # the labels right of C start here
    cv = Canvas(height=int(max(top + (kk + m) * scale + 45, note_y + 165)))
    cv.text(
        20,
        20,
        "Step 03: the tiles a block stages in shared memory per k step",
        size=11,
        weight="bold",
    )
    # The matrices, the block's panels (read over the whole k loop), this k step's tiles.
    cv.rect(ax_, ay, kk * scale, m * scale, fill=tint(A_COLOR, 0.08), edge=A_COLOR)
    cv.rect(bx, by, n * scale, kk * scale, fill=tint(B_COLOR, 0.08), edge=B_COLOR)
    cv.rect(cx, cy, n * scale, m * scale, fill=tint(C_COLOR, 0.08), edge=C_COLOR)
    cv.grid(ax_, ay, kk * scale, m * scale, m // bm, kk // split, color=tint(A_COLOR, 0.3))
    cv.grid(bx, by, n * scale, kk * scale, kk // split, n // bn, color=tint(B_COLOR, 0.3))
    cv.grid(cx, cy, n * scale, m * scale, m // bm, n // bn, color=tint(C_COLOR, 0.3))
    cv.rect(ax_, tile_y, kk * scale, bm * scale, fill=tint(A_COLOR, 0.25), edge="none")
    cv.rect(tile_x, by, bn * scale, kk * scale, fill=tint(B_COLOR, 0.25), edge="none")
    cv.rect(
        a_tile_x,
        tile_y,
        split * scale,
        bm * scale,
        fill=tint(A_COLOR, 0.65),
        edge=A_COLOR,
        lw=1.4,
        z=3,
    )
    cv.rect(
        tile_x,
        b_tile_y,
        bn * scale,
        split * scale,
        fill=tint(B_COLOR, 0.65),
        edge=B_COLOR,
        lw=1.4,
        z=3,
    )
    cv.rect(
        tile_x, tile_y, bn * scale, bm * scale, fill=tint(C_COLOR, 0.65), edge=C_COLOR, lw=1.4, z=3
    )
    # One thread: its output, its row of the A tile and its column of the B tile.
    ty, tx = bm // 2, bn // 3
    cv.rect(a_tile_x, tile_y + ty * scale, split * scale, scale, fill=MARK, edge="none", z=4)
    cv.rect(tile_x + tx * scale, b_tile_y, scale, split * scale, fill=MARK, edge="none", z=4)
    cv.rect(tile_x + tx * scale, tile_y + ty * scale, scale, scale, fill=MARK, edge="none", z=4)
    # The next k step's tiles.
    cv.arrow(
        a_tile_x + split * scale * 0.5,
        tile_y + bm * scale + 6,
        a_tile_x + split * scale * 1.5,
        tile_y + bm * scale + 6,
        color=A_COLOR,
        rad=0.3,
    )
    cv.arrow(
        tile_x + bn * scale + 6,
        b_tile_y + split * scale * 0.5,
        tile_x + bn * scale + 6,
        b_tile_y + split * scale * 1.5,
        color=B_COLOR,
        rad=-0.3,
    )
    cv.text(ax_ + 2, ay + m * scale + 6, "A  (M x K)", color=A_COLOR, va="top", weight="bold")
    cv.text(bx + n * scale + 8, by + 4, "B  (K x N)", color=B_COLOR, va="top", weight="bold")
    cv.text(
        cx + n * scale / 2,
        cy + m * scale + 6,
        "C  (M x N)",
        color=C_COLOR,
        ha="center",
        va="top",
        weight="bold",
    )
    cv.span(
        a_tile_x,
        tile_y - 8,
        a_tile_x + split * scale,
        tile_y - 8,
        f"TUNE_SPLIT = {split}",
        color=A_COLOR,
        side=-1,
    )
    cv.ring(tile_x + (tx + 0.5) * scale, tile_y + (ty + 0.5) * scale, MARK)

    # A's label in the empty corner above it, the others right of B and C.
    cv.text(
        left,
        top + 10,
        f"sA[BM][TUNE_SPLIT] = {bm} x {split}:\nthe block's {bm} rows of A,\n"
        f"{split} k at a time (blue box)",
        color=A_COLOR,
        size=9.5,
        va="top",
    )
    cv.text(left, top + 75, "the arrows: the next k step's tiles", color=MUTED, size=9, va="top")
    lx = cx + n * scale + 20
    cv.text(
        lx,
        b_tile_y + split * scale / 2 + 10,
        f"sB[TUNE_SPLIT][BN] = {split} x {bn}:\n"
        f"the block's {bn} columns of B,\n{split} k at a time",
        color=B_COLOR,
        size=9.5,
        va="center",
    )
    cv.text(
        lx,
        note_y,
        f"block tile of C: BM x BN = {bm} x {bn},\none output per thread "
        f"({threads_x} x {threads_y} threads)",
        color=C_COLOR,
        size=9.5,
    )
    cv.text(
        lx,
        note_y + 45,
        f"red: one thread. Its row of sA times\nits column of sB: {split} FMAs per k step",
        color=MARK,
        size=9.5,
    )
    cv.text(
        lx,
        note_y + 112,
        f"Each element of sA is read by the {threads_x}\nthreads of a row, each of sB by the "
        f"{threads_y}\nof a column: one load from global\nmemory feeds them all.",
        size=9.5,
        color=MUTED,
    )
    return cv


# ---- 04: block order -----------------------------------------------------------------------------


def _block_order_panel(
    cv: Canvas,
    x: float,
    y: float,
    swap: bool,
    rows: int,
    cols: int,
    bm: int,
    bn: int,
    wave: int,
    scale: float,
    shipped: bool,
) -> None:
    """C's blocks numbered in launch order, the first `wave` of them shaded, and the panels of A
    and B those blocks read."""
    strip = 26  # A and B are drawn as strips: their K extent does not matter here
    cx, cy = x + strip + 8, y + strip + 8
    w, h = cols * bn * scale, rows * bm * scale
    order = {}
    for r in range(rows):
        for c in range(cols):
            order[r, c] = (
                c * rows + r if swap else r * cols + c
            )  # blockIdx.y * gridDim.x + blockIdx.x
    running = {rc for rc, i in order.items() if i < wave}
    a_rows = sorted({r for r, _ in running})
    b_cols = sorted({c for _, c in running})
    cv.rect(x, cy, strip, h, fill=tint(A_COLOR, 0.08), edge=A_COLOR)
    cv.rect(cx, y, w, strip, fill=tint(B_COLOR, 0.08), edge=B_COLOR)
    for r in a_rows:
        cv.rect(
            x, cy + r * bm * scale, strip, bm * scale, fill=tint(A_COLOR, 0.6), edge=A_COLOR, z=2
        )
    for c in b_cols:
        cv.rect(
            cx + c * bn * scale, y, bn * scale, strip, fill=tint(B_COLOR, 0.6), edge=B_COLOR, z=2
        )
    cv.text(x + strip / 2, cy + h + 4, "A", color=A_COLOR, weight="bold", ha="center", va="top")
    cv.text(cx + w + 6, y + strip / 2, "B", color=B_COLOR, weight="bold")
    for (r, c), i in order.items():
        fill = tint(C_COLOR, 0.55) if (r, c) in running else tint(C_COLOR, 0.06)
        cv.rect(
            cx + c * bn * scale,
            cy + r * bm * scale,
            bn * scale,
            bm * scale,
            fill=fill,
            edge=tint(C_COLOR, 0.8),
            lw=0.6,
        )
        cv.text(
            cx + (c + 0.5) * bn * scale,
            cy + (r + 0.5) * bm * scale,
            str(i),
            size=8,
            ha="center",
            color=INK if (r, c) in running else MUTED,
        )
    # The walk of blockIdx.x: down the first column of blocks, or along the first row.
    if swap:
        cv.arrow(cx + w + 8, cy + 4, cx + w + 8, cy + h - 4, color=MUTED, lw=1)
        cv.text(
            cx + w + 12,
            cy + h / 2,
            "blockIdx.x",
            color=MUTED,
            size=8.5,
            rotation=-90,
            ha="left",
            va="center",
        )
    else:
        cv.arrow(cx + 4, cy + h + 8, cx + w - 4, cy + h + 8, color=MUTED, lw=1)
        cv.text(cx + w / 2, cy + h + 12, "blockIdx.x", color=MUTED, size=8.5, ha="center", va="top")
    title = f"SWAP_XY = {'true' if swap else 'false'}" + ("  (this step)" if shipped else "")
    cv.text(x, y - 58, title, size=10.5, weight="bold")
    cv.text(
        x,
        y - 30,
        f"blockIdx.x runs {'down M' if swap else 'across N'}: blocks 0-{wave - 1} read\n"
        f"{len(a_rows)} of {rows} row panels of A, {len(b_cols)} of {cols} column panels of B",
        size=9,
        color=MUTED,
        va="center",
    )


def draw_block_order(repo: Path) -> Canvas:
    k = knobs(repo, 4)
    bm, bn, swap = k["THREADS_Y"], k["THREADS_X"], k["SWAP_XY"]  # one output per thread
    size = 4 * max(bm, bn)  # an example C of 4 block rows or columns at least
    rows, cols = size // bm, size // bn
    wave = max(2, rows * cols * 5 // 16)  # blocks on the GPU at once, in this example
    scale = min(300 / (cols * bn), 300 / (rows * bm))
    top = 105
    cv = Canvas(height=int(top + 34 + rows * bm * scale + 100))
    cv.text(
        20,
        20,
        "Step 04: which blocks run together, and what they share in L2",
        size=11,
        weight="bold",
    )
    for panel, order in enumerate((swap, not swap)):
        _block_order_panel(
            cv, 20 + panel * 400, top, order, rows, cols, bm, bn, wave, scale, shipped=order == swap
        )
    foot = int(top + 34 + rows * bm * scale + 30)
    cv.text(
        20,
        foot,
        f"An example C of {rows} x {cols} blocks of BM x BN = {bm} x {bn}, numbered in "
        f"launch order (blockIdx.x first). Say the GPU\nholds {wave} blocks at once: blocks "
        f"0-{wave - 1} run together (green). The dark panels of A and B are the ones they read;\n"
        f"a panel read by several of them at once is loaded once and then hit in L2.",
        size=9.5,
        color=INK,
        va="top",
    )
    return cv


# ---- 05: thread tile -----------------------------------------------------------------------------


def draw_thread_tile(repo: Path) -> Canvas:
    k = knobs(repo, 5)
    threads_x, threads_y = k["THREADS_X"], k["THREADS_Y"]
    tile_x, tile_y = k["THREAD_TILE_X"], k["THREAD_TILE_Y"]
    bm, bn = threads_y * tile_y, threads_x * tile_x
    scale = min(380 / bm, 260 / bn)
    x0, y0 = 150, 80
    w, h = bn * scale, bm * scale
    ty, tx = min(3, threads_y - 1), min(5, threads_x - 1)  # the thread drawn
    cell = min(34, 330 / tile_y, 250 / tile_x)
    zx, zy = x0 + w + 130, y0 + 30
    cv = Canvas(height=int(max(y0 + h, zy + tile_y * cell + 110) + 30))
    cv.text(
        20,
        20,
        f"Step 05: one thread computes a {tile_y} x {tile_x} tile of the block's outputs",
        size=11,
        weight="bold",
    )
    cv.rect(x0, y0, w, h, fill=tint(C_COLOR, 0.15), edge=C_COLOR, lw=1.2)
    cv.grid(x0, y0, w, h, threads_y, threads_x, color=tint(C_COLOR, 0.6), lw=0.6)
    sx, sy = x0 + tx * tile_x * scale, y0 + ty * tile_y * scale
    cv.rect(sx, sy, tile_x * scale, tile_y * scale, fill=MARK, edge=MARK, z=3)
    cv.span(
        x0,
        y0 - 10,
        x0 + w,
        y0 - 10,
        f"BN = THREADS_X x THREAD_TILE_X\n= {threads_x} x {tile_x} = {bn}",
        side=-1,
        color=INK,
    )
    cv.span(
        x0 - 10,
        y0,
        x0 - 10,
        y0 + h,
        f"BM =\nTHREADS_Y x\nTHREAD_TILE_Y\n= {threads_y} x {tile_y}\n= {bm}",
        side=-1,
        color=INK,
    )
    cv.text(
        x0 + w / 2,
        y0 + h + 8,
        f"the block tile: {threads_x} x {threads_y} threads,\none cell per thread",
        size=9.5,
        color=C_COLOR,
        ha="center",
        va="top",
    )
    # The thread's tile, enlarged.
    zw, zh = tile_x * cell, tile_y * cell
    cv.rect(zx, zy, zw, zh, fill=tint(MARK, 0.15), edge=MARK, lw=1.4)
    cv.grid(zx, zy, zw, zh, tile_y, tile_x, color=tint(MARK, 0.5))
    for i in range(tile_y):
        for j in range(tile_x):
            cv.text(
                zx + (j + 0.5) * cell,
                zy + (i + 0.5) * cell,
                f"{i},{j}",
                size=7.5,
                ha="center",
                color=MARK,
            )
    cv.line(sx + tile_x * scale, sy, zx, zy, color=MARK, lw=0.6, ls=":")
    cv.line(sx + tile_x * scale, sy + tile_y * scale, zx, zy + zh, color=MARK, lw=0.6, ls=":")
    cv.span(zx, zy - 10, zx + zw, zy - 10, f"THREAD_TILE_X = {tile_x}", side=-1, color=MARK)
    cv.span(
        zx + zw + 10, zy, zx + zw + 10, zy + zh, f"THREAD_TILE_Y = {tile_y}", side=1, color=MARK
    )
    cv.text(
        zx - 10,
        zy + zh + 14,
        f"thread (x {tx}, y {ty}): acc[{tile_y}][{tile_x}], rows\n"
        f"{ty * tile_y}-{ty * tile_y + tile_y - 1} and columns "
        f"{tx * tile_x}-{tx * tile_x + tile_x - 1} "
        f"of the block tile.\nPer k it reads {tile_y} values of A and {tile_x} of B\n"
        f"for {tile_y * tile_x} FMAs.",
        size=9.5,
        va="top",
    )
    return cv


# ---- 06: register fragments ----------------------------------------------------------------------


def draw_register_fragments(repo: Path) -> Canvas:
    k = knobs(repo, 6)
    threads_x, threads_y = k["THREADS_X"], k["THREADS_Y"]
    tile_x, tile_y, split = k["THREAD_TILE_X"], k["THREAD_TILE_Y"], k["TUNE_SPLIT"]
    bm, bn = threads_y * tile_y, threads_x * tile_x
    ty, tx, kk = min(3, threads_y - 1), min(5, threads_x - 1), min(10, split - 1)
    scale = min(440 / (split + bm), 300 / (split + bn))
    ax_, ay = 30, 80 + split * scale + 10  # sA: BM x TUNE_SPLIT
    bx, by = ax_ + split * scale + 10, 80  # sB: TUNE_SPLIT x BN
    cx, cy = bx, ay  # the block tile
    cv = Canvas(height=int(ay + bm * scale + 60))
    cv.text(
        20,
        20,
        "Step 06: per k, a thread's A and B values go to registers, then an outer product",
        size=11,
        weight="bold",
    )
    cv.rect(ax_, ay, split * scale, bm * scale, fill=tint(A_COLOR, 0.12), edge=A_COLOR)
    cv.rect(bx, by, bn * scale, split * scale, fill=tint(B_COLOR, 0.12), edge=B_COLOR)
    cv.rect(cx, cy, bn * scale, bm * scale, fill=tint(C_COLOR, 0.08), edge=C_COLOR)
    cv.text(
        ax_ + split * scale / 2,
        ay + bm * scale + 6,
        f"sA\n{bm} x {split}",
        color=A_COLOR,
        va="top",
        ha="center",
        weight="bold",
    )
    cv.text(bx + bn * scale + 6, by, f"sB\n{split} x {bn}", color=B_COLOR, va="top", weight="bold")
    cv.text(
        cx + bn * scale / 2,
        cy + bm * scale + 6,
        f"block tile\n{bm} x {bn}",
        color=C_COLOR,
        va="top",
        ha="center",
        weight="bold",
    )
    # Column kk of sA at the thread's rows, row kk of sB at its columns, its tile of C.
    cv.line(
        ax_ + (kk + 0.5) * scale,
        ay,
        ax_ + (kk + 0.5) * scale,
        ay + bm * scale,
        color=tint(A_COLOR, 0.5),
        lw=0.6,
        ls="--",
    )
    cv.line(
        bx,
        by + (kk + 0.5) * scale,
        bx + bn * scale,
        by + (kk + 0.5) * scale,
        color=tint(B_COLOR, 0.5),
        lw=0.6,
        ls="--",
    )
    a_y = ay + ty * tile_y * scale
    b_x = bx + tx * tile_x * scale
    thick = max(scale, 4)  # one element wide, but never thinner than 4 pixels
    cv.rect(
        ax_ + (kk + 0.5) * scale - thick / 2,
        a_y,
        thick,
        tile_y * scale,
        fill=A_COLOR,
        edge=A_COLOR,
        z=3,
    )
    cv.rect(
        b_x,
        by + (kk + 0.5) * scale - thick / 2,
        tile_x * scale,
        thick,
        fill=B_COLOR,
        edge=B_COLOR,
        z=3,
    )
    cv.rect(b_x, a_y, tile_x * scale, tile_y * scale, fill=MARK, edge=MARK, z=3)
    cv.text(
        ax_ + (kk + 0.5) * scale,
        ay - 4,
        f"k = {kk}",
        size=8.5,
        color=A_COLOR,
        ha="center",
        va="bottom",
    )
    cv.text(
        b_x + tile_x * scale / 2,
        a_y + tile_y * scale + 6,
        f"this thread's\n{tile_y} x {tile_x} outputs",
        size=8.5,
        color=MARK,
        ha="center",
        va="top",
    )

    # The registers, enlarged: a_frag down the left, b_frag across the top, acc between.
    cell = min(32, 300 / tile_y, 220 / tile_x)
    rx, ry = 420, ay + 10
    fx, fy = rx + cell + 14, ry - cell - 14
    cv.rect(rx, ry, cell, tile_y * cell, fill=tint(A_COLOR, 0.35), edge=A_COLOR, lw=1.2)
    cv.grid(rx, ry, cell, tile_y * cell, tile_y, 1, color=A_COLOR)
    cv.rect(fx, fy, tile_x * cell, cell, fill=tint(B_COLOR, 0.35), edge=B_COLOR, lw=1.2)
    cv.grid(fx, fy, tile_x * cell, cell, 1, tile_x, color=B_COLOR)
    cv.rect(fx, ry, tile_x * cell, tile_y * cell, fill=tint(MARK, 0.15), edge=MARK, lw=1.2)
    cv.grid(fx, ry, tile_x * cell, tile_y * cell, tile_y, tile_x, color=tint(MARK, 0.5))
    for i in range(tile_y):
        cv.text(rx + cell / 2, ry + (i + 0.5) * cell, f"a{i}", size=8, ha="center", color=INK)
    for j in range(tile_x):
        cv.text(fx + (j + 0.5) * cell, fy + cell / 2, f"b{j}", size=8, ha="center", color=INK)
    cv.text(
        fx + tile_x * cell / 2,
        ry + tile_y * cell / 2,
        "acc[i][j]\n+=\na_i b_j",
        size=9,
        ha="center",
        color=MARK,
    )
    cv.text(
        rx + cell / 2,
        ry + tile_y * cell + 6,
        f"a_frag[{tile_y}]",
        size=9,
        color=A_COLOR,
        ha="center",
        va="top",
        weight="bold",
    )
    cv.text(
        fx + tile_x * cell + 8,
        fy + cell / 2,
        f"b_frag[{tile_x}]",
        size=9,
        color=B_COLOR,
        weight="bold",
    )
    cv.arrow(
        ax_ + (kk + 1) * scale + 2,
        a_y + tile_y * scale / 2,
        rx - 4,
        ry + tile_y * cell / 2,
        color=A_COLOR,
        rad=0.15,
    )
    cv.arrow(
        b_x + tile_x * scale + 2,
        by + (kk + 0.5) * scale,
        fx - 4,
        fy + cell / 2,
        color=B_COLOR,
        rad=-0.15,
    )
    cv.text(
        fx + tile_x * cell + 14,
        ry + tile_y * cell / 2 - 10,
        f"per k:\n{tile_y} + {tile_x} = {tile_y + tile_x} loads\nfrom shared memory,\n"
        f"{tile_y} x {tile_x} = {tile_y * tile_x} FMAs\nfrom registers",
        size=9.5,
        va="center",
    )
    return cv


# ---- 07: A transposed in shared memory -----------------------------------------------------------


def draw_transposed_a(repo: Path) -> Canvas:
    k = knobs(repo, 7)
    threads_y, tile_y = k["THREADS_Y"], k["THREAD_TILE_Y"]
    split, pad = k["TUNE_SPLIT"], k["A_PAD"]
    bm = threads_y * tile_y
    ty, kk = min(2, threads_y - 1), min(5, split - 1)
    scale = min(300 / bm, 390 / (bm + pad))
    thick = max(scale, 4)
    cv = Canvas(height=int(95 + bm * scale + 60))
    cv.text(
        20,
        20,
        "Step 07: A stored transposed, so a thread's A values for one k are contiguous",
        size=11,
        weight="bold",
    )
    # Before: sA[m][k], as in step 06.
    x0, y0 = 75, 95
    x1, y1 = 330, 95
    cv.text(x0 - 35, y0 - 42, "step 06: sA[BM][TUNE_SPLIT]", size=10, weight="bold", color=A_COLOR)
    cv.rect(x0, y0, split * scale, bm * scale, fill=tint(A_COLOR, 0.1), edge=A_COLOR)
    cv.span(x0, y0 - 8, x0 + split * scale, y0 - 8, f"k: {split}", side=-1, color=A_COLOR)
    cv.span(x0 - 8, y0, x0 - 8, y0 + bm * scale, f"m: {bm}", side=-1, color=A_COLOR)
    fy = y0 + ty * tile_y * scale
    cv.rect(
        x0 + (kk + 0.5) * scale - thick / 2, fy, thick, tile_y * scale, fill=MARK, edge="none", z=3
    )
    note_x = x0 + split * scale + 16
    cv.text(
        note_x,
        max(fy + tile_y * scale / 2, y1 + split * scale + 40),
        f"a_frag at k = {kk}:\n{tile_y} floats in a column,\n{split} floats ({split * 4} B) apart",
        size=9.5,
        color=MARK,
    )
    # After: sA[k][m + A_PAD].
    w1 = (bm + pad) * scale
    cv.text(
        x1, y1 - 42, "step 07: sA[TUNE_SPLIT][BM + A_PAD]", size=10, weight="bold", color=A_COLOR
    )
    cv.rect(x1, y1, bm * scale, split * scale, fill=tint(A_COLOR, 0.1), edge=A_COLOR)
    cv.rect(
        x1 + bm * scale, y1, pad * scale, split * scale, fill="#dddddd", edge=A_COLOR, hatch="////"
    )
    cv.span(x1, y1 - 8, x1 + bm * scale, y1 - 8, f"m: {bm}", side=-1, color=A_COLOR)
    cv.span(x1 + w1 + 8, y1, x1 + w1 + 8, y1 + split * scale, f"k: {split}", side=1, color=A_COLOR)
    cv.text(
        x1 + w1 - pad * scale / 2,
        y1 + split * scale + 4,
        f"A_PAD = {pad}",
        size=8.5,
        color=MUTED,
        ha="center",
        va="top",
    )
    cv.rect(
        x1 + ty * tile_y * scale,
        y1 + (kk + 0.5) * scale - thick / 2,
        tile_y * scale,
        thick,
        fill=MARK,
        edge="none",
        z=3,
    )
    # The row, enlarged: the thread's floats side by side, read 4 at a time.
    cell = min(22, 380 / tile_y)
    zx, zy = x1, y1 + split * scale + 60
    cv.line(x1 + ty * tile_y * scale, y1 + (kk + 0.5) * scale, zx, zy, color=MARK, lw=0.6, ls=":")
    cv.line(
        x1 + (ty + 1) * tile_y * scale,
        y1 + (kk + 0.5) * scale,
        zx + tile_y * cell,
        zy,
        color=MARK,
        lw=0.6,
        ls=":",
    )
    for v in range(tile_y // 4):
        cv.rect(
            zx + 4 * v * cell, zy, 4 * cell, cell, fill=tint(MARK, 0.25), edge=MARK, lw=1.4, z=3
        )
        cv.grid(zx + 4 * v * cell, zy, 4 * cell, cell, 1, 4, color=tint(MARK, 0.6), z=4)
        cv.text(
            zx + (4 * v + 2) * cell,
            zy + cell + 4,
            "LDS.128",
            size=8,
            color=MARK,
            ha="center",
            va="top",
        )
    cv.text(
        zx,
        zy + cell + 30,
        f"a_frag at k = {kk}: {tile_y} consecutive floats of row k,\n16-byte aligned: "
        f"{tile_y // 4} vector loads, like b_frag.\nThe padding moves each row {pad} banks on, "
        f"so the\ncopy's stores down a column spread over the banks.",
        size=9.5,
        va="top",
    )
    cv.arrow(
        x0 + split * scale + 12,
        y1 + split * scale / 2,
        x1 - 12,
        y1 + split * scale / 2,
        color=MUTED,
        lw=1.2,
    )
    cv.text(
        (x0 + split * scale + x1) / 2,
        y1 + split * scale / 2 - 6,
        "transposed\non the copy",
        size=9,
        color=MUTED,
        ha="center",
        va="bottom",
    )
    return cv


# ---- 08: warp shape ------------------------------------------------------------------------------


def _interleaved(thread: int, i: int, threads: int) -> int:
    """tile_row / tile_col of steps 08-20: 4-wide vectors, the next one a whole thread grid on."""
    return (i // 4) * (threads * 4) + thread * 4 + i % 4


def draw_warp_shape(repo: Path) -> Canvas:
    k = knobs(repo, 8)
    threads_x, threads_y = k["THREADS_X"], k["THREADS_Y"]
    tile_x, tile_y, shape_x = k["THREAD_TILE_X"], k["THREAD_TILE_Y"], k["WARP_SHAPE_X"]
    shape_y = 32 // shape_x
    warps_x = threads_x // shape_x
    bm, bn = threads_y * tile_y, threads_x * tile_x
    warp = min(1, threads_x * threads_y // 32 - 1)  # the warp drawn
    wx, wy = warp % warps_x * shape_x, warp // warps_x * shape_y  # its first thread_x, thread_y
    lanes = [(wx + lane % shape_x, wy + lane // shape_x) for lane in range(32)]
    rows = sorted({_interleaved(y, i, threads_y) for _, y in lanes for i in range(tile_y)})
    cols = sorted({_interleaved(x, j, threads_x) for x, _ in lanes for j in range(tile_x)})

    cv = Canvas(height=580)
    cv.text(
        20,
        20,
        f"Step 08: a warp's 32 lanes as {shape_x} x {shape_y} threads, and what it reads per k",
        size=11,
        weight="bold",
    )
    # Left: the thread grid, cut into warps; the drawn warp's lanes numbered.
    cell = min(20, 320 / threads_x, 330 / threads_y)
    gx, gy = 30, 90
    cv.text(
        gx,
        gy - 30,
        f"the block's {threads_x} x {threads_y} threads, in warps of {shape_x} x {shape_y}",
        size=9.5,
        weight="bold",
    )
    for w in range(threads_x * threads_y // 32):
        x = gx + w % warps_x * shape_x * cell
        y = gy + w // warps_x * shape_y * cell
        fill = tint(MARK, 0.3) if w == warp else tint(C_COLOR, 0.12 if w % 2 else 0.3)
        cv.rect(x, y, shape_x * cell, shape_y * cell, fill=fill, edge=INK, lw=1.0, z=2)
        cv.grid(
            x, y, shape_x * cell, shape_y * cell, shape_y, shape_x, color="#ffffff", lw=0.6, z=2
        )
        if w % warps_x == warps_x - 1:  # right of the grid: the warps of this row
            first = w - warps_x + 1
            cv.text(
                gx + threads_x * cell + 4,
                y + shape_y * cell / 2,
                f"warp {w}" if warps_x == 1 else f"warps {first}-{w}",
                size=7.5,
                color=MUTED,
            )
    for lane, (x, y) in enumerate(lanes):
        cv.text(
            gx + (x + 0.5) * cell,
            gy + (y + 0.5) * cell,
            str(lane),
            size=6.5,
            ha="center",
            color=INK,
        )
    cv.text(
        gx,
        gy + threads_y * cell + 10,
        f"thread_x = (warp % {warps_x}) x {shape_x} + lane % {shape_x}\n"
        f"thread_y = (warp / {warps_x}) x {shape_y} + lane / {shape_x}",
        size=8.5,
        color=MUTED,
        va="top",
    )
    # Right: the block tile with the warp's outputs, and the column of sA / row of sB it reads.
    scale = min(300 / bn, 300 / bm)
    strip = 14
    bx, by = 440, 110
    cx, cy = bx + strip + 6, by + strip + 6
    cv.rect(bx, cy, strip, bm * scale, fill=tint(A_COLOR, 0.12), edge=A_COLOR)
    cv.rect(cx, by, bn * scale, strip, fill=tint(B_COLOR, 0.12), edge=B_COLOR)
    cv.rect(cx, cy, bn * scale, bm * scale, fill=tint(C_COLOR, 0.08), edge=C_COLOR)
    for r in rows:
        cv.rect(bx, cy + r * scale, strip, scale, fill=A_COLOR, edge="none", z=3)
    for c in cols:
        cv.rect(cx + c * scale, by, scale, strip, fill=B_COLOR, edge="none", z=3)
    for r in rows:  # the warp's outputs: runs of its rows and columns
        runs = _runs(cols)
        for c0, c1 in runs:
            cv.rect(
                cx + c0 * scale,
                cy + r * scale,
                (c1 - c0) * scale,
                scale,
                fill=tint(MARK, 0.7),
                edge="none",
                z=2,
            )
    cv.text(
        bx - 4, cy + bm * scale / 2, "sA at k", size=8.5, color=A_COLOR, rotation=90, ha="right"
    )
    cv.text(
        cx + bn * scale / 2, by - 4, "sB at k", size=8.5, color=B_COLOR, ha="center", va="bottom"
    )
    cv.text(
        cx + bn * scale / 2,
        cy + bm * scale + 6,
        f"block tile {bm} x {bn}: warp {warp}'s outputs (red)",
        size=9,
        ha="center",
        va="top",
        color=INK,
    )
    floats = len(rows) + len(cols)
    cv.text(
        bx,
        cy + bm * scale + 30,
        f"Per k the warp reads {len(rows)} floats of A ({shape_y} lane\nrows x {tile_y}) and "
        f"{len(cols)} of B ({shape_x} lane columns x {tile_x}):\n{floats * 4} bytes. Lanes in one "
        f"row share a_frag,\nlanes in one column share b_frag.",
        size=9.5,
        va="top",
    )
    # The same count for every warp shape that tiles the thread grid.
    table_y = gy + threads_y * cell + 55
    cv.text(
        gx, table_y, "bytes a warp reads per k, by WARP_SHAPE_X:", size=9.5, weight="bold", va="top"
    )
    shapes = [x for x in (1, 2, 4, 8, 16, 32) if threads_x % x == 0 and threads_y % (32 // x) == 0]
    for n, x in enumerate(shapes):
        y_lanes = 32 // x
        read = 4 * (y_lanes * tile_y + x * tile_x)
        label = (
            f"{x:>2} ({x:>2} x {y_lanes:<2} lanes): "
            f"({y_lanes} x {tile_y} + {x} x {tile_x}) x 4 B = {read} B"
        )
        cv.text(
            gx + 10,
            table_y + 22 + 17 * n,
            label + ("  this step" if x == shape_x else ""),
            size=8.5,
            va="top",
            color=MARK if x == shape_x else INK,
            mono=True,
        )
    return cv


def _runs(values: list[int]) -> list[tuple[int, int]]:
    """Sorted integers as [start, end) runs of consecutive values."""
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and runs[-1][1] == v:
            runs[-1] = (runs[-1][0], v + 1)
        else:
            runs.append((v, v + 1))
    return runs


# ---- 14: the large thread tile -------------------------------------------------------------------


def draw_large_thread_tile(repo: Path) -> Canvas:
    k = knobs(repo, 14)
    threads_x, threads_y = k["THREADS_X"], k["THREADS_Y"]
    tile_x, tile_y, shape_x = k["THREAD_TILE_X"], k["THREAD_TILE_Y"], k["WARP_SHAPE_X"]
    shape_y = 32 // shape_x
    bm, bn = threads_y * tile_y, threads_x * tile_x
    scale = min(680 / bn, 360 / bm)
    ty, tx = min(1, threads_y - 1), min(2, threads_x - 1)  # the thread drawn, in warp 0
    warp_rows = sorted(
        {_interleaved(y, i, threads_y) for y in range(shape_y) for i in range(tile_y)}
    )
    warp_cols = sorted(
        {_interleaved(x, j, threads_x) for x in range(shape_x) for j in range(tile_x)}
    )
    rows = [_interleaved(ty, i, threads_y) for i in range(tile_y)]
    cols = [_interleaved(tx, j, threads_x) for j in range(tile_x)]
    strip = 14
    x0, y0 = 60, 75
    cx, cy = x0, y0 + strip + 8
    w, h = bn * scale, bm * scale
    cv = Canvas(height=int(cy + h + 95))
    cv.text(
        20,
        20,
        f"Step 14: one thread's {tile_y} x {tile_x} outputs in the {bm} x {bn} block tile",
        size=11,
        weight="bold",
    )
    cv.rect(cx, cy, w, h, fill=tint(C_COLOR, 0.08), edge=C_COLOR, lw=1.2)
    # A whole thread grid of 4-wide vectors: THREADS x 4 elements.
    for c in range(threads_x * 4, bn, threads_x * 4):
        cv.line(
            cx + c * scale, cy, cx + c * scale, cy + h, color=tint(C_COLOR, 0.7), lw=0.8, ls="--"
        )
    for r in range(threads_y * 4, bm, threads_y * 4):
        cv.line(
            cx, cy + r * scale, cx + w, cy + r * scale, color=tint(C_COLOR, 0.7), lw=0.8, ls="--"
        )
    for r0, r1 in _runs(warp_rows):  # warp 0's outputs
        for c0, c1 in _runs(warp_cols):
            cv.rect(
                cx + c0 * scale,
                cy + r0 * scale,
                (c1 - c0) * scale,
                (r1 - r0) * scale,
                fill=tint(MARK, 0.2),
                edge="none",
                z=2,
            )
    for r0, r1 in _runs(rows):  # the thread's outputs
        for c0, c1 in _runs(cols):
            cv.rect(
                cx + c0 * scale,
                cy + r0 * scale,
                (c1 - c0) * scale,
                (r1 - r0) * scale,
                fill=MARK,
                edge="none",
                z=3,
            )
    # The row of sB at one k: warp 0's first lane row reads one contiguous run per vector.
    cv.rect(cx, y0, w, strip, fill=tint(B_COLOR, 0.12), edge=B_COLOR)
    for q in range(tile_x // 4):
        c0 = q * threads_x * 4
        run = shape_x * 4
        cv.rect(cx + c0 * scale, y0, run * scale, strip, fill=tint(B_COLOR, 0.7), edge=B_COLOR, z=2)
        cv.rect(cx + (c0 + tx * 4) * scale, y0, 4 * scale, strip, fill=MARK, edge="none", z=3)
        cv.span(
            cx + c0 * scale,
            y0 - 8,
            cx + (c0 + run) * scale,
            y0 - 8,
            f"{shape_x} float4 = {run * 4} B",
            side=-1,
            color=B_COLOR,
            size=8.5,
        )
    cv.text(cx + w + 6, y0 + strip / 2, "sB\nat k", size=8.5, color=B_COLOR)
    cv.span(cx - 10, cy, cx - 10, cy + h, f"BM\n{bm}", side=-1, color=INK)
    cv.text(
        cx,
        cy + h + 8,
        f"Red: thread (x {tx}, y {ty}), {tile_y} x {tile_x} outputs as "
        f"{tile_y // 4} x {tile_x // 4} blocks of 4 x 4: each 4-wide vector sits a whole "
        f"thread grid\n"
        f"({threads_x} x 4 = {threads_x * 4} columns, {threads_y} x 4 = {threads_y * 4} rows; "
        f"dashed) after the one before. Pink: warp 0, lanes in {shape_x} x {shape_y}.\n"
        f"For each vector the {shape_x} lanes of a warp row read {shape_x} consecutive float4 "
        f"of sB: one {shape_x * 16}-byte run,\nno bank conflicts; the warp's other lane row "
        f"reads the same run (a broadcast).",
        size=9.5,
        va="top",
    )
    return cv


# ---- 20: a cluster of two blocks adds its pieces in shared memory --------------------------------


def draw_cluster_pair(repo: Path) -> Canvas:
    k = knobs(repo, 20)
    threads = k["THREADS_X"] * k["THREADS_Y"]
    tile_x, tile_y = k["THREAD_TILE_X"], k["THREAD_TILE_Y"]
    bm, bn = k["THREADS_Y"] * tile_y, k["THREADS_X"] * tile_x
    pair_rows = k["PAIR_ROWS"]
    band = bm // 2  # tile_row: a thread's rows i < 4 in the top half, i >= 4 in the bottom half
    box_bytes = pair_rows * tile_x * threads * 4

    def kib(size: int) -> str:
        return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"

    cv = Canvas(height=660)
    cv.text(
        20,
        20,
        "Step 20: pieces 2c and 2c+1 of a tile, added in a cluster of two blocks",
        size=11,
        weight="bold",
    )
    tw, th = 250, 250 * bm / bn  # a tile, drawn
    xs = (60, 440)
    ty0 = 90
    keep_fill, send_fill = tint(C_COLOR, 0.55), tint(B_COLOR, 0.45)
    for rank, x in enumerate(xs):
        cv.text(
            x,
            ty0 - 32,
            f"block {rank} of the cluster: piece 2c{'+1' if rank else ''}",
            size=10,
            weight="bold",
        )
        cv.text(
            x,
            ty0 - 6,
            f"its {bm} x {bn} sums of the tile, after its k loop",
            size=8.5,
            color=MUTED,
            va="bottom",
        )
        for half in range(2):
            keep = half == rank
            cv.rect(
                x,
                ty0 + half * th / 2,
                tw,
                th / 2,
                fill=keep_fill if keep else send_fill,
                edge=INK,
                lw=1.0,
            )
            what = "keeps" if keep else "sends"
            cv.text(
                x + tw / 2,
                ty0 + (half + 0.5) * th / 2,
                f"{what} rows {half * band}-{half * band + band - 1}\n"
                f"(thread rows i = {4 * half}-{4 * half + 3})",
                size=9,
                ha="center",
            )
    # The boxes in shared memory, one row of the partner's band per strip, each with its mbarrier.
    by0 = ty0 + th + 95
    strip = 26
    for rank, x in enumerate(xs):
        cv.text(
            x,
            by0 - 10,
            f"block {rank}'s shared memory: the box ({kib(box_bytes)})",
            size=9.5,
            va="bottom",
        )
        for i in range(pair_rows):
            y = by0 + i * strip
            cv.rect(x, y, tw, strip, fill=tint(B_COLOR, 0.3), edge=B_COLOR)
            cv.text(
                x + 8,
                y + strip / 2,
                f"row i = {i} of the partner's band: {kib(box_bytes // pair_rows)}",
                size=8.5,
            )
            cv.text(x + tw + 6, y + strip / 2, f"mbarrier {i}", size=8.5, color=MARK)
    # The crossing: each block's sent band into the other's box.
    how = "st.async, counted in\nbytes on the mbarriers"
    cv.arrow(
        xs[0] + tw * 0.8, ty0 + th + 2, xs[1] + tw * 0.3, by0 - 28, color=B_COLOR, lw=1.8, rad=0.15
    )
    cv.arrow(xs[1] - 2, ty0 + th / 4, xs[0] + tw * 0.7, by0 - 28, color=B_COLOR, lw=1.8, rad=0.15)
    cv.text(
        (xs[0] + tw + xs[1]) / 2,
        ty0 + th + 45,
        how,
        size=9,
        ha="center",
        color=B_COLOR,
        backdrop=True,
    )
    # The sums, stored to slice 2c.
    sy = by0 + pair_rows * strip + 60
    sx = (xs[0] + xs[1] + tw) / 2 - tw / 2
    cv.text(sx + tw / 2, sy - 8, "slice 2c of the partial sums", size=9.5, va="bottom", ha="center")
    cv.text(
        sx + tw / 2,
        sy + th / 2 + 4,
        "(slice 2c+1 is not written in these rows)",
        size=8.5,
        color=MUTED,
        va="top",
        ha="center",
    )
    for half in range(2):
        cv.rect(sx, sy + half * th / 4, tw, th / 4, fill=tint(C_COLOR, 0.3), edge=INK)
        cv.text(
            sx + tw / 2,
            sy + (half + 0.5) * th / 4,
            f"block {half}: kept + box",
            size=9,
            ha="center",
        )
    for rank, x in enumerate(xs):
        cv.arrow(
            x + tw / 2,
            by0 + pair_rows * strip + 6,
            sx + (tw * 0.1 if rank == 0 else tw * 0.9),
            sy + (rank + 0.5) * th / 4,
            color=C_COLOR,
            lw=1.5,
            rad=0.25 if rank == 0 else -0.25,
        )
    unpaired = (
        f"\nRows with row % 4 >= PAIR_ROWS = {pair_rows} are not paired: each block stores "
        f"them to its own slice."
        if pair_rows < 4
        else ""
    )
    cv.text(
        20,
        sy + th / 2 + 30,
        f"Each block keeps the band of {band} rows that holds its threads' rows i with i / 4 = its "
        f"rank (tile_row), and pushes\nthe other band into its partner's box. As each row i lands "
        f"(its mbarrier completes), the block adds it to the\nrow it kept and stores the sum to "
        f"slice 2c: the reduction reads half the slices.{unpaired}",
        size=9.5,
        va="top",
    )
    return cv


# ---- 22: the 3xTF32 split ------------------------------------------------------------------------


def _tf32_rounding(repo: Path) -> tuple[int, int]:
    """(half a place, the mask) of step 22's round_to_tf32: `(bits + 0x1000u) & 0xffffe000u`."""
    match = re.search(
        r"round_to_tf32\(float x\)\s*\{[^}]*?\+\s*0x([0-9a-fA-F]+)u\)\s*&\s*0x([0-9a-fA-F]+)u",
        source_text(repo, 22),
    )
    if not match:
        raise ValueError(
            "pictures: step 22's round_to_tf32 no longer reads `(bits + 0x...u) & 0x...u`"
        )
    return int(match.group(1), 16), int(match.group(2), 16)


def _float_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _bits_float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def pow2(exponent: int) -> str:
    """2 to the power, written with superscript digits (2⁻¹¹)."""
    return "2" + str(exponent).translate(_SUPERSCRIPT)


def draw_tf32_split(repo: Path) -> Canvas:
    passes = knobs(repo, 22)["PASSES"]
    half, mask = _tf32_rounding(repo)
    dropped = (~mask & 0xFFFFFFFF).bit_length()  # low mantissa bits TF32 does not keep
    kept = 23 - dropped
    x = _bits_float(_float_bits(3.14159265))  # pi in FP32
    big = _bits_float((_float_bits(x) + half) & mask)
    small = _bits_float(_float_bits(x - big))  # exact in FP32

    cv = Canvas(height=500)
    cv.text(
        20,
        20,
        "Step 22: x = big + small, and three TF32 products for one FP32 product",
        size=11,
        weight="bold",
    )
    cell, bx = 17, 150
    fields = [
        (0, 1, "#bbbbbb", "sign"),
        (1, 9, A_COLOR, "exponent: 8"),
        (9, 32, C_COLOR, "mantissa: 23"),
    ]

    def word(y: float, value: float, label: str, note: str, read: int) -> None:
        """The 32 bits of value; bits past `read` (counted from the left) in grey."""
        bits = _float_bits(value)
        cv.text(bx - 12, y + cell / 2, label, size=10, ha="right", weight="bold")
        for b in range(32):
            on = (bits >> (31 - b)) & 1
            color = next(c for lo, hi, c, _ in fields if lo <= b < hi)
            fill = tint(color, 0.45) if b < read else "#f2f2f2"
            cv.rect(bx + b * cell, y, cell, cell, fill=fill, edge="white", lw=1)
            cv.text(
                bx + (b + 0.5) * cell,
                y + cell / 2,
                str(on),
                size=8.5,
                ha="center",
                color=INK if b < read else "#aaaaaa",
                mono=True,
            )
        cv.text(bx + 32 * cell + 8, y + cell / 2, note, size=8.5, color=MUTED)

    y0 = 75
    for lo, hi, color, name in fields[1:]:
        cv.span(
            bx + lo * cell, y0 - 8, bx + hi * cell, y0 - 8, name, side=-1, color=color, size=8.5
        )
    cv.text(bx + 0.5 * cell, y0 - 10, "±", size=9, ha="center", va="bottom", color=MUTED)
    word(y0, x, "x", f"{x:.7g}", 32)
    cv.span(
        bx + 9 * cell,
        y0 + cell + 8,
        bx + (9 + kept) * cell,
        y0 + cell + 8,
        f"TF32 keeps {kept}",
        side=1,
        color=C_COLOR,
        size=8.5,
    )
    cv.span(
        bx + (9 + kept) * cell,
        y0 + cell + 8,
        bx + 32 * cell,
        y0 + cell + 8,
        f"the low {dropped}: dropped by TF32",
        side=1,
        color=MUTED,
        size=8.5,
    )
    y1 = y0 + 80
    word(y1, big, "big", f"{big:.7g}", 9 + kept)
    cv.text(
        bx,
        y1 + cell + 6,
        f"big = x rounded to TF32: add half its last place (0x{half:x}), clear the "
        f"low {dropped} bits",
        size=9,
        va="top",
    )
    y2 = y1 + 60
    word(y2, small, "small", f"{small:.7g}", 9 + kept)
    cv.text(
        bx,
        y2 + cell + 6,
        f"small = x - big, exact in FP32 and at most {pow2(-(kept + 1))} of x; the "
        f"tensor core reads its top {9 + kept} bits too",
        size=9,
        va="top",
    )
    cv.text(
        bx,
        y2 + cell + 24,
        "(grey: the bits the tensor core does not read)",
        size=8.5,
        color=MUTED,
        va="top",
    )

    # The four products of a b = (a_big + a_small)(b_big + b_small).
    gx, gy, cw, ch = 150, y2 + 110, 210, 46
    cv.text(20, gy - 30, "a b =", size=11, weight="bold")
    heads = ["b_big", "b_small"]
    for j, head in enumerate(heads):
        cv.text(
            gx + (j + 0.5) * cw,
            gy - 10,
            head,
            size=10,
            ha="center",
            color=B_COLOR,
            weight="bold",
            va="bottom",
        )
    order = {(1, 0): 1, (0, 1): 2, (0, 0): 3} if passes == 3 else {(0, 0): 1}
    sizes = {
        (0, 0): "about |a b|",
        (0, 1): f"< {pow2(-(kept + 1))} |a b|",
        (1, 0): f"< {pow2(-(kept + 1))} |a b|",
        (1, 1): f"< {pow2(-(2 * (kept + 1)))} |a b|",
    }
    for i, a_part in enumerate(("a_big", "a_small")):
        cv.text(
            gx - 10, gy + (i + 0.5) * ch, a_part, size=10, ha="right", color=A_COLOR, weight="bold"
        )
        for j, b_part in enumerate(("b_big", "b_small")):
            x0, y = gx + j * cw, gy + i * ch
            issued = (i, j) in order
            cv.rect(x0, y, cw, ch, fill=tint(MARK, 0.18) if issued else "#f2f2f2", edge=INK, lw=0.8)
            what = (
                f"mma {order[i, j]}: {a_part} {b_part}" if issued else f"dropped: {a_part} {b_part}"
            )
            cv.text(
                x0 + cw / 2,
                y + ch / 2 - 8,
                what,
                size=9.5,
                ha="center",
                color=INK if issued else MUTED,
                weight="bold" if issued else "normal",
            )
            cv.text(x0 + cw / 2, y + ch / 2 + 9, sizes[i, j], size=8.5, ha="center", color=MUTED)
    note = (
        f"PASSES = {passes}: three mma per product, the small ones first (numbered in issue "
        f"order);\nthe fourth term lies below FP32's precision."
        if passes == 3
        else f"PASSES = {passes}: plain TF32, one mma per product; its error is up to about "
        f"{pow2(-(kept + 1))} |a b|."
    )
    cv.text(gx, gy + 2 * ch + 12, note, size=9.5, va="top")
    return cv


# ---- 23: one wgmma of steps 23-25 ----------------------------------------------------------------


def draw_wgmma_layout(repo: Path) -> Canvas:
    k = knobs(repo, 25)
    bm, bn, split = k["BM"], k["BN"], k["TUNE_SPLIT"]
    wm, wk = constant(repo, 25, "WGMMA_M"), constant(repo, 25, "WGMMA_K")
    consumers = bn // wm
    chunk_floats = 4  # 16-byte chunks of the swizzle
    row_chunks = split // chunk_floats  # chunks per 128-byte row of the A tile
    cv = Canvas(height=620)
    cv.text(
        20,
        20,
        f"Steps 23-25: one wgmma m{wm}n{bm}k{wk} computes part of C^T = B^T A^T",
        size=11,
        weight="bold",
    )
    # Left: the block's tile of C, its columns shared out to the consumer warpgroups.
    s0 = min(180 / bn, 180 / bm)
    x0, y0 = 60, 110
    shades = [tint(MARK, 0.35), tint(C_COLOR, 0.35), tint(A_COLOR, 0.3), tint(B_COLOR, 0.35)]
    cv.text(20, y0 - 50, f"the block's C tile, {bm} x {bn}", size=10, weight="bold")
    for c in range(consumers):
        cv.rect(x0 + c * wm * s0, y0, wm * s0, bm * s0, fill=shades[c % len(shades)], edge=INK)
        label = f"warp-\ngroup\n{c + 1} of {consumers}" if wm * s0 >= 75 else f"WG\n{c + 1}"
        cv.text(x0 + (c + 0.5) * wm * s0, y0 + bm * s0 / 2, label, size=8.5, ha="center")
    cv.span(x0, y0 - 8, x0 + wm * s0, y0 - 8, f"{wm} columns", side=-1, color=INK, size=8.5)
    cv.span(x0 - 8, y0, x0 - 8, y0 + bm * s0, f"{bm}\nrows", side=-1, color=INK, size=8.5)
    cv.text(
        20,
        y0 + bm * s0 + 10,
        f"{consumers} warpgroups multiply,\neach {wm} columns (step 25\nadds a producer warpgroup).",
        size=9,
        va="top",
    )
    # Right: one wgmma of consumer 1: D (wm x bm) += A_op (wm x wk) x B_op (wk x bm).
    s1 = min(290 / bm, 2.6)
    op = 22  # the k extent of the operands, drawn wider than to scale
    dx, dy = 470, 165
    ax_, by = dx - op - 10, dy - op - 10
    cv.rect(dx, dy, bm * s1, wm * s1, fill=shades[0], edge=INK, lw=1.2)
    cv.rect(ax_, dy, op, wm * s1, fill=tint(B_COLOR, 0.45), edge=B_COLOR, lw=1.2)
    cv.rect(dx, by, bm * s1, op, fill=tint(A_COLOR, 0.45), edge=A_COLOR, lw=1.2)
    cv.grid(ax_, dy, op, wm * s1, 1, wk, color="white")
    cv.grid(dx, by, bm * s1, op, wk, 1, color="white")
    cv.text(
        dx + bm * s1 / 2,
        dy + wm * s1 / 2,
        f"D: {wm} x {bm}, registers of\nwarpgroup 1 of {consumers}:\nC^T, its {wm} columns x\n"
        f"{bm} rows of C, in FP32",
        size=9,
        ha="center",
    )
    cv.text(
        ax_ + op / 2,
        dy + wm * s1 + 6,
        f"{wm} x {wk}",
        size=8.5,
        ha="center",
        va="top",
        color=B_COLOR,
    )
    cv.text(dx + bm * s1 + 6, by + op / 2, f"{wk} x\n{bm}", size=8.5, color=A_COLOR)
    cv.text(
        dx,
        by - 6,
        f"wgmma's B operand: A^T, {wk} k of the\n{bm} rows of the A tile, from shared\n"
        f"memory (K-major, 128-byte swizzle)",
        size=9,
        color=A_COLOR,
        va="bottom",
    )
    cv.text(
        ax_ - 8,
        dy + wm * s1 / 2,
        f"wgmma's A operand:\nB^T, {wm} columns of B\nx {wk} k, "
        f"from registers\n(loaded from the B tile,\nsplit there)",
        size=9,
        color=B_COLOR,
        ha="right",
    )
    # Bottom: the A tile's 128-byte rows and their swizzle; what k step 0 reads.
    cell_w, cell_h = 44, 20
    per_step = wk // chunk_floats
    sx, sy = 350, 400
    cv.text(
        20,
        sy - 6,
        f"The A tile in shared memory: {bm} rows of\n{split} floats = {split * 4} bytes = "
        f"{row_chunks} chunks of 16 B.\nChunk c of row r sits at c ^ (r % 8).\n"
        f"k step s ({wk} k) reads {per_step} chunks: the\ndescriptor's start moves {wk * 4} B "
        f"a step.\nRed: k step 0 (k = 0-{wk - 1}), in every row\nin a different place, so other "
        f"banks.",
        size=9,
        va="top",
    )
    cv.text(sx, sy - 8, "byte offset in the row:", size=8.5, color=MUTED, va="bottom")
    for p in range(row_chunks):
        cv.text(
            sx + (p + 0.5) * cell_w, sy + 6, f"{16 * p}", size=8, ha="center", color=MUTED, va="top"
        )
    top = sy + 22
    for r in range(8):
        cv.text(sx - 8, top + (r + 0.5) * cell_h, f"row {r}", size=8.5, ha="right", color=A_COLOR)
        for p in range(row_chunks):
            c = p ^ (r % 8)  # the chunk stored at position p
            hot = c < per_step
            cv.rect(
                sx + p * cell_w,
                top + r * cell_h,
                cell_w,
                cell_h,
                fill=tint(MARK, 0.6) if hot else tint(A_COLOR, 0.15),
                edge="white",
                lw=1,
            )
            cv.text(
                sx + (p + 0.5) * cell_w,
                top + (r + 0.5) * cell_h,
                f"k {4 * c}-{4 * c + 3}",
                size=7.5,
                ha="center",
                color=INK,
            )
    cv.text(
        sx,
        top + 8 * cell_h + 6,
        "... the pattern repeats every 8 rows (1024 bytes)",
        size=8.5,
        color=MUTED,
        va="top",
    )
    return cv


# ---- 27: the small parts scaled by 2^10 ------------------------------------------------------------


def _scaled_split(repo: Path, number: int = 27) -> tuple[int, int, int]:
    """(half a place, the mask, the scale's exponent) of step 27's split (or a later step's, the
    same code): tf32_round's `(bits + 0x1000u) & 0xffffe000u` and `SMALL_SCALE = 0x1p10f`."""
    source = source_text(repo, number)
    rounding = re.search(
        r"tf32_round\(float x\)\s*\{[^}]*?\+\s*0x([0-9a-fA-F]+)u\)\s*&\s*0x([0-9a-fA-F]+)u", source
    )
    scale = re.search(r"\bSMALL_SCALE\s*=\s*0x1p(\d+)f", source)
    if not rounding or not scale:
        raise ValueError(
            f"pictures: step {number} no longer reads `tf32_round ... (bits + 0x...u) & 0x...u` and "
            "`SMALL_SCALE = 0x1p<n>f`"
        )
    return int(rounding.group(1), 16), int(rounding.group(2), 16), int(scale.group(1))


def _f32(value: float) -> float:
    """value rounded to FP32 (to nearest; subnormals kept, as nvcc compiles by default)."""
    return _bits_float(_float_bits(value))


def split_parts(x: float, half: int, mask: int, scale: int) -> tuple[float, float, float]:
    """(big, rest, small) of step 27's tf32_split for a finite FP32 x: big = x rounded to TF32,
    rest = x - big (exact), small = rest x 2^scale rounded to TF32 (scale 0: steps 22-26)."""
    def tf32(v: float) -> float:
        return _bits_float((_float_bits(v) + half) & mask)

    big = tf32(_f32(x))
    rest = _f32(x - big)
    return big, rest, tf32(_f32(rest * 2.0**scale))


def significand(value: float) -> tuple[int, int]:
    """(M, q) with value = +-M 2^q, M the FP32 significand as an integer (0 for zero)."""
    bits = _float_bits(value) & 0x7FFFFFFF
    exponent, fraction = bits >> 23, bits & 0x7FFFFF
    if exponent == 0:
        return fraction, -149
    return fraction | 0x800000, exponent - 150


def _leading(value: float) -> int:
    m, q = significand(value)
    return q + m.bit_length() - 1


def kept_bits(value: float, cleared: int = 0) -> list[tuple[int, int]]:
    """(position p, bit) of a value's significand, from its leading bit down to its last place
    (the bit worth 2^p), less the `cleared` low places (a TF32 value's: 13)."""
    m, q = significand(value)
    if m == 0:
        return []
    top = q + m.bit_length() - 1
    return [(p, (m >> (p - q)) & 1) for p in range(top, q + cleared - 1, -1)]


def draw_scaled_small_parts(repo: Path) -> Canvas:
    half, mask, scale = _scaled_split(repo)
    dropped = (~mask & 0xFFFFFFFF).bit_length()  # low bits TF32 does not keep: 13
    kept = 23 - dropped + 1  # TF32's significant bits: 11
    smallest_normal, smallest = -126, -149
    tf32_step = smallest + dropped  # TF32's last place among the subnormals: 2^-136
    pi = _f32(3.14159265)
    cases = [(_f32(pi * 2.0**-119), "normal"), (_f32(pi * 2.0**-135), "subnormal")]

    cv = Canvas(height=492)
    cv.text(
        20,
        20,
        f"Step 27: small parts near FP32's smallest numbers, unscaled and times {pow2(scale)}",
        size=11,
        weight="bold",
    )
    # FP32's exponents, all of them, and the part drawn large below.
    ox0, ox1, lo_all, hi_all = 150, 770, -150, 128

    def ox(p: float) -> float:
        return ox0 + (ox1 - ox0) * (p - lo_all) / (hi_all - lo_all)

    oy = 46
    zlo, zhi = -150, -112  # the exponents drawn large
    cv.text(ox0 - 10, oy + 7, "FP32's exponents", size=9, ha="right", color=MUTED)
    cv.rect(ox(smallest), oy, ox(smallest_normal) - ox(smallest), 14, fill="#d9d9d9", edge="none")
    cv.rect(ox(smallest_normal), oy, ox(hi_all) - ox(smallest_normal), 14, fill=tint(C_COLOR, 0.3),
            edge="none")
    cv.text((ox(zhi) + ox(hi_all)) / 2, oy + 7,
            f"normal: {pow2(smallest_normal)} to {pow2(hi_all)}, 24 significant bits", size=8.5, ha="center")
    for p in (smallest_normal, 0, hi_all - 1):
        cv.line(ox(p), oy + 14, ox(p), oy + 18, color=MUTED)
        cv.text(ox(p), oy + 19, pow2(p) if p else "1", size=8, ha="center", va="top", color=MUTED)
    cv.rect(ox(zlo), oy - 3, ox(zhi) - ox(zlo), 20, fill="none", edge=MARK, lw=1.0, z=4)

    # The exponents drawn large: one column per place, the bit worth 2^p.
    x0, x1 = 150, 660
    cell = (x1 - x0) / (zhi - zlo)

    def px(p: float) -> float:  # left edge of the column of the bit worth 2^p
        return x0 + (p - zlo) * cell

    top, bottom = 100, 368
    cv.line(ox(zlo), oy + 17, x0, top, color=MARK, lw=0.6, ls="--")
    cv.line(ox(zhi), oy + 17, x1, top, color=MARK, lw=0.6, ls="--")
    cv.rect(px(smallest), top, px(tf32_step) - px(smallest), bottom - top, fill="#e6e6e6", edge="none", z=0)
    cv.rect(px(tf32_step), top, px(smallest_normal) - px(tf32_step), bottom - top, fill="#f3f3f3",
            edge="none", z=0)
    cv.rect(px(smallest_normal), top, px(zhi) - px(smallest_normal), bottom - top, fill=tint(C_COLOR, 0.1),
            edge="none", z=0)
    cv.text((px(smallest) + px(smallest_normal)) / 2, top + 4, "subnormal numbers: the last place is fixed",
            size=8.5, ha="center", va="top")
    for p, label in ((smallest, "FP32's last place"), (tf32_step, "TF32's last place"),
                     (smallest_normal, "the smallest normal")):
        cv.line(px(p), top + 20, px(p), bottom, color=MUTED, lw=0.8, ls="--", z=1)
        cv.text(px(p) + 3, top + 22, f"{pow2(p)}:\n{label}", size=8, va="top", color=MUTED)
    for p in range(zlo, zhi + 1, 4):
        cv.line(px(p + 0.5), bottom, px(p + 0.5), bottom + 4, color=MUTED)
        cv.text(px(p + 0.5), bottom + 5, pow2(p), size=7.5, ha="center", va="top", color=MUTED)
    cv.text(x1, bottom + 20, "the place (the bit's weight)", size=8, ha="right", va="top", color=MUTED)

    colors = {"x": "#7f7f7f", "big": A_COLOR, "small": B_COLOR, "scaled": C_COLOR}

    def bits_row(y: float, bits: list[tuple[int, int]], color: str) -> None:
        for p, bit in bits:
            cv.rect(px(p), y, cell, 14, fill=tint(color, 0.85 if bit else 0.3), edge="white", lw=0.8, z=2)

    def lost_row(y: float, first: int, last: int) -> None:
        """The bits from 2^first down to 2^last, lost (red)."""
        for p in range(last, first + 1):
            cv.rect(px(p), y, cell, 14, fill="white", edge=MARK, lw=0.8, hatch="////", z=2)

    y = top + 54
    for x, kind in cases:
        big, rest, small = split_parts(x, half, mask, 0)
        _, _, scaled = split_parts(x, half, mask, scale)
        lead = _leading(rest)
        cv.text(20, y, f"x = {x / 2.0**_leading(x):.4f} x {pow2(_leading(x))}, {kind}", size=9.5,
                weight="bold", va="top", backdrop=True)
        y += 20
        small_bits, scaled_bits = kept_bits(small, dropped), kept_bits(scaled, dropped)
        rows = [
            ("x", f"{len(kept_bits(x))} bits", kept_bits(x), None),
            ("big", f"{len(kept_bits(big, dropped))} bits (TF32)", kept_bits(big, dropped), None),
            ("small", f"{len(small_bits)} of {kept} bits" if small_bits else "none left", small_bits, lead),
            (f"small x {pow2(scale)}", f"{len(scaled_bits)} of {kept} bits", scaled_bits, lead + scale),
        ]
        for label, note, bits, lead_bit in rows:
            key = "scaled" if label.startswith("small x") else label
            cv.text(x0 - 10, y + 7, label, size=9, ha="right", color=colors[key], weight="bold")
            bits_row(y, bits, colors[key])
            if lead_bit is not None:  # TF32 keeps lead .. lead - 10 of a normal number; none below 2^-136
                lost_row(y, min(lead_bit, tf32_step - 1), lead_bit - (kept - 1))
            cv.text(x1 + 10, y + 7, note, size=8.5, color=INK)
            y += 18
        y += 16

    cv.text(20, bottom + 40,
            "\n".join(textwrap.wrap(
                f"A value's small part is what rounding it to TF32 leaves: at most {pow2(-kept)} of it. "
                f"Below {pow2(smallest_normal)} a float is subnormal, its last place fixed at {pow2(smallest)}; "
                f"TF32, a float with its {dropped} low bits cleared, stops at {pow2(tf32_step)} there. So a "
                f"small part below {pow2(smallest_normal)} keeps fewer of its {kept} bits, or none (red: the "
                f"bits lost). Times {pow2(scale)}, exact, it stays normal for x down to about "
                f"{pow2(smallest_normal + 1)}; its two products are summed apart and scaled back once. "
                "A subnormal x still loses its last bits, a large share of its few. Dark: 1 bits; light: 0.",
                120)),
            size=8.5, va="top")
    return cv


# ---- 28: rows of A and columns of B scaled by powers of two ---------------------------------------


def _scale_rule(repo: Path) -> tuple[int, int, int, int]:
    """(the least exponent field, the bias, the clamp, UNSCALED_EXPONENT) of step 28's
    scale_exponent: `min(max(static_cast<int>(bits >> 23), 1) - 127, 126)`, then 0 where
    `abs(s) <= UNSCALED_EXPONENT`."""
    rule = re.search(
        r"int scale_exponent\(unsigned bits\)\s*\{[^}]*?"
        r"min\(max\(static_cast<int>\(bits >> 23\),\s*(\d+)\)\s*-\s*(\d+),\s*(\d+)\);"
        r"[^}]*?abs\(s\)\s*<=\s*UNSCALED_EXPONENT\s*\?\s*0\s*:\s*s;",
        source_text(repo, 28),
    )
    if not rule:
        raise ValueError(
            "pictures: step 28's scale_exponent no longer reads `min(max(static_cast<int>(bits >> 23), "
            "1) - 127, 126)` and `abs(s) <= UNSCALED_EXPONENT ? 0 : s`"
        )
    least, bias, clamp = (int(g) for g in rule.groups())
    return least, bias, clamp, knobs(repo, 28)["UNSCALED_EXPONENT"]


def scale_exponent(m: float, rule: tuple[int, int, int, int]) -> int:
    """s of step 28's scale_exponent for a row's (or column's) largest magnitude m: the row is
    multiplied by 2^-s before the split, each sum by 2^(s + t) after (0: not scaled)."""
    least, bias, clamp, unscaled = rule
    bits = _float_bits(abs(m)) & 0x7FFFFFFF
    if bits == 0 or bits >= 0x7F800000:  # a row of zeros, or one with an Inf or a NaN
        return 0
    s = min(max(bits >> 23, least) - bias, clamp)
    return 0 if abs(s) <= unscaled else s


def draw_scaled_rows_columns(repo: Path) -> Canvas:
    half, mask, small_scale = _scaled_split(repo, 28)
    rule = _scale_rule(repo)
    unscaled = rule[3]
    dropped = (~mask & 0xFFFFFFFF).bit_length()  # low bits TF32 does not keep: 13
    kept = 23 - dropped + 1  # TF32's significant bits: 11
    smallest_normal, smallest = -126, -149
    tf32_step = smallest + dropped  # TF32's last place among the subnormals: 2^-136
    # A row of A wholly subnormal (as in the suite's subnormal_a set): x and the row's largest m.
    x = _f32(1.57 * 2.0**-134)
    m = _f32(1.89 * 2.0**-134)
    s = scale_exponent(m, rule)
    shift = -s  # the row is multiplied by 2^shift
    xs = _f32(x * 2.0**shift)
    assert xs == x * 2.0**shift, "a power of two scales a float exactly"

    def written(value: float) -> str:
        return f"{value / 2.0**_leading(value):.4f} × {pow2(_leading(value))}"

    cv = Canvas(height=470)
    cv.text(20, 20, f"Step 28: a subnormal row of A multiplied by {pow2(shift)} before the split",
            size=11, weight="bold")

    # FP32's exponents: the band left unscaled, and where the row goes.
    ox0, ox1, lo_all, hi_all = 150, 770, -150, 128

    def ox(p: float) -> float:
        return ox0 + (ox1 - ox0) * (p - lo_all) / (hi_all - lo_all)

    oy = 76
    lead_m = _leading(m)
    cv.text(ox0 - 10, oy + 7, "FP32's exponents", size=9, ha="right", color=MUTED)
    cv.rect(ox(smallest), oy, ox(smallest_normal) - ox(smallest), 14, fill="#d9d9d9", edge="none")
    cv.rect(ox(smallest_normal), oy, ox(hi_all) - ox(smallest_normal), 14, fill=tint(C_COLOR, 0.3),
            edge="none")
    cv.rect(ox(-unscaled), oy, ox(unscaled + 1) - ox(-unscaled), 14, fill=tint(C_COLOR, 0.6), edge="none")
    cv.text((ox(lead_m + shift + 1) + 8 + ox(unscaled + 1)) / 2, oy + 7,
            f"not scaled: m in [{pow2(-unscaled)}, {pow2(unscaled + 1)})", size=8.5,
            ha="center")
    for p in (smallest_normal, -unscaled, 0, unscaled + 1, hi_all - 1):
        cv.line(ox(p), oy + 14, ox(p), oy + 18, color=MUTED)
        cv.text(ox(p), oy + 19, pow2(p) if p else "1", size=8, ha="center", va="top", color=MUTED)
    cv.ring(ox(lead_m + 0.5), oy + 7, radius=5)
    cv.ring(ox(lead_m + shift + 0.5), oy + 7, radius=5)
    cv.arrow(ox(lead_m + 0.5), oy - 2, ox(lead_m + shift + 0.5), oy - 2, color=MARK, rad=-0.25)
    cv.text((ox(lead_m) + ox(lead_m + shift)) / 2, oy - 30, f"the whole row × {pow2(shift)}",
            size=9, ha="center", va="bottom", color=MARK, backdrop=True)

    # The pass's arithmetic for this row.
    cv.text(20, oy + 40, "\n".join(textwrap.wrap(
        f"The pass finds the largest magnitude of x's row, m = {written(m)}, subnormal. Its exponent is "
        f"{lead_m}, but 2^-s must be a normal float: s = {s}, the clamp. |s| > {unscaled} "
        f"(UNSCALED_EXPONENT), so every value of the row is multiplied by {pow2(shift)}, exactly: "
        f"x = {written(x)} becomes {written(xs)}, a normal number.",
        112)), size=9, va="top")

    # The bits of x split as step 27 does and as step 28 does, in columns of x's own places.
    colors = {"x": "#7f7f7f", "big": A_COLOR, "small": B_COLOR}
    big27, _, small27 = split_parts(x, half, mask, small_scale)
    big28, _, small28 = split_parts(xs, half, mask, small_scale)

    def places(value: float, cleared: int, moved: int) -> list[tuple[int, int]]:
        """value's bits at their places in x (moved: the power of two value was multiplied by)."""
        return [(p - moved, bit) for p, bit in kept_bits(value, cleared)]

    x_last = min(p for p, _ in kept_bits(x))
    small27_bits = places(small27, dropped, small_scale)
    lost = list(range(x_last, min(p for p, _ in small27_bits)))  # x's places no part holds
    groups = [
        (f"Step 27: x = {written(x)}, split as it is", 0, [
            ("x", f"{len(kept_bits(x))} bits", places(x, 0, 0), []),
            ("big", f"{len(kept_bits(big27, dropped))} bits (TF32)", places(big27, dropped, 0), []),
            ("small", f"{len(small27_bits)} of {kept} bits, {len(lost)} places lost", small27_bits, lost),
        ]),
        (f"Step 28: x × {pow2(shift)} = {written(xs)}, split", shift, [
            ("x", f"{len(kept_bits(xs))} bits: x's {len(kept_bits(x))}, then 0s", places(xs, 0, shift), []),
            ("big", f"{len(kept_bits(big28, dropped))} bits (TF32)", places(big28, dropped, shift), []),
            ("small", f"{len(kept_bits(small28, dropped))} of {kept} bits, none lost",
             places(small28, dropped, shift + small_scale), []),
        ]),
    ]
    hi = _leading(x)
    lo = min(p for _, _, rows in groups for _, _, bits, gone in rows for p in [q for q, _ in bits] + gone)
    x0, cell = 150, 20
    x1 = x0 + (hi - lo + 1) * cell

    def px(p: float) -> float:  # left edge of the column of x's place 2^p
        return x0 + (hi - p) * cell

    y = oy + 96
    for title, moved, rows in groups:
        cv.text(20, y, title, size=9.5, weight="bold", va="top")
        y += 22
        top = y
        for label, note, bits, gone in rows:
            cv.text(x0 - 10, y + 7, label, size=9, ha="right", color=colors[label], weight="bold")
            for p, bit in bits:
                cv.rect(px(p), y, cell, 14, fill=tint(colors[label], 0.85 if bit else 0.3), edge="white",
                        lw=0.8, z=2)
            for p in gone:
                cv.rect(px(p), y, cell, 14, fill="white", edge=MARK, lw=0.8, hatch="////", z=2)
            cv.text(x1 + 10, y + 7, note, size=8.5)
            y += 18
        bottom = y
        if moved == 0:  # the limits of a subnormal x: TF32's last place, FP32's
            cv.rect(px(smallest - 1), top - 3, px(lo - 1) - px(smallest - 1), bottom - top + 3,
                    fill="#e6e6e6", edge="none", z=0)
            cv.text((px(smallest - 1) + px(lo - 1)) / 2, (top + bottom) / 2,
                    f"no float has a bit\nbelow {pow2(smallest)}", size=8, ha="center", color=MUTED)
            cv.line(px(tf32_step - 1), top - 3, px(tf32_step - 1), bottom, color=MUTED, lw=0.8, ls="--", z=1)
            cv.text(px(tf32_step - 1) + 4, top + 18 + 7, f"TF32's last place here: {pow2(tf32_step)}",
                    size=8, color=MUTED)
        for p in range(hi, lo - 1, -4):
            cv.line(px(p) + cell / 2, bottom, px(p) + cell / 2, bottom + 4, color=MUTED)
            cv.text(px(p) + cell / 2, bottom + 5, pow2(p + moved), size=7.5, ha="center", va="top",
                    color=MUTED)
        y = bottom + 30

    cv.text(20, y - 6, "\n".join(textwrap.wrap(
        f"Columns: x's places, the bit worth 2^p (scaled, worth {pow2(shift)} times more). Step 27: the "
        f"big part keeps x's bits down to {pow2(tf32_step)}, TF32's last place among the subnormals; the "
        f"small part, times {pow2(small_scale)}, reaches {pow2(tf32_step - small_scale)}, and x's last "
        f"places are lost (red). Step 28: x × {pow2(shift)} is a normal number, so its big part keeps "
        f"{kept} bits and its small part the rest, as for any ordinary value. The epilogue multiplies "
        f"each sum by 2^(s + t): {pow2(s)} × 2^t here, t from the sum's column of B. "
        "Dark: 1 bits; light: 0.",
        122)), size=8.5, va="top")
    return cv


# ---- 29: A split once, before the GEMM ------------------------------------------------------------

SPLIT_COLOR = "#8172b3"  # step 25's splitters (plots/pictures_time.py's SHORT)


def _split_traffic(repo: Path, number: int) -> dict[str, int]:
    """Shared-memory bytes per k tile of one block, as step 25's notes count them: what TMA
    writes, what the splitters read and write (step 28), what wgmma reads of the A tiles (big
    and small, for the three products, in every consumer warpgroup), B's fragments."""
    k = knobs(repo, number)
    bm, bn, split = k["BM"], k["BN"], k["TUNE_SPLIT"]
    consumers = bn // constant(repo, number, "WGMMA_M")
    a_tile, b_tile = bm * split * 4, split * bn * 4
    splitters = "SPLITTERS" in k
    return {
        "copies": (a_tile if splitters else 2 * a_tile) + b_tile,
        "splitters": 3 * a_tile if splitters else 0,  # read A, write big and small
        "wgmma": 3 * a_tile * consumers,
        "fragments": b_tile,
    }


def draw_split_once(repo: Path) -> Canvas:
    k28, k29 = knobs(repo, 28), knobs(repo, 29)
    src28, src29 = source_text(repo, 28), source_text(repo, 29)
    if "barrier_init(&split[s]" not in src28 or "barrier_init(&split[s]" in src29:
        raise ValueError("pictures: step 28 waits on a `split` barrier per stage, step 29 on none")
    if "split_a_for_sgemm_kernel" not in src29 or "SPLITTERS" in k29:
        raise ValueError("pictures: step 29 splits A in split_a_for_sgemm_kernel and has no splitters")
    splitters = k28["SPLITTERS"]
    t28, t29 = _split_traffic(repo, 28), _split_traffic(repo, 29)
    a_tile_kb = k29["BM"] * k29["TUNE_SPLIT"] * 4 // 1024

    def kb(n: int) -> str:
        return f"{n // 1024} KB"

    cv = Canvas(height=552)
    cv.text(20, 20, "Step 29: A split once, in a pass before the GEMM, not in every block's pipeline",
            size=11, weight="bold")

    rows, cols, cell, aw = 4, 4, 24, 36  # a schematic problem: 4 x 4 blocks of C
    row_i = 1  # the block row followed

    def matrices(top: int, split_once: bool) -> None:
        """A, (step 29: its big and small parts), and C's blocks; the block row i of each."""
        h = rows * cell
        ax0, cx0 = 30, 150
        cv.rect(ax0, top, aw, h, fill=tint(A_COLOR, 0.1), edge=A_COLOR)
        cv.grid(ax0, top, aw, h, rows, 1, color=tint(A_COLOR, 0.4))
        cv.rect(ax0, top + row_i * cell, aw, cell, fill=tint(A_COLOR, 0.55), edge=A_COLOR, z=3)
        cv.text(ax0 + aw / 2, top - 8, "A", size=9, ha="center", weight="bold", color=A_COLOR)
        cv.rect(cx0, top, cols * cell, h, fill=tint(C_COLOR, 0.1), edge=C_COLOR)
        cv.grid(cx0, top, cols * cell, h, rows, cols, color=tint(C_COLOR, 0.5))
        cv.text(cx0 + cols * cell / 2, top - 8, "C's blocks", size=9, ha="center", weight="bold",
                color=C_COLOR)
        mid = top + (row_i + 0.5) * cell
        if split_once:
            sx = 96  # the two parts, one sheet behind the other
            cv.rect(sx + 6, top + 6, aw, h, fill=tint(A_COLOR, 0.25), edge=A_COLOR, z=2)
            cv.rect(sx, top, aw, h, fill=tint(A_COLOR, 0.1), edge=A_COLOR, z=3)
            cv.rect(sx, top + row_i * cell, aw, cell, fill=tint(A_COLOR, 0.55), edge=A_COLOR, z=4)
            cv.text(sx + aw / 2 + 3, top - 8, "big, small", size=8.5, ha="center", color=A_COLOR)
            cv.arrow(ax0 + aw + 2, mid, sx - 2, mid, color=SPLIT_COLOR, lw=1.4)
            cv.text((ax0 + aw + sx) / 2, mid - 5, "split", size=7.5, ha="center", va="bottom",
                    color=SPLIT_COLOR)
            cv.arrow(sx + aw + 8, mid, cx0 - 2, mid, color=A_COLOR, lw=1.1)
            for c in range(cols):
                cv.rect(cx0 + c * cell, top + row_i * cell, cell, cell, fill=tint(A_COLOR, 0.3),
                        edge=C_COLOR, z=3)
            note = ("one pass splits A,\nonce; every block\ncopies both parts")
        else:
            cv.arrow(ax0 + aw + 2, mid, cx0 - 2, mid, color=A_COLOR, lw=1.1)
            for c in range(cols):
                cv.rect(cx0 + c * cell, top + row_i * cell, cell, cell, fill=tint(SPLIT_COLOR, 0.6),
                        edge=C_COLOR, z=3)
            note = ("row i of A is split\nagain in each block of\nrow i of C: N / BN times")
        cv.text(ax0 - 4, mid, "i", size=8.5, ha="right", color=MUTED)
        cv.text(20, top + h + 12, note, size=8.5, va="top")

    def chain(top: int, boxes: list[tuple[str, str, str, str]]) -> None:
        """One stage's path, box by box: (name, what, colour, kind); kind "barrier", "work" or
        "gone" (a dashed place where step 28 had a box)."""
        x0, bw, gap, bh = 275, 87, 17.5, 68
        for i, (name, what, color, kind) in enumerate(boxes):
            x = x0 + i * (bw + gap)
            if kind == "gone":
                continue
            barrier = kind == "barrier"
            cv.rect(x, top, bw, bh, fill="white" if barrier else tint(color, 0.3), edge=color,
                    lw=1.4 if barrier else 1.0)
            cv.text(x + bw / 2, top + 12, name, size=8.5, ha="center", weight="bold",
                    color=color if barrier else INK)
            cv.text(x + bw / 2, top + 43, what, size=7.5, ha="center")
            nxt = next((j for j in range(i + 1, len(boxes)) if boxes[j][3] != "gone"), None)
            if nxt is not None:
                cv.arrow(x + bw + 1, top + bh / 2, x0 + nxt * (bw + gap) - 1, top + bh / 2, lw=1.0)
        gone = [i for i, box in enumerate(boxes) if box[3] == "gone"]
        if gone:
            x = x0 + gone[0] * (bw + gap)
            w = (gone[-1] - gone[0]) * (bw + gap) + bw
            cv.rect(x, top + 8, w, bh - 16, fill="white", edge=MUTED, ls="--", lw=0.8, z=2)
            cv.text(x + w / 2, top + bh / 2 + 12, boxes[gone[0]][1], size=8, ha="center", color=MUTED,
                    backdrop=True, z=6)
        first, last = x0 + bw / 2, x0 + (len(boxes) - 1) * (bw + gap) + bw / 2
        cv.arrow(last, top + bh + 2, first, top + bh + 2, lw=1.0, rad=-0.12)
        cv.text((first + last) / 2, top + bh + 34, "empty barrier: the consumers give the stage back, "
                "the TMA thread refills it", size=8, ha="center", color=MUTED, backdrop=True)

    copy, barrier, math_color = A_COLOR, C_COLOR, B_COLOR
    top = 50
    cv.text(20, top, "Step 28: every block splits its own A tiles, inside its pipeline", size=9.5,
            weight="bold")
    matrices(top + 40, split_once=False)
    chain(top + 24, [
        ("TMA thread", "copies A, B", copy, "work"),
        ("full", "the copies'\nbytes landed", barrier, "barrier"),
        ("splitters", f"{splitters} threads:\nA -> big, small\nin shared", SPLIT_COLOR, "work"),
        ("split", f"{splitters} arrivals:\nA is split", barrier, "barrier"),
        ("consumers", "wait on full\nand on split;\nwgmma", math_color, "work"),
    ])
    top = 276
    cv.text(20, top, "Step 29: split_a_for_sgemm_kernel splits A once, before the GEMM", size=9.5,
            weight="bold")
    matrices(top + 40, split_once=True)
    chain(top + 24, [
        ("TMA thread", "copies A's big\nand small\nparts, B", copy, "work"),
        ("full", "the copies'\nbytes landed", barrier, "barrier"),
        ("", "no splitters: nothing\nelse to wait for", MUTED, "gone"),
        ("", "", MUTED, "gone"),
        ("consumers", "wait on full;\nB x its column's\nfactor; wgmma", math_color, "work"),
    ])

    total28, total29 = sum(t28.values()), sum(t29.values())
    cv.text(20, 481, "\n".join(textwrap.wrap(
        f"Shared-memory traffic per k tile of a {k29['BM']} x {k29['BN']} block (A tiles of "
        f"{a_tile_kb} KB): step 28, {kb(t28['copies'])} copied + {kb(t28['splitters'])} the splitters "
        f"read and write + {kb(t28['wgmma'])} wgmma reads + {kb(t28['fragments'])} of B's fragments = "
        f"{kb(total28)}; step 29, {kb(t29['copies'])} + {kb(t29['wgmma'])} + {kb(t29['fragments'])} = "
        f"{kb(total29)}. In step 28 the consumers wait for the splitters each k tile; in step 29 the "
        "split is a kernel of its own, reading A once and writing its two parts (4 MK bytes in, "
        "8 MK out). Schematic: the boxes show the order of things, not their times.",
        120)), size=8.5, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "03_shared_tiles.svg": draw_shared_tiles,
    "04_block_order.svg": draw_block_order,
    "05_thread_tile.svg": draw_thread_tile,
    "06_register_fragments.svg": draw_register_fragments,
    "07_transposed_a.svg": draw_transposed_a,
    "08_warp_shape.svg": draw_warp_shape,
    "14_thread_tile.svg": draw_large_thread_tile,
    "20_cluster_pair.svg": draw_cluster_pair,
    "22_tf32_split.svg": draw_tf32_split,
    "23_wgmma_layout.svg": draw_wgmma_layout,
    "27_scaled_small_parts.svg": draw_scaled_small_parts,
    "28_scaled_rows_columns.svg": draw_scaled_rows_columns,
    "29_split_once.svg": draw_split_once,
}

PICTURES: dict[str, Callable[[Path], str]] = {
    name: partial(_svg, draw) for name, draw in _DRAWINGS.items()
}


def picture_png(name: str, repo: Path) -> bytes:
    """The PNG twin of a picture, to look at it (the pages use the SVG)."""
    return _render(_DRAWINGS[name], repo, "png")


def main(argv: list[str]) -> int:
    repo = Path(__file__).resolve().parent.parent
    png_dir = Path(argv[argv.index("--png") + 1]) if "--png" in argv else None
    out = repo / PICTURES_DIR
    out.mkdir(parents=True, exist_ok=True)
    for name, picture in PICTURES.items():
        (out / name).write_text(picture(repo), encoding="utf-8")
        print(f"wrote {PICTURES_DIR / name}")
        if png_dir:
            png_dir.mkdir(parents=True, exist_ok=True)
            (png_dir / name).with_suffix(".png").write_bytes(picture_png(name, repo))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
