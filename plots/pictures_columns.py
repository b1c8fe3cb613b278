"""Step 34's picture (docs/pictures/34_columns_by_consumers.svg): who finds the largest magnitude
of each column of B where A is split in the pipeline, and where one column's values lie among a
consumer warp's lanes.

Every number drawn comes from the steps' sources. Top: the loops, in order, not in time. Step
33's warp 0 runs one loop over the ring's uses: its lane 0 copies use n once use n - STAGES is
given back (`empty`: the consumers' 128 * CONSUMERS threads and warp 0), then the whole warp waits
for use n - (STAGES-1) to land, reads its B tile (TUNE_SPLIT x BN floats) for its columns' largest
magnitudes and gives it back; so the next copy waits behind that read (`Warp0` below, from step
33's source). Step 34's warp 0 copies only, one thread, and `empty` counts the consumers alone;
each consumer thread keeps the largest magnitude of its two columns from the values of B it
loads into registers for the wgmmas anyway (`Consumers`). Bottom: wgmma's register operand, as the
step's operand_col() and its fragment offsets place it (`Fragments`, a port of both, which
refuses a step whose lines differ): lane 4 g + t of a warp holds columns operand_col(warp, h, g),
h = 0, 1, at k = t + 4 kh + WGMMA_K step; a column's TUNE_SPLIT values of a k tile lie with the
four lanes t = 0 .. 3 of its g, and the step's shuffles (their xor distances read from its
source) give each of those lanes the column's largest magnitude before lane t = 0 writes it.
plots/tests/test_pictures_columns.py holds the ports and the picture to the steps.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_columns` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_time import (COPY, INK, MARK, MATH, MUTED, PICTURES_DIR, REDUCE, SHORT, Canvas, _render, _svg,
                                 knobs, source_text, text_width, tint)

STEP, BEFORE = 34, 33
FLOAT = 4           # bytes of a value of B
VECTOR = 16         # bytes a lane of step 33's warp 0 read at a time (uint4: 4 columns)
WARP = 32
HEIGHT = 700        # pixels: the page's height

COPY_FILL, READ_FILL, MATH_FILL, WAIT_FILL = tint(COPY, 0.55), tint(REDUCE, 0.55), tint(MATH, 0.55), "#eeeeee"
SPLIT_FILL = tint(SHORT, 0.45)
# The four threads t = 0 .. 3 of a column (as the splitters' colours in step 32's picture).
T_FILLS = (tint(SHORT, 0.55), tint(COPY, 0.35), tint(REDUCE, 0.4), tint(MATH, 0.4))


# ---- the steps' sources ----------------------------------------------------------------------------

def _require(src: str, pattern: str, number: int, what: str) -> re.Match:
    found = re.search(pattern, src)
    if not found:
        raise ValueError(f"pictures: step {number} {what}")
    return found


def _wgmma_shape(src: str, number: int) -> tuple[int, int]:
    found = _require(src, r"constexpr int WGMMA_M = (\d+), WGMMA_K = (\d+);", number, "has no WGMMA_M, WGMMA_K")
    return int(found.group(1)), int(found.group(2))


@dataclass(frozen=True)
class Warp0:
    """What warp 0 does in the pipeline's first sweep, and what gives a stage back (`empty`)."""
    stages: int
    b_tile_bytes: int   # TUNE_SPLIT x BN floats: the B tile of one use of the ring
    consumers: int      # consumer warpgroups: BN / WGMMA_M
    reads_b: bool       # step 33: the whole warp reads each B tile STAGES-1 uses behind its copies
    empty_arrivals: int

    @property
    def behind(self) -> int:
        """How many uses behind its copies warp 0 reads B (step 33)."""
        return self.stages - 1

    @classmethod
    def read(cls, repo: Path, number: int) -> "Warp0":
        src, kn = source_text(repo, number), knobs(repo, number)
        wgmma_m, _ = _wgmma_shape(src, number)
        _require(src, r"constexpr int CONSUMERS = BN / WGMMA_M;", number, "no longer has BN / WGMMA_M consumers")
        _require(src, r"constexpr int B_TILE_BYTES = TUNE_SPLIT \* BN \* sizeof\(float\);", number,
                 "has another B tile")
        consumers = kn["BN"] // wgmma_m
        b_tile = kn["TUNE_SPLIT"] * kn["BN"] * FLOAT
        if number == BEFORE:
            _require(src, r"barrier_init\(&empty\[s\], 128 \* CONSUMERS \+ \(SPLIT_ONCE \? 0 : 1\)\);", number,
                     "no longer has warp 0 give each stage back in the pipeline (one more arrival on empty)")
            _require(src, r"if \(lane == 0\) copy\(n, n - n0\);", number, "no longer copies from warp 0's lane 0")
            _require(src, r"const int q = n - \(STAGES - 1\);\s*if \(q < n0\) continue;", number,
                     "no longer has warp 0 read B STAGES-1 uses behind its copies")
            _require(src, r"barrier_wait\(&full\[s\], \(q / STAGES\) % 2\);[^}]*?for \(int k = 0; k < TUNE_SPLIT; \+\+k\) \{"
                          r"\s*const uint4 v = ", number, "no longer has warp 0 read every row of the B tile, 16 bytes a lane")
            _require(src, r"if \(lane == 0\) barrier_arrive\(&empty\[s\]\);", number,
                     "no longer has warp 0 give the stage back after its read")
            return cls(kn["STAGES"], b_tile, consumers, True, 128 * consumers + 1)
        _require(src, r"barrier_init\(&empty\[s\], 128 \* CONSUMERS\);", number,
                 "no longer gives each stage back from the consumers alone")
        _require(src, r"if \(threadIdx\.x == 0\)\s*for \(int n = n0; n < n0 \+ k_tiles; \+\+n\) \{\s*"
                      r"wait_empty\(n\);\s*copy\(n, n - n0\);", number,
                 "no longer has warp 0 copy, one thread, and nothing else in the pipeline")
        if re.search(r"const uint4 v = ", src):
            raise ValueError(f"pictures: step {number}'s warp 0 reads B again")
        return cls(kn["STAGES"], b_tile, consumers, False, 128 * consumers)


class Fragments:
    """Where a consumer thread's values of B sit: wgmma's register operand as step 34 places it.
    Lane 4 g + t of warp `warp` (of a warpgroup) holds, for h = 0, 1, column operand_col(warp,
    h, g) of the warpgroup's WGMMA_M columns, at k = t + 4 kh + WGMMA_K step of a k tile (kh = 0,
    1; step = 0 .. K_STEPS - 1): `frag_offset[kh][h] = b_tile_offset(t + 4 * kh, ...)` and
    `step * WGMMA_K * 128` bytes further (a row of the tile, one k, is 128 bytes)."""

    def __init__(self, wgmma_m: int, wgmma_k: int, tune_split: int, b_box: int, shuffles: tuple[int, ...],
                 consumers: int):
        self.wgmma_m, self.wgmma_k, self.tune_split, self.b_box = wgmma_m, wgmma_k, tune_split, b_box
        self.k_steps = tune_split // wgmma_k
        self.shuffles, self.consumers = shuffles, consumers
        if tune_split % wgmma_k or wgmma_k != 8:
            raise ValueError(f"pictures: step {STEP}'s k tile is not whole steps of wgmma's 8 k")
        if sorted(self.combined(0)) != [0, 1, 2, 3]:
            raise ValueError(f"pictures: step {STEP}'s shuffles (xor {shuffles}) no longer combine a column's four "
                             "threads")

    @classmethod
    def read(cls, repo: Path) -> "Fragments":
        src, kn = source_text(repo, STEP), knobs(repo, STEP)
        wgmma_m, wgmma_k = _wgmma_shape(src, STEP)
        _require(src, r"const int g = lane / 4, t = lane % 4;", STEP, "no longer numbers a lane 4 g + t")
        _require(src, r"const int q = 2 \* \(warp % 2\) \+ h;\s*return B_BOX \* \(warp / 2\) \+ 4 \* q \+ g % 4 \+ "
                      r"16 \* \(g / 4\);", STEP, "has another operand_col()")
        _require(src, r"frag_offset\[kh\]\[h\] = b_tile_offset\(t \+ 4 \* kh, consumer \* WGMMA_M \+ "
                      r"operand_col\(warp, h, g\)\);", STEP, "no longer loads k = t + 4 kh of column operand_col()")
        _require(src, r"b_tile \+ frag_offset\[kh\]\[h\] \+ step \* WGMMA_K \* 128\)", STEP,
                 "no longer moves WGMMA_K rows of B a k step")
        _require(src, r"if constexpr \(first\) seen\[h\] = max\(seen\[h\], __float_as_uint\(b\) & 0x7fffffffu\);",
                 STEP, "no longer keeps its columns' largest magnitudes from the values it loads")
        _require(src, r"if \(t == 0\) col_max\[consumer \* WGMMA_M \+ operand_col\(warp, h, g\)\] = m;", STEP,
                 "no longer has lane t = 0 write its column's largest magnitude")
        shuffles = tuple(int(x) for x in re.findall(r"m = max\(m, __shfl_xor_sync\(0xffffffffu, m, (\d+)\)\);", src))
        if not shuffles:
            raise ValueError(f"pictures: step {STEP} no longer combines a column's threads with shuffles")
        return cls(wgmma_m, wgmma_k, kn["TUNE_SPLIT"], kn["B_BOX"], shuffles, kn["BN"] // wgmma_m)

    def column(self, warp: int, h: int, g: int) -> int:
        """operand_col(warp, h, g): 0 .. WGMMA_M-1 inside the warpgroup's columns."""
        q = 2 * (warp % 2) + h
        return self.b_box * (warp // 2) + 4 * q + g % 4 + 16 * (g // 4)

    def k(self, t: int, kh: int, step: int) -> int:
        return t + 4 * kh + self.wgmma_k * step

    def values(self, warp: int, lane: int) -> list[tuple[int, int]]:
        """(column, k) of every value of B that a thread loads in one k tile."""
        g, t = lane // 4, lane % 4
        return [(self.column(warp, h, g), self.k(t, kh, step))
                for step in range(self.k_steps) for kh in range(2) for h in range(2)]

    def holders(self, column: int) -> list[tuple[int, int]]:
        """(warp, lane) of the threads that hold some value of the column."""
        return sorted({(w, lane) for w in range(4) for lane in range(WARP)
                       for c, _ in self.values(w, lane) if c == column})

    def combined(self, lane: int) -> set[int]:
        """The threads t of the lane's column group whose maxima the lane holds after the shuffles
        (each `max(m, shfl_xor(m, d))` adds the partner lane's)."""
        held = {x: {x % 4} for x in range(WARP)}
        for d in self.shuffles:
            held = {x: held[x] | held[x ^ d] for x in range(WARP)}
            if any(x // 4 != (x ^ d) // 4 for x in range(WARP)):
                return set()  # a partner outside the column's four lanes
        return held[lane]

    def rounds(self, lane: int) -> list[set[int]]:
        """What the lane holds before and after each shuffle."""
        held = {x: {x % 4} for x in range(WARP)}
        out = [set(held[lane])]
        for d in self.shuffles:
            held = {x: held[x] | held[x ^ d] for x in range(WARP)}
            out.append(set(held[lane]))
        return out


def maxima_instructions(repo: Path) -> int:
    """Instructions a value for its largest magnitude: the sign bit cleared (an AND) and a max,
    as the step writes it (`max(seen[h], __float_as_uint(b) & 0x7fffffffu)`)."""
    Fragments.read(repo)  # refuses a step that no longer keeps the maxima this way
    return 2


# ---- the picture ------------------------------------------------------------------------------------

ARROW_GAP = 14


def _heading(cv: Canvas, y: float, title: str, aside: str) -> None:
    """A loop's name in bold, an aside in grey after it."""
    cv.text(20, y, title, size=8.5, weight="bold")
    cv.text(20 + text_width(title, 8.5) * 1.1 + 10, y, aside, size=7.5, color=MUTED)


def _chain(cv: Canvas, x: float, y: float, boxes: list[tuple[str, str, bool]], h: float = 30,
           size: float = 7.5, back: str = "") -> tuple[float, float]:
    """Boxes left to right, an arrow between each two, and an arrow from the last back to the
    first below them (one more turn of the loop), labelled `back`. Returns (right edge, bottom)."""
    spans = []
    for label, fill, marked in boxes:
        w = text_width(label, size) + 12
        cv.rect(x, y, w, h, fill=fill, edge=MARK if marked else MUTED, lw=1.6 if marked else 0.7, z=3)
        cv.text(x + w / 2, y + h / 2, label, size=size, ha="center", color=MARK if marked else INK, z=6,
                weight="bold" if marked else "normal")
        spans.append((x, x + w))
        x += w + ARROW_GAP
    for (_, e), (s, _) in zip(spans, spans[1:]):
        cv.arrow(e + 1, y + h / 2, s - 1, y + h / 2, color=MUTED, lw=0.9)
    first_mid, last_mid = (spans[0][0] + spans[0][1]) / 2, (spans[-1][0] + spans[-1][1]) / 2
    low = y + h + 9
    cv.line(last_mid, y + h, last_mid, low, color=MUTED, lw=0.9)
    cv.line(last_mid, low, first_mid, low, color=MUTED, lw=0.9)
    cv.arrow(first_mid, low, first_mid, y + h + 1, color=MUTED, lw=0.9)
    if back:
        cv.text((first_mid + last_mid) / 2, low + 8, back, size=7.5, ha="center", color=MUTED)
    return spans[-1][1], low + 14


def _who_reads(cv: Canvas, repo: Path, y0: float) -> float:
    before, after = Warp0.read(repo, BEFORE), Warp0.read(repo, STEP)
    frag = Fragments.read(repo)
    per_thread = len(frag.values(0, 0))
    per_column = per_thread // 2
    wgmmas = 3 * frag.k_steps
    instructions = maxima_instructions(repo) * per_thread
    kb = before.b_tile_bytes // 1024
    cv.text(20, y0, "Who reads B for its columns' largest magnitudes, in the first sweep: the loops, in order",
            size=9.5, weight="bold")

    y = y0 + 22
    _heading(cv, y, f"step {BEFORE}: warp 0, one loop over the ring's uses n",
             f"(empty counts {before.empty_arrivals}: the consumers' {128 * before.consumers} threads and warp 0)")
    boxes = [(f"wait: use n - {before.stages}\ngiven back", WAIT_FILL, False),
             ("lane 0:\ncopy use n", COPY_FILL, False),
             (f"wait: use n - {before.behind}\nlanded", WAIT_FILL, False),
             (f"32 lanes read its B tile,\n{kb} KB: 4 columns a lane", READ_FILL, True),
             (f"lane 0: give\nuse n - {before.behind} back", WAIT_FILL, False)]
    right, bottom = _chain(cv, 20, y + 12, boxes, back="n + 1: the next copy waits behind this read")
    cv.text(right + 10, y + 12 + 15, "each copy waits\nbehind a read of\nshared memory", size=7.5, color=MARK)

    y = bottom + 16
    _heading(cv, y, f"step {STEP}: warp 0, thread 0 only", f"(empty counts {after.empty_arrivals}: the consumers alone)")
    boxes = [(f"wait: use n - {after.stages}\ngiven back", WAIT_FILL, False), ("copy\nuse n", COPY_FILL, False)]
    right, bottom = _chain(cv, 20, y + 12, boxes, back="n + 1")
    cv.text(right + 14, y + 12 + 15, f"as where A is split once: the copies run up to {after.stages} uses ahead, "
            "waiting for the consumers alone", size=7.5, color=INK)

    y = bottom + 16
    cv.text(20, y, f"step {STEP}: each of the {128 * after.consumers} consumer threads, use n", size=8.5,
            weight="bold")
    boxes = [("wait: use n\nlanded", WAIT_FILL, False),
             (f"load {per_thread} values of B\n(2 columns x {per_column} k)", MATH_FILL, False),
             (f"largest |b| a column:\n{instructions} instructions", READ_FILL, True),
             ("split each:\nbig + small", SPLIT_FILL, False),
             (f"{wgmmas} wgmmas: 3\nproducts x {frag.k_steps}", MATH_FILL, False),
             ("give use n\nback", WAIT_FILL, False)]
    right, bottom = _chain(cv, 20, y + 12, boxes, back="n + 1")
    note = (f"A B tile is TUNE_SPLIT x BN floats, {kb} KB. In step {BEFORE} warp 0 also read each one, "
            f"{before.behind} uses behind its copies ({VECTOR} bytes, 4 columns, a lane a row), and gave the stage "
            f"back only after that read. In step {STEP} each consumer thread takes the largest magnitude of its 2 "
            f"columns from the {per_thread} values it loads into registers for the wgmmas anyway: the float's bits "
            f"without the sign, then a max, {maxima_instructions(repo)} instructions a value. No read of shared "
            "memory is added; the instructions lie between the wait and the first wgmma.")
    lines = textwrap.wrap(note, 134)
    cv.text(20, bottom + 4, "\n".join(lines), size=8, va="top", color=INK)
    return bottom + 4 + len(lines) * 13.5


def _where_a_column_lies(cv: Canvas, repo: Path, y0: float) -> float:
    frag = Fragments.read(repo)
    warp, g_marked, h_marked = 0, 1, 0
    column = frag.column(warp, h_marked, g_marked)
    lanes = [lane for _, lane in frag.holders(column)]
    cv.text(20, y0, f"Where one column's values lie: consumer warp {warp} of warpgroup 0, one k tile "
            f"(TUNE_SPLIT = {frag.tune_split} k)", size=9.5, weight="bold")

    # The warp's 32 lanes, four to a group g, with the two columns each group holds.
    top, x0, lw, lh = y0 + 30, 64, 20, 18
    cv.text(20, top + lh / 2, "lane", size=8)
    for lane in range(WARP):
        g, t = lane // 4, lane % 4
        x = x0 + lane * lw
        mine = g == g_marked
        cv.rect(x, top, lw - 2, lh, fill=T_FILLS[t], edge=MARK if mine else "white", lw=1.4 if mine else 0.6,
                z=3 if mine else 2)
        cv.text(x + (lw - 2) / 2, top + lh / 2, str(lane), size=7, ha="center", z=6)
    for g in range(WARP // 4):
        xm = x0 + g * 4 * lw + 2 * lw - 1
        cv.text(xm, top - 8, f"g = {g}", size=7, ha="center", color=MUTED)
        cols = ", ".join(str(frag.column(warp, h, g)) for h in range(2))
        mine = g == g_marked
        cv.text(xm, top + lh + 9, f"cols {cols}", size=7, ha="center", color=MARK if mine else INK,
                weight="bold" if mine else "normal")
    cv.text(x0 + WARP * lw + 6, top + lh / 2, "t = lane % 4:", size=7, color=MUTED)
    for t in range(4):
        cv.rect(x0 + WARP * lw + 6 + t * 15, top + lh + 2, 13, 11, fill=T_FILLS[t], edge=MUTED, lw=0.5)
        cv.text(x0 + WARP * lw + 12.5 + t * 15, top + lh + 7.5, str(t), size=6.5, ha="center")

    # The column's values of one k tile: k = t + 4 kh + 8 step, coloured by the lane that holds it.
    strip, cw, ch = top + 62, 19, 18
    sx = 84
    cv.text(20, strip + ch / 2 - 5, f"column {column}", size=8, weight="bold", color=MARK)
    cv.text(20, strip + ch / 2 + 7, "k of the tile", size=7, color=MUTED)
    owner = {}
    for lane in lanes:
        for c, k in frag.values(warp, lane):
            if c == column:
                owner[k] = lane
    for k in range(frag.tune_split):
        x = sx + k * cw
        cv.rect(x, strip, cw - 2, ch, fill=T_FILLS[owner[k] % 4], edge="white", lw=0.6)
        cv.text(x + (cw - 2) / 2, strip + ch / 2, str(k), size=6.5, ha="center", z=6)
    for step in range(frag.k_steps):
        xa, xb = sx + step * frag.wgmma_k * cw, sx + (step + 1) * frag.wgmma_k * cw - 2
        cv.line(xa, strip - 5, xb, strip - 5, color=MUTED, lw=0.8)
        cv.text((xa + xb) / 2, strip - 12, f"step {step}", size=7, ha="center", color=MUTED)
        for kh in range(2):
            xk = xa + (kh * 4 + 2) * cw - 1
            cv.text(xk, strip + ch + 8, f"kh {kh}", size=6.5, ha="center", color=MUTED)
    cv.text(sx + frag.tune_split * cw + 8, strip + ch / 2 - 5, f"lanes {lanes[0]} .. {lanes[-1]}:", size=7.5,
            color=INK)
    cv.text(sx + frag.tune_split * cw + 8, strip + ch / 2 + 7, f"{len(owner) // len(lanes)} values each", size=7.5,
            color=INK)

    # The shuffles: each round, every lane takes the max with its partner's (xor d).
    by, bh, bw = strip + ch + 36, 16, 66
    cols_x = [150 + i * 150 for i in range(len(frag.shuffles) + 1)]
    rounds = {lane: frag.rounds(lane) for lane in lanes}
    cv.text(20, by + 1.5 * (bh + 6) + bh / 2, "after the\nfirst sweep", size=7.5, color=MUTED)
    for i, x in enumerate(cols_x):
        head = "each lane's own max" if i == 0 else f"max with lane xor {frag.shuffles[i - 1]}"
        cv.text(x + bw / 2, by - 9, head, size=7, ha="center", color=MUTED)
        for j, lane in enumerate(lanes):
            y = by + j * (bh + 6)
            held = sorted(rounds[lane][i])
            label = f"{lane}: " + ("t " + ",".join(str(t) for t in held) if len(held) < 4 else "all four")
            cv.rect(x, y, bw, bh, fill=T_FILLS[lane % 4] if len(held) == 1 else "white",
                    edge=MARK if len(held) == 4 else MUTED, lw=1.2 if len(held) == 4 else 0.6, z=3)
            cv.text(x + bw / 2, y + bh / 2, label, size=7, ha="center", z=6)
        if i:
            d = frag.shuffles[i - 1]
            for j, lane in enumerate(lanes):
                k = lanes.index(lane ^ d)
                cv.line(cols_x[i - 1] + bw, by + j * (bh + 6) + bh / 2, x, by + k * (bh + 6) + bh / 2,
                        color=MUTED, lw=0.7)
    last = cols_x[-1] + bw
    cv.arrow(last + 2, by + bh / 2, last + 40, by + bh / 2, color=MARK, lw=1.0)
    cv.text(last + 44, by + bh / 2, f"lane {lanes[0]} (t = 0) writes col_max[{column}]", size=7.5, color=MARK,
            weight="bold")
    cv.text(last + 44, by + bh + 14, "every thread votes: does one of its\ncolumns need a factor? (decide)",
            size=7.5, color=INK, va="top")
    end = by + len(lanes) * (bh + 6)
    k_list = ", ".join(str(frag.k(0, kh, step)) for step in range(frag.k_steps) for kh in range(2))
    note = (f"Lane 4 g + t holds columns operand_col(warp, h, g), h = 0, 1, at k = t + 4 kh + {frag.wgmma_k} step "
            f"(kh = 0, 1; step = 0 .. {frag.k_steps - 1}): {len(frag.values(0, 0))} values a k tile, t = 0 the "
            f"k {k_list}. So a column's {frag.tune_split} values of a tile lie with the four lanes 4 g .. 4 g + 3, "
            f"and the shuffles with lane xor {' and xor '.join(str(d) for d in frag.shuffles)} stay among them: "
            "after two rounds every one of the four holds the column's largest magnitude.")
    lines = textwrap.wrap(note, 134)
    cv.text(20, end + 6, "\n".join(lines), size=8, va="top", color=INK)
    return end + 6 + len(lines) * 13.5


def draw_columns_by_consumers(repo: Path) -> Canvas:
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: the consumers find B's columns' largest magnitudes; warp 0 only copies")
    cv.text(20, 44, "Where A is split in the pipeline, the largest magnitudes of a block's rows and columns say "
            "whether its first sweep\nstands. The consumers load every value of B into registers anyway: they "
            "keep the columns' maxima.", size=9, va="center")
    end = _who_reads(cv, repo, 82)
    _where_a_column_lies(cv, repo, end + 18)
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "34_columns_by_consumers.svg": draw_columns_by_consumers,
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
