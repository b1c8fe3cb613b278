"""The margins of the FP32-grade limit, both sides, for docs/methodology.md.

Below the limit: every program's largest max error (in u, common/verify.hpp) over the GPU
suite's shapes (results/<gpu>/profiles/accuracy_suite.csv, read from the suite's verbose
log by scripts/accuracy_margins.py) and over the bench sizes (results/<gpu>/*.csv). Above
it: the cuBLAS TF32 control's smallest max error where it fails, and the planted faults'
smallest margins (results/<gpu>/profiles/planted_faults_run.log)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from plots.markdown import md_table
from plots.schema import read_results_csv
from plots.steps import step_sort_key

CONTROL = "control_cublas_tf32"
LIMIT = re.compile(r"kAccuracyLimitU\s*=\s*([0-9.]+)")
FAULT = re.compile(r"^caught\s+(.*?) \[[^;]*;.*\(check\): .*smallest error ([0-9.e+]+)x the limit(?: \(caught by ([^)]*)\))?")
# A fault whose results are all within the limit but whose second run gave other bits.
FAULT_BITS = re.compile(r"^caught\s+(.*?) \[[^;]*;.*\(check\): .*by different bits on a second run")


def accuracy_limit(repo: Path) -> float | None:
    match = LIMIT.search((repo / "common" / "verify.hpp").read_text(encoding="utf-8"))
    return float(match.group(1)) if match else None


def _suite(path: Path) -> tuple[list[tuple[str, str, str, float]], list[tuple[str, str, str, float, str]]]:
    """The suite's rows, and apart from them those of expected failures (column `expected` =
    "fail": a step listed under expect_fail.SET in tests/shapes.txt, no margin of a correct
    step), each with its set. Files from before those columns hold no expected failures."""
    if not path.is_file():
        return [], []
    rows, expected = [], []
    with path.open(encoding="utf-8") as f:
        for r in csv.DictReader(f):
            row = (r["program"], r["shape"], r["check"], float(r["err_max_u"]))
            if r.get("expected") == "fail":
                expected.append(row + (r.get("set") or "",))
            else:
                rows.append(row)
    return rows, expected


def _expected_failures(expected) -> str:
    """One line per program and set: how many shapes failed, and the smallest error where one
    did (or that none did: the failure is gone, and the suite's test of it fails too)."""
    lines = []
    for program, group in sorted({(r[0], r[4]) for r in expected}, key=lambda pg: (step_sort_key(pg[0]), pg[1])):
        mine = [r for r in expected if (r[0], r[4]) == (program, group)]
        failed = [r for r in mine if r[2] != "ok"]
        if failed:
            low = min(failed, key=lambda r: r[3])
            lines.append(f"- {program}, {group}: {len(failed)} of {len(mine)} shapes fail, the smallest max error "
                         f"where one does {low[3]:.3g} u at {low[1]}")
        else:
            lines.append(f"- {program}, {group}: no shape fails ({len(mine)} passed)")
    return "\n".join(lines)


def _bench(gpu_dir: Path) -> list[tuple[str, str, str, float]]:
    rows = []
    for path in sorted(gpu_dir.glob("*.csv")) + sorted((gpu_dir / "controls").glob("*.csv")):
        program = path.stem if path.parent.name != "controls" else f"control_{path.stem}"
        for row in read_results_csv(path):
            if row.err_max_u is not None and not row.variant:
                rows.append((program, f"{row.m}x{row.n}x{row.k}", "ok" if row.verified else "FAILED",
                             row.err_max_u))
    return rows


def _faults(path: Path) -> list[tuple[str, float, str]]:
    """(fault, smallest error over the limit, what caught it where that is not the error) of
    the faults that the check itself caught."""
    if not path.is_file():
        return []
    found: dict[str, tuple[float, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        bits = FAULT_BITS.match(line)
        if bits:
            found[bits.group(1)] = (0.0, "different bits on a second run")
            continue
        match = FAULT.match(line)
        if match:
            margin, by = found.get(match.group(1), (float("inf"), ""))
            found[match.group(1)] = (min(margin, float(match.group(2))), by or (match.group(3) or ""))
    return sorted(((name, margin, by) for name, (margin, by) in found.items()), key=lambda f: f[1])


def _worst(rows, program):
    mine = [r for r in rows if r[0] == program]
    return max(mine, key=lambda r: r[3]) if mine else None


def _cell(row, limit: float, below: bool) -> list[str]:
    if row is None:
        return ["—", "—"]
    margin = limit / row[3] if below else row[3] / limit
    return [f"{row[3]:.3g} at {row[1]}", f"{margin:.1f}x {'below' if below else 'above'}"]


def margins_section(repo: Path, results_dir: Path) -> str | None:
    limit = accuracy_limit(repo)
    if limit is None or not results_dir.is_dir():
        return None
    parts = []
    for gpu_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        suite, expected = _suite(gpu_dir / "profiles" / "accuracy_suite.csv")
        bench = _bench(gpu_dir)
        if not suite and not any(r[0] == CONTROL for r in bench):
            continue
        # Programs named control_* must fail (results/<gpu>/controls/): the cuBLAS TF32 control,
        # and e.g. a step's one-pass TF32 variant; the others must pass.
        must_fail = sorted({r[0] for r in suite + bench if r[0].startswith("control_")},
                           key=lambda name: (name != CONTROL, name))
        programs = sorted({r[0] for r in suite + bench if r[0] not in must_fail}, key=step_sort_key)
        body = []
        for program in programs:
            body.append([program] + _cell(_worst(suite, program), limit, True)
                        + _cell(_worst(bench, program), limit, True))
        for name in must_fail:
            failed_suite = [r for r in suite if r[0] == name and r[2] != "ok"]
            failed_bench = [r for r in bench if r[0] == name and r[2] != "ok"]
            control = [f"{name} (must fail)"]
            control += _cell(min(failed_suite, key=lambda r: r[3]) if failed_suite else None, limit, False)
            control += _cell(min(failed_bench, key=lambda r: r[3]) if failed_bench else None, limit, False)
            body.append(control)
        title = gpu_dir.name
        table = md_table(["program", "suite: largest max error (u)", "margin", "bench: largest max error (u)",
                          "margin"], body, "lllll")
        text = f"**{title}** (limit {limit:g} u; for the control, the smallest max error where it fails)\n\n{table}"
        passed = sorted({r[1] for r in suite if r[0] == CONTROL and r[2] == "ok"})
        if passed:
            text += (f"\n\nThe control passes where cuBLAS does not use the tensor cores (a dimension of 1, "
                     f"or K = 1): {', '.join(passed)}; every suite group it runs in still fails.")
        if expected:
            text += ("\n\nExpected failures (`expect_fail.*` in tests/shapes.txt), left out of the table "
                     "above:\n\n" + _expected_failures(expected))
        faults = _faults(gpu_dir / "profiles" / "planted_faults_run.log")
        if faults:
            text += "\n\nPlanted faults caught by the check, smallest error over the limit at any of their shapes:\n\n"
            # A fault whose wrong elements stay under the limit was caught by something else:
            # a write into the guard cells beside C, or (--specials) outputs of the wrong class.
            text += md_table(["fault", "margin above the limit"],
                             [[name, f"{margin:.3g}x" if margin >= 1 else f"caught by {by or 'the guard cells'}"]
                              for name, margin, by in faults], "lr")
        parts.append(text)
    return "\n\n".join(parts) if parts else None
