"""Step 30's picture (docs/pictures/30_chosen_split.svg): where step 30's launch splits A, in the
GEMM's pipeline (step 28's splitters) or once in a pass before it (step 29's), and whether K is
split into pieces, for an M x N x K GEMM on the H100, over a plane of M and N for a few K.

It is drawn from a port of the step's launch() (`Rule` below: tile_us, partial_sums_tile_times,
tile_times, choose_splits, split_once), which reads the step's `.cu` file: the knobs from their
`SGEMM_KNOB(NAME, value)` lines (BM, BN, TUNE_SPLIT, split-K's, TENSOR_PERCENT,
IN_PIPELINE_SPLIT_PERCENT, SPLIT_PASS_US), the products per multiply-add from tile_us() and the
pass's bytes per value of A (12: 4 read, 8 written) from the line of split_once that prices it.
choose_splits is step 26's; plots/tests/test_pictures_split.py holds the port to
plots/pictures_time.py's port of it (`tensor_plan`). The GPU's facts are the H100's:
scripts/paths.py's clock, device memory bandwidth and L2 (what sgemm::gpu() reads on that GPU)
and 132 SMs.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_split` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import math
import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_time import (INK, MUTED, PICTURES_DIR, SMS, Canvas, _render, _svg, knobs, paths, source_text,
                                 text_width, tint)

STEP = 30
PIPELINE, ONCE = "in-pipeline", "split-once"    # where A is split, as the step's path names it
WHOLE, SPLIT = "whole-tiles", "split-K"


def pass_bytes_per_value(repo: Path) -> int:
    """The split pass's bytes per value of A in split_once's estimate (`12.0 * p.M * p.K / ...`)."""
    found = re.search(r"pass_us\s*=\s*(\d+)(?:\.0)?\s*\*\s*p\.M\s*\*\s*p\.K\s*/\s*sgemm::gpu\(\)\.dram_bytes_per_us",
                      source_text(repo, STEP))
    if not found:
        raise ValueError(f"pictures: step {STEP}'s split_once no longer prices the pass as `N * p.M * p.K / "
                         "sgemm::gpu().dram_bytes_per_us`")
    return int(found.group(1))


def tile_products(repo: Path) -> int:
    """The products per multiply-add in tile_us() (3: 3xTF32's big x big, big x small, small x big)."""
    found = re.search(r"return\s+(\d+)(?:\.0)?\s*\*\s*BM\s*\*\s*BN\s*\*\s*TUNE_SPLIT\s*/", source_text(repo, STEP))
    if not found:
        raise ValueError(f"pictures: step {STEP}'s tile_us no longer reads `N * BM * BN * TUNE_SPLIT / ...`")
    return int(found.group(1))


@dataclass(frozen=True)
class Choice:
    """launch()'s choices for one shape: choose_splits's pieces and split_once's place."""
    tiles: int          # output tiles of BM x BN
    k_tiles: int        # k tiles of TUNE_SPLIT
    splits: int         # pieces launched per tile
    gemm_us: float      # the GEMM without a split in its pipeline: tile_times at TENSOR_PERCENT
    pass_us: float      # the split pass: its bytes at the memory's bandwidth, and its launch
    in_pipeline_us: float  # what the pipeline's split adds to the GEMM
    once: bool

    @property
    def place(self) -> str:
        return ONCE if self.once else PIPELINE

    @property
    def kind(self) -> str:
        return WHOLE if self.splits == 1 else SPLIT

    @property
    def path(self) -> str:
        """As sgemm::took_path names it: whole-tiles/in-pipeline, split-K/split-once, ..."""
        return f"{self.kind}/{self.place}"

    @property
    def margin(self) -> float:
        """The larger of the two costs over the smaller: 1 at a tie."""
        return max(self.pass_us, self.in_pipeline_us) / min(self.pass_us, self.in_pipeline_us)


class Rule:
    """Step 30's launch(): choose_splits, then split_once, on the H100 (or on `gpu`, a dict of
    scripts/paths.py's facts: clock_mhz, dram_bytes_per_us, l2_bytes)."""

    def __init__(self, repo: Path, sms: int = SMS, gpu: dict | None = None):
        self.sms = sms
        self.knobs = knobs(repo, STEP)
        p = paths(repo)
        self.gpu, self.cdiv = dict(p.H100 if gpu is None else gpu), p.cdiv
        self.bytes_per_value = pass_bytes_per_value(repo)
        self.products = tile_products(repo)

    @property
    def tile_us(self) -> float:
        """tile_us(): one k tile of one block, BM x BN x TUNE_SPLIT FMAs three times (3xTF32),
        at the SM's TF32 tensor rate."""
        kn = self.knobs
        return (self.products * kn["BM"] * kn["BN"] * kn["TUNE_SPLIT"]
                / (kn["TF32_FMAS_PER_SM_CLOCK"] * self.gpu["clock_mhz"]))

    def partial_sums_tile_times(self, m: int, n: int, pieces: int) -> float:
        """M x N floats per piece written and read back: what fits in half the L2 at
        L2_BANDWIDTH_RATIO times the device memory's bandwidth, the rest at that bandwidth."""
        size = pieces * m * n * 4.0
        in_l2 = min(size, 0.5 * self.gpu["l2_bytes"])
        return (2.0 * (in_l2 / self.knobs["L2_BANDWIDTH_RATIO"] + size - in_l2)
                / self.gpu["dram_bytes_per_us"] / self.tile_us)

    def tile_times(self, m: int, n: int, k: int, splits: int) -> float:
        """Waves of one block an SM x (a piece's k tiles + PIECE_OVERHEAD_TILES), plus the
        partial sums where K is cut."""
        kn, cdiv = self.knobs, self.cdiv
        tiles, k_tiles = cdiv(m, kn["BM"]) * cdiv(n, kn["BN"]), cdiv(k, kn["TUNE_SPLIT"])
        per = cdiv(k_tiles, splits)
        pieces = cdiv(k_tiles, per)
        return (cdiv(tiles * pieces, self.sms) * (per + kn["PIECE_OVERHEAD_TILES"])
                + (self.partial_sums_tile_times(m, n, pieces) if pieces > 1 else 0.0))

    def choose_splits(self, m: int, n: int, k: int) -> int:
        kn = self.knobs
        k_tiles = self.cdiv(k, kn["TUNE_SPLIT"])
        most = min(kn["MAX_SPLITS"], max(1, k_tiles // kn["MIN_SPLIT_K_TILES"]))
        best = 1
        for splits in range(2, most + 1):
            if (self.tile_times(m, n, k, splits) * (100 + kn["MIN_GAIN_PERCENT"])
                    <= self.tile_times(m, n, k, best) * 100):
                best = splits
        return best

    def choose(self, m: int, n: int, k: int) -> Choice:
        """launch(): the pieces (no piece left empty), then split_once's estimates."""
        kn, cdiv = self.knobs, self.cdiv
        tiles, k_tiles = cdiv(m, kn["BM"]) * cdiv(n, kn["BN"]), cdiv(k, kn["TUNE_SPLIT"])
        splits = cdiv(k_tiles, cdiv(k_tiles, self.choose_splits(m, n, k)))
        gemm_us = self.tile_times(m, n, k, splits) * self.tile_us * 100.0 / kn["TENSOR_PERCENT"]
        pass_us = self.bytes_per_value * m * k / self.gpu["dram_bytes_per_us"] + kn["SPLIT_PASS_US"]
        in_pipeline_us = gemm_us * kn["IN_PIPELINE_SPLIT_PERCENT"] / 100.0
        return Choice(tiles, k_tiles, splits, gemm_us, pass_us, in_pipeline_us, pass_us < in_pipeline_us)

    def napkin_n(self) -> float:
        """N where the pass's bytes cost the pipeline's share of the GEMM, for a large M and K
        (no partial waves, no block overheads): bytes M K / BW = share 2 M N K / F, so
        N = bytes F / (2 share BW), F being 3xTF32's rate at TENSOR_PERCENT of the TF32 peak."""
        kn, gpu = self.knobs, self.gpu
        flops_per_us = (2 * kn["TF32_FMAS_PER_SM_CLOCK"] * self.sms * gpu["clock_mhz"] / self.products
                        * kn["TENSOR_PERCENT"] / 100)
        share = kn["IN_PIPELINE_SPLIT_PERCENT"] / 100
        return self.bytes_per_value * flops_per_us / (2 * share * gpu["dram_bytes_per_us"])


# ---- the picture --------------------------------------------------------------------------------

COLORS = {PIPELINE: "#c9d6ea", ONCE: "#f2b26b"}
SIZES = [64 << i for i in range(11)]   # 64 .. 65536 along M and N
PANEL_KS = (256, 1024, 4096, 16384)
HATCH = "////"
NEAR = 1.25  # a cell whose two costs lie within this factor of each other is marked a near tie


def _size_label(size: int) -> str:
    return f"{size // 1024}K" if size >= 1024 else str(size)


def draw_chosen_split(repo: Path) -> Canvas:
    rule = Rule(repo)
    kn = rule.knobs
    cell = 25
    side = cell * len(SIZES)
    lefts = (92, 470)
    top = 172
    tops = (top, top + side + 66)
    cv = Canvas(height=tops[1] + side + 118)
    cv.title(f"Step {STEP}: where A is split, chosen for M x N x K on the H100 ({rule.sms} SMs)")

    y = 46
    cv.text(20, y, "colour: where A is split", size=9, weight="bold")
    legend = ((PIPELINE, "in the GEMM's pipeline, by the producer's splitters (step 28): once per block column of C"),
              (ONCE, f"once, in a pass before the GEMM (step 29): {rule.bytes_per_value} bytes per value of A"))
    for i, (place, label) in enumerate(legend):
        yy = y + 19 * (i + 1)
        cv.rect(20, yy - 6, 16, 12, fill=COLORS[place], edge=MUTED, lw=0.6)
        cv.text(42, yy, label, size=8.5)
    yy = y + 19 * 3
    cv.rect(20, yy - 6, 16, 12, fill="white", edge=INK, lw=0.6, hatch=HATCH)
    label = "K split into pieces (split-K)"
    cv.text(42, yy, label, size=8.5)
    x = 42 + text_width(label, 8.5) + 24
    cv.text(x, yy, "plain: whole tiles", size=8.5, color=MUTED)
    x += text_width("plain: whole tiles", 8.5) + 24
    cv.text(x, yy, "\u2022", size=10, ha="center", color=INK)
    cv.text(x + 8, yy, f"near a tie: the two costs within {round((NEAR - 1) * 100)}%", size=8.5)

    napkin = rule.napkin_n()
    for index, k in enumerate(PANEL_KS):
        x0, y0 = lefts[index % 2], tops[index // 2]
        k_tiles = -(-k // kn["TUNE_SPLIT"])
        cv.text(x0 + side / 2, y0 - 30, f"K = {k}: {k_tiles} k tiles", size=10, weight="bold", ha="center",
                va="bottom")
        for j, n in enumerate(SIZES):
            cv.text(x0 + (j + 0.5) * cell, y0 - 4, _size_label(n), size=7.5, ha="center", va="bottom", color=MUTED)
        for i, m in enumerate(SIZES):
            cv.text(x0 - 4, y0 + (i + 0.5) * cell, _size_label(m), size=7.5, ha="right", color=MUTED)
            for j, n in enumerate(SIZES):
                choice = rule.choose(m, n, k)
                cx, cy = x0 + j * cell, y0 + i * cell
                cv.rect(cx, cy, cell, cell, fill=COLORS[choice.place], edge="white", lw=0.8, z=1)
                if choice.kind == SPLIT:
                    cv.rect(cx, cy, cell, cell, fill="none", edge=tint(INK, 0.7), lw=0, hatch=HATCH, z=2)
                if choice.margin < NEAR:
                    cv.text(cx + cell / 2, cy + cell / 2, "\u2022", size=10, ha="center", color=INK, z=7)
        # The napkin math's N, for a large M and K: on the log axis between the cells' centres.
        nx = x0 + (math.log2(napkin / SIZES[0]) + 0.5) * cell
        cv.line(nx, y0, nx, y0 + side, color=INK, lw=1.0, ls="--", z=4)
        cv.rect(x0, y0, side, side, fill="none", edge=MUTED, lw=0.6, z=3)
        cv.text(x0 + side / 2, y0 - 17, "N  (columns of C)", size=8, ha="center", va="bottom", color=MUTED)
        cv.text(x0 - 38, y0 + side / 2, "M  (rows of C)", size=8, ha="center", rotation=90, color=MUTED)

    note = (f"launch() takes choose_splits's pieces (step 26's estimate in tile-times: waves x (k tiles of a piece "
            f"+ {kn['PIECE_OVERHEAD_TILES']}), plus the partial sums) and prices the GEMM at {kn['TENSOR_PERCENT']}% of "
            f"the TF32 peak. The pipeline's split adds {kn['IN_PIPELINE_SPLIT_PERCENT']}% to it; the pass costs "
            f"{rule.bytes_per_value} M K bytes at the device memory's {rule.gpu['dram_bytes_per_us'] / 1e6:.2f} TB/s "
            f"and {kn['SPLIT_PASS_US']} us for its launch. A is split once where the pass costs less. Dashed: the "
            f"napkin math's N = {rule.bytes_per_value} F / (2 x {kn['IN_PIPELINE_SPLIT_PERCENT'] / 100:.2f} x BW) "
            f"= {napkin:.0f} for a large M and K, F the GEMM's rate in the estimate. Shapes are powers of two.")
    cv.text(20, tops[1] + side + 16, "\n".join(textwrap.wrap(note, 122)), size=8.5, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "30_chosen_split.svg": draw_chosen_split,
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
