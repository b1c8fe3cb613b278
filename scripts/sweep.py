#!/usr/bin/env python3
"""Sweeps a step's tunables: builds one variant per combination and times each.

A step's tunables are its `constexpr int|bool NAME = SGEMM_KNOB(NAME, VALUE);` lines. A variant
is the step's file with some of those values replaced, and the same values named first in
SGEMM_VARIANT_KNOBS, so that they win over the build's tuning (common/sgemm.cuh). Variants are built by the project's own CMake build,
exactly like their step (same flags, architectures and steps/NN_slug/step.cmake; see
CMakeLists.txt), so run CMake first; each is timed by the harness like any step, its rows
labelled with --variant NAME=VALUE;... so plots/ can build the step's tuning table. A
combination that a static_assert rejects is reported as invalid, not timed.

    scripts/sweep.py --build build --step 12_double_buffer \\
        --set THREAD_TILE_X=4,8 --set TUNE_SPLIT=8,16 --sizes 2048,4096 --csv tuning.csv

Other scripts build a variant with build_variant(build_dir, step, label, source_text).
"""
import argparse
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import project  # noqa: E402

ROOT = project.ROOT
TUNABLE = r"^(constexpr\s+(?:int|bool)\s+{name}\s*=\s*SGEMM_KNOB\(\s*{name}\s*,\s*)([^;]+?)(\s*\)\s*;)"


def step_source(step: str) -> Path:
    return project.step_source(step)


def make_variant(text: str, values: dict) -> str:
    for name, value in values.items():
        if not re.fullmatch(r"-?\d+|true|false", str(value)):
            raise SystemExit(f"sweep: {name}={value}: a knob's value is an integer, true or false")
        text, n = re.subn(TUNABLE.format(name=re.escape(name)), rf"\g<1>{value}\g<3>", text, count=1, flags=re.M)
        if n != 1:
            raise SystemExit(f"sweep: no tunable 'constexpr int|bool {name} = SGEMM_KNOB({name}, ...);' in the step")
    if not values:
        return text
    knobs = " ".join(f"{name}={value}" for name, value in values.items())
    return f'#define SGEMM_VARIANT_KNOBS "{knobs}"  // scripts/sweep.py: wins over the build\'s tuning\n' + text


def variant_name(label: str) -> str:
    """The file and target name of a variant labelled `label` (e.g. "TUNE_SPLIT=16;MIN_BLOCKS=2"):
    letters, digits and "_" only."""
    return re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_") or "variant"


def _status(exe: Path, log: Path) -> str:
    """"ok: R registers, S bytes spilled" from ptxas's messages, or "invalid: the first error"."""
    messages = log.read_text(errors="replace") if log.is_file() else ""
    if not exe.is_file():
        errors = [line for line in messages.splitlines() if "error" in line]
        return "invalid: " + (errors[0].split("error:")[-1].strip() if errors else "did not build (see the build output)")
    regs = re.findall(r"Used (\d+) registers", messages)
    spills = re.findall(r"(\d+) bytes spill stores", messages)
    return f"ok: {regs[-1] if regs else '?'} registers, {spills[-1] if spills else '?'} bytes spilled"


def build_variants(build_dir: Path, step: str, variants: list[tuple[str, str]],
                   jobs: int | None = None) -> list[tuple[Path, str]]:
    """Builds variants of `step`, given as (label, source text), in parallel through the CMake
    build in build_dir: each is written to BUILD/variants/<step>/<name>.cu (other variants of
    the step left there are removed), CMake is re-run and target <step>-variants is built.
    Returns (executable, status) per variant; status starts with "ok: R registers, S bytes
    spilled" or "invalid: ..."."""
    build_dir = Path(build_dir)
    generator = project.cmake_cache(build_dir, "CMAKE_GENERATOR")
    if step not in project.steps():
        raise SystemExit(f"sweep: unknown step {step}")
    work = build_dir / "variants" / step
    work.mkdir(parents=True, exist_ok=True)
    names = [variant_name(label) for label, _ in variants]
    if len(set(names)) != len(names):
        raise SystemExit(f"sweep: two variants of {step} would share a file name: {names}")
    for stale in work.glob("*.cu"):
        if stale.stem not in names:
            stale.unlink()
    for name, (_, text) in zip(names, variants):
        src = work / f"{name}.cu"
        if not src.is_file() or src.read_text() != text:
            src.write_text(text)
        (work / name).unlink(missing_ok=True)  # an old executable must not pass for a new build
    configure = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir)], capture_output=True, text=True)
    if configure.returncode != 0:
        raise SystemExit(f"sweep: cmake failed:\n{configure.stdout}{configure.stderr}")
    keep_going = {"Unix Makefiles": ["--", "-k"], "Ninja": ["--", "-k", "0"]}.get(generator, [])
    # A variant that does not compile is an answer, not an error: its status says why.
    subprocess.run(["cmake", "--build", str(build_dir), "--target", f"{step}-variants", "-j", str(jobs or os.cpu_count())]
                   + keep_going, capture_output=True, text=True)
    return [(work / name, _status(work / name, work / f"{name}.log")) for name in names]


def build_variant(build_dir: Path, step: str, label: str, source_text: str) -> tuple[Path, str]:
    """One variant of `step` (see build_variants): (executable, status)."""
    return build_variants(build_dir, step, [(label, source_text)], jobs=1)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", type=Path, help="CMake build directory (harness built)")
    ap.add_argument("--step", required=True, help="step directory name, e.g. 12_double_buffer")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2",
                    help="values to sweep for one tunable (repeat for more)")
    ap.add_argument("--sizes", default="2048,4096")
    ap.add_argument("--csv", type=Path, help="results file the timed rows are appended to")
    ap.add_argument("--build-only", action="store_true",
                    help="compile the variants and print 'EXE <path>' for each; time nothing")
    ap.add_argument("--reps", default="20", help="timed repetitions per size (the harness's --reps)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--max-spill", type=int, default=None, metavar="BYTES",
                    help="list variants that spill more than BYTES to local memory, but do not time them")
    ap.add_argument("--check-sizes", default=project.shapes("variant_check"),
                    help="shapes every variant must pass before it is timed (default: the set "
                         "variant_check of tests/shapes.txt)")
    args = ap.parse_args()
    if not args.csv and not args.build_only:
        ap.error("--csv is required unless --build-only")

    axes = []
    for item in args.set:
        name, _, values = item.partition("=")
        if not values:
            ap.error(f"--set {item}: expected NAME=V1,V2")
        axes.append([(name, v) for v in values.split(",")])
    combos = [dict(c) for c in itertools.product(*axes)]
    text = step_source(args.step).read_text()
    labels = [";".join(f"{k}={v}" for k, v in values.items()) for values in combos]
    results = build_variants(args.build, args.step, [(label, make_variant(text, values))
                                                    for label, values in zip(labels, combos)], args.jobs)
    built = [(label, exe, status) for label, (exe, status) in zip(labels, results)]
    for label, exe, status in built:  # timed one at a time: the GPU is measured alone
        print(f"{label:50s} {status}", flush=True)
        if not status.startswith("ok"):
            continue
        if args.build_only:
            print(f"EXE {exe}", flush=True)
            continue
        spilled = re.search(r"(\d+) bytes spilled", status)
        if args.max_spill is not None and (not spilled or int(spilled.group(1)) > args.max_spill):
            print(f"{'':50s} spills more than {args.max_spill} bytes: not timed", flush=True)
            continue
        check = subprocess.run([str(exe), "--check", "--sizes", args.check_sizes, "--beta", "0.5"],
                               capture_output=True, text=True)
        if check.returncode != 0:
            print(f"{'':50s} FAILED the check:\n{check.stdout}{check.stderr}", flush=True)
            continue
        run = subprocess.run([str(exe), "--sizes", args.sizes, "--reps", args.reps, "--csv", str(args.csv),
                              "--variant", label],
                             capture_output=True, text=True)
        print("\n".join(run.stdout.splitlines()[2:]) or run.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
