"""Accuracy by input class: the `inputs` block of docs/methodology.md (and of a step page that
has its markers).

    results/<gpu-slug>/inputs/<class>/<step>.csv    rows on scaled inputs, e.g. class "tiny"
                                                    from `--exponents -118,118`; rows that
                                                    failed the check are kept (verified = 0,
                                                    written with --record-failures)

Per GPU with such rows, one table row per (step, size): the step's RMS error over cuBLAS
SGEMM's on the same inputs (err_rms_vs_cublas) on the ordinary inputs (the bench row,
results/<gpu-slug>/<step>.csv) and on each class, marked where the row failed its check, and
the step's speed over cuBLAS SGEMM's timed in the same run, one per input column.

These rows are never bench results: plots/results.py skips every row with an `inputs` label.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from plots.markdown import (NO_VALUE, error_number, md_table, provenance, ratio_cell,
                            relative_link)
from plots.results import GpuResults, keep_last
from plots.schema import Row, display_path, read_results_csv, warn
from plots.steps import step_sort_key

INPUTS_DIR = "inputs"  # results/<gpu-slug>/inputs/<class>/
INPUTS_SECTION = "inputs"  # the block's markers: <!-- BEGIN inputs --> ... <!-- END inputs -->
CLASS_ORDER = ("tiny", "huge", "subnormal")  # known classes first, in this order; others after
ORDINARY = "ordinary"  # the bench's uniform [-1, 1] inputs
METHODOLOGY = Path("docs") / "methodology.md"
SECTION_ANCHOR = "#tiny-huge-and-subnormal-inputs"
FAILS = "fails the check"
NO_INPUTS = ("_No rows on tiny, huge or subnormal inputs yet: a step run with `--exponents EA,EB "
             "--record-failures --csv results/<gpu>/inputs/<class>/<step>.csv` writes them._")


@dataclass
class InputsSet:
    slug: str  # the results/<gpu-slug> directory name, as GpuResults.slug
    rows: dict[tuple[str, str, int], Row]  # (class, step, size) -> the last such row

    @property
    def name(self) -> str:
        return " / ".join(sorted({row.gpu for row in self.rows.values()}))

    @property
    def classes(self) -> list[str]:
        found = {cls for cls, _, _ in self.rows}
        return ([c for c in CLASS_ORDER if c in found]
                + sorted(found.difference(CLASS_ORDER)))

    def labels(self, cls: str) -> list[str]:
        """The `inputs` labels of a class's rows, e.g. ["exponents=-118,118"]."""
        return sorted({row.inputs for (c, _, _), row in self.rows.items() if c == cls})


def class_order(cls: str) -> tuple[int, str]:
    return (CLASS_ORDER.index(cls) if cls in CLASS_ORDER else len(CLASS_ORDER), cls)


def load_inputs(results_dir: Path) -> list[InputsSet]:
    """The rows of every results/<gpu-slug>/inputs/<class>/*.csv: the default variant at square
    sizes, with an `inputs` label (a row without one is an ordinary row filed in the wrong
    place: skipped, with a warning)."""
    if not results_dir.is_dir():
        return []
    sets = []
    for gpu_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        inputs_dir = gpu_dir / INPUTS_DIR
        if not inputs_dir.is_dir():
            continue
        rows: dict[tuple[str, str, int], Row] = {}
        for class_dir in sorted((p for p in inputs_dir.iterdir() if p.is_dir()),
                                key=lambda p: class_order(p.name)):
            for path in sorted(class_dir.glob("*.csv")):
                file_rows = read_results_csv(path)
                if any(not row.inputs for row in file_rows):
                    warn(f"{display_path(path)}: rows without an `inputs` label are ignored "
                         "here (ordinary rows belong in results/<gpu>/<step>.csv)")
                for row in keep_last([row for row in file_rows if row.inputs]):
                    if not row.variant and row.is_square:
                        rows[(class_dir.name, row.step, row.m)] = row
        if rows:
            sets.append(InputsSet(gpu_dir.name, rows))
    return sets


def option_text(label: str) -> str:
    """An `inputs` label as the options that made it: "exponents=-118,118" -> "--exponents
    -118,118"; "specials" -> "--specials"."""
    items = []
    for item in label.split(";"):
        name, sep, value = item.partition("=")
        items.append(f"--{name} {value}" if sep else f"--{name}")
    return " ".join(items)


def error_cell(row: Row | None) -> str:
    """The step's RMS error over cuBLAS's, e.g. "0.24" or "218,368 (fails the check)"."""
    if row is None or row.err_rms_vs_cublas is None:
        return NO_VALUE
    text = error_number(row.err_rms_vs_cublas)
    return text if row.verified else f"{text} ({FAILS})"


def _methodology_link(md_file: Path, repo: Path) -> str:
    page = repo / METHODOLOGY
    return SECTION_ANCHOR if md_file == page else relative_link(page, md_file) + SECTION_ANCHOR


def inputs_section(sets: list[InputsSet], gpus: list[GpuResults], md_file: Path,
                   repo: Path) -> str:
    """The `inputs` block: per GPU with rows on scaled inputs, a table of the steps' accuracy by
    input class beside their ordinary bench rows."""
    blocks = []
    for inputs in (s for s in sets if s.rows):
        bench = next((gpu for gpu in gpus if gpu.slug == inputs.slug), None)
        classes = inputs.classes
        columns = [ORDINARY] + classes
        keys = sorted({(step, size) for _, step, size in inputs.rows},
                      key=lambda key: (step_sort_key(key[0]), key[1]))
        body, used = [], []
        for step, size in keys:
            cells = [bench.row(step, size) if bench else None]
            cells += [inputs.rows.get((cls, step, size)) for cls in classes]
            used += [row for row in cells if row]
            body.append([step, str(size)] + [error_cell(row) for row in cells]
                        + [" / ".join(ratio_cell(row) if row else NO_VALUE for row in cells)])
        kinds = [f"{cls} (`{'`, `'.join(option_text(l) for l in inputs.labels(cls))}`)"
                 for cls in classes]
        exponents = any(label.startswith("exponents=") or ";exponents=" in label
                        for cls in classes for label in inputs.labels(cls))
        missing = any(NO_VALUE in cell for cells in body for cell in cells)
        explanation = (
            f"Inputs: {ORDINARY}, the bench's (uniform in [-1, 1]); "
            + (", ".join(kinds[:-1]) + " and " if len(kinds) > 1 else "") + kinds[-1]
            + (", where `--exponents EA,EB` scales A by 2^EA and B by 2^EB" if exponents else "")
            + f" ([tiny, huge and subnormal inputs]({_methodology_link(md_file, repo)})). "
            f"Each input's column: the step's RMS error over cuBLAS SGEMM's on the same inputs, "
            f"\"{FAILS}\" where the step's result failed it. Ratio to cuBLAS: the step's speed "
            f"over cuBLAS SGEMM's timed in the same run, one per input"
            + (f"; {NO_VALUE}: not measured." if missing else "."))
        header = (["step", "size"] + columns
                  + [f"ratio to cuBLAS ({' / '.join(columns)})"])
        blocks.append("\n\n".join([f"### {inputs.name}", explanation,
                                   md_table(header, body),
                                   provenance(used)]))
    return "\n\n".join(blocks) or NO_INPUTS
