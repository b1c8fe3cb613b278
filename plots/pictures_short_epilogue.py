"""Step 38's picture (docs/pictures/38_short_epilogue.svg): the consumers' stores of C as code, step
37's one stretch against step 38's four loops (and, faint, the four loops of the step's first form,
not kept); step 37's time at 128 x 64 x K; and the survey's small shapes, step 37, both forms of
step 38 and cuBLAS, in microseconds.

What is drawn comes from committed files where they hold it. Step 37's stretch (its length from
the first store of C to the last, its stores, how many of its instructions ran at 128^3, and the
share of the kernel's warp instructions after its last wgmma) and the kernels' lengths (steps 37
and 38, and step 38's first form) are read from the profile,
results/nvidia-h100-80gb-hbm3/profiles/38_epilogue_sass_and_stalls.txt; the times from the
experiments (experiments/38_fixed_cost_by_k.csv; experiments/38_two_forms_beside_37.csv, where
step 37 ran beside each form of step 38, at the shapes of tests/shapes.txt's survey.small). The
lengths of step 38's four loops are the profile's too (cuobjdump's counts of the kernel it names,
built from the step's source), as are the first form's. The picture draws the step's loops only
while the profile's count of that kernel is the one the loops were counted in (`LOOPS_KERNEL`) and
step 38's epilogue is the code counted (`EPILOGUE_SHA`, over its lines without comments): a
change to either refuses to draw until they are counted again. Which loop a block of the survey
runs follows from its rows (beta, ordinary inputs: no block scaled), and the pieces of K at each K
of the experiment from step 37's rule (plots/pictures_tile_by_shape.py's port of choose_tile, the
128 x 64 tile forced). plots/tests/test_pictures_short_epilogue.py holds the picture to the files
and the steps.

PICTURES maps a file name to a function that takes the repository root and returns the SVG text;
the same sources give the same bytes. `python -m plots.pictures_short_epilogue` writes it to
docs/pictures/ (`--png DIR` also writes a PNG twin there, to look at it)."""

from __future__ import annotations

import csv
import hashlib
import re
import sys
import textwrap
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from plots.pictures_time import COPY, INK, MARK, MUTED, PICTURES_DIR, Canvas, _render, _svg, source_text, tint

STEP, BEFORE = 38, 37
GPU = Path("results") / "nvidia-h100-80gb-hbm3"
PROFILE = GPU / "profiles" / "38_epilogue_sass_and_stalls.txt"
EXPERIMENT = GPU / "experiments" / "38_fixed_cost_by_k.csv"
# The survey, four rows a shape: step 37 and step 38's first form in one run, step 37 and the
# step's final form in another. The variants' labels say which is which.
FORMS = GPU / "experiments" / "38_two_forms_beside_37.csv"
FIRST, FINAL = "first form", "final form"
SHAPES = Path("tests") / "shapes.txt"
SMALL = "survey.small"
HEIGHT = 690  # pixels: the page's height

# The four loops of the consumers' stores in step 38's sgemm_kernel<64, 0, 1>, (scaled, beta
# zero), in the binary's order; their lengths (first store of C to last, as the profile counts step
# 37's stretch) are read from the profile, and so are those of the step's first form (the same four
# loops, each sum's address computed in 64 bits and its row and column tests branched on).
# LOOPS_KERNEL_LENGTH is the kernel's length in the build they were counted in, EPILOGUE_SHA the
# epilogue's code counted.
LOOPS = ((False, False), (False, True), (True, False), (True, True))  # the binary's order; counts from the profile
LOOPS_KERNEL = "sgemm_kernel<64, 0, 1>"
LOOPS_KERNEL_LENGTH = 5648
EPILOGUE_SHA = "febb6951ac36e8bf"

STRETCH_FILL, LOOP_FILL, TAKEN_FILL = tint(MUTED, 0.45), tint(MUTED, 0.2), tint(MARK, 0.75)
FIRST_FILL, FIRST_TAKEN_FILL = tint(MUTED, 0.08), tint(MARK, 0.25)
BEFORE_COLOR, STEP_COLOR, CUBLAS_COLOR = tint(COPY, 0.8), MARK, INK
FIRST_COLOR = tint(MARK, 0.3)


def _require(text: str, pattern: str, what: str) -> re.Match:
    found = re.search(pattern, text)
    if not found:
        raise ValueError(f"pictures: {what}")
    return found


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# ---- the profile --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Profile:
    """What results/<H100>/profiles/38_epilogue_sass_and_stalls.txt says of the two epilogues."""
    kernel: str                     # the kernel profiled: sgemm_kernel<64, 0, 1>
    stretch: int                    # step 37: instructions from the first store of C to the last
    stores: int                     # the stores in that stretch
    ran: int                        # of the stretch, the instructions that ran at 128^3
    after_wgmma: int                # warp instructions after the last wgmma ...
    executed: int                   # ... of the kernel's
    lengths: dict[tuple[int, str], int]   # (step, kernel) -> instructions in the kernel
    first_lengths: dict[str, int]   # kernel -> instructions in step 38's first form

    @classmethod
    def read(cls, repo: Path) -> "Profile":
        text = (repo / PROFILE).read_text(encoding="utf-8")
        kernel = _require(text, r"Kernel: step 37's sgemm_kernel<(\d+), (true|false), (true|false)>",
                          "the profile names no kernel of step 37")
        name = "sgemm_kernel<{}, {}, {}>".format(kernel.group(1), int(kernel.group(2) == "true"),
                                                 int(kernel.group(3) == "true"))
        stretch = _require(text, r"SASS instructions from the first to the last store of C: (\d+) \((\d+) stores"
                                 r"[^)]*\), of which (\d+) ran", "the profile has no stretch of stores")
        after = _require(text, r"instructions after the last wgmma that ran: \d+, (\d+) warp instructions of the "
                               r"kernel's (\d+)", "the profile has no count after the last wgmma")
        lengths = {(int(step), kern): int(n) for step, kern, n in
                   re.findall(r"^(\d\d)_\w+ (sgemm_kernel<\d+, \d, \d>) (\d+)$", text, re.M)}
        first = {kern: int(n) for kern, n in
                 re.findall(rf"^step {STEP}'s first form: (sgemm_kernel<\d+, \d, \d>) (\d+)$", text, re.M)}
        if (BEFORE, name) not in lengths or (STEP, name) not in lengths or name not in first:
            raise ValueError(f"pictures: the profile has no length of {name} in steps {BEFORE} and {STEP} "
                             f"and step {STEP}'s first form")
        return cls(name, int(stretch.group(1)), int(stretch.group(2)), int(stretch.group(3)),
                   int(after.group(1)), int(after.group(2)), lengths, first)


def epilogue_sha(repo: Path) -> str:
    """The first 16 hex digits of the sha256 of step 38's epilogue (from `to_slice` to the end of
    the kernel's sm_90a code), its lines stripped of comments and indentation."""
    body = _require(source_text(repo, STEP), r"(?s)\n(  const bool to_slice = partials != nullptr;.*?)\n#else",
                    f"step {STEP} no longer decides where the sums go once (to_slice)").group(1)
    lines = (line.split("//")[0].strip() for line in body.splitlines())
    return hashlib.sha256("\n".join(line for line in lines if line).encode("utf-8")).hexdigest()[:16]


def _profile_loops(repo: Path, prefix: str, what: str) -> dict[tuple[bool, bool], int]:
    text = (repo / PROFILE).read_text(encoding="utf-8")
    found = {(s == "true", b == "true"): int(n) for s, b, n in
             re.findall(rf"^{prefix}loop scaled (true|false), beta zero (true|false): (\d+) instructions", text, re.M)}
    if sorted(found) != sorted(LOOPS):
        raise ValueError(f"pictures: the profile does not give the length of each of {what}'s four loops")
    return {case: found[case] for case in LOOPS}


def first_form_loops(repo: Path) -> dict[tuple[bool, bool], int]:
    """(scaled, beta zero) -> the loop's instructions in step 38's first form (history: not the
    step's code, so nothing in the source to hold them to)."""
    return _profile_loops(repo, "first form: ", f"step {STEP}'s first form")


def loops(repo: Path, profile: Profile) -> dict[tuple[bool, bool], int]:
    """(scaled, beta zero) -> the loop's instructions, refused where the build or the code counted
    is no longer the one that counted them."""
    if profile.kernel != LOOPS_KERNEL or profile.lengths[(STEP, LOOPS_KERNEL)] != LOOPS_KERNEL_LENGTH:
        raise ValueError(f"pictures: the profile's step {STEP} kernel is not the build whose loops were counted "
                         f"({LOOPS_KERNEL}, {LOOPS_KERNEL_LENGTH} instructions): count them again")
    if epilogue_sha(repo) != EPILOGUE_SHA:
        raise ValueError(f"pictures: step {STEP}'s epilogue changed since its loops were counted: count them again")
    return _profile_loops(repo, "", f"step {STEP}")


def dispatch(repo: Path) -> list[tuple[bool, bool]]:
    """The four loops step 38 compiles, (scaled, beta zero), from its calls of `store`; and step
    37's per-sum choice, checked: a sum to the slice or, through store_c, to C."""
    src = source_text(repo, STEP)
    _require(src, r"if constexpr \(decltype\(SCALED\)::value\) sum = times_pow2\(",
             f"step {STEP}'s loops no longer scale only where SCALED")
    _require(src, r"c = decltype\(BETA_ZERO\)::value \? alpha \* sum : alpha \* sum \+ beta \* c;",
             f"step {STEP}'s loops no longer read C only where beta is not zero")
    _require(src, r"if \(!\(8 \* j \+ v < rows_left && col_in\[h\]\)\) continue;\s*"
                  r"(?:[^\n]*\n\s*){2}float& c = at\[v\]\[4 \* h\];[\s\S]*?at\[0\] \+= 8 \* ld;",
             f"step {STEP}'s loops no longer store through a pointer per row, stepped 8 rows, under one test a store")
    calls = re.findall(r"store\(std::(true|false)_type\{\}, std::(true|false)_type\{\}\);", src)
    cases = [(a == "true", b == "true") for a, b in calls]
    if sorted(cases) != sorted(LOOPS):
        raise ValueError(f"pictures: step {STEP} no longer compiles the four loops (scaled x beta zero)")
    before = source_text(repo, BEFORE)
    _require(before, r"if \(slice != nullptr\) \{\s*if \(row < p\.M && col < ld_partials\) slice\[[^\n]*= sum;"
                     r"\s*\} else if \(row < p\.M && col < p\.N\) \{\s*store_c\(p, row, col, sum\);",
             f"step {BEFORE} no longer chooses between the slice and C for each sum")
    return cases


# ---- the times ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    k: int
    us: float          # step 37's median
    cublas_us: float   # cuBLAS's median, the same run
    pieces: int        # the pieces step 37's rule cut K into (a block each)
    per_piece: int     # k tiles of a piece


def fixed_cost(repo: Path) -> list[Point]:
    """The experiment's rows (step 37, the 128 x 64 tile, M x N fixed), with the pieces its rule
    takes at each K."""
    from plots.pictures_tile_by_shape import Rule  # step 37's choose_tile, ported
    rows = _rows(repo / EXPERIMENT)
    if not rows or {(r["m"], r["n"]) for r in rows} != {(rows[0]["m"], rows[0]["n"])}:
        raise ValueError("pictures: the experiment's rows are not one M x N over K")
    if any(not r["step"].startswith(f"{BEFORE}_") or "128 x 64" not in r["variant"] for r in rows):
        raise ValueError(f"pictures: the experiment's rows are not step {BEFORE}'s 128 x 64 tile")
    rule = Rule(repo)
    points = []
    for r in rows:
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        plan = rule.plan_for(m, n, k, rule.narrow_bn)
        points.append(Point(k, float(r["ms_median"]) * 1000, float(r["cublas_ms_median"]) * 1000, plan.splits,
                            plan.per_piece))
    return sorted(points, key=lambda p: p.k)


def small_shapes(repo: Path) -> list[tuple[int, int, int]]:
    """tests/shapes.txt's survey.small, in its order."""
    text = (repo / SHAPES).read_text(encoding="utf-8")
    line = _require(text, rf"(?m)^{re.escape(SMALL)}\s+(\S+)$", f"{SHAPES} has no {SMALL}").group(1)
    shapes = []
    for item in line.split(","):
        dims = [int(d) for d in item.split("x")]
        shapes.append(tuple(dims * 3) if len(dims) == 1 else tuple(dims))
    return shapes


@dataclass(frozen=True)
class Survey:
    shape: tuple[int, int, int]
    before_us: float    # step 37, in the final form's run
    first_us: float     # step 38's first form, in its own run (beside step 37 again)
    step_us: float      # step 38
    cublas_us: float    # the final form's run's
    beta_zero: bool
    ordinary: bool      # the bench's inputs: no row or column needs a factor, no block scaled


def _form(row: dict[str, str]) -> str | None:
    """Which of the experiment's four rows a shape this is: (step, form of step 38 or the run it
    ran beside), or None."""
    step, variant = row["step"], row["variant"]
    if step.startswith(f"{STEP}_"):
        return next((f for f in (FIRST, FINAL) if variant.startswith(f"{f}:")), None)
    if step.startswith(f"{BEFORE}_"):
        return next((f"{BEFORE} {f}" for f in (FIRST, FINAL) if variant.endswith(f"run of the {f}")), None)
    return None


def survey(repo: Path) -> list[Survey]:
    """The small shapes' rows of the experiment: step 37 and step 38 from one run (the final
    form's), the first form from the other."""
    rows: dict[str, dict[tuple[int, int, int], dict[str, str]]] = {}
    for r in _rows(repo / FORMS):
        form = _form(r)
        if form:
            rows.setdefault(form, {})[(int(r["m"]), int(r["n"]), int(r["k"]))] = r
    out = []
    for shape in small_shapes(repo):
        if any(shape not in rows.get(form, {}) for form in (FIRST, FINAL, f"{BEFORE} {FINAL}")):
            raise ValueError(f"pictures: {FORMS.name} has no row of {shape} for step {BEFORE} and both forms")
        a, first, b = rows[f"{BEFORE} {FINAL}"][shape], rows[FIRST][shape], rows[FINAL][shape]
        if a["git_rev"] != b["git_rev"] or first["git_rev"] == b["git_rev"]:
            raise ValueError(f"pictures: {FORMS.name}'s step {BEFORE} and {FINAL} rows of {shape} are not one run")
        out.append(Survey(shape, float(a["ms_median"]) * 1000, float(first["ms_median"]) * 1000,
                          float(b["ms_median"]) * 1000, float(b["cublas_ms_median"]) * 1000,
                          float(b["beta"]) == 0.0 and float(first["beta"]) == 0.0,
                          not b["inputs"] and not first["inputs"]))
    return out


def _shape(shape: tuple[int, int, int]) -> str:
    m, n, k = shape
    return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"


# ---- the picture --------------------------------------------------------------------------------

def _change(before: int, after: int) -> str:
    """'N shorter', 'N longer' or 'as long': `after` instructions against `before`."""
    if after == before:
        return "as long"
    return f"{abs(after - before):,} {'shorter' if after < before else 'longer'}"


def _loops_row(cv: Canvas, counted: dict, x0: float, y: float, h: float, scale: float, taken: tuple[bool, bool],
               faint: bool) -> list[tuple[float, float]]:
    """The four loops side by side from x0, in the binary's order; their spans."""
    names = {(False, False): "unscaled, beta != 0", (False, True): "unscaled, beta 0",
             (True, False): "scaled, beta != 0", (True, True): "scaled, beta 0"}
    spans, x = [], x0
    for case in LOOPS:  # the binary's order
        n, width = counted[case], counted[case] * scale
        if faint:
            fill = FIRST_TAKEN_FILL if case == taken else FIRST_FILL
            cv.rect(x, y, width, h, fill=fill, edge=MUTED, lw=0.6, z=2, ls="--")
            cv.text(x + width / 2, y + h / 2 - 6, names[case], size=7.5, ha="center", z=6, color=MUTED)
            cv.text(x + width / 2, y + h / 2 + 7, f"{n:,}", size=7.5, ha="center", z=6, color=MUTED)
        else:
            fill = TAKEN_FILL if case == taken else LOOP_FILL
            cv.rect(x, y, width, h, fill=fill, edge=INK, lw=1.4 if case == taken else 0.6, z=2)
            cv.text(x + width / 2, y + h / 2, f"{n:,}", size=7.5, ha="center", z=6,
                    weight="bold" if case == taken else "normal")
        spans.append((x, x + width))
        x += width
    return spans


def _code_panel(cv: Canvas, repo: Path, y0: float) -> float:
    profile = Profile.read(repo)
    counted = loops(repo, profile)
    first = first_form_loops(repo)
    cases = dispatch(repo)
    if sorted(cases) != sorted(counted):
        raise ValueError("pictures: the loops drawn are not the ones compiled")
    rows = survey(repo)
    if not all(r.ordinary for r in rows) or len({r.beta_zero for r in rows}) != 1:
        raise ValueError("pictures: the survey's small shapes no longer run one loop (ordinary inputs, one beta)")
    taken = (False, rows[0].beta_zero)
    kernel = profile.kernel
    cv.text(20, y0, "(a) The consumers' stores of C in SASS: a consumer thread's code from its first store to its last",
            size=9.5, weight="bold")
    cv.text(20, y0 + 16, f"cuobjdump, {kernel}: the 128 x 64 tile, A split in the pipeline, the kernel 128^3 runs",
            size=7.5, color=MUTED)
    x0, x1 = 110, 770
    scale = (x1 - x0) / max(sum(first.values()), sum(counted.values()), profile.stretch)
    y, h = y0 + 30, 30

    cv.text(20, y + h / 2 - 7, f"step {BEFORE}", size=9, weight="bold")
    cv.text(20, y + h / 2 + 7, "one stretch", size=7.5, color=MUTED)
    end = x0 + profile.stretch * scale
    cv.bar(x0, end, y, h, STRETCH_FILL, f"{profile.stretch:,} instructions, {profile.stores} stores", size=8.5,
           edge=INK, lw=0.6)
    cv.text(end + 8, y + h / 2, "each sum: C or its piece's partial sums?\nits scale, beta 0 or not, tested "
            "per sum", size=7.5, color=INK)
    cv.text(x0, y + h + 9, f"{profile.ran:,} of them ran at 128^3 (ncu), spread over all {profile.stretch:,}",
            size=7.5, color=MUTED)

    y += h + 30
    cv.text(20, y + h / 2 - 7, f"step {STEP}'s", size=9, color=MUTED)
    cv.text(20, y + h / 2 + 7, "first form", size=7.5, color=MUTED)
    first_spans = _loops_row(cv, first, x0, y, h, scale, taken, faint=True)
    first_y = y

    y += h + 34
    cv.text(20, y + h / 2 - 7, f"step {STEP}", size=9, weight="bold")
    cv.text(20, y + h / 2 + 7, "four loops", size=7.5, color=MUTED)
    spans = _loops_row(cv, counted, x0, y, h, scale, taken, faint=False)
    for (fa, fb), (a, b) in zip(first_spans, spans):  # each loop, then and now
        for top, bottom in ((fa, a), (fb, b)):
            cv.line(top, first_y + h, bottom, y, color=tint(MUTED, 0.45), lw=0.6, z=1)
    cv.text(x0 + (sum(counted.values()) * scale) + 8, y + h / 2,
            "the same four loops, a sum's address a pointer per row\n(stepped 8 rows), its row and column one "
            "predicate", size=7.5, color=INK)
    cv.text(x1, first_y - 9, "not kept: each sum's address computed in 64 bits, a branch on its row and column",
            size=7.5, color=MUTED, ha="right")
    mid = sum(spans[LOOPS.index(taken)]) / 2
    cv.arrow(mid, y + h + 20, mid, y + h + 2, color=MARK, lw=1.2)
    cv.text(mid + 6, y + h + 14, "the one every block of the survey's small shapes ran (beta 0, no scale)", size=7.5,
            color=MARK, va="center")

    now, before = profile.lengths[(STEP, kernel)], profile.lengths[(BEFORE, kernel)]
    then = profile.first_lengths[kernel]
    note = (f"Step {STEP}'s kernel has {now:,} instructions, {_change(before, now)} than step {BEFORE}'s {before:,} "
            f"(its first form's {then:,}: {_change(before, then)}), and a block runs one loop of it: where its sums go, "
            f"alpha, beta and its scale are the same for all of them, so they are decided once. A block reads its code from device "
            f"memory (the L2 flush before every timed run evicts it): step {BEFORE}'s whole stretch, step {STEP}'s one "
            f"loop. In step {BEFORE} at 128^3, {100 * profile.after_wgmma / profile.executed:.0f}% of the warp "
            f"instructions the kernel ran came after its last wgmma (ncu).")
    lines = textwrap.wrap(note, 140)
    cv.text(20, y + h + 32, "\n".join(lines), size=7.5, va="top", color=INK)
    return y + h + 32 + len(lines) * 12.5


def _axis(cv: Canvas, x0: float, x1: float, y0: float, y1: float, top: float, step: float) -> None:
    """A frame with horizontal grid lines every `step` up to `top` (y1 is 0)."""
    value = 0.0
    while value <= top + 1e-9:
        yy = y1 - (y1 - y0) * value / top
        cv.line(x0, yy, x1, yy, color=tint(MUTED, 0.25), lw=0.6, z=1)
        cv.text(x0 - 5, yy, f"{value:g}", size=7.5, ha="right", color=MUTED)
        value += step
    cv.line(x0, y1, x1, y1, color=MUTED, lw=0.8, z=2)


def _k_panel(cv: Canvas, repo: Path, x0: float, y0: float, width: float) -> float:
    points = fixed_cost(repo)
    first = next(iter(_rows(repo / EXPERIMENT)))
    cv.text(x0, y0, f"(b) Step {BEFORE} at {first['m']} x {first['n']} x K: time in us", size=9.5,
            weight="bold")
    left, right, top, bottom = x0 + 36, x0 + width - 10, y0 + 26, y0 + 190
    most = max(max(p.us, p.cublas_us) for p in points)
    ceiling = 5.0 * (int(most / 5.0) + 1)
    _axis(cv, left, right, top, bottom, ceiling, 5.0)
    gap = (right - left) / len(points)
    xs = [left + gap * (i + 0.5) for i in range(len(points))]

    def y(us: float) -> float:
        return bottom - (bottom - top) * us / ceiling

    for series, color, style, label_dy in ((lambda p: p.us, BEFORE_COLOR, "-", -9),
                                           (lambda p: p.cublas_us, CUBLAS_COLOR, "--", 9)):
        for a, b, xa, xb in zip(points, points[1:], xs, xs[1:]):
            cv.line(xa, y(series(a)), xb, y(series(b)), color=color, lw=1.4, ls=style, z=3)
        for p, x in zip(points, xs):
            cv.rect(x - 2.5, y(series(p)) - 2.5, 5, 5, fill=color, edge=color, lw=0.5, z=4)
            if series(p) == p.us:
                cv.text(x, y(series(p)) + label_dy, f"{series(p):.1f}", size=7, ha="center", color=INK)
    for p, x in zip(points, xs):
        cv.text(x, bottom + 9, str(p.k), size=7.5, ha="center", color=INK)
        cv.text(x, bottom + 21, f"{p.pieces} x {p.per_piece}", size=7, ha="center", color=MUTED)
    cv.text(left - 5, bottom + 9, "K", size=7.5, ha="right", color=MUTED)
    ly = bottom + 40
    cv.line(left, ly, left + 18, ly, color=BEFORE_COLOR, lw=1.4)
    cv.text(left + 23, ly, f"step {BEFORE}", size=7.5)
    cv.line(left + 80, ly, left + 98, ly, color=CUBLAS_COLOR, lw=1.4, ls="--")
    cv.text(left + 103, ly, "cuBLAS, the same run", size=7.5)
    longest = max(p.per_piece for p in points)
    note = (f"Under each K: blocks x k tiles a block (step {BEFORE}'s rule cuts K into pieces from K = "
            f"{next(p.k for p in points if p.pieces > 1)}, and a reduction adds them). K grows "
            f"{points[-1].k // points[0].k}-fold, no block runs more than {longest} k tiles, the time hardly moves: "
            f"it is mostly what a block costs before and after its k tiles.")
    lines = textwrap.wrap(note, 68)
    cv.text(x0, ly + 14, "\n".join(lines), size=7.5, va="top", color=INK)
    return ly + 14 + len(lines) * 12.5


def _survey_panel(cv: Canvas, repo: Path, x0: float, y0: float, width: float) -> float:
    rows = survey(repo)
    cv.text(x0, y0, "(c) The survey's small shapes: time in us", size=9.5, weight="bold")
    label_w = 74
    left, right = x0 + label_w, x0 + width - 46
    most = max(max(r.before_us, r.first_us, r.step_us, r.cublas_us) for r in rows)
    ceiling = 5.0 * (int(most / 5.0) + 1)
    scale = (right - left) / ceiling
    bars = ((lambda r: r.before_us, BEFORE_COLOR), (lambda r: r.first_us, FIRST_COLOR),
            (lambda r: r.step_us, STEP_COLOR), (lambda r: r.cublas_us, tint(CUBLAS_COLOR, 0.35)))
    y = y0 + 24
    bars_top, band = y - 4, len(bars) * 8 + 8
    bars_bottom = bars_top + band * len(rows)
    value = 0.0
    while value <= ceiling + 1e-9:
        xx = left + value * scale
        cv.line(xx, bars_top, xx, bars_bottom, color=tint(MUTED, 0.25), lw=0.6, z=1)
        cv.text(xx, bars_bottom + 8, f"{value:g}", size=7.5, ha="center", color=MUTED)
        value += 5.0
    for r in rows:
        cv.text(left - 6, y + 2 * 8, _shape(r.shape), size=8, ha="right")
        for i, (us, color) in enumerate(bars):
            cv.rect(left, y + i * 8, us(r) * scale, 7, fill=color, edge="none", z=2)
        cv.text(left + r.step_us * scale + 4, y + 2 * 8 + 3.5, f"{r.before_us:.1f} -> {r.step_us:.1f}", size=7,
                color=INK)
        y += band
    ly = bars_bottom + 24
    items = ((BEFORE_COLOR, f"step {BEFORE}"), (STEP_COLOR, f"step {STEP}"),
             (tint(CUBLAS_COLOR, 0.35), "cuBLAS, the same run"),
             (FIRST_COLOR, f"step {STEP}'s first form (not kept), another run"))
    x = left - label_w + 8
    for i, (color, label) in enumerate(items):
        if i == 3:
            x, ly = left - label_w + 8, ly + 14
        cv.rect(x, ly - 4, 14, 8, fill=color, edge="none")
        cv.text(x + 18, ly, label, size=7.5)
        x += 18 + len(label) * 5.2 + 14
    return ly + 10


def draw_short_epilogue(repo: Path) -> Canvas:
    cv = Canvas(height=HEIGHT)
    cv.title(f"Step {STEP}: a short epilogue")
    cv.text(20, 46, "Where a block's sums go, alpha, beta and its scale are decided once, and each of the four cases "
            "is a loop of its own:\na sum is a multiply, one predicate and a store through a pointer to its row. "
            "Measured on the H100.",
            size=9, va="center")
    end = _code_panel(cv, repo, 84)
    top = end + 22
    left = _k_panel(cv, repo, 20, top, 380)
    right = _survey_panel(cv, repo, 420, top, 360)
    if max(left, right) > cv.height - 4:
        raise ValueError(f"pictures: step {STEP}'s picture needs {max(left, right):.0f} pixels, not {cv.height}")
    return cv


_DRAWINGS: dict[str, Callable[[Path], Canvas]] = {
    "38_short_epilogue.svg": draw_short_epilogue,
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
