"""The time and work-split pictures (plots/pictures_time.py): each renders to an SVG that keeps
its labels on the page, the same bytes every time; the port of the launch heuristics agrees
with scripts/paths.py; and a heuristic-driven picture follows the knobs it is drawn from."""

import re
import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT

NAMES = ("09_async_copy.svg 10_vector_copy.svg 11_overlap.svg 12_double_buffer.svg 13_multi_stage.svg "
         "15_split_k.svg 16_stream_k.svg 17_copy_instructions.svg 18_stream_k_first.svg "
         "19_short_last_piece.svg 24_tma_ring.svg 25_warp_specialized.svg 26_tensor_split_k.svg").split()

try:
    import cairosvg
except (ImportError, OSError):  # not in plots/requirements.txt: the PNG check is a bonus
    cairosvg = None


class PicturesTest(unittest.TestCase):
    def test_names(self):
        self.assertEqual(sorted(pt.PICTURES), sorted(NAMES))

    def test_every_picture_renders_the_same_bytes_twice(self):
        for name in NAMES:
            with self.subTest(name):
                svg = pt.PICTURES[name](REPO_ROOT)
                self.assertEqual(svg, pt.PICTURES[name](REPO_ROOT))
                root = ElementTree.fromstring(svg.encode("utf-8"))
                self.assertTrue(root.tag.endswith("svg"))
                self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
                self.assertNotIn("<dc:date>", svg)
                if cairosvg is not None:
                    self.assertTrue(cairosvg.svg2png(bytestring=svg.encode("utf-8")).startswith(b"\x89PNG"))

    def test_committed_pictures_are_current(self):
        for name in NAMES:
            with self.subTest(name):
                path = REPO_ROOT / pt.PICTURES_DIR / name
                self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_time")
                self.assertEqual(path.read_text(encoding="utf-8"), pt.PICTURES[name](REPO_ROOT),
                                 f"{path} is stale: python -m plots.pictures_time")

    def test_labels_stay_on_the_page(self):
        for name, draw in pt._DRAWINGS.items():
            with self.subTest(name), matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
                canvas = draw(REPO_ROOT)
                for text, (x0, y0, x1, y1) in canvas.text_boxes():
                    self.assertTrue(x0 >= 0 and y0 >= 0 and x1 <= canvas.width and y1 <= canvas.height,
                                    f"{text!r} leaves the page: {(x0, y0, x1, y1)}")


class HeuristicsTest(unittest.TestCase):
    SHAPES = ("1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 1024x1024x8192 256x256x16384 "
              "6144x256x1024 512x512x512 33x65x16385 128x128x65536 3000x5000x200 1536x1536x4096").split()

    def test_step_20_plan_is_scripts_paths(self):
        paths = pt.paths(REPO_ROOT)
        for shape in self.SHAPES:
            m, n, k = (int(x) for x in shape.split("x"))
            for sms in (88, 112, 128, 132):
                with self.subTest(shape=shape, sms=sms):
                    plan = pt.plan(REPO_ROOT, 20, m, n, k, sms)
                    count = plan.sk_tiles if plan.sk_tiles else plan.splits
                    self.assertEqual((plan.path, count), paths.path(m, n, k, sms))

    def test_the_pages_shapes(self):
        split = pt.plan(REPO_ROOT, 15, 1024, 1024, 1024)
        self.assertEqual((split.tiles, split.splits, split.blocks), (32, 4, 128))
        stream = pt.plan(REPO_ROOT, 16, 4096, 4096, 4096)
        self.assertEqual((stream.path, stream.tiles, stream.sk_tiles), ("stream-K", 512, 116))
        before, after = pt.plan(REPO_ROOT, 18, 1024, 1024, 8192), pt.plan(REPO_ROOT, 19, 1024, 1024, 8192)
        self.assertEqual((before.splits, before.length), (4, 64))
        self.assertEqual((after.path, after.length, after.last), ("split-K-short-last-piece", 63, 4))

    def test_step_26_choices(self):
        """Step 26's choose_splits on the H100, as its runs report the path (split-K (N)) and as
        its page's napkin math has them: pieces, k tiles a piece, the estimate's speed-up."""
        expect = {(1024, 1024, 1024): (64, 2, 16, 1.73), (2048, 2048, 2048): (256, 1, 64, 1.0),
                  (4096, 4096, 4096): (1024, 1, 128, 1.0), (8192, 8192, 8192): (4096, 1, 256, 1.0),
                  (1024, 1024, 8192): (64, 2, 128, 1.96), (256, 256, 16384): (4, 29, 18, 23.95),
                  (384, 384, 384): (9, 3, 4, 2.21), (512, 512, 512): (16, 4, 4, 2.64),
                  (640, 640, 640): (25, 4, 5, 2.66)}
        for (m, n, k), (tiles, splits, length, speedup) in expect.items():
            with self.subTest(shape=(m, n, k)):
                p = pt.tensor_plan(REPO_ROOT, 26, m, n, k)
                self.assertEqual((p.tiles, p.splits, p.length), (tiles, splits, length))
                self.assertAlmostEqual(p.speedup, speedup, places=2)
        p = pt.tensor_plan(REPO_ROOT, 26, 1024, 1024, 1024)
        self.assertEqual(round(p.clocks), 1536)  # 3 x 128 x 128 x 32 at 1024 TF32 FMAs a clock
        self.assertAlmostEqual(p.tile_us, 0.776, places=3)
        # 32 pieces of 16 estimate less than 29 of 18, but not by the 10% that choose_splits asks.
        q = pt.tensor_plan(REPO_ROOT, 26, 256, 256, 16384)
        self.assertLess(q.estimate(32), q.estimate(29))
        self.assertGreater(q.estimate(32) * 1.1, q.estimate(29))
        # Step 27 keeps step 26's choice.
        for shape in expect:
            self.assertEqual(pt.tensor_plan(REPO_ROOT, 27, *shape).splits, pt.tensor_plan(REPO_ROOT, 26, *shape).splits)

    def test_step_17_counts_follow_the_knobs_and_the_header(self):
        before = pt.copies_per_k_tile(REPO_ROOT, 16, both_paths=True)
        after = pt.copies_per_k_tile(REPO_ROOT, 17)
        self.assertEqual((sum(before.values()), sum(after.values())), pt.header_copy_counts(REPO_ROOT))


class FollowsItsInputTest(unittest.TestCase):
    """A copy of the steps the split-K pictures read, with a knob moved."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        for number in (*range(15, 21), 26):
            step = pt.step_dir(REPO_ROOT, number)
            shutil.copytree(REPO_ROOT / "steps" / step, self.tmp / "steps" / step)
        (self.tmp / "scripts").mkdir()
        shutil.copy(REPO_ROOT / "scripts" / "paths.py", self.tmp / "scripts" / "paths.py")

    def set_knob(self, number: int, name: str, value: int) -> None:
        source = pt.step_source_path(self.tmp, number)
        text, count = re.subn(rf"SGEMM_KNOB\({name},\s*\d+\)", f"SGEMM_KNOB({name}, {value})",
                              source.read_text(encoding="utf-8"))
        self.assertEqual(count, 1, name)
        source.write_text(text, encoding="utf-8")

    def test_split_k_follows_max_splits(self):
        self.assertEqual(pt.PICTURES["15_split_k.svg"](self.tmp), pt.PICTURES["15_split_k.svg"](REPO_ROOT))
        self.set_knob(15, "MAX_SPLITS", 2)
        self.assertEqual(pt.plan(self.tmp, 15, 1024, 1024, 1024).splits, 2)
        self.assertNotEqual(pt.PICTURES["15_split_k.svg"](self.tmp), pt.PICTURES["15_split_k.svg"](REPO_ROOT))

    def test_tensor_split_k_follows_max_splits(self):
        name = "26_tensor_split_k.svg"
        self.assertEqual(pt.PICTURES[name](self.tmp), pt.PICTURES[name](REPO_ROOT))
        self.set_knob(26, "MAX_SPLITS", 16)
        self.assertLessEqual(pt.tensor_plan(self.tmp, 26, 256, 256, 16384).splits, 16)
        self.assertNotEqual(pt.PICTURES[name](self.tmp), pt.PICTURES[name](REPO_ROOT))

    def test_short_last_piece_follows_min_split_k_tiles(self):
        # Pieces of at least 5 k tiles: the 4-tile last piece is not allowed, and no shorter length pays.
        self.set_knob(19, "MIN_SPLIT_K_TILES", 5)
        after = pt.plan(self.tmp, 19, 1024, 1024, 8192)
        self.assertEqual((after.path, after.length), ("split-K", 64))
        self.assertNotEqual(pt.PICTURES["19_short_last_piece.svg"](self.tmp),
                            pt.PICTURES["19_short_last_piece.svg"](REPO_ROOT))


if __name__ == "__main__":
    unittest.main()
