"""The step pages' pictures: docs/pictures/NN_name.svg, drawn from the steps' knobs and
heuristics by plots/pictures_tiles.py (geometry), plots/pictures_time.py (time and the
split of work), plots/pictures_plan.py (step 21's choice of tile over the shapes),
plots/pictures_split.py (step 30's choice of where A is split over the shapes) and
plots/pictures_pass.py (step 31's one pass before the GEMM and its teams of threads),
plots/pictures_demand.py (step 32's block with no pass before it, and its splitters' vectors),
plots/pictures_raw.py (step 33's k tile with A as its own big part, and a value's two parts)
and plots/pictures_columns.py (step 34's warp 0 and consumers, and where a column of B lies
among a warp's lanes), so that a picture stays true when a knob moves."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from plots.schema import warn

PICTURES_DIR = Path("docs") / "pictures"
MODULES = ("plots.pictures_tiles", "plots.pictures_time", "plots.pictures_plan", "plots.pictures_split",
           "plots.pictures_pass", "plots.pictures_demand", "plots.pictures_raw",
           "plots.pictures_columns", "plots.pictures_small_pass", "plots.pictures_raw_b",
           "plots.pictures_tile_by_shape", "plots.pictures_short_epilogue", "plots.pictures_odd_strides",
           "plots.pictures_edges")


def drawers() -> dict[str, Callable[[Path], str]]:
    """Every picture's file name and the function that draws it (a name drawn twice is a bug)."""
    found: dict[str, Callable[[Path], str]] = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for file, draw in module.PICTURES.items():
            if file in found:
                raise ValueError(f"{file} is drawn by two modules")
            found[file] = draw
    return found


def picture_files(repo: Path) -> dict[Path, bytes]:
    """docs/pictures/*.svg and their content. A picture whose step is missing, or whose step
    lacks a knob it draws (a test's stand-in repository), is left out with a warning; the
    pictures' own tests hold every picture of this repository drawn and current."""
    files = {}
    for file, draw in sorted(drawers().items()):
        try:
            files[repo / PICTURES_DIR / file] = draw(repo).encode("utf-8")
        except (KeyError, FileNotFoundError, ValueError, TypeError, AttributeError) as error:
            warn(f"{(PICTURES_DIR / file).as_posix()} not drawn: {type(error).__name__} {error}")
    return files
