"""The shape survey (scripts/bench.sh --survey): every step at the shapes of tests/shapes.txt's
survey.* sets, each shape's kind the part of its set's name after "survey.".

    results/<gpu-slug>/survey/<step>.csv    the survey's rows; only verified rows with cuBLAS
                                            timed beside them are read (a step that failed
                                            its check at a shape has no point there)

A step is judged by its speed over cuBLAS SGEMM timed in the same run (ratio_to_cublas), so
that runs on different days compare: per step the geometric mean over the shapes it ran, the
worst and the best shape, and the shapes where it is more than SLOWER (3%) slower than an
earlier step of its own chapter (the chapters of plots/palette.py); per kind, each chapter's
last step. Outputs: the figure docs/plots/<gpu-slug>/survey.png, the `survey` block of
docs/survey.md, and (plots/tables.py) a column of the README's results summary.

These rows are never bench results: plots/results.py reads results/<gpu-slug>/*.csv only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import matplotlib.style
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from plots.markdown import NO_VALUE, md_table, percent, provenance, relative_link
from plots.palette import chapter_of, chapters_present
from plots.results import keep_last
from plots.schema import Row, read_results_csv
from plots.steps import step_number, step_sort_key

SURVEY_DIR = "survey"  # results/<gpu-slug>/survey/
SURVEY_PLOT = "survey.png"  # docs/plots/<gpu-slug>/survey.png
SURVEY_PAGE = Path("docs") / "survey.md"
SHAPES_FILE = Path("tests") / "shapes.txt"
SET_PREFIX = "survey."
OTHER_KIND = "other"  # a shape in the rows that no survey.* set holds (the sets changed since)
SLOWER = 0.03  # "slower than an earlier step": its time more than 3% longer, same-run ratios
NO_SURVEY = ("_No survey results yet: run `scripts/bench.sh --survey` on a GPU, then "
             "`scripts/regenerate.sh`._")
NOT_MEASURED = "not measured"
KIND_MARKERS = "os^Dv<>P"
_LABEL_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1}

Shape = tuple[int, int, int]


def parse_shape(text: str) -> Shape:
    """"1000" (a cube) or "8192x1024x4096" as (M, N, K)."""
    parts = [int(p) for p in text.split("x")]
    return (parts[0],) * 3 if len(parts) == 1 else tuple(parts)


def shape_name(shape: Shape) -> str:
    return "×".join(str(n) for n in shape)


def survey_kinds(repo: Path) -> dict[str, list[Shape]]:
    """The survey's kinds and their shapes, in the order of tests/shapes.txt; {} without it."""
    path = repo / SHAPES_FILE
    if not path.is_file():
        return {}
    kinds: dict[str, list[Shape]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].startswith(SET_PREFIX):
            kinds[fields[0].removeprefix(SET_PREFIX)] = [parse_shape(s)
                                                         for s in fields[1].split(",")]
    return kinds


@dataclass
class Survey:
    slug: str  # the results/<gpu-slug> directory name, as GpuResults.slug
    rows: dict[tuple[str, Shape], Row]  # (step, shape) -> its verified row, cuBLAS timed
    kinds: dict[str, list[Shape]] = field(default_factory=dict)  # kind -> shapes, in order
    left_out: int = 0  # rows not read: not verified, or cuBLAS not timed

    def __post_init__(self):
        known = {shape for shapes in self.kinds.values() for shape in shapes}
        others = sorted({shape for _, shape in self.rows if shape not in known})
        if others:
            self.kinds = {**self.kinds, OTHER_KIND: others}

    @property
    def name(self) -> str:
        return " / ".join(sorted({row.gpu for row in self.rows.values()})) or self.slug

    @property
    def steps(self) -> set[str]:
        return {step for step, _ in self.rows}

    @property
    def shapes(self) -> list[Shape]:
        """Every survey shape: those of the kinds, in order (the denominator of "n of N")."""
        return list(dict.fromkeys(shape for shapes in self.kinds.values() for shape in shapes))

    def kind_of(self, shape: Shape) -> str:
        return next((kind for kind, shapes in self.kinds.items() if shape in shapes),
                    OTHER_KIND)

    def ratios(self, step: str, kind: str | None = None) -> dict[Shape, float]:
        """The step's ratio to cuBLAS at each shape it ran (of one kind), in survey order."""
        shapes = self.kinds.get(kind, []) if kind is not None else self.shapes
        return {shape: row.ratio_to_cublas for shape in shapes
                if (row := self.rows.get((step, shape)))}

    def geomean(self, step: str, kind: str | None = None) -> float | None:
        return geomean(self.ratios(step, kind).values())

    def worst(self, step: str) -> tuple[Shape, float] | None:
        ratios = self.ratios(step)
        return min(ratios.items(), key=lambda item: item[1]) if ratios else None

    def best(self, step: str) -> tuple[Shape, float] | None:
        ratios = self.ratios(step)
        return max(ratios.items(), key=lambda item: item[1]) if ratios else None

    def slower(self, step: str, steps: list[str]) -> list[tuple[Shape, float, str, float]]:
        """The shapes where the step is more than SLOWER slower than an earlier step of its own
        chapter, as (shape, its ratio, the fastest earlier step there, that step's ratio),
        the largest slowdown first. Step 00 (cuBLAS) is in no chapter."""
        chapter, number = chapter_of(step), step_number(step)
        if chapter is None or number is None:
            return []
        earlier = [s for s in steps if chapter_of(s) is chapter
                   and (step_number(s) is not None and step_number(s) < number)]
        found = []
        for shape, ratio in self.ratios(step).items():
            before = [(self.rows[(s, shape)].ratio_to_cublas, s) for s in earlier
                      if (s, shape) in self.rows]
            if not before:
                continue
            fastest, other = max(before)
            if fastest / ratio > 1 + SLOWER:
                found.append((shape, ratio, other, fastest))
        return sorted(found, key=lambda item: item[1] / item[3])


def geomean(values) -> float | None:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _readable(row: Row) -> bool:
    return row.verified and row.has_cublas and row.ratio_to_cublas > 0


def load_survey(results_dir: Path, repo: Path) -> list[Survey]:
    """One Survey per results/<gpu-slug>/survey/ that holds rows, by slug."""
    if not results_dir.is_dir():
        return []
    kinds = survey_kinds(repo)
    surveys = []
    for gpu_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        files = sorted((gpu_dir / SURVEY_DIR).glob("*.csv"))
        rows = [row for path in files for row in keep_last(read_results_csv(path))
                if not row.variant]
        if not rows:
            continue
        kept = {(row.step, (row.m, row.n, row.k)): row for row in rows if _readable(row)}
        surveys.append(Survey(gpu_dir.name, kept, kinds,
                              sum(1 for row in rows if not _readable(row))))
    return surveys


def chapter_lasts(survey: Survey, steps: list[str]) -> list[str]:
    """The last step of each chapter among those with survey rows, in chapter order."""
    lasts = {}
    for step in sorted(survey.steps | set(steps), key=step_sort_key):
        chapter = chapter_of(step)
        if chapter is not None and survey.ratios(step):
            lasts[chapter] = step
    return [lasts[chapter] for chapter in chapters_present(list(lasts.values()))]


# ---- the tables -------------------------------------------------------------------------


def ratio_text(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else NO_VALUE


def _shape_cell(item: tuple[Shape, float] | None) -> list[str]:
    return [shape_name(item[0]), f"{item[1]:.3f}"] if item else [NO_VALUE, NO_VALUE]


def survey_steps(survey: Survey, steps: list[str]) -> list[str]:
    """The steps of the tables: those of the tutorial and of the rows, in step order."""
    return sorted(set(steps) | survey.steps, key=step_sort_key)


def _gpu_block(survey: Survey, steps: list[str], md_file: Path, repo: Path) -> str:
    steps = survey_steps(survey, steps)
    total = len(survey.shapes)
    body = []
    for step in steps:
        ratios = survey.ratios(step)
        if not ratios:
            body.append([step, "0", NOT_MEASURED] + [NO_VALUE] * 5)
            continue
        slower = survey.slower(step, steps)
        body.append([step, str(len(ratios)), ratio_text(survey.geomean(step)),
                     *_shape_cell(survey.worst(step)), *_shape_cell(survey.best(step)),
                     str(len(slower)) if chapter_of(step) else NO_VALUE])
    header = ["step", f"shapes (of {total})", "geomean ratio to cuBLAS", "worst shape", "ratio",
              "best shape", "ratio", f"shapes > {SLOWER:.0%} slower than an earlier step"]
    parts = [f"### {survey.name}", md_table(header, body, "lrrlrlrr")]

    slow_body = []
    for step in steps:
        for shape, ratio, other, fastest in survey.slower(step, steps):
            slow_body.append([step, shape_name(shape), survey.kind_of(shape), f"{ratio:.3f}",
                              other, f"{fastest:.3f}", f"{fastest / ratio - 1:.0%}"])
    if slow_body:
        # Folded: a step that is a detour (11) is slower everywhere, and the list is long.
        parts.append(f"<details><summary>Where a step is more than {SLOWER:.0%} slower than "
                     "an earlier step of its chapter, the fastest earlier one at that shape: "
                     f"{len(slow_body)} rows</summary>\n\n"
                     + md_table(["step", "shape (M×N×K)", "kind", "ratio", "earlier step",
                                 "its ratio", "slower by"], slow_body, "lllrlrr")
                     + "\n\n</details>")
    else:
        parts.append(f"_No step is more than {SLOWER:.0%} slower than an earlier step of its "
                     "chapter at any survey shape._")

    lasts = chapter_lasts(survey, steps)
    if lasts:
        kind_body = []
        for kind, shapes in survey.kinds.items():
            kind_body.append([kind, str(len(shapes))]
                             + [ratio_text(survey.geomean(step, kind)) for step in lasts])
        kind_body.append(["all", str(total)] + [ratio_text(survey.geomean(step))
                                                for step in lasts])
        parts.append("Per kind, the geometric mean ratio to cuBLAS of each chapter's last "
                     "step:")
        parts.append(md_table(["kind", "shapes"] + lasts, kind_body))

    plot = repo / "docs" / "plots" / survey.slug / SURVEY_PLOT
    parts.append(f"![Every step's speed over cuBLAS SGEMM at each survey shape on "
                 f"{survey.name}, coloured by kind, with each step's geometric mean and worst "
                 f"shape]({relative_link(plot, md_file)})")
    notes = []
    if survey.left_out:
        notes.append(f"{survey.left_out} row(s) that failed their check, or were timed "
                     "without cuBLAS, are left out.")
    notes.append(f"A ratio is cuBLAS SGEMM's time over the step's, timed in the same run; the "
                 f"geometric mean is over the shapes where the step ran (of {total}).")
    parts.append("_" + " ".join(notes) + "_")
    parts.append(provenance(list(survey.rows.values())))
    return "\n\n".join(parts)


def survey_section(surveys: list[Survey], steps: list[str], md_file: Path, repo: Path) -> str:
    """The `survey` block of docs/survey.md: per GPU with survey rows, the tables."""
    blocks = [_gpu_block(survey, steps, md_file, repo) for survey in surveys if survey.rows]
    return "\n\n".join(blocks) or NO_SURVEY


# ---- the figure -------------------------------------------------------------------------


def kind_styles(kinds: list[str]) -> dict[str, tuple[object, str]]:
    """(colour, marker) per kind: Dark2's hues, grey for OTHER_KIND."""
    cmap = matplotlib.colormaps["Dark2"]
    styles = {}
    for i, kind in enumerate(kinds):
        color = "0.45" if kind == OTHER_KIND else cmap(i % cmap.N)
        styles[kind] = (color, KIND_MARKERS[i % len(KIND_MARKERS)])
    return styles


def _ratio_label(value: float, _=None) -> str:
    return f"{value:g}×"


def plot_survey(survey: Survey, steps: list[str]) -> Figure:
    """A column per step: a dot per survey shape at the step's speed over cuBLAS (log scale),
    the kinds side by side in the column, the geometric mean as a black bar (its value under
    the step's number), the worst shape labelled, the chapters as bands, a line at 1."""
    kernels = [step for step in survey_steps(survey, steps) if step_number(step) != 0]
    kinds = list(survey.kinds)
    styles = kind_styles(kinds)
    width = max(9.0, 0.62 * len(kernels) + 2.4)
    fig = Figure(figsize=(width, 7.6), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    ax.set_yscale("log")
    values = [r for step in kernels for r in survey.ratios(step).values()]
    low, high = min(values, default=0.5), max(values, default=2.0)
    bottom, top = min(low, 1.0) / 3.4, max(high, 1.0) * 1.8
    ax.set_ylim(bottom, top)
    ax.set_xlim(-0.6, len(kernels) - 0.4)

    for chapter in chapters_present(kernels):
        members = [i for i, step in enumerate(kernels) if chapter_of(step) is chapter]
        ax.axvspan(members[0] - 0.5, members[-1] + 0.5, color=chapter.tint(), zorder=0,
                   linewidth=0)
        if chapter.steps:
            ax.text((members[0] + members[-1]) / 2, 0.985, chapter.steps,
                    transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=9,
                    color=chapter.strong(), fontweight="bold", bbox=_LABEL_BOX, zorder=5)
    ax.axhline(1.0, color="black", linewidth=1.4, linestyle="--", zorder=3)

    offset = 0.8 / max(len(kinds), 1)  # the kinds' places across a step's column
    ticks = []
    for x, step in enumerate(kernels):
        number = step_number(step)
        label = f"{number:02d}" if number is not None else step
        mean = survey.geomean(step)
        if mean is None:
            ax.axvspan(x - 0.4, x + 0.4, facecolor="none", edgecolor="0.6", hatch="////",
                       linewidth=0, zorder=1)
            ax.text(x, 0.03, NOT_MEASURED, transform=ax.get_xaxis_transform(), rotation=90,
                    ha="center", va="bottom", fontsize=7, color="0.3", style="italic",
                    zorder=4, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
            ticks.append(label)
            continue
        for j, kind in enumerate(kinds):
            ratios = list(survey.ratios(step, kind).values())
            if ratios:
                color, marker = styles[kind]
                xs = [x + (j - (len(kinds) - 1) / 2) * offset] * len(ratios)
                ax.scatter(xs, ratios, s=16, color=color, marker=marker, linewidths=0.4,
                           edgecolors="white", zorder=4)
        ax.hlines(mean, x - 0.44, x + 0.44, color="black", linewidth=2.2, zorder=5)
        shape, ratio = survey.worst(step)
        ax.annotate(shape_name(shape), (x, ratio), xytext=(0, -5), textcoords="offset points",
                    rotation=90, ha="center", va="top", fontsize=6.5, color="0.15", zorder=6,
                    bbox=_LABEL_BOX)
        ticks.append(f"{label}\n{mean:.2f}×")

    ax.set_xticks(range(len(kernels)), ticks, fontsize=7.5)
    ax.tick_params(axis="x", length=0, pad=3)
    ax.yaxis.set_major_locator(FixedLocator([v for v in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1,
                                                         2, 5, 10) if bottom <= v <= top]))
    ax.yaxis.set_major_formatter(FuncFormatter(_ratio_label))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_ylabel("speed over cuBLAS SGEMM in the same run (log scale)")
    ax.set_xlabel("step, and its geometric mean over the survey")

    handles = [Line2D([], [], linestyle="none", marker=styles[kind][1], color=styles[kind][0],
                      markersize=6, label=f"{kind} ({len(shapes)})")
               for kind, shapes in survey.kinds.items()]
    handles.append(Line2D([], [], color="black", linewidth=2.2, label="geometric mean"))
    handles.append(Line2D([], [], color="black", linewidth=1.4, linestyle="--",
                          label="cuBLAS SGEMM"))
    handles += [Patch(color=chapter.strong(), label=chapter.label)
                for chapter in chapters_present(kernels)]
    if any(survey.geomean(step) is None for step in kernels):
        handles.append(Patch(facecolor="white", edgecolor="0.6", hatch="////",
                             label=NOT_MEASURED))
    # As many legend columns as the figure's width holds (about 2.8 inches each).
    fig.legend(handles=handles, loc="outside upper center",
               ncols=min(len(handles), 6, max(2, int(width / 2.8))),
               fontsize=9, frameon=False,
               title=f"The shape survey: each step's speed over cuBLAS SGEMM at "
                     f"{len(survey.shapes)} shapes, {survey.name}",
               title_fontproperties={"size": 13})
    fig.supxlabel("A dot per shape where the step passed its check, the kinds side by side "
                  "(the number of shapes in brackets);\nthe label under each column is the "
                  "step's worst shape (M×N×K).", fontsize=8.5, color="0.2", linespacing=1.5)
    return fig


def survey_plot_files(survey: Survey, steps: list[str], repo: Path) -> dict[Path, bytes]:
    from plots.figures import _RC, figure_bytes

    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        return {repo / "docs" / "plots" / survey.slug / SURVEY_PLOT:
                figure_bytes(plot_survey(survey, steps), "png")}


def geomean_percent(survey: Survey | None, step: str) -> tuple[str, bool]:
    """The README column's cell (the geometric mean as a % of cuBLAS, "n of N" when the step
    ran at fewer than all the shapes) and whether it had to say so."""
    ratios = survey.ratios(step) if survey is not None else {}
    if not ratios:
        return NO_VALUE, False
    cell = percent(geomean(ratios.values()))
    partial = len(ratios) < len(survey.shapes)
    return (f"{cell} ({len(ratios)} of {len(survey.shapes)})" if partial else cell), partial

