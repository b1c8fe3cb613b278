#!/usr/bin/env python3
"""Measures both margins of the FP32-grade limit: how far below it every correct step stays,
and how far above it the cuBLAS TF32 control lands, at every GPU-suite shape and bench size.

Runs each step (and cuBLAS itself, step 00) with --check on every shape of the GPU suite's
random-input groups and at the bench sizes, parses the error columns the harness prints
(max and RMS of |got - ref64| in units of u of |alpha||A||B| + |beta||C|), and prints:
  - per step: the largest max error over all shapes, and where; the largest RMS
  - the control (cuBLAS with TF32 tensor cores): its smallest max error, and where
  - the margins: limit / worst correct max error, and smallest control max error / limit
The planted faults (scripts/planted_faults.py) report their own margins.

With --from-ctest-log, nothing is run: the rows are read from a verbose log of the GPU suite
(`ctest -V`, as scripts/device_run.sh's test phase keeps it) and written as CSV
(program,shape,check,err_max_u,set,expected) for results/<gpu>/profiles/accuracy_suite.csv,
from which the plot tool writes the margins table of docs/methodology.md. `set` is the suite's
set (gpu.SET; empty where the log does not name the test), `expected` is "fail" where
tests/shapes.txt lists the program under expect_fail.SET (a known failure, e.g. 3xTF32 on
subnormal inputs), else empty: those rows are no margin of a correct step.

Steps listed under expect_fail.SET are expected to fail that set; both modes report them
apart from the correct steps' margins.

    scripts/accuracy_margins.py --build build [--steps "01_initial 12_double_buffer"] [--out FILE]
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import project  # noqa: E402

BENCH = project.shapes("bench")
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(ok|FAILED)(?:[^;]*;\s*error max)?\s+([0-9.e+naif-]+)")
LIMIT = re.compile(r"FP32-grade limit ([0-9.e+]+) u")


def suite_groups() -> list[tuple[str, str, str, str, list[str]]]:
    """(name, sizes, alpha, beta, extra options) of the GPU suite's groups (tests/shapes.txt)."""
    return project.gpu_groups()


def expected_to_fail(program: str, group: str) -> bool:
    """tests/shapes.txt lists `program` under expect_fail.GROUP."""
    return program in project.expected_failures().get(group, [])


def run(exe: Path, args: list[str]) -> tuple[list[tuple[str, str, float]], float]:
    """[(shape, ok|FAILED, err max in u)] and the limit the program printed."""
    r = subprocess.run([str(exe)] + args, capture_output=True, text=True)
    limit = LIMIT.search(r.stdout)
    rows = []
    for line in r.stdout.splitlines():
        m = ROW.match(line)
        if m:
            rows.append((f"{m.group(1)}x{m.group(2)}x{m.group(3)}", m.group(4), float(m.group(5))))
    if r.returncode not in (0, 1):
        sys.exit(f"accuracy_margins: {exe.name} {' '.join(args)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return rows, float(limit.group(1)) if limit else float("nan")


SUITE_ROW = re.compile(r"^(\d+): +(\d+) +(\d+) +(\d+)  (ok|FAILED)(?:[^;]*;\s*error max)?\s+([0-9.e+naif-]+)")
# The test's name, from "    Start 12: gpu.01_initial.tiny" (printed as it starts) or
# "1/983 Test  #12: gpu.01_initial.tiny ....   Passed" (as it ends).
TEST_NAME = re.compile(r"^\s*(?:Start|\d+/\d+ Test\s+#)\s*(\d+): (gpu\.\S+)")


def rows_from_ctest_log(log: Path) -> list[str]:
    """program,shape,check,err_max_u,set,expected for every shape line of a verbose CTest log."""
    programs, names = {}, {}
    rows = []  # (test number, program, shape, check, error)
    for line in log.read_text(errors="replace").splitlines():
        command = re.match(r"^(\d+): Test command: .*?/bin/(\d\d_[a-z0-9_]+|control_[a-z0-9_]+)", line)
        if command:
            programs[command.group(1)] = command.group(2)
        name = TEST_NAME.match(line)
        if name:
            names[name.group(1)] = name.group(2)
        row = SUITE_ROW.match(line)
        if row and row.group(1) in programs:
            rows.append((row.group(1), programs[row.group(1)],
                         f"{row.group(2)}x{row.group(3)}x{row.group(4)}", row.group(5), row.group(6)))
    out = ["program,shape,check,err_max_u,set,expected"]
    for number, program, shape, check, err in rows:
        prefix = f"gpu.{program}."
        name = names.get(number, "")
        group = name[len(prefix):] if name.startswith(prefix) else ""
        expected = "fail" if group and expected_to_fail(program, group) else ""
        out.append(f"{program},{shape},{check},{err},{group},{expected}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", type=Path)
    ap.add_argument("--steps", default="", help="space-separated step names (default: every built step)")
    ap.add_argument("--control", default="control_cublas_tf32")
    ap.add_argument("--out", type=Path, help="also write the per-shape rows here (CSV)")
    ap.add_argument("--from-ctest-log", type=Path, metavar="LOG",
                    help="read the rows from a verbose GPU-suite log instead of running anything")
    args = ap.parse_args()
    if args.from_ctest_log:
        rows = rows_from_ctest_log(args.from_ctest_log)
        if args.out:
            args.out.write_text("\n".join(rows) + "\n")
        print(f"accuracy_margins: {len(rows) - 1} shape rows from {args.from_ctest_log}")
        return 0 if len(rows) > 1 else 1
    bin_dir = args.build / "bin"
    steps = args.steps.split() or project.steps()
    runs = [(name, ["--sizes", sizes, "--alpha", alpha, "--beta", beta] + extra)
            for name, sizes, alpha, beta, extra in suite_groups() if alpha != "0"]
    runs.append(("bench", ["--sizes", BENCH, "--alpha", "1", "--beta", "0"]))
    out = ["program,group,shape,check,err_max_u"]
    limit = float("nan")
    worst = []  # (step, err, shape)
    for step in steps + [args.control]:
        exe = bin_dir / step
        if not exe.exists():
            continue
        rows = []
        for group, a in runs:
            got, limit = run(exe, ["--check"] + a)
            if expected_to_fail(step, group) and got:  # a known failure: reported, no margin
                failed = [shape for shape, check, _ in got if check != "ok"]
                high = max(got, key=lambda r: r[2])
                print(f"{step:28s} expected to fail {group}: {len(failed)} of {len(got)} shapes failed, "
                      f"largest max error {high[2]:.4g} u at {high[0]}"
                      + ("" if failed else "; IT PASSED: take it off expect_fail." + group))
                out += [f"{step},{group},{shape},{check},{err}" for shape, check, err in got]
                continue
            rows += [(group, shape, check, err) for shape, check, err in got]
            out += [f"{step},{group},{shape},{check},{err}" for shape, check, err in got]
        if step == args.control:
            passed = [r for r in rows if r[2] == "ok"]
            low = min(rows, key=lambda r: r[3])
            print(f"{step:28s} smallest max error {low[3]:10.4g} u at {low[1]} ({low[0]}); "
                  f"{len(rows) - len(passed)} of {len(rows)} shapes FAILED as they must")
            if passed:
                print("  control PASSED at: " + ", ".join(f"{r[1]} ({r[0]}, {r[3]:.3g} u)" for r in passed))
            control_low = low[3]
        else:
            failed = [r for r in rows if r[2] != "ok"]
            high = max(rows, key=lambda r: r[3])
            worst.append((step, high[3], f"{high[1]} ({high[0]})"))
            print(f"{step:28s} largest max error {high[3]:8.3g} u at {high[1]} ({high[0]}); "
                  f"{len(failed)} of {len(rows)} shapes failed" + (": " + ", ".join(r[1] for r in failed) if failed else ""))
    if worst:
        w = max(worst, key=lambda t: t[1])
        print(f"limit {limit:g} u; correct steps: worst {w[1]:.3g} u ({w[0]}, {w[2]}), margin {limit / w[1]:.3g}x")
    if "control_low" in locals():
        print(f"control: smallest max error {control_low:.4g} u, margin {control_low / limit:.3g}x above the limit")
    if args.out:
        args.out.write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
