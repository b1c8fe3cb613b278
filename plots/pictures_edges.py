"""The pictures of C cut at its edges (docs/pictures/21_edge_rectangles.svg for step 21's page,
docs/pictures/40_edge_rectangles.svg for step 40's): one shape's C with the chosen tile's block
grid, run whole and cut into rectangles, and the estimates that decide between the two.

It is drawn from a port of the steps' launch() (`Edges` below). The tile each rectangle gets is
the steps' own rule, as the other pictures port it: step 21's plan() and choice among its six
tiles (plots/pictures_plan.py's Rule), step 40's choose_tile, which is step 37's
(plots/pictures_tile_by_shape.py's Rule, read from step 40's source). The cut itself is read from
the step's source and checked against the lines it ports: the main rectangle at the chosen
tile's multiples, the strip on the right and the strip below, the three ways of cutting tried in
that order, EDGE_LAUNCH_US for each rectangle beyond the first, and the whole's estimate less
EDGE_GAIN_PERCENT to beat. The GPU's facts are the H100's (scripts/paths.py), as in the other
pictures of the rules. The estimates are the rules' arithmetic, not measured times, and the
picture says so.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_edges` writes them to
docs/pictures/ (`--png DIR` also writes PNG twins there, to look at them)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots import pictures_plan, pictures_tile_by_shape
from plots.survey import survey_kinds
from plots.pictures_time import (INK, MARK, MUTED, PICTURES_DIR, SMS, Canvas, _render, _svg, knobs,
                                 source_text, tint)

SHAPE = (2047, 2049, 2047)  # the survey's odd shape the pictures draw: N = 2049 is 2048 and one column

# The lines of launch() the port follows, per step: (what the step names the estimate of a
# choice, the name of the chosen tile's rows).
_ESTIMATE = {21: (r"whole\.us", r"bm"), 40: (r"estimate_us\(p, whole\)", r"BM")}


def _check_source(repo: Path, step: int) -> None:
    """Fails where the step's launch() no longer cuts as the port does."""
    src = source_text(repo, step)
    estimate, rows = _ESTIMATE[step]
    needed = (
        (rf"const int main_rows = p\.M - p\.M % {rows}, main_cols = p\.N - p\.N % bn;",
         "no longer puts the main rectangle at the chosen tile's multiples"),
        (rf"double best_us = force_cut \? INFINITY : {estimate} \* \(100 - EDGE_GAIN_PERCENT\) / 100\.0;",
         "no longer asks the cut to beat the whole's estimate by EDGE_GAIN_PERCENT"),
        (r"for \(int cut = 1; cut <= 3; \+\+cut\) \{  // 1: the right strip, 2: the strip below, 3: both",
         "no longer tries the right strip, the strip below and both, in that order"),
        (r"if \(cut_cols\) parts\[n\+\+\] = rectangle\(p, 0, cols, rows, p\.N - cols\);\s*"
         r"if \(cut_rows\) parts\[n\+\+\] = rectangle\(p, rows, 0, p\.M - rows, p\.N\);",
         "no longer makes the strip on the right as tall as the main rectangle and the strip below as wide as C"),
        (r"double us = EDGE_LAUNCH_US \* \(n - 1\);", "no longer charges EDGE_LAUNCH_US for each rectangle beyond the first"),
        (r"if \(us < best_us\) \{", "no longer keeps the first cheapest cut"),
    )
    if step == 40:
        needed += (
            (r"double us = plan\.place\.us;\s*"
             r"if \(!plan\.place\.once && !\(reinterpret_cast<uintptr_t>\(p\.A\) % 16 == 0 && p\.lda % 4 == 0\)\)\s*"
             r"us \+= 8\.0 \* p\.M \* p\.K / pace \+ PASS_US;\s*"
             r"const int phases = b_phases\(p, plan\.place\.us\);\s*"
             r"if \(phases == 0 && !\(reinterpret_cast<uintptr_t>\(p\.B\) % 16 == 0 && p\.ldb % 4 == 0\)\)\s*"
             r"us \+= 8\.0 \* p\.K \* p\.N / pace \+ PASS_US;\s*"
             r"else if \(phases == B_PHASES_ODD\)\s*"
             r"us \+= plan\.place\.us \* PHASES_PERCENT / 100\.0;",
             "no longer prices A's copy (split in the pipeline, rows unaligned), B's copy and B's phases as estimate_us"),
            (r"const double copy_us = 8\.0 \* p\.K \* p\.N / \(sgemm::gpu\(\)\.dram_bytes_per_us \* COPY_PERCENT / 100\.0\) \+ PASS_US;\s*"
             r"return copy_us \* 100 > gemm_us \* PHASES_PERCENT \? B_PHASES_ODD : 0;",
             "no longer copies B where the copy costs less than PHASES_PERCENT of the GEMM (b_phases)"),
            (r"if \(p\.K < B_PHASES_ODD\) return 0;", "no longer copies B where K < B_PHASES_ODD"),
            (r"us \+= estimate_us\(parts\[i\], plans\[i\] = choose_tile\(parts\[i\]\)\);",
             "no longer prices each rectangle with estimate_us"),
        )
    for pattern, what in needed:
        if not re.search(pattern, src):
            raise ValueError(f"pictures: step {step}'s launch() {what}")


@dataclass(frozen=True)
class Part:
    """One rectangle of C run as a GEMM of its own, and the plan its shape gets."""
    row: int
    col: int
    rows: int
    cols: int
    plan: object   # pictures_plan.TilePlan (step 21) or pictures_tile_by_shape.Plan (step 40)
    us: float      # the plan's estimate


@dataclass(frozen=True)
class Cut:
    """launch()'s decision for one shape: C whole, or cut into `parts` (empty: whole)."""
    whole: Part
    parts: tuple[Part, ...]
    us: float      # the estimate of what runs: the whole's, or the parts' with their charges

    @property
    def taken(self) -> bool:
        return bool(self.parts)


class Edges:
    """Step 21's or step 40's launch(): the rule's tile for the whole C, and the cut into
    rectangles where their estimates (each beyond the first charged EDGE_LAUNCH_US) beat the
    whole's by EDGE_GAIN_PERCENT."""

    def __init__(self, repo: Path, step: int, sms: int = SMS):
        if step not in _ESTIMATE:
            raise ValueError(f"pictures: no port of step {step}'s cut")
        _check_source(repo, step)
        self.step, self.sms = step, sms
        self.knobs = knobs(repo, step)
        if step == 21:
            self.rule = pictures_plan.Rule(repo, sms)
            self.tile = lambda plan: (plan.tile.bm, plan.tile.bn)
            self.largest = (self.rule.tiles[0].bm, self.rule.tiles[0].bn)
        else:
            self.rule = pictures_tile_by_shape.Rule(repo, sms, step=step)
            self.tile = lambda plan: (plan.bm, plan.bn)
            self.largest = (self.rule.knobs["BM"], self.rule.wide_bn)
        self.cdiv = self.rule.cdiv

    def part(self, row: int, col: int, rows: int, cols: int, k: int, ldb: int | None = None) -> Part:
        """A rectangle and its plan, priced as launch() prices it. The operands are the harness's:
        A's rows K floats apart, B's `ldb` (C's N), both based at 16-byte addresses, so a
        rectangle's are aligned where the whole's are. Step 40 adds what its launch does for
        operands TMA cannot read (estimate_us): A's copy where A is split in the pipeline and K
        is no multiple of 4; where ldb is none, B's copy or its phases, as b_phases chooses."""
        plan = self.rule.choose(rows, cols, k)
        us = plan.us
        if self.step == 40:
            kn = self.knobs
            pace = self.rule.gpu["dram_bytes_per_us"] * kn["COPY_PERCENT"] / 100.0
            if not plan.once and k % 4:
                us += 8.0 * rows * k / pace + kn["PASS_US"]
            ldb = cols if ldb is None else ldb
            if ldb % 4:
                copy_us = 8.0 * k * cols / pace + kn["PASS_US"]
                if k < kn["B_PHASES_ODD"] or not copy_us * 100 > plan.us * kn["PHASES_PERCENT"]:
                    us += copy_us
                else:
                    us += plan.us * kn["PHASES_PERCENT"] / 100.0
        return Part(row, col, rows, cols, plan, us)

    def cut(self, m: int, n: int, k: int, force: bool = False) -> Cut:
        """launch() with SGEMM_EDGES unset (or `force`: SGEMM_EDGES=cut, at the largest tile's
        multiples, whatever the estimates)."""
        whole = self.part(0, 0, m, n, k, n)
        bm, bn = self.largest if force else self.tile(whole.plan)
        main_rows, main_cols = m - m % bm, n - n % bn
        best, best_us = (), float("inf") if force else whole.us * (100 - self.knobs["EDGE_GAIN_PERCENT"]) / 100.0
        for cut in (1, 2, 3):
            cut_cols, cut_rows = bool(cut & 1), bool(cut & 2)
            if (cut_cols and main_cols in (0, n)) or (cut_rows and main_rows in (0, m)):
                continue
            rows, cols = (main_rows if cut_rows else m), (main_cols if cut_cols else n)
            parts = [self.part(0, 0, rows, cols, k, n)]
            if cut_cols:
                parts.append(self.part(0, cols, rows, n - cols, k, n))
            if cut_rows:
                parts.append(self.part(rows, 0, m - rows, n, k, n))
            us = self.knobs["EDGE_LAUNCH_US"] * (len(parts) - 1) + sum(p.us for p in parts)
            if us < best_us:
                best, best_us = tuple(parts), us
        return Cut(whole, best, best_us if best else whole.us)

    def describe(self, part: Part) -> str:
        """The plan in words: tile, blocks, pieces of K."""
        plan = part.plan
        bm, bn = self.tile(plan)
        tiles = self.cdiv(part.rows, bm) * self.cdiv(part.cols, bn)
        pieces = plan.splits
        how = f"{tiles} tiles of {bm} x {bn}"
        if pieces > 1:
            how += f", K in {pieces} pieces"
        elif getattr(plan, "sk_tiles", 0):
            how += f", {plan.sk_tiles} by stream-K"
        else:
            waves = self.cdiv(tiles, self.slots(plan))
            how += f": {waves} wave{'s' if waves > 1 else ''} of {self.slots(plan)}"
        return how

    def slots(self, plan) -> int:
        """Blocks of the plan's unsplit kernel the GPU runs at once."""
        if self.step == 21:
            return self.rule.slots(plan.tile)[0]
        return self.sms  # one block an SM: its shared memory


# ---- the picture --------------------------------------------------------------------------------

WHOLE_FILL, MAIN_FILL, STRIP_FILL = "#c9d6ea", "#c9d6ea", "#f2b26b"
GRID_W = 250          # pixels for C's tile grid, across
LEFTS = (40, 390)     # the two panels
TOP = 118


def _grid(cv: Canvas, x0: float, y0: float, rows: int, cols: int, bm: int, bn: int, scale: float, fill: str,
          c_rows: int, c_cols: int) -> None:
    """Blocks of bm x bn over a rows x cols rectangle of C, drawn from (x0, y0) at `scale` pixels
    a column; the part of each block outside the rectangle hatched (computed for nothing)."""
    for i in range(-(-rows // bm)):
        for j in range(-(-cols // bn)):
            x, y = x0 + j * bn * scale, y0 + i * bm * scale
            w_in = min(bn, c_cols - j * bn) * scale
            h_in = min(bm, c_rows - i * bm) * scale
            cv.rect(x, y, bn * scale, bm * scale, fill="none", edge="white", lw=0.6, z=3)
            cv.rect(x, y, w_in, h_in, fill=fill, edge="none", lw=0, z=1)
            if w_in < bn * scale - 0.01 or h_in < bm * scale - 0.01:
                cv.rect(x, y, bn * scale, bm * scale, fill=tint(MARK, 0.9), edge=tint(MARK, 0.3), lw=0, hatch="////", z=0)


def draw_edges(repo: Path, step: int) -> Canvas:
    edges = Edges(repo, step)
    m, n, k = SHAPE
    decision = edges.cut(m, n, k)
    forced = decision if decision.taken else edges.cut(m, n, k, force=True)
    whole = decision.whole
    bm, bn = edges.tile(whole.plan)
    cv = Canvas(height=640)
    cv.title(f"Step {step}: C of {m} x {n} x {k} run whole, or cut at its edges (H100, {edges.sms} SMs)")
    cv.rect(20, 40, 16, 12, fill=WHOLE_FILL, edge="none")
    cv.text(42, 46, "a block's rows and columns inside C", size=8.5)
    cv.rect(260, 40, 16, 12, fill=tint(MARK, 0.9), edge=tint(MARK, 0.3), lw=0, hatch="////")
    cv.text(282, 46, "outside C: computed, then thrown away", size=8.5)
    cv.rect(540, 40, 16, 12, fill=STRIP_FILL, edge=INK, lw=0.6)
    cv.text(562, 46, "a rectangle of its own (a strip)", size=8.5)

    # Whole: the chosen tile's blocks over C; the last block column holds n % bn columns.
    grid_cols = edges.cdiv(n, bn) * bn
    scale = GRID_W / grid_cols
    x0 = LEFTS[0]
    cv.text(x0, TOP - 36, "whole: one GEMM", size=10, weight="bold")
    cv.text(x0, TOP - 18, edges.describe(whole), size=8.5)
    _grid(cv, x0, TOP, m, n, bm, bn, scale, WHOLE_FILL, m, n)
    cv.line(x0 + n * scale, TOP - 4, x0 + n * scale, TOP + m * scale + 4, color=INK, lw=1.0, z=5)
    last = n % bn
    cv.text(x0 + n * scale, TOP + m * scale + 16,
            f"C ends here: the last block column\nholds {last} of its {bn} columns", size=8, ha="right", va="top")

    # Cut: the main rectangle's blocks, the strip drawn wider than it is (named so).
    x1 = LEFTS[1]
    cv.text(x1, TOP - 36, "cut: " + ("the rule's choice" if decision.taken else "forced (SGEMM_EDGES=cut)"),
            size=10, weight="bold")
    main = forced.parts[0]
    mbm, mbn = edges.tile(main.plan)
    cv.text(x1, TOP - 18, "main: " + edges.describe(main), size=8.5)
    _grid(cv, x1, TOP, main.rows, main.cols, mbm, mbn, scale, MAIN_FILL, main.rows, main.cols)
    strip_x = x1 + main.cols * scale + 10
    for part in forced.parts[1:]:
        if part.col > 0:  # the strip on the right, as tall as the main rectangle
            width = max(12.0, part.cols * scale)
            cv.rect(strip_x, TOP, width, part.rows * scale, fill=STRIP_FILL, edge=INK, lw=0.6, z=2)
            cv.text(strip_x + width + 6, TOP + 8,
                    f"the strip: {part.rows} x {part.cols}\n(drawn wider)\n" + edges.describe(part).replace(", ", ",\n"),
                    size=8, va="top")
        else:  # the strip below, as wide as C
            height = max(12.0, part.rows * scale)
            cv.rect(x1, TOP + main.rows * scale + 10, part.cols * scale, height, fill=STRIP_FILL, edge=INK, lw=0.6, z=2)
            cv.text(x1, TOP + main.rows * scale + height + 16,
                    f"the strip below: {part.rows} x {part.cols}\n" + edges.describe(part), size=8, va="top")
    if main.cols == n:  # C's right edge through the main rectangle's last block column
        cv.line(x1 + n * scale, TOP - 4, x1 + n * scale, TOP + main.rows * scale + 4, color=INK, lw=1.0, z=5)

    # The estimates, to scale.
    y = TOP + m * scale + 70
    cv.text(20, y, "the estimates (the rule's arithmetic, microseconds; not measured):", size=9, weight="bold")
    longest = max(whole.us, forced.us)
    px = 520 / longest
    charge = edges.knobs["EDGE_LAUNCH_US"]
    rows = [("whole", [(whole.us, WHOLE_FILL, f"{whole.us:.0f}")])]
    segments = [(p.us, MAIN_FILL if i == 0 else STRIP_FILL, f"{p.us:.0f}") for i, p in enumerate(forced.parts)]
    segments += [(charge * (len(forced.parts) - 1), tint(MUTED, 0.6), "")]
    rows.append(("cut", segments))
    for i, (label, segs) in enumerate(rows):
        yy = y + 22 + i * 30
        cv.text(150, yy + 10, label, size=9, ha="right")
        x = 160
        for us, fill, text in segs:
            cv.bar(x, x + us * px, yy, 20, fill, text, edge=INK, lw=0.4)
            x += us * px
        total = sum(us for us, _, _ in segs)
        cv.text(x + 6, yy + 10, f"{total:.0f} us", size=8.5)
    gain = edges.knobs["EDGE_GAIN_PERCENT"]
    extra = (" Step 40's estimates include what its launch does for operands TMA cannot read as they lie (N and K "
             "odd here): B copied or read in phases, and A copied where a rectangle splits A in its pipeline."
             if step == 40 else "")
    note = (f"launch() runs the rule on the whole C and, where the chosen tile ({bm} x {bn} here) does not divide "
            f"M or N, on the rectangles of a cut: the main one at the tile's multiples, a strip on the right, a strip "
            f"below, or both; each rectangle's tile and pieces of K are the rule's for its own shape. Each rectangle "
            f"beyond the first is charged EDGE_LAUNCH_US = {charge} us (grey), and the cheapest cut runs where it "
            f"beats the whole's estimate by EDGE_GAIN_PERCENT = {gain}%.{extra} Hatched: blocks' rows or columns "
            f"outside C, computed and thrown away.")
    cv.text(20, y + 90, "\n".join(textwrap.wrap(note, 120)), size=8.5, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "21_edge_rectangles.svg": partial(draw_edges, step=21),
    "40_edge_rectangles.svg": partial(draw_edges, step=40),
}
PICTURES: dict[str, Callable[[Path], str]] = {name: partial(_svg, draw) for name, draw in _DRAWINGS.items()}


def picture_png(name: str, repo: Path) -> bytes:
    """A PNG twin of a picture, to look at it."""
    return _render(_DRAWINGS[name], repo, "png")


def survey_shapes(repo: Path) -> list[tuple[int, int, int]]:
    """tests/shapes.txt's survey shapes, in order (plots/survey.py reads them)."""
    return [shape for shapes in survey_kinds(Path(repo)).values() for shape in shapes]


def prediction_table(repo: Path, results: Path = Path("results") / "nvidia-h100-80gb-hbm3" / "survey") -> str:
    """The survey's shapes that each step's rule cuts, as a Markdown table: the whole's and the
    cut's estimates, and the ratio to cuBLAS its survey rows measured before the cut (step 39's
    for step 40, whose launches step 39 runs where nothing is cut) scaled by the estimates' ratio:
    what the survey would read if the times moved as the estimates do. A prediction, not a
    measurement. `python -m plots.pictures_edges --table` prints it (docs/notes/40_edge_rectangles.md)."""
    import csv
    import math
    shapes = survey_shapes(repo)
    rows = ["| step | shape | the rectangles | whole (us) | cut (us) | ratio measured whole | "
            "ratio if moved as estimated |", "| :--- | :--- | :--- | ---: | ---: | ---: | ---: |"]
    for step, measured_step in ((21, "21_chosen_tile"), (40, "39_odd_strides")):
        edges = Edges(repo, step)
        path = Path(repo) / results / f"{measured_step}.csv"
        with path.open(encoding="utf-8") as f:
            ratio = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["ratio_to_cublas"]) for r in csv.DictReader(f)}
        logs, gains = [], []
        for shape in shapes:
            cut = edges.cut(*shape)
            before = ratio.get(shape)
            if before is None:
                continue
            after = before * cut.whole.us / cut.us if cut.taken else before
            logs.append(math.log(before))
            gains.append(math.log(after))
            if cut.taken:
                parts = " + ".join(f"{p.rows} x {p.cols}" for p in cut.parts)
                rows.append(f"| {step} | {' x '.join(map(str, shape))} | {parts} | {cut.whole.us:.1f} | {cut.us:.1f} | "
                            f"{before:.3f} | {after:.3f} |")
        rows.append(f"| {step} | geometric mean over {len(logs)} shapes | | | | {math.exp(sum(logs) / len(logs)):.3f} | "
                     f"{math.exp(sum(gains) / len(gains)):.3f} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    repo = Path(__file__).resolve().parents[1]
    if "--table" in argv:
        print(prediction_table(repo), end="")
        return 0
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
