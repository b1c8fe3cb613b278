"""Step 30's picture and its port of the step's launch() (plots/pictures_split.py): the port's
choices at the shapes the page and the notes discuss, its choose_splits against
plots/pictures_time.py's port of step 26's, the knobs and constants it reads from the source,
and the picture: the same bytes every time, labels on the page, the committed copy current, and
a change of a knob seen in it."""

import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_split as ps
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT

NAME = "30_chosen_split.svg"


class PortTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rule = ps.Rule(REPO_ROOT)

    def test_reads_the_knobs_and_the_source(self):
        kn = self.rule.knobs
        self.assertEqual((kn["IN_PIPELINE_SPLIT_PERCENT"], kn["TENSOR_PERCENT"], kn["SPLIT_PASS_US"]), (32, 60, 3))
        self.assertEqual((kn["BM"], kn["BN"], kn["TUNE_SPLIT"]), (128, 128, 32))
        self.assertEqual(self.rule.bytes_per_value, 12, "the pass reads 4 bytes of A and writes 8")
        self.assertEqual(self.rule.products, 3, "3xTF32: three products per multiply-add")
        # tile_us(): "About 0.78 us on an H100 at 1980 MHz" (the step's comment).
        self.assertAlmostEqual(self.rule.tile_us, 3 * 128 * 128 * 32 / (1024 * 1980))

    def test_the_places_of_the_facts(self):
        """The shapes the page's napkin math and the notes discuss, on the H100."""
        for shape, place in (((4096, 4096, 4096), ps.ONCE), ((8192, 8192, 8192), ps.ONCE),
                             ((2048, 2048, 2048), ps.ONCE), ((1024, 1024, 8192), ps.ONCE),
                             ((1024, 1024, 1024), ps.ONCE), ((2048, 2048, 256), ps.ONCE),
                             ((32768, 128, 4096), ps.PIPELINE), ((256, 256, 16384), ps.PIPELINE),
                             ((8192, 64, 8192), ps.PIPELINE),
                             ((65536, 64, 256), ps.PIPELINE), ((128, 128, 128), ps.PIPELINE)):
            with self.subTest(shape):
                self.assertEqual(self.rule.choose(*shape).place, place)

    def test_4096_cubed_by_hand(self):
        # 1024 tiles, 7.76 waves of 132: 8 x (128 + 2) tile-times at 60% of the peak, 1,345 us;
        # the pass: 12 x 4096^2 bytes at 3.35 TB/s, 60 us, and 3 us.
        c = self.rule.choose(4096, 4096, 4096)
        self.assertEqual((c.tiles, c.k_tiles, c.splits, c.path), (1024, 128, 1, "whole-tiles/split-once"))
        self.assertAlmostEqual(c.gemm_us, 8 * 130 * self.rule.tile_us / 0.60)
        self.assertAlmostEqual(c.pass_us, 12 * 4096 * 4096 / self.rule.gpu["dram_bytes_per_us"] + 3)
        self.assertAlmostEqual(c.in_pipeline_us, 0.32 * c.gemm_us)

    def test_1024_cubed_and_the_first_tensor_percent(self):
        """1024^3 is split once; with TENSOR_PERCENT at its first value, 73 (the GEMM's share at
        4096^3), the two costs tied there and the pipeline kept it on the H100, not on a GPU
        with the H200's 4.8 TB/s (the notes)."""
        self.assertEqual(self.rule.choose(1024, 1024, 1024).path, "split-K/split-once")
        first = ps.Rule(REPO_ROOT)
        first.knobs["TENSOR_PERCENT"] = 73
        c = first.choose(1024, 1024, 1024)
        self.assertEqual(c.path, "split-K/in-pipeline")
        self.assertLess(c.margin, 1.05)
        faster = ps.Rule(REPO_ROOT, gpu=dict(first.gpu, dram_bytes_per_us=4.8e6))
        faster.knobs["TENSOR_PERCENT"] = 73
        self.assertEqual(faster.choose(1024, 1024, 1024).place, ps.ONCE)

    def test_the_napkin_n_parts_large_shapes(self):
        """For a large M and K, the rule changes place between N = 512 and N = 1024, around the
        napkin math's N (about 600 on the H100)."""
        napkin = self.rule.napkin_n()
        self.assertGreater(napkin, 512)
        self.assertLess(napkin, 1024)
        for m, k in ((16384, 4096), (65536, 1024), (8192, 16384)):
            with self.subTest(m=m, k=k):
                self.assertEqual(self.rule.choose(m, 512, k).place, ps.PIPELINE)
                self.assertEqual(self.rule.choose(m, 1024, k).place, ps.ONCE)

    def test_choose_splits_is_step_26s(self):
        for shape in ("1024x1024x1024 2048x2048x2048 4096x4096x4096 1024x1024x8192 256x256x16384 8192x64x8192 "
                      "64x64x65536 128x128x131072 1023x1025x8190 3001x2999x1001 32768x128x4096 96x200x300").split():
            m, n, k = (int(x) for x in shape.split("x"))
            with self.subTest(shape):
                ours, theirs = self.rule.choose(m, n, k), pt.tensor_plan(REPO_ROOT, 30, m, n, k)
                self.assertEqual(ours.splits, theirs.splits)
                self.assertEqual(theirs.splits, pt.tensor_plan(REPO_ROOT, 26, m, n, k).splits)
                self.assertAlmostEqual(self.rule.tile_times(m, n, k, ours.splits), theirs.estimate(theirs.splits))

    def test_the_paths_are_the_steps(self):
        source = pt.source_text(REPO_ROOT, 30)
        for kind in (ps.WHOLE, ps.SPLIT):
            for place in (ps.PIPELINE, ps.ONCE):
                self.assertIn(f'"{kind}/{place}"', source)


class PictureTest(unittest.TestCase):
    def test_names(self):
        self.assertEqual(list(ps.PICTURES), [NAME])

    def test_renders_the_same_bytes_twice(self):
        svg = ps.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, ps.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / ps.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_split")
        self.assertEqual(path.read_text(encoding="utf-8"), ps.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_split")

    def test_labels_stay_on_the_page(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = ps.draw_chosen_split(REPO_ROOT)
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
            before = ps.PICTURES[NAME](repo)
            self.assertEqual(before, ps.PICTURES[NAME](REPO_ROOT))
            source = repo / "steps" / "30_chosen_split" / "chosen_split.cu"
            text = source.read_text(encoding="utf-8")
            line = "SGEMM_KNOB(IN_PIPELINE_SPLIT_PERCENT, 32)"
            self.assertIn(line, text)
            self.assertEqual(ps.Rule(repo).choose(2048, 2048, 2048).place, ps.ONCE)
            source.write_text(text.replace(line, "SGEMM_KNOB(IN_PIPELINE_SPLIT_PERCENT, 10)"), encoding="utf-8")
            self.assertEqual(ps.Rule(repo).choose(2048, 2048, 2048).place, ps.PIPELINE)
            self.assertNotEqual(ps.PICTURES[NAME](repo), before)


if __name__ == "__main__":
    unittest.main()
