"""Step 31's picture (docs/pictures/31_one_pass.svg): the pass before the GEMM where A is split
once, in step 30 (two launches: the largest magnitudes of A's rows and B's columns, then A read
again and split) and in step 31 (one launch: each row of A read by one team of threads, which
finds the row's largest magnitude and splits it), and which team takes a row as K grows.

Every number drawn comes from the steps' sources. The passes' bytes: A and B read at 4 bytes a
value, A's big and small parts written at 8; the picture checks them against the bytes that each
step's split_once() prices (`N * p.M * p.K / sgemm::gpu().dram_bytes_per_us`: 12 in step 30, its
second pass's read and writes; 8 in step 31, the writes alone), and draws them at the device
memory's bandwidth of scripts/paths.py's H100 (what sgemm::gpu() reads on that GPU), with step
30's SPLIT_PASS_US for its second launch. The teams: a port of step 31's team_size() (`Teams`
below), which reads PASS_THREADS and PASS_LOADS from the step's `SGEMM_KNOB(NAME, value)` lines
and refuses a team_size() whose loop is not the one ported; the extra reads of a long row and
the rule's charge for them (SWEEP_US each) likewise from the step's split_once().
plots/tests/test_pictures_pass.py holds the port and the picture to the step.

PICTURES maps a file name to a function that takes the repository root and returns the SVG
text; the same sources give the same bytes. `python -m plots.pictures_pass` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_split import Choice, Rule
from plots.pictures_time import (COPY, INK, MATH, MUTED, PICTURES_DIR, SHORT, SMS, Canvas, _render, _svg, knobs,
                                 paths, source_text, text_width, tint)

STEP, BEFORE = 31, 30
FLOAT = 4  # bytes of a value of A or B, and of each of A's two parts
A_COLOR, B_COLOR, PARTS_COLOR = COPY, MATH, SHORT  # A, B, A's big and small parts (as in steps 28-30's pictures)
SIZES = (1024, 4096)  # M = N = K of the two timelines
HEIGHT = 640            # pixels: the page's height
HATCH = "////"         # step 30's second launch and its wait
FILLS = {"A": tint(A_COLOR, 0.55), "B": tint(B_COLOR, 0.55), "parts": tint(PARTS_COLOR, 0.55)}


# ---- the steps' sources --------------------------------------------------------------------------

def priced_bytes(repo: Path, number: int) -> int:
    """The bytes per value of A that a step's split_once() charges for splitting once
    (`pass_us = N * p.M * p.K / sgemm::gpu().dram_bytes_per_us ...`)."""
    found = re.search(r"pass_us\s*=\s*(\d+)(?:\.0)?\s*\*\s*p\.M\s*\*\s*p\.K\s*/\s*sgemm::gpu\(\)\.dram_bytes_per_us",
                      source_text(repo, number))
    if not found:
        raise ValueError(f"pictures: step {number}'s split_once no longer prices the pass as "
                         "`N * p.M * p.K / sgemm::gpu().dram_bytes_per_us`")
    return int(found.group(1))


def check_passes(repo: Path) -> None:
    """Step 30 launches two passes where A is split once, step 31 one; the bytes they price
    are what the picture draws: step 30 its second pass's read of A and its writes, step 31
    the writes alone (its reads are the same in both places)."""
    before, after = source_text(repo, BEFORE), source_text(repo, STEP)
    if "launch_after_previous(split_a_for_sgemm_kernel" not in before:
        raise ValueError(f"pictures: step {BEFORE} no longer launches split_a_for_sgemm_kernel after its first pass")
    if re.search(r"\bsplit_a_for_sgemm_kernel\b", after) or "scale_and_split_a_for_sgemm_kernel" not in after:
        raise ValueError(f"pictures: step {STEP} splits A in scale_and_split_a_for_sgemm_kernel and has no second pass")
    if priced_bytes(repo, BEFORE) != 3 * FLOAT or priced_bytes(repo, STEP) != 2 * FLOAT:
        raise ValueError(f"pictures: steps {BEFORE} and {STEP} price splitting once at "
                         f"{priced_bytes(repo, BEFORE)} and {priced_bytes(repo, STEP)} bytes a value of A, "
                         f"not {3 * FLOAT} (A read again, two parts written) and {2 * FLOAT} (two parts written)")


@dataclass(frozen=True)
class Segment:
    label: str   # drawn inside the bar
    short: str   # drawn instead where the label does not fit
    what: str    # "A", "B" (read) or "parts" (A's big and small parts written)
    bytes: int


def pass_segments(repo: Path, number: int, m: int, n: int, k: int) -> list[list[Segment]]:
    """The launches before the GEMM where A is split once, each a list of what it moves."""
    check_passes(repo)
    a, b, parts = FLOAT * m * k, FLOAT * k * n, 2 * FLOAT * m * k
    if number == BEFORE:
        return [[Segment("A", "A", "A", a), Segment("B", "B", "B", b)],
                [Segment("A again", "A", "A", a), Segment("big + small", "parts", "parts", parts)]]
    if number == STEP:
        return [[Segment("A", "A", "A", a), Segment("B", "B", "B", b), Segment("big + small", "parts", "parts", parts)]]
    raise ValueError(f"pictures: the passes of step {number} are not drawn")


class Teams:
    """Step 31's team_size(), chunks and the rule's charge for a long row's reads, from its source
    (or from a later step's, `number`, that keeps them: step 32's pass is step 31's)."""

    def __init__(self, repo: Path, number: int = STEP):
        src = source_text(repo, number)
        body = re.search(r"int team_size\(int k\) \{(.*?)\n\}", src, re.S)
        rule = body and re.fullmatch(
            r"\s*int team = (\d+);\s*while \(team < PASS_THREADS && team \* PASS_LOADS < k\) team \*= 2;"
            r"\s*return team;\s*", body.group(1))
        if not rule:
            raise ValueError(f"pictures: step {number}'s team_size() is no longer the loop the picture ports")
        self.first = int(rule.group(1))
        charge = re.search(r"\(chunks == 1 \? 0 : (\d+) \* chunks - (\d+)\) \* SWEEP_US", src)
        if not charge:
            raise ValueError(f"pictures: step {number}'s split_once no longer charges "
                             "`(chunks == 1 ? 0 : A * chunks - B) * SWEEP_US`")
        self.reads_per_chunk, self.first_reads = int(charge.group(1)), int(charge.group(2))
        kn = knobs(repo, number)
        self.threads, self.loads, self.sweep_us = kn["PASS_THREADS"], kn["PASS_LOADS"], kn["SWEEP_US"]

    def team(self, k: int) -> int:
        """team_size(k): the fewest threads (a warp, doubled up to the block) whose loads cover K."""
        team = self.first
        while team < self.threads and team * self.loads < k:
            team *= 2
        return team

    def chunk(self, k: int) -> int:
        """Values of a row that the team holds at once: a load of each of its threads, PASS_LOADS times."""
        return self.team(k) * self.loads

    def chunks(self, k: int) -> int:
        return -(-k // self.chunk(k))

    def reads(self, k: int) -> int:
        """Times the team reads its row: once where it holds the whole row, else twice (max, split)."""
        return 1 if self.chunks(k) == 1 else 2

    def extra_us(self, k: int) -> int:
        """split_once's charge for the reads of chunks after the first."""
        c = self.chunks(k)
        return 0 if c == 1 else (self.reads_per_chunk * c - self.first_reads) * self.sweep_us

    def limits(self) -> list[int]:
        """The longest K each team takes whole: 32, 64, ... threads up to PASS_THREADS."""
        out, team = [], self.first
        while True:
            out.append(team * self.loads)
            if team >= self.threads:
                return out
            team *= 2


class OnePassRule(Rule):
    """Step 31's launch(): step 30's choose_splits and split_once (plots/pictures_split.py's port),
    with step 31's knobs and its price of splitting once: the writes, 8 M K bytes at the device
    memory's bandwidth, and SWEEP_US for each read of a long row's chunk after the first."""

    def __init__(self, repo: Path, sms: int = SMS, gpu: dict | None = None):
        super().__init__(repo, sms, gpu)
        self.knobs = knobs(repo, STEP)
        self.bytes_per_value = priced_bytes(repo, STEP)
        self.teams = Teams(repo)

    def choose(self, m: int, n: int, k: int) -> Choice:
        kn, cdiv = self.knobs, self.cdiv
        tiles, k_tiles = cdiv(m, kn["BM"]) * cdiv(n, kn["BN"]), cdiv(k, kn["TUNE_SPLIT"])
        splits = cdiv(k_tiles, cdiv(k_tiles, self.choose_splits(m, n, k)))
        gemm_us = self.tile_times(m, n, k, splits) * self.tile_us * 100.0 / kn["TENSOR_PERCENT"]
        pass_us = self.bytes_per_value * m * k / self.gpu["dram_bytes_per_us"] + self.teams.extra_us(k)
        in_pipeline_us = gemm_us * kn["IN_PIPELINE_SPLIT_PERCENT"] / 100.0
        return Choice(tiles, k_tiles, splits, gemm_us, pass_us, in_pipeline_us, pass_us < in_pipeline_us)


# ---- the picture -----------------------------------------------------------------------------------

def megabytes(n: int) -> str:
    return f"{n / 2**20:.0f} MB"


def _timelines(cv: Canvas, repo: Path, x0: float, y0: float, width: float, size: int) -> None:
    """Steps 30 and 31's launches before the GEMM at M = N = K = size, to scale."""
    bw = paths(repo).H100["dram_bytes_per_us"]
    gap_us = knobs(repo, BEFORE)["SPLIT_PASS_US"]
    rows = {number: pass_segments(repo, number, size, size, size) for number in (BEFORE, STEP)}

    def span(passes: list[list[Segment]]) -> float:
        return sum(s.bytes for p in passes for s in p) / bw + gap_us * (len(passes) - 1)

    longest = max(span(p) for p in rows.values())
    label_w, tail_w = 62, 52
    scale = (width - label_w - tail_w) / longest
    a = FLOAT * size * size
    cv.text(x0, y0, f"M = N = K = {size}: A and B {megabytes(a)} each", size=9, weight="bold")
    for i, (number, passes) in enumerate(rows.items()):
        y = y0 + 16 + i * 36
        cv.text(x0, y + 6, f"step {number}", size=8.5, weight="bold")
        cv.text(x0, y + 18, f"{len(passes)} launch{'es' if len(passes) > 1 else ''}", size=7.5, color=MUTED)
        x = x0 + label_w
        for j, segments in enumerate(passes):
            if j:
                w = gap_us * scale
                cv.rect(x, y, w, 22, fill="white", edge=MUTED, lw=0.6, hatch=HATCH)
                x += w
            start = x
            for s in segments:
                w = s.bytes / bw * scale
                label = s.label if text_width(s.label, 7.5) <= w - 4 else s.short
                cv.bar(x, x + w, y, 22, FILLS[s.what], label, size=7.5)
                x += w
            cv.rect(start, y, x - start, 22, fill="none", edge=INK, lw=1.0, z=3)
        moved = sum(s.bytes for p in passes for s in p)
        cv.text(x + 5, y + 11, megabytes(moved), size=8, color=INK)
    # A scale bar in microseconds under the rows.
    tick = next(t for t in (1, 2, 5, 10, 20, 50, 100) if t * scale >= 36)
    ya = y0 + 16 + 2 * 36 + 2
    xs = x0 + label_w
    cv.line(xs, ya, xs + tick * scale, ya, color=MUTED, lw=1.0)
    for x in (xs, xs + tick * scale):
        cv.line(x, ya - 3, x, ya + 3, color=MUTED, lw=1.0)
    cv.text(xs + tick * scale + 5, ya, f"{tick} us at {bw / 1e6:.2f} TB/s", size=7.5, color=MUTED)


def team_cases(t: Teams) -> list[tuple[int, str]]:
    """The K drawn: the longest each team takes whole, then a row of two of the block's chunks."""
    limits = t.limits()
    return [(k, f"K \u2264 {k:,}") for k in limits] + [(2 * limits[-1], f"K = {2 * limits[-1]:,}")]


def _teams(cv: Canvas, repo: Path, y0: float) -> float:
    """Which threads of a block take a row of A, for K up to each team's chunk and one longer K."""
    t = Teams(repo)
    cases = team_cases(t)
    warps = t.threads // 32
    wx, ww, wgap = 180, 20, 3                      # the block's warps
    rx, rmax = wx + warps * (ww + wgap) + 16, 330  # the row of A, to scale in k
    unit = rmax / cases[-1][0]
    rh = 16
    shades = (tint(A_COLOR, 0.65), tint(A_COLOR, 0.3))
    cv.text(wx, y0, f"a block: {warps} warps", size=8, color=MUTED)
    cv.text(rx, y0, "one row of A, to scale in k", size=8, color=MUTED)
    y = y0 + 14
    for k, label in cases:
        team = t.team(k)
        rows, per = t.threads // team, team // 32
        cv.text(20, y + rh / 2, label, size=9, weight="bold")
        cv.text(20, y + rh + 11, f"{team} threads a row", size=8)
        for w in range(warps):
            cv.rect(wx + w * (ww + wgap), y, ww, rh, fill=shades[(w // per) % 2], edge="white", lw=0.6)
        for r in range(rows):
            x = wx + r * per * (ww + wgap)
            cv.rect(x - 1, y - 1, per * (ww + wgap) - wgap + 2, rh + 2, fill="none", edge=A_COLOR, lw=1.0, z=3)
        cv.text(wx, y + rh + 11, f"{rows} row{'s' if rows > 1 else ''} a block", size=7.5, color=MUTED)
        chunk = t.chunk(k)
        for c in range(t.chunks(k)):
            w = min(chunk, k - c * chunk) * unit
            cv.rect(rx + c * chunk * unit, y, w, rh, fill=shades[c % 2], edge=A_COLOR, lw=0.8)
        how = "max: a warp reduction" if team == 32 else "max: warp reductions, shared memory"
        if t.chunks(k) == 1:
            lines = [f"{t.loads} loads x {team} threads, read once; {how}"]
            if team == t.threads:
                lines.append("the longest row a team holds in registers from its read to its split")
        else:
            lines = [f"{t.chunks(k)} chunks of {chunk:,}: read for the max, then again (in L2) to split",
                     f"{how}; the rule adds {t.extra_us(k)} x SWEEP_US"]
        cv.text(rx, y + rh + 11, lines[0], size=7.5, color=INK)
        if len(lines) > 1:
            cv.text(rx, y + rh + 23, lines[1], size=7.5, color=INK if t.chunks(k) > 1 else MUTED)
        y += 54
    return y


def draw_one_pass(repo: Path) -> Canvas:
    t = Teams(repo)
    kn30, kn31 = knobs(repo, BEFORE), knobs(repo, STEP)
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: A read once before the GEMM, each row by one team of threads")
    cv.text(20, 44, "Where A is split once: the launches before the GEMM and the bytes they move, to scale at the "
            "H100's memory bandwidth", size=9)
    _timelines(cv, repo, 20, 68, 370, SIZES[0])
    _timelines(cv, repo, 410, 68, 370, SIZES[1])
    y = 68 + 16 + 2 * 36 + 20
    items = [(FILLS["A"], "A read", None), (FILLS["B"], "B read", None),
             (FILLS["parts"], "A's two parts written", None),
             ("white", f"step {BEFORE}'s second launch: SPLIT_PASS_US = {kn30['SPLIT_PASS_US']} us", HATCH)]
    x = 20
    for fill, label, hatch in items:
        cv.rect(x, y - 6, 16, 12, fill=fill, edge=MUTED, lw=0.6, hatch=hatch)
        cv.text(x + 21, y, label, size=8)
        x += 21 + text_width(label, 8) + 16
    note = (f"Step {BEFORE}: its first launch finds each row's largest magnitude with a warp per "
            f"{32 * kn30['PASS_LOADS']} values, met by atomicMax in global memory, so no row's factor is known before "
            f"that launch ends; a second launch reads A again and splits it. Step {STEP}: a team of one block holds a "
            "whole row, so the block knows the row's factor, and A is read once, in the launch that also scans B. "
            "Within a launch reads and writes overlap; a bar adds up its bytes.")
    cv.text(20, y + 14, "\n".join(textwrap.wrap(note, 128)), size=8, va="top", color=MUTED)

    y = y + 80
    cv.text(20, y, f"Which threads take a row of A: team_size(K), the fewest whose {t.loads} loads each cover K",
            size=9.5, weight="bold")
    cv.text(20, y + 16, f"A block has PASS_THREADS = {kn31['PASS_THREADS']} threads; each thread issues PASS_LOADS = "
            f"{kn31['PASS_LOADS']} loads before it compares any,\nand neighbouring threads load neighbouring k (a "
            "warp's load: 128 contiguous bytes).", size=8.5, va="top")
    end = _teams(cv, repo, y + 56)
    note = (f"The rule in split_once() prices splitting once at the writes alone, {priced_bytes(repo, STEP)} M K "
            f"bytes at the memory's bandwidth (step {BEFORE}: {priced_bytes(repo, BEFORE)} M K bytes and "
            f"SPLIT_PASS_US), and SWEEP_US = {kn31['SWEEP_US']} us for each read of a chunk after the first.")
    cv.text(20, end - 4, "\n".join(textwrap.wrap(note, 125)), size=8, va="top")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "31_one_pass.svg": draw_one_pass,
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
