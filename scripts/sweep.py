#!/usr/bin/env python3
"""Sweeps a step's tunables: builds one variant per combination and times each.

A step's tunables are its `constexpr int|bool NAME = VALUE;` lines. A variant is the step's
file with some of those values replaced; it is compiled against the already-built harness
(so run CMake first) and timed by the harness like any step, its rows labelled with
--variant NAME=VALUE;... so plots/ can build the step's tuning table. A combination that a
static_assert rejects is reported as invalid, not timed.

    scripts/sweep.py --build build --step 12_double_buffer \\
        --set THREAD_TILE_X=4,8 --set TUNE_SPLIT=8,16 --sizes 2048,4096 --csv tuning.csv
"""
import argparse
import concurrent.futures
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TUNABLE = r"^(constexpr\s+(?:int|bool)\s+{name}\s*=\s*)([^;]+)(;)"


def step_source(step: str) -> Path:
    files = sorted((ROOT / "steps" / step).glob("*.cu"))
    if len(files) != 1:
        sys.exit(f"sweep: expected one .cu file in steps/{step}, found {len(files)}")
    return files[0]


def make_variant(text: str, values: dict) -> str:
    for name, value in values.items():
        text, n = re.subn(TUNABLE.format(name=re.escape(name)), rf"\g<1>{value}\g<3>", text, count=1, flags=re.M)
        if n != 1:
            raise SystemExit(f"sweep: no tunable 'constexpr int|bool {name} = ...;' in the step")
    return text


def compile_variant(src: Path, exe: Path, step: str, build: Path, arch: str) -> str:
    cmd = ["nvcc", "-std=c++20", "-O3", "-lineinfo", f"-arch=sm_{arch}", "-Xptxas=-v",
           f"-I{ROOT / 'common'}", f"-I{build / 'common' / 'generated'}", f'-DSGEMM_STEP="{step}"',
           str(src), str(build / "common" / "libsgemm_harness.a"), str(build / "common" / "libsgemm_host.a"),
           "-lcublas", "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        errors = [l for l in r.stderr.splitlines() if "error" in l]
        return "invalid: " + (errors[0].split("error:")[-1].strip() if errors else "compile failed")
    regs = re.findall(r"Used (\d+) registers", r.stderr)
    spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
    return f"ok: {regs[-1] if regs else '?'} registers, {spills[-1] if spills else '?'} bytes spilled"


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
    ap.add_argument("--arch", default="90")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--max-spill", type=int, default=None, metavar="BYTES",
                    help="list variants that spill more than BYTES to local memory, but do not time them")
    ap.add_argument("--check-sizes", default="1x1x1,127x129x33,255x257x17",
                    help="shapes every variant must pass before it is timed")
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
    src = step_source(args.step)
    text = src.read_text()
    work = args.build / "variants" / args.step
    work.mkdir(parents=True, exist_ok=True)

    def build_one(values):
        label = ";".join(f"{k}={v}" for k, v in values.items())
        stem = re.sub(r"[^A-Za-z0-9]+", "_", label)
        vsrc, exe = work / f"{stem}.cu", work / stem
        vsrc.write_text(make_variant(text, values))
        return label, exe, compile_variant(vsrc, exe, args.step, args.build, args.arch)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        built = list(pool.map(build_one, combos))
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
