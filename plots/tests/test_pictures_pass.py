"""Step 31's picture and its ports (plots/pictures_pass.py): the teams drawn are step 31's
team_size() with the PASS_THREADS and PASS_LOADS of its source, the bytes drawn are the passes'
(A and B at 4 bytes a value, A's two parts at 8) and agree with what steps 30 and 31 price, the
rule's picks where the page and the notes discuss them, and the picture: the same bytes every
time, labels on the page and apart, the committed copy current, and a change of a knob seen in it."""

import re
import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_pass as pp
from plots import pictures_split as ps
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT

NAME = "31_one_pass.svg"


def copy_sources(root: Path) -> Path:
    """A repository holding only what the picture reads: the steps' kernel files, scripts/paths.py."""
    for source in [*(REPO_ROOT / "steps").glob("*/*.cu"), REPO_ROOT / "scripts" / "paths.py"]:
        destination = root / source.relative_to(REPO_ROOT)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    return root


def edit_step(repo: Path, old: str, new: str) -> None:
    source = pt.step_source_path(repo, pp.STEP)
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new), encoding="utf-8")


def texts(canvas) -> list[str]:
    return [t.get_text() for t in canvas.ax.texts]


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return pp.draw_one_pass(repo)


class TeamsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.teams = pp.Teams(REPO_ROOT)
        cls.knobs = pt.knobs(REPO_ROOT, 31)

    def test_reads_the_knobs(self):
        self.assertEqual((self.teams.threads, self.teams.loads, self.teams.sweep_us),
                         (self.knobs["PASS_THREADS"], self.knobs["PASS_LOADS"], self.knobs["SWEEP_US"]))
        self.assertEqual((self.knobs["PASS_THREADS"], self.knobs["PASS_LOADS"], self.knobs["SWEEP_US"]), (256, 16, 1))

    def test_team_size_is_the_fewest_threads_whose_loads_cover_k(self):
        """team_size(k) in the step: 32, 64, 128 or PASS_THREADS threads, the fewest whose
        PASS_LOADS loads each reach K; the block beyond that."""
        threads, loads = self.knobs["PASS_THREADS"], self.knobs["PASS_LOADS"]
        sizes = [32 << i for i in range(8) if 32 << i <= threads]
        for k in (*range(1, 10_000, 37), 511, 512, 513, 1024, 1025, 2048, 4096, 4097, 8192, 65536, 131072):
            with self.subTest(k=k):
                want = next((t for t in sizes if t * loads >= k), threads)
                self.assertEqual(self.teams.team(k), want)
                self.assertEqual(self.teams.chunks(k), -(-k // (want * loads)))

    def test_the_limits_and_the_sanitizer_shapes(self):
        """tests/shapes.txt picks step 31's sanitizer shapes for each team: two warps at K = 700,
        four at 2000, the block at 3000, two chunks at 5000."""
        self.assertEqual(self.teams.limits(), [512, 1024, 2048, 4096])
        self.assertEqual([self.teams.team(k) for k in (256, 700, 2000, 3000, 5000)], [32, 64, 128, 256, 256])
        self.assertEqual(self.teams.chunks(5000), 2)
        self.assertEqual(self.teams.reads(4096), 1)
        self.assertEqual(self.teams.reads(4097), 2)

    def test_the_rules_charge_for_a_long_row(self):
        """split_once(): (chunks == 1 ? 0 : 2 chunks - 1) x SWEEP_US."""
        for k, us in ((4096, 0), (4097, 3), (8192, 3), (16384, 7), (65536, 31), (131072, 63)):
            with self.subTest(k=k):
                self.assertEqual(self.teams.extra_us(k), us)

    def test_the_teams_drawn(self):
        canvas = draw(REPO_ROOT)
        drawn = [t for t in texts(canvas) if t.endswith("threads a row")]
        cases = pp.team_cases(self.teams)
        self.assertEqual([k for k, _ in cases], [512, 1024, 2048, 4096, 8192])
        self.assertEqual(drawn, [f"{self.teams.team(k)} threads a row" for k, _ in cases])
        self.assertIn("2 chunks of 4,096: read for the max, then again (in L2) to split", texts(canvas))

    def test_a_team_size_other_than_the_port_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "team * PASS_LOADS < k) team *= 2;", "team * PASS_LOADS < k) team *= 4;")
            with self.assertRaises(ValueError):
                pp.Teams(repo)


class BytesTest(unittest.TestCase):
    def test_the_passes_bytes(self):
        m, n, k = 4096, 2048, 1024
        a, b = m * k * 4, k * n * 4
        once = pp.pass_segments(REPO_ROOT, 31, m, n, k)
        twice = pp.pass_segments(REPO_ROOT, 30, m, n, k)
        self.assertEqual([[s.bytes for s in p] for p in once], [[a, b, 2 * a]])
        self.assertEqual([[s.bytes for s in p] for p in twice], [[a, b], [a, 2 * a]])
        self.assertEqual(sum(s.bytes for p in twice for s in p) - sum(s.bytes for p in once for s in p), a,
                         "step 31 reads A once less")

    def test_they_are_what_the_steps_price(self):
        """Step 30 prices its second pass (A read, two parts written), step 31 the writes alone."""
        self.assertEqual(pp.priced_bytes(REPO_ROOT, 30), 12)
        self.assertEqual(pp.priced_bytes(REPO_ROOT, 31), 8)
        self.assertEqual(pp.priced_bytes(REPO_ROOT, 30), ps.pass_bytes_per_value(REPO_ROOT))
        second = pp.pass_segments(REPO_ROOT, 30, 1, 1, 1)[1]
        self.assertEqual(sum(s.bytes for s in second), pp.priced_bytes(REPO_ROOT, 30))
        writes = [s for s in pp.pass_segments(REPO_ROOT, 31, 1, 1, 1)[0] if s.what == "parts"]
        self.assertEqual(sum(s.bytes for s in writes), pp.priced_bytes(REPO_ROOT, 31))

    def test_the_bytes_drawn(self):
        drawn = texts(draw(REPO_ROOT))
        for size, (before, after) in ((1024, ("20 MB", "16 MB")), (4096, ("320 MB", "256 MB"))):
            with self.subTest(size=size):
                self.assertIn(f"M = N = K = {size}: A and B {size * size * 4 // 2**20} MB each", drawn)
                self.assertIn(before, drawn)
                self.assertIn(after, drawn)

    def test_a_second_pass_in_step_31_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "    pass<<<a_blocks + b_blocks",
                      "    // split_a_for_sgemm_kernel\n    pass<<<a_blocks + b_blocks")
            with self.assertRaises(ValueError):
                pp.pass_segments(repo, 31, 64, 64, 64)


class RuleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rule, cls.before = pp.OnePassRule(REPO_ROOT), ps.Rule(REPO_ROOT)

    def test_the_bench_shapes_keep_their_places(self):
        for shape in ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                      (1024, 1024, 8192), (256, 256, 16384)):
            with self.subTest(shape):
                self.assertEqual(self.rule.choose(*shape).path, self.before.choose(*shape).path)
        self.assertEqual(self.rule.choose(256, 256, 16384).place, ps.PIPELINE)

    def test_4096_cubed_by_hand(self):
        c = self.rule.choose(4096, 4096, 4096)
        self.assertAlmostEqual(c.pass_us, 8 * 4096 * 4096 / self.rule.gpu["dram_bytes_per_us"])
        self.assertAlmostEqual(c.gemm_us, self.before.choose(4096, 4096, 4096).gemm_us)

    def test_the_small_squares_are_split_once_now(self):
        """Step 30 kept them in the pipeline, its second pass's 3 us weighing more than their
        in-pipeline split; step 31's pass costs them only its writes."""
        for m, n, k in ((128, 128, 128), (256, 256, 256), (384, 384, 384), (512, 512, 512), (640, 640, 640),
                        (96, 200, 300)):
            with self.subTest((m, n, k)):
                self.assertEqual(self.before.choose(m, n, k).place, ps.PIPELINE)
                self.assertEqual(self.rule.choose(m, n, k).place, ps.ONCE)

    def test_the_napkin_line_moves_to_two_thirds(self):
        self.assertAlmostEqual(self.rule.napkin_n() / self.before.napkin_n(), 8 / 12)
        self.assertEqual(self.rule.choose(16384, 512, 2048).place, ps.ONCE)
        self.assertEqual(self.before.choose(16384, 512, 2048).place, ps.PIPELINE)
        for m, n, k in ((32768, 128, 4096), (8192, 64, 8192), (16384, 256, 1024), (65536, 64, 256)):
            self.assertEqual(self.rule.choose(m, n, k).place, ps.PIPELINE)

    def test_long_k_pays_its_sweeps(self):
        c = self.rule.choose(64, 64, 65536)
        self.assertAlmostEqual(c.pass_us, 8 * 64 * 65536 / self.rule.gpu["dram_bytes_per_us"] + 31)
        self.assertEqual(c.place, ps.PIPELINE)


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(pp.PICTURES), [NAME])
        self.assertIn("plots.pictures_pass", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = pp.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, pp.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)
        self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / pp.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_pass")
        self.assertEqual(path.read_text(encoding="utf-8"), pp.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_pass")

    def test_labels_stay_on_the_page_and_apart(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = pp.draw_one_pass(REPO_ROOT)
            boxes = canvas.text_boxes()
        for text, (x0, y0, x1, y1) in boxes:
            self.assertTrue(x0 >= 0 and y0 >= 0 and x1 <= canvas.width and y1 <= canvas.height,
                            f"{text!r} leaves the page: {(x0, y0, x1, y1)}")
        for i, (text, a) in enumerate(boxes):
            for other, b in boxes[i + 1:]:
                apart = a[2] <= b[0] + 1 or b[2] <= a[0] + 1 or a[3] <= b[1] + 1 or b[3] <= a[1] + 1
                self.assertTrue(apart, f"{text!r} covers {other!r}")

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = pp.PICTURES[NAME](repo)
            self.assertEqual(before, pp.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            edit_step(repo, "SGEMM_KNOB(PASS_LOADS, 16)", "SGEMM_KNOB(PASS_LOADS, 8)")
            teams = pp.Teams(repo)
            self.assertEqual((teams.team(1024), teams.limits()[-1]), (128, 2048))
            self.assertIn("128 threads a row", texts(draw(repo)))
            self.assertNotEqual(pp.PICTURES[NAME](repo), before)
            edit_step(repo, "SGEMM_KNOB(SWEEP_US, 1)", "SGEMM_KNOB(SWEEP_US, 2)")
            self.assertEqual(pp.Teams(repo).extra_us(4096), 6)
            self.assertTrue(any(re.search(r"SWEEP_US = 2 us", t) for t in texts(draw(repo))))


if __name__ == "__main__":
    unittest.main()
