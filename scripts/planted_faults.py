#!/usr/bin/env python3
"""Plants known bugs in copies of steps and checks that verification rejects every one.

A harness that passes a wrong kernel proves nothing, so this builds mutants (a line or two
changed in a step's file), runs them in check mode and expects each to fail: exit code 1
(verification failed) or 4 (a CUDA error, e.g. a misaligned address). Run after CMake has built the harness:

    scripts/planted_faults.py --build build
"""
import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import project  # noqa: E402
from sweep import build_variant, step_source  # noqa: E402

# (name, step, text in the step, replacement, the betas at which it is a fault); the text and
# its replacement may be lists, for a fault that needs several edits.
FAULTS = [
    ("off-by-one edge: writes one column past N", "02_refactored",
     "if (row >= p.M || col >= p.N) return;", "if (row >= p.M || col > p.N) return;", ("0", "0.5")),
    ("missing element: the last element is never written", "02_refactored",
     "if (row >= p.M || col >= p.N) return;",
     "if (row >= p.M || col >= p.N || (row == p.M - 1 && col == p.N - 1)) return;", ("0", "0.5")),
    ("NaN: one element is NaN", "02_refactored",
     "store_c(p, row, col, acc);", "store_c(p, row, col, row == 0 && col == 0 ? __int_as_float(0x7fc00000) : acc);", ("0", "0.5")),
    ("beta == 0 reads C: NaN in C leaks", "02_refactored",
     "c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;", "c = p.alpha * acc + p.beta * c;",
     ("0",)),  # with beta != 0 reading C is right
    # The seed's "+1" padding with 8-byte copies, with the static_asserts that forbid it taken
    # out: the copies' shared destinations are misaligned, and the GPU faults (exit code 4).
    ("misaligned vector copies: B_PAD = 1 with 8-byte cp.async", "10_vectorized_async_copy",
     ["constexpr int COPY_VECTOR = 4;", "constexpr int B_PAD = 0;", "static_assert(BN % COPY_VECTOR == 0 &&",
      "static_assert(A_PAD % 4 == 0 && B_PAD % 4 == 0 &&"],
     ["constexpr int COPY_VECTOR = 2;", "constexpr int B_PAD = 1;", "static_assert(true ||",
      "static_assert(A_PAD % 4 == 0 &&"], ("0.5",)),
    # Step 09 copies a tile without zero-fill only when it lies wholly inside A and B; forget
    # the k edge and the last, partial k tile reads past the ends of A's rows and of B.
    ("zero-fill skipped on the last, partial k tile", "09_async_loads",
     "block_col + BN <= p.N && k0 + TUNE_SPLIT <= p.K)", "block_col + BN <= p.N)", ("0", "0.5")),
    ("partial k tile dropped", "12_double_buffer",
     "const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);", "const int k_tiles = p.K / TUNE_SPLIT;", ("0", "0.5")),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", type=Path)
    args = ap.parse_args()
    missed = 0
    runs = 0
    for n, (name, step, old, new, betas) in enumerate(FAULTS):
        text = step_source(step).read_text()
        olds, news = ([old], [new]) if isinstance(old, str) else (old, new)
        for o, w in zip(olds, news):
            if text.count(o) != 1:
                print(f"planted_faults: '{o.strip()}' not found once in {step}; update the fault list")
                return 2
            text = text.replace(o, w)
        exe, status = build_variant(args.build, step, f"fault{n}", text)
        if not status.startswith("ok"):
            print(f"planted_faults: {name}: {status}")
            return 2
        for beta in betas:
            runs += 1
            r = subprocess.run([str(exe), "--check", "--sizes", project.shapes("faults"),
                                "--beta", beta], capture_output=True, text=True)
            caught = r.returncode in (1, 4)  # wrong result, or a CUDA error such as a misaligned address
            missed += not caught
            first = next((l.strip() for l in (r.stdout + r.stderr).splitlines()
                          if "FAILED" in l or "(row" in l or "error" in l), "")
            print(f"{'caught' if caught else 'MISSED'}  {name} [{step}, beta {beta}] -> exit {r.returncode}: {first}")
    print(f"planted_faults: {runs - missed} caught, {missed} missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
