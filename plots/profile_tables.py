"""The profile tables: a step page's ncu and SASS tables, its comparison table, the overview's
cross-step table, and the definitions of every figure in docs/glossary.md."""

from __future__ import annotations

from plots.markdown import NO_VALUE, md_table
from plots.profiles import COMPARE_METRICS, FIGURES, SUMMARY_HEADERS, SUMMARY_METRICS, GpuProfiles
from plots.steps import step_sort_key

NO_PROFILE = "_No profile recorded for this step._"
NO_COMPARISON = "_No comparison recorded for this step._"
NO_PROFILES = "_No profiles recorded yet._"
GLOSSARY_ANCHOR = "glossary.md#profiler-figures"
NCU_CAPTION = ("_Nsight Compute, kernel KERNEL at M=N=K=4096, one launch. Each figure "
               "is defined, with its unit, in the [glossary](GLOSSARY)._")
# The kernel a step's profile row measures: the step's own, or for 00_cublas the one cuBLAS picks.
KERNEL_NAMES = {"00_cublas": "cuBLAS's own (the one it picks for the shape; named on the page)",
                "16_stream_k": "`sgemm_kernel_stream`",
                "17_aligned_copies": "`sgemm_kernel_stream<true>`",
                "18_stream_k_first": "`sgemm_kernel_whole_tiles<true>` (the whole tiles only: 396 of 512 at 4096^3)",
                "19_short_last_piece": "`sgemm_kernel_whole_tiles<true>` (as in step 18)",
                "20_paired_pieces": "`sgemm_kernel_whole_tiles<true>` (as in step 18)"}
# Steps whose binary holds none of the measured kernel's SASS (cuBLAS's lives in its library).
NO_SASS = {"00_cublas"}
DEFAULT_KERNEL = "`sgemm_kernel`"
COMPARE_CAPTION = ("_Nsight Compute at M=N=K=4096, one launch each (figures defined in the "
                   "[glossary](GLOSSARY)). A column is a step as shipped, or a step built with "
                   "other tunables: `scripts/compare.txt` lists them, "
                   "`scripts/device_run.sh OUT compare=scripts/compare.txt` measures them._")
SASS_CAPTION = "_Static instruction counts in the kernel's SASS (not executed counts)._"


def _caption(caption: str, docs_link: str) -> str:
    """docs_link: the docs/ directory relative to the page ("../../docs" from a step page,
    "" from a page in docs/)."""
    return caption.replace("GLOSSARY", f"{docs_link}/{GLOSSARY_ANCHOR}" if docs_link
                           else GLOSSARY_ANCHOR)


def step_profile_section(step: str, profiles: list[GpuProfiles], docs_link: str) -> str:
    """The profile block of steps/<step>/README.md: ncu metrics and SASS counts per GPU."""
    blocks = []
    for gpu in profiles:
        cells, sass = gpu.ncu_cells(step), None if step in NO_SASS else gpu.sass.get(step)
        if cells is None and sass is None:
            continue
        parts = [f"### {gpu.name}"]
        if cells is not None:
            parts += [_caption(NCU_CAPTION.replace("KERNEL", KERNEL_NAMES.get(step, DEFAULT_KERNEL)), docs_link),
                      md_table(["metric", "value"],
                               [[label, value] for label, value in cells.items()])]
        if sass is not None:
            parts += [SASS_CAPTION, md_table([name for name, _ in sass],
                                             [[str(count) for _, count in sass]],
                                             "r" * len(sass))]
        blocks.append("\n\n".join(parts))
    return "\n\n".join(blocks) or NO_PROFILE


def step_compare_section(step: str, profiles: list[GpuProfiles], docs_link: str) -> str:
    """The comparison block of steps/<step>/README.md: profiled variants side by side."""
    blocks = []
    for gpu in profiles:
        columns = gpu.compare.get(step)
        if not columns:
            continue
        body = [[figure.label] + [figure.fmt(values[figure.metric])
                                  if figure.metric in values else NO_VALUE
                                  for _, values in columns]
                for figure in COMPARE_METRICS
                if any(figure.metric in values for _, values in columns)]
        blocks.append("\n\n".join([f"### {gpu.name}", _caption(COMPARE_CAPTION, docs_link),
                                   md_table(["metric", *(name for name, _ in columns)], body)]))
    return "\n\n".join(blocks) or NO_COMPARISON


def profile_summary_section(profiles: list[GpuProfiles], steps: list[str]) -> str:
    """The profile-summary block of docs/overview.md: key ncu metrics, one row per step."""
    profiles = [gpu for gpu in profiles if gpu.ncu]
    if not profiles:
        return NO_PROFILES
    blocks = []
    for gpu in profiles:
        body = []
        for step in sorted(set(steps) | set(gpu.ncu), key=step_sort_key):
            cells = gpu.ncu_cells(step)
            body.append([step] + [cells[label] if cells else NO_VALUE
                                  for label in SUMMARY_METRICS])
        blocks.append("\n\n".join([f"### {gpu.name}", _caption(NCU_CAPTION.replace("KERNEL", f"{DEFAULT_KERNEL}, except: " + "; ".join(
                                       f"{step}: {KERNEL_NAMES[step]}" for step in sorted(KERNEL_NAMES, key=step_sort_key))), ""),
                                   md_table(["step", *SUMMARY_HEADERS], body),
                                   f"{NO_VALUE} = no profile recorded for that step."]))
    return "\n\n".join(blocks)


def glossary_figures_section() -> str:
    """The profiler-figures block of docs/glossary.md: every figure the tables show."""
    body = [[f.label, f.unit, f.meaning, f"`{f.metric}`" if "__" in f.metric else
             "derived from `smsp__sass_thread_inst_executed_op_ffma_pred_on.sum` and "
             "`smsp__inst_executed.sum`"]
            for f in FIGURES]
    return md_table(["figure", "unit", "what it measures", "Nsight Compute metric"], body,
                    "llll")
