#!/usr/bin/env python3
"""Every step fits every GPU class it claims, as built with the class's tuning (no GPU needed).

For each class of tunings/classes.txt, each step 01-22 built for the class's architecture with
its tuning (CMake's classes/CLASS/NN_slug; sm_90, which has no tuning file, is the main build's
bin/NN_slug, the sm_90a steps 23 onward included) is asked `--requirements`; its shared memory per block must be at
most the class's limit, and the binary must say it was built for the class's architecture with
the class's tuning. Prints one table; exits 1 on any step that does not fit.

    tests/classes_fit.py BUILD_DIR
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def classes():
    for line in (ROOT / "tunings" / "classes.txt").read_text().splitlines():
        if line.startswith("sm_"):
            name, arch, limit, _sms, _emulated, gpus = line.split(None, 5)
            yield name, arch, int(limit), gpus


def requirements(exe: Path) -> dict:
    out = subprocess.run([str(exe), "--requirements"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"{exe} --requirements: exit {out.returncode}: {out.stderr.strip()}")
    m = re.fullmatch(r"(\S+) shared_bytes=(\d+) compute_capability=(\d+) arch=(.*?) tuning=(.*)", out.stdout.strip())
    if not m:
        raise RuntimeError(f"{exe} --requirements: unexpected output {out.stdout!r}")
    return {"step": m[1], "shared": int(m[2]), "cc": int(m[3]), "arch": m[4].split(), "tuning": m[5]}


def main() -> int:
    build = Path(sys.argv[1])
    steps = sorted(p.name for p in (ROOT / "steps").iterdir() if re.match(r"\d\d_", p.name) and p.name != "00_cublas")
    failures, rows = [], []
    for name, arch, limit, gpus in classes():
        tuned = (ROOT / "tunings" / f"{name}.txt").is_file()
        for step in steps:
            if int(step[:2]) >= 23 and tuned:
                continue  # sm_90a code: it runs on sm_90 alone (and says so elsewhere)
            exe = build / ("classes/" + name if tuned else "bin") / step
            if not exe.is_file():
                failures.append(f"{name} {step}: {exe} was not built")
                continue
            need = requirements(exe)
            problems = []
            if need["shared"] > limit:
                problems.append(f"needs {need['shared']} B of shared memory per block, the class allows {limit}")
            if tuned and need["arch"] != [arch]:
                problems.append(f"built for {need['arch']}, not the class's {arch}")
            if tuned and need["tuning"] != name:
                problems.append(f"built with tuning {need['tuning']!r}, not {name!r}")
            if need["cc"] and str(need["cc"]) != arch:
                problems.append(f"runs on compute capability {need['cc']} alone")
            rows.append((name, step, need["shared"], limit, need["tuning"], "ok" if not problems else "NO"))
            failures += [f"{name} {step}: {p}" for p in problems]
    print(f"{'class':6} {'step':26} {'shared B':>9} {'limit B':>8}  tuning")
    for name, step, shared, limit, tuning, ok in rows:
        print(f"{name:6} {step:26} {shared:9d} {limit:8d}  {tuning:10} {ok}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
