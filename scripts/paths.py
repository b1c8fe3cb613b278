#!/usr/bin/env python3
"""Which path step 20 (whole tiles, stream-K, split-K, the short last piece, pairs) takes for
a shape on a GPU of S SMs: a port of its launch_kernels' choices (choose_splits with the
partial sums' cost, piece_length, stream_k_tiles, the pairs' condition), with the H100's
clock, bandwidth and L2 by default. For choosing the suite's shapes per SM count
(tests/shapes.txt, path.*) and for a page's pictures; the step itself reports the path it
took (--check prints 'path:'), and the suite's path.* sets check the two agree.

    scripts/paths.py --sms 88,132 1024 2048 1024x1024x8192 256x256x16384
"""
import argparse
import sys

BM, BN, TUNE_SPLIT = 128, 256, 32
MAX_SPLITS, MIN_SPLIT_K_TILES, MIN_GAIN_PERCENT, TAIL_OVERHEAD_K_TILES = 64, 4, 10, 0
L2_BANDWIDTH_RATIO = 4
H100 = {"lanes": 128, "clock_mhz": 1980, "dram_bytes_per_us": 2 * 2619e6 * 640 / 1e6, "l2_bytes": 50 * 2**20}


def cdiv(a, b):
    return -(-a // b)


def path(m, n, k, sms, gpu=H100, pair_slots=None):
    """(path name, count) as step 20 would report them (sgemm::took_path)."""
    slots = sms  # one block of the split kernel per SM: its registers allow no more
    pair_slots = slots if pair_slots is None else pair_slots
    tiles = cdiv(m, BM) * cdiv(n, BN)
    k_tiles = cdiv(k, TUNE_SPLIT)
    tile_us = BM * BN * TUNE_SPLIT / (gpu["lanes"] * gpu["clock_mhz"])

    def cost(splits):
        per = cdiv(k_tiles, splits)
        pieces = cdiv(k_tiles, per)
        c = cdiv(tiles * pieces, slots) * per
        if pieces > 1:  # partial_sums_tile_times
            size = pieces * m * n * 4.0
            in_l2 = min(size, 0.5 * gpu["l2_bytes"])
            c += 2.0 * (in_l2 / L2_BANDWIDTH_RATIO + size - in_l2) / gpu["dram_bytes_per_us"] / tile_us
        return c

    most = min(MAX_SPLITS, max(1, k_tiles // MIN_SPLIT_K_TILES))
    chosen = 1
    for s in range(2, most + 1):
        if cost(s) * (100 + MIN_GAIN_PERCENT) <= cost(chosen) * 100:
            chosen = s
    # piece_length
    length = cdiv(k_tiles, chosen)
    pieces = cdiv(k_tiles, length)
    idle = slots - tiles * pieces
    best = length
    if pieces > 1 and idle > 0:
        best_time = length
        shorter = length - 1
        while shorter >= MIN_SPLIT_K_TILES and k_tiles // shorter == pieces:
            tail = k_tiles - pieces * shorter
            if not (0 < tail < MIN_SPLIT_K_TILES):
                turns = 0 if tail == 0 else cdiv(tiles, idle)
                t = max(shorter, turns * (tail + TAIL_OVERHEAD_K_TILES))
                if t < best_time:
                    best, best_time = shorter, t
            shorter -= 1
    splits = cdiv(k_tiles, best)
    if splits == 1:
        if tiles > slots and tiles % slots != 0:
            sk = tiles % slots
            if sk * k_tiles >= slots:
                return "stream-K", sk
        return "whole-tiles", 1
    blocks = tiles * splits
    if splits % 2 == 0 and best == cdiv(k_tiles, chosen) and pair_slots > 0 and (pair_slots == slots or blocks <= pair_slots):
        return "split-K-pairs", splits
    if best < cdiv(k_tiles, chosen):
        return "split-K-short-last-piece", splits
    return "split-K", splits


def parse(text):
    d = [int(x) for x in text.split("x")]
    return d * 3 if len(d) == 1 else d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sms", default="88,112,128,132")
    ap.add_argument("shapes", nargs="+")
    a = ap.parse_args()
    sms = [int(s) for s in a.sms.split(",")]
    print(f"{'shape':>20} " + " ".join(f"{s:>28}" for s in sms))
    for text in a.shapes:
        m, n, k = parse(text)
        cells = [f"{p} ({c})" for p, c in (path(m, n, k, s) for s in sms)]
        print(f"{text:>20} " + " ".join(f"{c:>28}" for c in cells))


if __name__ == "__main__":
    sys.exit(main())
