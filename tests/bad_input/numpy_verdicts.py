#!/usr/bin/env python3
"""Does the corpus agree with numpy? Loads every .npy file of the corpus with np.load and
compares numpy's verdict with the case's kind. Needs numpy, so CTest does not run it; run it
by hand after changing the reader or the corpus:

    python3 tests/bad_input/numpy_verdicts.py WORK_DIR

An Accepted case's files must all load as 2-D C-order float32 arrays. A refused npy.* case
must have a file numpy refuses or reads as something else, unless it is listed in
HARNESS_RULES (a file numpy reads but the harness refuses, for the reason given there).
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

# Files numpy reads as a float32 matrix that the harness refuses, and why.
HARNESS_RULES = {
    "npy.shape_zero_rows": "no empty matrices (M, N, K >= 1)",
    "npy.shape_zero_cols": "no empty matrices",
    "npy.shape_minus_zero": "no empty matrices",
    "npy.shape_zeros": "no empty matrices",
    "npy.nan_at_1_2": "inputs must be finite",
    "npy.inf_at_0_1": "inputs must be finite",
    "npy.minus_inf": "inputs must be finite",
    "npy.signalling_nan": "inputs must be finite",
    "npy.all_nan": "inputs must be finite",
    "npy.b_inf": "inputs must be finite",
    "npy.c_nan": "inputs must be finite",
    "npy.duplicate_key": "Python syntax numpy never writes: a key given twice",
    "npy.backslash": "Python syntax numpy never writes: an escape in a string",
    "npy.shape_negative_rows": "no negative dimensions (np.load reads -1 as 'all the data')",
    "npy.shape_negative_cols": "no negative dimensions",
    "npy.data_long_1_byte": "no data past the shape's end (the shape or dtype is wrong)",
    "npy.data_long_1_float": "no data past the shape's end",
    "npy.data_float64": "no data past the shape's end (float64 data under a float32 header)",
    "npy.k_mismatch": "the shapes must fit together",
    "npy.c_mismatch": "the shapes must fit together",
    "npy.c_with_beta_0": "a command-line rule",
    "npy.loaded_c_over_2_31": "every matrix under 2^31 elements",
    "npy.loaded_m_over_limit": "M, N, K at most 1000000",
    "npy.loaded_ld_pad_over_2_31": "every matrix under 2^31 elements",
}


def numpy_reads(path):
    """None if np.load reads `path` as a 2-D C-order float32 array, else why not."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - any refusal counts
        return "%s: %s" % (type(e).__name__, str(e)[:60])
    if a.dtype != np.dtype("<f4"):
        return "dtype %s" % a.dtype.str
    if a.ndim != 2:
        return "%d dimensions" % a.ndim
    if not a.flags.c_contiguous or np.isfortran(a):
        return "Fortran order"
    return None


def files(case):
    """The .npy files a case loads, or None if one of them is not a regular file (a directory,
    a device, a FIFO, a missing file: not numpy's business)."""
    out = []
    for option in ("--load-a", "--load-b", "--load-c"):
        if option in case.args:
            path = case.args[case.args.index(option) + 1]
            if not os.path.isfile(path) or os.path.islink(path):
                return None
            out.append(path)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cases = corpus.build(os.path.abspath(sys.argv[1]))
    disagree = 0
    checked = 0
    for case in cases:
        paths = files(case)
        if not paths or case.stdin is not None:
            continue
        verdicts = {p: numpy_reads(p) for p in paths}
        if isinstance(case, corpus.Accepted):
            bad = {p: v for p, v in verdicts.items() if v}
            ok = not bad
            why = "; ".join("%s: %s" % (os.path.basename(p), v) for p, v in bad.items())
        elif case.name.startswith("npy."):
            if case.name in HARNESS_RULES:
                ok, why = True, "harness rule: " + HARNESS_RULES[case.name]
            else:
                refused = {p: v for p, v in verdicts.items() if v}
                ok = bool(refused)
                why = "; ".join("numpy: %s" % v for v in refused.values()) or "numpy reads every file"
        else:
            continue
        checked += 1
        disagree += not ok
        print("%s %-40s %s" % ("ok  " if ok else "DIFF", case.name, why))
    print("numpy_verdicts: numpy %s, %d cases checked, %d disagree" % (np.__version__, checked, disagree))
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
