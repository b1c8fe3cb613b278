"""The scripts' shared readers agree with each other and with the files they read.

Run by scripts/test.sh:  python3 -m unittest discover -s tests -p "test_*.py"
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import project  # noqa: E402
import stepdiff  # noqa: E402
import sweep  # noqa: E402
import tune  # noqa: E402

SIZE = re.compile(r"^\d+(x\d+x\d+)?$")  # N (a cube) or MxNxK


def lib_sh(*command: str) -> str:
    """The output of a function of scripts/lib.sh."""
    script = f'source "{project.ROOT / "scripts" / "lib.sh"}"; "$@"'
    return subprocess.run(["bash", "-c", script, "lib.sh", *command], check=True,
                          capture_output=True, text=True).stdout


class Facts(unittest.TestCase):
    def test_the_shell_and_python_list_the_same_steps(self):
        self.assertEqual(lib_sh("list_steps").split(), project.steps())
        self.assertIn("12_double_buffer", project.steps())
        for step in project.steps():
            self.assertTrue(project.step_source(step).is_file())

    def test_the_shell_and_python_name_a_gpu_the_same(self):
        for name in ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA RTX A6000", "NVIDIA GeForce RTX 4090"):
            self.assertEqual(lib_sh("gpu_slug", name).strip(), tune.slug(name))
        self.assertEqual(tune.slug("NVIDIA H200"), "nvidia-h200")

    def test_shape_sets_are_well_formed(self):
        names = []
        for line in (project.ROOT / "tests" / "shapes.txt").read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split()
            names.append(fields[0])
            if fields[0].startswith("expect_fail."):
                continue  # test_expected_failures_name_sets_and_steps
            if fields[0].startswith("sanitize_exponents."):
                with self.subTest(set=fields[0]):  # scripts/sanitize.sh: STEP's shapes again with --exponents EA,EB
                    self.assertEqual(len(fields), 2)
                    self.assertIn(fields[0].split(".", 1)[1], project.steps())
                    ea, eb = (int(e) for e in fields[1].split(","))
                    self.assertTrue(-140 <= ea <= 127 and -140 <= eb <= 127, fields[1])
                continue
            with self.subTest(set=fields[0]):
                self.assertTrue(all(SIZE.match(s) for s in fields[1].split(",")), fields[1])
                if fields[0].startswith("gpu."):
                    self.assertGreaterEqual(len(fields), 4, "a gpu.* set has SET SIZES ALPHA BETA [OPTIONS...]")
                    float(fields[2]), float(fields[3])
                else:
                    self.assertEqual(len(fields), 2)
        self.assertEqual(len(names), len(set(names)), "set names are unique")
        for name in ("sanitize", "sanitize_timed", "faults.edges", "bench", "variant_check"):
            self.assertEqual(lib_sh("shapes", name).strip(), project.shapes(name))

    def test_expected_failures_name_sets_and_steps(self):
        """expect_fail.SET STEP...: SET is a gpu.* set, every STEP a step of this tree, once."""
        groups = {name: extra for name, _, _, _, extra in project.gpu_groups()}
        failures = project.expected_failures()
        self.assertIn("subnormal_a", failures)
        self.assertIn("22_tf32x3_mma", failures["subnormal_a"])
        for name, steps in failures.items():
            with self.subTest(set=name):
                self.assertIn(name, groups)
                self.assertTrue(steps, "an expect_fail line names at least one step")
                self.assertEqual(len(steps), len(set(steps)))
                for step in steps:
                    self.assertIn(step, project.steps())

    def test_path_sets_agree_with_the_port(self):
        """tests/shapes.txt's path.SMS.PATH sets: scripts/paths.py's port of step 20's choices
        takes PATH for every shape (on the GPU the suite checks the step itself)."""
        sys.path.insert(0, str(project.ROOT / "scripts"))
        import paths
        sets = [line.split() for line in (project.ROOT / "tests" / "shapes.txt").read_text().splitlines()
                if line.startswith("path.")]
        self.assertEqual(len(sets), 20)
        for name, sizes in sets:
            _, sms, path = name.split(".", 2)
            for size in sizes.split(","):
                m, n, k = ([int(x) for x in size.split("x")] * 3)[:3] if "x" not in size else map(int, size.split("x"))
                with self.subTest(set=name, size=size):
                    self.assertEqual(paths.path(m, n, k, int(sms))[0], path)

    def test_ncu_metric_sets(self):
        profile, compare = project.ncu_metrics("profile"), project.ncu_metrics("compare")
        self.assertIn("smsp__inst_executed.sum", profile)
        self.assertTrue(compare and not set(profile) & set(compare))
        listed = subprocess.run([sys.executable, str(project.ROOT / "scripts" / "ncu_collect.py"), "--list",
                                 "profile,compare"], check=True, capture_output=True, text=True).stdout
        self.assertEqual(listed.strip().split(","), profile + compare)


class BuildAlone(unittest.TestCase):
    # The binary goes to build-alone/, which .gitignore's /build*/ covers.
    LINE = re.compile(r"^// Build alone: mkdir -p build-alone && nvcc (.*)$", re.M)

    def test_every_step_shows_the_nvcc_line_that_builds_it_alone(self):
        for step in project.steps():
            with self.subTest(step=step):
                lines = self.LINE.findall(project.step_source(step).read_text())
                self.assertEqual(len(lines), 1, "one '// Build alone: mkdir -p build-alone && nvcc ...' line in the header")
                words = lines[0].split()
                source = project.step_source(step)
                self.assertIn(str(source.relative_to(project.ROOT)), words)
                for word in ("-std=c++20", "-Icommon", "common/*.cpp", "common/*.cu", "-lcublas"):
                    self.assertIn(word, words)
                self.assertEqual(words[-2:], ["-o", "build-alone/" + source.stem])
                # A named architecture, so the line builds on a machine without a GPU too
                # (-arch=native falls back to nvcc's default there, which has no cp.async).
                self.assertIn("-gencode=arch=compute_90a,code=sm_90a" if int(step[:2]) >= 23 else "-arch=sm_80", words)

    def test_build_alone_output_is_ignored_by_git(self):
        ignored = subprocess.run(["git", "check-ignore", "-q", "build-alone/initial"], cwd=project.ROOT,
                                 capture_output=True)
        if ignored.returncode == 128:  # not a git checkout (an exported tree)
            self.skipTest("not a git checkout")
        self.assertEqual(ignored.returncode, 0, ".gitignore must cover build-alone/")


class StepDiff(unittest.TestCase):
    OLD = ["constexpr int TILE = 16;   // a knob", "constexpr int KEEP = 1;", "int f() { return 1; }", ""]

    def counts(self, new_lines):
        with tempfile.TemporaryDirectory() as tmp:
            old, new = Path(tmp, "old.cu"), Path(tmp, "new.cu")
            old.write_text("\n".join(self.OLD))
            new.write_text("\n".join(new_lines))
            return stepdiff.diff_counts(old, new)

    def test_a_retuned_knob_is_not_code(self):
        self.assertEqual(self.counts(["constexpr int TILE = 32;   // a knob"] + self.OLD[1:]), (0, 0, [("TILE", "16", "32")]))

    def test_realigned_knob_lines_are_not_code(self):
        self.assertEqual(self.counts(["constexpr int TILE = 32;  // a knob"] + self.OLD[1:])[:2], (0, 0))

    def test_code_and_new_knobs_are_code(self):
        added, removed, retuned = self.counts(self.OLD[:2] + ["constexpr int NEW = 4;", "int f() { return 2; }", ""])
        self.assertEqual((added, removed, retuned), (2, 1, []))

    def test_a_changed_knob_comment_is_code(self):
        self.assertEqual(self.counts(["constexpr int TILE = 16;   // another knob"] + self.OLD[1:]), (1, 1, []))


# A verbose CTest log as the GPU suite writes it (ctest -j -V: the tests' lines interleave),
# with an expected failure run through tests/expect_exit.sh.
CTEST_LOG = """test 58
    Start 58: gpu.01_initial.tiny_a

58: Test command: /b/bin/01_initial "--check" "--sizes" "1x1x1,129x131x67" "--alpha" "1" "--beta" "0" "--exponents" "-118,118"
test 700
    Start 700: gpu.22_tf32x3_mma.subnormal_a

700: Test command: /usr/bin/sh "/r/tests/expect_exit.sh" "1" "/b/bin/22_tf32x3_mma" "--check" "--sizes" "1x1x1,129x131x67" "--exponents" "-134,120"
58: errors in units of u = 2^-24 of |alpha||A||B| + |beta||C| against an FP64 reference; FP32-grade limit 32 u on random inputs
58:       1       1       1  ok        0.25     0.25     0.25   0.31
700:       1       1       1  ok          0        0        0   0.30
58:                          exponents: A 0% subnormal, 0% zero; B 0% subnormal, 0% zero
58:     129     131      67  ok        3.02    0.611    0.598   0.01
700:     129     131      67  FAILED: 8449 wrong element(s), 0 guard cell(s) overwritten; error max 5.91e+03 u, RMS 900 u (FP32-grade limit 32 u)
700:                          exponents: A 100% subnormal, 0% zero; B 0% subnormal, 0% zero
1/2 Test  #58: gpu.01_initial.tiny_a ..............   Passed    1.02 sec
2/2 Test #700: gpu.22_tf32x3_mma.subnormal_a ......   Passed    1.10 sec
"""


class AccuracyFromTheSuiteLog(unittest.TestCase):
    def test_rows_name_their_set_and_the_expected_failures(self):
        import accuracy_margins
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp, "ctest.log")
            log.write_text(CTEST_LOG)
            rows = accuracy_margins.rows_from_ctest_log(log)
        self.assertEqual(rows, ["program,shape,check,err_max_u,set,expected",
                                "01_initial,1x1x1,ok,0.25,tiny_a,",
                                "22_tf32x3_mma,1x1x1,ok,0,subnormal_a,fail",
                                "01_initial,129x131x67,ok,3.02,tiny_a,",
                                "22_tf32x3_mma,129x131x67,FAILED,5.91e+03,subnormal_a,fail"])

    def test_every_gpu_set_parses(self):
        """Every gpu.* set's options are ones a step takes: the suite's lines come back as rows."""
        import accuracy_margins
        self.assertIn("subnormal_a", [name for name, *_ in accuracy_margins.suite_groups()])
        for name, sizes, alpha, beta, extra in accuracy_margins.suite_groups():
            with self.subTest(set=name):
                self.assertTrue(all(SIZE.match(s) for s in sizes.split(",")))
                float(alpha), float(beta)
                self.assertTrue(all(e.startswith("--") or not e.startswith("-") or e[1:2].isdigit()
                                    for e in extra), extra)


class Variants(unittest.TestCase):
    def test_make_variant_replaces_one_knob(self):
        text = project.step_source("12_double_buffer").read_text()
        variant = sweep.make_variant(text, {"TUNE_SPLIT": "16"})
        self.assertIn("constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 16);", variant)
        # The knob's line, and the define that makes the value win over a tuning.
        self.assertTrue(variant.startswith('#define SGEMM_VARIANT_KNOBS "TUNE_SPLIT=16"'))
        self.assertEqual(stepdiff.line_counts(text.splitlines(), variant.splitlines()), (2, 1))
        with self.assertRaises(SystemExit):
            sweep.make_variant(text, {"NO_SUCH_KNOB": "1"})

    def test_variant_names_are_file_and_target_names(self):
        self.assertEqual(sweep.variant_name("TUNE_SPLIT=16;MIN_BLOCKS=2"), "TUNE_SPLIT_16_MIN_BLOCKS_2")


def stand_in_bench(tmp: str, step_exit: int, *args: str):
    """bench.sh in a copy of the scripts under tmp, with a stand-in GPU, CMake and step 01 (which
    writes a row to its --csv and its arguments beside its binary; the TF32 control writes
    ARGS too) and pip without an index. Returns (the finished process, the copy's root)."""
    repo, fake = Path(tmp, "repo"), Path(tmp, "bin")
    for path in ("scripts/bench.sh", "scripts/lib.sh", "scripts/regenerate.sh", "scripts/ensure_deps.sh",
                 "tests/shapes.txt", "plots/requirements.txt"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes((project.ROOT / path).read_bytes())
        (repo / path).chmod(0o755)
    (repo / "steps" / "01_initial").mkdir(parents=True)
    fake.mkdir()
    scripts = {fake / "nvidia-smi": "echo 'NVIDIA Stand-In GPU'",
               fake / "cmake": "exit 0",
               repo / "build" / "bin" / "01_initial": 'echo "$@" > "$0.args"; echo "step,gflops" > "$4"; '
                                                      'echo "01_initial,1" >> "$4"; exit %d' % step_exit,
               repo / "build" / "bin" / "control_cublas_tf32": 'echo "$@" > "$0.args"; exit 1'}
    for path, body in scripts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n" + body + "\n")
        path.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (fake, os.environ["PATH"]), PIP_NO_INDEX="1",
               PIP_CONFIG_FILE=os.devnull)
    r = subprocess.run(["bash", str(repo / "scripts" / "bench.sh"), *args], env=env, capture_output=True, text=True)
    return r, repo


class BenchWithoutPlotPackages(unittest.TestCase):
    """bench.sh on a GPU machine where the plot tool's packages cannot be installed: the results
    stay, one line says the plots were not regenerated, and exit code 4 tells that apart from a
    failed measurement (1). The GPU, CMake and the steps are stand-ins; pip has no index."""

    def run_bench(self, step_exit, *args):
        with tempfile.TemporaryDirectory() as tmp:
            r, repo = stand_in_bench(tmp, step_exit, *args)
            results = repo / "results" / "nvidia-stand-in-gpu" / "01_initial.csv"
            return r, results.is_file()

    def test_results_kept_and_exit_4_when_plots_cannot_be_made(self):
        r, kept = self.run_bench(step_exit=0)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertTrue(kept)
        last = r.stderr.strip().splitlines()[-1]
        self.assertRegex(last, r"^bench\.sh: results written to results/nvidia-stand-in-gpu/, but the plots and tables "
                               r"were NOT regenerated .*run scripts/regenerate\.sh")
        self.assertNotIn("Traceback", r.stderr)

    def test_a_failed_measurement_is_still_exit_1(self):
        r, kept = self.run_bench(step_exit=1)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertTrue(kept)
        self.assertIn("plots and tables were NOT regenerated", r.stderr)
        self.assertRegex(r.stderr.strip().splitlines()[-1], r"^bench\.sh: FAILED .*01_initial")

    def test_a_step_that_cannot_run_here_is_skipped_not_failed(self):
        """Exit 3 (no GPU, or needs this GPU cannot meet: sm_90a code, shared memory) is a skip."""
        r, _ = self.run_bench(3, "--no-plots")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bench.sh: skipped, as they cannot run on this GPU (each said why above): 01_initial", r.stdout)
        self.assertNotIn("FAILED", r.stdout + r.stderr)


class BenchSurvey(unittest.TestCase):
    """bench.sh --survey: the survey.* sets of tests/shapes.txt, timed for about 100 ms a shape,
    into results/<gpu>/survey/, without the TF32 control or the plots; never with --sizes or --sms."""

    def test_rejects_sizes_and_sms(self):
        for args in (["--survey", "--sms", "88"], ["--sizes", "1024", "--survey"]):
            with self.subTest(args=args), tempfile.TemporaryDirectory() as tmp:
                r, repo = stand_in_bench(tmp, 0, *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertRegex(r.stderr, r"^bench\.sh: --survey .*--sizes.*--sms")
                self.assertFalse((repo / "results").exists())
                self.assertFalse((repo / "build" / "bin" / "01_initial.args").exists())

    def test_survey_rows_go_to_their_own_folder(self):
        with tempfile.TemporaryDirectory() as tmp:
            r, repo = stand_in_bench(tmp, 0, "--survey", "--steps", "01_initial")
            self.assertEqual(r.returncode, 0, r.stderr)  # 0, not 4: no plots were asked for
            gpu = repo / "results" / "nvidia-stand-in-gpu"
            self.assertTrue((gpu / "survey" / "01_initial.csv").is_file())
            self.assertFalse((gpu / "01_initial.csv").exists())
            self.assertFalse((gpu / "controls").exists())
            self.assertFalse((repo / "build" / "bin" / "control_cublas_tf32.args").exists())
            args = (repo / "build" / "bin" / "01_initial.args").read_text().split()
            sizes = ",".join(sizes for _, sizes in project.survey())
            self.assertEqual(args[:2], ["--sizes", sizes])
            self.assertEqual(args[-2:], ["--time-ms", "100"])
            self.assertEqual(len(sizes.split(",")), 45)
            cubes = [s if "x" in s else f"{s}x{s}x{s}" for s in sizes.split(",")]
            bench = [s if "x" in s else f"{s}x{s}x{s}" for s in project.shapes("bench").split(",")]
            self.assertEqual(len(set(cubes)), 45, "no shape twice in the survey")
            self.assertFalse(set(cubes) & set(bench), "the survey's shapes are not the bench's")
            self.assertIn("results in results/nvidia-stand-in-gpu/survey/", r.stdout)

    def test_survey_plots_only_when_asked(self):
        with tempfile.TemporaryDirectory() as tmp:
            r, _ = stand_in_bench(tmp, 0, "--survey", "--plots")
            self.assertEqual(r.returncode, 4, r.stderr)  # asked, and pip has no index here

    def test_lib_sh_survey_helpers(self):
        kinds = project.survey()
        self.assertEqual([kind for kind, _ in kinds], ["squares", "odd", "transformer", "skinny", "small", "k_heavy"])
        self.assertEqual(lib_sh("survey_shapes").strip(), ",".join(sizes for _, sizes in kinds))
        for kind, sizes in kinds:
            self.assertEqual(lib_sh("survey_kind", sizes.split(",")[-1]).strip(), kind)
        self.assertEqual(lib_sh("survey_kind", "1000x1000x1000").strip(), "squares")
        with self.assertRaises(subprocess.CalledProcessError):
            lib_sh("survey_kind", "4096")


if __name__ == "__main__":
    unittest.main()
