"""The margins of the FP32-grade limit: read from the suite's per-shape errors and the planted
faults' log, on both sides of the limit."""

from plots.margins import margins_section
from plots.tests.helpers import TempDirTestCase

SUITE = """program,shape,check,err_max_u
00_cublas,2048x2048x64,ok,5.91
00_cublas,1x1x1,ok,0.3
05_thread_tiling,2048x2048x64,ok,4
control_cublas_tf32,1x1x1,ok,0.34
control_cublas_tf32,33x65x16385,FAILED,154
control_cublas_tf32,1024x1024x1024,FAILED,882
"""
FAULTS = """caught  one k product dropped [02_refactored; --check] -> exit 1 (check): 3/3 shapes failed, smallest error 104x the limit
caught  one k product dropped [02_refactored; --check --beta 0] -> exit 1 (check): 3/3 shapes failed, smallest error 99x the limit
caught  Inf mishandled [16_tf32x3_mma; --check --specials] -> exit 1 (check): 3/3 shapes failed, smallest error 0.09x the limit (caught by outputs of the wrong class)
caught  one column too far [02_refactored; --check] -> exit 1 (check): 4/4 shapes failed, smallest error 0.01x the limit (caught by the guard cells)
caught  a race [12_double_buffer; --check] -> exit 99 (racecheck): racecheck: RACECHECK SUMMARY: 100 hazard
"""


class MarginsTest(TempDirTestCase):
    def make(self, limit_line="inline constexpr double kAccuracyLimitU = 32.0;"):
        repo = self.tmp
        (repo / "common").mkdir()
        (repo / "common" / "verify.hpp").write_text(limit_line + "\n")
        profiles = repo / "results" / "gpu-x" / "profiles"
        profiles.mkdir(parents=True)
        (profiles / "accuracy_suite.csv").write_text(SUITE)
        (profiles / "planted_faults_run.log").write_text(FAULTS)
        return repo

    def test_both_sides(self):
        repo = self.make()
        text = margins_section(repo, repo / "results")
        self.assertIn("| 00_cublas | 5.91 at 2048x2048x64 | 5.4x below |", text)
        self.assertIn("| 05_thread_tiling | 4 at 2048x2048x64 | 8.0x below |", text)
        # The control: its smallest error where it fails, not where it passes.
        self.assertIn("154 at 33x65x16385 | 4.8x above", text)
        self.assertIn("passes where cuBLAS does not use the tensor cores", text)
        self.assertIn("1x1x1", text.split("passes where")[1])
        # A fault's smallest margin over its runs; sanitizer catches are not margins.
        self.assertIn("| one k product dropped | 99x |", text)
        self.assertNotIn("a race", text)
        # Under the limit: what caught it instead, as the log says.
        self.assertIn("| Inf mishandled | caught by outputs of the wrong class |", text)
        self.assertIn("| one column too far | caught by the guard cells |", text)

    def test_no_limit_no_section(self):
        repo = self.make("// no limit here")
        self.assertIsNone(margins_section(repo, repo / "results"))
