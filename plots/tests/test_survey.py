"""The shape survey: its rows read from results/<gpu>/survey/ (verified, with cuBLAS timed) and
never as bench rows, the kinds from tests/shapes.txt, the geometric mean, worst, best and the
shapes where a step is slower than an earlier step of its chapter, the figure, the `survey`
block of docs/survey.md and the README's survey column."""

import csv
import dataclasses
import io
import math
import unittest

import matplotlib
import matplotlib.style
from matplotlib.collections import LineCollection

from plots import survey as sv
from plots.figures import _RC
from plots.results import load_results
from plots.schema import read_results_csv
from plots.tables import summary_section
from plots.tests.helpers import (A100, FIXTURES, H100, TempDirTestCase, assert_nothing_cut_off,
                                 figure_texts, make_repo, run_tool, section, table_lines)

SHAPES_TXT = """# a comment line, and a set that is not the survey's
bench               1024,2048
survey.squares      1000,1536
survey.skinny       8192x64x8192,64x8192x8192
survey.small        128x128x128
"""
PAGE = "# Survey\n\n<!-- BEGIN survey -->\nstale\n<!-- END survey -->\n"
TEMPLATE = read_results_csv(FIXTURES / "results" / H100 / "02_coalesce.csv")[1]
SQUARES = [(1000, 1000, 1000), (1536, 1536, 1536)]
SKINNY = [(8192, 64, 8192), (64, 8192, 8192)]
SMALL = [(128, 128, 128)]


def row(step, shape, ratio, **changes):
    return dataclasses.replace(TEMPLATE, step=step, m=shape[0], n=shape[1], k=shape[2],
                               ratio_to_cublas=ratio, gflops=50000 * ratio,
                               cublas_gflops=50000, **changes)


def make_survey(ratios: dict[str, list[float]], kinds=None) -> sv.Survey:
    """A survey of the five shapes above: ratios per step, in SQUARES + SKINNY + SMALL order
    (None: no row)."""
    shapes = SQUARES + SKINNY + SMALL
    rows = {(step, shape): row(step, shape, r) for step, values in ratios.items()
            for shape, r in zip(shapes, values) if r is not None}
    kinds = kinds if kinds is not None else {"squares": SQUARES, "skinny": SKINNY,
                                             "small": SMALL}
    return sv.Survey("nvidia-test", rows, kinds)


def write_rows(path, rows):
    """Rows as the harness writes them: the header, then one line per row."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    source = (FIXTURES / "results" / H100 / "02_coalesce.csv").read_text().splitlines()
    writer.writerow(source[0].split(","))
    template = source[2].split(",")
    header = source[0].split(",")
    for step, shape, ratio, verified, cublas in rows:
        fields = dict(zip(header, template))
        fields.update(step=step, m=shape[0], n=shape[1], k=shape[2], ratio_to_cublas=ratio,
                      gflops=50000 * ratio, verified=int(verified),
                      cublas_ms_median=0.3 if cublas else 0, cublas_gflops=50000 if cublas else 0)
        writer.writerow([fields[name] for name in header])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.getvalue())


def survey_repo(parent, with_page=True, with_rows=True):
    """The fixture repository with a survey (shapes.txt, docs/survey.md) and H100 survey rows
    for 01_initial and 02_coalesce (one unverified row, one without cuBLAS, one shape that no
    survey set holds)."""
    repo = make_repo(parent)
    (repo / "tests").mkdir()
    (repo / "tests" / "shapes.txt").write_text(SHAPES_TXT)
    if with_page:
        (repo / "docs" / "survey.md").write_text(PAGE)
    if with_rows:
        folder = repo / "results" / H100 / "survey"
        write_rows(folder / "01_initial.csv",
                   [("01_initial", s, 0.1, True, True) for s in SQUARES + SKINNY + SMALL])
        write_rows(folder / "02_coalesce.csv",
                   [("02_coalesce", SQUARES[0], 0.2, True, True),
                    ("02_coalesce", SQUARES[1], 0.05, True, True),
                    ("02_coalesce", SKINNY[0], 0.08, False, True),   # failed its check
                    ("02_coalesce", SKINNY[1], 0.3, True, False),    # cuBLAS not timed
                    ("02_coalesce", (100, 100, 100), 0.4, True, True)])  # in no set
    return repo


class LoadingTest(TempDirTestCase):
    def test_rows_kinds_and_left_out(self):
        repo = survey_repo(self.tmp)
        surveys = sv.load_survey(repo / "results", repo)
        self.assertEqual([s.slug for s in surveys], [H100])  # the A100 has no survey
        survey = surveys[0]
        self.assertEqual(survey.name, "NVIDIA H100 80GB HBM3")
        self.assertEqual(list(survey.kinds), ["squares", "skinny", "small", sv.OTHER_KIND])
        self.assertEqual(survey.kinds["skinny"], SKINNY)
        self.assertEqual(survey.kind_of((100, 100, 100)), sv.OTHER_KIND)
        self.assertEqual(len(survey.shapes), 6)
        self.assertEqual(survey.left_out, 2)
        self.assertEqual(survey.ratios("02_coalesce"),
                         {SQUARES[0]: 0.2, SQUARES[1]: 0.05, (100, 100, 100): 0.4})
        self.assertEqual(len(survey.ratios("01_initial")), 5)
        self.assertEqual(survey.steps, {"01_initial", "02_coalesce"})

    def test_never_read_as_bench_rows(self):
        with_survey = {g.slug: g for g in load_results(survey_repo(self.tmp / "a") / "results")}
        without = {g.slug: g for g in load_results(make_repo(self.tmp / "b") / "results")}
        self.assertEqual(with_survey.keys(), without.keys())
        for slug, gpu in with_survey.items():
            self.assertEqual(gpu.rows, without[slug].rows)
            self.assertEqual(gpu.shapes, without[slug].shapes)

    def test_no_shapes_file_and_no_results(self):
        repo = make_repo(self.tmp)
        self.assertEqual(sv.survey_kinds(repo), {})
        self.assertEqual(sv.load_survey(repo / "results", repo), [])
        self.assertEqual(sv.load_survey(self.tmp / "none", repo), [])

    def test_shapes_file_of_the_repository(self):
        kinds = sv.survey_kinds(sv.Path(__file__).resolve().parents[2])
        self.assertEqual(list(kinds), ["squares", "odd", "transformer", "skinny", "small",
                                       "k_heavy"])
        self.assertEqual(sum(len(shapes) for shapes in kinds.values()), 45)
        self.assertIn((1000, 1000, 1000), kinds["squares"])


class ComputationsTest(unittest.TestCase):
    SURVEY = make_survey({
        "00_cublas": [1.0, 1.0, 1.0, 1.0, 1.0],
        "03_step": [0.5, 0.5, 0.5, 0.5, 0.5],
        "05_step": [2.0, 0.5, 0.25, 1.0, None],
        "07_step": [2.1, 0.49, 0.2, 0.9, 0.6],
        "13_step": [0.1, 0.1, 0.1, 0.1, 0.1],  # another chapter: never held to 03-07
    })
    STEPS = ["00_cublas", "03_step", "05_step", "07_step", "13_step"]

    def test_geomean_worst_best(self):
        s = self.SURVEY
        self.assertAlmostEqual(s.geomean("05_step"), (2.0 * 0.5 * 0.25 * 1.0) ** 0.25)
        self.assertAlmostEqual(s.geomean("05_step", "skinny"), math.sqrt(0.25))
        self.assertIsNone(s.geomean("05_step", "small"))
        self.assertIsNone(s.geomean("99_none"))
        self.assertEqual(s.worst("05_step"), (SKINNY[0], 0.25))
        self.assertEqual(s.best("05_step"), (SQUARES[0], 2.0))
        self.assertIsNone(s.worst("99_none"))

    def test_slower_than_an_earlier_step_of_the_chapter(self):
        s = self.SURVEY
        # 05 against 03: slower at SKINNY[0] (0.25 against 0.5); 0.5 against 0.5 is not.
        self.assertEqual(s.slower("05_step", self.STEPS), [(SKINNY[0], 0.25, "03_step", 0.5)])
        # 07 against the faster of 03 and 05 at each shape, the largest slowdown first;
        # 0.49 against 0.5 is 2% (not more than 3%), 2.1 is faster than 2.0.
        # SMALL: 0.6 is faster than 03's 0.5 (05 has no row there).
        self.assertEqual(s.slower("07_step", self.STEPS),
                         [(SKINNY[0], 0.2, "03_step", 0.5), (SKINNY[1], 0.9, "05_step", 1.0)])
        self.assertEqual(s.slower("13_step", self.STEPS), [])
        self.assertEqual(s.slower("00_cublas", self.STEPS), [])
        self.assertEqual(s.slower("03_step", self.STEPS), [])

    def test_chapter_lasts_and_readme_cell(self):
        self.assertEqual(sv.chapter_lasts(self.SURVEY, self.STEPS), ["07_step", "13_step"])
        self.assertEqual(sv.geomean_percent(self.SURVEY, "07_step"), ("64%", False))
        cell, partial = sv.geomean_percent(self.SURVEY, "05_step")
        self.assertEqual((cell, partial), ("71% (4 of 5)", True))
        self.assertEqual(sv.geomean_percent(None, "05_step"), ("—", False))

    def test_section(self):
        text = sv.survey_section([self.SURVEY], self.STEPS + ["09_missing"],
                                 sv.Path("/r/docs/survey.md"), sv.Path("/r"))
        lines = table_lines(text)
        self.assertIn("| 05_step | 4 | 0.707 | 8192×64×8192 | 0.250 | 1000×1000×1000 | 2.000 | 1 |",
                      lines)
        self.assertIn("| 00_cublas | 5 | 1.000 | 1000×1000×1000 | 1.000 | 1000×1000×1000 | 1.000 "
                      "| — |", lines)
        self.assertIn("| 09_missing | 0 | not measured | — | — | — | — | — |", lines)
        self.assertIn("| 07_step | 8192×64×8192 | skinny | 0.200 | 03_step | 0.500 | 150% |",
                      lines)
        self.assertIn("the fastest earlier one at that shape: 3 rows</summary>", text)
        # 09_missing has no rows: 07 is the last of its chapter that has.
        self.assertIn("| kind | shapes | 07_step | 13_step |", lines)
        self.assertIn("| skinny | 2 | 0.424 | 0.100 |", lines)
        self.assertIn("| all | 5 | 0.644 | 0.100 |", lines)
        self.assertIn("](plots/nvidia-test/survey.png)", text)
        self.assertEqual(sv.survey_section([], self.STEPS, sv.Path("x"), sv.Path(".")),
                         sv.NO_SURVEY)
        failed = sv.Survey("nvidia-test", {}, {"small": SMALL}, left_out=3)  # all failed
        self.assertEqual(failed.name, "nvidia-test")
        self.assertEqual(sv.survey_section([failed], self.STEPS, sv.Path("x"), sv.Path(".")),
                         sv.NO_SURVEY)


class FigureTest(unittest.TestCase):
    def figure(self, survey, steps):
        with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
            return sv.plot_survey(survey, steps)

    def test_columns_means_worst_and_bands(self):
        survey = ComputationsTest.SURVEY
        fig = self.figure(survey, ComputationsTest.STEPS + ["09_missing"])
        ax = fig.axes[0]
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        self.assertEqual(ticks, ["03\n0.50×", "05\n0.71×", "07\n0.64×", "09", "13\n0.10×"])
        words = [t.get_text() for t in figure_texts(fig)]
        for label in ("01–09", "13–21", "8192×64×8192", sv.NOT_MEASURED, "squares (2)",
                      "skinny (2)", "small (1)", "geometric mean", "cuBLAS SGEMM"):
            self.assertIn(label, words)
        # The line at 1, and a geometric-mean bar per measured step.
        self.assertEqual([line.get_ydata()[0] for line in ax.get_lines()], [1.0])
        bars = [c for c in ax.collections if isinstance(c, LineCollection)]
        self.assertEqual(len(bars), 4)
        assert_nothing_cut_off(self, fig)

    def test_only_some_steps_and_png(self):
        survey = make_survey({"22_step": [1.2, 1.1, 0.6, 0.9, 0.5]})
        steps = [f"{n:02d}_step" for n in range(25)]
        fig = self.figure(survey, steps)
        words = [t.get_text() for t in fig.axes[0].texts]
        self.assertEqual(words.count(sv.NOT_MEASURED), 23)  # 01-24 but 22
        assert_nothing_cut_off(self, fig)
        files = sv.survey_plot_files(survey, steps, sv.Path("/r"))
        (path, png), = files.items()
        self.assertEqual(path, sv.Path("/r/docs/plots/nvidia-test/survey.png"))
        self.assertTrue(png.startswith(b"\x89PNG"))
        self.assertEqual(png, sv.survey_plot_files(survey, steps, sv.Path("/r"))[path])


class GeneratedTest(TempDirTestCase):
    def test_page_figure_and_readme_column(self):
        repo = survey_repo(self.tmp)
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 0, err)
        self.assertTrue((repo / "docs/plots" / H100 / "survey.png").is_file())
        self.assertFalse((repo / "docs/plots" / A100 / "survey.png").exists())
        block = section((repo / "docs/survey.md").read_text(), "survey")
        self.assertIn("### NVIDIA H100 80GB HBM3", block)
        self.assertIn("| 02_coalesce | 3 | 0.159 | 1536×1536×1536 | 0.050 | 100×100×100 | 0.400 "
                      "| 1 |", block)
        self.assertIn("2 row(s) that failed their check", block)
        self.assertIn(f"](plots/{H100}/survey.png)", block)
        summary = section((repo / "README.md").read_text(), "results-summary")
        a100, h100 = summary.split("### NVIDIA H100 80GB HBM3")
        self.assertIn("| vs cuBLAS at 4096 | % of cuBLAS, survey geomean |", h100)
        self.assertIn("| 01_initial |", h100)
        self.assertRegex(h100, r"\| 01_initial \|.* \| 10% \(5 of 6\) \|")
        self.assertRegex(h100, r"\| 02_coalesce \|.* \| 16% \(3 of 6\) \|")
        self.assertRegex(h100, r"\| 13_split_k \|.* \| — \|")
        self.assertIn("[shape survey](docs/survey.md)", h100)
        self.assertNotIn("survey", a100)
        self.assertIn("[shape survey](survey.md)",
                      section((repo / "docs/overview.md").read_text(), "results-summary"))

    def test_no_survey_rows(self):
        """The page says so in one line, the README has no survey column, --check passes."""
        repo = survey_repo(self.tmp, with_rows=False)
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 0, err)
        self.assertEqual(section((repo / "docs/survey.md").read_text(), "survey").strip(),
                         sv.NO_SURVEY)
        self.assertNotIn("survey", (repo / "README.md").read_text())
        self.assertFalse(list((repo / "docs/plots").rglob("survey.png")))
        self.assertEqual(run_tool("--repo", repo, "--check")[0], 0)

    def test_summary_without_surveys_is_unchanged(self):
        repo = survey_repo(self.tmp)
        gpus = load_results(repo / "results")
        steps = ["01_initial", "02_coalesce"]
        md = repo / "README.md"
        self.assertEqual(summary_section(gpus, steps, md, repo),
                         summary_section(gpus, steps, md, repo, []))


if __name__ == "__main__":
    unittest.main()
