#!/usr/bin/env python3
"""scripts/tune.sh's work (see there). A variant is a combination of the values in
scripts/tune_space.txt; the combination the current build uses is one of them, so "before"
is measured in the same run as the others. A variant replaces it only when its geometric
mean of same-run ratios to cuBLAS beats it by more than MIN_GAIN; then the tuning names
the knobs that differ from the step's defaults."""
import argparse
import datetime as dt
import itertools
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import project  # noqa: E402
from stepdiff import knobs as file_knobs  # noqa: E402
from sweep import build_variants, make_variant, step_source  # noqa: E402

ROOT = project.ROOT
MIN_GAIN = 0.01  # a new value must beat the current one by 1%: repeated runs of one binary differ by less


def gpu_name() -> str:
    out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
    name = out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""
    if not name:
        sys.exit("tune.sh: no NVIDIA GPU found (nvidia-smi); tuning measures on the GPU present")
    return name


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def read_space() -> dict:
    space = {}
    for line in (ROOT / "scripts" / "tune_space.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        step, rest = fields[0], fields[1:]
        sizes = "2048,4096"
        if "--sizes" in rest:
            i = rest.index("--sizes")
            sizes, rest = rest[i + 1], rest[:i]
        space[step] = ([(k, v.split(",")) for k, v in (f.split("=", 1) for f in rest)], sizes)
    return space


def read_tuning(path: Path) -> dict:
    """step -> {knob: value} of a tuning file."""
    tuned = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if re.match(r"\d\d_", line):
                step, *pairs = line.split()
                tuned[step] = dict(p.split("=", 1) for p in pairs)
    return tuned


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def run(exe, args):
    return subprocess.run([str(exe), *args], capture_output=True, text=True)


def ratios(csv_path: Path, label: str) -> list[float]:
    import csv
    if not csv_path.is_file():
        return []
    with csv_path.open() as f:
        return [float(r["ratio_to_cublas"]) for r in csv.DictReader(f) if r["variant"] == label and r["verified"] == "1"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", default="", help="steps to tune (default: every step in scripts/tune_space.txt)")
    ap.add_argument("--budget", type=float, default=30, help="minutes; no new step is started after them")
    ap.add_argument("--build", default="build-tune", type=Path)
    ap.add_argument("--reps", default="20")
    a = ap.parse_args()
    start = time.monotonic()
    name = gpu_name()
    gpu = slug(name)
    tuning_path = ROOT / "tunings" / f"{gpu}.txt"
    space = read_space()
    steps = a.steps.split() or list(space)
    unknown = [s for s in steps if s not in space]
    if unknown:
        sys.exit(f"tune.sh: no search space for {' '.join(unknown)} in scripts/tune_space.txt")

    def configure_and_build(targets):
        for cmd in (["cmake", "-S", str(ROOT), "-B", str(a.build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DSGEMM_BUILD_TESTS=OFF", "-DSGEMM_TUNING="],
                    ["cmake", "--build", str(a.build), "-j", str(os.cpu_count() or 1), "--target", *targets]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"tune.sh: {' '.join(cmd[:2])} failed:\n{(done.stdout + done.stderr)[-3000:]}")

    print(f"tune.sh: {name}: {len(steps)} step(s), budget {a.budget:g} min; building", flush=True)
    configure_and_build(steps)
    tuned = read_tuning(tuning_path)
    out_dir = ROOT / "results" / gpu / "tuning"
    out_dir.mkdir(parents=True, exist_ok=True)
    summary, skipped = [], []
    for i, step in enumerate(steps, 1):
        minutes = (time.monotonic() - start) / 60
        if minutes > a.budget:
            skipped.append(step)
            continue
        axes, sizes = space[step]
        text = step_source(step).read_text()
        defaults = file_knobs(text.splitlines())
        current = {k: tuned.get(step, {}).get(k, defaults.get(k)) for k, _ in axes}
        combos = [dict(zip([k for k, _ in axes], values)) for values in itertools.product(*[v for _, v in axes])]
        if current not in combos:
            combos.insert(0, current)
        labels = [";".join(f"{k}={v}" for k, v in c.items()) for c in combos]
        print(f"[{i}/{len(steps)}] {step} ({minutes:.1f} min): {len(combos)} variants at {sizes}", flush=True)
        built = build_variants(a.build, step, [(label, make_variant(text, c)) for label, c in zip(labels, combos)])
        csv_path = out_dir / f"{step}.csv"
        csv_path.unlink(missing_ok=True)  # this GPU's tuning rows of the step: this run's
        scores = {}
        for label, (exe, status) in zip(labels, built):
            if not status.startswith("ok"):
                print(f"    {label:45s} {status}", flush=True)
                continue
            check = run(exe, ["--check", "--sizes", project.shapes("variant_check"), "--beta", "0.5"])
            if check.returncode == 3:
                print(f"    {label:45s} cannot run here: {check.stderr.strip()[:120]}", flush=True)
                continue
            if check.returncode != 0:
                print(f"    {label:45s} FAILED its check (not timed)", flush=True)
                continue
            timed = run(exe, ["--sizes", sizes, "--reps", a.reps, "--csv", str(csv_path), "--variant", label])
            got = ratios(csv_path, label)
            scores[label] = geomean(got) if timed.returncode == 0 and got else float("nan")
            print(f"    {label:45s} {scores[label]:.3f} of cuBLAS", flush=True)
        cur_label = labels[combos.index(current)]
        before = scores.get(cur_label, float("nan"))
        best = max((s, l) for l, s in scores.items() if not math.isnan(s)) if scores else (float("nan"), cur_label)
        chosen = best[1] if best[0] > before * (1 + MIN_GAIN) else cur_label
        values = combos[labels.index(chosen)]
        kept = {k: v for k, v in tuned.get(step, {}).items() if k not in values}
        diff = {**kept, **{k: v for k, v in values.items() if defaults.get(k) != v}}
        if diff:
            tuned[step] = diff
        else:
            tuned.pop(step, None)
        summary.append((step, cur_label, before, chosen, scores.get(chosen, float("nan"))))

    lines = [f"# Tuning for {name}, written by scripts/tune.sh on {dt.date.today().isoformat()}: each line a step,",
             "# then the knobs it changes from the step's defaults (the measured winners, each by more",
             f"# than {MIN_GAIN:.0%} over the values before; rows in results/{gpu}/tuning/). A step not listed keeps",
             "# its defaults."]
    lines += [f"{step} " + " ".join(f"{k}={v}" for k, v in sorted(tuned[step].items())) for step in sorted(tuned)]
    tuning_path.write_text("\n".join(lines) + "\n")
    print(f"tune.sh: wrote tunings/{gpu}.txt; rebuilding with it", flush=True)
    configure_and_build([s for s, *_ in summary])
    print(f"\n{'step':26} {'before':>7} {'after':>7}  knobs (before -> after)")
    for step, cur_label, before, chosen, _ in summary:
        sizes = space[step][1]
        after_csv = a.build / f"tune-after-{step}.csv"
        after_csv.unlink(missing_ok=True)
        run(a.build / "bin" / step, ["--sizes", sizes, "--reps", a.reps, "--csv", str(after_csv), "--variant", "after"])
        after = geomean(ratios(after_csv, "after"))
        change = cur_label if chosen == cur_label else f"{cur_label} -> {chosen}"
        print(f"{step:26} {before:7.3f} {after:7.3f}  {change}", flush=True)
    if skipped:
        print(f"tune.sh: the budget ran out before {' '.join(skipped)} (run again with --steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
