"""Step 36's picture (docs/pictures/36_raw_b.svg): one consumer thread's work on B in a k tile of
the first sweep, step 35 against step 36, and one value of B's bits: the top ones the tensor core
reads as the big part, the rest that becomes the small part.

What is drawn comes from the steps' sources where the sources say it. `consumer_b` reads the
consumers' loop over B's fragments of steps 35 and 36 (step 35 splits every value with
tf32_split; step 36, under `if constexpr (raw_b)`, stores the loaded value itself as the big part
and computes small_of_truncated of it), `Chains` holds the operations the two functions ask for,
checked against their source text, and the values a thread holds a k tile are K_STEPS x 2 x 2
(two columns, two k halves a k step). The instruction counts of the split-once kernel's k-tile
loop are cuobjdump's, counted once on the step's build (the notes) and written here as constants:
the picture says so. The bits: the mask of small_of_truncated and SMALL_SCALE, read from step 36,
applied in Python to an example value (plots/pictures_raw.py's ports). The error budget of a
product with both parts truncated, against the harness's worst-case bound 2 (K + 2) u, with
RAW_MIN_K and the step's static_assert on it. plots/tests/test_pictures_raw_b.py holds the ports
and the picture to the steps.

PICTURES maps a file name to a function that takes the repository root and returns the SVG text;
the same sources give the same bytes. `python -m plots.pictures_raw_b` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_raw import BIG_FILL, SMALL_FILL, U, _bits, _f32, _float, _require
from plots.pictures_time import (COPY, INK, MARK, MUTED, PICTURES_DIR, REDUCE, SHORT, Canvas, _render, _svg, knobs,
                                 source_text, text_width, tint)

STEP = 36
BEFORE = 35
HEIGHT = 490  # pixels: the page's height

# cuobjdump -sass of the split-once kernel (sgemm_kernel<true, true>), its consumers' k-tile loop:
# instructions a thread executes a k tile, counted once on each step's Release build (the notes).
LOOP_INSTRUCTIONS = {BEFORE: 333, STEP: 269}

LOAD_FILL, MAX_FILL = tint(COPY, 0.55), tint(REDUCE, 0.5)
SPLIT_FILL, SMALL_OP_FILL = tint(SHORT, 0.55), tint(SHORT, 0.35)

# The operations of one value, in the source's order, with the instructions each asks for:
# the load from shared memory, the column's maximum (largest_magnitude: one FMNMX), then the split.
LOAD_AND_MAX = (("load", 1, LOAD_FILL), ("max", 1, MAX_FILL))
TF32_SPLIT_SOURCE = ("big = tf32_round(fminf(fmaxf(x, -TF32_MAX), TF32_MAX));",
                     "const float rest = (x - big) * SMALL_SCALE;",
                     "small = fabsf(rest) < INFINITY ? tf32_round(rest) : rest;")
TF32_SPLIT_OPS = (("clamp", 2), ("round", 2), ("-", 1), ("x 2^10", 1), ("finite", 1), ("round", 2), ("select", 1))
SMALL_OF_TRUNCATED_SOURCE = ("const float truncated = __uint_as_float(__float_as_uint(x) & 0xffffe000u);",
                             "return tf32_round((x - truncated) * SMALL_SCALE);")
SMALL_OF_TRUNCATED_OPS = (("trunc", 1), ("-", 1), ("x 2^10", 1), ("round", 2))


def _body(src: str, signature: str, number: int) -> list[str]:
    found = _require(src, re.escape(signature) + r" \{\n(.*?)\n\}", f"has no `{signature}`", number)
    return [line.strip() for line in found.group(1).splitlines() if line.strip()]


def chains(repo: Path) -> dict[int, tuple[tuple[str, int, str], ...]]:
    """Step -> the operations a consumer thread runs on one value of B in the first sweep (name,
    instructions, fill), after checking the split functions' source is what the chains port."""
    for number in (BEFORE, STEP):
        src = source_text(repo, number)
        if tuple(_body(src, "__device__ __forceinline__ void tf32_split(float x, float& big, float& small)",
                       number)) != TF32_SPLIT_SOURCE:
            raise ValueError(f"pictures: step {number}'s tf32_split is no longer the one the picture counts")
    if tuple(_body(source_text(repo, STEP), "__device__ __forceinline__ float small_of_truncated(float x)",
                   STEP)) != SMALL_OF_TRUNCATED_SOURCE:
        raise ValueError(f"pictures: step {STEP}'s small_of_truncated is no longer the one the picture counts")
    kinds = consumer_b(repo)
    out = {}
    for number, kind in kinds.items():
        ops = TF32_SPLIT_OPS if kind == "tf32_split" else SMALL_OF_TRUNCATED_OPS
        fill = SPLIT_FILL if kind == "tf32_split" else SMALL_OP_FILL
        out[number] = LOAD_AND_MAX + tuple((name, n, fill) for name, n in ops)
    return out


def consumer_b(repo: Path) -> dict[int, str]:
    """Step -> how its consumers' first sweep makes B's parts: "tf32_split" (step 35) or
    "small_of_truncated" (step 36: the loaded value is the big part)."""
    out = {}
    split = re.compile(r"float big, small;\s*tf32_split\(b, big, small\);\s*"
                       r"b_big\[step\]\[h \+ 2 \* kh\] = __float_as_uint\(big\);\s*"
                       r"b_small\[step\]\[h \+ 2 \* kh\] = __float_as_uint\(small\);")
    src = source_text(repo, BEFORE)
    loop = _require(src, r"seen\[h\] = largest_magnitude\(seen\[h\], b\);(.*?)\n        \}",
                    "no longer keeps the columns' maxima in the loop over B", BEFORE).group(1)
    if not split.search(loop) or "if constexpr" in loop:
        raise ValueError(f"pictures: step {BEFORE}'s consumers no longer split every value of B with tf32_split")
    out[BEFORE] = "tf32_split"
    src = source_text(repo, STEP)
    _require(src, r"constexpr bool raw_b = RAW && first;", "no longer defines raw_b = RAW && first")
    loop = _require(src, r"seen\[h\] = largest_magnitude\(seen\[h\], b\);(.*?)\n        \}",
                    "no longer keeps the columns' maxima in the loop over B").group(1)
    _require(loop, r"if constexpr \(raw_b\) \{\s*b_big\[step\]\[h \+ 2 \* kh\] = __float_as_uint\(b\);\s*"
                   r"b_small\[step\]\[h \+ 2 \* kh\] = __float_as_uint\(small_of_truncated\(b\)\);\s*\} else \{",
             "no longer takes B itself as its big part under raw_b")
    out[STEP] = "small_of_truncated"
    return out


def specials_voted(repo: Path) -> bool:
    """Whether a column of B with an Inf or a NaN votes for the second sweep where RAW."""
    return bool(re.search(r"needs = needs \|\| scale_exponent\(m\) != 0 \|\| \(RAW && m >= 0x7f800000u\);",
                          source_text(repo, STEP)))


def values_per_thread(repo: Path) -> int:
    """B's values a consumer thread loads a k tile: K_STEPS k steps x 2 k halves x 2 columns."""
    kn = knobs(repo, STEP)
    return kn["TUNE_SPLIT"] // 8 * 2 * 2


# ---- one value's bits ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Bits:
    """small_of_truncated's mask and SMALL_SCALE, read from step 36."""
    mask: int
    scale_exponent: int

    @classmethod
    def read(cls, repo: Path) -> "Bits":
        src = source_text(repo, STEP)
        mask = _require(src, r"float small_of_truncated\(float x\) \{\s*const float truncated = "
                             r"__uint_as_float\(__float_as_uint\(x\) & (0x[0-9a-f]+)u\);",
                        "no longer truncates with a mask in small_of_truncated")
        scale = _require(src, r"constexpr float SMALL_SCALE = 0x1p(\d+)f;", "has no SMALL_SCALE = 0x1pNf")
        return cls(int(mask.group(1), 16), int(scale.group(1)))

    @property
    def kept(self) -> int:
        return 32 - (~self.mask & 0xFFFFFFFF).bit_length()

    @property
    def mantissa_bits(self) -> int:
        return self.kept - 9

    def big(self, x: float) -> float:
        return _float(_bits(x) & self.mask)

    def small(self, x: float) -> float:
        """small_of_truncated(x): the rest, scaled and rounded to TF32 (add half, mask)."""
        rest = _f32(_f32(x - self.big(x)) * 2.0 ** self.scale_exponent)
        half = (~self.mask & 0xFFFFFFFF) + 1 >> 1
        return _float((_bits(rest) + half) & self.mask)


EXAMPLE = 0.1  # the example value of B (its bits: 0x3dcccccd)


@dataclass(frozen=True)
class Budget:
    """A product's error, in u, with A and B both truncated: each small part below 2^-m |x|,
    rounded to m + 1 bits (2^-(2m+1) each), and small x small (2^-2m) not computed."""
    mantissa_bits: int

    def parts(self) -> tuple[float, float, float]:
        m = self.mantissa_bits
        return (2.0 ** -(2 * m + 1) / U, 2.0 ** -(2 * m + 1) / U, 2.0 ** -(2 * m) / U)

    def total(self) -> float:
        return sum(self.parts())

    @staticmethod
    def bound(k: int) -> float:
        return 2.0 * (k + 2)


def asserted_min_k(repo: Path) -> int:
    return int(_require(source_text(repo, STEP), r"static_assert\(RAW_MIN_K >= (\d+),",
                        "no longer asserts a least RAW_MIN_K").group(1))


# ---- the picture ----------------------------------------------------------------------------------

def _ops_panel(cv: Canvas, repo: Path, y0: float) -> float:
    ch = chains(repo)
    values = values_per_thread(repo)
    cv.text(20, y0, f"(a) One consumer thread, one k tile of the first sweep: its {values} values of B, "
            "one value's operations", size=9.5, weight="bold")
    unit = 42  # pixels an instruction
    x0 = 130
    y = y0 + 24
    whats = {BEFORE: "tf32_split: big, small", STEP: "the register is big"}
    for number in (BEFORE, STEP):
        ops = ch[number]
        count = sum(n for _, n, _ in ops)
        cv.text(20, y + 4, f"step {number}", size=9, weight="bold")
        cv.text(20, y + 18, whats[number], size=7.5, color=MUTED)
        x = x0
        for name, n, fill in ops:
            cv.bar(x, x + n * unit, y - 4, 22, fill, name, size=7, edge="white", lw=1.2)
            x += n * unit
        cv.text(x + 8, y + 7, f"{count} a value, x {values}", size=8)
        y += 40
    y += 6
    cv.text(20, y, "cuobjdump: the split-once kernel's k-tile loop, instructions a thread", size=8.5,
            weight="bold")
    y += 16
    most = max(LOOP_INSTRUCTIONS.values())
    x1 = 620
    for number in (BEFORE, STEP):
        n = LOOP_INSTRUCTIONS[number]
        end = x0 + (x1 - x0) * n / most
        cv.bar(x0, end, y, 16, tint(MUTED, 0.35), "", lw=0.8)
        cv.text(20, y + 8, f"step {number}", size=8.5)
        cv.text(end + 6, y + 8, f"{n}", size=8.5, weight="bold")
        y += 22
    fewer = LOOP_INSTRUCTIONS[BEFORE] - LOOP_INSTRUCTIONS[STEP]
    source_fewer = sum(n for _, n, _ in ch[BEFORE]) - sum(n for _, n, _ in ch[STEP])
    note = (f"{fewer} fewer: {fewer // values} a value of {values}, where the source's operations say "
            f"{source_fewer}. The operations' widths are what the source asks for, not SASS; the totals are "
            f"cuobjdump's counts of each step's build.")
    lines = textwrap.wrap(note, 130)
    cv.text(20, y + 2, "\n".join(lines), size=8, va="top", color=INK)
    return y + 2 + len(lines) * 13.5


def _bits_panel(cv: Canvas, repo: Path, y0: float) -> float:
    bits = Bits.read(repo)
    kn = knobs(repo, STEP)
    x = _f32(EXAMPLE)
    word = _bits(x)
    big, small = bits.big(x), bits.small(x)
    cv.text(20, y0, f"(b) One value b of B, its 32 bits: b = {EXAMPLE} (0x{word:08x})", size=9.5, weight="bold")
    cell, x0 = 22, 40
    y = y0 + 38
    for i in range(32):
        bit = word >> (31 - i) & 1
        fill = BIG_FILL if i < bits.kept else SMALL_FILL
        cv.rect(x0 + i * cell, y, cell, 22, fill=fill, edge="white", lw=1.2)
        cv.text(x0 + i * cell + cell / 2, y + 11, str(bit), size=8, ha="center")
    # Fields above: sign, exponent, mantissa.
    for a, b, label in ((0, 1, "sign"), (1, 9, "exponent (8)"), (9, 32, "mantissa (23)")):
        xa, xb = x0 + a * cell + 2, x0 + b * cell - 2
        cv.line(xa, y - 6, xb, y - 6, color=MUTED, lw=0.8)
        cv.text((xa + xb) / 2, y - 16, label, size=7.5, color=MUTED, ha="center")
    # What becomes of them, below.
    split = x0 + bits.kept * cell
    cv.line(split, y - 4, split, y + 30, color=MARK, lw=1.6)
    yb = y + 36
    cv.line(x0 + 2, yb, split - 2, yb, color=INK, lw=0.8)
    cv.line(split + 2, yb, x0 + 32 * cell - 2, yb, color=INK, lw=0.8)
    cv.text(x0 + 2, yb + 14, f"wgmma reads the top {bits.kept} bits: b truncated, the big part", size=8,
            weight="bold")
    cv.text(x0 + 2, yb + 28, f"= {big:.8g}, the register as loaded: no instruction", size=8, color=MUTED)
    rest = 32 - bits.kept
    cv.text(split + 4, yb + 14, f"the {rest} below: b - b truncated", size=8, weight="bold")
    cv.text(split + 4, yb + 28, f"x 2^{bits.scale_exponent}, rounded to TF32: small = {small:.8g}", size=8,
            color=MUTED)
    budget = Budget(bits.mantissa_bits)
    a_s, b_s, ss = budget.parts()
    least = asserted_min_k(repo)
    note = (f"A product's error with both parts truncated, in u = 2^-24 of |ab|: A's small part rounded {a_s:g} + "
            f"B's {b_s:g} + small x small, not computed, {ss:g} = {budget.total():g} u (A alone truncated: 20 u). The "
            f"harness's worst-case bound 2 (K + 2) u is {budget.bound(least):g} u at K = {least} (the step's "
            f"static_assert) and {budget.bound(kn['RAW_MIN_K']):g} u at RAW_MIN_K = {kn['RAW_MIN_K']}, where "
            f"the first sweep starts. Inf - Inf would make a NaN small part: a column of B with an Inf or a NaN "
            f"votes for the second sweep, whose tf32_split keeps step 27's handling of them.")
    lines = textwrap.wrap(note, 130)
    y = yb + 48
    cv.text(20, y, "\n".join(lines), size=8, va="top", color=INK)
    return y + len(lines) * 13.5


def draw_raw_b(repo: Path) -> Canvas:
    if not specials_voted(repo):
        raise ValueError(f"pictures: step {STEP} no longer votes a column of B with an Inf or a NaN to the second sweep")
    budget = Budget(Bits.read(repo).mantissa_bits)
    if budget.bound(asserted_min_k(repo)) < budget.total():
        raise ValueError(f"pictures: step {STEP}'s static_assert on RAW_MIN_K no longer covers the error budget")
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: B itself as its big part too")
    cv.text(20, 44, f"In the first sweep each consumer thread hands wgmma the B values it loaded as they are: the "
            f"tensor\ncore reads their top {Bits.read(repo).kept} bits. Only the small part is computed, five "
            "operations a value where tf32_split took ten.",
            size=9, va="center")
    end = _ops_panel(cv, repo, 84)
    _bits_panel(cv, repo, end + 22)
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "36_raw_b.svg": draw_raw_b,
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
