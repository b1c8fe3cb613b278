"""Profiles (results/<gpu-slug>/profiles/): Nsight Compute metrics and static SASS counts.

    ncu_4096.csv      step,<metric>,<metric>...          one row per step
    compare_4096.csv  step,variant,<metric>,<metric>...  the columns of a page's comparison
    sass_stats.txt    STEP NAME COUNT NAME COUNT ...     static instruction counts

Every figure the pages show is defined here once, with its unit; docs/glossary.md's
profiler-figures block is generated from FIGURES (plots/profile_tables.py).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from plots.markdown import NO_VALUE
from plots.results import GpuResults
from plots.schema import InputError, finite_float, parse_int

NCU_FILE = "ncu_4096.csv"
SASS_FILE = "sass_stats.txt"
COMPARE_FILE = "compare_4096.csv"
FFMA_SHARE = "ffma-share"  # derived: FFMA thread instructions / 32 / warp instructions


def _count(value: float) -> str:
    return f"{round(value):,}"


def _pct(value: float) -> str:
    return f"{value:,.1f}%"


def _mb(value: float) -> str:
    return f"{value / 1e6:,.1f}"


def _cycles(value: float) -> str:
    return f"{value:,.1f}"


@dataclass(frozen=True)
class Metric:
    label: str  # as shown in the tables
    metric: str  # a column of the profile CSVs (an Nsight Compute metric) or FFMA_SHARE
    fmt: Callable[[float], str]
    unit: str
    meaning: str


_STALL = "smsp__average_warp_latency_issue_stalled_{}.ratio"
_STALL_MEANINGS = {
    "barrier": "waiting at `__syncthreads()` for the other warps of the block",
    "long_scoreboard": "waiting for the result of a global (L1TEX) load",
    "short_scoreboard": "waiting for the result of a shared-memory load (or another MIO "
                        "operation)",
    "mio_throttle": "the queue of shared-memory (MIO) instructions was full",
    "dispatch_stall": "the dispatcher could not issue the selected instruction",
    "wait": "a fixed-latency dependency (e.g. an FFMA result needed a few cycles later)",
    "math_pipe_throttle": "the math pipe the instruction needs was busy",
    "not_selected": "ready, but the scheduler issued another warp's instruction",
    "lg_throttle": "the queue of local/global memory instructions (the copies) was full",
}
STALL_UNIT = "cycles / warp"


def _stall(name: str) -> Metric:
    return Metric(f"{name} stall ({STALL_UNIT})", _STALL.format(name), _cycles, STALL_UNIT,
                  f"{_STALL_MEANINGS[name]}. The cycles all warps of the launch spent in this "
                  "state, divided by the number of warps: the average time one warp spent "
                  "in it over its life")


FIGURES = (
    Metric("registers / thread", "launch__registers_per_thread", _count, "registers",
           "registers the compiler allocated to each thread"),
    Metric("blocks / SM limited by registers", "launch__occupancy_limit_registers", _count,
           "blocks", "how many blocks fit on one SM by their registers alone"),
    Metric("warps active", "sm__warps_active.avg.pct_of_peak_sustained_active", _pct,
           "% of the SM's maximum warps", "average resident warps per active cycle"),
    Metric("FMA pipe active", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
           _pct, "% of active cycles", "cycles in which the FMA pipe was busy: the share of "
           "the FP32 peak that the kernel reaches while the SM runs"),
    Metric("tensor pipe active", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
           _pct, "% of active cycles", "cycles in which the tensor-core pipe was busy (mma.sync "
           "and wgmma alike): the share of the tensor cores' peak that the kernel reaches while "
           "the SM runs"),
    Metric("issue slots busy", "sm__issue_active.avg.pct_of_peak_sustained_active", _pct,
           "% of active cycles", "cycles in which a scheduler issued an instruction, of one "
           "per scheduler per cycle"),
    Metric("warp instructions executed", "smsp__inst_executed.sum", _count,
           "warp instructions", "instructions executed, counted once per warp"),
    Metric("FFMA share of instructions", FFMA_SHARE, _pct, "% of warp instructions",
           "FFMA thread instructions / 32 over warp instructions executed: how much of the "
           "issued work is the multiply-add itself"),
    Metric("shared-load wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
           _count, "wavefronts", "passes of the shared-memory pipeline for all shared loads "
           "(one pass serves up to 128 bytes; bank conflicts add passes)"),
    Metric("shared-store wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
           _count, "wavefronts", "the same for shared stores"),
    Metric("shared bank conflicts, loads",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", _count, "wavefronts",
           "extra passes that shared loads needed because of bank conflicts"),
    Metric("shared bank conflicts, stores",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", _count, "wavefronts",
           "extra passes that shared stores needed because of bank conflicts"),
    Metric("L2 hit rate", "lts__t_sector_hit_rate.pct", _pct, "% of sector lookups",
           "L2 lookups that found their 32-byte sector in L2"),
    Metric("DRAM read (MB)", "dram__bytes_read.sum", _mb, "MB (10^6 bytes)",
           "bytes read from device memory"),
    *(_stall(name) for name in _STALL_MEANINGS),
)
_BY_LABEL = {figure.label: figure for figure in FIGURES}


def figures(*labels: str) -> tuple[Metric, ...]:
    return tuple(_BY_LABEL[label] for label in labels)


def _stalls(*names: str) -> tuple[str, ...]:
    return tuple(f"{name} stall ({STALL_UNIT})" for name in names)


# The rows of a step page's profile table (profiles/ncu_4096.csv).
NCU_METRICS = figures(
    "registers / thread", "blocks / SM limited by registers", "warps active",
    "FMA pipe active", "tensor pipe active", "issue slots busy", "warp instructions executed",
    "FFMA share of instructions", "shared-load wavefronts", "shared bank conflicts, loads",
    "shared bank conflicts, stores", "L2 hit rate", "DRAM read (MB)",
    *_stalls("barrier", "long_scoreboard", "mio_throttle", "short_scoreboard", "wait",
             "math_pipe_throttle"))
# The rows of a page's comparison table (profiles/compare_4096.csv); a metric that no column
# has is left out.
COMPARE_METRICS = figures(
    "registers / thread", "FMA pipe active", "issue slots busy", "warp instructions executed",
    "shared-load wavefronts", "shared-store wavefronts", "L2 hit rate", "DRAM read (MB)",
    *_stalls("short_scoreboard", "long_scoreboard", "barrier", "mio_throttle",
             "dispatch_stall", "wait", "math_pipe_throttle", "not_selected", "lg_throttle"))
# The columns of the cross-step table in docs/overview.md, and their short headers.
SUMMARY_METRICS = ("registers / thread", "warps active", "FMA pipe active",
                   "warp instructions executed", "FFMA share of instructions",
                   "shared bank conflicts, loads", "L2 hit rate", "DRAM read (MB)")
SUMMARY_HEADERS = ("regs / thread", "warps active", "FMA pipe active", "warp instructions",
                   "FFMA share", "smem ld bank conflicts", "L2 hit rate", "DRAM read (MB)")


@dataclass
class GpuProfiles:
    slug: str
    ncu: dict[str, dict[str, float]]  # step -> metric -> value
    sass: dict[str, list[tuple[str, int]]]  # step -> (instruction, static count), file order
    name: str = ""
    # page step -> [(column label, metric -> value)], in file order
    compare: dict[str, list[tuple[str, dict[str, float]]]] = field(default_factory=dict)

    def ncu_cells(self, step: str) -> dict[str, str] | None:
        """Formatted values by label; None if the step has no ncu row."""
        metrics = self.ncu.get(step)
        if metrics is None:
            return None
        values = with_ffma_share(metrics)
        return {figure.label: figure.fmt(values[figure.metric]) if figure.metric in values
                else NO_VALUE for figure in NCU_METRICS}


def with_ffma_share(metrics: dict[str, float]) -> dict[str, float]:
    metrics = dict(metrics)
    ffma, insts = (metrics.get("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
                   metrics.get("smsp__inst_executed.sum"))
    if ffma is not None and insts:
        metrics[FFMA_SHARE] = 100 * ffma / 32 / insts
    return metrics


def _read_metric_rows(path: Path, keys: tuple[str, ...]
                      ) -> list[tuple[tuple[str, ...], dict[str, float]]]:
    """Rows `KEY...,<metric>,<metric>...`: the key fields, then the metrics (an empty cell is a
    metric not collected)."""
    rows = []
    expected = ",".join(keys)
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            reader = csv.reader(file)
            try:
                header = next(reader, None)
                if (not header or tuple(header[:len(keys)]) != keys
                        or len(set(header)) != len(header)):
                    raise InputError(path, 1, f"bad header: expected {expected},<metric>,"
                                              "<metric>... with distinct names")
                for record in reader:
                    if not record:
                        continue
                    line = reader.line_num
                    if len(record) != len(header):
                        raise InputError(path, line,
                                         f"expected {len(header)} fields, got {len(record)}")
                    values = {}
                    for name, text in zip(header[len(keys):], record[len(keys):]):
                        if not text.strip():
                            continue
                        try:
                            values[name] = finite_float(text.replace(",", ""))
                        except ValueError as exc:
                            raise InputError(path, line, f"column '{name}': {exc}") from None
                    rows.append((tuple(_nonempty_field(path, line, record[i], key)
                                       for i, key in enumerate(keys)), values))
            except csv.Error as exc:
                raise InputError(path, reader.line_num, f"malformed CSV: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    return rows


def read_ncu_csv(path: Path) -> dict[str, dict[str, float]]:
    """step,<metric>,<metric>...: one row per step; an empty cell is a metric not collected."""
    return {key[0]: values for key, values in _read_metric_rows(path, ("step",))}


def read_compare_csv(path: Path) -> dict[str, list[tuple[str, dict[str, float]]]]:
    """step,variant,<metric>...: the columns of each step page's comparison table, in order."""
    table: dict[str, list[tuple[str, dict[str, float]]]] = {}
    for (step, variant), values in _read_metric_rows(path, ("step", "variant")):
        table.setdefault(step, []).append((variant, values))
    return table


def _nonempty_field(path: Path, line: int, text: str, column: str = "step") -> str:
    if not text.strip():
        raise InputError(path, line, f"column '{column}': must not be empty")
    return text.strip()


def read_sass_stats(path: Path) -> dict[str, list[tuple[str, int]]]:
    """Lines `STEP NAME COUNT NAME COUNT ...`; blank lines and # comments are skipped."""
    stats: dict[str, list[tuple[str, int]]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    for line_number, line in enumerate(lines, 1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        step, rest = tokens[0], tokens[1:]
        if not rest or len(rest) % 2:
            raise InputError(path, line_number,
                             "expected STEP followed by INSTRUCTION COUNT pairs")
        counts = []
        for name, text in zip(rest[::2], rest[1::2]):
            try:
                counts.append((name, parse_int(text)))
            except ValueError as exc:
                raise InputError(path, line_number, f"'{name}': {exc}") from None
        stats[step] = counts
    return stats


def load_profiles(results_dir: Path, gpus: list[GpuResults]) -> list[GpuProfiles]:
    if not results_dir.is_dir():
        return []
    names = {gpu.slug: gpu.name for gpu in gpus}
    profiles = []
    for gpu_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        ncu_path, sass_path = gpu_dir / "profiles" / NCU_FILE, gpu_dir / "profiles" / SASS_FILE
        compare_path = gpu_dir / "profiles" / COMPARE_FILE
        if not any(path.is_file() for path in (ncu_path, sass_path, compare_path)):
            continue
        profiles.append(GpuProfiles(
            gpu_dir.name,
            read_ncu_csv(ncu_path) if ncu_path.is_file() else {},
            read_sass_stats(sass_path) if sass_path.is_file() else {},
            names.get(gpu_dir.name) or gpu_dir.name,
            read_compare_csv(compare_path) if compare_path.is_file() else {}))
    return profiles
