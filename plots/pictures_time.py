"""The pictures of time and of the split of work on the step pages (docs/pictures/NN_name.svg):
pipelines of copies and math (steps 09-13, 24, 25), copy instructions (10, 17), and where the
blocks of a shape run on the H100's SMs (15, 16, 18, 19).

Every number drawn comes from the steps: knobs from their `SGEMM_KNOB(NAME, value)` lines
(plots.tunables reads them), constants and barrier names from their sources, and the split-K
and stream-K decisions from the steps' launch heuristics as scripts/paths.py ports them
(step 20's choose_splits, piece_length, stream_k_tiles and the pairs, with the H100's clock,
bandwidth and L2). `plan()` below redoes that port per step, with the step's own knobs and
with what the step has of it (step 15 no stream-K, steps before 19 no short last piece,
steps before 20 no pairs); plots/tests/test_pictures_time.py holds it to scripts/paths.py's
answers for step 20. Step 17's copy counts (56 issued where 24 do the work) follow from the
knobs (copies_per_k_tile); the picture also checks them against the numbers step 17's header
states and fails if the two part. Lengths in the pipeline pictures (09-13, 24, 25) are
schematic: they show the order of things, not measured times, and say so; the split-K and
stream-K pictures are to scale in k-tile or tile times, except step 18's reduction, drawn wider
and labelled so.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_time` writes them all to
docs/pictures/ (`--png DIR` also writes PNG twins there, to look at them).

Drawing is in pixels of an 800-pixel-wide page, y growing downwards."""

from __future__ import annotations

import importlib.util
import io
import math
import re
import sys
import textwrap
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable

import matplotlib
import matplotlib.colors
import matplotlib.patches
import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from plots.steps import step_dirs, step_number, step_source
from plots.tunables import step_tunables

PICTURES_DIR = Path("docs") / "pictures"
DPI = 100
WIDTH = 800
SMS = 132  # the H100 SXM's SMs: the GPU that scripts/paths.py's facts describe
# The "default" style ignores any user matplotlibrc; the salt makes the SVG's ids reproducible.
_RC = {"svg.hashsalt": "sgemm-steps-pictures", "font.size": 10, "font.family": "DejaVu Sans",
       "hatch.linewidth": 0.6}

COPY = "#4c72b0"      # copies: global -> shared (cp.async, TMA)
MATH = "#dd8452"      # the math: FFMA, wgmma
REDUCE = "#55a868"    # reductions of partial sums
SHORT = "#8172b3"     # step 19's short pieces; step 25's splitters
WAIT = "#d5d5d5"      # waiting
IDLE = "#f4f4f4"
MARK = "#c44e52"      # what the picture is about
INK = "#222222"
MUTED = "#666666"


def tint(color: str, amount: float) -> str:
    """color mixed with white: 1 is the colour, 0 is white."""
    r, g, b = matplotlib.colors.to_rgb(color)
    return matplotlib.colors.to_hex([1 - amount * (1 - c) for c in (r, g, b)])


# ---- the steps: knobs, sources ----------------------------------------------------------------

def step_dir(repo: Path, number: int) -> str:
    found = [step for step in step_dirs(repo) if step_number(step) == number]
    if len(found) != 1:
        raise ValueError(f"pictures: expected one step numbered {number:02d} under steps/, found {found}")
    return found[0]


def knobs(repo: Path, number: int) -> dict[str, int | bool]:
    """NAME -> value of the step's knobs (ints and bools)."""
    values: dict[str, int | bool] = {}
    for name, text in step_tunables(repo, step_dir(repo, number)).items():
        values[name] = {"true": True, "false": False}[text] if text in ("true", "false") else int(text)
    if not values:
        raise ValueError(f"pictures: step {number:02d} has no knobs")
    return values


def step_source_path(repo: Path, number: int) -> Path:
    source = step_source(repo, step_dir(repo, number))
    if source is None:
        raise ValueError(f"pictures: step {number:02d} has no kernel file")
    return source


def source_text(repo: Path, number: int) -> str:
    return step_source_path(repo, number).read_text(encoding="utf-8")


def block_tile(k: dict[str, int | bool]) -> tuple[int, int, int]:
    """(BM, BN, threads) of a CUDA-core step (03-20): BM and BN follow from the thread grid."""
    return (k["THREADS_Y"] * k["THREAD_TILE_Y"], k["THREADS_X"] * k["THREAD_TILE_X"],
            k["THREADS_X"] * k["THREADS_Y"])


# ---- the heuristics: scripts/paths.py and what each step has of it ----------------------------

@lru_cache(maxsize=None)
def _paths_module(path: Path):
    spec = importlib.util.spec_from_file_location("sgemm_paths", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def paths(repo: Path):
    """scripts/paths.py: step 20's path choice and the H100's facts (H100, cdiv, path)."""
    return _paths_module((Path(repo) / "scripts" / "paths.py").resolve())


@dataclass(frozen=True)
class Plan:
    """What one step's launch decides for one shape on `sms` SMs (one block per SM)."""
    m: int
    n: int
    k: int
    sms: int
    bm: int
    bn: int
    tiles: int          # output tiles of BM x BN
    k_tiles: int        # k tiles of TUNE_SPLIT
    chosen: int         # choose_splits' number of pieces
    length: int         # k tiles per piece (piece_length from step 19 on)
    splits: int         # pieces launched per tile
    sk_tiles: int       # stream-K's tiles (0: no stream-K)
    path: str           # as sgemm::took_path names it
    tile_us: float      # one k tile of one block on one SM's FP32 lanes, in us
    l2_ratio: int       # L2_BANDWIDTH_RATIO
    gpu: dict           # scripts/paths.py's facts: lanes, clock_mhz, dram_bytes_per_us, l2_bytes

    def traffic(self, size: float) -> float:
        """`size` bytes written and read back, in k-tile times, as choose_splits charges partial
        sums (partial_sums_tile_times): what fits in half the L2 at L2_BANDWIDTH_RATIO times the
        device memory's bandwidth, the rest at that bandwidth."""
        in_l2 = min(size, 0.5 * self.gpu["l2_bytes"])
        return 2.0 * (in_l2 / self.l2_ratio + size - in_l2) / self.gpu["dram_bytes_per_us"] / self.tile_us

    @property
    def partial_sums(self) -> float:
        """choose_splits' charge for the launched pieces' partial sums, in k-tile times."""
        return self.traffic(self.splits * self.m * self.n * 4.0) if self.splits > 1 else 0.0

    @property
    def last(self) -> int:
        """k tiles of the last piece (the short one where step 19 cut one off)."""
        return self.k_tiles - (self.splits - 1) * self.length

    @property
    def short(self) -> bool:
        return self.path == "split-K-short-last-piece"

    @property
    def blocks(self) -> int:
        return self.tiles * self.splits

    @property
    def dp_tiles(self) -> int:
        return self.tiles - self.sk_tiles


def plan(repo: Path, number: int, m: int, n: int, k: int, sms: int = SMS) -> Plan:
    """Step `number`'s choice for an m x n x k GEMM: scripts/paths.py's port of step 20's
    launch, run with this step's knobs (paths.py's values where the step has no such knob),
    and without what the step does not have yet: stream-K from step 16, the short last piece
    (piece_length) from step 19, the pairs from step 20."""
    kn, p = knobs(repo, number), paths(repo)
    gpu, cdiv = p.H100, p.cdiv

    def knob(name: str, default=None):
        return kn.get(name, getattr(p, name) if default is None else default)

    bm, bn, _ = block_tile(kn)
    slots = sms  # one block of the split kernel per SM: its registers allow no more
    tiles, k_tiles = cdiv(m, bm) * cdiv(n, bn), cdiv(k, knob("TUNE_SPLIT"))
    tile_us = bm * bn * knob("TUNE_SPLIT") / (gpu["lanes"] * gpu["clock_mhz"])
    ratio, min_piece = knob("L2_BANDWIDTH_RATIO"), knob("MIN_SPLIT_K_TILES")

    def partial_sums(pieces: int) -> float:  # partial_sums_tile_times
        size = pieces * m * n * 4.0
        in_l2 = min(size, 0.5 * gpu["l2_bytes"])
        return 2.0 * (in_l2 / ratio + size - in_l2) / gpu["dram_bytes_per_us"] / tile_us

    def cost(splits: int) -> float:  # choose_splits' tile_times
        per = cdiv(k_tiles, splits)
        pieces = cdiv(k_tiles, per)
        return cdiv(tiles * pieces, slots) * per + (partial_sums(pieces) if pieces > 1 else 0.0)

    most = min(knob("MAX_SPLITS"), max(1, k_tiles // min_piece))
    chosen = 1
    for s in range(2, most + 1):
        if cost(s) * (100 + knob("MIN_GAIN_PERCENT")) <= cost(chosen) * 100:
            chosen = s
    length = cdiv(k_tiles, chosen)
    pieces = cdiv(k_tiles, length)
    idle = slots - tiles * pieces
    if number >= 19 and knob("TAIL_PIECES", True) and pieces > 1 and idle > 0:  # piece_length
        best, best_time = length, length
        shorter = length - 1
        while shorter >= min_piece and k_tiles // shorter == pieces:
            tail = k_tiles - pieces * shorter
            if not 0 < tail < min_piece:
                turns = 0 if tail == 0 else cdiv(tiles, idle)
                time = max(shorter, turns * (tail + knob("TAIL_OVERHEAD_K_TILES")))
                if time < best_time:
                    best, best_time = shorter, time
            shorter -= 1
        length = best
    splits = cdiv(k_tiles, length)
    sk_tiles = 0
    if number >= 16 and knob("STREAM_K", True) and splits == 1 and tiles > slots and tiles % slots:  # stream_k_tiles
        sk_tiles = tiles % slots  # the partial last wave
        sk_tiles = sk_tiles if sk_tiles * k_tiles >= slots else 0
    unshortened = cdiv(k_tiles, chosen)
    if sk_tiles:
        path = "stream-K"
    elif splits == 1:
        path = "whole-tiles"
    elif number >= 20 and knob("PAIR_ROWS", 4) > 0 and splits % 2 == 0 and length == unshortened:
        path = "split-K-pairs"
    elif length < unshortened:
        path = "split-K-short-last-piece"
    else:
        path = "split-K"
    return Plan(m, n, k, sms, bm, bn, tiles, k_tiles, chosen, length, splits, sk_tiles, path, tile_us,
                ratio, dict(gpu))


def copies_per_k_tile(repo: Path, number: int, vector: int | None = None, both_paths: bool = False) -> dict[str, int]:
    """Copy instructions one thread issues per k tile in a CUDA-core step: A one float at a
    time (transposed on its way), B in vectors of COPY_VECTOR floats (`vector` overrides it);
    both_paths: each vector of B also compiled as COPY_VECTOR one-float copies, predicated
    off (steps 10-16 test B's alignment in the kernel; step 17 compiles the paths apart)."""
    kn = knobs(repo, number)
    bm, bn, threads = block_tile(kn)
    split = kn["TUNE_SPLIT"]
    vector = kn.get("COPY_VECTOR", 1) if vector is None else vector
    counts = {"A": bm * split // threads, "B": split * bn // vector // threads}
    counts["B off"] = counts["B"] * vector if both_paths and vector > 1 else 0
    return counts


def header_copy_counts(repo: Path) -> tuple[int, int]:
    """(issued, doing the work) copy instructions per thread and k tile as step 17's header
    states them ("... issues 56 copy instructions per k tile where 24 do the work")."""
    header = " ".join(line.lstrip("/ ") for line in source_text(repo, 17).splitlines() if line.startswith("//"))
    match = re.search(r"issues (\d+) copy instructions per k tile where (\d+) do the work", header)
    if not match:
        raise ValueError("pictures: step 17's header no longer states its copy counts")
    return int(match.group(1)), int(match.group(2))


# ---- drawing ----------------------------------------------------------------------------------

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
        self.ax.add_patch(Rectangle((x, y), w, h, facecolor=fill, edgecolor=edge, linewidth=lw,
                                    hatch=hatch, zorder=z, linestyle=ls))

    def line(self, x0, y0, x1, y1, color=INK, lw=0.8, z=3, ls="-"):
        self.ax.plot([x0, x1], [y0, y1], color=color, linewidth=lw, zorder=z, linestyle=ls,
                     solid_capstyle="butt")

    def text(self, x, y, s, size=9.5, ha="left", va="center", color=INK, weight="normal", z=6,
             rotation=0, style="normal", backdrop=False):
        self.ax.text(x, y, s, fontsize=size, ha=ha, va=va, color=color, fontweight=weight, zorder=z,
                     rotation=rotation, fontstyle=style, linespacing=1.3,
                     bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5} if backdrop else None)

    def arrow(self, x0, y0, x1, y1, color=INK, lw=1.2, rad=0.0, z=5, style="-|>", ls="-"):
        self.ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle=style, mutation_scale=11,
                                          color=color, linewidth=lw, zorder=z, linestyle=ls,
                                          connectionstyle=f"arc3,rad={rad}", shrinkA=0, shrinkB=0))

    def bar(self, x0, x1, y, h, fill, label="", color=INK, size=8.5, edge="white", hatch=None, z=2, lw=0.8):
        """A box from x0 to x1 with its label inside (left out where it would not fit; on a white
        backdrop where the box is hatched)."""
        self.rect(x0, y, x1 - x0, h, fill=fill, edge=edge, hatch=hatch, z=z, lw=lw)
        if label and text_width(label, size) <= x1 - x0 - 4:
            self.text((x0 + x1) / 2, y + h / 2, label, size=size, ha="center", color=color, z=z + 4,
                      backdrop=hatch is not None)

    def title(self, s: str) -> None:
        self.text(20, 18, s, size=11.5, weight="bold")

    def text_boxes(self) -> list[tuple[str, tuple[float, float, float, float]]]:
        """(text, (x0, y0, x1, y1)) of every label in pixels, to check that none leaves the page."""
        renderer = FigureCanvasAgg(self.fig).get_renderer()
        boxes = []
        for t in self.ax.texts:
            box = t.get_window_extent(renderer)
            boxes.append((t.get_text(), (box.x0, self.height - box.y1, box.x1, self.height - box.y0)))
        return boxes

    def save(self, fmt: str) -> bytes:
        # Date (SVG) and Software (PNG) would embed the time and matplotlib's version.
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        buffer = io.BytesIO()
        self.fig.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata, facecolor="white")
        return buffer.getvalue()


def text_width(s: str, size: float) -> float:
    """About how wide one line of DejaVu Sans is, in pixels (0.56 em a character)."""
    return max(len(line) for line in s.split("\n")) * size * DPI / 72 * 0.56


def _render(draw: Callable[[Path], Canvas], repo: Path, fmt: str = "svg") -> bytes:
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        return draw(Path(repo)).save(fmt)


def _svg(draw: Callable[[Path], Canvas], repo: Path) -> str:
    return _render(draw, repo, "svg").decode("utf-8")


def _legend(cv: Canvas, x: float, y: float, items: list[tuple[str, str, str | None]], size=9) -> None:
    """Swatches in a row: (fill, label, hatch)."""
    for fill, label, hatch in items:
        cv.rect(x, y - 6, 16, 12, fill=fill, edge=MUTED, lw=0.6, hatch=hatch)
        cv.text(x + 21, y, label, size=size, color=INK)
        x += 21 + text_width(label, size) + 18


def _time_arrow(cv: Canvas, x0: float, x1: float, y: float, label: str = "time (schematic)") -> None:
    cv.arrow(x0, y, x1, y, color=MUTED, lw=1.0)
    cv.text(x1, y + 5, label, size=8.5, color=MUTED, ha="right", va="top")


# ---- 09: cp.async ---------------------------------------------------------------------------

def draw_async_copy(repo: Path) -> Canvas:
    cv = Canvas(height=320)
    cv.title("Step 09: cp.async writes shared memory directly; LDG + STS go through a register")
    rows = []
    for number in (8, 9):
        kn = knobs(repo, number)
        bm, bn, threads = block_tile(kn)
        split = kn["TUNE_SPLIT"]
        copies = (bm + bn) * split // threads
        ffma = kn["THREAD_TILE_Y"] * kn["THREAD_TILE_X"] * split
        rows.append((number, copies, ffma, kn.get("ASYNC_LOADS", False)))

    issue, wait, barrier = 78, 170, 9  # pixels: schematic
    x0, xmax = 320, 780
    math_starts = []
    for i, (number, copies, ffma, asynchronous) in enumerate(rows):
        y = 58 + i * 110
        kind = "cp.async (LDGSTS)" if asynchronous else "LDG, then STS"
        cv.text(20, y, f"step {number:02d}: {kind}", size=10.5, weight="bold")
        # The way of one element.
        bx, by, bw, bh = 24, y + 36, 70, 30
        names = ["global", "shared"] if asynchronous else ["global", "register", "shared"]
        xs = [bx, bx + 200] if asynchronous else [bx, bx + 100, bx + 200]
        for name, x in zip(names, xs):
            color = MUTED if name == "register" else COPY
            cv.rect(x, by, bw, bh, fill=tint(color, 0.15), edge=color, lw=1.0)
            cv.text(x + bw / 2, by + bh / 2, name, size=9, ha="center")
        if asynchronous:
            cv.arrow(bx + bw + 2, by + bh / 2, xs[1] - 2, by + bh / 2, color=COPY, lw=1.4)
            cv.text((bx + bw + xs[1]) / 2, by - 3, "LDGSTS", size=8.5, ha="center", va="bottom", color=COPY)
            cv.text((bx + bw + xs[1]) / 2, by + bh / 2 + 4, "(no register)", size=8, ha="center", va="top",
                    color=MUTED)
        else:
            for a, b, label in zip(xs, xs[1:], ["LDG", "STS"]):
                cv.arrow(a + bw + 2, by + bh / 2, b - 2, by + bh / 2, color=COPY, lw=1.4)
                cv.text((a + bw + b) / 2, by - 3, label, size=8.5, ha="center", va="bottom", color=COPY)
        # One thread's k tile.
        ty, th = y + 36, 30
        cv.text(x0, ty - 5, "one thread, one k tile:", size=8.5, va="bottom", color=MUTED)
        if asynchronous:
            segments = [(issue, tint(COPY, 0.8), f"{copies} LDGSTS", "white"),
                        (wait, WAIT, "wait for the copies", INK)]
        else:
            segments = [(issue, tint(COPY, 0.8), f"{copies} LDG", "white"),
                        (wait, WAIT, f"wait; {copies} registers hold", INK),
                        (issue, tint(COPY, 0.45), f"{copies} STS", INK)]
        x = x0
        for w, fill, label, color in segments:
            cv.bar(x, x + w, ty, th, fill, label, color=color)
            x += w
        cv.bar(x, x + barrier, ty, th, INK)
        x += barrier
        cv.bar(x, xmax, ty, th, tint(MATH, 0.7), f"math: {ffma:,} FFMA")
        math_starts.append(x)
    later, earlier = math_starts
    cv.line(later, 124, later, 204, color=MARK, lw=1, ls="--")
    cv.arrow(later, 196, earlier, 196, color=MARK, lw=1.0)
    cv.text(later + 6, 176, "no STS to issue,\nno registers held", size=8.5, color=MARK)
    _legend(cv, x0, 272, [(tint(COPY, 0.8), "copy issue", None), (WAIT, "loads in flight", None),
                          (INK, "barrier", None), (tint(MATH, 0.7), "FFMAs", None)], size=8.5)
    _time_arrow(cv, x0, xmax, 296)
    cv.text(20, 272, f"copies a thread issues per k tile:\nstep 08: {rows[0][1]} LDG + {rows[0][1]} STS, "
            f"step 09: {rows[1][1]} LDGSTS", size=8.5, color=INK, va="center")
    return cv


# ---- 10: 16-byte copies -------------------------------------------------------------------------

def draw_vector_copy(repo: Path) -> Canvas:
    kn = knobs(repo, 10)
    bm, bn, threads = block_tile(kn)
    split, vector, b_pad, a_pad = kn["TUNE_SPLIT"], kn["COPY_VECTOR"], kn["B_PAD"], kn["A_PAD"]
    one = copies_per_k_tile(repo, 10, vector=1)
    vec = copies_per_k_tile(repo, 10)

    cv = Canvas(height=450)
    cv.title(f"Step 10: B's tile in {vector * 4}-byte cp.async copies, A still one float at a time")
    cell = 3.0
    bx, tile_h = 20, split * cell

    def b_tile(y: float, floats: int, label: str) -> None:
        per_row = bn // floats                 # B_VECTORS
        rows_per_pass = threads // per_row     # B_PASS
        passes = split // rows_per_pass
        cv.text(bx, y - 6, label, size=9.5, va="bottom", weight="bold")
        cv.rect(bx, y, bn * cell, tile_h, fill=tint(COPY, 0.1), edge=COPY, lw=1.0)
        if b_pad:
            cv.rect(bx + bn * cell, y, b_pad * cell, tile_h, fill=IDLE, edge=MUTED, lw=0.5, hatch="///")
        for c in range(floats if floats > 1 else 4, bn, floats if floats > 1 else 4):
            cv.line(bx + c * cell, y, bx + c * cell, y + tile_h, color=tint(COPY, 0.3), lw=0.4, z=2)
        warp_floats = min(32 * floats, bn)  # warp 0's first pass
        cv.rect(bx, y, warp_floats * cell, cell, fill=tint(MARK, 0.5), edge="none", z=3)
        for r in range(0, split, rows_per_pass):  # thread 0's copies, one pass of rows apart
            cv.rect(bx, y + r * cell, floats * cell, cell, fill=MARK, edge="none", z=4)
        r = rows_per_pass * (passes // 2)
        cv.arrow(bx + floats * cell + 40, y + (r + 0.5) * cell, bx + floats * cell + 3, y + (r + 0.5) * cell,
                 color=MARK, lw=1.0)
        cv.text(bx + floats * cell + 44, y + (r + 0.5) * cell, "thread 0", size=8.5, color=MARK)
        cv.text(bx, y + tile_h + 5,
                f"thread 0 (red): {floats} float{'s' if floats > 1 else ''} a copy, {passes} copies, "
                f"{rows_per_pass} rows apart ({per_row} copies cover a row)\n"
                f"warp 0's first copy instruction (pink): {32 * floats * 4} bytes", size=8.5, va="top")

    b_tile(70, 1, f"B tile, {split} x {bn}, in 4-byte copies")
    b_tile(70 + tile_h + 90, vector, f"B tile in {vector * 4}-byte copies (COPY_VECTOR = {vector})")

    # The counts.
    cx, cy = 450, 70
    cv.text(cx, cy - 6, "copies a thread issues per k tile", size=9.5, weight="bold", va="bottom")
    unit = 8.0
    for i, (label, counts) in enumerate((("all 4-byte", one), (f"B in {vector * 4}-byte copies", vec))):
        y = cy + 6 + i * 50
        cv.text(cx, y, label, size=8.5, va="top", color=MUTED)
        x = cx
        for part, fill, color in (("A", tint(COPY, 0.45), INK), ("B", tint(COPY, 0.85), "white")):
            w = counts[part] * unit
            cv.bar(x, x + w, y + 15, 22, fill, f"{part}: {counts[part]}", color=color)
            x += w
        cv.text(x + 6, y + 26, f"= {counts['A'] + counts['B']}", size=9.5, weight="bold")

    # A: transposed on its way in, one float a copy.
    a_pass = threads // split
    a_scale = 2.2
    ax, ay = cx, 230
    cv.text(ax, ay - 6, "A: transposed into sA, one float a copy", size=9.5, va="bottom", weight="bold")
    cv.rect(ax, ay, bm * a_scale, split * a_scale, fill=tint(COPY, 0.1), edge=COPY, lw=1.0)
    cv.rect(ax + bm * a_scale, ay, a_pad * a_scale, split * a_scale, fill=IDLE, edge=MUTED, lw=0.5, hatch="///")
    for r in range(0, bm, a_pass):  # thread 0: k = 0 of rows 0, A_PASS, 2 A_PASS, ... of A
        cv.rect(ax + r * a_scale, ay, a_scale, a_scale * 1.5, fill=MARK, edge="none", z=3)
    cv.text(ax, ay + split * a_scale + 5,
            f"sA[{split}][{bm} + A_PAD]. Thread 0: k = 0 of rows 0, {a_pass},\n{2 * a_pass}, ... of A: "
            f"{bm // a_pass} copies into one row of sA. A vector\ncopy cannot scatter its floats into 4 rows.",
            size=8.5, va="top")
    cv.text(20, 420,
            f"A row of sB is BN + B_PAD = {bn + b_pad} floats, {(bn + b_pad) * 4} bytes, a multiple of {vector * 4}: "
            f"every {vector * 4}-byte destination stays aligned.\nAny padding (B_PAD, hatched where there is "
            f"some) must be a multiple of {vector} floats.", size=8.5, va="center", color=MUTED)
    return cv


# ---- 11: the next tile's copy before this tile's math -----------------------------------------

def draw_overlap(repo: Path) -> Canvas:
    before, after = knobs(repo, 10), knobs(repo, 11)
    cv = Canvas(height=350)
    cv.title("Step 11: the next tile's copy is issued before this tile's math")
    unit = 4.4  # pixels per k of math (schematic)
    copy, bar, frags = 14 * unit, 7, 5 * unit
    x0, xmax = 90, 780
    row_h = 28

    # Step 10: copy, barrier, math, barrier.
    y = 68
    cv.text(20, y - 8, f"step 10 (TUNE_SPLIT = {before['TUNE_SPLIT']}): the block waits for each copy; copy and "
            "math take turns", size=9.5, weight="bold", va="bottom")
    cv.text(x0 - 8, y + row_h / 2, "block", size=8, ha="right", color=MUTED)
    x, k_tile = x0, 0
    while x < xmax - 10:
        math = before["TUNE_SPLIT"] * unit
        for w, fill, label, color in ((copy, tint(COPY, 0.8), f"copy {k_tile}", "white"), (bar, INK, "", INK),
                                      (math, tint(MATH, 0.7), f"math of tile {k_tile}", INK), (bar, INK, "", INK)):
            end = min(x + w, xmax)
            cv.bar(x, end, y, row_h, fill, label, color=color)
            x = end
        k_tile += 1

    # Step 11: two lanes, the copies in flight above the threads.
    y = 150
    cv.text(20, y - 8, f"step 11 (TUNE_SPLIT = {after['TUNE_SPLIT']}): the copy of tile k+1 flies during tile "
            "k's math", size=9.5, weight="bold", va="bottom")
    cv.text(x0 - 8, y + 10, "in flight", size=8, ha="right", color=MUTED)
    ty = y + 32
    cv.text(x0 - 8, ty + row_h / 2, "block", size=8, ha="right", color=MUTED)
    math = after["TUNE_SPLIT"] * unit
    cv.bar(x0, x0 + copy, y, 20, tint(COPY, 0.8), "copy 0", color="white")
    x, k_tile = x0 + copy, 0
    while x < xmax - 10:
        for w, fill in ((bar, INK), (frags, tint(MATH, 0.35)), (bar, INK)):
            end = min(x + w, xmax)
            cv.bar(x, end, ty, row_h, fill)
            x = end
        if x < xmax:
            cv.bar(x, min(x + copy, xmax), y, 20, tint(COPY, 0.8), f"copy {k_tile + 1}", color="white")
            cv.arrow(x, ty, x, y + 21, color=COPY, lw=0.9)
            end = min(x + math, xmax)
            cv.bar(x, end, ty, row_h, tint(MATH, 0.7), f"math {k_tile}")
            x = end
        k_tile += 1
    regs = after["TUNE_SPLIT"] * (after["THREAD_TILE_Y"] + after["THREAD_TILE_X"])
    cv.text(20, ty + row_h + 12,
            "Each k tile: a barrier (tile k has landed); every thread reads all its fragments of tile k into "
            f"registers\n(TUNE_SPLIT x (TY + TX) = {regs} floats); a second barrier (the one shared buffer may be "
            "overwritten);\nthen the copy of tile k+1 is issued (arrow), and tile k's math runs from registers.",
            size=8.5, va="top")
    _legend(cv, x0, 300, [(tint(COPY, 0.8), "cp.async copy of a tile", None), (INK, "barrier", None),
                          (tint(MATH, 0.35), "shared -> registers", None), (tint(MATH, 0.7), "FFMAs", None)],
            size=8.5)
    _time_arrow(cv, x0, xmax, 322)
    return cv


# ---- 12: two shared stages, two register buffers ---------------------------------------------

def draw_double_buffer(repo: Path) -> Canvas:
    kn = knobs(repo, 12)
    stages, split = kn["STAGES"], kn["TUNE_SPLIT"]
    ty, tx = kn["THREAD_TILE_Y"], kn["THREAD_TILE_X"]
    cv = Canvas(height=370)
    cv.title(f"Step 12: {stages} shared stages, and {stages} register buffers inside a tile")
    x0, xmax = 110, 780
    tile, copy, bar = 150.0, 100.0, 7  # pixels (schematic): a copy flies for less than a tile's math
    row_h, y0 = 28, 66
    cv.text(20, y0 - 10, f"shared memory: the copy of tile k+1 fills stage (k+1) % {stages} while the math "
            f"reads stage k % {stages}", size=9.5, weight="bold", va="bottom")
    for s in range(stages):
        cv.text(x0 - 8, y0 + s * (row_h + 6) + row_h / 2, f"stage {s}", size=9, ha="right")
    math_y = y0 + stages * (row_h + 6) + 4
    cv.text(x0 - 8, math_y + row_h / 2, "math", size=9, ha="right")

    def start(t: int) -> float:  # when tile t's math starts
        return x0 + copy + bar + t * (tile + bar)

    for t in range(6):
        y = y0 + (t % stages) * (row_h + 6)
        issue = x0 if t == 0 else start(t - 1)  # issued right after the barrier at the top of tile t-1
        if issue >= xmax:
            break
        cv.bar(issue, min(issue + copy, xmax), y, row_h, tint(COPY, 0.8), f"copy of tile {t}", color="white")
        if start(t) < xmax:
            cv.bar(issue + copy, start(t), y, row_h, tint(COPY, 0.3))
            cv.bar(start(t), min(start(t) + tile, xmax), y, row_h, tint(MATH, 0.45), f"read by tile {t}")
            cv.bar(start(t), min(start(t) + tile, xmax), math_y, row_h, tint(MATH, 0.7), f"math of tile {t}")
            cv.rect(start(t) - bar, y0 - 3, bar, math_y + row_h - y0 + 6, fill=INK, edge="none", z=4)
    _legend(cv, x0, math_y + row_h + 18, [(tint(COPY, 0.8), "copy in flight", None), (tint(COPY, 0.3), "landed", None),
                                          (tint(MATH, 0.45), "read by the math", None),
                                          (INK, "barrier: one a tile", None)], size=8.5)

    # Inside a tile: register double buffering.
    y = math_y + row_h + 78
    cv.text(20, y - 12, f"inside a tile: a_frag[2][{ty}] and b_frag[2][{tx}], 2 x ({ty} + {tx}) = {2 * (ty + tx)} "
            f"registers: k+1 loads while k's FFMAs run", size=9.5, weight="bold", va="bottom")
    step, lds = 80.0, 30.0
    for b in range(2):
        cv.text(x0 - 8, y + b * 32 + 13, f"buffer {b}", size=9, ha="right")
    cv.bar(x0, x0 + lds, y, 26, tint(MATH, 0.35), "k=0", size=8)
    for k in range(min(split, 9)):
        x = x0 + lds + k * step
        if x + step - 2 > xmax:
            break
        cv.bar(x, x + step - 2, y + (k % 2) * 32, 26, tint(MATH, 0.7), f"FFMA k={k}", size=8)
        load = x + step - 2 - lds - 4  # k+1's fragments into the other buffer, under k's FFMAs
        if k + 1 < split:
            cv.bar(load, load + lds, y + ((k + 1) % 2) * 32, 26, tint(MATH, 0.35), f"k={k + 1}", size=8)
    _legend(cv, x0, y + 78, [(tint(MATH, 0.35), "shared -> registers (LDS)", None),
                             (tint(MATH, 0.7), "FFMAs", None)], size=8.5)
    cv.text(x0 + 330, y + 78, f"... {split} k a tile", size=8.5, color=MUTED)
    _time_arrow(cv, x0, xmax, y + 100)
    return cv


# ---- 13: a ring of STAGES -------------------------------------------------------------------

def draw_multi_stage(repo: Path) -> Canvas:
    kn = knobs(repo, 13)
    stages = kn["STAGES"]
    cv = Canvas(height=350)
    cv.title(f"Step 13: a ring of STAGES = {stages} shared stages, {stages - 1} tiles' copies in flight")

    # The ring at the top of tile k (y grows downwards: angles run clockwise, -90 is the top).
    cx, cy, r = 125, 145, 72
    for s in range(stages):
        a0 = -90 + 360 * s / stages
        a1 = a0 + 360 / stages
        color = tint(MATH, 0.55) if s == 0 else tint(COPY, 0.8)
        cv.ax.add_patch(matplotlib.patches.Wedge((cx, cy), r, a0, a1, width=34, facecolor=color,
                                                 edgecolor="white", linewidth=2, zorder=2))
        mid = math.radians((a0 + a1) / 2)
        cv.text(cx + (r - 17) * math.cos(mid), cy + (r - 17) * math.sin(mid), str(s), size=10, ha="center",
                weight="bold", color=INK if s == 0 else "white")
    cv.arrow(cx + r + 8, cy - 30, cx + r + 8, cy + 30, color=MUTED, lw=1.0, rad=-0.4)
    cv.text(cx + r + 22, cy, "each\ntile", size=8, color=MUTED)
    cv.text(cx, cy, "stages at\nthe top of\ntile k", size=8.5, ha="center", color=MUTED)
    roles = ["being read by tile k"] + [f"filling with tile k+{i}" for i in range(1, stages)]
    for s, role in enumerate(roles):
        cv.text(20, 240 + s * 17, f"stage {s}: {role}", size=8.5, color=MATH if s == 0 else COPY)
    cv.text(20, 240 + stages * 17 + 6,
            f"After tile k's barrier, tile k+{stages - 1}\ngoes into the stage that tile k-1\nwas read from.",
            size=8.5, va="top")

    # The timeline.
    x0, xmax = 320, 780
    tile, flight, bar = 60.0, 95.0, 5  # schematic: a copy flies longer than one tile's math
    row_h, y0 = 26, 56

    def start(t: int) -> float:
        return x0 + flight + bar + t * (tile + bar)

    for s in range(stages):
        cv.text(x0 - 8, y0 + s * (row_h + 6) + row_h / 2, f"stage {s}", size=9, ha="right")
    math_y = y0 + stages * (row_h + 6) + 4
    cv.text(x0 - 8, math_y + row_h / 2, "math", size=9, ha="right")
    for t in range(12):
        y = y0 + (t % stages) * (row_h + 6)
        issue = x0 if t < stages - 1 else start(t - stages + 1)
        if issue >= xmax:
            break
        cv.bar(issue, min(issue + flight, xmax), y, row_h, tint(COPY, 0.8))
        if issue + 50 < xmax:
            cv.text(issue + 5, y + row_h / 2, f"copy {t}", size=8, color="white", z=9)
        if issue + flight < min(start(t), xmax):
            cv.bar(issue + flight, min(start(t), xmax), y, row_h, tint(COPY, 0.3))
        if start(t) < xmax:
            cv.bar(start(t), min(start(t) + tile, xmax), y, row_h, tint(MATH, 0.45), f"read {t}", size=8)
            cv.bar(start(t), min(start(t) + tile, xmax), math_y, row_h, tint(MATH, 0.7), f"tile {t}", size=8)
            cv.rect(start(t) - bar, math_y, bar, row_h, fill=INK, edge="none", z=4)
            cv.line(start(t) - bar / 2, y0 - 3, start(t) - bar / 2, math_y, color=MUTED, lw=0.6, ls=":", z=4)
    k = 3
    cv.rect(start(k) - 1, y0 - 5, tile + 2, math_y + row_h - y0 + 10, edge=MARK, lw=1.2, ls="--", z=8)
    cv.text(start(k) + tile / 2, math_y + row_h + 10,
            f"while tile {k} is read, tiles {', '.join(str(k + i) for i in range(1, stages))} are in flight",
            size=8.5, color=MARK, va="top", ha="center")
    _legend(cv, 250, 250, [(tint(COPY, 0.8), "copy in flight", None), (tint(COPY, 0.3), "landed", None),
                           (tint(MATH, 0.45), "read", None), (INK, "barrier", None)], size=8.5)
    cv.text(250, 272,
            f"cp.async.wait_group {stages - 2} at the top of a tile lets the newest "
            f"{'group' if stages - 2 == 1 else f'{stages - 2} groups'} of copies\nkeep flying: a copy may take up to "
            f"{stages - 1} tiles of math before the block waits for it.", size=8.5, va="top")
    _time_arrow(cv, x0, xmax, 326)
    return cv


# ---- SMs against time (15, 16, 19) --------------------------------------------------------------

class Gantt:
    """SMs down, time across: rows of SMs (a row may stand for a band of many), x in k-tile
    or tile times."""

    def __init__(self, cv: Canvas, x0: float, x1: float, y0: float, height: float, sms: int, span: float):
        self.cv, self.x0, self.x1, self.y0, self.height, self.sms, self.span = cv, x0, x1, y0, height, sms, span

    def x(self, t: float) -> float:
        return self.x0 + (self.x1 - self.x0) * t / self.span

    def y(self, sm: float) -> float:
        return self.y0 + self.height * sm / self.sms

    def block(self, sm0, sm1, t0, t1, fill, label="", color=INK, hatch=None, edge="white", size=8.5, lw=0.5):
        self.cv.bar(self.x(t0), self.x(t1), self.y(sm0), self.y(sm1) - self.y(sm0), fill, label, color=color,
                    hatch=hatch, edge=edge, size=size, lw=lw)

    def frame(self, label: str, ticks: list[float], unit: str) -> None:
        cv = self.cv
        cv.rect(self.x0, self.y0, self.x1 - self.x0, self.height, fill="none", edge=MUTED, lw=0.6, z=7)
        cv.text(self.x0 - 6, self.y0 + self.height / 2, label, size=8.5, ha="right", color=MUTED)
        for t in ticks:
            cv.line(self.x(t), self.y0 + self.height, self.x(t), self.y0 + self.height + 4, color=MUTED)
            cv.text(self.x(t), self.y0 + self.height + 5, f"{t:g}", size=8, ha="center", va="top", color=MUTED)
        cv.text(self.x1, self.y0 + self.height + 20, unit, size=8, ha="right", va="top", color=MUTED)


def _sm_label(g: Gantt, sm0: int, sm1: int, text: str, color=INK) -> None:
    g.cv.text(g.x0 - 6, (g.y(sm0) + g.y(sm1)) / 2, text, size=8.5, ha="right", color=color)


def draw_split_k(repo: Path) -> Canvas:
    m = n = k = 1024
    p = plan(repo, 15, m, n, k)
    gain = knobs(repo, 15)["MIN_GAIN_PERCENT"]
    later = [number for number in range(16, 21) if plan(repo, number, m, n, k).splits == p.splits]
    cv = Canvas(height=450)
    cv.title(f"Step 15: split-K at {m}^3 on {p.sms} SMs: {p.tiles} tiles of {p.bm} x {p.bn}, K in {p.splits} pieces")
    span = p.k_tiles + 1
    ticks = [t for t in range(0, p.k_tiles + 1, 4)]
    shades = [tint(MATH, a) for a in (0.95, 0.75, 0.55, 0.4, 0.3, 0.22, 0.16, 0.12)]
    x0, x1 = 90, 600

    g = Gantt(cv, x0, x1, 62, 110, p.sms, span)
    cv.text(x0, 54, f"whole tiles: {p.tiles} blocks, each all {p.k_tiles} k tiles of its tile", size=9.5,
            weight="bold", va="bottom")
    g.block(0, p.tiles, 0, p.k_tiles, shades[0], f"{p.tiles} blocks x {p.k_tiles} k tiles", color="white")
    g.block(p.tiles, p.sms, 0, span, IDLE, f"{p.sms - p.tiles} SMs idle", hatch="///", edge="#d0d0d0", color=MUTED)
    g.frame(f"{p.sms}\nSMs", ticks, "time in k tiles")
    cv.text(g.x(p.k_tiles) + 12, g.y(p.tiles / 2), f"ends after {p.k_tiles} k tiles", size=9, color=MARK)

    g2 = Gantt(cv, x0, x1, 248, 110, p.sms, span)
    cv.text(x0, 240, f"split-K: {p.tiles} tiles x {p.splits} pieces of {p.length} k tiles = {p.blocks} blocks, "
            "then the reduction", size=9.5, weight="bold", va="bottom")
    for piece in range(p.splits):  # blockIdx.z is the piece: each piece's blocks side by side
        length = p.length if piece < p.splits - 1 else p.last
        first = piece * p.length
        g2.block(piece * p.tiles, (piece + 1) * p.tiles, 0, length, shades[piece % len(shades)],
                 f"piece {piece}: k {first}-{first + length - 1}", color="white" if piece < 2 else INK)
    if p.blocks < p.sms:
        g2.block(p.blocks, p.sms, 0, span, IDLE, "", hatch="///", edge="#d0d0d0")
        cv.text(x1 + 6, g2.y((p.blocks + p.sms) / 2), f"{p.sms - p.blocks} SMs idle", size=8.5, color=MUTED)
    g2.block(0, p.blocks, p.length, p.length + p.partial_sums, REDUCE, "")
    g2.frame(f"{p.sms}\nSMs", ticks, "time in k tiles")
    end = p.length + p.partial_sums
    cv.text(g2.x(end) + 12, g2.y(p.blocks * 0.3),
            f"ends after {p.length} k tiles and the reduction\n(green: the {p.splits} partial sums added, "
            f"{p.partial_sums:.1f} k tiles\nin choose_splits' estimate)", size=9, color=MARK, va="center")

    same = (f" Steps {later[0]}-{later[-1]} cut {m}^3 the same way." if later == list(range(16, 21)) else "")
    cv.text(20, 402,
            f"choose_splits takes more pieces only where they cut its estimate (waves x k tiles a piece, plus "
            f"the partial sums)\nby {gain}%: here {p.splits} pieces, {p.blocks} blocks in one wave of {p.sms} SMs."
            f"{same}", size=8.5, va="top")
    return cv


def _stream_ranges(total: int, blocks: int) -> list[int]:
    """Where each block's range of stream-K iterations starts (stream_start), and the end."""
    return [total * b // blocks for b in range(blocks + 1)]


def draw_stream_k(repo: Path) -> Canvas:
    m = n = k = 4096
    p = plan(repo, 16, m, n, k)
    waves = p.tiles / p.sms
    full = p.dp_tiles // p.sms
    total = p.sk_tiles * p.k_tiles
    share = total / p.sms / p.k_tiles  # tiles' worth of iterations per SM
    cv = Canvas(height=525)
    cv.title(f"Step 16: stream-K at {m}^3 on {p.sms} SMs: {p.tiles} tiles are {waves:.2f} waves")
    span = full + 1.15
    ticks = [t for t in range(0, full + 2)]
    wave_colors = [tint(MATH, a) for a in (0.9, 0.65, 0.45, 0.3)]
    x0, x1 = 90, 640

    g = Gantt(cv, x0, x1, 60, 100, p.sms, span)
    last = p.tiles - full * p.sms
    cv.text(x0, 52, f"whole tiles only: {full + 1} waves, the last with {last} tiles", size=9.5, weight="bold",
            va="bottom")
    for w in range(full):
        g.block(0, p.sms, w, w + 1, wave_colors[w % 4], f"wave {w + 1}", color="white" if w == 0 else INK)
    g.block(0, last, full, full + 1, wave_colors[full % 4], f"wave {full + 1}: {last} tiles")
    g.block(last, p.sms, full, full + 1, IDLE, "", hatch="///", edge="#d0d0d0")
    cv.text(x1 + 6, g.y((last + p.sms) / 2), f"{p.sms - last} SMs idle", size=8.5, color=MUTED)
    g.frame(f"{p.sms}\nSMs", ticks, "time in tiles")
    cv.line(g.x(full + 1), 54, g.x(full + 1), 166, color=MARK, lw=1.0, ls="--", z=8)

    g2 = Gantt(cv, x0, x1, 226, 100, p.sms, span)
    cv.text(x0, 218, f"stream-K: {full} waves of whole tiles, then the last {p.sk_tiles} tiles' k iterations "
            f"shared by all {p.sms}", size=9.5, weight="bold", va="bottom")
    for w in range(full):
        g2.block(0, p.sms, w, w + 1, wave_colors[w % 4], f"wave {w + 1}", color="white" if w == 0 else INK)
    g2.block(0, p.sms, full, full + share, COPY, f"{share:.2f} tile", color="white")
    fix = _stream_fixup_tiles(p)
    g2.block(0, p.sms, full + share, full + share + fix, REDUCE, "", lw=0)
    g2.frame(f"{p.sms}\nSMs", ticks, "time in tiles")
    cv.line(g2.x(full + share), 220, g2.x(full + share), 332, color=MARK, lw=1.0, ls="--", z=8)
    rx = g2.x(full + share + fix)
    cv.arrow(x1 + 4, 250, rx + 2, 250, color=REDUCE, lw=1.0)
    cv.text(x1 + 8, 250, "fix-up: the cut\ntiles' pieces added", size=8.5, va="center")
    cv.text(g2.x(full + 1) + 6, 300, f"ends {1 - share:.2f} of a\ntile earlier", size=8.5, color=MARK,
            va="center")

    # The blue part, zoomed in: the partial wave's iterations end to end, and the blocks' ranges.
    y = 410
    tiles_shown = 6
    starts = _stream_ranges(total, p.sms)
    shown = tiles_shown * p.k_tiles
    px = (780 - x0) / shown
    cv.text(20, y - 24, f"The blue part: the {p.sk_tiles} tiles' {total:,} k iterations end to end, cut into "
            f"{p.sms} equal ranges (the first {tiles_shown} tiles):", size=9, va="bottom", weight="bold")
    cv.text(x0 - 6, y + 10, "tiles", size=8.5, ha="right", color=MUTED)
    cv.text(x0 - 6, y + 36, "blocks", size=8.5, ha="right", color=MUTED)
    for t in range(tiles_shown):
        a, b = t * p.k_tiles, (t + 1) * p.k_tiles
        cv.bar(x0 + a * px, x0 + b * px, y, 20, tint(COPY, 0.6 if t % 2 else 0.35))
        cv.text(x0 + (a + b) / 2 * px, y - 3, f"tile {t}: {p.k_tiles} k tiles", size=8, ha="center", va="bottom")
    for b in range(p.sms):
        a, e = starts[b], min(starts[b + 1], shown)
        if a >= shown:
            break
        cv.bar(x0 + a * px, x0 + e * px, y + 26, 20, tint(MATH, 0.6 if b % 2 else 0.35))
        if e == starts[b + 1]:
            cv.text(x0 + (a + e) / 2 * px, y + 49, f"block {b}: {e - a}", size=8, ha="center", va="top")
        if a:
            cv.line(x0 + a * px, y - 1, x0 + a * px, y + 47, color=MARK, lw=1.2, z=8)
    cut = sum(1 for t in range(p.sk_tiles) if any(t * p.k_tiles < x < (t + 1) * p.k_tiles for x in starts))
    cv.text(20, y + 72,
            f"{f'All {cut}' if cut == p.sk_tiles else f'{cut} of the {p.sk_tiles}'} tiles are cut (red): each block stores its "
            "piece of a cut tile to a slot, and the reduction\nadds the pieces in k order, the same bits on every "
            "run. Stream-K: Osama et al., arXiv:2301.03598.", size=8.5, va="top")
    return cv


def _stream_fixup_tiles(p: Plan) -> float:
    """The stream-K reduction in tile times, a napkin estimate to draw it: the cut tiles' pieces
    (one per range that holds part of a cut tile) written and read back, charged as
    choose_splits charges partial sums (Plan.traffic)."""
    starts = _stream_ranges(p.sk_tiles * p.k_tiles, p.sms)
    pieces = 0
    for t in range(p.sk_tiles):
        a, b = t * p.k_tiles, (t + 1) * p.k_tiles
        inside = sum(1 for s in starts[1:-1] if a < s < b)
        pieces += inside + 1 if inside else 0
    return p.traffic(pieces * p.bm * p.bn * 4.0) / p.k_tiles


# ---- 17: copy instructions ------------------------------------------------------------------

def draw_copy_instructions(repo: Path) -> Canvas:
    before = copies_per_k_tile(repo, 16, both_paths=True)
    after = copies_per_k_tile(repo, 17)
    stated = header_copy_counts(repo)
    vector = knobs(repo, 17)["COPY_VECTOR"]
    cv = Canvas(height=350)
    cv.title("Step 17: copy instructions a thread issues per k tile")
    unit = 10.0
    x0 = 150
    rows = [("step 16", before), ("step 17", after)]
    for i, (label, counts) in enumerate(rows):
        y = 62 + i * 74
        total = counts["A"] + counts["B"] + counts["B off"]
        cv.text(20, y + 16, f"{label}\n{total} copies", size=10, weight="bold")
        x = x0
        parts = [("A", tint(COPY, 0.45), f"A: {counts['A']} x 4 B", INK, None),
                 ("B", COPY, f"B: {counts['B']} x {vector * 4} B", "white", None),
                 ("B off", "white", f"B: {counts['B off']} x 4 B, predicated off", MARK, "///")]
        for key, fill, text, color, hatch in parts:
            if counts[key]:
                w = counts[key] * unit
                cv.bar(x, x + w, y, 34, fill, text, color=color, edge=tint(MARK, 0.6) if hatch else "white",
                       hatch=hatch, lw=1.0 if hatch else 0.8)
                x += w
    if (before["A"] + before["B"] + before["B off"], after["A"] + after["B"]) != stated:
        raise ValueError(f"pictures: step 17's header says {stated}, the knobs give "
                         f"{(before['A'] + before['B'] + before['B off'], after['A'] + after['B'])}")

    # One vector of B, as each kernel compiles it.
    y, vx = 222, 180
    cv.text(20, y - 8, f"one {vector}-float vector of B:", size=9.5, weight="bold", va="bottom")
    cv.text(20, y + 12, "step 16:", size=9, va="center")
    cv.text(vx - 6, y + 12, "if aligned", size=8.5, va="center", ha="right", color=MUTED)
    cv.bar(vx, vx + 120, y, 24, COPY, f"1 copy of {vector * 4} B", color="white")
    cv.text(vx + 126, y + 12, "else", size=8.5, color=MUTED)
    for v in range(vector):
        cv.bar(vx + 156 + v * 46, vx + 156 + (v + 1) * 46 - 2, y, 24, "white", "4 B", color=MARK,
               edge=tint(MARK, 0.6), hatch="///", lw=1.0)
    cv.text(vx + 156 + vector * 46 + 6, y + 12, "both compiled, one side predicated\noff: still issued, "
            "still queued", size=8.5, color=MARK)
    cv.text(20, y + 52, "step 17:", size=9, va="center")
    cv.text(vx - 6, y + 52, "B_ALIGNED", size=8.5, va="center", ha="right", color=MUTED)
    cv.bar(vx, vx + 120, y + 40, 24, COPY, f"1 copy of {vector * 4} B", color="white")
    cv.text(20, y + 80, "Counted from the knobs: A, BM x TUNE_SPLIT / threads one-float copies; B, TUNE_SPLIT x BN / "
            "(4 x threads)\nvectors; the totals are those step 17's header states.", size=8.5, color=MUTED, va="top")
    return cv


# ---- 18: stream-K first -------------------------------------------------------------------

def draw_stream_k_first(repo: Path) -> Canvas:
    m = n = k = 4096
    p = plan(repo, 18, m, n, k)
    kn = knobs(repo, 18)
    full = p.dp_tiles // p.sms
    share = p.sk_tiles / p.sms
    cv = Canvas(height=320)
    cv.title(f"Step 18: at {m}^3, stream-K first, and its reduction beside the whole tiles")
    x0, xmax = 110, 610
    span = full + 1.3
    px = (xmax - x0) / span
    red = 0.22  # the reduction, widened to be seen (the napkin estimate, _stream_fixup_tiles, is about 0.01 of a tile)
    row_h = 30

    def row(y, pieces):
        x = x0
        for w, fill, label, color in pieces:
            cv.bar(x, x + w * px, y, row_h, fill, label, color=color)
            x += w * px
        return x

    whole = [(1, tint(MATH, 0.75 - 0.15 * i), f"whole tile {i + 1}", INK) for i in range(full)]
    y17, y18 = 70, 168
    cv.text(20, y17 + row_h / 2, "step 17\none SM", size=10, weight="bold")
    cv.text(x0, y17 - 5, "whole tiles, then the stream-K share; the reduction kernel after, alone", size=8.5,
            va="bottom", color=MUTED)
    end17 = row(y17, whole + [(share, COPY, "stream-K", "white"), (red, REDUCE, "", "white")])
    cv.text(end17 - red * px / 2, y17 - 5, "reduction", size=8, ha="center", va="bottom", color=REDUCE)

    cv.text(20, y18 + row_h / 2, "step 18\none SM", size=10, weight="bold")
    cv.text(x0, y18 - 5, "the stream-K share first, then the whole tiles, the reduction beside them", size=8.5,
            va="bottom", color=MUTED)
    end18 = row(y18, [(share, COPY, "stream-K", "white")] + whole)
    bx = x0 + share * px + 4
    cv.bar(bx, bx + red * px, y18 + row_h + 6, 16, REDUCE)
    cv.text(bx + red * px + 6, y18 + row_h + 14,
            f"reduction blocks of {kn['BESIDE_REDUCE_THREADS']} threads ({kn['BESIDE_REDUCE_REGISTERS']} "
            "registers a thread at most) beside a block of whole tiles", size=8.5, va="center")
    for end in (end17, end18):
        cv.line(end, y17 - 2, end, y18 + row_h + 2, color=MARK, lw=1.0, ls="--", z=8)
    cv.arrow(end17, y18 - 22, end18, y18 - 22, color=MARK, lw=1.0)
    cv.text(end17 + 8, y18 - 22, "the reduction leaves\nthe critical path", size=8.5, color=MARK, va="center")
    _time_arrow(cv, x0, xmax, 248, "time in tiles (the reduction drawn wider)")
    cv.text(20, 276,
            f"{p.tiles} tiles on {p.sms} SMs: {p.dp_tiles} whole tiles ({full} waves) and the k iterations of "
            f"{p.sk_tiles} tiles, shared evenly ({share:.2f} of a tile an SM).\nThe whole tiles do not read what "
            "stream-K writes: their blocks start as stream-K's leave.", size=8.5, va="top")
    return cv


# ---- 19: a short last piece ------------------------------------------------------------------

def draw_short_last_piece(repo: Path) -> Canvas:
    m, n, k = 1024, 1024, 8192
    before, after = plan(repo, 18, m, n, k), plan(repo, 19, m, n, k)
    idle = before.sms - before.blocks
    turns = -(-after.tiles // idle) if idle > 0 else 0
    cv = Canvas(height=500)
    cv.title(f"Step 19: {m} x {n} x {k} on {after.sms} SMs: a short last piece of K for the idle SMs")
    span = before.length + 3
    ticks = [t for t in range(0, before.length + 1, 16)]
    row = 11

    def panel(y0: float, p: Plan, title: str) -> Gantt:
        long_blocks = p.tiles * (p.splits - 1 if p.short else p.splits)
        rows = 4 + 1 + 4 + max(p.sms - long_blocks, 0)  # SMs 0-3, a band for the rest, 4 more, the others
        g = Gantt(cv, 110, 740, y0, row * rows, rows, span)
        cv.text(110, y0 - 8, title, size=9.5, weight="bold", va="bottom")
        for r in range(9):
            sm = r if r < 4 else long_blocks - 9 + r
            if r == 4:
                g.block(r, r + 1, 0, p.length, tint(MATH, 0.45), f"SMs 4-{long_blocks - 5}", size=7.5)
                _sm_label(g, r, r + 1, "...", MUTED)
                continue
            g.block(r, r + 1, 0, p.length, tint(MATH, 0.8), f"{p.length} k tiles" if r == 0 else "", size=7.5)
            g.cv.text(g.x0 - 6, (g.y(r) + g.y(r + 1)) / 2, f"SM {sm}", size=7.5, ha="right")
        if rows > 9:
            for r in range(9, rows):
                g.cv.text(g.x0 - 6, (g.y(r) + g.y(r + 1)) / 2, f"SM {long_blocks + r - 9}", size=7.5, ha="right")
            if p.short:
                for r in range(9, rows):
                    for turn in range(turns):
                        g.block(r, r + 1, turn * p.last, (turn + 1) * p.last,
                                SHORT if turn % 2 else tint(SHORT, 0.55))
            else:
                g.block(9, rows, 0, span, IDLE, f"{rows - 9} SMs idle", hatch="///", edge="#d0d0d0", color=MUTED)
        g.frame("", ticks, "time in k tiles")
        for t in (after.length, before.length):
            cv.line(g.x(t), y0 - 2, g.x(t), y0 + row * rows + 2, color=MARK, lw=0.9, ls="--", z=8)
            cv.text(g.x(t) + (-3 if t < before.length else 3), y0 - 4, str(t), size=8, color=MARK, va="bottom",
                    ha="right" if t < before.length else "left")
        return g

    panel(64, before, f"step 18: {before.splits} pieces of {before.length} k tiles, {before.blocks} blocks, "
          f"{idle} SMs idle")
    if after.short:
        g = panel(276, after, f"step 19: {after.splits - 1} pieces of {after.length} k tiles and a last of "
                  f"{after.last}: {after.tiles * (after.splits - 1)} long blocks, {after.tiles} short")
        cv.text(g.x(turns * after.last) + 8, g.y(9 + idle / 2),
                f"{after.tiles} short pieces of {after.last} k tiles:\n{turns} turns on each of the {idle} SMs",
                size=8.5, color=SHORT, va="center", backdrop=True)
        why = (f"piece_length tries pieces shorter than {before.length} k tiles: at {after.length}, the long blocks "
               f"take {after.length} and the short ones' {turns} turns of {after.last} take {turns * after.last};\n"
               f"the longer of the two, {max(after.length, turns * after.last)}, beats {before.length}. "
               "The reduction after them adds one more piece.")
    else:
        panel(276, after, f"step 19: {after.splits} pieces of {after.length} k tiles, as in step 18")
        why = "piece_length finds no shorter piece that pays at this shape: step 19 launches step 18's pieces."
    cv.text(20, 452, why, size=8.5, va="top")
    return cv


# ---- 24: the TMA ring -----------------------------------------------------------------------

def draw_tma_ring(repo: Path) -> Canvas:
    kn = knobs(repo, 24)
    src = source_text(repo, 24)
    stages, bm, bn, split, box = kn["STAGES"], kn["BM"], kn["BN"], kn["TUNE_SPLIT"], kn["B_BOX"]
    a_bytes, b_bytes = bm * split * 4, split * bn * 4
    consumers = bn // int(re.search(r"WGMMA_M\s*=\s*(\d+)", src).group(1))
    if not re.search(r"barrier_expect_bytes\(&full\[s\],\s*A_TILE_BYTES \+ B_TILE_BYTES\)", src):
        raise ValueError("pictures: step 24 no longer expects A_TILE_BYTES + B_TILE_BYTES on full[s]")
    threads = 128 * consumers
    cv = Canvas(height=480)
    cv.title(f"Step 24: TMA copies into a ring of {stages} stages, each with a \"full\" mbarrier")

    # The ring at the top of k tile k.
    sx0, sw, gap = 130, 130, 20
    width = stages * sw + (stages - 1) * gap
    cv.rect(sx0, 46, width, 30, fill=tint(COPY, 0.85), edge="none")
    cv.text(sx0 + width / 2, 61, f"thread 0: per stage, expect_tx, then 1 TMA copy of A and {bn // box} of B",
            size=9, ha="center", color="white")
    sy, sh = 104, 54
    cv.text(20, sy + sh / 2, "shared\nstages", size=9.5, weight="bold")
    cv.text(20, sy + sh + 32, "full\nmbarriers", size=9.5, weight="bold")
    cv.text(20, sy + sh + 94, f"{threads}\nthreads", size=9.5, weight="bold")
    for s in range(stages):
        x = sx0 + s * (sw + gap)
        if s == 0:
            fill, what = tint(MATH, 0.45), "tile k:\nlanded, being read"
        elif s < stages - 1:
            fill, what = tint(COPY, 0.3), f"tile k+{s}:\nbytes arriving"
        else:
            fill, what = "white", f"tile k-1: done; gets\nk+{stages - 1} after the barrier"
        cv.rect(x, sy, sw, sh, fill=fill, edge=INK, lw=1.0)
        cv.text(x + 6, sy + 10, f"stage {s}", size=8.5, weight="bold")
        cv.text(x + sw / 2, sy + 35, what, size=8.5, ha="center")
        if 0 < s < stages - 1:
            cv.arrow(x + sw / 2, 77, x + sw / 2, sy - 1, color=COPY, lw=1.2)
        elif s == stages - 1:
            cv.arrow(x + sw / 2, 77, x + sw / 2, sy - 1, color=COPY, lw=1.2, ls="--")
        cx, cy = x + sw / 2, sy + sh + 30
        cv.line(cx, sy + sh, cx, cy - 11, color=REDUCE, lw=1.0)
        cv.rect(cx - 28, cy - 11, 56, 22, fill="white", edge=REDUCE, lw=1.4, z=4)
        cv.text(cx, cy, f"full[{s}]", size=8, ha="center", color=REDUCE)
        if s == 0:
            cv.arrow(cx, cy + 12, cx, sy + sh + 78, color=REDUCE, lw=1.2)
    cv.text(sx0 + sw / 2 + 14, sy + sh + 60,
            f"each counts its stage's {a_bytes + b_bytes:,} bytes (A: {bm} x {split} floats, B: {split} x {bn}), "
            "then completes", size=8.5, color=REDUCE, va="center")
    ty = sy + sh + 80
    cv.rect(sx0, ty, width, 30, fill=tint(MATH, 0.75), edge="none")
    cv.text(sx0 + width / 2, ty + 15, "wait on full[s]; split A; __syncthreads; thread 0 refills a stage; wgmma",
            size=9, ha="center")

    # The timeline.
    y, tx0, xmax = 326, 130, 780
    cv.text(20, y - 10, "over the k tiles (schematic lengths):", size=9.5, weight="bold", va="bottom")
    tile, flight = 62.0, 150.0
    row_h = 17
    for s in range(stages):
        cv.text(tx0 - 8, y + s * (row_h + 3) + row_h / 2, f"stage {s}", size=8.5, ha="right")
    math_y = y + stages * (row_h + 3) + 3
    cv.text(tx0 - 8, math_y + row_h / 2, "math", size=8.5, ha="right")

    def start(t: int) -> float:
        return tx0 + flight + t * tile

    for t in range(16):
        issue = tx0 if t < stages - 1 else start(t - stages + 1)
        if issue >= xmax:
            break
        yy = y + (t % stages) * (row_h + 3)
        cv.bar(issue, min(issue + flight, xmax), yy, row_h, tint(COPY, 0.8))
        if issue + 48 < xmax:
            cv.text(issue + 5, yy + row_h / 2, f"TMA {t}", size=7.5, color="white", z=9)
        if issue + flight < min(start(t), xmax):
            cv.bar(issue + flight, min(start(t), xmax), yy, row_h, tint(COPY, 0.3))
        if issue + flight < xmax:
            cv.ax.add_patch(matplotlib.patches.Circle((issue + flight, yy + row_h / 2), 3.5, facecolor=REDUCE,
                                                      edgecolor="white", zorder=7))
        if start(t) < xmax:
            cv.bar(start(t), min(start(t) + tile, xmax), yy, row_h, tint(MATH, 0.45))
            cv.bar(start(t), min(start(t) + tile, xmax), math_y, row_h, tint(MATH, 0.75), f"tile {t}", size=7.5)
    _legend(cv, tx0, math_y + row_h + 16, [(tint(COPY, 0.8), "TMA in flight", None), (tint(COPY, 0.3), "landed", None),
                                           (tint(MATH, 0.45), "read", None), (REDUCE, "full completes", None)],
            size=8.5)
    cv.text(tx0, math_y + row_h + 32, f"{stages - 1} tiles' copies ahead of the math; a stage is refilled once "
            "every thread is past the barrier of the next tile.", size=8.5, va="top")
    return cv


# ---- 25: warp specialisation ----------------------------------------------------------------

def draw_warp_specialized(repo: Path) -> Canvas:
    kn = knobs(repo, 25)
    src = source_text(repo, 25)
    stages, bn = kn["STAGES"], kn["BN"]
    wgmma_m = int(re.search(r"WGMMA_M\s*=\s*(\d+)", src).group(1))
    consumers = bn // wgmma_m
    producer_regs, consumer_regs, splitters = kn["PRODUCER_REGISTERS"], kn["CONSUMER_REGISTERS"], kn["SPLITTERS"]
    # Each stage's barriers and their arrival counts, as the kernel initialises them.
    names = {"SPLITTERS": splitters, "CONSUMERS": consumers}
    counts = {}
    for name, expr in re.findall(r"barrier_init\(&(\w+)\[s\],\s*([\w\s*]+?)\);", src):
        value = 1
        for factor in expr.split("*"):
            factor = factor.strip()
            value *= names[factor] if factor in names else int(factor)
        counts[name] = value
    for name in ("full", "split", "empty"):
        if name not in counts:
            raise ValueError(f"pictures: step 25 no longer initialises a `{name}` barrier per stage")

    cv = Canvas(height=450)
    cv.title(f"Step 25: a producer warpgroup, {consumers} consumer warpgroups, a ring of {stages} stages")
    # The warpgroups.
    px, py, pw, ph = 20, 56, 250, 150
    cv.rect(px, py, pw, ph, fill=tint(COPY, 0.08), edge=COPY, lw=1.2)
    cv.text(px + 8, py + 14, "warpgroup 0: the producer", size=9.5, weight="bold", color=COPY)
    cv.text(px + 8, py + 32, f"setmaxnreg.dec to {producer_regs} registers", size=8.5, color=MUTED)
    cv.rect(px + 10, py + 46, pw - 20, 50, fill=tint(SHORT, 0.55), edge="none")
    cv.text(px + pw / 2, py + 71, f"warps 1-3: {splitters} splitters,\neach A tile -> big + small (TF32)",
            size=8.5, ha="center")
    cv.rect(px + 10, py + 104, pw - 20, 34, fill=tint(COPY, 0.8), edge="none")
    cv.text(px + pw / 2, py + 121, "warp 0: one thread issues\nevery TMA copy", size=8.5, ha="center", color="white")
    cx, cw = 560, 220
    for c in range(consumers):
        y = py + c * 80
        cv.rect(cx, y, cw, 70, fill=tint(MATH, 0.12), edge=MATH, lw=1.2)
        cv.text(cx + 8, y + 14, f"warpgroup {c + 1}: a consumer", size=9.5, weight="bold", color=MATH)
        cv.text(cx + 8, y + 31, f"setmaxnreg.inc to {consumer_regs} registers", size=8.5, color=MUTED)
        cv.rect(cx + 10, y + 41, cw - 20, 22, fill=tint(MATH, 0.7), edge="none")
        cv.text(cx + cw / 2, y + 52, f"wgmma: {wgmma_m} columns of the tile", size=8.5, ha="center")

    # The ring at one moment: tile k multiplied (right), k+1 split (top), the later tiles' copies in
    # flight (y grows downwards, so decreasing angles run anticlockwise on the page).
    rx, ry, r = 415, 134, 62
    roles = [(tint(MATH, 0.6), "k: wgmma"), (tint(SHORT, 0.6), "k+1: split")] + \
        [(tint(COPY, 0.6), f"k+{i}: TMA") for i in range(2, stages)]
    step = 360 / stages
    for s in range(stages):
        mid_deg = -step * s
        fill, label = roles[s]
        cv.ax.add_patch(matplotlib.patches.Wedge((rx, ry), r, mid_deg - step / 2 + 1.5, mid_deg + step / 2 - 1.5,
                                                 width=28, facecolor=fill, edgecolor="white", linewidth=1.5,
                                                 zorder=2))
        mid = math.radians(mid_deg)
        cv.text(rx + (r - 14) * math.cos(mid), ry + (r - 14) * math.sin(mid), str(s), size=9, ha="center",
                weight="bold")
        lx, ly = rx + (r + 6) * math.cos(mid), ry + (r + 6) * math.sin(mid)
        ha = "center" if abs(math.cos(mid)) < 0.3 else ("left" if math.cos(mid) > 0 else "right")
        va = "top" if math.sin(mid) > 0.3 else "bottom"  # beside the wedge: above the arrows that reach it
        cv.text(lx, ly - (12 if abs(math.sin(mid)) < 0.3 else 0), label, size=8.5, ha=ha, va=va)
    cv.text(rx, ry, "stages,\none moment", size=8, ha="center", color=MUTED)
    cv.arrow(px + pw + 4, py + 71, rx - 14, ry - r - 2, color=SHORT, lw=1.1, rad=-0.2)
    cv.arrow(px + pw + 4, py + 121, rx - r - 2, ry + 10, color=COPY, lw=1.1)
    for c in range(consumers):
        cv.arrow(cx - 4, py + c * 80 + 35, rx + r + 2, ry + 4 + 10 * c, color=MATH, lw=1.1)

    # One stage's cycle.
    y = 262
    cv.text(20, y - 12, "one stage's cycle, on its three mbarriers (a k tile later, the next stage's):", size=9.5,
            weight="bold", va="bottom")
    steps = [("TMA thread", "waits on empty,\nissues the copies", COPY, False),
             ("full", f"{counts['full']} arrival + the\nbytes of the copies", REDUCE, True),
             ("splitters", "wait on full,\nsplit A in place", SHORT, False),
             ("split", f"{counts['split']} arrivals:\nA is split", REDUCE, True),
             ("consumers", "wait on full (B),\nsplit (A); wgmma", MATH, False),
             ("empty", f"{counts['empty']} arrivals:\nthe stage is free", REDUCE, True)]
    bw, gap = 112, 17.6
    for i, (name, what, color, barrier) in enumerate(steps):
        x = 20 + i * (bw + gap)
        cv.rect(x, y, bw, 58, fill="white" if barrier else tint(color, 0.3), edge=color, lw=1.4 if barrier else 1.0)
        cv.text(x + bw / 2, y + 13, name + (" barrier" if barrier else ""), size=8.5, ha="center", weight="bold",
                color=color if barrier else INK)
        cv.text(x + bw / 2, y + 38, what, size=8, ha="center")
        if i < len(steps) - 1:
            cv.arrow(x + bw + 1, y + 29, x + bw + gap - 1, y + 29, color=INK, lw=1.0)
    last = 20 + 5 * (bw + gap) + bw / 2
    cv.arrow(last, y + 60, 20 + bw / 2, y + 60, color=INK, lw=1.0, rad=-0.12)
    cv.text(400, y + 96, "the producer refills the stage", size=8.5, ha="center", color=MUTED, backdrop=True)

    total = producer_regs * 128 + consumer_regs * 128 * consumers
    cv.text(20, 388,
            f"Registers: {producer_regs} x 128 + {consumer_regs} x 128 x {consumers} = {total:,} of the SM's 65,536: "
            "the producer's warps give\nwhat they do not need to the consumers' accumulators. No block-wide "
            "barrier in the k loop: each warp\nwaits only for the stage it needs.", size=8.5, va="top")
    return cv


# ---- 26: split-K on tensor cores ----------------------------------------------------------------

@dataclass(frozen=True)
class TensorPlan:
    """Step 26's choose_splits for one shape (steps 26-29 share it): the pieces and the
    estimates it compared, in tile-times (one k tile of one block on the tensor cores)."""
    m: int
    n: int
    k: int
    sms: int
    bm: int
    bn: int
    tiles: int          # output tiles of BM x BN
    k_tiles: int        # k tiles of TUNE_SPLIT
    splits: int         # pieces launched per tile
    length: int         # k tiles per piece (the last may be shorter)
    overhead: int       # PIECE_OVERHEAD_TILES: a block's start and end, in tile-times
    gain: int           # MIN_GAIN_PERCENT
    tile_us: float      # one tile-time in microseconds
    clocks: float       # one tile-time in SM clocks
    estimates: tuple[float, ...]  # choose_splits' tile_times(s) for s = 1, 2, ..., its most

    def estimate(self, splits: int) -> float:
        return self.estimates[splits - 1]

    @property
    def last(self) -> int:
        return self.k_tiles - (self.splits - 1) * self.length

    @property
    def blocks(self) -> int:
        return self.tiles * self.splits

    @property
    def partial_sums(self) -> float:
        """The launched pieces' partial sums in the estimate, in tile-times."""
        waves = -(-self.blocks // self.sms)
        return self.estimate(self.splits) - waves * (self.length + self.overhead)

    @property
    def speedup(self) -> float:
        """The estimate of all of K in one piece over the chosen pieces'."""
        return self.estimate(1) / self.estimate(self.splits)


def tensor_plan(repo: Path, number: int, m: int, n: int, k: int, sms: int = SMS) -> TensorPlan:
    """Step `number`'s choose_splits (step 26 on) for an m x n x k GEMM on `sms` SMs: its knobs,
    its tensor-core rate and its three products per multiply-add (tile_us), with the H100's
    clock, bandwidth and L2 (scripts/paths.py's facts, what sgemm::gpu() reads on that GPU)."""
    kn, src, gpu, cdiv = knobs(repo, number), source_text(repo, number), paths(repo).H100, paths(repo).cdiv
    products = re.search(r"return\s+(\d+)(?:\.0)?\s*\*\s*BM\s*\*\s*BN\s*\*\s*TUNE_SPLIT\s*/", src)
    if not products:
        raise ValueError(f"pictures: step {number:02d}'s tile_us no longer reads `N * BM * BN * TUNE_SPLIT / ...`")
    bm, bn, split = kn["BM"], kn["BN"], kn["TUNE_SPLIT"]
    clocks = int(products.group(1)) * bm * bn * split / kn["TF32_FMAS_PER_SM_CLOCK"]
    tile_us = clocks / gpu["clock_mhz"]
    tiles, k_tiles = cdiv(m, bm) * cdiv(n, bn), cdiv(k, split)
    overhead, ratio = kn["PIECE_OVERHEAD_TILES"], kn["L2_BANDWIDTH_RATIO"]

    def partial_sums(pieces: int) -> float:  # partial_sums_tile_times
        size = pieces * m * n * 4.0
        in_l2 = min(size, 0.5 * gpu["l2_bytes"])
        return 2.0 * (in_l2 / ratio + size - in_l2) / gpu["dram_bytes_per_us"] / tile_us

    def tile_times(splits: int) -> float:
        per = cdiv(k_tiles, splits)
        pieces = cdiv(k_tiles, per)
        return cdiv(tiles * pieces, sms) * (per + overhead) + (partial_sums(pieces) if pieces > 1 else 0.0)

    most = min(kn["MAX_SPLITS"], max(1, k_tiles // kn["MIN_SPLIT_K_TILES"]))
    estimates = tuple(tile_times(s) for s in range(1, most + 1))
    best = 1
    for s in range(2, most + 1):
        if estimates[s - 1] * (100 + kn["MIN_GAIN_PERCENT"]) <= estimates[best - 1] * 100:
            best = s
    length = cdiv(k_tiles, best)
    return TensorPlan(m, n, k, sms, bm, bn, tiles, k_tiles, cdiv(k_tiles, length), length, overhead,
                      kn["MIN_GAIN_PERCENT"], tile_us, clocks, estimates)


def draw_tensor_split_k(repo: Path) -> Canvas:
    m, n, k = 256, 256, 16384
    p = tensor_plan(repo, 26, m, n, k)
    one = tensor_plan(repo, 26, 1024, 1024, 1024)
    cv = Canvas(height=620)
    cv.title(f"Step 26: {m} x {n} x {k} on {p.sms} SMs: {p.tiles} tiles of {p.bm} x {p.bn}, K in {p.splits} pieces")
    x0, x1 = 110, 640
    whole = p.k_tiles + p.overhead
    span = whole * 1.04
    ticks = [t for t in range(0, whole + 1, 100)]
    light, dark = tint(MATH, 0.8), tint(MATH, 0.5)

    # Step 25: the tiles alone, each block all of K.
    g = Gantt(cv, x0, x1, 66, 84, p.sms, span)
    cv.text(x0, 58, f"step 25: {p.tiles} blocks, each all {p.k_tiles} k tiles of its tile", size=9.5, weight="bold",
            va="bottom")
    g.block(0, p.tiles, 0, whole, MATH, edge=MATH)
    g.block(p.tiles, p.sms, 0, span, IDLE, f"{p.sms - p.tiles} SMs idle", hatch="///", edge="#d0d0d0", color=MUTED)
    g.frame(f"{p.sms}\nSMs", ticks, "time in tile-times")
    cv.text(g.x(whole) + 8, g.y(0) + 2, f"{p.tiles} SMs busy:\nends after {whole}", size=8.5, color=MARK, va="top")

    # Step 26, on the same scale.
    ends = p.estimate(p.splits)
    g2 = Gantt(cv, x0, x1, 216, 84, p.sms, span)
    cv.text(x0, 208, f"step 26, on the same scale: {p.tiles} tiles x {p.splits} pieces = {p.blocks} blocks, "
            "then the reduction", size=9.5, weight="bold", va="bottom")
    g2.block(0, p.blocks, 0, p.length + p.overhead, MATH, edge=MATH)
    g2.block(0, p.blocks, p.length + p.overhead, ends, REDUCE, edge=REDUCE)
    g2.frame(f"{p.sms}\nSMs", ticks, "time in tile-times")
    cv.text(g2.x(ends) + 10, g2.y(p.blocks / 2),
            f"ends after {ends:.1f}: {p.speedup:.0f} times sooner, in choose_splits' estimate", size=9, color=MARK)

    # Step 26, magnified: the pieces one by one.
    zoom = math.ceil(ends) + 2
    g3 = Gantt(cv, x0, x1, 366, 116, p.sms, zoom)
    cv.text(x0, 358, f"step 26, magnified: each band is a piece, {p.tiles} blocks of {p.length} k tiles "
            f"(the last {p.last})", size=9.5, weight="bold", va="bottom")
    half = p.overhead / 2
    for piece in range(p.splits):
        length = p.length if piece < p.splits - 1 else p.last
        fill = light if piece % 2 == 0 else dark
        sm0, sm1 = piece * p.tiles, (piece + 1) * p.tiles
        g3.block(sm0, sm1, 0, half, WAIT, edge=WAIT)
        g3.block(sm0, sm1, half, half + length, fill, edge=fill)
        g3.block(sm0, sm1, half + length, p.overhead + length, WAIT, edge=WAIT)
    g3.block(0, p.blocks, p.length + p.overhead, ends, REDUCE, edge=REDUCE)
    if p.blocks < p.sms:
        g3.block(p.blocks, p.sms, 0, zoom, IDLE, hatch="///", edge="#d0d0d0")
        cv.text(x1 + 6, g3.y((p.blocks + p.sms) / 2), f"{p.sms - p.blocks} SMs idle", size=8.5, color=MUTED)
    g3.frame("", list(range(0, zoom + 1, 2)), "time in tile-times")
    first = (p.splits - 1) * p.length
    cv.text(x0 - 6, g3.y(0), f"piece 0:\nk tiles 0-{p.length - 1}", size=8, ha="right", va="top")
    cv.text(x0 - 6, g3.y(p.blocks), f"piece {p.splits - 1}:\nk tiles {first}-{p.k_tiles - 1}", size=8,
            ha="right", va="bottom")
    cv.text(x0 - 6, g3.y(p.blocks / 2), f"{p.sms}\nSMs", size=8.5, ha="right", color=MUTED)
    cv.text(g3.x(ends) + 8, g3.y(p.blocks * 0.35),
            f"the reduction adds the\n{p.splits} partial sums in order\n"
            f"({ends - p.length - p.overhead:.1f} tile-times in the estimate)", size=8.5, color=REDUCE, va="center")
    _legend(cv, x0, 530, [(light, "k tiles of a piece", None),
                          (WAIT, f"a block's start and end ({p.overhead} tile-times in all)", None),
                          (REDUCE, "the partial sums", None)], size=8.5)

    # The best estimate with more pieces than chosen: why choose_splits stopped.
    later = [s for s in range(p.splits + 1, len(p.estimates) + 1) if p.estimate(s) < ends]
    stop = min(later, key=p.estimate) if later else None
    why = (f"{stop} pieces of {-(-p.k_tiles // stop)} k tiles would estimate {p.estimate(stop):.1f}, less than "
           f"{p.gain}% below {ends:.1f}: not taken." if stop else f"No more pieces estimate less than {ends:.1f}.")
    note = (f"A tile-time: one k tile of one block, {p.bm} x {p.bn} x {knobs(repo, 26)['TUNE_SPLIT']} multiply-adds "
            f"three times: {p.clocks:,.0f} clocks of an SM's tensor cores, {p.tile_us:.2f} us at "
            f"{paths(repo).H100['clock_mhz']:,} MHz. choose_splits' estimate: waves x (k tiles a piece + "
            f"{p.overhead}), plus the partial sums; it takes more pieces only where that falls by {p.gain}%. "
            f"{why} At {one.m}^3: {one.splits} pieces, {one.blocks} blocks, {one.speedup:.2f} times sooner.")
    cv.text(20, 550, "\n".join(textwrap.wrap(note, 118)), size=8.5, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "09_async_copy.svg": draw_async_copy,
    "10_vector_copy.svg": draw_vector_copy,
    "11_overlap.svg": draw_overlap,
    "12_double_buffer.svg": draw_double_buffer,
    "13_multi_stage.svg": draw_multi_stage,
    "15_split_k.svg": draw_split_k,
    "16_stream_k.svg": draw_stream_k,
    "17_copy_instructions.svg": draw_copy_instructions,
    "18_stream_k_first.svg": draw_stream_k_first,
    "19_short_last_piece.svg": draw_short_last_piece,
    "24_tma_ring.svg": draw_tma_ring,
    "25_warp_specialized.svg": draw_warp_specialized,
    "26_tensor_split_k.svg": draw_tensor_split_k,
}
PICTURES: dict[str, Callable[[Path], str]] = {name: partial(_svg, draw) for name, draw in _DRAWINGS.items()}


def picture_png(name: str, repo: Path) -> bytes:
    """A PNG twin of a picture, to look at it."""
    return _render(_DRAWINGS[name], repo, "png")


def main(argv: list[str]) -> int:
    repo = Path(__file__).resolve().parents[1]
    png_dir = Path(argv[argv.index("--png") + 1]) if "--png" in argv else None
    out = repo / PICTURES_DIR
    out.mkdir(parents=True, exist_ok=True)
    for name, draw in PICTURES.items():
        (out / name).write_text(draw(repo), encoding="utf-8")
        if png_dir:
            png_dir.mkdir(parents=True, exist_ok=True)
            (png_dir / name.replace(".svg", ".png")).write_bytes(picture_png(name, repo))
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
