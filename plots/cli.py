"""Plots and markdown tables for sgemm-steps, generated from the harness's results CSVs.

Run from the repository root (scripts/regenerate.sh sets up the pinned virtualenv first):

    python3 -m plots [--results DIR] [--repo DIR] [--check]

Inputs:  results/<gpu-slug>/<step>.csv, .../tuning/<step>.csv, .../controls/cublas_tf32.csv;
         optionally .../profiles/ncu_4096.csv, sass_stats.txt and compare_4096.csv, and
         .../survey/<step>.csv (the shape survey, its kinds from tests/shapes.txt);
         each step's .cu file (its tunables) and docs/tunables.md (their meanings)
Outputs: docs/plots/<gpu-slug>/*.png (and .svg for the journey and the headline plot);
         docs/tuning/<step>.md;
         the marked sections of README.md, docs/*.md and steps/*/README.md.

Every output is deterministic, so `--check` can tell whether the committed docs are stale.
Exit codes: 0 ok, 1 --check found stale files, 2 bad input (reported as `path:line: problem`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plots.schema import InputError, display_path, warn

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = Path(__file__).resolve().parent / "requirements.txt"


def _pinned_matplotlib() -> str | None:
    for line in REQUIREMENTS.read_text().splitlines():
        if line.startswith("matplotlib=="):
            return line.split("==", 1)[1].strip()
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m plots", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=REPO_ROOT,
                        help="repository root to write docs into (default: %(default)s)")
    parser.add_argument("--results", type=Path,
                        help="results directory (default: REPO/results)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if any generated file would change")
    args = parser.parse_args(argv)

    try:
        import matplotlib

        from plots.generate import generate, stale_files
    except ImportError as exc:
        print(f"error: {exc}; run scripts/regenerate.sh, which installs "
              "plots/requirements.txt into .venv-plots", file=sys.stderr)
        return 2
    pinned = _pinned_matplotlib()
    if matplotlib.__version__ != pinned:
        warn(f"matplotlib {matplotlib.__version__} is not the pinned {pinned}; plots may "
             "differ from the committed ones (scripts/regenerate.sh uses the pinned version)")

    # A fresh checkout has no results/ yet, but a --results that does not exist is a typo that
    # would otherwise replace every table with "no results yet".
    if args.results and not args.results.is_dir():
        print(f"error: results directory {args.results} not found", file=sys.stderr)
        return 2
    try:
        outputs = generate(args.repo, args.results or args.repo / "results")
        stale = stale_files(outputs)
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{exc.filename or 'error'}: {exc.strerror or exc}", file=sys.stderr)
        return 2

    if args.check:
        for path in stale:
            print(f"out of date: {display_path(path)}")
        if stale:
            print("run scripts/regenerate.sh to update them", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(outputs[path])
        print(f"wrote {display_path(path)}")
    print(f"{len(stale)} file(s) updated, {len(outputs) - len(stale)} already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
