"""Step 21's picture and its port of the step's plan() and launch() (plots/pictures_plan.py):
the port's choices at shapes checked by hand, its agreement with step 20's port where the tile
is step 20's, the H100's blocks per SM against the tiles' shared memory, and the picture: the
same bytes every time, labels on the page, the committed copy current, and a change of a knob
seen in it."""

import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_plan as pp
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT

NAME = "21_chosen_tile.svg"


class PortTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rule = pp.Rule(REPO_ROOT)
        cls.by_name = {tile.name: tile for tile in cls.rule.tiles}

    def k_tile_us(self, name: str) -> float:
        """One k tile of one block of that tile alone on an SM, at its share of the peak."""
        tile = self.by_name[name]
        gpu = pt.paths(REPO_ROOT).H100
        return tile.bm * tile.bn * 32 / (gpu["lanes"] * self.rule.peak_percent(tile) / 100 * gpu["clock_mhz"])

    def test_the_tiles_are_the_steps_in_its_order(self):
        self.assertEqual([t.name for t in self.rule.tiles], ["128x256", "128x128", "64x128", "64x64", "256x64", "64x256", "16x128", "128x16"])
        self.assertEqual([self.rule.peak_percent(t) for t in self.rule.tiles], [74, 67, 52, 37, 57, 65, 41, 44])
        self.assertEqual(self.rule.knobs["TUNE_SPLIT"], 32)
        step_20 = pt.knobs(REPO_ROOT, 20)
        first = self.rule.tiles[0]
        self.assertEqual((first.bm, first.bn), pt.block_tile(step_20)[:2], "the first tile is step 20's")

    def test_128_cubed_takes_64x64_in_two_pieces(self):
        # 4 k tiles. 128 x 256: one tile; 64 x 64: 4 tiles, and MIN_SPLIT_K_TILES = 2 lets K be
        # cut in two pieces of 2 k tiles: 8 blocks on 8 SMs, half the time of the whole tiles'
        # 4 k tiles, plus the partial sums (a few KiB, in L2).
        self.assertEqual(self.rule.knobs["MIN_SPLIT_K_TILES"], 2)
        chosen = self.rule.choose(128, 128, 128)
        self.assertEqual((chosen.tile.name, chosen.kind, chosen.tiles, chosen.splits), ("64x64", pp.SPLIT, 4, 2))
        self.assertGreater(chosen.us, 2 * self.k_tile_us("64x64"))
        self.assertLess(chosen.us, 2 * self.k_tile_us("64x64") * 1.02)
        plans = {p.tile.name: p for p in self.rule.plans(128, 128, 128)}
        self.assertGreater(plans["128x256"].us, 2 * self.k_tile_us("128x256"))

    def test_n_64_takes_the_tall_tile_and_splits_k(self):
        # 32 tiles of 256 x 64, one split block an SM: 4 pieces of 64 k tiles make 128 blocks in
        # one wave; piece_length then shortens them to 63 and cuts a short fifth piece for the 4
        # SMs left idle. 64 x 64 (128 tiles, 5 blocks an SM) is estimated at 37% of the peak,
        # against 256 x 64's PEAK_PERCENT_256X64, and takes longer.
        chosen = self.rule.choose(8192, 64, 8192)
        self.assertEqual((chosen.tile.name, chosen.kind, chosen.tiles, chosen.chosen, chosen.length, chosen.splits),
                         ("256x64", pp.SPLIT, 32, 4, 63, 5))
        self.assertGreater(chosen.us, 63 * self.k_tile_us("256x64"))
        self.assertLess(chosen.us, 64 * self.k_tile_us("256x64") * 1.02)  # the partial sums: 8 MiB in L2
        small = self.rule.plan(self.by_name["64x64"], 8192, 64, 8192)
        self.assertEqual((small.tiles, small.chosen, small.splits), (128, 5, 6))
        self.assertGreater(small.us, 1.5 * chosen.us)
        # M = 64 mirrors it with the wide tile.
        wide = self.rule.choose(64, 8192, 8192)
        self.assertEqual((wide.tile.name, wide.kind, wide.tiles, wide.splits), ("64x256", pp.SPLIT, 32, 5))
        # 128 x 256: 64 tiles, a quarter of each tile's columns inside N; 2 pieces fill 128 SMs, and
        # the 4 left idle get a short third piece.
        first = self.rule.plan(self.rule.tiles[0], 8192, 64, 8192)
        self.assertEqual((first.tiles, first.chosen, first.splits), (64, 2, 3))

    def test_4096_cubed_keeps_128x256_with_stream_k(self):
        chosen = self.rule.choose(4096, 4096, 4096)
        self.assertEqual((chosen.tile.name, chosen.kind, chosen.sk_tiles), ("128x256", pp.STREAM, 512 % 132))

    def test_a_smaller_estimate_within_min_gain_keeps_128x256(self):
        plans = {p.tile.name: p for p in self.rule.plans(1023, 1025, 8190)}
        self.assertLess(plans["128x128"].us, plans["128x256"].us)
        self.assertGreater(plans["128x128"].us * 1.10, plans["128x256"].us)
        chosen = self.rule.choose(1023, 1025, 8190)
        self.assertEqual((chosen.tile.name, chosen.kind), ("128x256", pp.SPLIT))

    def test_stream_k_only_where_it_pays_its_overhead(self):
        # 256 tiles: two waves of 32 k tiles (64) against one wave and 124 tiles' 3968 k tiles
        # over 132 blocks (31) plus 4: 67. Whole tiles.
        chosen = self.rule.choose(8192, 1024, 1024)
        self.assertEqual((chosen.tile.name, chosen.kind), ("128x256", pp.WHOLE))
        self.assertAlmostEqual(chosen.us, 64 * self.k_tile_us("128x256"))

    def test_the_128x256_tile_makes_step_20s_choices(self):
        """Where the steps' MAX_SPLITS do not cap the pieces differently (step 21 allows more)."""
        first = self.rule.tiles[0]
        caps = (self.rule.knobs["MAX_SPLITS"], pt.knobs(REPO_ROOT, 20)["MAX_SPLITS"])
        for shape in ("1024x1024x1024 2048x2048x2048 4096x4096x4096 1024x1024x8192 256x256x16384 "
                      "8192x64x8192 1023x1025x8190 3001x2999x1001 8192x1024x1024 128x128x131072 4096x4096x16384").split():
            m, n, k = (int(x) for x in shape.split("x"))
            most = -(-k // 32) // self.rule.knobs["MIN_SPLIT_K_TILES"]
            if min(caps[0], most) != min(caps[1], most):
                continue
            with self.subTest(shape):
                ours, step_20 = self.rule.plan(first, m, n, k), pt.plan(REPO_ROOT, 20, m, n, k)
                self.assertEqual((ours.chosen, ours.length, ours.splits), (step_20.chosen, step_20.length, step_20.splits))
                self.assertIn(ours.sk_tiles, (0, step_20.sk_tiles))  # stream-K only where it pays

    def test_blocks_per_sm_fit_the_shared_memory(self):
        for tile in self.rule.tiles:
            with self.subTest(tile.name):
                fits = [pp.H100_SHARED_PER_SM // (size + pp.H100_SHARED_RESERVED) for size in self.rule.shared_bytes(tile)]
                facts = list(pp.H100_BLOCKS_PER_SM[tile.name])
                self.assertTrue(all(1 <= f <= s for f, s in zip(facts, fits)), f"{facts} blocks an SM, {fits} fit")
                if tile.threads <= 128:  # registers leave these to their shared memory
                    self.assertEqual(facts, fits)


class PictureTest(unittest.TestCase):
    def test_names(self):
        self.assertEqual(list(pp.PICTURES), [NAME])

    def test_renders_the_same_bytes_twice(self):
        svg = pp.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, pp.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / pp.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_plan")
        self.assertEqual(path.read_text(encoding="utf-8"), pp.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_plan")

    def test_labels_stay_on_the_page(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = pp.draw_chosen_tile(REPO_ROOT)
            for text, (x0, y0, x1, y1) in canvas.text_boxes():
                self.assertTrue(x0 >= 0 and y0 >= 0 and x1 <= canvas.width and y1 <= canvas.height,
                                f"{text!r} leaves the page: {(x0, y0, x1, y1)}")

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            for source in [*(REPO_ROOT / "steps").glob("*/*.cu"), REPO_ROOT / "scripts" / "paths.py"]:
                target = repo / source.relative_to(REPO_ROOT)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
            before = pp.PICTURES[NAME](repo)
            self.assertEqual(before, pp.PICTURES[NAME](REPO_ROOT))
            source = repo / "steps" / "21_chosen_tile" / "chosen_tile.cu"
            text = source.read_text(encoding="utf-8")
            line = "SGEMM_KNOB(PEAK_PERCENT_64X64, 37)"
            self.assertIn(line, text)
            self.assertEqual(pp.Rule(repo).choose(256, 256, 256).tile.name, "64x64")
            source.write_text(text.replace(line, "SGEMM_KNOB(PEAK_PERCENT_64X64, 10)"), encoding="utf-8")
            self.assertEqual(pp.Rule(repo).choose(256, 256, 256).tile.name, "64x128")
            self.assertNotEqual(pp.PICTURES[NAME](repo), before)


if __name__ == "__main__":
    unittest.main()
