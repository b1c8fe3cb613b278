#!/usr/bin/env python3
"""Where a kernel's warps wait, per SASS instruction, from Nsight Compute's sampling.

    ncu --kernel-name sgemm_kernel --launch-count 1 --section WarpStateStats --section SourceCounters \\
        -o rep build/bin/14_large_thread_tile --size 4096 --time-only --reps 1 --warmup 0 --no-cublas-timing
    ncu -i rep.ncu-rep --page source --csv --print-source sass > source.csv
    scripts/ncu_stalls.py source.csv [--top 6]

Prints each stall reason's share of all warp samples (a sample is one warp's state at one
moment: "selected" is issuing, "not_selected" is ready but another warp issued), then, for
the reasons that matter, the instructions that carry most of its samples, with their
position in the kernel (the row of the SASS listing) and opcode.
"""
import argparse
import csv
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source_csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=6, help="instructions listed per stall reason")
    args = ap.parse_args()
    with open(args.source_csv, newline="") as file:
        rows = [row for row in csv.reader(file)]
    try:
        start = next(i for i, row in enumerate(rows) if row and row[0] == "Address")
    except StopIteration:
        sys.exit(f"ncu_stalls: {args.source_csv}: no 'Address' header (not a --page source --csv export?)")
    header, body = rows[start], [row for row in rows[start + 1:] if len(row) == len(rows[start])]
    column = {name: i for i, name in enumerate(header)}
    reasons = [name for name in header if name.startswith("stall_") and "(Not Issued)" not in name]
    if not reasons or not body:
        sys.exit(f"ncu_stalls: {args.source_csv}: no stall columns (profile with --section WarpStateStats "
                 "--section SourceCounters)")

    def count(row: list[str], reason: str) -> int:
        return int(row[column[reason]] or 0)

    totals = {reason: sum(count(row, reason) for row in body) for reason in reasons}
    samples = sum(totals.values())
    print(f"{samples} warp samples over {len(body)} SASS instructions")
    print(f"{'reason':<24}{'samples':>10}{'share':>8}")
    for reason, total in sorted(totals.items(), key=lambda item: -item[1]):
        if total:
            print(f"{reason[6:]:<24}{total:>10}{100 * total / samples:>7.1f}%")
    for reason, total in sorted(totals.items(), key=lambda item: -item[1]):
        if reason in ("stall_selected", "stall_not_selected") or total < samples / 100:
            continue  # issuing, or under 1% of the samples
        print(f"\n{reason[6:]}: the {args.top} instructions with most samples (row, samples, share of the reason)")
        top = [i for i in sorted(range(len(body)), key=lambda i: -count(body[i], reason))[:args.top]
               if count(body[i], reason)]
        for i in sorted(top):
            n = count(body[i], reason)
            print(f"  {i:>6} {n:>8} {100 * n / total:>5.1f}%  {body[i][column['Source']].strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
