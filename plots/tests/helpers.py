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

PLOT_FILES = ("gflops_vs_size.png", "ratio_to_cublas.png",
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
