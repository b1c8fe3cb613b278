#!/usr/bin/env python3
"""Turns Nsight Compute `--csv` outputs into one table with a row per profiled kernel run.

    scripts/ncu_collect.py --out ncu_4096.csv 05_thread_tiling=logs/ncu.05_thread_tiling.csv ...
    scripts/ncu_collect.py --out compare_4096.csv --keys step,variant \\
        "07_transpose|05 at 07's tile=logs/compare.1.csv" ...

Each argument is KEY=FILE; KEY holds one field per --keys column, separated by '|'. The table
has the key columns, then every metric found, sorted by name (values without thousands
separators). This is the format plots/ reads from results/<gpu>/profiles/.
"""
import argparse
import csv
import sys


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
    ap.add_argument("--out", required=True)
    ap.add_argument("--keys", default="step", help="key columns, comma separated (default: step)")
    ap.add_argument("runs", nargs="+", metavar="KEY=FILE")
    args = ap.parse_args()
    keys = args.keys.split(",")
    rows = []
    for run in args.runs:
        key, sep, path = run.rpartition("=")
        fields = key.split("|")
        if not sep or len(fields) != len(keys):
            ap.error(f"{run}: expected {'|'.join(keys)}=FILE")
        rows.append((fields, read_ncu(path)))
    names = sorted({name for _, metrics in rows for name in metrics})
    with open(args.out, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(keys + names)
        for fields, metrics in rows:
            writer.writerow(fields + [metrics.get(name, "") for name in names])
    return 0


if __name__ == "__main__":
    sys.exit(main())
