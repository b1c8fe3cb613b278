"""Step 33's picture and its ports (plots/pictures_raw.py): the order of a k tile's products and
the wait on `split` are read from the consumers' sweep of steps 32 and 33 (in step 33's first
sweep big x big and B small x A before the wait, B big x A small after it; in its second sweep
step 32's order); the splitters' stores are step 32's two parts and step 33's small part alone;
the number line's parts are the steps' bit operations (a truncated big part leaves a small part
of x's sign below 2^-10 |x|, a rounded one a small part of either sign within 2^-11 |x|); the error
budget is 12 u rounded and 20 u truncated, which the harness's bound covers from K = 8, the step's
static_assert; and the picture: the same bytes every time, labels on the page and apart, the
committed copy current, and a change of a knob or of the order seen in it."""

import random
import struct
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_raw as pr
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT
from plots.tests.test_pictures_pass import copy_sources, texts

NAME = "33_raw_big_part.svg"
FIRST_PRODUCTS = """      wgmma_m64n128k8<true>(d, b_big[0], tile_descriptor(stage_a(s), 0));
#pragma unroll
      for (int step = 1; step < K_STEPS; ++step) wgmma_m64n128k8<false>(d, b_big[step], tile_descriptor(stage_a(s), step));
    }
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step)
      wgmma_m64n128k8<false>(d_small, b_small[step], tile_descriptor(stage_a(s), step));
    if constexpr (raw) {
      barrier_wait(&split[s], parity);  // the splitters have written A's small part"""


def edit_step(repo: Path, old: str, new: str, number: int = pr.STEP) -> None:
    source = pt.step_source_path(repo, number)
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new), encoding="utf-8")


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return pr.draw_raw_big_part(repo)


def products(order: pr.Order) -> list[tuple[str, str, str]]:
    return [(p.acc, p.b, p.a) for p in order.products]


BIG_BIG = ("d", "b_big", "stage_a")
SMALL_BIG = ("d_small", "b_small", "stage_a")
BIG_SMALL = ("d_small", "b_big", "stage_a_small")


class OrderTest(unittest.TestCase):
    def test_step_32_waits_before_every_product(self):
        order = pr.Order.read(REPO_ROOT, 32)
        self.assertEqual(products(order), [SMALL_BIG, BIG_SMALL, BIG_BIG])
        self.assertEqual(order.before_wait, 0)

    def test_step_33s_first_sweep(self):
        """Big x big first, then B's small part x A, the wait, then B's big part x A's small part."""
        order = pr.Order.read(REPO_ROOT, 33)
        self.assertEqual(products(order), [BIG_BIG, SMALL_BIG, BIG_SMALL])
        self.assertEqual(order.before_wait, 2)
        self.assertEqual([p.label(True) for p in order.products], ["B big x A", "B small x A", "B big x A small"])

    def test_step_33s_second_sweep_is_step_32s(self):
        self.assertEqual(pr.Order.read(REPO_ROOT, 33, first=False), pr.Order.read(REPO_ROOT, 32))

    def test_the_splitters_store_half_as_much(self):
        self.assertEqual(pr.stores(REPO_ROOT, 32), ["a", "a_small"])
        self.assertEqual(pr.stores(REPO_ROOT, 33), ["a_small"])

    def test_a_small_part_read_before_the_wait_is_refused(self):
        wait = "      barrier_wait(&split[s], parity);  // the splitters have written A's small part\n"
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, wait, "")
            edit_step(repo, "    wgmma_commit();\n", "    if constexpr (raw) barrier_wait(&split[s], parity);\n"
                      "    wgmma_commit();\n")
            with self.assertRaises(ValueError):  # B big x A small before the wait
                pr.Order.read(repo, 33)
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, wait, "")
            with self.assertRaises(ValueError):  # no wait at all in the first sweep
                pr.Order.read(repo, 33)
            self.assertEqual(pr.Order.read(repo, 33, first=False), pr.Order.read(REPO_ROOT, 32))

    def test_the_first_builds_order_is_drawn_as_it_is(self):
        """The first build's order (d_small, d, d_small): the picture follows the source."""
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, FIRST_PRODUCTS, """#pragma unroll
      for (int step = 0; step < K_STEPS; ++step)
        wgmma_m64n128k8<false>(d_small, b_small[step], tile_descriptor(stage_a(s), step));
      wgmma_m64n128k8<true>(d, b_big[0], tile_descriptor(stage_a(s), 0));
#pragma unroll
      for (int step = 1; step < K_STEPS; ++step) wgmma_m64n128k8<false>(d, b_big[step], tile_descriptor(stage_a(s), step));
    }
    if constexpr (!raw) {
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step)
      wgmma_m64n128k8<false>(d_small, b_small[step], tile_descriptor(stage_a(s), step));
    }
    if constexpr (raw) {
      barrier_wait(&split[s], parity);  // the splitters have written A's small part""")
            order = pr.Order.read(repo, 33)
            self.assertEqual(products(order), [SMALL_BIG, BIG_BIG, BIG_SMALL])
            self.assertEqual(order.before_wait, 2)
            self.assertEqual(pr.Order.read(repo, 33, first=False), pr.Order.read(REPO_ROOT, 32))
            self.assertNotEqual(pr.PICTURES[NAME](repo), pr.PICTURES[NAME](REPO_ROOT))

    def test_conditions(self):
        names = {"SPLIT_ONCE": False, "raw": True}
        self.assertTrue(pr._holds("!SPLIT_ONCE", names))
        self.assertFalse(pr._holds("!SPLIT_ONCE && !raw", names))
        self.assertTrue(pr._holds("(SPLIT_ONCE || raw) && !SPLIT_ONCE", names))
        with self.assertRaises(ValueError):
            pr._holds("__import__('os')", names)

    def test_the_tiles_schedule(self):
        before, after = pr.Order.read(REPO_ROOT, 32), pr.Order.read(REPO_ROOT, 33)
        t32, t33 = pr.tile(before, 2), pr.tile(after, 1)
        self.assertGreaterEqual(t32.products[0][0], t32.split[1], "step 32: every product after the split")
        self.assertLess(t33.products[0][0], t33.split[1], "step 33: big x big before the split ends")
        self.assertGreaterEqual(t33.products[2][0], t33.split[1], "B big x A small after it")
        self.assertLess(t33.split[1], t32.split[1], "the splitters store one part, not two")
        self.assertLess(t33.products[-1][1], t32.products[-1][1])
        for t in (t32, t33):
            for (a0, a1), (b0, _) in zip(t.products, t.products[1:]):
                self.assertGreaterEqual(b0, a1, "one product after the other")
            self.assertGreaterEqual(t.products[0][0], t.b_split[1], "B split in registers first")


class PartsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.parts = pr.Parts.read(REPO_ROOT)

    def test_reads_the_bit_operations(self):
        self.assertEqual((self.parts.half, self.parts.mask, self.parts.scale), (0x1000, 0xFFFFE000, 1024.0))
        self.assertEqual((self.parts.kept_bits, self.parts.mantissa_bits), (19, 10))

    def test_the_parts_bounds(self):
        """On random values of many exponents: truncated, small has x's sign and is below 2^-10 |x|;
        rounded, within 2^-11 |x| of either sign; each pair adds up to x within the small part's rounding."""
        rng = random.Random(33)
        signs_rounded = set()
        for _ in range(20000):
            x = pr._f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-60, 60))
            if x == 0:
                continue
            scale = self.parts.scale
            big, small = self.parts.split_truncated(x)
            self.assertGreaterEqual(small * x, 0.0, x)
            self.assertLess(abs(small) / scale, 2.0 ** -10 * abs(x), x)
            self.assertLessEqual(abs(big + small / scale - x), 2.0 ** -21 * abs(x), x)
            self.assertEqual(big, struct.unpack("<f", struct.pack("<I", pr._bits(x) & 0xFFFFE000))[0])
            big, small = self.parts.split_rounded(x)
            self.assertLessEqual(abs(small) / scale, 2.0 ** -11 * abs(x), x)
            self.assertLessEqual(abs(big + small / scale - x), 2.0 ** -22 * abs(x), x)
            if small:
                signs_rounded.add(small > 0)
        self.assertEqual(signs_rounded, {True, False})

    def test_the_example(self):
        h = self.parts.spacing(1.0)
        self.assertEqual(h, 2.0 ** -10)
        x = pr._f32(1 + pr.EXAMPLE_FRACTION * h)
        self.assertEqual(self.parts.split_rounded(x)[0], 1 + h, "rounding goes up")
        self.assertEqual(self.parts.split_truncated(x)[0], 1.0)
        self.assertAlmostEqual(self.parts.split_truncated(x)[1] / 1024 / h, 0.7, places=2)
        self.assertAlmostEqual(self.parts.split_rounded(x)[1] / 1024 / h, -0.3, places=2)

    def test_another_mask_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "const float truncated = __uint_as_float(__float_as_uint(x) & 0xffffe000u);",
                      "const float truncated = tf32_round(x);")
            with self.assertRaises(ValueError):
                pr.Parts.read(repo)


class BudgetTest(unittest.TestCase):
    def test_a_products_error(self):
        budget = pr.Budget(10)
        self.assertEqual(budget.parts(False), (4.0, 4.0, 4.0))
        self.assertEqual(budget.parts(True), (8.0, 4.0, 8.0))
        self.assertEqual((budget.total(False), budget.total(True)), (12.0, 20.0))

    def test_the_bound_and_raw_min_k(self):
        budget = pr.Budget(pr.Parts.read(REPO_ROOT).mantissa_bits)
        self.assertEqual(budget.bound(1), 6.0, "K = 1: the first build's failures, 11.5 u against 6 u")
        self.assertEqual(budget.smallest_k(True), 8)
        self.assertEqual(budget.smallest_k(True), pr.asserted_min_k(REPO_ROOT))
        self.assertEqual(budget.smallest_k(False), 4)
        self.assertEqual(budget.bound(pt.knobs(REPO_ROOT, 33)["RAW_MIN_K"]), 68.0)

    def test_a_static_assert_apart_from_the_budget_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "static_assert(RAW_MIN_K >= 8,", "static_assert(RAW_MIN_K >= 4,")
            with self.assertRaises(ValueError):
                pr.PICTURES[NAME](repo)


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(pr.PICTURES), [NAME])
        self.assertIn("plots.pictures_raw", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = pr.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, pr.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)
        self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / pr.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_raw")
        self.assertEqual(path.read_text(encoding="utf-8"), pr.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_raw")

    def test_labels_stay_on_the_page_and_apart(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = pr.draw_raw_big_part(REPO_ROOT)
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
        for label in ("step 32", "step 33", "96 splitters", "2 consumer warpgroups", "A -> big + small",
                      "A -> small only", "B small x A big", "B big x A small", "B big x A", "B small x A",
                      "2 of 3 products start as soon as the tile has landed", "x = 1 + 0.7 h",
                      "small = x - big = -0.30 h", "small = x - big = +0.70 h", "|small| <= 2^-11 |x|",
                      "0 <= small < 2^-10 |x|"):
            self.assertIn(label, drawn)
        self.assertEqual(drawn.count("wait: split"), 2)
        self.assertEqual(drawn.count("B big x A small"), 2, "in both steps")
        flat = [t.replace("\n", " ") for t in drawn]
        self.assertTrue(any("top 19 bits" in t for t in flat))
        self.assertTrue(any("= 12 u" in t and "= 20 u" in t and "from K = 8" in t and "RAW_MIN_K = 32" in t
                            and "68 u" in t for t in flat))

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = pr.PICTURES[NAME](repo)
            self.assertEqual(before, pr.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            edit_step(repo, "SGEMM_KNOB(RAW_MIN_K, 32)", "SGEMM_KNOB(RAW_MIN_K, 64)")
            self.assertTrue(any("RAW_MIN_K = 64 (a bound of 132 u)" in t.replace("\n", " ") for t in texts(draw(repo))))
            self.assertNotEqual(pr.PICTURES[NAME](repo), before)
            edit_step(repo, "SGEMM_KNOB(SPLITTERS, 96)", "SGEMM_KNOB(SPLITTERS, 80)")
            self.assertIn("80 splitters", texts(draw(repo)))

    def test_a_launch_without_the_raw_kernel_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "p.K >= RAW_MIN_K ? sgemm_kernel<false, true> : sgemm_kernel<false, false>",
                      "sgemm_kernel<false, true>")
            with self.assertRaises(ValueError):
                pr.PICTURES[NAME](repo)


if __name__ == "__main__":
    unittest.main()
