"""Step discovery: the step directories under steps/, their order, and their kernel files."""

from __future__ import annotations

import re
from pathlib import Path

STEP_NAME = re.compile(r"(\d+)_(.+)")


def step_sort_key(step: str) -> tuple:
    """Orders steps by their number (so 100_x follows 99_y); unnumbered names go last."""
    match = STEP_NAME.fullmatch(step)
    return (0, int(match.group(1)), step) if match else (1, 0, step)


def step_number(step: str) -> int | None:
    match = STEP_NAME.fullmatch(step)
    return int(match.group(1)) if match else None


def step_dirs(repo: Path) -> list[str]:
    """Step directory names under steps/, in step order."""
    steps_root = repo / "steps"
    if not steps_root.is_dir():
        return []
    names = [p.name for p in steps_root.iterdir() if p.is_dir() and STEP_NAME.fullmatch(p.name)]
    return sorted(names, key=step_sort_key)


def step_source(repo: Path, step: str) -> Path | None:
    """The kernel of a step: steps/NN_slug/slug.cu, or else the directory's only .cu file."""
    directory = repo / "steps" / step
    match = STEP_NAME.fullmatch(step)
    preferred = directory / (match.group(2) + ".cu") if match else None
    if preferred and preferred.is_file():
        return preferred
    candidates = sorted(directory.glob("*.cu"))
    return candidates[0] if len(candidates) == 1 else None


PREVIOUS = re.compile(r"previous:\s*(\d+_\w+)")


def named_previous(repo: Path, step: str) -> str | None:
    """The step a step's header says it builds on ("// Step 22 - ...  previous: 13_multi_stage")."""
    source = step_source(repo, step)
    if source is None:
        return None
    with source.open(encoding="utf-8") as f:
        match = PREVIOUS.search(f.readline())
    return match.group(1) if match else None


def previous_steps(steps: list[str], repo: Path | None = None) -> list[tuple[str, str]]:
    """(previous, step) pairs of kernel steps; step 00 (cuBLAS) is in none. A step's previous is
    the one its header names where the repository is given and that step exists, else the step
    before it."""
    kernels = [step for step in steps if step_number(step) != 0]
    pairs = []
    for before, step in zip(kernels, kernels[1:]):
        named = named_previous(repo, step) if repo is not None else None
        pairs.append((named if named in kernels else before, step))
    return pairs
