"""Step 35's picture (docs/pictures/35_small_part_pass.svg): what the pass before the GEMM moves
where A is split once, step 34's against step 35's, and one k tile of step 35's split-once GEMM.

Every number drawn comes from the steps' sources. Top: the pass's bytes as each step's rule
charges them (`split_once`: step 34's `12.0 * p.M * p.K + 4.0 * p.K * p.N`, step 35's
`8.0 * p.M * p.K`), at M = N = K, one unit a float of an M x K matrix: step 34 read A and B and
wrote both parts of A; step 35 reads A and writes its small part alone (`Pass` below). Bottom:
one k tile of the split-once GEMM's first sweep (`Tile`): TMA lands the stage's three tiles
(`STAGE_BYTES`: A itself, its own big part; A's small part from the pass; B), the consumers load
their 16 values of B, keep their columns' largest magnitudes in one instruction a value
(`largest_magnitude`, one `max.NaN.f32`) and start the three products with no wait on `split`
(the step's `if constexpr (!from_pass && !raw)`); the splitters read the block's rows' maxima
from the pass (`max_bits`) once, before the sweep, and vote.
plots/tests/test_pictures_small_pass.py holds the picture to the steps.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_small_pass` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_time import (COPY, INK, MARK, MATH, MUTED, PICTURES_DIR, REDUCE, SHORT, Canvas, _legend, _render,
                                 _svg, knobs, source_text, tint)

STEP, BEFORE = 35, 34
FLOAT = 4        # bytes of a value
SIZE = 4096      # the bench's square the page's napkin math takes
HEIGHT = 470     # pixels: the page's height

READ_FILL, WRITE_FILL, B_FILL = tint(COPY, 0.55), tint(MATH, 0.5), tint(REDUCE, 0.55)
SMALL_FILL, WAIT_FILL, SPLIT_FILL = tint(MATH, 0.3), "#eeeeee", tint(SHORT, 0.45)
MAX_FILL = tint(MARK, 0.55)


def _require(src: str, pattern: str, number: int, what: str) -> re.Match:
    found = re.search(pattern, src)
    if not found:
        raise ValueError(f"pictures: step {number} {what}")
    return found


@dataclass(frozen=True)
class Pass:
    """The bytes a step's rule charges its pass before the GEMM, a value of A and of B each."""
    per_mk: float   # bytes a value of A (read and written)
    per_kn: float   # bytes a value of B (read)

    @property
    def reads_b(self) -> bool:
        return self.per_kn > 0

    @property
    def a_writes(self) -> int:
        """Parts of A written: the bytes a value of A, less its read, in floats."""
        parts = (self.per_mk - FLOAT) / FLOAT
        if parts != int(parts) or parts < 1:
            raise ValueError(f"pictures: a pass of {self.per_mk} bytes a value of A is not a read and whole parts")
        return int(parts)

    def units(self) -> float:
        """Floats moved a value, at M = N = K."""
        return (self.per_mk + self.per_kn) / FLOAT

    def mib(self, size: int = SIZE) -> float:
        return (self.per_mk + self.per_kn) * size * size / 2**20

    @classmethod
    def read(cls, repo: Path, number: int) -> "Pass":
        src = source_text(repo, number)
        body = _require(src, r"(?s)bool split_once\(.*?\n\}", number, "has no split_once").group(0)
        found = _require(body, r"const double bytes = ([\d.]+) \* p\.M \* p\.K(?: \+ ([\d.]+) \* p\.K \* p\.N)?;",
                         number, "charges its pass no bytes of the known form")
        return cls(float(found.group(1)), float(found.group(2) or 0.0))


@dataclass(frozen=True)
class Tile:
    """One k tile of step 35's split-once GEMM, its first sweep."""
    tile_kb: int          # an A tile (BM x TUNE_SPLIT floats), its small part, a B tile: KB each
    stage_tiles: int      # tiles TMA brings a stage
    b_values: int         # values of B a consumer thread loads a k tile
    wgmmas: int           # 3 products x K_STEPS
    maxima_instructions: int
    waits_for_splitters: bool
    bm: int
    raw_min_k: int
    splitters: int

    @classmethod
    def read(cls, repo: Path, number: int = STEP) -> "Tile":
        src, kn = source_text(repo, number), knobs(repo, number)
        a_bytes, b_bytes = kn["BM"] * kn["TUNE_SPLIT"] * FLOAT, kn["TUNE_SPLIT"] * kn["BN"] * FLOAT
        if a_bytes != b_bytes:
            raise ValueError("pictures: the A and B tiles differ in size")
        stage = _require(src, r"constexpr int STAGE_BYTES = (\d) \* A_TILE_BYTES \+ B_TILE_BYTES;", number,
                         "has no stage of A's two tiles and B").group(1)
        body = _require(src, r"(?s)float largest_magnitude\(float m, float x\) \{(.*?)\n\}", number,
                        "has no largest_magnitude").group(1)
        instructions = len(re.findall(r"max\.NaN\.f32", body))
        if instructions != 1 or "seen[h] = largest_magnitude(seen[h], b);" not in src:
            raise ValueError(f"pictures: step {number}'s consumers keep no maxima in one max.NaN")
        waits = "if constexpr (!from_pass && !raw) barrier_wait(&split[s], split_parity);" not in src
        if "constexpr bool from_pass = SPLIT_ONCE && first;" not in src:
            waits = True
        wgmma_k = int(_require(src, r"constexpr int WGMMA_M = \d+, WGMMA_K = (\d+);", number, "has no WGMMA_K").group(1))
        return cls(a_bytes // 1024, int(stage) + 1, 2 * 8 * kn["TUNE_SPLIT"] // 32, 3 * kn["TUNE_SPLIT"] // wgmma_k,
                   instructions, waits, kn["BM"], kn["RAW_MIN_K"], kn["SPLITTERS"])


# ---- the picture ---------------------------------------------------------------------------------

def _passes(cv: Canvas, repo: Path, y: float) -> float:
    cv.text(20, y, "The pass before the GEMM where A is split once: floats moved, a unit a value of A (M = N = K)",
            size=10, weight="bold")
    y += 22
    x0, unit, h = 130, 30.0, 26
    for number in (BEFORE, STEP):
        p = Pass.read(repo, number)
        cv.text(20, y + h / 2, f"step {number}'s pass", size=9)
        parts = [("read A", READ_FILL)]
        if p.reads_b:
            parts.append(("read B", B_FILL))
        names = {1: ["write A's\nsmall part"], 2: ["write A's\nbig part", "write A's\nsmall part"]}
        parts += [(name, WRITE_FILL if "big" in name else SMALL_FILL)
                  for name in names.get(p.a_writes, [f"write part {i + 1}" for i in range(p.a_writes)])]
        x = x0
        for label, fill in parts:
            cv.bar(x, x + FLOAT * unit, y, h, fill, label=label, size=7.5, edge="white")
            x += FLOAT * unit
        if p.units() != len(parts):
            raise ValueError("pictures: the pass's bars do not add up to its bytes")
        b_term = f" + {p.per_kn:g} KN" if p.reads_b else ""
        cv.text(x + 8, y + h / 2, f"{p.per_mk:g} MK{b_term} bytes:\n{p.mib():.0f} MiB at {SIZE}^3", size=8.5,
                color=INK)
        y += h + 10
    note = ("Step 35: A itself is the big part where A is split once too (the tensor core reads a word's top 19 bits), "
            "so the pass\nwrites only the small part; B's columns' largest magnitudes are the consumers' (step 34), "
            "so it no longer reads B.")
    cv.text(20, y + 4, note, size=8.5, va="top", color=INK)
    return y + 40


def _k_tile(cv: Canvas, repo: Path, y: float) -> float:
    t = Tile.read(repo)
    kn = knobs(repo, STEP)
    cv.text(20, y, f"Step {STEP}: one k tile of the split-once GEMM, its first sweep (K >= RAW_MIN_K = {t.raw_min_k})",
            size=10, weight="bold")
    y += 24
    left, x0, h, gap = 20, 180, 30, 16
    lanes = ["warp 0 (one thread): TMA", f"splitters ({t.splitters} threads)", "consumers (each thread)"]
    rows = [y + i * (h + gap) for i in range(3)]
    for name, ry in zip(lanes, rows):
        cv.text(left, ry + h / 2, name, size=8.5)
    # warp 0: the stage's three tiles
    tiles = [(f"A itself: its\nbig part, {t.tile_kb} KB", READ_FILL),
             (f"A's small part\n(the pass), {t.tile_kb} KB", SMALL_FILL), (f"B tile, {t.tile_kb} KB", B_FILL)]
    x, w = x0, 118
    for label, fill in tiles:
        cv.bar(x, x + w - 4, rows[0], h, fill, label=label, size=7, edge=MUTED, lw=0.6)
        x += w
    landed = x + 6
    cv.line(landed, rows[0] - 4, landed, rows[2] + h + 4, color=MARK, lw=1.0, ls="--")
    cv.text(landed + 4, rows[0] - 8, "full[s]: landed", size=7.5, color=MARK)
    # splitters: once, before the sweep
    cv.bar(x0, x0 + 2 * w - 4, rows[1], h, SPLIT_FILL,
           label=f"before the sweep: read the block's {t.bm}\nrows' maxima from the pass (max_bits)", size=7,
           edge=MUTED, lw=0.6)
    cv.bar(x0 + 2 * w, 780, rows[1], h, WAIT_FILL, label="nothing to split in\nthe first sweep", size=7,
           edge=MUTED, lw=0.6)
    # consumers
    cw = 780 - landed - 10
    seg = [(f"load {t.b_values}\nvalues of B", B_FILL, 1 / 3),
           (f"largest |b|:\n{t.b_values * t.maxima_instructions} FMNMX", MAX_FILL, 1 / 3),
           (f"{t.wgmmas} wgmmas:\n3 products", tint(MATH, 0.55), 1 / 3)]
    cv.bar(x0, landed - 2, rows[2], h, WAIT_FILL, label="wait: full[s] (TMA alone)", size=7, edge=MUTED, lw=0.6)
    x = landed + 4
    for label, fill, share in seg:
        cv.bar(x, x + cw * share - 2, rows[2], h, fill, label=label, size=7, edge=MUTED, lw=0.6)
        x += cw * share
    if t.waits_for_splitters:
        raise ValueError("pictures: step 35's first sweep waits for the splitters")
    y = rows[2] + h + 14
    note = (f"Each consumer thread keeps its two columns' largest magnitudes, one max.NaN.f32 a value (step 34: two), "
            f"and waits on no split barrier: the three products read what TMA brought (a stage: {t.stage_tiles} "
            f"tiles of {t.tile_kb} KB, {kn['STAGES']} stages). After the sweep the block votes with its rows' "
            "and columns' maxima; where one needs a power-of-two factor (or holds an Inf or a NaN), the block "
            "runs the second sweep, and the splitters split its tiles scaled.")
    lines = textwrap.wrap(note, 112)
    cv.text(20, y, "\n".join(lines), size=8.5, va="top")
    y += len(lines) * 14.5 + 14
    _legend(cv, 20, y, [(READ_FILL, "A (read)", None), (SMALL_FILL, "A's small part", None), (B_FILL, "B", None),
                        (WRITE_FILL, "A's big part (written)", None), (SPLIT_FILL, "splitters", None),
                        (MAX_FILL, "maxima", None)], size=8)
    return y + 16


def draw_small_part_pass(repo: Path) -> Canvas:
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: the pass writes A's small part alone")
    end = _passes(cv, repo, 50)
    _k_tile(cv, repo, end + 20)
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "35_small_part_pass.svg": draw_small_part_pass,
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
