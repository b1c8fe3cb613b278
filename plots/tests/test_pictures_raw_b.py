"""Step 36's picture and its ports (plots/pictures_raw_b.py): step 35's consumers split every value
of B with tf32_split and step 36's take the loaded value as its big part and compute
small_of_truncated alone (read from the steps' loops, the two functions checked against the
operations drawn); a thread holds 16 values of B a k tile; the port of small_of_truncated keeps
the top 19 bits as the big part and leaves a small part of b's sign below 2^-10 |b| before its
scale; the error budget with both parts truncated is 32 u, which the step's static_assert (K >= 16)
covers; and the picture: the same bytes every time, labels on the page and apart, the committed
copy current, and a change of a knob or of the code seen in it or refused."""

import random
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_raw_b as prb
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT
from plots.tests.test_pictures_pass import copy_sources, texts

NAME = "36_raw_b.svg"


def edit_step(repo: Path, old: str, new: str, number: int = prb.STEP) -> None:
    source = pt.step_source_path(repo, number)
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new), encoding="utf-8")


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return prb.draw_raw_b(repo)


class SourceTest(unittest.TestCase):
    def test_how_the_consumers_make_b_s_parts(self):
        self.assertEqual(prb.consumer_b(REPO_ROOT), {35: "tf32_split", 36: "small_of_truncated"})

    def test_the_chains(self):
        chains = prb.chains(REPO_ROOT)
        self.assertEqual(sum(n for _, n, _ in chains[35]), 12, "load, max and tf32_split's ten")
        self.assertEqual(sum(n for _, n, _ in chains[36]), 7, "load, max and small_of_truncated's five")

    def test_values_a_thread(self):
        self.assertEqual(prb.values_per_thread(REPO_ROOT), 16)

    def test_the_loop_counts(self):
        self.assertEqual(prb.LOOP_INSTRUCTIONS, {35: 333, 36: 269})
        self.assertEqual((333 - 269) // prb.values_per_thread(REPO_ROOT), 4)

    def test_specials_voted(self):
        self.assertTrue(prb.specials_voted(REPO_ROOT))

    def test_b_split_in_the_first_sweep_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "b_small[step][h + 2 * kh] = __float_as_uint(small_of_truncated(b));",
                      "b_small[step][h + 2 * kh] = __float_as_uint(b);")
            with self.assertRaises(ValueError):
                prb.PICTURES[NAME](repo)

    def test_another_split_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "return tf32_round((x - truncated) * SMALL_SCALE);",
                      "return (x - truncated) * SMALL_SCALE;")
            with self.assertRaises(ValueError):
                prb.PICTURES[NAME](repo)

    def test_no_vote_for_specials_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, " || (RAW && m >= 0x7f800000u);", ";")
            with self.assertRaises(ValueError):
                prb.PICTURES[NAME](repo)


class BitsTest(unittest.TestCase):
    def test_reads_the_mask(self):
        bits = prb.Bits.read(REPO_ROOT)
        self.assertEqual((bits.mask, bits.scale_exponent, bits.kept, bits.mantissa_bits), (0xFFFFE000, 10, 19, 10))

    def test_the_parts(self):
        bits = prb.Bits.read(REPO_ROOT)
        rng = random.Random(36)
        for _ in range(20000):
            x = prb._f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-60, 60))
            if x == 0:
                continue
            big, small = bits.big(x), bits.small(x)
            self.assertEqual(prb._bits(big), prb._bits(x) & 0xFFFFE000)
            self.assertGreaterEqual(small * x, 0.0, x)
            self.assertLessEqual(abs(small) / 1024, 2.0 ** -10 * abs(x), x)
            self.assertLessEqual(abs(big + small / 1024 - x), 2.0 ** -21 * abs(x), x)


class BudgetTest(unittest.TestCase):
    def test_both_truncated(self):
        budget = prb.Budget(10)
        self.assertEqual(budget.parts(), (8.0, 8.0, 16.0))
        self.assertEqual(budget.total(), 32.0)
        self.assertEqual(prb.asserted_min_k(REPO_ROOT), 16)
        self.assertEqual(budget.bound(16), 36.0)
        self.assertEqual(budget.bound(pt.knobs(REPO_ROOT, 36)["RAW_MIN_K"]), 68.0)

    def test_a_static_assert_below_the_budget_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, "static_assert(RAW_MIN_K >= 16,", "static_assert(RAW_MIN_K >= 8,")
            with self.assertRaises(ValueError):
                prb.PICTURES[NAME](repo)


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(prb.PICTURES), [NAME])
        self.assertIn("plots.pictures_raw_b", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = prb.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, prb.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)
        self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / prb.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_raw_b")
        self.assertEqual(path.read_text(encoding="utf-8"), prb.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_raw_b")

    def test_labels_stay_on_the_page_and_apart(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = prb.draw_raw_b(REPO_ROOT)
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
        for label in ("step 35", "step 36", "333", "269", "12 a value, x 16", "7 a value, x 16", "clamp", "trunc",
                      "sign", "exponent (8)", "mantissa (23)", "the 13 below: b - b truncated"):
            self.assertIn(label, drawn)
        flat = [t.replace("\n", " ") for t in drawn]
        self.assertTrue(any("top 19 bits" in t for t in flat))
        self.assertTrue(any("= 32 u" in t and "36 u at K = 16" in t and "68 u at RAW_MIN_K = 32" in t for t in flat))
        self.assertTrue(any(t.startswith("64 fewer: 4 a value of 16") for t in flat))

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = prb.PICTURES[NAME](repo)
            self.assertEqual(before, prb.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            edit_step(repo, "SGEMM_KNOB(RAW_MIN_K, 32)", "SGEMM_KNOB(RAW_MIN_K, 64)")
            self.assertTrue(any("132 u at RAW_MIN_K = 64" in t.replace("\n", " ") for t in texts(draw(repo))))
            self.assertNotEqual(prb.PICTURES[NAME](repo), before)


if __name__ == "__main__":
    unittest.main()
