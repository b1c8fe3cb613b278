"""Step 39's picture (docs/pictures/39_odd_strides.svg): B read where it lies at an odd stride, as
four phases; and the survey's odd shapes measured in phases and with step 38's copy of B, each
against step 38.

The left half draws the idea from the step's source. Its ldb is the N of the survey's first odd
shape (tests/shapes.txt's survey.odd, smallest C first), B's base at a 16-byte address (as
cudaMalloc gives it): row k of a k tile starts (k ldb mod 4) floats past a 16-byte address (k0 is
a multiple of TUNE_SPLIT, so k0 ldb is a multiple of 4). What it draws is read from
steps/39_odd_strides and checked there (`Layout.read`): B_PHASES_ODD phases, each the rows p, p +
P, ... at the stride P ldb (phase_maps, its shift the first row's floats past 16 bytes, its map
based that many floats before), the shared tile's slot of a row (b_slot, ported), one box of
B_BOX columns more (b_tile_bytes), the producer's boxes of TUNE_SPLIT / P rows at the block's
column in each phase's own columns, and the consumers' column plus the phase's shift (phase_col).

The right half: results/nvidia-h100-80gb-hbm3/experiments/39_phases_or_copy.csv, one run of step
38 and of step 39 (its rule, then SGEMM_B=phases and SGEMM_B=copy) at each shape; drawn are the
odd shapes' times over step 38's, the form the rule takes marked. The rule's choice is its port:
step 39's choose_tile is step 37's (plots/pictures_tile_by_shape.py's port, with step 39's knobs;
refused where the two steps' rules part) and b_phases compares the copy (8 K N bytes at
COPY_PERCENT of the device memory's bandwidth, plus PASS_US) with PHASES_PERCENT of the chosen
plan's estimate. plots/tests/test_pictures_odd_strides.py holds the port to the rule's own run.

PICTURES maps a file name to a function that takes the repository root and returns the SVG text;
the same sources give the same bytes. `python -m plots.pictures_odd_strides` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import csv
import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from matplotlib.patches import Polygon

from plots.pictures_time import (COPY, INK, MARK, MATH, MUTED, PICTURES_DIR, REDUCE, SHORT, WAIT, Canvas, _render,
                                 _svg, knobs, source_text, text_width, tint)

STEP, BEFORE, RULE_STEP = 39, 38, 37
GPU = Path("results") / "nvidia-h100-80gb-hbm3"
EXPERIMENT = GPU / "experiments" / "39_phases_or_copy.csv"
SHAPES = Path("tests") / "shapes.txt"
ODD = "survey.odd"
# The experiment's variants: step 38's rows, then step 39's: its rule, each form forced.
BEFORE_VARIANT, RULE, PHASES, COPIED = "step 38", "the rule", "SGEMM_B=phases", "SGEMM_B=copy"
FORMS = {PHASES: "phases", COPIED: "copy"}
HEIGHT = 690  # pixels: the page's height

PHASE_COLORS = (MATH, REDUCE, SHORT, "#64b5cd")  # phase 0 .. 3
PHASE_FILLS = tuple(tint(c, 0.5) for c in PHASE_COLORS)
OTHER_FILL = tint(WAIT, 0.8)   # floats read that are not the row's (or not the block's columns)
PHASES_COLOR, COPY_COLOR = MARK, COPY
CHOSEN_FILL = tint(MUTED, 0.14)  # the row of the form the rule takes


def _require(text: str, pattern: str, what: str) -> re.Match:
    found = re.search(pattern, text)
    if not found:
        raise ValueError(f"pictures: step {STEP}'s source {what}")
    return found


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _shape(shape: tuple[int, int, int]) -> str:
    return "x".join(str(d) for d in shape)


# ---- the shapes and the times -------------------------------------------------------------------

def odd_shapes(repo: Path) -> list[tuple[int, int, int]]:
    """tests/shapes.txt's survey.odd, smallest C (M x N) first."""
    text = (repo / SHAPES).read_text(encoding="utf-8")
    found = re.search(rf"(?m)^{re.escape(ODD)}\s+(\S+)$", text)
    if not found:
        raise ValueError(f"pictures: {SHAPES} has no {ODD}")
    shapes = [tuple(int(d) for d in item.split("x")) for item in found.group(1).split(",")]
    if any(len(s) != 3 for s in shapes):
        raise ValueError(f"pictures: {ODD}'s shapes are not M x N x K")
    return sorted(shapes, key=lambda s: (s[0] * s[1], s))


@dataclass(frozen=True)
class Shape:
    shape: tuple[int, int, int]
    before_ms: float    # step 38: B copied before every GEMM
    rule_ms: float      # step 39, its rule's choice
    phases_ms: float    # step 39, SGEMM_B=phases
    copy_ms: float      # step 39, SGEMM_B=copy

    def ratio(self, form: str) -> float:
        """The form's time over step 38's: "phases", "copy" or "rule"."""
        return {"phases": self.phases_ms, "copy": self.copy_ms, "rule": self.rule_ms}[form] / self.before_ms

    @property
    def faster(self) -> str:
        return "phases" if self.phases_ms < self.copy_ms else "copy"

    @property
    def rule_ran(self) -> str:
        """The form whose time the rule's own run is nearer."""
        return "phases" if abs(self.rule_ms - self.phases_ms) < abs(self.rule_ms - self.copy_ms) else "copy"


@dataclass(frozen=True)
class Measured:
    gpu: str
    run: str                 # git_rev: one run
    shapes: list[Shape]      # survey.odd's, smallest C first


def _variant(row: dict[str, str]) -> str | None:
    if row["step"].startswith(f"{BEFORE}_") and row["variant"] == BEFORE_VARIANT:
        return BEFORE_VARIANT
    if row["step"].startswith(f"{STEP}_") and row["variant"] in (RULE, PHASES, COPIED):
        return row["variant"]
    return None


def measured(repo: Path) -> Measured:
    """The experiment's rows of the odd shapes: step 38, step 39's rule and both forms, one run,
    every result verified."""
    rows: dict[str, dict[tuple[int, int, int], dict[str, str]]] = {}
    for r in _rows(repo / EXPERIMENT):
        variant = _variant(r)
        if variant:
            rows.setdefault(variant, {})[(int(r["m"]), int(r["n"]), int(r["k"]))] = r
    out, used = [], []
    for shape in odd_shapes(repo):
        found = [rows.get(v, {}).get(shape) for v in (BEFORE_VARIANT, RULE, PHASES, COPIED)]
        if any(r is None for r in found):
            raise ValueError(f"pictures: {EXPERIMENT.name} has no row of {_shape(shape)} for step {BEFORE}, "
                             f"the rule and both forms")
        if any(r["verified"] != "1" for r in found):
            raise ValueError(f"pictures: {EXPERIMENT.name}'s rows of {_shape(shape)} are not all verified")
        used += found
        out.append(Shape(shape, *(float(r["ms_median"]) for r in found)))
    runs, gpus = {r["git_rev"] for r in used}, {r["gpu"] for r in used}
    if len(runs) != 1 or len(gpus) != 1:
        raise ValueError(f"pictures: {EXPERIMENT.name}'s odd shapes are not one run on one GPU: {sorted(runs)}, "
                         f"{sorted(gpus)}")
    return Measured(gpus.pop(), runs.pop(), out)


# ---- the rule -----------------------------------------------------------------------------------

def _rule_code(src: str, number: int) -> str:
    """choose_tile and what it calls (tile_us .. choose_tile), without comments or blank lines."""
    found = re.search(r"(?s)\ndouble tile_us\(int bn\) \{.*?\nPlan choose_tile\(const sgemm::Problem& p\) \{.*?\n\}\n",
                      src)
    if not found:
        raise ValueError(f"pictures: step {number}'s source has no tile_us .. choose_tile")
    lines = (line.split("//")[0].strip() for line in found.group(0).splitlines())
    return "\n".join(line for line in lines if line)


@dataclass(frozen=True)
class Choice:
    form: str          # "phases" or "copy"
    copy_us: float     # b_phases' estimate of the copy
    gemm_us: float     # the chosen plan's estimate
    path: str          # the chosen plan's path, without B's part


def rule_choices(repo: Path, shapes: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], Choice]:
    """b_phases at each shape (B's base at 16 bytes, ldb = N, SGEMM_B unset), after step 39's
    choose_tile: step 37's, ported (plots/pictures_tile_by_shape.py), with step 39's knobs."""
    from plots.pictures_tile_by_shape import Rule
    src = source_text(repo, STEP)
    if _rule_code(src, STEP) != _rule_code(source_text(repo, RULE_STEP), RULE_STEP):
        raise ValueError(f"pictures: step {STEP}'s choose_tile is no longer step {RULE_STEP}'s: port it")
    _require(src, r"const int phases = b_phases\(p, plan\.place\.us\);",
             "no longer passes b_phases the chosen plan's estimate")
    _require(src, r"if \(reinterpret_cast<uintptr_t>\(p\.B\) % 16 == 0 && p\.ldb % 4 == 0\) return 1;\s*"
                  r"if \(p\.K < B_PHASES_ODD\) return 0;",
             "no longer reads an aligned B itself and copies B where K < B_PHASES_ODD")
    _require(src, r"const double copy_us = 8\.0 \* p\.K \* p\.N / \(sgemm::gpu\(\)\.dram_bytes_per_us \* COPY_PERCENT "
                  r"/ 100\.0\) \+ PASS_US;\s*return copy_us \* 100 > gemm_us \* PHASES_PERCENT \? B_PHASES_ODD : 0;",
             "no longer weighs the copy (8 K N bytes at COPY_PERCENT, PASS_US) against PHASES_PERCENT of the GEMM")
    phases = Layout.read(repo).phases
    rule = Rule(repo)
    kn = knobs(repo, STEP)
    rule.knobs, rule.wide_bn = kn, kn["BN"]
    out = {}
    for m, n, k in shapes:
        if n % 4 == 0 or k < phases:
            raise ValueError(f"pictures: {m}x{n}x{k}: B's rows are aligned, or K has too few rows for the phases")
        plan = rule.choose(m, n, k)
        copy_us = 8.0 * k * n / (rule.gpu["dram_bytes_per_us"] * kn["COPY_PERCENT"] / 100.0) + kn["PASS_US"]
        out[(m, n, k)] = Choice("phases" if copy_us * 100 > plan.us * kn["PHASES_PERCENT"] else "copy", copy_us,
                                plan.us, plan.path)
    return out


# ---- the layout ---------------------------------------------------------------------------------

def b_slot(k: int, phases: int, tune_split: int) -> int:
    """Step 39's b_slot<P>(k): row k of a k tile in the shared tile, read in P phases."""
    return (k % phases) * (tune_split // phases) + k // phases


@dataclass(frozen=True)
class Layout:
    phases: int        # B_PHASES_ODD
    tune_split: int    # rows of a k tile
    box: int           # B_BOX: columns of a TMA box of B
    bn: int            # the wide tile's columns
    boxes: int         # boxes of B_BOX columns in the tile read in phases

    @classmethod
    def read(cls, repo: Path) -> "Layout":
        src, kn = source_text(repo, STEP), knobs(repo, STEP)
        phases = int(_require(src, r"constexpr int B_PHASES_ODD = (\d+);", "has no B_PHASES_ODD").group(1))
        _require(src, r"constexpr int b_slot\(int k\) \{ return \(k % P\) \* \(TUNE_SPLIT / P\) \+ k / P; \}",
                 "no longer places row k at (k % P) (TUNE_SPLIT / P) + k / P (b_slot)")
        _require(src, r"return TUNE_SPLIT \* \(bn \+ \(phases > 1 \? B_BOX : 0\)\) \* sizeof\(float\);",
                 "no longer holds one box of B_BOX columns more where B is read in phases (b_tile_bytes)")
        _require(src, r"const float\* first = b \+ std::size_t\(ph\) \* ld;\s*"
                      r"maps\.shift\[ph\] = static_cast<int>\(reinterpret_cast<uintptr_t>\(first\) % 16 / sizeof\(float\)\);"
                      r"\s*const int phase_rows = \(rows - ph \+ phases - 1\) / phases;\s*"
                      r"maps\.map\[ph\] = tensor_map\(first - maps\.shift\[ph\], phase_rows, cols \+ maps\.shift\[ph\], "
                      r"phases \* ld,\s*TUNE_SPLIT / phases, B_BOX\);",
                 "no longer maps phase p as rows p, p + P, ... at the stride P ldb, based its shift before its "
                 "first row (phase_maps)")
        _require(src, r"tma_load\(stage_b\(s\) \+ box \* \(TUNE_SPLIT \* B_BOX \* 4\) \+ ph \* \(TUNE_SPLIT / B_PHASES\) "
                      r"\* 128,\s*[^;]*?block_col \+ box \* B_BOX,\s*k0 / B_PHASES, &full\[s\]\);",
                 "no longer copies each box as B_PHASES boxes of TUNE_SPLIT / B_PHASES rows at the block's column")
        _require(src, r"phase_col\[h\] = consumer \* WGMMA_M \+ operand_col\(warp, h, g\) \+ "
                      r"\(B_PHASES > 1 \? b_shifts\.shift\[t\] : 0\);",
                 "no longer reads a phase's columns at the column plus its shift (phase_col)")
        if phases != 4 or kn["TUNE_SPLIT"] % phases or kn["BN"] % kn["B_BOX"]:
            raise ValueError(f"pictures: step {STEP} reads B in {phases} phases of a {kn['TUNE_SPLIT']}-row k tile, "
                             f"boxes of {kn['B_BOX']} columns: the picture draws 4, whole boxes")
        return cls(phases, kn["TUNE_SPLIT"], kn["B_BOX"], kn["BN"], kn["BN"] // kn["B_BOX"] + 1)

    def shift(self, k: int, ldb: int) -> int:
        """Floats past a 16-byte address where row k0 + k starts (B's base at 16 bytes, k0 ldb a
        multiple of 4); phase_maps' shift of phase k % P."""
        return k * ldb % 4

    def slots(self) -> list[int]:
        """slot -> the row of the k tile there."""
        rows = [0] * self.tune_split
        for k in range(self.tune_split):
            rows[b_slot(k, self.phases, self.tune_split)] = k
        return rows


# ---- the picture --------------------------------------------------------------------------------

def _k(k: int) -> str:
    return f"k0+{k}" if k else "k0"


def _memory_panel(cv: Canvas, lay: Layout, ldb: int, x0: float, y0: float) -> float:
    """(a): the k tile's rows as they lie, the first floats of each, on 16-byte chunks."""
    cell, row_h, floats = 8.0, 5.0, 20
    left = x0 + 38
    cv.text(left, y0, "in memory, row after row", size=7.5, weight="bold", va="top")
    top = y0 + 30
    cv.text(left + 2 * cell, top - 11, "16 bytes", size=7, color=MUTED, ha="center")
    for chunk in range(floats // 4 + 1):
        x = left + 4 * chunk * cell
        cv.line(x, top - 4, x, top + lay.tune_split * row_h + 3, color=INK, lw=0.9, z=4)
    for k in range(lay.tune_split):
        y = top + k * row_h
        s = lay.shift(k, ldb)
        if s:
            cv.rect(left, y, s * cell, row_h, fill=OTHER_FILL, edge="none", z=2)
        cv.rect(left + s * cell, y, (floats - s) * cell, row_h, fill=PHASE_FILLS[k % lay.phases], edge="none", z=2)
        cv.line(left, y, left + floats * cell, y, color="white", lw=0.6, z=3)
        if k % lay.phases == 0:
            cv.text(left - 4, y + row_h / 2, _k(k), size=7, ha="right", color=INK)
    for f in range(1, floats):
        cv.line(left + f * cell, top, left + f * cell, top + lay.tune_split * row_h, color="white", lw=0.4, z=3)
    end = left + floats * cell
    cv.text(end + 3, top + lay.tune_split * row_h / 2, "...", size=8, color=MUTED)
    return top + lay.tune_split * row_h


def _phases_panel(cv: Canvas, lay: Layout, ldb: int, x0: float, y0: float) -> float:
    """(b): each phase's rows, the stride P ldb, every row shift floats past 16 bytes."""
    cell, row_h, floats = 6.0, 3.5, 12
    per = lay.tune_split // lay.phases
    cv.text(x0, y0, f"(b) as {lay.phases} matrices, every {lay.phases}th row a phase:\n"
            f"stride {lay.phases}·ldb = {lay.phases * ldb} floats = {lay.phases * ldb // 4} x 16 bytes", size=7.5,
            weight="bold", va="top")
    top = y0 + 34
    for p in range(lay.phases):
        y = top + p * (per * row_h + 11.5)
        s = lay.shift(p, ldb)
        for chunk in range(floats // 4 + 1):
            x = x0 + 4 * chunk * cell
            cv.line(x, y - 2, x, y + per * row_h + 2, color=INK, lw=0.9, z=4)
        for i in range(per):
            yy = y + i * row_h
            if s:
                cv.rect(x0, yy, s * cell, row_h, fill=OTHER_FILL, edge="none", z=2)
            cv.rect(x0 + s * cell, yy, (floats - s) * cell, row_h, fill=PHASE_FILLS[p], edge="none", z=2)
            cv.line(x0, yy, x0 + floats * cell, yy, color="white", lw=0.5, z=3)
        for f in range(1, floats):
            cv.line(x0 + f * cell, y, x0 + f * cell, y + per * row_h, color="white", lw=0.4, z=3)
        last = p + lay.phases * (per - 1)
        rows = ", ".join(_k(p + lay.phases * i) for i in range(2))
        cv.text(x0 + floats * cell + 7, y + per * row_h / 2,
                f"phase {p}: rows {rows}, ..., {_k(last)}\n"
                + (f"each starts {s} float{'s' if s > 1 else ''} past 16 bytes" if s else "each starts at 16 bytes"),
                size=7, color=INK)
    return top + lay.phases * per * row_h + (lay.phases - 1) * 11.5


def _tile_panel(cv: Canvas, lay: Layout, ldb: int, x0: float, y0: float, width: float) -> float:
    """(c): the k tile in shared memory, slot by slot, boxes of B_BOX columns, each phase's
    columns at the block's column plus its shift; the block's first and last columns closer."""
    cols = lay.boxes * lay.box
    left = x0 + 8
    scale = (width - 8) / cols
    row_h = 4.5
    top = y0 + 54
    per = lay.tune_split // lay.phases
    cv.text(x0, y0, f"(c) In shared memory, a block of {lay.bn} columns: {lay.boxes} boxes of {lay.box} columns",
            size=9, weight="bold", va="top")
    cv.text(x0, y0 + 14, f"each box of {lay.box} columns: {lay.phases} TMA boxes of {per} rows, phase by phase;\n"
            f"row k0+k in slot {per}·(k % {lay.phases}) + k / {lay.phases} (b_slot)", size=7.5, va="top")
    for b in range(lay.boxes):
        cx = left + (b + 0.5) * lay.box * scale
        label = (f"one box of {lay.box}\ncolumns more" if b == lay.boxes - 1 else f"box {b}")
        cv.text(cx, top - 4, label, size=7, ha="center", va="bottom", color=MARK if b == lay.boxes - 1 else MUTED,
                weight="bold" if b == lay.boxes - 1 else "normal")
    slots = lay.slots()
    for slot, k in enumerate(slots):
        p, s = k % lay.phases, lay.shift(k, ldb)
        y = top + slot * row_h
        if s:
            cv.rect(left, y, s * scale, row_h, fill=OTHER_FILL, edge="none", z=2)
        cv.rect(left + s * scale, y, lay.bn * scale, row_h, fill=PHASE_FILLS[p], edge="none", z=2)
        cv.rect(left + (s + lay.bn) * scale, y, (cols - s - lay.bn) * scale, row_h, fill=OTHER_FILL, edge="none", z=2)
    for p in range(lay.phases):
        ks = [k for k in slots if k % lay.phases == p]
        first = slots.index(ks[0])
        y = top + (first + per / 2) * row_h
        rows = ", ".join(_k(k) for k in ks[:2])
        s = lay.shift(p, ldb)
        where = f"the block's column c in column c + {s}" if s else "the block's column c in column c"
        cv.text(left + (s + lay.bn / 2) * scale, y,
                f"phase {p}: rows {rows}, ..., {_k(ks[-1])} in slots {first}-{first + per - 1}\n{where}",
                size=7, ha="center", color=INK)
        cv.ax.texts[-1].set_bbox({"facecolor": PHASE_FILLS[p], "edgecolor": "none", "pad": 1.0})
        if p:
            cv.line(left, top + first * row_h, left + cols * scale, top + first * row_h, color="white", lw=1.2, z=3)
    for b in range(lay.boxes + 1):
        x = left + b * lay.box * scale
        cv.line(x, top - 2, x, top + lay.tune_split * row_h + 2, color=INK, lw=1.1, z=4)
    cv.rect(left, top, cols * scale, lay.tune_split * row_h, fill="none", edge=INK, lw=1.1, z=4)
    bottom = top + lay.tune_split * row_h
    cv.text(left, bottom + 9, "TMA boxes start at 16-byte columns: a phase's box at the block's column of its map",
            size=7.5, color=INK)
    # closer: the block's first columns and its last ones, into the box more
    zy = bottom + 50
    zcell, zrow = 10.0, 7.0
    spans = ((0, 8, "closer: the block's\nfirst columns"),
             (lay.bn - 6, lay.bn + 6, f"its last columns, up to 3\ninto the box more"))
    zx = left
    for c0, c1, label in spans:
        cv.text(zx, zy - 6, label, size=7, color=INK, va="bottom")
        for slot in range(0, lay.tune_split, per):
            k = slots[slot]
            p, s = k % lay.phases, lay.shift(k, ldb)
            y = zy + (slot // per) * (zrow + 2)
            for c in range(c0, c1):
                inside = s <= c < s + lay.bn
                cv.rect(zx + (c - c0) * zcell, y, zcell, zrow, fill=PHASE_FILLS[p] if inside else OTHER_FILL,
                        edge="white", lw=0.4, z=2)
        for c in range(c0, c1 + 1):
            if c % 4 == 0:
                x = zx + (c - c0) * zcell
                cv.line(x, zy - 3, x, zy + lay.phases * (zrow + 2) + 1, color=INK,
                        lw=1.8 if c % lay.box == 0 else 0.8, z=4)
                cv.text(x, zy + lay.phases * (zrow + 2) + 7, str(c), size=6.5, ha="center", color=MUTED)
        zx += (c1 - c0) * zcell + 36
    cv.rect(zx, zy, 14, 8, fill=OTHER_FILL, edge="none")
    cv.text(zx + 18, zy - 2, "read, not used: another\nrow's floats, another\nblock's columns", size=7, va="top",
            color=MUTED)
    return zy + lay.phases * (zrow + 2) + 14


def _times_panel(cv: Canvas, repo: Path, x0: float, y0: float, width: float) -> float:
    data = measured(repo)
    choices = rule_choices(repo, [s.shape for s in data.shapes])
    cv.text(x0, y0, f"(d) Time over step {BEFORE}'s time,\n{data.gpu}, one run", size=9, weight="bold", va="top")
    sub = (f"The survey's odd shapes, smallest C first (step {BEFORE} copies B first); git {data.run}")
    cv.text(x0, y0 + 30, "\n".join(textwrap.wrap(sub, int(width / text_width("x", 7.5)))), size=7.5, va="top")
    ratios = [s.ratio(f) for s in data.shapes for f in ("phases", "copy", "rule")]
    lo = min(0.95, int((min(ratios) - 0.02) * 20) / 20)
    hi = max(1.05, (int((max(ratios) + 0.02) * 20) + 1) / 20)
    left, right, values = x0 + 4, x0 + width - 34, x0 + width - 2

    def x(r: float) -> float:
        return left + (r - lo) / (hi - lo) * (right - left)

    bar_h, band = 9.0, 40.0
    top = y0 + 80
    bottom = top + band * len(data.shapes)
    r = lo
    while r <= hi + 1e-9:
        cv.line(x(r), top - 4, x(r), bottom - 6, color=tint(MUTED, 0.25), lw=0.6, z=1)
        cv.text(x(r), bottom - 2, f"{r:.2f}", size=7, ha="center", color=MUTED, va="top")
        r += 0.05
    cv.line(x(1.0), top - 8, x(1.0), bottom - 6, color=INK, lw=1.2, z=4)
    cv.text(x(1.0) - 4, top - 12, "< faster", size=7, ha="right", color=MUTED)
    cv.text(x(1.0) + 4, top - 12, "slower >", size=7, color=MUTED)
    y = top
    for s in data.shapes:
        chosen = choices[s.shape].form
        cv.text(left, y + 3, f"{_shape(s.shape)}  (step {BEFORE}: {s.before_ms * 1000:.0f} us)", size=7.5,
                backdrop=True)
        for i, (form, color) in enumerate((("phases", PHASES_COLOR), ("copy", COPY_COLOR))):
            yy = y + 10 + i * (bar_h + 2)
            ratio = s.ratio(form)
            mine = form == chosen
            if mine:  # the rule's form: its row shaded
                cv.rect(left - 2, yy - 1, values - left + 4, bar_h + 2, fill=CHOSEN_FILL, edge="none", z=0)
            a, b = sorted((x(1.0), x(ratio)))
            if b - a < 2.0:  # as long as step 38: a sliver past the line
                a, b = (a - 2.0, a) if ratio < 1.0 else (a, a + 2.0)
            cv.rect(a, yy, b - a, bar_h, fill=tint(color, 0.85 if mine else 0.4), edge=INK if mine else "none",
                    lw=1.1, z=3)
            cv.text(values, yy + bar_h / 2, f"{ratio:.2f}", size=7, ha="right", color=INK if mine else MUTED,
                    weight="bold" if mine else "normal")
            if mine:
                rx, ry = x(s.ratio("rule")), yy + bar_h / 2
                cv.ax.add_patch(Polygon([(rx, ry - 4.5), (rx + 3, ry), (rx, ry + 4.5), (rx - 3, ry)], closed=True,
                                        facecolor=INK, edgecolor="white", linewidth=0.5, zorder=6))
        y += band
    ly = bottom + 22
    for i, (color, label) in enumerate(((PHASES_COLOR, "B in phases (SGEMM_B=phases)"),
                                        (COPY_COLOR, "B copied first (SGEMM_B=copy)"))):
        cv.rect(left, ly + 14 * i - 4, 14, 8, fill=tint(color, 0.85), edge="none")
        cv.text(left + 20, ly + 14 * i, label, size=7.5)
    ly += 28
    cv.rect(left - 2, ly - 6, 18, 12, fill=CHOSEN_FILL, edge="none")
    cv.rect(left, ly - 4, 14, 8, fill="white", edge=INK, lw=1.1)
    cv.text(left + 20, ly, "shaded: the form step 39's rule takes", size=7.5)
    ly += 14
    cv.ax.add_patch(Polygon([(left + 7, ly - 4.5), (left + 10, ly), (left + 7, ly + 4.5), (left + 4, ly)],
                            closed=True, facecolor=INK, edgecolor="white", linewidth=0.5))
    cv.text(left + 20, ly, "the rule's own run (SGEMM_B unset)", size=7.5)
    kn = knobs(repo, STEP)
    phased = [s for s in data.shapes if choices[s.shape].form == "phases"]
    right_ones = sum(choices[s.shape].form == s.faster for s in data.shapes)
    note = (f"The rule reads B in phases where the copy (8 K N bytes at {kn['COPY_PERCENT']}% of the device "
            f"memory's bandwidth, plus {kn['PASS_US']} us) would cost more than {kn['PHASES_PERCENT']}% of the "
            f"GEMM's estimate: at {len(phased)} of the {len(data.shapes)} shapes"
            + (f", those of the {len(phased)} smallest C" if phased and phased == data.shapes[:len(phased)] else "")
            + f". It takes the faster form at {right_ones} of {len(data.shapes)}.")
    lines = textwrap.wrap(note, int(width / text_width("x", 7.5)))
    cv.text(left, ly + 14, "\n".join(lines), size=7.5, va="top")
    return ly + 14 + len(lines) * 12.5


def draw_odd_strides(repo: Path) -> Canvas:
    lay = Layout.read(repo)
    first = odd_shapes(repo)[0]
    ldb = first[1]
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: B's rows at an odd stride, read where they lie as {lay.phases} phases")
    intro = ("TMA reads rows whose stride is a multiple of 16 bytes. Where N is odd, B's is not: step 38 copied B to "
             "an aligned workspace before every GEMM. Step 39 reads every fourth row as a matrix of its own, whose "
             "stride is a multiple of 16 bytes, and copies B only where that costs less.")
    intro_lines = textwrap.wrap(intro, 122)
    cv.text(20, 32, "\n".join(intro_lines), size=8.5, va="top")
    y0 = 32 + len(intro_lines) * 15 + 8
    cv.text(20, y0, f"(a) B of {_shape(first)}, ldb = N = {ldb} floats: one k tile's rows", size=9, weight="bold",
            va="top")
    cv.text(20, y0 + 16, f"row k0+k starts (k·{ldb} mod 4) floats past a 16-byte address (k0 a multiple of "
            f"{lay.tune_split})", size=7.5, va="top")
    end_a = _memory_panel(cv, lay, ldb, 20, y0 + 34)
    end_b = _phases_panel(cv, lay, ldb, 236, y0 + 34)
    end = _tile_panel(cv, lay, ldb, 20, max(end_a, end_b) + 18, 470)
    note = ("Phase p's map is based at 16 bytes, shift[p] floats before its first row, and its box starts at the "
            "block's column: B's column c lands at c + shift[p], and the last shift[p] columns need the box more. "
            "A consumer thread reads rows t, t + 4, t + 8, ... (all of phase t) at its column + shift[t] (phase_col).")
    lines = textwrap.wrap(note, 82)
    cv.text(20, end + 4, "\n".join(lines), size=7.5, va="top")
    left_end = end + 4 + len(lines) * 12.5
    right_end = _times_panel(cv, repo, 520, y0, 262)
    if max(left_end, right_end) > cv.height - 4:
        raise ValueError(f"pictures: step {STEP}'s picture needs {max(left_end, right_end):.0f} pixels, "
                         f"not {cv.height}")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "39_odd_strides.svg": draw_odd_strides,
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
