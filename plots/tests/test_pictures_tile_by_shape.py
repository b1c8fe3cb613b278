"""Step 37's picture and its port of the step's choose_tile() (plots/pictures_tile_by_shape.py):
the port's choices against the paths step 37 reported on the H100, its wide tile's pieces
against plots/pictures_time.py's port of choose_splits (step 36's, step 26's), a shape by hand,
the knobs and constants it reads from the source (and its refusal of a source whose rule has
changed), and the picture: the same bytes every time, labels on the page, the committed copy
current, registered, and a change of a knob seen in it."""

import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_tile_by_shape as ptb
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT

NAME = "37_tile_by_shape.svg"
WIDE, NARROW = "128x128", "128x64"

# The paths step 37 reported on the H100 (--check's 'path:'), as sgemm::took_path names them.
MEASURED = {
    (8192, 64, 8192): ("split-K/in-pipeline/128x64", 2),
    (65536, 64, 256): ("whole-tiles/in-pipeline/128x64", 1),
    (128, 128, 128): ("whole-tiles/in-pipeline/128x64", 1),
    (256, 256, 256): ("split-K/in-pipeline/128x64", 2),
    (384, 384, 384): ("split-K/in-pipeline/128x64", 3),
    (512, 512, 512): ("split-K/in-pipeline/128x64", 4),
    (640, 640, 640): ("split-K/in-pipeline/128x128", 4),
    (96, 200, 300): ("split-K/in-pipeline/128x64", 2),
    (64, 64, 65536): ("split-K/in-pipeline/128x64", 64),
    (128, 128, 131072): ("split-K/in-pipeline/128x64", 63),
    (64, 8192, 8192): ("split-K/split-once/128x128", 2),
    (1000, 1000, 1000): ("split-K/split-once/128x128", 2),
    (2560, 2560, 2560): ("whole-tiles/split-once/128x128", 1),
    (512, 512, 32768): ("split-K/split-once/128x128", 8),
    (256, 256, 65536): ("split-K/in-pipeline/128x128", 32),
}


def copy_sources(root: Path) -> Path:
    """A repository holding only what the picture reads: the steps' kernel files, scripts/paths.py."""
    for source in [*(REPO_ROOT / "steps").glob("*/*.cu"), REPO_ROOT / "scripts" / "paths.py"]:
        destination = root / source.relative_to(REPO_ROOT)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    return root


def edit_step(repo: Path, old: str, new: str) -> None:
    source = pt.step_source_path(repo, ptb.STEP)
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new), encoding="utf-8")


class PortTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rule = ptb.Rule(REPO_ROOT)

    def test_reads_the_knobs_and_the_source(self):
        kn = self.rule.knobs
        self.assertEqual((kn["BM"], kn["BN"], kn["TUNE_SPLIT"]), (128, 128, 32))
        self.assertEqual((kn["NARROW_TILE_PERCENT"], kn["MIN_GAIN_PERCENT"], kn["TENSOR_PERCENT"],
                          kn["IN_PIPELINE_SPLIT_PERCENT"]), (75, 10, 60, 32))
        self.assertEqual((kn["PASS_US"], kn["SWEEP_US"], kn["RAW_MIN_K"]), (3, 1, 32))
        self.assertEqual((self.rule.wide_bn, self.rule.narrow_bn), (128, 64), "NARROW_BN = WGMMA_M")
        self.assertEqual(self.rule.source.products, 3, "3xTF32: three products per multiply-add")
        self.assertEqual(self.rule.source.bytes_per_value, 8, "the pass reads 4 bytes of A and writes 4")
        # tile_us(): "about 0.78 us on an H100 at 1980 MHz" (the step's comment); the narrow tile 75% of it.
        wide = 3 * 128 * 128 * 32 / (1024 * 1980)
        self.assertAlmostEqual(self.rule.tile_us(128), wide)
        self.assertAlmostEqual(self.rule.tile_us(64), 0.75 * wide)

    def test_the_paths_step_37_reported(self):
        for shape, (path, splits) in MEASURED.items():
            with self.subTest(shape):
                chosen = self.rule.choose(*shape)
                self.assertEqual((chosen.path, chosen.splits), (path, splits))

    def test_n_64_picks_the_narrow_tile(self):
        """Where N is 64 both tiles have the same tiles; the wide one's second consumer multiplies
        zeros, and the narrow tile's estimate is NARROW_TILE_PERCENT of it."""
        for m in (128, 1024, 8192, 65536):
            for k in (16, 256, 4096, 65536):
                with self.subTest(m=m, k=k):
                    self.assertEqual(self.rule.choose(m, 64, k).tile, NARROW)

    def test_the_bench_squares_keep_the_wide_tile(self):
        for size in (2048, 4096, 8192):
            with self.subTest(size=size):
                wide, narrow = self.rule.plans(size, size, size)
                chosen = self.rule.choose(size, size, size)
                self.assertEqual((chosen.tile, chosen.path), (WIDE, "whole-tiles/split-once/128x128"))
                self.assertGreater(narrow.us, 1.4 * wide.us, "far from a tie")

    def test_k_below_raw_min_k_is_in_the_pipeline(self):
        raw_min_k = self.rule.knobs["RAW_MIN_K"]
        for m, n in ((16384, 16384), (8192, 4096), (64, 64)):
            for k in (1, 16, raw_min_k - 1):
                with self.subTest(m=m, n=n, k=k):
                    for plan in self.rule.plans(m, n, k):
                        self.assertEqual(plan.place, ptb.PIPELINE)
        # The same large shape one k tile longer is split once.
        self.assertEqual(self.rule.choose(16384, 16384, raw_min_k).place, ptb.ONCE)

    def test_8192x64x8192_by_hand(self):
        """Both tiles: 64 tiles, 256 k tiles, 2 pieces of 128 (128 blocks, one wave), 130
        tile-times and the partial sums, 4 MiB in L2 written and read back at 4 x 3.35 TB/s;
        the narrow tile's tile-time is 75% of the wide one's, the partial sums the same bytes."""
        rule, gpu = self.rule, self.rule.gpu
        wide, narrow = rule.plans(8192, 64, 8192)
        sums_us = 2 * (2 * 8192 * 64 * 4 / 4) / gpu["dram_bytes_per_us"]
        for plan, bn in ((wide, 128), (narrow, 64)):
            with self.subTest(bn=bn):
                self.assertEqual((plan.tiles, plan.k_tiles, plan.per_piece, plan.splits), (64, 256, 128, 2))
                self.assertAlmostEqual(plan.gemm_us, (130 * rule.tile_us(bn) + sums_us) / 0.60)
                self.assertFalse(plan.once)
                self.assertAlmostEqual(plan.us, 1.32 * plan.gemm_us)
        self.assertLess(narrow.us * 1.10, wide.us)
        self.assertEqual(rule.choose(8192, 64, 8192), narrow)

    def test_the_pass_and_its_chunks(self):
        """team_size: 32 threads for K up to 512 (16 loads each), doubled up to 256 for 4096;
        longer rows in chunks of 4096, SWEEP_US for each after the first."""
        rule, bw = self.rule, self.rule.gpu["dram_bytes_per_us"]
        self.assertEqual([rule.team_size(k) for k in (1, 512, 513, 1024, 2048, 4096, 8192)],
                         [32, 32, 64, 64, 128, 256, 256])
        self.assertAlmostEqual(rule.pass_us(1024, 4096), 8 * 1024 * 4096 / bw + 3)
        self.assertAlmostEqual(rule.pass_us(1024, 16384), 8 * 1024 * 16384 / bw + 3 + 3)

    def test_the_wide_tile_is_step_36s(self):
        """The wide tile's pieces are step 36's choose_splits (step 26's) with the same knobs."""
        for shape in ("1024x1024x1024 2048x2048x2048 4096x4096x4096 1024x1024x8192 256x256x16384 8192x64x8192 "
                      "64x64x65536 128x128x131072 1023x1025x8190 3001x2999x1001 640x640x640 96x200x300").split():
            m, n, k = (int(x) for x in shape.split("x"))
            with self.subTest(shape):
                wide, theirs = self.rule.plan_for(m, n, k, 128), pt.tensor_plan(REPO_ROOT, 36, m, n, k)
                self.assertEqual((wide.tiles, wide.splits), (theirs.tiles, theirs.splits))
                self.assertAlmostEqual(self.rule.tile_times(m, n, k, wide.splits, 128), theirs.estimate(theirs.splits))

    def test_the_paths_are_the_steps(self):
        source = pt.source_text(REPO_ROOT, ptb.STEP)
        self.assertIn('std::string(splits == 1 ? "whole-tiles/" : "split-K/") + '
                      '(once ? "split-once/" : "in-pipeline/") + tile_name(TILE_BN)', source)
        self.assertEqual((ptb.WHOLE, ptb.SPLIT, ptb.ONCE, ptb.PIPELINE),
                         ("whole-tiles", "split-K", "split-once", "in-pipeline"))

    def test_refuses_a_changed_rule(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "return narrow.place.us * (100 + MIN_GAIN_PERCENT) <= wide.place.us * 100 ? narrow : wide;",
                      "return narrow.place.us < wide.place.us ? narrow : wide;")
            with self.assertRaises(ValueError):
                ptb.Rule(repo)


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return ptb.draw_tile_by_shape(repo)


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(ptb.PICTURES), [NAME])
        self.assertIn("plots.pictures_tile_by_shape", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = ptb.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, ptb.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / ptb.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_tile_by_shape")
        self.assertEqual(path.read_text(encoding="utf-8"), ptb.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_tile_by_shape")

    def test_labels_stay_on_the_page(self):
        canvas = draw(REPO_ROOT)
        for text, (x0, y0, x1, y1) in canvas.text_boxes():
            self.assertTrue(x0 >= 0 and y0 >= 0 and x1 <= canvas.width and y1 <= canvas.height,
                            f"{text!r} leaves the page: {(x0, y0, x1, y1)}")

    def test_every_cell_has_its_pieces(self):
        """A number in each of the panels' cells: the pieces of the tile chosen there."""
        rule = ptb.Rule(REPO_ROOT)
        boxes = draw(REPO_ROOT).text_boxes()
        for index, k in enumerate(ptb.PANEL_KS):
            x0, y0 = ptb.LEFTS[index % 2], ptb.TOPS[index // 2]
            inside = [t for t, (a, b, c, d) in boxes
                      if x0 < (a + c) / 2 < x0 + ptb.SIDE and y0 < (b + d) / 2 < y0 + ptb.SIDE]
            numbers = [str(rule.choose(m, n, k).splits) for m in ptb.SIZES for n in ptb.SIZES]
            with self.subTest(k=k):
                self.assertEqual(inside, numbers)

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = ptb.PICTURES[NAME](repo)
            self.assertEqual(before, ptb.PICTURES[NAME](REPO_ROOT))
            self.assertEqual(ptb.Rule(repo).choose(8192, 64, 8192).tile, NARROW)
            # A narrow tile as slow as a wide one: where N = 64 the two tie, and the tie keeps the wide tile.
            edit_step(repo, "SGEMM_KNOB(NARROW_TILE_PERCENT, 75)", "SGEMM_KNOB(NARROW_TILE_PERCENT, 100)")
            self.assertEqual(ptb.Rule(repo).choose(8192, 64, 8192).tile, WIDE)
            self.assertNotEqual(ptb.PICTURES[NAME](repo), before)


if __name__ == "__main__":
    unittest.main()
