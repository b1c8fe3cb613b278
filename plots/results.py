"""Results sets: one per results/<gpu-slug>/ directory, read from its CSV files.

    results/<gpu-slug>/<step>.csv           the steps as shipped (bench.sh)
    results/<gpu-slug>/tuning/<step>.csv    tuning rows (scripts/tune.sh)
    results/<gpu-slug>/sweeps/<step>.csv    earlier sweeps (sweep.py) that the pages cite
    results/<gpu-slug>/controls/<name>.csv  context points that are not steps, e.g. cuBLAS
                                            with one TF32 pass: shown in the speed-against-
                                            accuracy plot and (divided by 3, as the 3xTF32
                                            ceiling) in the journey plot, never as a step
                                            or in a "% of cuBLAS" figure
    results/<gpu-slug>/survey/<step>.csv    the shape survey: read by plots/survey.py, never
                                            here (the *.csv above are the folder's own files)
    results/<gpu-slug>/inputs/<class>/<step>.csv   rows on tiny, huge or subnormal inputs:
                                            read by plots/inputs.py, never here

A row with an `inputs` label (from an --exponents, --specials or --ld-pad run, or on loaded
files) is never a bench row: every loader here skips it, with a warning.
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
    # default-variant, non-square shapes (e.g. 1024x1024x8192), keyed (step, (m, n, k)): the
    # `shapes` tables, the journey and the ratio heat map show them, never the square tables
    shapes: dict[tuple[str, tuple[int, int, int]], Row] = field(default_factory=dict)
    sweeps: dict[str, list[Row]] = field(default_factory=dict)  # earlier sweeps' rows per step
    # the controls' default-variant rows at the non-square shapes: control name -> rows
    control_shapes: dict[str, list[Row]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        all_rows = [*self.rows.values(), *self.shapes.values(),
                    *(r for rs in self.tuning.values() for r in rs)]
        return " / ".join(sorted({row.gpu for row in all_rows}))

    @property
    def steps(self) -> set[str]:
        return {step for step, _ in self.rows} | {step for step, _ in self.shapes}

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

    def shape_row(self, step: str, shape: tuple[int, int, int]) -> Row | None:
        return self.shapes.get((step, shape))

    def shapes_of(self, steps: list[str]) -> list[tuple[int, int, int]]:
        """The non-square shapes that any of these steps was measured at, in shape order."""
        chosen = set(steps)
        return sorted({shape for step, shape in self.shapes if step in chosen}, key=shape_order)

    def shape_rows_of(self, step: str) -> list[Row]:
        return [self.shapes[(step, shape)] for shape in self.shapes_of([step])]

    def control_row(self, name: str, shape: tuple[int, int, int]) -> Row | None:
        """A control's row at one shape, square or not (the last one measured)."""
        rows = self.controls.get(name, []) + self.control_shapes.get(name, [])
        return next((row for row in reversed(rows) if (row.m, row.n, row.k) == shape), None)

    def shape_cublas_gflops(self, shape: tuple[int, int, int]) -> float | None:
        """cuBLAS at one non-square shape: the median of its runs beside every step."""
        values = [row.cublas_gflops for (_, s), row in self.shapes.items()
                  if s == shape and row.has_cublas]
        return statistics.median(values) if values else None


def shape_order(shape: tuple[int, int, int]) -> tuple[int, int, int]:
    """Non-square shapes by K, then M, then N: 1024x1024x8192 before 256x256x16384."""
    m, n, k = shape
    return k, m, n


def _default_inputs(path: Path) -> list[Row]:
    """A file's rows on the default inputs; the others (an `inputs` label) are skipped."""
    rows = read_results_csv(path)
    labels = sorted({row.inputs for row in rows if not row.has_default_inputs})
    if labels:
        warn(f"{display_path(path)}: rows on other inputs ({', '.join(labels)}) are ignored "
             "here (their place is results/<gpu>/inputs/<class>/)")
    return [row for row in rows if row.has_default_inputs]


def _defaults(rows: list[Row], square: bool) -> list[Row]:
    return [row for row in keep_last(rows) if not row.variant and row.is_square == square]


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
            file_rows = _default_inputs(path)
            main_rows += file_rows
            if any(row.variant for row in file_rows):
                warn(f"{display_path(path)}: rows with a variant are ignored here "
                     "(tuning sweeps belong in tuning/)")
        # Only the default variant goes into the plots and tables: square shapes by size,
        # the others (the K-heavy shapes) by (m, n, k), for their own tables.
        defaults = [row for row in keep_last(main_rows) if not row.variant]
        rows = {(row.step, row.m): row for row in defaults if row.is_square}
        shapes = {(row.step, (row.m, row.n, row.k)): row for row in defaults
                  if not row.is_square}
        tuning: dict[str, list[Row]] = {}
        for row in keep_last([row for path in tuning_files for row in _default_inputs(path)]):
            tuning.setdefault(row.step, []).append(row)
        sweeps: dict[str, list[Row]] = {}
        for path in sorted((gpu_dir / "sweeps").glob("*.csv")):
            for row in keep_last(_default_inputs(path)):
                sweeps.setdefault(row.step, []).append(row)
        controls, control_shapes = {}, {}
        for name in CONTROLS:
            path = gpu_dir / "controls" / f"{name}.csv"
            if path.is_file():
                control_rows = _default_inputs(path)
                controls[name] = _defaults(control_rows, square=True)
                control_shapes[name] = _defaults(control_rows, square=False)
        results.append(GpuResults(gpu_dir.name, rows, tuning, controls, shapes, sweeps,
                                  control_shapes))
    return results
