"""The geometry pictures (plots/pictures_tiles.py): each renders to a readable SVG, the same
bytes every time, follows its step's knobs, and the committed docs/pictures/ copy is current."""

import re
import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_tiles
from plots.tests.helpers import REPO_ROOT

NAMES = (
    "03_shared_tiles.svg",
    "04_block_order.svg",
    "05_thread_tile.svg",
    "06_register_fragments.svg",
    "07_transposed_a.svg",
    "08_warp_shape.svg",
    "14_thread_tile.svg",
    "20_cluster_pair.svg",
    "22_tf32_split.svg",
    "23_wgmma_layout.svg",
    "27_scaled_small_parts.svg",
    "28_scaled_rows_columns.svg",
    "29_split_once.svg",
)

# A knob of each picture's step and another value it may take: the picture must change with it.
KNOB_CHANGES = {
    "03_shared_tiles.svg": (3, "TUNE_SPLIT", "16"),
    "04_block_order.svg": (4, "SWAP_XY", "false"),
    "05_thread_tile.svg": (5, "THREAD_TILE_X", "8"),
    "06_register_fragments.svg": (6, "THREAD_TILE_Y", "4"),
    "07_transposed_a.svg": (7, "A_PAD", "8"),
    "08_warp_shape.svg": (8, "WARP_SHAPE_X", "8"),
    "14_thread_tile.svg": (14, "THREAD_TILE_X", "8"),
    "20_cluster_pair.svg": (20, "PAIR_ROWS", "2"),
    "22_tf32_split.svg": (22, "PASSES", "1"),
    "23_wgmma_layout.svg": (25, "BN", "192"),
    "28_scaled_rows_columns.svg": (28, "UNSCALED_EXPONENT", "90"),
    "29_split_once.svg": (29, "BM", "64"),
}

# A picture drawn from a constant that is no knob: the constant's text and another value.
CONSTANT_CHANGES = {
    "27_scaled_small_parts.svg": (27, "SMALL_SCALE = 0x1p10f", "SMALL_SCALE = 0x1p8f"),
}


def copy_steps(target: Path) -> Path:
    """A repository holding only the steps' kernel files (what the pictures read)."""
    for source in sorted((REPO_ROOT / "steps").glob("*/*.cu")):
        destination = target / "steps" / source.parent.name / source.name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    return target


def set_knob(repo: Path, number: int, name: str, value: str) -> None:
    step = pictures_tiles.step_dir(repo, number)
    source = next((repo / "steps" / step).glob("*.cu"))
    text, count = re.subn(
        rf"SGEMM_KNOB\({name},\s*[^)]*\)",
        f"SGEMM_KNOB({name}, {value})",
        source.read_text(encoding="utf-8"),
    )
    assert count == 1, f"{name} is not a knob of steps/{step}"
    source.write_text(text, encoding="utf-8")


class PicturesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.svgs = {name: picture(REPO_ROOT) for name, picture in pictures_tiles.PICTURES.items()}

    def test_the_pictures_are_these(self):
        self.assertEqual(sorted(pictures_tiles.PICTURES), sorted(NAMES))
        self.assertEqual(sorted({**KNOB_CHANGES, **CONSTANT_CHANGES}), sorted(NAMES))

    def test_each_is_an_svg_about_800_pixels_wide_on_white(self):
        for name, svg in self.svgs.items():
            with self.subTest(name):
                root = ElementTree.fromstring(svg)
                self.assertTrue(root.tag.endswith("svg"))
                # 800 pixels at 100 dpi = 576 points.
                self.assertEqual(root.get("width"), "576pt")
                self.assertIn("fill: #ffffff", svg)
                self.assertNotIn("<dc:date>", svg)
                self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_same_sources_same_bytes(self):
        for name, picture in pictures_tiles.PICTURES.items():
            with self.subTest(name):
                self.assertEqual(picture(REPO_ROOT), self.svgs[name])

    def test_labels_stay_on_the_page_and_apart(self):
        for name, draw in pictures_tiles._DRAWINGS.items():
            with self.subTest(name):
                with matplotlib.style.context("default"), matplotlib.rc_context(pictures_tiles._RC):
                    canvas = draw(REPO_ROOT)
                    boxes = canvas.text_boxes()
                for text, (x0, y0, x1, y1) in boxes:
                    self.assertTrue(
                        x0 >= 0 and y0 >= 0 and x1 <= canvas.width and y1 <= canvas.height,
                        f"{text!r} leaves the page",
                    )
                for i, (text, a) in enumerate(boxes):
                    for other, b in boxes[i + 1 :]:
                        apart = (
                            a[2] <= b[0] + 1
                            or b[2] <= a[0] + 1
                            or a[3] <= b[1] + 1
                            or b[3] <= a[1] + 1
                        )
                        self.assertTrue(apart, f"{text!r} covers {other!r}")

    def test_each_follows_a_knob(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_steps(Path(tmp))
            for name, (number, knob, value) in KNOB_CHANGES.items():
                with self.subTest(name):
                    before = pictures_tiles.PICTURES[name](repo)
                    self.assertEqual(
                        before, self.svgs[name], "the copy draws what the repository does"
                    )
                    set_knob(repo, number, knob, value)
                    self.assertNotEqual(pictures_tiles.PICTURES[name](repo), before)

    def test_each_follows_a_constant(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_steps(Path(tmp))
            for name, (number, old, new) in CONSTANT_CHANGES.items():
                with self.subTest(name):
                    source = next((repo / "steps" / pictures_tiles.step_dir(repo, number)).glob("*.cu"))
                    text = source.read_text(encoding="utf-8")
                    self.assertEqual(text.count(old), 1, old)
                    before = pictures_tiles.PICTURES[name](repo)
                    source.write_text(text.replace(old, new), encoding="utf-8")
                    self.assertNotEqual(pictures_tiles.PICTURES[name](repo), before)

    def test_a_picture_reads_its_numbers(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_steps(Path(tmp))
            set_knob(repo, 5, "THREAD_TILE_X", "8")
            self.assertIn("8 x 8", pictures_tiles.draw_thread_tile(repo).ax.texts[0].get_text())

    def test_committed_pictures_are_current(self):
        for name, svg in self.svgs.items():
            with self.subTest(name):
                path = REPO_ROOT / pictures_tiles.PICTURES_DIR / name
                self.assertTrue(
                    path.is_file(), f"{path} is missing: python -m plots.pictures_tiles"
                )
                self.assertEqual(
                    path.read_text(encoding="utf-8"),
                    svg,
                    f"{path} is stale: python -m plots.pictures_tiles",
                )


class ScaledSplitTest(unittest.TestCase):
    """Step 27's split as the picture emulates it (plots/pictures_tiles.py, split_parts), with the
    constants read from the step: what the page says of it."""

    @classmethod
    def setUpClass(cls):
        cls.half, cls.mask, cls.scale = pictures_tiles._scaled_split(REPO_ROOT)

    def split(self, x: float, scale: int):
        return pictures_tiles.split_parts(x, self.half, self.mask, scale)

    def bits(self, value: float) -> int:
        return len(pictures_tiles.kept_bits(value, 13))

    def test_the_step_scales_by_2_to_the_10(self):
        self.assertEqual((self.half, self.mask, self.scale), (0x1000, 0xFFFFE000, 10))

    def test_a_normal_small_part_is_the_same_scaled_or_not(self):
        for x in (3.14159265, 1e-30, 7.5e30, 2.0**-110 * 1.3):
            with self.subTest(x=x):
                big, _, small = self.split(x, 0)
                big_s, _, scaled = self.split(x, self.scale)
                self.assertEqual((big, small), (big_s, scaled / 2.0**self.scale))
                self.assertEqual(self.bits(small), 11)

    def test_near_2_to_the_minus_118_the_small_part_loses_bits_unscaled(self):
        x = pictures_tiles._f32(3.14159265 * 2.0**-119)
        _, rest, small = self.split(x, 0)
        _, _, scaled = self.split(x, self.scale)
        self.assertLess(abs(rest), 2.0**-126)  # the rest is subnormal
        self.assertEqual((self.bits(small), self.bits(scaled)), (7, 11))
        self.assertGreaterEqual(abs(scaled), 2.0**-126)  # scaled, it is normal

    def test_a_subnormal_x_loses_its_whole_small_part_unscaled(self):
        x = pictures_tiles._f32(3.14159265 * 2.0**-135)
        big, rest, small = self.split(x, 0)
        _, _, scaled = self.split(x, self.scale)
        self.assertNotEqual(rest, 0.0)
        self.assertEqual(small, 0.0)
        # Scaled, the rest keeps its bits down to 2^-136 / 2^10 = 2^-146 of x's units.
        self.assertLess(abs(x - big - scaled / 2.0**self.scale), 2.0**-146)

    def test_the_scaled_small_part_is_at_most_half_of_x(self):
        x = 1.0
        for i in range(4000):
            x = pictures_tiles._f32(1.0 + (i * 0.6180339887) % 1.0) * 2.0 ** (i % 250 - 125)
            _, _, scaled = self.split(x, self.scale)
            self.assertLessEqual(abs(scaled), abs(x) / 2, x)


class ScaledRowsTest(unittest.TestCase):
    """Step 28's scale_exponent as the picture ports it (plots/pictures_tiles.py), with its clamp
    and UNSCALED_EXPONENT read from the step, and step 27's split of a row it scaled."""

    @classmethod
    def setUpClass(cls):
        cls.rule = pictures_tiles._scale_rule(REPO_ROOT)
        cls.half, cls.mask, cls.scale = pictures_tiles._scaled_split(REPO_ROOT, 28)

    def s(self, m: float) -> int:
        return pictures_tiles.scale_exponent(m, self.rule)

    def residual(self, x: float) -> float:
        """What of x neither its big part nor its small part holds."""
        big, _, small = pictures_tiles.split_parts(x, self.half, self.mask, self.scale)
        return x - big - small / 2.0**self.scale

    def test_the_rule_is_the_steps(self):
        self.assertEqual(self.rule, (1, 127, 126, 100))
        self.assertEqual((self.half, self.mask, self.scale), (0x1000, 0xFFFFE000, 10))

    def test_scale_exponent(self):
        unscaled = self.rule[3]
        cases = {
            1.0: 0,
            -0.75: 0,
            2.0**-unscaled: 0,  # the band's ends
            1.99 * 2.0**unscaled: 0,
            1.5 * 2.0**(-unscaled - 1): -unscaled - 1,
            2.0**(unscaled + 1): unscaled + 1,
            2.0**-118: -118,  # the tiny set
            2.0**-130: -126,  # subnormal: the clamp
            2.0**-149: -126,
            3.4e38: 126,  # 2^127 and more: the clamp
            0.0: 0,
            float("inf"): 0,
            float("nan"): 0,
        }
        for m, s in cases.items():
            with self.subTest(m=m):
                self.assertEqual(self.s(m), s)

    def test_a_scaled_row_is_normal_and_below_2(self):
        # Below 4 from 2^127 up: 2^-127 is no normal float, so s stops at 126 there.
        for bits in list(range(1, 0x7F800000, 0x7F800000 // 5000)) + [0x7F7FFFFF]:
            m = pictures_tiles._bits_float(bits)
            scaled = m * 2.0 ** -self.s(m)
            if self.s(m):
                self.assertTrue(2.0**-126 <= scaled < (2.0 if m < 2.0**127 else 4.0), m)

    def test_scaled_subnormals_split_exactly_unscaled_most_lose_places(self):
        lost = 0
        for bits in range(1, 0x800000, 997):
            x = pictures_tiles._bits_float(bits)
            self.assertEqual(self.s(x), -126)
            self.assertEqual(self.residual(x * 2.0**126), 0.0, x)  # at most 23 bits: big 11, small the rest
            lost += self.residual(x) != 0.0
        self.assertGreater(lost, 0.5 * len(range(1, 0x800000, 997)))

    def test_the_pictures_x(self):
        x = pictures_tiles._f32(1.57 * 2.0**-134)
        big, _, _ = pictures_tiles.split_parts(x, self.half, self.mask, self.scale)
        big_scaled, _, _ = pictures_tiles.split_parts(x * 2.0**126, self.half, self.mask, self.scale)
        self.assertEqual(len(pictures_tiles.kept_bits(big, 13)), 3)
        self.assertEqual(len(pictures_tiles.kept_bits(big_scaled, 13)), 11)
        self.assertNotEqual(self.residual(x), 0.0)
        self.assertEqual(self.residual(x * 2.0**126), 0.0)


class SplitOnceTest(unittest.TestCase):
    """Step 29's picture: the shared-memory traffic per k tile it prints is the count of step 25's
    notes ("The cost"), less the splitters' and plus the second A tile's copy; and it refuses a
    step 29 that splits in the pipeline again."""

    def test_the_traffic_is_the_notes_count(self):
        kb = 1024
        self.assertEqual(pictures_tiles._split_traffic(REPO_ROOT, 28),
                         {"copies": 32 * kb, "splitters": 48 * kb, "wgmma": 96 * kb, "fragments": 16 * kb})
        self.assertEqual(pictures_tiles._split_traffic(REPO_ROOT, 29),
                         {"copies": 48 * kb, "splitters": 0, "wgmma": 96 * kb, "fragments": 16 * kb})
        text = " ".join(t.get_text() for t in pictures_tiles.draw_split_once(REPO_ROOT).ax.texts)
        self.assertIn("= 192 KB", text)
        self.assertIn("= 160 KB", text)

    def test_the_splitters_read_from_step_28(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_steps(Path(tmp))
            set_knob(repo, 28, "SPLITTERS", "64")
            text = " ".join(t.get_text() for t in pictures_tiles.draw_split_once(repo).ax.texts)
            self.assertIn("64 threads", text)

    def test_a_split_barrier_in_step_29_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_steps(Path(tmp))
            source = next((repo / "steps" / pictures_tiles.step_dir(repo, 29)).glob("*.cu"))
            text = source.read_text(encoding="utf-8")
            old = "barrier_init(&full[s], 1);"
            self.assertEqual(text.count(old), 1)
            source.write_text(text.replace(old, old + " barrier_init(&split[s], 96);"), encoding="utf-8")
            with self.assertRaises(ValueError):
                pictures_tiles.draw_split_once(repo)


if __name__ == "__main__":
    unittest.main()
