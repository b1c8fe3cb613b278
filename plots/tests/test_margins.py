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
caught  Inf mishandled [22_tf32x3_mma; --check --specials] -> exit 1 (check): 3/3 shapes failed, smallest error 0.09x the limit (caught by outputs of the wrong class)
caught  one column too far [02_refactored; --check] -> exit 1 (check): 4/4 shapes failed, smallest error 0.01x the limit (caught by the guard cells)
caught  a race [12_double_buffer; --check] -> exit 99 (racecheck): racecheck: RACECHECK SUMMARY: 100 hazard
caught  sums in a changing order [15_split_k; --check] -> exit 1 (check): 3/3 shapes failed, by different bits on a second run (errors within the limit)
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

    def test_every_control_must_fail(self):
        repo = self.make()
        controls = repo / "results" / "gpu-x" / "controls"
        controls.mkdir()
        header = ("step,variant,m,n,k,alpha,beta,reps,ms_median,ms_min,gflops,gflops_best,cublas_ms_median,"
                  "cublas_gflops,ratio_to_cublas,max_err_over_bound,err_max_u,err_rms_u,cublas_err_max_u,"
                  "cublas_err_rms_u,err_rms_vs_cublas,verified,gpu,sm_count,sm_clock_mhz,driver,runtime,cublas,"
                  "arch,build_type,git_rev,timestamp\n")
        row = ("x,,1024,1024,1024,1,0,20,0.1,0.1,1,1,0.1,1,1,0,{err},1,0.5,0.4,2,0,GPU X,132,1980,13.0,13.0,"
               "13.1.0,90,Release,abc,2026-11-23T00:00:00Z\n")
        (controls / "one_pass.csv").write_text(header + row.format(err=640))
        text = margins_section(repo, repo / "results")
        # Listed with the must-fail rows, its margin above the limit, after the cuBLAS control.
        self.assertIn("| control_one_pass (must fail) | — | — | 640 at 1024x1024x1024 | 20.0x above |", text)
        self.assertLess(text.index("control_cublas_tf32 (must fail)"), text.index("control_one_pass"))

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
        self.assertIn("| sums in a changing order | caught by different bits on a second run |", text)

    def test_expected_failures_are_no_margin(self):
        """Rows of a step expected to fail a set (expect_fail.SET): left out of its margins,
        listed apart with their smallest error where they fail."""
        repo = self.make()
        suite = repo / "results" / "gpu-x" / "profiles" / "accuracy_suite.csv"
        suite.write_text("program,shape,check,err_max_u,set,expected\n"
                         + "".join(f"{line},primes,\n" for line in SUITE.splitlines()[1:])
                         + "22_tf32x3_mma,2048x2048x64,ok,3.5,split_k,\n"
                           "22_tf32x3_mma,1x1x1,ok,0.2,subnormal_a,fail\n"
                           "22_tf32x3_mma,129x131x67,FAILED,5910,subnormal_a,fail\n"
                           "22_tf32x3_mma,255x257x300,FAILED,2300,subnormal_a,fail\n"
                           "27_scaled_small_parts,129x131x67,ok,4.1,subnormal_a,\n"
                           "23_wgmma,129x131x67,ok,3,subnormal_b,fail\n")
        text = margins_section(repo, repo / "results")
        self.assertIn("| 22_tf32x3_mma | 3.5 at 2048x2048x64 | 9.1x below |", text)
        self.assertIn("| 27_scaled_small_parts | 4.1 at 129x131x67 | 7.8x below |", text)
        self.assertIn("Expected failures (`expect_fail.*` in tests/shapes.txt)", text)
        self.assertIn("- 22_tf32x3_mma, subnormal_a: 2 of 3 shapes fail, the smallest max error where one does "
                      "2.3e+03 u at 255x257x300", text)
        self.assertIn("- 23_wgmma, subnormal_b: no shape fails (1 passed)", text)
        self.assertIn("| 00_cublas | 5.91 at 2048x2048x64 | 5.4x below |", text)

    def test_no_limit_no_section(self):
        repo = self.make("// no limit here")
        self.assertIsNone(margins_section(repo, repo / "results"))
