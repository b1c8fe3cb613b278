"""Step 21's picture (docs/pictures/21_chosen_tile.svg): the block tile, and the split of K, that
step 21's launch chooses for an M x N x K GEMM on the H100, over a plane of M and N for a few K.

It is drawn from a port of the step's plan() and launch() (`Rule` below), which reads the step's
`.cu` file: the tiles from their `using TileBMxBN = Tile<THREADS_X, THREADS_Y, THREAD_TILE_X,
THREAD_TILE_Y, WARP_SHAPE_X, PEAK_PERCENT_...[, VECTOR_A]>;` lines, in the order written (the
first is step 20's, the one a smaller tile must beat by MIN_GAIN_PERCENT), and the knobs from their
`SGEMM_KNOB(NAME, value)` lines (TUNE_SPLIT, the split's and stream-K's knobs, the PEAK_PERCENT_*
shares, STREAM_K_OVERHEAD_K_TILES, MIN_GAIN_PERCENT). The GPU's facts are the H100's:
scripts/paths.py's clock, FP32 lanes, device memory bandwidth and L2 (what sgemm::gpu() reads on
that GPU), 132 SMs, and for each tile the blocks per SM that the CUDA occupancy API answers there
(H100_BLOCKS_PER_SM). Those depend on the compiler's register counts, so they are the one input
written here and not read from the source; plots/tests/test_pictures_plan.py holds them to what
the knobs' shared memory allows.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_plan` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_time import (INK, MUTED, PICTURES_DIR, SMS, Canvas, _render, _svg, knobs, paths,
                                 source_text, text_width, tint)

STEP = 21
# Blocks per SM of each tile's kernels on the H100 (cudaOccupancyMaxActiveBlocksPerMultiprocessor
# with the kernel's shared memory, as whole_slots() and gpu_slots() ask it): the unsplit kernel,
# then the split kernel (two stages and the pairs' box). 128 x 128's kernels need more than 128
# registers a thread, so one block of 256 threads fills the SM's registers; the others are held
# by their shared memory.
H100_BLOCKS_PER_SM = {"128x256": (1, 1), "128x128": (1, 1), "64x128": (3, 3), "64x64": (4, 5), "256x64": (1, 1), "64x256": (1, 1),
                     "16x128": (4, 5), "128x16": (4, 5)}
# The H100's shared memory: 228 KiB an SM, of which the runtime keeps 1 KiB per block.
H100_SHARED_PER_SM = 233472
H100_SHARED_RESERVED = 1024

WHOLE, SPLIT, STREAM = "whole-tiles", "split-K", "stream-K"


@dataclass(frozen=True)
class Tile:
    """One of step 21's tiles, as its `using` line builds it."""
    name: str          # "BMxBN", as SGEMM_TILE and the path name it
    threads_x: int
    threads_y: int
    thread_tile_x: int
    thread_tile_y: int
    warp_shape_x: int
    peak_knob: str     # PEAK_PERCENT_BMXBN

    @property
    def bm(self) -> int:
        return self.threads_y * self.thread_tile_y

    @property
    def bn(self) -> int:
        return self.threads_x * self.thread_tile_x

    @property
    def threads(self) -> int:
        return self.threads_x * self.threads_y


def step_tiles(repo: Path) -> list[Tile]:
    """The tiles of step 21, in the order its source declares them."""
    found = re.findall(r"using\s+Tile(\w+)\s*=\s*Tile<\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(PEAK_PERCENT_\w+)\s*(?:,\s*\w+\s*)?>;",
                       source_text(repo, STEP))
    if not found:
        raise ValueError(f"pictures: step {STEP}'s source declares no `using TileBMxBN = Tile<...>;`")
    tiles = [Tile(name, *(int(v) for v in values), peak) for name, *values, peak in found]
    for tile in tiles:
        if tile.name != f"{tile.bm}x{tile.bn}":
            raise ValueError(f"pictures: Tile{tile.name} is {tile.bm} x {tile.bn}")
    return tiles


@dataclass(frozen=True)
class TilePlan:
    """One tile's plan() for one shape: step 20's choices and the estimated time."""
    tile: Tile
    tiles: int          # output tiles of BM x BN
    k_tiles: int        # k tiles of TUNE_SPLIT
    chosen: int         # choose_splits's pieces
    length: int         # piece_length's k tiles per piece
    splits: int         # the pieces launched
    sk_tiles: int       # stream-K's tiles (0: none)
    us: float           # the estimate, microseconds

    @property
    def kind(self) -> str:
        return STREAM if self.sk_tiles else WHOLE if self.splits == 1 else SPLIT


class Rule:
    """Step 21's plan() for each tile and launch()'s choice among them, on the H100."""

    def __init__(self, repo: Path, sms: int = SMS):
        self.knobs = knobs(repo, STEP)
        self.tiles = step_tiles(repo)
        self.sms = sms
        p = paths(repo)
        self.gpu, self.cdiv = p.H100, p.cdiv
        missing = [t.name for t in self.tiles if t.name not in H100_BLOCKS_PER_SM]
        if missing:
            raise ValueError(f"pictures: no H100 blocks per SM for the tiles {missing}")

    def peak_percent(self, tile: Tile) -> int:
        return self.knobs[tile.peak_knob]

    def slots(self, tile: Tile) -> tuple[int, int]:
        """(whole_slots(), gpu_slots()): blocks of the unsplit and of the split kernel at once."""
        whole, split = H100_BLOCKS_PER_SM[tile.name]
        return self.sms * whole, self.sms * split

    def shared_bytes(self, tile: Tile) -> tuple[int, int]:
        """(SHARED_BYTES, SHARED_BYTES_SPLIT) of the tile: the unsplit kernel's stages, the split
        kernel's stages and the pairs' box with its mbarriers."""
        k = self.knobs
        stage = (tile.bm + k["A_PAD"] + tile.bn + k["B_PAD"]) * k["TUNE_SPLIT"] * 4
        box = k["PAIR_ROWS"] * tile.thread_tile_x * tile.threads * 4
        return k["STAGES"] * stage, k["STAGES_SPLIT"] * stage + box + k["PAIR_ROWS"] * 8

    def plan(self, tile: Tile, m: int, n: int, k: int) -> TilePlan:
        """Tile::plan: choose_splits, piece_length and stream_k_tiles, and their time."""
        kn, gpu, cdiv, sms = self.knobs, self.gpu, self.cdiv, self.sms
        whole_slots, slots = self.slots(tile)
        split = kn["TUNE_SPLIT"]
        fmas = tile.bm * tile.bn * split
        k_tile_us = fmas / (gpu["lanes"] * (self.peak_percent(tile) / 100.0) * gpu["clock_mhz"])
        nominal_us = fmas / (gpu["lanes"] * gpu["clock_mhz"])
        tiles, k_tiles = cdiv(m, tile.bm) * cdiv(n, tile.bn), cdiv(k, split)
        min_piece, gain = kn["MIN_SPLIT_K_TILES"], kn["MIN_GAIN_PERCENT"]

        def partial_sums(pieces: int) -> float:  # partial_sums_tile_times
            size = pieces * m * n * 4.0
            in_l2 = min(size, 0.5 * gpu["l2_bytes"])
            return 2.0 * (in_l2 / kn["L2_BANDWIDTH_RATIO"] + size - in_l2) / gpu["dram_bytes_per_us"] / nominal_us

        def tile_times(s: int) -> float:  # choose_splits's estimate
            per = cdiv(k_tiles, s)
            pieces = cdiv(k_tiles, per)
            return cdiv(tiles * pieces, slots) * per + (partial_sums(pieces) if pieces > 1 else 0.0)

        most = min(kn["MAX_SPLITS"], max(1, k_tiles // min_piece))
        chosen = 1
        for s in range(2, most + 1):
            if tile_times(s) * (100 + gain) <= tile_times(chosen) * 100:
                chosen = s
        length = cdiv(k_tiles, chosen)  # piece_length
        pieces = cdiv(k_tiles, length)
        idle = slots - tiles * pieces
        if kn["TAIL_PIECES"] and pieces > 1 and idle > 0:
            best, best_time = length, length
            shorter = length - 1
            while shorter >= min_piece and k_tiles // shorter == pieces:
                tail = k_tiles - pieces * shorter
                if not 0 < tail < min_piece:
                    turns = 0 if tail == 0 else cdiv(tiles, idle)
                    time = max(shorter, turns * (tail + kn["TAIL_OVERHEAD_K_TILES"]))
                    if time < best_time:
                        best, best_time = shorter, time
                shorter -= 1
            length = best
        splits = cdiv(k_tiles, length)

        def time_us(blocks: int, slots_: int, k_tiles_each: int) -> float:
            waves = cdiv(blocks, slots_)
            sharing = min(slots_ // sms, cdiv(blocks, sms))
            return waves * k_tiles_each * max(1, sharing) * k_tile_us

        if splits > 1:  # choose_splits's pieces; a short last piece runs on SMs they leave idle
            us = time_us(tiles * chosen, slots, cdiv(k_tiles, chosen)) + partial_sums(chosen) * nominal_us
            return TilePlan(tile, tiles, k_tiles, chosen, length, splits, 0, us)
        us, sk_tiles = time_us(tiles, whole_slots, k_tiles), 0
        if kn["STREAM_K"] and tiles > slots and tiles % slots and (tiles % slots) * k_tiles >= slots:
            candidate = tiles % slots  # stream_k_tiles: the partial last wave
            stream_us = (time_us(tiles - candidate, slots, k_tiles)
                         + time_us(slots, slots, cdiv(candidate * k_tiles, slots) + kn["STREAM_K_OVERHEAD_K_TILES"]))
            if stream_us < us:
                us, sk_tiles = stream_us, candidate
        return TilePlan(tile, tiles, k_tiles, chosen, length, splits, sk_tiles, us)

    def priced(self, tile: Tile, m: int, n: int) -> bool:
        """Whether choose() prices the tile for an M x N rectangle: a tile of fewer rows (columns)
        than THIN_BELOW only where M (N) is below it too."""
        thin = self.knobs["THIN_BELOW"]
        return not ((tile.bm < thin and m >= thin) or (tile.bn < thin and n >= thin))

    def plans(self, m: int, n: int, k: int) -> list[TilePlan]:
        return [self.plan(tile, m, n, k) for tile in self.tiles]

    def choose(self, m: int, n: int, k: int) -> TilePlan:
        """launch(): the smallest estimate of the smaller tiles, where it beats the first tile's
        (step 20's) by MIN_GAIN_PERCENT; else the first tile."""
        first, *others = self.plans(m, n, k)
        others = [p for p in others if self.priced(p.tile, m, n)]
        if not others:
            return first
        smallest = min(others, key=lambda p: p.us)
        return smallest if smallest.us * (100 + self.knobs["MIN_GAIN_PERCENT"]) <= first.us * 100 else first


# ---- the picture --------------------------------------------------------------------------------

COLORS = ("#c9d6ea", "#8fc79a", "#f2b26b", "#c7a5d9", "#e8e08a", "#9ed3d6", "#e6a3a3", "#b5b5b5")  # the tiles, in order
SIZES = [64 << i for i in range(9)]   # 64 .. 16384 along M and N
PANEL_KS = (256, 1024, 4096, 16384)
HATCH = {SPLIT: "////", STREAM: "..."}


def _size_label(size: int) -> str:
    return f"{size // 1024}K" if size >= 1024 else str(size)


def draw_chosen_tile(repo: Path) -> Canvas:
    rule = Rule(repo)
    kn = rule.knobs
    colors = {tile.name: COLORS[i] for i, tile in enumerate(rule.tiles)}
    first = rule.tiles[0]
    cell = 25
    side = cell * len(SIZES)
    rows = len(rule.tiles) + 1  # the legend: a line per tile, one for the hatches
    lefts = (92, 462)
    top = 66 + rows * 19 + 52
    tops = (top, top + side + 60)
    cv = Canvas(height=tops[1] + side + 96)
    cv.title(f"Step {STEP}: the block tile chosen for M x N x K on the H100 ({rule.sms} SMs)")

    # The legend: a tile's colour, its outputs per thread, its share of the peak, its blocks per SM.
    y = 46
    cv.text(20, y, "colour: the tile that runs", size=9, weight="bold")
    for i, tile in enumerate(rule.tiles):
        whole, split = H100_BLOCKS_PER_SM[tile.name]
        per_sm = f"{whole} block{'s' if whole > 1 else ''} an SM" + (f", {split} when K is split" if split != whole else "")
        own = ", step 20's" if tile is first else ""
        yy = y + 19 * (i + 1)
        cv.rect(20, yy - 6, 16, 12, fill=colors[tile.name], edge=MUTED, lw=0.6)
        cv.text(42, yy, f"{tile.bm} x {tile.bn}{own}: {tile.thread_tile_y} x {tile.thread_tile_x} outputs a thread, "
                f"{rule.peak_percent(tile)}% of the FP32 peak in the estimate, {per_sm}", size=8.5)
    yy = y + 19 * rows
    x = 20
    for kind, label in ((SPLIT, "K split into pieces (split-K)"), (STREAM, "stream-K for the last wave")):
        cv.rect(x, yy - 6, 16, 12, fill="white", edge=INK, lw=0.6, hatch=HATCH[kind])
        cv.text(x + 22, yy, label, size=8.5)
        x += 22 + text_width(label, 8.5) + 24
    cv.text(x, yy, "plain: whole tiles, a block each", size=8.5, color=MUTED)

    for index, k in enumerate(PANEL_KS):
        x0, y0 = lefts[index % 2], tops[index // 2]
        k_tiles = rule.cdiv(k, kn["TUNE_SPLIT"])
        cv.text(x0 + side / 2, y0 - 30, f"K = {k}: {k_tiles} k tiles", size=10, weight="bold", ha="center", va="bottom")
        for j, n in enumerate(SIZES):
            cv.text(x0 + (j + 0.5) * cell, y0 - 4, _size_label(n), size=7.5, ha="center", va="bottom", color=MUTED)
        for i, m in enumerate(SIZES):
            cv.text(x0 - 4, y0 + (i + 0.5) * cell, _size_label(m), size=7.5, ha="right", color=MUTED)
            for j, n in enumerate(SIZES):
                chosen = rule.choose(m, n, k)
                cx, cy = x0 + j * cell, y0 + i * cell
                cv.rect(cx, cy, cell, cell, fill=colors[chosen.tile.name], edge="white", lw=0.8, z=1)
                if chosen.kind in HATCH:
                    cv.rect(cx, cy, cell, cell, fill="none", edge=tint(INK, 0.7), lw=0, hatch=HATCH[chosen.kind], z=2)
        cv.rect(x0, y0, side, side, fill="none", edge=MUTED, lw=0.6, z=3)
        cv.text(x0 + side / 2, y0 - 17, "N  (columns of C)", size=8, ha="center", va="bottom", color=MUTED)
        cv.text(x0 - 38, y0 + side / 2, "M  (rows of C)", size=8, ha="center", rotation=90, color=MUTED)

    note = (f"Each tile's plan() takes step 20's choices (choose_splits, piece_length, stream_k_tiles) and "
            f"estimates the time: waves x k tiles a block x one k tile's time (BM x BN x {kn['TUNE_SPLIT']} FMAs "
            f"at the tile's share of the peak, times the blocks sharing an SM), plus the partial sums. "
            f"Stream-K is charged {kn['STREAM_K_OVERHEAD_K_TILES']} k tiles more. A smaller tile runs where its "
            f"estimate beats {first.bm} x {first.bn}'s by {kn['MIN_GAIN_PERCENT']}%. A tile thinner than "
            f"{kn['THIN_BELOW']} rows or columns runs only where C (or a strip of it) is that thin too, which no "
            f"cell here is. Shapes are powers of two.")
    cv.text(20, tops[1] + side + 16, "\n".join(textwrap.wrap(note, 126)), size=8.5, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "21_chosen_tile.svg": draw_chosen_tile,
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
