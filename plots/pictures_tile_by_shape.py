"""Step 37's picture (docs/pictures/37_tile_by_shape.svg): the block tile that step 37's launch
runs for an M x N x K GEMM on the H100, the wide 128 x 128 (two consumer warpgroups) or the
narrow 128 x 64 (one), with the pieces of K and the place of A's split that the chosen tile's
own estimate takes, over a plane of M and N for a few K.

It is drawn from a port of the step's choose_tile() (`Rule` below: tile_us, partial_sums_tile_times,
tile_times, choose_splits, team_size, split_place, plan_for, choose_tile), which reads the step's
`.cu` file: the knobs from their `SGEMM_KNOB(NAME, value)` lines (BM, BN, TUNE_SPLIT, split-K's,
NARROW_TILE_PERCENT, L2_BANDWIDTH_RATIO, PASS_THREADS, PASS_LOADS, RAW_MIN_K,
IN_PIPELINE_SPLIT_PERCENT, TENSOR_PERCENT, PASS_US, SWEEP_US), TF32_FMAS_PER_SM_CLOCK, the narrow
tile's width (NARROW_BN = WGMMA_M), the products per multiply-add of tile_us(), and the pass's
bytes per value of A and its charge for a long row's chunks from the lines of split_place that
price them; it refuses a source whose team_size(), split_place() or choose_tile() no longer reads
as the lines ported. The wide tile's pieces are step 36's choose_splits (step 26's);
plots/tests/test_pictures_tile_by_shape.py holds them to plots/pictures_time.py's port of it
(`tensor_plan`) and the port to the choices step 37 reported on the H100. The GPU's facts are
the H100's: scripts/paths.py's clock, device memory bandwidth and L2 (what sgemm::gpu() reads on
that GPU) and 132 SMs.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_tile_by_shape` writes it
to docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from matplotlib.patches import Polygon

from plots.pictures_time import (INK, MUTED, PICTURES_DIR, SMS, Canvas, _render, _svg, knobs, paths, source_text,
                                 tint)

STEP = 37
PIPELINE, ONCE = "in-pipeline", "split-once"    # where A is split, as the step's path names it
WHOLE, SPLIT = "whole-tiles", "split-K"


def _require_in(src: str, pattern: str, what: str, step: int = STEP) -> re.Match:
    found = re.search(pattern, src, re.S)
    if not found:
        raise ValueError(f"pictures: step {step}'s source {what}")
    return found


@dataclass(frozen=True)
class Source:
    """What the port reads from the step's source besides its knobs, each checked against the
    line it ports."""
    narrow_bn: int         # NARROW_BN = WGMMA_M: the narrow tile's columns
    products: int          # tile_us(): products per multiply-add (3: 3xTF32)
    bytes_per_value: int   # split_place(): the pass's bytes per value of A (8: A read, its small part written)
    first_team: int        # team_size(): the first team, a warp
    tile_gain: str = "MIN_GAIN_PERCENT"  # choose_tile()'s margin: MIN_GAIN_PERCENT (steps 37-39) or TILE_GAIN_PERCENT (40)

    @classmethod
    def read(cls, repo: Path, step: int = STEP) -> "Source":
        src = source_text(repo, step)
        _require = partial(_require_in, step=step)
        wgmma_m = _require(src, r"constexpr int WGMMA_M = (\d+)\b", "declares no `constexpr int WGMMA_M = N`")
        _require(src, r"constexpr int NARROW_BN = WGMMA_M;", "no longer makes the narrow tile WGMMA_M wide")
        products = _require(
            src, r"const double wide = (\d+)(?:\.0)? \* BM \* BN \* TUNE_SPLIT / "
                 r"\(double\(TF32_FMAS_PER_SM_CLOCK\) \* sgemm::gpu\(\)\.clock_mhz\);\s*"
                 r"return bn == BN \? wide : wide \* NARROW_TILE_PERCENT / 100\.0;",
            "no longer prices a k tile as `wide = N * BM * BN * TUNE_SPLIT / (...)`, the narrow tile "
            "NARROW_TILE_PERCENT of it")
        team = _require(src, r"int team_size\(int k\) \{\s*int team = (\d+);\s*"
                             r"while \(team < PASS_THREADS && team \* PASS_LOADS < k\) team \*= 2;\s*return team;\s*\}",
                        "no longer has the team_size() loop the picture ports")
        priced = _require(
            src, r"const int chunks = sgemm::ceil_div\(p\.K, team_size\(p\.K\) \* PASS_LOADS\);\s*"
                 r"const double bytes = (\d+)(?:\.0)? \* p\.M \* p\.K;\s*"
                 r"const double pass_us = bytes / sgemm::gpu\(\)\.dram_bytes_per_us \+ PASS_US \+ "
                 r"\(chunks - 1\) \* SWEEP_US;",
            "no longer prices the pass as `N * p.M * p.K` bytes, PASS_US and (chunks - 1) * SWEEP_US")
        _require(src, r"if \(p\.K < RAW_MIN_K\) return pipeline;\s*"
                      r"return pass_us < gemm_us \* IN_PIPELINE_SPLIT_PERCENT / 100\.0 \? once : pipeline;",
                 "no longer places A's split by `pass_us < gemm_us * IN_PIPELINE_SPLIT_PERCENT / 100.0`")
        gain = _require(src, r"return narrow\.place\.us \* \(100 \+ (MIN_GAIN_PERCENT|TILE_GAIN_PERCENT)\) <= "
                             r"wide\.place\.us \* 100 \? narrow : wide;",
                        "no longer chooses the narrow tile where its estimate beats the wide one's by "
                        "MIN_GAIN_PERCENT or TILE_GAIN_PERCENT")
        return cls(int(wgmma_m.group(1)), int(products.group(1)), int(priced.group(1)), int(team.group(1)),
                   gain.group(1))


@dataclass(frozen=True)
class Plan:
    """plan_for(): one tile's pieces of K and split_place's place and estimate, for one shape."""
    bm: int
    bn: int
    tiles: int          # output tiles of BM x bn
    k_tiles: int        # k tiles of TUNE_SPLIT
    per_piece: int      # k tiles of a piece (the last may be shorter)
    splits: int         # pieces launched per tile
    gemm_us: float      # the GEMM without a split in its pipeline: tile_times at TENSOR_PERCENT
    pass_us: float      # the pass before it, where A is split once
    once: bool
    us: float           # Place::us: the pass and the GEMM, or the GEMM with its pipeline's split

    @property
    def place(self) -> str:
        return ONCE if self.once else PIPELINE

    @property
    def kind(self) -> str:
        return WHOLE if self.splits == 1 else SPLIT

    @property
    def tile(self) -> str:
        """tile_name(): "128x128", "128x64", as SGEMM_TILE and the path name it."""
        return f"{self.bm}x{self.bn}"

    @property
    def path(self) -> str:
        """As launch_with() names it to sgemm::took_path: whole-tiles/split-once/128x128, ..."""
        return f"{self.kind}/{self.place}/{self.tile}"


class Rule:
    """Step 37's choose_tile(): plan_for() each tile (choose_splits, then split_place), and the
    narrow tile where its estimate beats the wide tile's by MIN_GAIN_PERCENT (step 40:
    TILE_GAIN_PERCENT); on the H100 (or
    on `gpu`, a dict of scripts/paths.py's facts: clock_mhz, dram_bytes_per_us, l2_bytes). A
    later step that keeps the rule (`step`: 40 runs it for each rectangle of C) is read instead."""

    def __init__(self, repo: Path, sms: int = SMS, gpu: dict | None = None, step: int = STEP):
        self.sms = sms
        self.knobs = knobs(repo, step)
        p = paths(repo)
        self.gpu, self.cdiv = dict(p.H100 if gpu is None else gpu), p.cdiv
        self.source = Source.read(repo, step)
        self.wide_bn, self.narrow_bn = self.knobs["BN"], self.source.narrow_bn

    def tile_us(self, bn: int) -> float:
        """tile_us(bn): one k tile of one block, BM x BN x TUNE_SPLIT FMAs three times (3xTF32)
        at the SM's TF32 tensor rate for the wide tile; NARROW_TILE_PERCENT of that for the narrow."""
        kn = self.knobs
        wide = (self.source.products * kn["BM"] * kn["BN"] * kn["TUNE_SPLIT"]
                / (float(kn["TF32_FMAS_PER_SM_CLOCK"]) * self.gpu["clock_mhz"]))
        return wide if bn == kn["BN"] else wide * kn["NARROW_TILE_PERCENT"] / 100.0

    def partial_sums_tile_times(self, m: int, n: int, pieces: int, bn: int) -> float:
        """M x N floats per piece written and read back: what fits in half the L2 at
        L2_BANDWIDTH_RATIO times the device memory's bandwidth, the rest at that bandwidth, in
        the tile's own tile-times."""
        size = float(pieces) * m * n * 4
        in_l2 = min(size, 0.5 * self.gpu["l2_bytes"])
        return (2.0 * (in_l2 / self.knobs["L2_BANDWIDTH_RATIO"] + (size - in_l2))
                / self.gpu["dram_bytes_per_us"] / self.tile_us(bn))

    def tiles(self, m: int, n: int, bn: int) -> int:
        return self.cdiv(m, self.knobs["BM"]) * self.cdiv(n, bn)

    def tile_times(self, m: int, n: int, k: int, splits: int, bn: int) -> float:
        """Waves of one block an SM x (a piece's k tiles + PIECE_OVERHEAD_TILES), plus the
        partial sums where K is cut."""
        kn, cdiv = self.knobs, self.cdiv
        k_tiles = cdiv(k, kn["TUNE_SPLIT"])
        per = cdiv(k_tiles, splits)
        pieces = cdiv(k_tiles, per)
        blocks = self.tiles(m, n, bn) * pieces
        return (float(cdiv(blocks, self.sms) * (per + kn["PIECE_OVERHEAD_TILES"]))
                + (self.partial_sums_tile_times(m, n, pieces, bn) if pieces > 1 else 0.0))

    def choose_splits(self, m: int, n: int, k: int, bn: int) -> int:
        kn = self.knobs
        k_tiles = self.cdiv(k, kn["TUNE_SPLIT"])
        most = min(kn["MAX_SPLITS"], max(1, k_tiles // kn["MIN_SPLIT_K_TILES"]))
        best = 1
        for splits in range(2, most + 1):
            if (self.tile_times(m, n, k, splits, bn) * (100 + kn["MIN_GAIN_PERCENT"])
                    <= self.tile_times(m, n, k, best, bn) * 100):
                best = splits
        return best

    def team_size(self, k: int) -> int:
        """The fewest threads of the pass (a warp, doubled up to PASS_THREADS) whose PASS_LOADS
        loads each cover K."""
        team = self.source.first_team
        while team < self.knobs["PASS_THREADS"] and team * self.knobs["PASS_LOADS"] < k:
            team *= 2
        return team

    def pass_us(self, m: int, k: int) -> float:
        """The pass before the GEMM: its bytes at the device memory's bandwidth, PASS_US, and
        SWEEP_US for each chunk of a row after the first."""
        kn = self.knobs
        chunks = self.cdiv(k, self.team_size(k) * kn["PASS_LOADS"])
        return (float(self.source.bytes_per_value) * m * k / self.gpu["dram_bytes_per_us"] + kn["PASS_US"]
                + (chunks - 1) * kn["SWEEP_US"])

    def plan_for(self, m: int, n: int, k: int, bn: int) -> Plan:
        """plan_for(): the pieces (no piece left empty), then split_place's place and estimate
        (SGEMM_SPLIT unset)."""
        kn, cdiv = self.knobs, self.cdiv
        k_tiles = cdiv(k, kn["TUNE_SPLIT"])
        per = cdiv(k_tiles, self.choose_splits(m, n, k, bn))
        splits = cdiv(k_tiles, per)
        gemm_us = self.tile_times(m, n, k, splits, bn) * self.tile_us(bn) * 100.0 / kn["TENSOR_PERCENT"]
        pass_us = self.pass_us(m, k)
        once = k >= kn["RAW_MIN_K"] and pass_us < gemm_us * kn["IN_PIPELINE_SPLIT_PERCENT"] / 100.0
        us = pass_us + gemm_us if once else gemm_us * (100 + kn["IN_PIPELINE_SPLIT_PERCENT"]) / 100.0
        return Plan(kn["BM"], bn, self.tiles(m, n, bn), k_tiles, per, splits, gemm_us, pass_us, once, us)

    def plans(self, m: int, n: int, k: int) -> tuple[Plan, Plan]:
        """(the wide tile's plan, the narrow tile's)."""
        return self.plan_for(m, n, k, self.wide_bn), self.plan_for(m, n, k, self.narrow_bn)

    def choose(self, m: int, n: int, k: int) -> Plan:
        """choose_tile() (SGEMM_TILE unset): the narrow tile where its estimate x (100 +
        MIN_GAIN_PERCENT, or in step 40 TILE_GAIN_PERCENT) is at most the wide tile's x 100."""
        wide, narrow = self.plans(m, n, k)
        return narrow if narrow.us * (100 + self.knobs[self.source.tile_gain]) <= wide.us * 100 else wide


# ---- the picture --------------------------------------------------------------------------------

WIDE_COLOR, NARROW_COLOR = "#c9d6ea", "#f2b26b"
SIZES = [64 << i for i in range(9)]   # 64 .. 16384 along M and N
PANEL_KS = (64, 256, 1024, 8192)
CELL = 29                              # pixels a side of a cell
SIDE = CELL * len(SIZES)
LEFTS = (92, 478)                      # the panels' left edges, two to a row
TOPS = (182, 182 + SIDE + 66)          # their top edges
ONCE_MARK = tint(INK, 0.8)


def _size_label(size: int) -> str:
    return f"{size // 1024}K" if size >= 1024 else str(size)


def _corner(cv: Canvas, x: float, y: float, size: float, z: int = 4) -> None:
    """The mark of a cell whose A is split once: a triangle in its top right corner."""
    cv.ax.add_patch(Polygon([(x - size, y), (x, y), (x, y + size)], closed=True, facecolor=ONCE_MARK,
                            edgecolor="none", zorder=z))


def draw_tile_by_shape(repo: Path) -> Canvas:
    rule = Rule(repo)
    kn = rule.knobs
    bm, wide_bn, narrow_bn = kn["BM"], rule.wide_bn, rule.narrow_bn
    colors = {wide_bn: WIDE_COLOR, narrow_bn: NARROW_COLOR}
    cell, side, lefts, tops = CELL, SIDE, LEFTS, TOPS
    cv = Canvas(height=tops[1] + side + 122)
    cv.title(f"Step {STEP}: the block tile chosen for M x N x K on the H100 ({rule.sms} SMs)")

    y = 46
    cv.text(20, y, "colour: the tile that runs", size=9, weight="bold")
    legend = ((wide_bn, f"{bm} x {wide_bn}, two consumer warpgroups (steps 25-36's tile)"),
              (narrow_bn, f"{bm} x {narrow_bn}, one consumer warpgroup: a k tile in {kn['NARROW_TILE_PERCENT']}% "
                          f"of a {bm} x {wide_bn}'s time in the estimate"))
    for i, (bn, label) in enumerate(legend):
        yy = y + 19 * (i + 1)
        cv.rect(20, yy - 6, 16, 12, fill=colors[bn], edge=MUTED, lw=0.6)
        cv.text(42, yy, label, size=8.5)
    yy = y + 19 * 3
    cv.rect(20, yy - 7, 16, 14, fill="white", edge=MUTED, lw=0.6)
    cv.text(28, yy, "8", size=8, ha="center")
    cv.text(42, yy, "the number: the pieces K is cut into (1: whole tiles, a block each)", size=8.5)
    yy = y + 19 * 4
    cv.rect(20, yy - 7, 16, 14, fill="white", edge=MUTED, lw=0.6)
    _corner(cv, 36, yy - 7, 7)
    cv.text(42, yy, "A is split once, in a pass before the GEMM (step 29's place); unmarked: in the GEMM's "
            "pipeline (step 28's)", size=8.5)

    for index, k in enumerate(PANEL_KS):
        x0, y0 = lefts[index % 2], tops[index // 2]
        k_tiles = rule.cdiv(k, kn["TUNE_SPLIT"])
        cv.text(x0 + side / 2, y0 - 30, f"K = {k}: {k_tiles} k tiles", size=10, weight="bold", ha="center",
                va="bottom")
        for j, n in enumerate(SIZES):
            cv.text(x0 + (j + 0.5) * cell, y0 - 4, _size_label(n), size=7.5, ha="center", va="bottom", color=MUTED)
        for i, m in enumerate(SIZES):
            cv.text(x0 - 4, y0 + (i + 0.5) * cell, _size_label(m), size=7.5, ha="right", color=MUTED)
            for j, n in enumerate(SIZES):
                chosen = rule.choose(m, n, k)
                cx, cy = x0 + j * cell, y0 + i * cell
                cv.rect(cx, cy, cell, cell, fill=colors[chosen.bn], edge="white", lw=0.8, z=1)
                if chosen.once:
                    _corner(cv, cx + cell - 0.8, cy + 0.8, 8)
                cv.text(cx + cell / 2, cy + cell / 2 + 1, str(chosen.splits), size=8, ha="center", z=7)
        cv.rect(x0, y0, side, side, fill="none", edge=MUTED, lw=0.6, z=3)
        cv.text(x0 + side / 2, y0 - 17, "N  (columns of C)", size=8, ha="center", va="bottom", color=MUTED)
        cv.text(x0 - 38, y0 + side / 2, "M  (rows of C)", size=8, ha="center", rotation=90, color=MUTED)

    note = (f"For each tile, launch() takes choose_splits's pieces (waves of one block an SM x (k tiles of a "
            f"piece + {kn['PIECE_OVERHEAD_TILES']}), plus the partial sums; a piece keeps at least "
            f"{kn['MIN_SPLIT_K_TILES']} k tiles), prices the GEMM at "
            f"{kn['TENSOR_PERCENT']}% of the TF32 peak, and places A's split: in the pipeline, "
            f"{kn['IN_PIPELINE_SPLIT_PERCENT']}% more, or once, a pass of {rule.source.bytes_per_value} M K bytes "
            f"at {rule.gpu['dram_bytes_per_us'] / 1e6:.2f} TB/s and {kn['PASS_US']} us before it (always in the "
            f"pipeline where K < {kn['RAW_MIN_K']}). The {bm} x {narrow_bn} tile runs where its estimate beats the "
            f"{bm} x {wide_bn}'s by {kn[rule.source.tile_gain]}%: where N = {narrow_bn} (the wide tile's second "
            f"consumer would multiply zeros), and where C has too few wide tiles for the SMs and K too few k tiles "
            f"to cut into pieces instead. Shapes are powers of two.")
    cv.text(20, tops[1] + side + 16, "\n".join(textwrap.wrap(note, 122)), size=8.5, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "37_tile_by_shape.svg": draw_tile_by_shape,
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
