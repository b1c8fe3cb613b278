"""The chapters of the tutorial and the colour of each step in every figure.

A chapter has one hue; its steps take shades of that hue, darker as the chapter goes on, and a
marker of their own, so that no two steps share a colour (or a colour and marker) in a figure,
and a step keeps its colour from figure to figure. Step 00 (cuBLAS) is black.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib

from plots.steps import step_number


@dataclass(frozen=True)
class Chapter:
    first: int
    last: int
    title: str  # what the chapter is, after its step range in a legend
    colormap: str  # a sequential matplotlib colormap: its shades are the steps' colours
    shades: tuple[float, float] = (0.45, 0.95)  # the colormap's range used for the shades

    @property
    def steps(self) -> str:
        """The step range, e.g. "01–09"; "" for OTHER."""
        return f"{self.first:02d}–{self.last:02d}" if self.last else ""

    @property
    def label(self) -> str:
        return f"{self.steps} {self.title}".strip()

    def holds(self, number: int | None) -> bool:
        return number is not None and self.first <= number <= self.last

    def tint(self) -> tuple[float, float, float, float]:
        """A pale shade of the hue, for a band behind the chapter's steps."""
        return matplotlib.colormaps[self.colormap](0.12)

    def strong(self) -> tuple[float, float, float, float]:
        """The hue at full strength, for the chapter's name and its legend patch."""
        return matplotlib.colormaps[self.colormap](0.8)


CHAPTERS = (
    Chapter(1, 9, "the blog series", "Blues", (0.38, 0.98)),
    Chapter(10, 12, "MoYe.jl's pipeline", "Greens", (0.5, 0.9)),
    Chapter(13, 21, "CUDA cores to cuBLAS", "Oranges", (0.4, 0.95)),
    Chapter(22, 40, "3xTF32 on tensor cores", "Purples", (0.5, 0.95)),
)
# Steps in no chapter above (a step 41 of tomorrow, an unnumbered directory): shades of red.
OTHER = Chapter(0, 0, "other steps", "Reds", (0.4, 0.95))
CUBLAS_COLOR = "black"
MARKERS = "osv^D<>ph*XPdH8+x12"  # one per step within its chapter, in step order (a chapter has at most 19)


def chapter_of(step: str) -> Chapter | None:
    """The chapter a step belongs to; None for step 00 (cuBLAS)."""
    number = step_number(step)
    if number == 0:
        return None
    return next((chapter for chapter in CHAPTERS if chapter.holds(number)), OTHER)


def _index_in(chapter: Chapter, step: str, steps: list[str]) -> tuple[int, int]:
    """(position, count) of the step among its chapter's places: the chapter's numbered range,
    so that a step's shade does not depend on which other steps have results; for OTHER, its
    position among the figure's steps that fall there."""
    if chapter is not OTHER:
        return step_number(step) - chapter.first, chapter.last - chapter.first + 1
    others = [s for s in steps if chapter_of(s) is OTHER]
    if step not in others:
        others.append(step)
    return others.index(step), len(others)


def step_style(step: str, steps: list[str]) -> tuple[object, str]:
    """(colour, marker) of a step; steps is the figure's list (it only matters for OTHER)."""
    chapter = chapter_of(step)
    if chapter is None:
        return CUBLAS_COLOR, "s"
    position, count = _index_in(chapter, step, steps)
    low, high = chapter.shades
    shade = low + (high - low) * (position / (count - 1) if count > 1 else 0.5)
    return matplotlib.colormaps[chapter.colormap](shade), MARKERS[position % len(MARKERS)]


def step_color(step: str, steps: list[str]):
    return step_style(step, steps)[0]


def chapters_present(steps: list[str]) -> list[Chapter]:
    """The chapters that hold any of these steps, in order (OTHER last)."""
    found = {chapter_of(step) for step in steps} - {None}
    return [chapter for chapter in (*CHAPTERS, OTHER) if chapter in found]
