"""The results CSV: its columns, the parsing of every field, and errors in input files.

The column list is common/csv.cpp's `kColumns`; plots/tests/test_csv_columns.py keeps the two
in agreement. Files written before the harness measured accuracy lack the ACCURACY columns;
their rows read as "accuracy not measured" (None), like a --time-only row's empty fields.
Files written before the `inputs` column hold the default inputs alone (`inputs` "").
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import sys
from dataclasses import dataclass, fields
from pathlib import Path


class InputError(Exception):
    """A problem in an input file; the CLI prints it as `path:line: message` and exits 2."""

    def __init__(self, path: Path, line: int | None, message: str):
        where = f"{display_path(path)}:{line}" if line else display_path(path)
        super().__init__(f"{where}: {message}")


def display_path(path: Path) -> str:
    """Paths in messages: relative to the current directory when below it, else absolute."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class Row:
    """One CSV row. The field order is the CSV header order, which the harness writes exactly."""

    step: str
    variant: tuple[tuple[str, str], ...]  # (NAME, VALUE) pairs; empty for the step's defaults
    m: int
    n: int
    k: int
    alpha: float
    beta: float
    # What sets the inputs apart from the default uniform [-1, 1] ones, e.g. "exponents=-118,118"
    # or "specials" (common/cli.hpp, inputs_label); "" for the defaults and in older files.
    inputs: str
    reps: int
    ms_median: float
    ms_min: float
    gflops: float
    gflops_best: float
    cublas_ms_median: float
    cublas_gflops: float
    ratio_to_cublas: float
    max_err_over_bound: float
    # Accuracy against the FP64 reference, in units of u = 2^-24 (docs/methodology.md);
    # None: not measured (an empty field, or a file from before these columns existed).
    err_max_u: float | None
    err_rms_u: float | None
    cublas_err_max_u: float | None
    cublas_err_rms_u: float | None
    err_rms_vs_cublas: float | None  # the step's RMS error over cuBLAS SGEMM's, same inputs
    verified: bool
    gpu: str
    sm_count: int
    sm_clock_mhz: int
    driver: str
    runtime: str
    cublas: str
    arch: str
    build_type: str
    git_rev: str
    # The knobs' source ("defaults", a GPU's or a class's tuning); "" in files from before
    # tunings existed. device_sm_count > sm_count marks an emulation (--sms): never a result
    # of another GPU.
    tuning: str
    device_sm_count: int
    timestamp: dt.datetime

    @property
    def is_square(self) -> bool:
        return self.m == self.n == self.k

    @property
    def has_cublas(self) -> bool:
        """The harness writes zeros in the cublas_* columns when it did not time cuBLAS."""
        return self.cublas_ms_median > 0

    @property
    def has_accuracy(self) -> bool:
        return self.err_rms_u is not None

    @property
    def has_default_inputs(self) -> bool:
        """Uniform [-1, 1] inputs: the rows the tables and plots are made of."""
        return not self.inputs

    @property
    def is_emulation(self) -> bool:
        return self.sm_count < self.device_sm_count


HEADER = tuple(f.name for f in fields(Row))
ACCURACY = ("err_max_u", "err_rms_u", "cublas_err_max_u", "cublas_err_rms_u",
            "err_rms_vs_cublas")
TUNING = ("tuning", "device_sm_count")
INPUTS = ("inputs",)
PRE_INPUTS_HEADER = tuple(name for name in HEADER if name not in INPUTS)  # before --exponents
PRE_TUNING_HEADER = tuple(name for name in PRE_INPUTS_HEADER if name not in TUNING)  # before tunings
OLD_HEADER = tuple(name for name in PRE_TUNING_HEADER if name not in ACCURACY)  # before the accuracy


# Field parsers: each takes the raw text and returns the value or raises ValueError(reason).


def nonempty(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    return text


def parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected an integer, got {text!r}") from None


def _positive_int(text: str) -> int:
    value = parse_int(text)
    if value <= 0:
        raise ValueError(f"expected a positive integer, got {text!r}")
    return value


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None


def finite_float(text: str) -> float:
    value = _float(text)
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    value = finite_float(text)
    if value <= 0:
        raise ValueError(f"expected a positive number, got {text!r}")
    return value


def _optional_error(text: str) -> float | None:
    """An accuracy field: empty when not measured; never negative. NaN or inf (a kernel that
    wrote NaNs) is data, not a malformed file."""
    if not text.strip():
        return None
    value = _float(text)
    if value < 0:
        raise ValueError(f"expected an error >= 0 or an empty field, got {text!r}")
    return value


def _verified(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError(f"expected 0 or 1, got {text!r}")
    return text == "1"


def _variant(text: str) -> tuple[tuple[str, str], ...]:
    if not text:
        return ()
    pairs = []
    for item in text.split(";"):
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"expected NAME=VALUE;NAME=VALUE..., got {text!r}")
        pairs.append((name, value))
    return tuple(pairs)


def _timestamp(text: str) -> dt.datetime:
    try:
        stamp = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"expected an ISO 8601 timestamp, got {text!r}") from None
    # The harness writes UTC; a timestamp without an offset is taken to be UTC as well.
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.astimezone(dt.timezone.utc)


PARSERS = {
    "step": nonempty,
    "variant": _variant,
    "m": _positive_int,
    "n": _positive_int,
    "k": _positive_int,
    "alpha": finite_float,
    "beta": finite_float,
    "inputs": str,
    "reps": _positive_int,
    "ms_median": _positive_float,
    "ms_min": _positive_float,
    "gflops": finite_float,
    "gflops_best": finite_float,
    "cublas_ms_median": finite_float,
    "cublas_gflops": finite_float,
    "ratio_to_cublas": finite_float,
    # Shown nowhere; a NaN/inf here (a kernel that wrote NaNs) is data, not a malformed file.
    "max_err_over_bound": _float,
    **{name: _optional_error for name in ACCURACY},
    "verified": _verified,
    "gpu": nonempty,
    "sm_count": parse_int,
    "sm_clock_mhz": parse_int,
    "driver": str,
    "runtime": str,
    "cublas": str,
    "arch": str,
    "build_type": str,
    "git_rev": str,
    "tuning": str,
    "device_sm_count": parse_int,
    "timestamp": _timestamp,
}
assert tuple(PARSERS) == HEADER


def _check_header(path: Path, header: list[str]) -> tuple[str, ...]:
    """The accepted header that the file has; else an InputError naming the difference."""
    for accepted in (HEADER, PRE_INPUTS_HEADER, PRE_TUNING_HEADER, OLD_HEADER):
        if tuple(header) == accepted:
            return accepted
    # Compare with the older headers when the file has none of their newer columns.
    expected = (OLD_HEADER if not set(ACCURACY) & set(header) else
                PRE_TUNING_HEADER if not set(TUNING) & set(header) else
                PRE_INPUTS_HEADER if not set(INPUTS) & set(header) else HEADER)
    problems = []
    missing = [name for name in expected if name not in header]
    unexpected = [name for name in header if name not in expected]
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if missing:
        problems.append("missing column(s) " + ", ".join(missing))
    if unexpected:
        problems.append("unexpected column(s) " + ", ".join(unexpected))
    if duplicated:
        problems.append("duplicated column(s) " + ", ".join(duplicated))
    if not problems:
        problems.append("columns out of order, expected " + ",".join(expected))
    raise InputError(path, 1, "bad header: " + "; ".join(problems))


def read_results_csv(path: Path) -> list[Row]:
    """Parses and validates one results CSV, raising InputError on the first problem."""
    rows = []
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            reader = csv.reader(file)
            try:
                header = next(reader, None)
                if header is None:
                    raise InputError(path, 1, "empty file, expected the CSV header")
                columns = _check_header(path, header)
                for record in reader:
                    if not record:  # a blank line carries no data
                        continue
                    rows.append(_parse_record(path, reader.line_num, columns, record))
            except csv.Error as exc:
                raise InputError(path, reader.line_num, f"malformed CSV: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    return rows


def _parse_record(path: Path, line: int, columns: tuple[str, ...], record: list[str]) -> Row:
    if len(record) != len(columns):
        raise InputError(path, line, f"expected {len(columns)} fields, got {len(record)}")
    values: dict[str, object] = dict.fromkeys(ACCURACY)  # absent columns: not measured
    values["tuning"] = ""
    values["inputs"] = ""  # before the column: the default inputs
    for name, text in zip(columns, record):
        try:
            values[name] = PARSERS[name](text)
        except ValueError as exc:
            raise InputError(path, line, f"column '{name}': {exc}") from None
    values.setdefault("device_sm_count", values["sm_count"])  # before --sms: all of them
    return Row(**values)
