#!/usr/bin/env python3
"""Turns Nsight Compute `--csv` outputs into one table with a row per profiled kernel run.

    scripts/ncu_collect.py --out ncu_4096.csv --metrics profile 05_thread_tiling=logs/ncu.05_thread_tiling.csv ...
    scripts/ncu_collect.py --out compare_4096.csv --keys step,variant --metrics profile,compare \\
        "07_transpose|05 at 07's tile=logs/compare.1.csv" ...
    scripts/ncu_collect.py --list profile,compare     the metric names, comma separated (for ncu)

Each argument is KEY=FILE; KEY holds one field per --keys column, separated by '|'. The table
has the key columns, then every metric found, sorted by name (values without thousands
separators). This is the format plots/ reads from results/<gpu>/profiles/. The metric names
are scripts/ncu_metrics.txt's; with --metrics SETS, a run that lacks one of them is an error.
"""
import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import project  # noqa: E402


def read_ncu(path: str) -> dict[str, str]:
    """metric -> value of the one kernel launch in an `ncu --csv` output (banner lines skipped)."""
    with open(path, newline="") as file:
        lines = [line for line in file if line.startswith('"')]
    metrics = {}
    for row in csv.DictReader(lines):
        metrics[row["Metric Name"]] = row["Metric Value"].replace(",", "")
    if not metrics:
        sys.exit(f"ncu_collect: {path}: no metrics (did ncu fail? see the file)")
    return metrics


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--keys", default="step", help="key columns, comma separated (default: step)")
    ap.add_argument("--metrics", metavar="SETS", help="sets of scripts/ncu_metrics.txt every run must have")
    ap.add_argument("--list", metavar="SETS", help="print the metric names of these sets, comma separated")
    ap.add_argument("runs", nargs="*", metavar="KEY=FILE")
    args = ap.parse_args()
    if args.list:
        print(",".join(project.ncu_metrics(*args.list.split(","))))
        return 0
    if not args.out or not args.runs:
        ap.error("--out and at least one KEY=FILE are required")
    expected = project.ncu_metrics(*args.metrics.split(",")) if args.metrics else []
    keys = args.keys.split(",")
    rows = []
    for run in args.runs:
        key, sep, path = run.rpartition("=")
        fields = key.split("|")
        if not sep or len(fields) != len(keys):
            ap.error(f"{run}: expected {'|'.join(keys)}=FILE")
        metrics = read_ncu(path)
        missing = [name for name in expected if name not in metrics]
        if missing:
            sys.exit(f"ncu_collect: {path}: no {', '.join(missing)}")
        rows.append((fields, metrics))
    names = sorted({name for _, metrics in rows for name in metrics})
    with open(args.out, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(keys + names)
        for fields, metrics in rows:
            writer.writerow(fields + [metrics.get(name, "") for name in names])
    return 0


if __name__ == "__main__":
    sys.exit(main())
