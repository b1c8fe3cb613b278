"""What each step changes: the diff-size table of docs/step-diffs.md and the diff blocks of
the step pages, counted by scripts/stepdiff.py (code lines apart from re-tuned knobs)."""

from __future__ import annotations

import difflib
import importlib.util
import re
from functools import cache
from pathlib import Path

from plots.markdown import NO_VALUE, md_table
from plots.steps import previous_steps, step_number, step_source

STEPDIFF = Path(__file__).resolve().parent.parent / "scripts" / "stepdiff.py"
DIFF_VS = re.compile(r"<!-- BEGIN (diff-vs-(\d+)) -->")  # a page's diff against step NN


@cache
def _stepdiff():
    """scripts/stepdiff.py, loaded by path: it is a script, not part of this package."""
    spec = importlib.util.spec_from_file_location("stepdiff", STEPDIFF)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def diff_counts(old: Path, new: Path) -> tuple[int, int, list[tuple[str, str, str]]]:
    """(code lines added, code lines removed, [(knob, old value, new value)])."""
    return _stepdiff().diff_counts(old, new)


def plain_counts(old: Path, new: Path) -> tuple[int, int]:
    """(lines added, lines removed) of the plain diff, knob lines included."""
    return _stepdiff().line_counts(old.read_text(encoding="utf-8").splitlines(),
                                   new.read_text(encoding="utf-8").splitlines())


def knobs_text(retuned: list[tuple[str, str, str]]) -> str:
    return ", ".join(f"`{name}` {old} → {new}" for name, old, new in retuned) or "none"


def _command(steps: list[str], previous: str, step: str) -> str:
    # The short form `stepdiff.sh N` is ambiguous if two step directories share a number.
    numbers = [step_number(s) for s in steps]
    if numbers.count(step_number(step)) == 1:
        return f"`scripts/stepdiff.sh {step_number(step)}`"
    return f"`scripts/stepdiff.sh {previous} {step}`"


def diff_sizes_section(repo: Path, steps: list[str]) -> str:
    """Code lines added/removed and re-tuned knobs of each step against the step it builds on."""
    body = []
    for previous, step in previous_steps(steps, repo):
        old, new = step_source(repo, previous), step_source(repo, step)
        if old and new:
            added, removed, retuned = diff_counts(old, new)
            plain = plain_counts(old, new)
            body.append([step, previous, str(added), str(removed), knobs_text(retuned),
                         f"+{plain[0]} / −{plain[1]}", _command(steps, previous, step)])
        else:
            body.append([step, previous, NO_VALUE, NO_VALUE, NO_VALUE, NO_VALUE,
                         "no `.cu` file to compare"])
    if not body:
        return "_Not enough steps to compare yet._"
    return md_table(["step", "compared with", "code lines added", "code lines removed",
                     "re-tuned knobs", "plain diff", "show the diff"], body, "llrrlrl")


def diff_vs_sections(repo: Path, step: str, text: str) -> dict[str, str]:
    """The `diff-vs-NN` blocks that a step page asks for: the counts, then the diff itself."""
    sections = {}
    for match in DIFF_VS.finditer(text):
        name, number = match.group(1), int(match.group(2))
        others = [s for s in (p.name for p in (repo / "steps").iterdir())
                  if step_number(s) == number]
        old = step_source(repo, others[0]) if len(others) == 1 else None
        new = step_source(repo, step)
        if old is None or new is None:
            sections[name] = f"_No single `.cu` file of step {number:02d} to compare with._"
            continue
        sections[name] = _diff_block(repo, old, new, number, step_number(step))
    return sections


def _diff_block(repo: Path, old: Path, new: Path, old_number: int, new_number: int) -> str:
    added, removed, retuned = diff_counts(old, new)
    old_name, new_name = old.relative_to(repo).as_posix(), new.relative_to(repo).as_posix()
    # The code diff: the older file with the newer one's knob values (scripts/stepdiff.py).
    new_lines = new.read_text(encoding="utf-8").splitlines()
    old_lines = _stepdiff().with_knobs_of(old.read_text(encoding="utf-8").splitlines(), new_lines)
    diff = difflib.unified_diff(old_lines, new_lines, old_name, new_name, lineterm="")
    return "\n\n".join([
        f"`scripts/stepdiff.sh {old_number} {new_number}`: {added} lines of code added, "
        f"{removed} removed; re-tuned knobs: {knobs_text(retuned)}.",
        f"<details><summary>The code diff, {old_name} → {new_name} (knobs set to step "
        f"{new_number:02d}'s values)</summary>\n\n"
        "```diff\n" + "\n".join(diff) + "\n```\n\n</details>",
    ])


STEP_DIFFS_TEMPLATE = """\
# What each step changes

Each step is a small edit of the step it builds on: the step before it, or the one its
header names (step 22 builds on step 13). The table counts the lines of the kernel's `.cu`
file that each step adds and removes relative to that step, apart from re-tuned
knobs: a tunable line (`constexpr int NAME = VALUE;`) whose value alone changed is listed
under "re-tuned knobs" instead; "plain diff" counts every changed line, knobs included
(`scripts/stepdiff.py`, with Python's difflib). Run the command in the last column from the
repository root to read the code diff and the re-tuned knobs; `scripts/stepdiff.sh --stat N`
prints just the counts. Why steps re-tune knobs at all, and the sweep row behind each re-tune:
[overview.md](overview.md#re-tuned-knobs).

<!-- BEGIN diff-sizes -->
<!-- END diff-sizes -->
"""
