"""Tunables: their values read from each step's `.cu` file, their meanings from the one table
in docs/tunables.md. Renders a step page's tunables block and docs/tunables.md's table of
values per step, so no page carries a copied description or a typed default."""

from __future__ import annotations

import re
from pathlib import Path

from plots.diffs import _stepdiff
from plots.markdown import md_table, relative_link
from plots.steps import previous_steps, step_number, step_source

TUNABLES_DOC = Path("docs") / "tunables.md"
_GENERATED = re.compile(r"<!-- BEGIN ([\w-]+) -->.*?<!-- END \1 -->", re.S)
_ROW = re.compile(r"\|\s*`([A-Z][A-Z0-9_]*)`\s*\|(.*)\|\s*$")


def step_tunables(repo: Path, step: str) -> dict[str, str]:
    """NAME -> VALUE of the step's tunables, in file order ({} without a `.cu` file)."""
    source = step_source(repo, step)
    if source is None:
        return {}
    return _stepdiff().knobs(source.read_text(encoding="utf-8").splitlines())


def read_meanings(repo: Path) -> dict[str, str]:
    """NAME -> meaning: rows `| `NAME` | ... | meaning |` of docs/tunables.md (last column)."""
    path = repo / TUNABLES_DOC
    if not path.is_file():
        return {}
    # Generated blocks (the table of values per step) are not descriptions.
    text = _GENERATED.sub("", path.read_text(encoding="utf-8"))
    meanings: dict[str, str] = {}
    for line in text.splitlines():
        if match := _ROW.match(line):
            meanings.setdefault(match.group(1), match.group(2).split("|")[-1].strip())
    return meanings


def undescribed(repo: Path, steps: list[str], meanings: dict[str, str]) -> list[str]:
    """`NAME (steps/STEP)` for each tunable that docs/tunables.md does not describe."""
    return [f"{name} (steps/{step})" for step in steps for name in step_tunables(repo, step)
            if name not in meanings]


def _meaning(meanings: dict[str, str], name: str) -> str:
    # A new knob still gets its row on the page; plots/tests/test_tunables_doc.py fails until
    # docs/tunables.md describes it.
    return meanings.get(name, f"_not described yet: add a row to {TUNABLES_DOC.as_posix()}_")


def step_tunables_section(repo: Path, steps: list[str], step: str,
                          meanings: dict[str, str]) -> str:
    """The tunables block of a step page: value here, value in the step before, meaning."""
    values = step_tunables(repo, step)
    if not values:
        return "_This step has no tunables._"
    previous = dict((new, old) for old, new in previous_steps(steps, repo)).get(step)
    before = step_tunables(repo, previous) if previous else {}
    label = f"step {step_number(previous):02d}" if previous else "step before"
    body = []
    for name, value in values.items():
        old = before.get(name)
        change = "new" if old is None else ("same" if old == value else f"**{old}** (re-tuned)")
        body.append([f"`{name}`", value, change, _meaning(meanings, name)])
    doc = relative_link(repo / TUNABLES_DOC, repo / "steps" / step / "README.md")
    return "\n\n".join([
        md_table(["tunable", "value here", label, "meaning"], body, "lrll"),
        f"_Values read from the step's `.cu` file; meanings from [{TUNABLES_DOC.as_posix()}]"
        f"({doc}), which also maps them to the BM/BN/BK/TM/TN names._",
    ])


def tunable_values_section(repo: Path, steps: list[str], meanings: dict[str, str]) -> str:
    """docs/tunables.md's table: each tunable's value in each step (bold where re-tuned)."""
    values = {step: step_tunables(repo, step) for step in steps}
    steps = [step for step in steps if values[step]]
    names: list[str] = []
    for step in steps:
        names += [name for name in values[step] if name not in names]
    if not names:
        return "_No step has tunables yet._"
    body = []
    for name in names:
        cells, last = [], None
        for step in steps:
            value = values[step].get(name)
            cells.append("" if value is None else
                         f"**{value}**" if last is not None and value != last else value)
            last = value if value is not None else last
        body.append([f"`{name}`", *cells])
    header = ["tunable", *(f"{step_number(step):02d}" for step in steps)]
    return "\n\n".join([md_table(header, body, "l" + "r" * len(steps)),
                        "_Read from each step's `.cu` file. **Bold**: a value that differs "
                        "from the step before (a re-tuned knob); empty: not a tunable of that "
                        "step._"])
