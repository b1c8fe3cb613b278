"""Step 32's picture and its ports (plots/pictures_demand.py): the splitters' vectors drawn are the
step's assignment (PER = ceil(VECTORS / SPLITTERS) contiguous vectors, at most three rows, no
bank conflicts) with the BM, TUNE_SPLIT and SPLITTERS of its source; the block's roles and
barriers are the step's (THREADS arrivals on `decided`, warp 0's arrival on `empty`, its read of B
STAGES-1 uses behind); the schematic ring keeps the step's order of events; the rule's price of
splitting once is the step's (the whole pass), with the picks the page and the notes discuss; and
the picture: the same bytes every time, labels on the page and apart, the committed copy current,
and a change of a knob seen in it."""

import re
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_demand as pd
from plots import pictures_pass as pp
from plots import pictures_split as ps
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT
from plots.tests.test_pictures_pass import copy_sources, texts

NAME = "32_scaled_on_demand.svg"


def edit_step(repo: Path, old: str, new: str) -> None:
    source = pt.step_source_path(repo, pd.STEP)
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new), encoding="utf-8")


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return pd.draw_scaled_on_demand(repo)


class AssignmentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = pd.Assignment.read(REPO_ROOT)
        cls.knobs = pt.knobs(REPO_ROOT, 32)

    def test_reads_the_knobs(self):
        kn = self.knobs
        vectors = kn["BM"] * kn["TUNE_SPLIT"] * 4 // 16
        self.assertEqual((self.a.vectors, self.a.splitters, self.a.row_vectors),
                         (vectors, kn["SPLITTERS"], kn["TUNE_SPLIT"] * 4 // 16))
        self.assertEqual(self.a.per, -(-vectors // kn["SPLITTERS"]))
        self.assertEqual((self.a.vectors, self.a.splitters, self.a.row_vectors, self.a.per), (1024, 96, 8, 11))

    def test_every_vector_once_in_contiguous_runs(self):
        seen = [v for i in range(self.a.splitters) for v in self.a.vectors_of(i)]
        self.assertEqual(seen, list(range(self.a.vectors)), "each vector once, splitter after splitter")
        for v in range(self.a.vectors):
            self.assertIn(v, self.a.vectors_of(self.a.splitter_of(v)))
        self.assertEqual(self.a.busy(), 94)
        self.assertEqual(list(self.a.vectors_of(93)), [1023])
        self.assertEqual([len(self.a.vectors_of(i)) for i in (94, 95)], [0, 0])

    def test_at_most_three_rows_a_splitter(self):
        """The step keeps three registers (`unsigned seen[3]`): no splitter may reach a fourth row."""
        self.assertEqual(self.a.most_rows(), 3)
        self.assertEqual(self.a.rows_of(0), [0, 1])
        self.assertEqual(self.a.rows_of(2), [2, 3, 4])
        self.assertEqual(self.a.rows_of(93), [127])

    def test_no_bank_conflicts(self):
        """Any eight neighbouring splitters (a quarter warp's 128 bytes a wavefront) start in eight
        different 16-byte groups, the stride of PER vectors being odd."""
        self.assertEqual(self.a.bank_groups(), [0, 3, 6, 1, 4, 7, 2, 5])
        for first in range(0, self.a.splitters - 8):
            groups = {(i * self.a.per) % pd.BANK_GROUPS for i in range(first, first + 8)}
            self.assertEqual(len(groups), 8, first)

    def test_step_31s_loop_reaches_eleven_rows(self):
        """Why the first build kept eleven maxima: vectors i, i + 96, ... lie in 11 rows."""
        self.assertEqual(self.a.strided_rows(0), list(range(0, 128, 12)))
        self.assertEqual(len(self.a.strided_rows(0)), self.a.per)

    def test_what_the_step_asserts_is_refused(self):
        """`static_assert(PER % 2 == 1 && PER < 16, ...)`: 64 splitters would take 16 vectors each."""
        with self.assertRaises(ValueError):
            pd.Assignment(1024, 64, 8)
        self.assertEqual(pd.Assignment(1024, 80, 8).per, 13)
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "SGEMM_KNOB(SPLITTERS, 96)", "SGEMM_KNOB(SPLITTERS, 64)")
            with self.assertRaises(ValueError):
                pd.Assignment.read(repo)

    def test_another_loop_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "const int first = i0 * PER, first_row = first / 8;",
                      "const int first = i0, first_row = first / 8;")
            with self.assertRaises(ValueError):
                pd.Assignment.read(repo)


class BlockTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.block = pd.Block.read(REPO_ROOT)
        cls.knobs = pt.knobs(REPO_ROOT, 32)

    def test_the_roles(self):
        kn = self.knobs
        self.assertEqual((self.block.stages, self.block.splitters, self.block.consumers),
                         (kn["STAGES"], kn["SPLITTERS"], kn["BN"] // 64))
        self.assertEqual(self.block.threads, 128 * (1 + kn["BN"] // 64))
        self.assertEqual((self.block.threads, self.block.empty_arrivals), (384, 257))
        self.assertEqual(self.block.unscaled, kn["UNSCALED_EXPONENT"])

    def test_a_decision_elsewhere_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "barrier_init(decided, THREADS);", "barrier_init(decided, SPLITTERS);")
            with self.assertRaises(ValueError):
                pd.Block.read(repo)

    def test_the_rings_order_of_events(self):
        for stages in (2, 3, 4, 6):
            with self.subTest(stages=stages):
                s = pd.schedule(stages)
                tiles = pd.TILES
                uses = 2 * tiles
                self.assertEqual([len(s.issue), len(s.read), len(s.split), len(s.multiply)], [uses] * 4)
                for n in range(uses):
                    land = s.issue[n] + pd.LAND
                    self.assertGreaterEqual(s.split[n][0], land, "a tile is split once it has landed")
                    self.assertGreaterEqual(s.multiply[n][0], s.split[n][1], "and multiplied once it is split")
                    self.assertGreaterEqual(s.read[n][0], land, "warp 0 reads B once it has landed")
                    if n % tiles >= stages:
                        self.assertGreaterEqual(s.issue[n], max(s.multiply[n - stages][1], s.read[n - stages][1]),
                                                "a stage is refilled once the consumers and warp 0 gave it back")
                    behind = n + stages - 1
                    if behind < (n // tiles + 1) * tiles:
                        self.assertGreater(s.read[n][0], s.issue[behind], "warp 0 reads STAGES-1 uses behind")
                    if n:
                        for lane in (s.split, s.multiply, s.read):
                            self.assertGreaterEqual(lane[n][0], lane[n - 1][1] - 1e-9, "one at a time in a role")
                first = max(s.multiply[tiles - 1][1], s.split[tiles - 1][1], s.read[tiles - 1][1])
                self.assertGreaterEqual(s.decide[0], first, "every role has finished its first sweep")
                self.assertGreaterEqual(min(s.issue[tiles:]), s.decide[1], "the second sweep comes after the vote")
                self.assertEqual(s.epilogue[0], s.multiply[-1][1])


class RuleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rule, cls.before = pd.DemandRule(REPO_ROOT), pp.OnePassRule(REPO_ROOT)

    def test_the_whole_pass_is_priced(self):
        self.assertEqual(pd.priced_pass(REPO_ROOT), (12, 4))
        c = self.rule.choose(4096, 4096, 4096)
        bw = self.rule.gpu["dram_bytes_per_us"]
        self.assertAlmostEqual(c.pass_us, (12 + 4) * 4096 * 4096 / bw + 3)
        self.assertAlmostEqual(c.gemm_us, self.before.choose(4096, 4096, 4096).gemm_us)
        self.assertAlmostEqual(self.rule.choose(64, 64, 65536).pass_us,
                               (12 * 64 * 65536 + 4 * 65536 * 64) / bw + 3 + 31)

    def test_the_bench_shapes_keep_their_places(self):
        for shape in ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                      (1024, 1024, 8192), (256, 256, 16384)):
            with self.subTest(shape):
                self.assertEqual(self.rule.choose(*shape).path, self.before.choose(*shape).path)
        self.assertEqual(self.rule.choose(256, 256, 16384).place, ps.PIPELINE)
        self.assertEqual(self.rule.choose(4096, 4096, 4096).place, ps.ONCE)

    def test_the_shapes_that_move_to_the_pipeline(self):
        """Step 31 split them once; with the pass gone from the pipeline, step 32's rule keeps them there."""
        for m, n, k in ((128, 128, 128), (256, 256, 256), (384, 384, 384), (512, 512, 512), (640, 640, 640),
                        (96, 200, 300), (16384, 512, 2048), (64, 8192, 8192), (128, 32768, 4096),
                        (768, 768, 24576)):
            with self.subTest((m, n, k)):
                self.assertEqual(self.before.choose(m, n, k).place, ps.ONCE)
                self.assertEqual(self.rule.choose(m, n, k).place, ps.PIPELINE)

    def test_the_h200s_faster_memory(self):
        """With 4.8 TB/s, 16384 x 512 x 2048 stays split once, 16384 x 256 x 1024 and 512 x 512 x 32768 move."""
        gpu = dict(self.rule.gpu, dram_bytes_per_us=4.8e6)
        rule, before = pd.DemandRule(REPO_ROOT, gpu=gpu), pp.OnePassRule(REPO_ROOT, gpu=gpu)
        self.assertEqual(rule.choose(16384, 512, 2048).place, ps.ONCE)
        for shape in ((16384, 256, 1024), (512, 512, 32768)):
            self.assertEqual((before.choose(*shape).place, rule.choose(*shape).place), (ps.ONCE, ps.PIPELINE))
        self.assertEqual(rule.choose(768, 768, 24576).place, ps.ONCE)

    def test_step_31s_pass_in_the_pipeline(self):
        """The napkin math of the page: 32 MB at 256 x 256 x 16384, 258 MB at 8192 x 64 x 8192."""
        self.assertEqual(pd.step31_pass_bytes(256, 256, 16384), 32 * 2**20)
        self.assertEqual(pd.step31_pass_bytes(8192, 64, 8192), 258 * 2**20)


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(pd.PICTURES), [NAME])
        self.assertIn("plots.pictures_demand", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = pd.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, pd.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)
        self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / pd.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_demand")
        self.assertEqual(path.read_text(encoding="utf-8"), pd.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_demand")

    def test_labels_stay_on_the_page_and_apart(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = pd.draw_scaled_on_demand(REPO_ROOT)
            boxes = canvas.text_boxes()
        for text, (x0, y0, x1, y1) in boxes:
            self.assertTrue(x0 >= 0 and y0 >= 0 and x1 <= canvas.width and y1 <= canvas.height,
                            f"{text!r} leaves the page: {(x0, y0, x1, y1)}")
        for i, (text, a) in enumerate(boxes):
            for other, b in boxes[i + 1:]:
                apart = a[2] <= b[0] + 1 or b[2] <= a[0] + 1 or a[3] <= b[1] + 1 or b[3] <= a[1] + 1
                self.assertTrue(apart, f"{text!r} covers {other!r}")

    def test_what_is_drawn(self):
        drawn = texts(draw(REPO_ROOT))
        self.assertIn("96 splitters", drawn)
        self.assertIn("2 consumer warpgroups", drawn)
        self.assertIn("decide: an mbarrier, 384 arrivals", drawn)
        self.assertIn("splitter 2: vectors 22-32, rows 2, 3, 4", drawn)
        self.assertEqual([t for t in drawn if t.startswith("row ")], [f"row {r}" for r in range(6)])
        self.assertEqual([t for t in drawn if re.fullmatch(r"k\d", t)].count("k0"), 6,
                         "k0 in three roles, both sweeps")
        self.assertTrue(any("PER = ceil(1,024 / 96) = 11" in t for t in drawn))
        self.assertTrue(any("[2^-100, 2^101)" in t for t in drawn))
        self.assertTrue(any("12 M K + 4 K N bytes" in t and "PASS_US = 3 us" in t for t in drawn))

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = pd.PICTURES[NAME](repo)
            self.assertEqual(before, pd.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            edit_step(repo, "SGEMM_KNOB(STAGES, 4)", "SGEMM_KNOB(STAGES, 3)")
            self.assertTrue(any("STAGES - 1 = 2 uses behind" in t for t in texts(draw(repo))))
            self.assertNotEqual(pd.PICTURES[NAME](repo), before)
            edit_step(repo, "SGEMM_KNOB(UNSCALED_EXPONENT, 100)", "SGEMM_KNOB(UNSCALED_EXPONENT, 90)")
            self.assertTrue(any("[2^-90, 2^91)" in t for t in texts(draw(repo))))
            edit_step(repo, "SGEMM_KNOB(SPLITTERS, 96)", "SGEMM_KNOB(SPLITTERS, 64)")
            with self.assertRaises(ValueError):
                pd.PICTURES[NAME](repo)


if __name__ == "__main__":
    unittest.main()
