"""Step 32's picture (docs/pictures/32_scaled_on_demand.svg): one block where A is split in the
pipeline, with no pass before the GEMM (step 31's pass drawn above it), and which 16-byte
vectors of an A tile each splitter takes.

Every number drawn comes from the step's source. The block's roles: warp 0 (its lane 0 issues
the TMA copies; the whole warp reads each B tile STAGES-1 uses behind the copies for its
columns' largest magnitudes and then gives the stage back), the SPLITTERS threads of warps 1..3
(each tile split unscaled, each row's largest magnitude noted) and the consumer warpgroups
(BN / WGMMA_M of them); the decision (`decide`: an mbarrier of THREADS arrivals) and the second
sweep, which runs only where a row or column of the block's piece needs a factor. The picture
checks these lines in the step and refuses a step that no longer has them. The block's timeline
is schematic: a small event model of the ring (`schedule` below: a copy lands one slot after it
is issued, a split and a tile's products take a slot each, warp 0's read of a B tile less), with
the step's STAGES; it shows the order of things, not measured times. The tile: VECTORS =
A_TILE_BYTES / 16 vectors of 16 bytes, rows of TUNE_SPLIT * 4 / 16, PER = ceil(VECTORS /
SPLITTERS) contiguous vectors a splitter (`Assignment` below, which ports the step's loop and
its static_assert). The rule: `DemandRule`, step 31's launch() (plots/pictures_pass.py's
`OnePassRule`) with step 32's price of splitting once, the whole pass (its bytes read from the
line of split_once that counts them, PASS_US, SWEEP_US), for the tests and the notes.
plots/tests/test_pictures_demand.py holds the ports and the picture to the step.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_demand` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_pass import Teams
from plots.pictures_split import Choice, Rule
from plots.pictures_time import (COPY, INK, MARK, MATH, MUTED, PICTURES_DIR, REDUCE, SHORT, SMS, Canvas, _render,
                                 _svg, knobs, source_text, text_width, tint)

STEP = 32
VECTOR = 16         # bytes of the vectors the splitters read and write (float4)
BANK_GROUPS = 8     # 16-byte groups of shared memory's 32 banks: 128 bytes a wavefront
TILES = 5           # k tiles of the schematic block
HEIGHT = 668        # pixels: the page's height

# The roles' colours (as in steps 24-25's pictures: copies blue, splitters purple, math orange).
COPY_FILL, READ_FILL, SPLIT_FILL, MATH_FILL = tint(COPY, 0.55), tint(REDUCE, 0.55), tint(SHORT, 0.55), tint(MATH, 0.55)
PASS_FILL = tint(MUTED, 0.35)
SPLITTER_FILLS = (tint(SHORT, 0.55), tint(COPY, 0.35), tint(REDUCE, 0.4), tint(MATH, 0.4))


# ---- the step's source ---------------------------------------------------------------------------

def _require(src: str, pattern: str, what: str) -> re.Match:
    found = re.search(pattern, src)
    if not found:
        raise ValueError(f"pictures: step {STEP} {what}")
    return found


@dataclass(frozen=True)
class Block:
    """The block's roles and barriers where A is split in the pipeline, from the step's source."""
    stages: int
    splitters: int
    consumers: int      # consumer warpgroups: BN / WGMMA_M
    threads: int        # 128 (warp 0 and the splitters) + 128 a consumer warpgroup
    empty_arrivals: int  # arrivals that give a stage back: the consumers' threads and warp 0
    unscaled: int       # UNSCALED_EXPONENT: rows and columns with max in [2^-E, 2^(E+1)) need no factor

    @classmethod
    def read(cls, repo: Path) -> "Block":
        src, kn = source_text(repo, STEP), knobs(repo, STEP)
        wgmma_m = int(_require(src, r"constexpr int WGMMA_M = (\d+)", "has no WGMMA_M").group(1))
        _require(src, r"constexpr int CONSUMERS = BN / WGMMA_M;", "no longer has BN / WGMMA_M consumers")
        _require(src, r"constexpr int THREADS = 128 \* \(1 \+ CONSUMERS\);",
                 "no longer has a producer warpgroup and the consumers")
        _require(src, r"barrier_init\(decided, THREADS\);", "no longer decides on an mbarrier of THREADS arrivals")
        _require(src, r"barrier_init\(&empty\[s\], 128 \* CONSUMERS \+ \(SPLIT_ONCE \? 0 : 1\)\);",
                 "no longer has warp 0 give each stage back in the pipeline (one more arrival on empty)")
        _require(src, r"const int q = n - \(STAGES - 1\);",
                 "no longer has warp 0 read B STAGES-1 uses behind its copies")
        _require(src, r"if \(decide\(needs\)\) sweep\(k_tiles\);", "no longer runs warp 0's second sweep on the vote")
        consumers = kn["BN"] // wgmma_m
        return cls(kn["STAGES"], kn["SPLITTERS"], consumers, 128 * (1 + consumers), 128 * consumers + 1,
                   kn["UNSCALED_EXPONENT"])


class Assignment:
    """Which 16-byte vectors of an A tile each splitter takes: PER = ceil(VECTORS / SPLITTERS)
    contiguous vectors, splitter i from PER i (the step's loop `for (int i = first; i < min(first
    + PER, VECTORS); ++i)` with `first = i0 * PER`); rows of `row_vectors` vectors."""

    def __init__(self, vectors: int, splitters: int, row_vectors: int):
        self.vectors, self.splitters, self.row_vectors = vectors, splitters, row_vectors
        self.per = -(-vectors // splitters)
        if self.per % 2 != 1 or self.per >= 16:
            raise ValueError(f"pictures: {splitters} splitters take {self.per} vectors each; step {STEP} asserts "
                             "an odd number below 16 (an odd stride, within three rows)")

    @classmethod
    def read(cls, repo: Path) -> "Assignment":
        src, kn = source_text(repo, STEP), knobs(repo, STEP)
        _require(src, r"constexpr int A_TILE_BYTES = BM \* TUNE_SPLIT \* sizeof\(float\);", "has another A tile")
        _require(src, r"constexpr int VECTORS = A_TILE_BYTES / 16, PER = \(VECTORS \+ SPLITTERS - 1\) / SPLITTERS;",
                 "no longer gives each splitter PER = ceil(VECTORS / SPLITTERS) vectors")
        _require(src, r"const int first = i0 \* PER, first_row = first / 8;", "no longer starts splitter i at PER i")
        _require(src, r"for \(int i = first; i < min\(first \+ PER, VECTORS\); \+\+i\)",
                 "no longer splits PER contiguous vectors a splitter")
        _require(src, r"unsigned seen\[3\] = \{\};", "no longer keeps three rows' maxima a splitter")
        tile = kn["BM"] * kn["TUNE_SPLIT"] * 4
        return cls(tile // VECTOR, kn["SPLITTERS"], kn["TUNE_SPLIT"] * 4 // VECTOR)

    def vectors_of(self, splitter: int) -> range:
        return range(min(splitter * self.per, self.vectors), min(splitter * self.per + self.per, self.vectors))

    def splitter_of(self, vector: int) -> int:
        return vector // self.per

    def rows_of(self, splitter: int) -> list[int]:
        return sorted({v // self.row_vectors for v in self.vectors_of(splitter)})

    def busy(self) -> int:
        """Splitters with at least one vector."""
        return -(-self.vectors // self.per)

    def most_rows(self) -> int:
        return max(len(self.rows_of(i)) for i in range(self.splitters))

    def bank_groups(self, lanes: int = BANK_GROUPS) -> list[int]:
        """The 16-byte group of shared memory that neighbouring splitters' first vectors fall in."""
        return [(i * self.per) % BANK_GROUPS for i in range(lanes)]

    def strided_rows(self, splitter: int) -> list[int]:
        """Rows of the vectors splitter i takes in step 31's loop (i, i + SPLITTERS, ...), as the
        first build of step 32 kept their maxima."""
        return sorted({v // self.row_vectors for v in range(splitter, self.vectors, self.splitters)})


def priced_pass(repo: Path) -> tuple[int, int]:
    """(bytes per value of A, per value of B) that step 32's split_once() charges splitting once:
    `bytes = 12.0 * p.M * p.K + 4.0 * p.K * p.N` (A and B read, A's two parts written)."""
    found = _require(source_text(repo, STEP),
                     r"const double bytes = (\d+)(?:\.0)? \* p\.M \* p\.K \+ (\d+)(?:\.0)? \* p\.K \* p\.N;\s*"
                     r"const double pass_us = bytes / sgemm::gpu\(\)\.dram_bytes_per_us \+ PASS_US \+",
                     "no longer prices splitting once as `bytes = A * p.M * p.K + B * p.K * p.N` plus PASS_US")
    return int(found.group(1)), int(found.group(2))


class DemandRule(Rule):
    """Step 32's launch(): choose_splits (step 30's, plots/pictures_split.py's port) with step 32's
    knobs, and split_once pricing the whole pass where A is split once (A and B read, A's parts
    written, PASS_US, SWEEP_US for a long row's chunks) against IN_PIPELINE_SPLIT_PERCENT of the
    GEMM in the pipeline, where no pass runs any more."""

    def __init__(self, repo: Path, sms: int = SMS, gpu: dict | None = None):
        super().__init__(repo, sms, gpu)
        self.knobs = knobs(repo, STEP)
        self.a_bytes, self.b_bytes = priced_pass(repo)
        self.teams = Teams(repo, STEP)
        if not re.search(r"return 3\.0 \* BM \* BN \* TUNE_SPLIT /", source_text(repo, STEP)):
            raise ValueError(f"pictures: step {STEP}'s tile_us is no longer 3xTF32's three products")

    def pass_us(self, m: int, n: int, k: int) -> float:
        return ((self.a_bytes * m * k + self.b_bytes * k * n) / self.gpu["dram_bytes_per_us"]
                + self.knobs["PASS_US"] + self.teams.extra_us(k))

    def choose(self, m: int, n: int, k: int) -> Choice:
        kn, cdiv = self.knobs, self.cdiv
        tiles, k_tiles = cdiv(m, kn["BM"]) * cdiv(n, kn["BN"]), cdiv(k, kn["TUNE_SPLIT"])
        splits = cdiv(k_tiles, cdiv(k_tiles, self.choose_splits(m, n, k)))
        gemm_us = self.tile_times(m, n, k, splits) * self.tile_us * 100.0 / kn["TENSOR_PERCENT"]
        pass_us = self.pass_us(m, n, k)
        in_pipeline_us = gemm_us * kn["IN_PIPELINE_SPLIT_PERCENT"] / 100.0
        return Choice(tiles, k_tiles, splits, gemm_us, pass_us, in_pipeline_us, pass_us < in_pipeline_us)


def step31_pass_bytes(m: int, n: int, k: int) -> int:
    """What step 31's pass read before its GEMM where A is split in the pipeline: A and B once."""
    return 4 * (m * k + k * n)


# ---- the block's schematic timeline ------------------------------------------------------------

LAND, SPLIT, MULTIPLY, READ, ISSUE = 1.0, 1.0, 1.0, 0.5, 0.12  # slots: a schematic, not a measurement
DECIDE, EPILOGUE = 0.45, 1.3


@dataclass
class Schedule:
    """Start and end (slots) of every use of the ring: copies issued, B read by warp 0, splits,
    products; uses 0 .. tiles-1 are the first sweep, tiles .. 2 tiles-1 the second."""
    issue: list[float]
    read: list[tuple[float, float]]
    split: list[tuple[float, float]]
    multiply: list[tuple[float, float]]
    decide: tuple[float, float]
    epilogue: tuple[float, float]


def schedule(stages: int, tiles: int = TILES) -> Schedule:
    """The ring's order of events in one block, both sweeps: warp 0 issues copy n once the
    consumers and its own read gave the stage back (use n - STAGES), then reads use n - (STAGES-1)
    once it has landed; the splitters split each tile once it has landed, the consumers multiply
    it once it is split; every role meets at `decide` after the first sweep."""
    issue: list[float] = []
    land: list[float] = []
    read: list[tuple[float, float]] = []
    split: list[tuple[float, float]] = []
    multiply: list[tuple[float, float]] = []

    def run(n0: int, start: float) -> float:
        t = start
        for n in range(n0, n0 + tiles + stages - 1):
            if n < n0 + tiles:
                if n >= stages:
                    t = max(t, multiply[n - stages][1], read[n - stages][1])
                issue.append(t)
                land.append(t + LAND)
                s0 = max(land[n], split[n - 1][1] if n > n0 else start)
                split.append((s0, s0 + SPLIT))
                m0 = max(split[n][1], multiply[n - 1][1] if n > n0 else start)
                multiply.append((m0, m0 + MULTIPLY))
                t += ISSUE
            q = n - (stages - 1)
            if q >= n0:
                r0 = max(t, land[q])
                read.append((r0, r0 + READ))
                t = r0 + READ
        return t

    warp0 = run(0, 0.0)
    first = max(warp0, split[tiles - 1][1], multiply[tiles - 1][1])
    decide = (first, first + DECIDE)
    run(tiles, decide[1])
    end = multiply[-1][1]
    return Schedule(issue, read, split, multiply, decide, (end, end + EPILOGUE))


# ---- the picture -----------------------------------------------------------------------------------

def _box(cv: Canvas, x0: float, x1: float, y: float, h: float, fill: str, label: str, second: bool,
         size: float = 7.5) -> None:
    """A use of the ring: solid in the first sweep, dashed and paler in the second."""
    if second:
        cv.rect(x0, y, x1 - x0, h, fill=tint(fill, 0.45), edge=MUTED, lw=0.8, ls="--", z=2)
        if label and text_width(label, size) <= x1 - x0 - 3:
            cv.text((x0 + x1) / 2, y + h / 2, label, size=size, ha="center", color=MUTED, z=6)
    else:
        cv.bar(x0, x1, y, h, fill, label, size=size)


def _block(cv: Canvas, repo: Path, y0: float) -> float:
    """Step 31's pass and GEMM (one bar each), then step 32's block: its roles over both sweeps."""
    b = Block.read(repo)
    s = schedule(b.stages)
    x0, x1 = 190, 785
    scale = (x1 - x0) / s.epilogue[1]
    X = lambda t: x0 + t * scale  # noqa: E731
    lane_h, gap = 20, 8

    # Step 31 in the same place: a pass over all of A and B before the GEMM's first product.
    first_end = s.decide[0]
    pass_slots = 2.5
    y = y0
    cv.text(20, y + lane_h / 2 - 5, f"step {STEP - 1}", size=8.5, weight="bold")
    cv.text(20, y + lane_h / 2 + 7, "a pass, then the GEMM", size=7.5, color=MUTED)
    cv.bar(X(0), X(pass_slots), y, lane_h, PASS_FILL, "pass: A and B", size=7.5)
    cv.bar(X(pass_slots), X(pass_slots + first_end), y, lane_h, tint(MATH, 0.3),
           "GEMM: one sweep, the pass's factors", size=7.5)
    cv.text(X(pass_slots + first_end) + 6, y + lane_h / 2, "the pass reads 4 (MK + KN) bytes",
            size=7.5, color=MUTED)

    y += lane_h + 16
    cv.text(20, y - 4, f"step {STEP}: one block, no pass", size=8.5, weight="bold")
    lanes = [
        ("warp 0, lane 0", "TMA copies", COPY_FILL, [(t, t + ISSUE * 0.9) for t in s.issue], False),
        ("warp 0", "reads B: column maxima", READ_FILL, s.read, True),
        (f"{b.splitters} splitters", "split, row maxima", SPLIT_FILL, s.split, True),
        (f"{b.consumers} consumer warpgroups", "3 wgmmas a k step", MATH_FILL, s.multiply, True),
    ]
    tops = []
    for i, (who, what, fill, spans, labelled) in enumerate(lanes):
        yl = y + 6 + i * (lane_h + gap)
        tops.append(yl)
        cv.text(20, yl + lane_h / 2 - 5, who, size=8, weight="bold")
        cv.text(20, yl + lane_h / 2 + 7, what, size=7.5, color=MUTED)
        for n, (a, e) in enumerate(spans):
            second = n >= TILES
            label = f"k{n % TILES}" if labelled else ""
            _box(cv, X(a), X(e), yl, lane_h, fill, label, second)
    bottom = tops[-1] + lane_h
    # The vote: every thread arrives on `decided`.
    dx0, dx1 = X(s.decide[0]), X(s.decide[1])
    cv.rect(dx0, tops[0] - 4, dx1 - dx0, bottom - tops[0] + 8, fill=MARK, edge=MARK, lw=0.6, z=4)
    cv.text((dx0 + dx1) / 2, bottom + 12, f"decide: an mbarrier, {b.threads} arrivals", size=7.5, color=MARK,
            ha="center", weight="bold")
    # The second sweep's span, and the epilogue.
    second0 = s.issue[TILES]
    cv.text((X(second0) + X(s.multiply[-1][1])) / 2, tops[0] - 10,
            "second sweep: only where a row or column needs a factor", size=7.5, color=INK, ha="center")
    ex0, ex1 = X(s.epilogue[0]), X(s.epilogue[1])
    cv.bar(ex0, ex1, tops[-1], lane_h, tint(MATH, 0.85), "store", size=7.5, color="white")
    cv.text(ex1, bottom + 12, "each sum x 2^(s + t)", size=7.5, ha="right", color=INK)
    cv.text(20, bottom + 12, "schematic: the order of events, not their lengths", size=7.5, color=MUTED)

    items = [(COPY_FILL, "copy issued (TMA)"), (READ_FILL, "B tile read: column maxima"),
             (SPLIT_FILL, "A tile split: big + small"), (MATH_FILL, "the tile's products (wgmma)")]
    x, yl = 20, bottom + 32
    for fill, label in items:
        cv.rect(x, yl - 6, 16, 12, fill=fill, edge=MUTED, lw=0.6)
        cv.text(x + 21, yl, label, size=8)
        x += 21 + text_width(label, 8) + 14
    lo, hi = b.unscaled, b.unscaled + 1
    note = (f"First sweep: every tile split unscaled. Each splitter keeps the largest magnitude of its rows, warp 0 "
            f"those of its columns, reading each B tile STAGES - 1 = {b.stages - 1} uses behind its copies and "
            f"giving the stage back (empty counts {b.empty_arrivals} arrivals: the consumers' and warp 0's). Then "
            f"each thread votes. Where the largest magnitude of every row and column of the block's piece of K lies "
            f"in [2^-{lo}, 2^{hi}) (UNSCALED_EXPONENT), "
            "the first sweep's sums are the result. Otherwise the tiles are copied again and split with each "
            "row's factor 2^-s, B's values multiplied by 2^-t, and each sum is scaled back by 2^(s + t): exact "
            "powers of two, so each block and each piece of K may choose its own.")
    lines = textwrap.wrap(note, 132)
    cv.text(20, yl + 14, "\n".join(lines), size=8, va="top", color=INK)
    return yl + 14 + len(lines) * 13.5


def _tile(cv: Canvas, repo: Path, y0: float) -> float:
    """The first rows of an A tile, each 16-byte vector coloured by the splitter that takes it."""
    a = Assignment.read(repo)
    kn = knobs(repo, STEP)
    rows = 6
    cw, ch, x0 = 34, 18, 70
    cv.text(20, y0, "Which vectors of an A tile each splitter takes, first sweep", size=9.5, weight="bold")
    cv.text(20, y0 + 16, f"BM = {kn['BM']} rows of TUNE_SPLIT = {kn['TUNE_SPLIT']} floats: {a.row_vectors} vectors "
            f"of {VECTOR} bytes a row, {a.vectors:,} in all. Its first rows:", size=8.5)
    top = y0 + 36
    marked = 2  # the splitter the picture points at: the first that straddles three rows
    while len(a.rows_of(marked)) < 3 and marked < a.splitters - 1:
        marked += 1
    for r in range(rows):
        y = top + r * (ch + 3)
        cv.text(20, y + ch / 2, f"row {r}", size=8)
        for c in range(a.row_vectors):
            v = r * a.row_vectors + c
            owner = a.splitter_of(v)
            fill = SPLITTER_FILLS[owner % len(SPLITTER_FILLS)]
            mine = owner == marked
            cv.rect(x0 + c * cw, y, cw - 2, ch, fill=fill, edge=MARK if mine else "white", lw=1.4 if mine else 0.6,
                    z=3 if mine else 2)
            cv.text(x0 + c * cw + (cw - 2) / 2, y + ch / 2, str(v), size=7, ha="center", z=6)
    # Beside each row, the splitter that starts in it.
    lx = x0 + a.row_vectors * cw + 10
    for r in range(rows):
        y = top + r * (ch + 3)
        starts = [i for i in range(a.splitters) if a.vectors_of(i) and a.vectors_of(i)[0] // a.row_vectors == r]
        if starts:
            i = starts[0]
            span = a.vectors_of(i)
            rows_of = a.rows_of(i)
            cv.text(lx, y + ch / 2, f"splitter {i}: vectors {span[0]}-{span[-1]}, rows "
                    f"{', '.join(str(x) for x in rows_of)}", size=7.5,
                    color=MARK if i == marked else INK, weight="bold" if i == marked else "normal")
    # Where neighbouring splitters' first vectors fall among shared memory's 16-byte bank groups.
    gx, gw = 590, 24
    cv.text(gx, top + 4, f"splitters 0-{BANK_GROUPS - 1}'s first vectors", size=7.5, color=MUTED)
    cv.text(gx, top + 16, "in the 8 bank groups of 16 bytes", size=7.5, color=MUTED)
    groups = a.bank_groups()
    for g in range(BANK_GROUPS):
        x = gx + g * gw
        cv.text(x + (gw - 2) / 2, top + 34, str(g), size=7, ha="center", color=MUTED)
        owners = [i for i, h in enumerate(groups) if h == g]
        fill = SPLITTER_FILLS[owners[0] % len(SPLITTER_FILLS)] if owners else "white"
        cv.rect(x, top + 42, gw - 2, ch, fill=fill, edge=MUTED, lw=0.6)
        cv.text(x + (gw - 2) / 2, top + 42 + ch / 2, ",".join(str(i) for i in owners), size=7, ha="center")
    cv.text(gx, top + 42 + ch + 12, "group: splitter", size=7.5, color=MUTED)
    busy = a.busy()
    last = a.vectors_of(busy - 1)
    strided = a.strided_rows(0)
    end = top + rows * (ch + 3)
    cv.text(x0, end + 2, f"... and so on down the tile's {kn['BM']} rows", size=7.5, color=MUTED, va="top")
    note = (f"SPLITTERS = {a.splitters}: PER = ceil({a.vectors:,} / {a.splitters}) = {a.per} contiguous vectors a "
            f"splitter (0-{busy - 2} take {a.per}, {busy - 1} the last {len(last)}, {busy}-{a.splitters - 1} none), "
            f"which lie in at most {a.most_rows()} rows: {a.most_rows()} registers hold their largest magnitudes. "
            f"Neighbouring splitters start {a.per * VECTOR} bytes apart, in 16-byte bank groups "
            f"{', '.join(str(g) for g in a.bank_groups())}: all eight, so a warp's reads and writes have no "
            f"conflicts. Step {STEP - 1}'s loop (vectors i, i + {a.splitters}, ...) would give splitter 0 rows "
            f"{', '.join(str(x) for x in strided[:3])}, ..., {strided[-1]}: {len(strided)} maxima to keep.")
    lines = textwrap.wrap(note, 132)
    cv.text(20, end + 20, "\n".join(lines), size=8, va="top", color=INK)
    return end + 20 + len(lines) * 13.5


def draw_scaled_on_demand(repo: Path) -> Canvas:
    kn = knobs(repo, STEP)
    a_bytes, b_bytes = priced_pass(repo)
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: no pass before the GEMM; each block finds its rows' and columns' factors")
    cv.text(20, 44, "Where A is split in the pipeline: step 31's pass read all of A and B before any block could "
            "start. Here each block notes\nthe largest magnitudes as its first sweep goes, and sweeps again, "
            "scaled, only where its rows or columns need it.", size=9, va="center")
    end = _block(cv, repo, 78)
    end = _tile(cv, repo, end + 14)
    note = (f"The rule: splitting once now pays the whole pass, {a_bytes} M K + {b_bytes} K N bytes at the memory's "
            f"bandwidth and PASS_US = {kn['PASS_US']} us for its launch (and SWEEP_US for a long row's reads), "
            f"against IN_PIPELINE_SPLIT_PERCENT = {kn['IN_PIPELINE_SPLIT_PERCENT']}% of the GEMM for the split in "
            "the pipeline, where no pass runs any more.")
    cv.text(20, end + 8, "\n".join(textwrap.wrap(note, 130)), size=8, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "32_scaled_on_demand.svg": draw_scaled_on_demand,
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
