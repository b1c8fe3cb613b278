"""Step 33's picture (docs/pictures/33_raw_big_part.svg): one k tile of the pipeline's first sweep
in step 32 and in step 33, and one value's two parts, rounded and truncated, on a number line.

Every order and number drawn comes from the steps' sources. The order of a tile's products and
where the consumers wait for the splitters: `Order` reads the consumers' `sweep` lambda of step
32 and of step 33 (its wgmma calls, their accumulator, B's part and A's stage, and the wait on
`split`, under the `if constexpr` conditions that hold in the pipeline's first sweep: SPLIT_ONCE
false, and in step 33 RAW and `first` true). What the splitters store in the first sweep:
`stores()` reads their loop (`a[i] = ...` the big part, `a_small[i] = ...` the small part) under
the same conditions. The lengths on the time axis are schematic (a copy, a load, a store and a
product a slot each, in proportion): they show the order of things in one tile, not measured
times, and say so. The number line: `Parts` ports the steps' bit operations (tf32_round's add
and mask, small_of_truncated's mask, SMALL_SCALE) in Python on an example value, and
`Budget` the error of one product that follows from them, in u = 2^-24, against the harness's
worst-case bound 2 (K + 2) u, with RAW_MIN_K and the step's static_assert on it.
plots/tests/test_pictures_raw.py holds the ports and the picture to the steps.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_raw` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import struct
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_time import (COPY, INK, MARK, MATH, MUTED, PICTURES_DIR, REDUCE, SHORT, Canvas, _render, _svg,
                                 knobs, source_text, text_width, tint)

STEP = 33
BEFORE = 32
HEIGHT = 650        # pixels: the page's height
U = 2.0 ** -24      # the unit of the error columns: FP32's unit roundoff

COPY_FILL, SPLIT_FILL, B_FILL = tint(COPY, 0.55), tint(SHORT, 0.55), tint(REDUCE, 0.5)
BIG_FILL, SMALL_FILL = tint(MATH, 0.75), tint(MATH, 0.4)


def _require(src: str, pattern: str, what: str, number: int = STEP) -> re.Match:
    found = re.search(pattern, src, re.S)
    if not found:
        raise ValueError(f"pictures: step {number} {what}")
    return found


# ---- the steps' code: the order of a tile's products, what the splitters store ----------------

def _holds(condition: str, names: dict[str, bool]) -> bool:
    """An `if constexpr` condition of the steps (names, !, &&, ||, parentheses) under `names`."""
    tokens = re.findall(r"[A-Za-z_]\w*|&&|\|\||!|\(|\)|\S", condition)
    words = []
    for token in tokens:
        if token in ("&&", "||", "!", "(", ")"):
            words.append({"&&": "and", "||": "or", "!": "not"}.get(token, token))
        elif token in names:
            words.append(str(bool(names[token])))
        else:
            raise ValueError(f"pictures: `if constexpr ({condition})`: {token!r} is not one of {sorted(names)}")
    return bool(eval(" ".join(words), {"__builtins__": {}}, {}))  # only True/False/and/or/not/()


def _events(body: str, names: dict[str, bool], event: Callable[[str], tuple | None]) -> list[tuple]:
    """The events of a piece of code, line by line, where the `if constexpr` conditions around
    them hold: `if constexpr (X) {` opens a block that holds if X does (`} else {` turns it), a
    one-line `if constexpr (X) statement;` holds for its line, and every other brace is a block
    that holds as its parent does."""
    stack: list[bool] = [True]
    found: list[tuple] = []
    for line in body.splitlines():
        code = line.split("//")[0].strip()
        if not code:
            continue
        if re.fullmatch(r"\}\s*else\s*\{", code):
            stack[-1] = stack[-2] and not stack[-1]
            continue
        opened = re.match(r"if constexpr \((.*)\)\s*\{$", code)
        one_line = re.match(r"if constexpr \((.*?)\)\s+(?!\{)(.+;)$", code)
        here = stack[-1]
        if one_line:
            here = here and _holds(one_line.group(1), names)
        if here and not opened:
            e = event(code)
            if e is not None:
                found.append(e)
        if opened:
            stack.append(stack[-1] and _holds(opened.group(1), names))
            code = code[opened.end():]
        for ch in code:
            if ch == "{":
                stack.append(stack[-1])
            elif ch == "}":
                stack.pop()
                if not stack:
                    raise ValueError("pictures: unbalanced braces")
    return found


WAIT = ("wait",)
_WGMMA = re.compile(r"wgmma_m64n128k8<(?:true|false)>\((\w+), (b_big|b_small)\[\w+\], "
                    r"tile_descriptor\((stage_a|stage_a_small)\(s\), \w+\)\);")


def _consumer_event(code: str) -> tuple | None:
    if "barrier_wait(&split[s], parity);" in code:
        return WAIT
    found = _WGMMA.search(code)
    return ("product", found.group(1), found.group(2), found.group(3)) if found else None


@dataclass(frozen=True)
class Product:
    """One of a k tile's three products: the accumulator it goes to, B's part and A's stage."""
    acc: str    # d (big x big, from zero each tile) or d_small (the products with a small part)
    b: str      # b_big or b_small: B's parts, split in registers by the consumers
    a: str      # stage_a (the A tile: its big part) or stage_a_small (the splitters' small part)

    def label(self, raw: bool) -> str:
        a = {"stage_a": "A" if raw else "A big", "stage_a_small": "A small"}[self.a]
        b = {"b_big": "B big", "b_small": "B small"}[self.b]
        return f"{b} x {a}"

    @property
    def needs_split(self) -> bool:
        """Whether the product reads what the splitters write (in step 32 both of A's stages)."""
        return self.a == "stage_a_small"


@dataclass(frozen=True)
class Order:
    """A k tile's products in the pipeline's first sweep, in the order the consumers start them,
    and how many come before the consumers wait on `split` (the splitters are done with A)."""
    products: tuple[Product, ...]
    before_wait: int

    @classmethod
    def read(cls, repo: Path, number: int, first: bool = True) -> "Order":
        """The order in the pipeline's sweep: the first (`first`) or the second; a step whose sweep
        has no FIRST (step 32) has one order for both."""
        src = source_text(repo, number)
        found = _require(src, r"float d_small\[64\];.*?auto sweep = \[&\]\(int n0(, auto FIRST)?\) \{(.*?)\n  \};",
                         "no longer has the consumers' sweep lambda after d_small", number)
        body = found.group(2)
        names: dict[str, bool] = {"SPLIT_ONCE": False}
        if found.group(1):
            if not re.search(r"constexpr bool first = decltype\(FIRST\)::value, raw = RAW && first;", body):
                raise ValueError(f"pictures: step {number}'s sweep no longer sets raw = RAW && first")
            names.update(RAW=True, first=first, raw=first)
        return cls.of(_events(body, names, _consumer_event), number)

    @classmethod
    def of(cls, events: list[tuple], number: int) -> "Order":
        if events.count(WAIT) != 1:
            raise ValueError(f"pictures: step {number}'s first sweep waits on split {events.count(WAIT)} times, not once")
        products: list[Product] = []
        before_wait = 0
        for e in events:
            if e == WAIT:
                before_wait = len(products)
                continue
            p = Product(*e[1:])
            if not products or products[-1] != p:  # a product's K_STEPS wgmmas are one
                products.append(p)
        kinds = {(p.b, p.a) for p in products}
        if len(products) != 3 or kinds != {("b_small", "stage_a"), ("b_big", "stage_a_small"), ("b_big", "stage_a")}:
            raise ValueError(f"pictures: step {number}'s tile is no longer 3xTF32's three products: {products}")
        if any(p.needs_split for p in products[:before_wait]):
            raise ValueError(f"pictures: step {number} reads A's small part before it waits for the splitters")
        return cls(tuple(products), before_wait)


def _store_event(code: str) -> tuple | None:
    found = re.search(r"\b(a|a_small)\[i\] = ", code)
    return ("store", found.group(1)) if found else None


def stores(repo: Path, number: int) -> list[str]:
    """What each splitter writes per vector in the pipeline's first sweep: `a` (the tile
    rewritten as its big part) and/or `a_small` (its small part)."""
    src = source_text(repo, number)
    body = _require(src, r"unsigned seen\[3\] = \{\};(.*?)barrier_arrive\(&split\[s\]\);",
                    "no longer has the splitters' first sweep after `unsigned seen[3] = {};`", number).group(1)
    return [e[1] for e in _events(body, {"RAW": True}, _store_event)]


def raw_condition(repo: Path) -> None:
    """The step takes the raw big part only where K >= RAW_MIN_K, in the pipeline."""
    _require(source_text(repo, STEP),
             r"once \? sgemm_kernel<true, false> : p\.K >= RAW_MIN_K \? sgemm_kernel<false, true> : "
             r"sgemm_kernel<false, false>;",
             "no longer launches the RAW kernel where K >= RAW_MIN_K and step 32's split below")


# ---- one value's two parts ----------------------------------------------------------------------

def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _f32(x: float) -> float:
    return _float(_bits(x))


@dataclass(frozen=True)
class Parts:
    """The steps' bit operations: tf32_round (add `half`, clear the bits below `mask`) and
    small_of_truncated (x & mask, the rest scaled by SMALL_SCALE and rounded)."""
    half: int     # 0x1000: half a TF32 spacing, in the bits
    mask: int     # 0xffffe000: the bits the tensor core reads
    scale: float  # SMALL_SCALE: 2^10

    @classmethod
    def read(cls, repo: Path) -> "Parts":
        src = source_text(repo, STEP)
        rnd = _require(src, r"float tf32_round\(float x\) \{ return __uint_as_float\(\(__float_as_uint\(x\) \+ "
                            r"(0x[0-9a-f]+)u\) & (0x[0-9a-f]+)u\); \}", "no longer rounds to TF32 by add and mask")
        trunc = _require(src, r"float small_of_truncated\(float x\) \{\s*const float truncated = "
                              r"__uint_as_float\(__float_as_uint\(x\) & (0x[0-9a-f]+)u\);\s*"
                              r"return tf32_round\(\(x - truncated\) \* SMALL_SCALE\);\s*\}",
                         "no longer has small_of_truncated as the picture ports it")
        scale = _require(src, r"constexpr float SMALL_SCALE = 0x1p(\d+)f;", "has no SMALL_SCALE = 0x1pNf")
        half, mask = int(rnd.group(1), 16), int(rnd.group(2), 16)
        if int(trunc.group(1), 16) != mask:
            raise ValueError(f"pictures: step {STEP} truncates with another mask than it rounds with")
        if half != (~mask & 0xFFFFFFFF) + 1 >> 1:
            raise ValueError(f"pictures: step {STEP}'s tf32_round adds {half:#x}, not half of the cleared bits")
        return cls(half, mask, 2.0 ** int(scale.group(1)))

    @property
    def kept_bits(self) -> int:
        """Bits of a word the tensor core reads: sign, exponent and the mantissa's top bits."""
        return 32 - ((~self.mask & 0xFFFFFFFF).bit_length())

    @property
    def mantissa_bits(self) -> int:
        return self.kept_bits - 9

    def rounded(self, x: float) -> float:
        return _float((_bits(x) + self.half) & self.mask)

    def truncated(self, x: float) -> float:
        return _float(_bits(x) & self.mask)

    def split_rounded(self, x: float) -> tuple[float, float]:
        """tf32_split (a finite x): big = x rounded, small = the rest, scaled and rounded."""
        big = self.rounded(x)
        return big, self.rounded(_f32((x - big) * self.scale))

    def split_truncated(self, x: float) -> tuple[float, float]:
        """Step 33's first sweep: big = x as the tensor core reads it, small_of_truncated(x)."""
        big = self.truncated(x)
        return big, self.rounded(_f32((x - big) * self.scale))

    def spacing(self, x: float) -> float:
        """TF32's spacing at x: 2^(e - mantissa bits) for |x| in [2^e, 2^(e+1))."""
        return _float((_bits(abs(x)) & 0x7F800000)) * 2.0 ** -self.mantissa_bits


EXAMPLE_FRACTION = 0.7  # the example value: 1 + 0.7 of TF32's spacing at 1 (rounding goes up)


@dataclass(frozen=True)
class Budget:
    """A product's error, in u, from the split's bounds (the page and small_of_truncated): A's
    small part rounded to TF32, B's small part rounded, and the dropped small x small."""
    mantissa_bits: int

    def _u(self, exponent: int) -> float:
        return 2.0 ** exponent / U

    def parts(self, truncated: bool) -> tuple[float, float, float]:
        m = self.mantissa_bits
        a_small = -m if truncated else -(m + 1)      # |A small| / |a|: 2^-10 truncated, 2^-11 rounded
        b_small = -(m + 1)                           # B is always rounded: 2^-11
        return (self._u(a_small - (m + 1)),          # A's small part rounded to m + 1 bits
                self._u(b_small - (m + 1)),          # B's small part rounded
                self._u(a_small + b_small))          # small x small, not computed

    def total(self, truncated: bool) -> float:
        return sum(self.parts(truncated))

    @staticmethod
    def bound(k: int) -> float:
        """The harness's worst-case bound, (K + 2) eps = 2 (K + 2) u."""
        return 2.0 * (k + 2)

    def smallest_k(self, truncated: bool) -> int:
        """The smallest K whose bound covers one product's error."""
        k = 1
        while self.bound(k) < self.total(truncated):
            k += 1
        return k


def asserted_min_k(repo: Path) -> int:
    """The K that the step's static_assert on RAW_MIN_K asks for."""
    return int(_require(source_text(repo, STEP), r"static_assert\(RAW_MIN_K >= (\d+),",
                        "no longer asserts a least RAW_MIN_K").group(1))


# ---- the picture ----------------------------------------------------------------------------------

LAND, B_SPLIT, LOAD, STORE, PRODUCT = 0.8, 0.4, 0.45, 0.35, 0.75  # slots: a schematic, not a measurement


@dataclass
class Tile:
    """Start and end (slots) of one k tile's work: the copy, the splitters, the consumers' B
    split in registers, each product, the wait."""
    copy: tuple[float, float]
    split: tuple[float, float]
    b_split: tuple[float, float]
    products: list[tuple[float, float]]
    wait: float  # when the consumers wait on `split`


def tile(order: Order, stored: int) -> Tile:
    """The consumers split their B fragments once the tile has landed, start the products before
    the wait at once, wait for the splitters, then start the rest; the splitters load each vector
    and store `stored` parts of it."""
    copy = (0.0, LAND)
    split = (LAND, LAND + LOAD + stored * STORE)
    b_split = (LAND, LAND + B_SPLIT)
    t = b_split[1]
    spans: list[tuple[float, float]] = []
    wait = t
    for i, _ in enumerate(order.products):
        if i == order.before_wait:
            wait = t
            t = max(t, split[1])
        spans.append((t, t + PRODUCT))
        t += PRODUCT
    if order.before_wait == len(order.products):
        wait = t
    return Tile(copy, split, b_split, spans, wait)


def _tile_panel(cv: Canvas, y: float, title: str, subtitle: str, order: Order, stored: list[str], raw: bool,
                x_of: Callable[[float], float], splitters: int, consumers: int) -> float:
    """One step's k tile: three lanes (TMA, splitters, consumers) and the wait."""
    lane_h, gap = 20, 6
    t = tile(order, len(stored))
    cv.text(20, y, title, size=9, weight="bold")
    cv.text(20 + text_width(title, 9) + 10, y, subtitle, size=8, color=MUTED)
    top = y + 12
    parts = " and ".join({"a": "big", "a_small": "small"}[s] for s in stored)
    lanes = [("warp 0, lane 0", "TMA copy"), (f"{splitters} splitters", f"store A's {parts} part" +
                                               ("s" if len(stored) > 1 else "")),
             (f"{consumers} consumer warpgroups", "split B in registers, wgmma")]
    ys = [top + i * (lane_h + gap) for i in range(len(lanes))]
    for (who, what), yl in zip(lanes, ys):
        cv.text(20, yl + lane_h / 2 - 5, who, size=8, weight="bold")
        cv.text(20, yl + lane_h / 2 + 7, what, size=7.5, color=MUTED)
    cv.bar(x_of(t.copy[0]), x_of(t.copy[1]), ys[0], lane_h, COPY_FILL, "A and B land", size=7.5)
    split_label = "A -> big + small" if len(stored) > 1 else "A -> small only"
    cv.bar(x_of(t.split[0]), x_of(t.split[1]), ys[1], lane_h, SPLIT_FILL, split_label, size=7.5)
    cv.bar(x_of(t.b_split[0]), x_of(t.b_split[1]), ys[2], lane_h, B_FILL, "B", size=7.5)
    for p, (a, e) in zip(order.products, t.products):
        cv.bar(x_of(a), x_of(e), ys[2], lane_h, BIG_FILL if p.acc == "d" else SMALL_FILL, p.label(raw), size=7)
    # The wait on `split`: a red line through the consumers' lane, from the splitters' end.
    wx = x_of(t.wait)
    cv.line(wx, ys[2] - 3, wx, ys[2] + lane_h + 3, color=MARK, lw=2.0)
    end = t.products[-1][1]
    cv.text(x_of(end) + 6, ys[2] + lane_h / 2, "tile done", size=7.5, color=INK)
    if t.wait < t.split[1]:  # the consumers wait out the rest of the split
        cv.line(x_of(t.split[1]), ys[1] + lane_h, x_of(t.split[1]), ys[2], color=MARK, lw=1.0, ls="--")
        cv.line(wx, ys[2] + lane_h / 2, x_of(t.split[1]), ys[2] + lane_h / 2, color=MARK, lw=1.0)
    cv.text(wx - 3, ys[2] + lane_h + 10, "wait: split", size=7.5, color=MARK, ha="right" if raw else "left")
    return ys[-1] + lane_h


def _tiles(cv: Canvas, repo: Path, y0: float) -> float:
    kn = knobs(repo, STEP)
    bits = Parts.read(repo).kept_bits
    before, after = Order.read(repo, BEFORE), Order.read(repo, STEP)
    old, new = stores(repo, BEFORE), stores(repo, STEP)
    t_before, t_after = tile(before, len(old)), tile(after, len(new))
    span = max(t_before.products[-1][1], t_after.products[-1][1])
    x0, x1 = 190, 730
    x_of = lambda t: x0 + t * (x1 - x0) / span  # noqa: E731
    consumers = kn["BN"] // 64
    cv.text(20, y0, "(a) One k tile in the pipeline's first sweep", size=9.5, weight="bold")
    y = _tile_panel(cv, y0 + 22, f"step {BEFORE}", "every product waits for the split", before, old, False, x_of,
                    kn["SPLITTERS"], consumers)
    y = _tile_panel(cv, y + 26, f"step {STEP}",
                    f"{after.before_wait} of {len(after.products)} products start as soon as the tile has landed",
                    after, new, True, x_of, kn["SPLITTERS"], consumers)
    items = [(COPY_FILL, "copy (TMA)"), (SPLIT_FILL, "splitters: A's parts"), (B_FILL, "B split in registers"),
             (BIG_FILL, "into d (big x big)"), (SMALL_FILL, "into d_small (a small part)")]
    x, yl = 20, y + 28
    for fill, label in items:
        cv.rect(x, yl - 6, 16, 12, fill=fill, edge=MUTED, lw=0.6)
        cv.text(x + 21, yl, label, size=8)
        x += 21 + text_width(label, 8) + 14
    note = (f"Schematic: one tile alone, the order of events, not their lengths. In step {STEP} the tensor core "
            f"reads the A tile as TMA left it, its top {bits} bits, so big x big and B small x A need no splitter; the "
            f"splitters store only the small part. In the ring the splitters already work on later tiles while the "
            f"consumers multiply this one, so less of the wait was exposed than one tile suggests. Step {BEFORE}'s "
            f"split and order stay in the second sweep and where K < RAW_MIN_K = {kn['RAW_MIN_K']}.")
    lines = textwrap.wrap(note, 132)
    cv.text(20, yl + 14, "\n".join(lines), size=8, va="top", color=INK)
    return yl + 14 + len(lines) * 13.5


def _number_line(cv: Canvas, repo: Path, y0: float) -> float:
    parts = Parts.read(repo)
    budget = Budget(parts.mantissa_bits)
    kn = knobs(repo, STEP)
    m = parts.mantissa_bits
    h = parts.spacing(1.0)
    x = _f32(1.0 + EXAMPLE_FRACTION * h)
    r_big, r_small = parts.split_rounded(x)
    t_big, t_small = parts.split_truncated(x)
    cv.text(20, y0, f"(b) One value x and its two parts (h = 2^-{m}: TF32's spacing at 1)", size=9.5, weight="bold")
    lo, hi = 1.0 - 0.6 * h, 1.0 + 2.0 * h
    x0, x1 = 200, 560
    X = lambda v: x0 + (v - lo) * (x1 - x0) / (hi - lo)  # noqa: E731
    tracks = [("rounded split", f"step {BEFORE}: tf32_split", r_big, r_small, (r_big - h / 2, r_big + h / 2),
               "|small| <= 2^-11 |x|", "either sign"),
              ("A truncated", f"step {STEP}: A as TMA left it", t_big, t_small, (t_big, t_big + h),
               "0 <= small < 2^-10 |x|", "x's sign, twice as wide")]
    y = y0 + 46
    top = y
    for name, who, big, small, (a, b), rng, sign in tracks:
        cv.text(20, y - 5, name, size=8.5, weight="bold")
        cv.text(20, y + 8, who, size=7.5, color=MUTED)
        cv.line(x0 - 10, y, x1 + 10, y, color=MUTED, lw=0.8)
        for k in range(-1, 3):
            v = 1.0 + k * h
            if lo <= v <= hi:
                cv.line(X(v), y - 5, X(v), y + 5, color=INK, lw=0.9)
                label = "1" if k == 0 else f"1 {'+' if k > 0 else '-'} {abs(k) if abs(k) > 1 else ''}h"
                cv.text(X(v), y + 13, label, size=7, ha="center", color=MUTED)
        cv.rect(X(a), y - 13, X(b) - X(a), 6, fill=tint(MARK, 0.25), edge=tint(MARK, 0.6), lw=0.6, z=2)
        cv.text(590, y - 8, rng, size=7.5, color=MARK)
        cv.text(590, y + 5, sign, size=7.5, color=MUTED)
        cv.rect(X(big) - 4, y - 4, 8, 8, fill=BIG_FILL, edge=INK, lw=0.6, z=4)
        cv.text(X(big), y + 25, "big", size=7.5, ha="center", weight="bold")
        cv.arrow(X(big), y + 37, X(x), y + 37, color=SHORT, lw=1.1)
        cv.text(max(X(big), X(x)) + 14, y + 37, f"small = x - big = {'+' if small > 0 else '-'}"
                f"{abs(small) / parts.scale / h:.2f} h", size=7.5, color=SHORT)
        cv.rect(X(x) - 3, y - 3, 6, 6, fill=MARK, edge=MARK, lw=0.6, z=5)
        y += 70
    cv.text(X(x), top - 24, f"x = 1 + {EXAMPLE_FRACTION} h", size=7.5, color=MARK, ha="center")
    cv.line(X(x), top - 18, X(x), y - 70 + 42, color=tint(MARK, 0.5), lw=0.7, ls=":")
    rp, tp = budget.parts(False), budget.parts(True)
    rt, tt = budget.total(False), budget.total(True)
    least = budget.smallest_k(True)
    note = (f"Each small part is stored times SMALL_SCALE = 2^{round(parts.scale).bit_length() - 1} and rounded to "
            f"TF32, {m + 1} significant bits. A product's error, in u = 2^-24 of |ab|: rounded split "
            f"{rp[0]:g} (A's small part rounded) + {rp[1]:g} (B's) + {rp[2]:g} (small x small, not computed) = "
            f"{rt:g} u; A truncated {tp[0]:g} + {tp[1]:g} + {tp[2]:g} = {tt:g} u. The harness's worst-case bound, "
            f"2 (K + 2) u, covers {tt:g} u from K = {least}: the step takes A as its big part where "
            f"K >= RAW_MIN_K = {kn['RAW_MIN_K']} (a bound of {budget.bound(kn['RAW_MIN_K']):g} u), "
            f"step {BEFORE}'s split below.")
    lines = textwrap.wrap(note, 132)
    y -= 14
    cv.text(20, y, "\n".join(lines), size=8, va="top", color=INK)
    return y + len(lines) * 13.5


def draw_raw_big_part(repo: Path) -> Canvas:
    raw_condition(repo)
    if asserted_min_k(repo) != Budget(Parts.read(repo).mantissa_bits).smallest_k(True):
        raise ValueError(f"pictures: step {STEP}'s static_assert on RAW_MIN_K no longer matches the error budget")
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: A itself as its big part; the splitters write only the small part")
    cv.text(20, 44, f"The tensor core reads only the top {Parts.read(repo).kept_bits} bits of each word: A, as TMA "
            "lands it, is its own big part, truncated. The\nconsumers start two of a tile's three products at once and wait for the "
            "splitters only before B big x A small.", size=9, va="center")
    end = _tiles(cv, repo, 80)
    _number_line(cv, repo, end + 18)
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "33_raw_big_part.svg": draw_raw_big_part,
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
