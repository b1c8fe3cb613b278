"""Puts it together: every generated file and its content, computed from results/ and the
repository's steps; nothing is written here (plots/cli.py writes or checks)."""

from __future__ import annotations

from pathlib import Path

from plots.diffs import STEP_DIFFS_TEMPLATE, diff_sizes_section, diff_vs_sections
from plots.experiments import experiment_sections
from plots.figures import plot_files
from plots.inputs import INPUTS_SECTION, inputs_section, load_inputs
from plots.margins import margins_section
from plots.pictures import picture_files
from plots.markers import update_sections
from plots.profile_tables import (glossary_figures_section, profile_summary_section,
                                  step_compare_section, step_profile_section)
from plots.profiles import load_profiles
from plots.results import load_results
from plots.retunes import retunes_section
from plots.shapes import overview_shapes_section, step_shapes_section
from plots.steps import step_dirs, step_sort_key
from plots.survey import SURVEY_PAGE, load_survey, survey_plot_files, survey_section
from plots.tables import (accuracy_plot_section, speeds_sections, step_results_section,
                          summary_section)
from plots.schema import display_path, warn
from plots.tunables import (TUNABLES_DOC, read_meanings, step_tunables, step_tunables_section,
                            tunable_values_section, undescribed)
from plots.tuning import full_tuning_file, step_tuning_section, tuning_page


def generate(repo: Path, results_dir: Path) -> dict[Path, bytes]:
    """Every output file and its content."""
    gpus = load_results(results_dir)
    profiles = load_profiles(results_dir, gpus)
    directories = step_dirs(repo)
    # Steps from steps/ and from every results set, so a step absent from one GPU's results
    # still shows there as missing.
    steps = sorted(set(directories).union(*(gpu.steps for gpu in gpus)), key=step_sort_key)
    meanings = read_meanings(repo)
    for missing in undescribed(repo, directories, meanings):
        warn(f"{display_path(repo / TUNABLES_DOC)}: no row for {missing}")

    # The shape survey (results/<gpu>/survey/): its own rows, never the bench's.
    surveys = load_survey(results_dir, repo)
    # Rows on tiny, huge and subnormal inputs (results/<gpu>/inputs/<class>/): their own block.
    inputs = load_inputs(results_dir)

    outputs: dict[Path, bytes] = {}
    for gpu in gpus:
        if gpu.rows:
            outputs.update(plot_files(gpu, steps, repo))
    plots = set(outputs)
    for survey in surveys:
        if survey.rows:  # none where every row failed its check
            outputs.update(survey_plot_files(survey, steps, repo))

    def add(path: Path, content: bytes | None) -> None:
        if content is not None:
            outputs[path] = content

    for md_file in (repo / "README.md", repo / "docs" / "overview.md"):
        sections = {"results-summary": summary_section(gpus, steps, md_file, repo, surveys),
                    "speed-vs-accuracy": accuracy_plot_section(gpus, plots, md_file, repo)}
        if md_file == repo / "docs" / "overview.md":
            sections["profile-summary"] = profile_summary_section(profiles, steps)
            sections["retunes"] = retunes_section(repo, directories, gpus)
            sections["shapes"] = overview_shapes_section(gpus, steps, md_file, repo)
            sections.update(speeds_sections(md_file.read_text(encoding="utf-8")
                                            if md_file.is_file() else "", steps, gpus))
        add(md_file, update_sections(md_file, sections))
    for step in directories:
        page = repo / "steps" / step / "README.md"
        defaults = step_tunables(repo, step)
        sections = {"results": step_results_section(step, gpus, page, repo),
                    "shapes": step_shapes_section(step, gpus, page, repo),
                    "tuning": step_tuning_section(step, gpus, defaults, page, repo),
                    "profile": step_profile_section(step, profiles, "../../docs"),
                    "compare": step_compare_section(step, profiles, "../../docs"),
                    "tunables": step_tunables_section(repo, directories, step, meanings)}
        if page.is_file():
            text = page.read_text(encoding="utf-8")
            sections.update(diff_vs_sections(repo, step, text))
            sections.update(speeds_sections(text, steps, gpus))
            sections.update(experiment_sections(text, results_dir, gpus, page))
            if f"<!-- BEGIN {INPUTS_SECTION} -->" in text:  # only the pages that ask for it
                sections[INPUTS_SECTION] = inputs_section(inputs, gpus, page, repo)
        add(page, update_sections(page, sections))
        full = full_tuning_file(step, gpus, defaults)
        if full is not None:
            outputs[repo / tuning_page(step)] = full.encode("utf-8")
    # A step's notes hold only the experiment blocks they ask for.
    for notes in sorted((repo / "docs" / "notes").glob("*.md")):
        text = notes.read_text(encoding="utf-8")
        if (sections := experiment_sections(text, results_dir, gpus, notes)):
            add(notes, update_sections(notes, sections))
    add(repo / "docs" / "step-diffs.md", update_sections(
        repo / "docs" / "step-diffs.md", {"diff-sizes": diff_sizes_section(repo, directories)},
        template=STEP_DIFFS_TEMPLATE))
    # Pages that hold one generated block each; a repository without them is left alone.
    methodology = repo / "docs" / "methodology.md"
    if methodology.is_file():
        sections = {INPUTS_SECTION: inputs_section(inputs, gpus, methodology, repo)}
        if (margins := margins_section(repo, results_dir)) is not None:
            sections["accuracy-margins"] = margins
        add(methodology, update_sections(methodology, sections))
    for path, name, content in (
            (repo / SURVEY_PAGE, "survey",
             lambda: survey_section(surveys, steps, repo / SURVEY_PAGE, repo)),
            (repo / "docs" / "glossary.md", "profiler-figures", glossary_figures_section),
            (repo / TUNABLES_DOC, "tunable-values",
             lambda: tunable_values_section(repo, directories, meanings))):
        if path.is_file():
            add(path, update_sections(path, {name: content()}))
    # The pages' pictures, drawn from the steps' knobs and heuristics; a repository without
    # steps (a test's) has none.
    if directories:
        outputs.update(picture_files(repo))
    return outputs


def stale_files(outputs: dict[Path, bytes]) -> list[Path]:
    return [path for path, content in sorted(outputs.items())
            if not path.is_file() or path.read_bytes() != content]
