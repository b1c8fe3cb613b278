"""Shared by the plot tool's tests. Run them from the repository root, with the pinned
matplotlib (scripts/regenerate.sh installs it into .venv-plots):

    .venv-plots/bin/python -m unittest discover -s plots/tests -t .

Every test works on a copy of fixtures/ in a temporary directory, never on the repository.
"""

import contextlib
import io
import shutil
import tempfile
import unittest
from pathlib import Path

from plots import cli
from plots import generate  # noqa: F401  imports matplotlib before any output is captured

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO_ROOT = Path(__file__).resolve().parents[2]
H100 = "nvidia-h100-80gb-hbm3"
A100 = "nvidia-a100-sxm4-40gb"

PLOT_FILES = ("gflops_vs_size.png", "ratio_to_cublas.png", "journey.png", "journey.svg",
              "steps_2048_4096.png", "steps_2048_4096.svg")


def make_repo(parent: Path) -> Path:
    """A fixture repository (steps/, READMEs, docs/) with the fixture results/ inside it."""
    repo = parent / "repo"
    shutil.copytree(FIXTURES / "repo", repo)
    shutil.copytree(FIXTURES / "results", repo / "results")
    return repo


def run_tool(*args) -> tuple[int, str, str]:
    """Runs the tool in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def section(text: str, name: str) -> str:
    """What lies between a pair of markers."""
    return text.split(f"<!-- BEGIN {name} -->")[1].split(f"<!-- END {name} -->")[0]


def table_lines(text: str, prefix: str = "|") -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)


class GeneratedRepoTestCase(unittest.TestCase):
    """One generation run over the fixtures per test class; the tests read what it produced."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.repo = make_repo(Path(cls._tmp.name))
        cls.code, cls.out, cls.err = run_tool("--repo", cls.repo)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def read(self, relative: str) -> str:
        return (self.repo / relative).read_text(encoding="utf-8")


def figure_texts(fig) -> list:
    """The visible, non-empty text artists of a figure (titles, labels, legends, notes),
    leaving out tick labels (the axes' boxes hold those) and the texts of hidden axes."""
    ticks = {id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for tick in axis.get_major_ticks() + axis.get_minor_ticks()
             for label in (tick.label1, tick.label2)}
    return [text for text in fig.findobj(lambda a: hasattr(a, "get_text"))
            if text.get_visible() and text.get_text().strip() and id(text) not in ticks
            and (text.axes is None or text.axes.get_visible())]


def drawn(fig):
    """Lays the figure out as savefig would and returns its renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    return renderer


def assert_nothing_cut_off(test: unittest.TestCase, fig) -> None:
    """Every text and every axes (with its tick labels) lies inside the figure."""
    renderer = drawn(fig)
    page = fig.bbox.padded(1)
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in figure_texts(fig)]
    boxes += [(f"axes {ax.get_title()!r}", ax.get_tightbbox(renderer)) for ax in fig.axes
              if ax.get_visible()]
    for name, box in boxes:
        test.assertTrue(page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0
                        and box.y1 <= page.y1, f"{name!r} at {box} is outside {fig.bbox}")


def synthetic_gpu(missing: tuple[int, ...] = (23, 24), with_control: bool = True):
    """A results set shaped like a whole tutorial's: steps 00-25 at the four square sizes and
    the two K-heavy shapes, most of them with cuBLAS's own error (a crowded column at x = 1),
    the tensor-core steps faster and more accurate; the steps in `missing` have no rows."""
    import dataclasses

    from plots.results import GpuResults
    from plots.schema import read_results_csv

    template = read_results_csv(FIXTURES / "results" / H100 / "02_coalesce.csv")[0]
    steps = [f"{n:02d}_step{n}" for n in range(26)]
    speed = {0: 1.0, 1: 0.1, 2: 0.1, 3: 0.18, 4: 0.18, 5: 0.72, 6: 0.71, 7: 0.8, 8: 0.84,
             9: 0.86, 10: 0.9, 11: 0.76, 12: 0.9, 13: 0.88, 14: 0.93, 15: 0.93, 16: 0.94,
             17: 0.96, 18: 0.97, 19: 0.97, 20: 0.97, 21: 0.96, 22: 1.22, 23: 1.2, 24: 1.57, 25: 2.03}
    error = {n: 1.0 for n in range(22)} | {22: 0.42, 23: 0.2, 24: 0.2, 25: 0.2}
    shapes = [(s, s, s) for s in (1024, 2048, 4096, 8192)] + [(1024, 1024, 8192),
                                                               (256, 256, 16384)]
    rows, shape_rows = {}, {}
    for step in steps:
        n = int(step[:2])
        if n in missing:
            continue
        for i, (m, nn, k) in enumerate(shapes):
            ratio = speed[n] * (1 + 0.01 * i)
            row = dataclasses.replace(
                template, step=step, m=m, n=nn, k=k, gflops=50000 * ratio,
                cublas_gflops=50000, cublas_ms_median=1.0, ratio_to_cublas=ratio,
                err_rms_vs_cublas=error[n] * (0.5 if n in (15, 16) and m == 1024 else 1),
                verified=True, sm_count=132, sm_clock_mhz=1980, arch="90")
            if m == nn == k:
                rows[(step, m)] = row
            else:
                shape_rows[(step, (m, nn, k))] = row
    controls, control_shapes = {}, {}
    if with_control:
        def tf32(shape, gflops, error):
            return dataclasses.replace(template, step="cublas_tf32", m=shape[0], n=shape[1],
                                       k=shape[2], gflops=gflops, cublas_gflops=50000,
                                       ratio_to_cublas=gflops / 50000,
                                       err_rms_vs_cublas=error, verified=False)
        controls["cublas_tf32"] = [tf32(s, 100000 * (i + 1), 450 / (i + 1))
                                   for i, s in enumerate(shapes[:4])]
        control_shapes["cublas_tf32"] = [tf32(s, 200000, 300) for s in shapes[4:]]
    return GpuResults("nvidia-test", rows, {}, controls, shape_rows, {}, control_shapes), steps
