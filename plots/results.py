"""Results sets: one per results/<gpu-slug>/ directory, read from its CSV files.

    results/<gpu-slug>/<step>.csv           the steps as shipped (bench.sh)
    results/<gpu-slug>/tuning/<step>.csv    tuning sweeps (sweep.py)
    results/<gpu-slug>/controls/<name>.csv  context points that are not steps, e.g. cuBLAS
                                            with one TF32 pass: shown in the speed-against-
                                            accuracy plot only, never as a step or in a
                                            "% of cuBLAS" figure
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from plots.schema import Row, display_path, read_results_csv, warn

CONTROLS = ("cublas_tf32",)  # the control files read, by name (controls/<name>.csv)


def keep_last(rows: list[Row]) -> list[Row]:
    """Drops all but the last of the rows that share (step, variant, m, n, k)."""
    return list({(r.step, r.variant, r.m, r.n, r.k): r for r in rows}.values())


@dataclass
class GpuResults:
    slug: str  # the results/<gpu-slug> directory name, reused for docs/plots/<gpu-slug>
    rows: dict[tuple[str, int], Row]  # default-variant, square shapes, keyed (step, size)
    tuning: dict[str, list[Row]]  # tuning rows per step
    controls: dict[str, list[Row]] = field(default_factory=dict)  # control name -> rows

    @property
    def name(self) -> str:
        all_rows = [*self.rows.values(), *(r for rs in self.tuning.values() for r in rs)]
        return " / ".join(sorted({row.gpu for row in all_rows}))

    @property
    def steps(self) -> set[str]:
        return {step for step, _ in self.rows}

    @property
    def sizes(self) -> list[int]:
        return sorted({size for _, size in self.rows})

    def row(self, step: str, size: int) -> Row | None:
        return self.rows.get((step, size))

    def rows_of(self, step: str) -> list[Row]:
        return [self.rows[key] for key in sorted(self.rows) if key[0] == step]

    def cublas_gflops(self, size: int) -> float | None:
        """cuBLAS at one size: the median of the cuBLAS runs timed alongside every step."""
        values = [row.cublas_gflops for (_, s), row in self.rows.items()
                  if s == size and row.has_cublas]
        return statistics.median(values) if values else None


def _square_defaults(rows: list[Row]) -> list[Row]:
    return [row for row in keep_last(rows) if not row.variant and row.is_square]


def load_results(results_dir: Path) -> list[GpuResults]:
    if not results_dir.is_dir():
        warn(f"{display_path(results_dir)} does not exist; generating docs without results")
        return []
    results = []
    for gpu_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        main_files = sorted(gpu_dir.glob("*.csv"))
        tuning_files = sorted((gpu_dir / "tuning").glob("*.csv"))
        if not main_files and not tuning_files:
            continue
        main_rows = []
        for path in main_files:
            file_rows = read_results_csv(path)
            main_rows += file_rows
            if any(row.variant for row in file_rows):
                warn(f"{display_path(path)}: rows with a variant are ignored here "
                     "(tuning sweeps belong in tuning/)")
        # Only the default variant of square shapes goes into the plots and tables.
        rows = {(row.step, row.m): row for row in _square_defaults(main_rows)}
        tuning: dict[str, list[Row]] = {}
        for row in keep_last([row for path in tuning_files for row in read_results_csv(path)]):
            tuning.setdefault(row.step, []).append(row)
        controls = {}
        for name in CONTROLS:
            path = gpu_dir / "controls" / f"{name}.csv"
            if path.is_file():
                controls[name] = _square_defaults(read_results_csv(path))
        results.append(GpuResults(gpu_dir.name, rows, tuning, controls))
    return results
