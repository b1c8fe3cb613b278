"""Step 35's picture (plots/pictures_small_pass.py): the pass's bytes are the steps' rules' (step 34:
12 MK + 4 KN, read A and B, write both parts of A; step 35: 8 MK, read A, write its small part);
the k tile drawn is the step's (three tiles a stage, the consumers' maxima in one max.NaN, no
wait on `split` in the split-once first sweep); and the picture: the same bytes every time,
labels on the page and apart, the committed copy current, and a change of a line seen in it."""

import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_small_pass as psp
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT
from plots.tests.test_pictures_pass import copy_sources, texts

NAME = "35_small_part_pass.svg"


def edit_step(repo: Path, number: int, old: str, new: str) -> None:
    source = pt.step_source_path(repo, number)
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new), encoding="utf-8")


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return psp.draw_small_part_pass(repo)


class PassTest(unittest.TestCase):
    def test_the_rules_bytes(self):
        before, after = psp.Pass.read(REPO_ROOT, psp.BEFORE), psp.Pass.read(REPO_ROOT, psp.STEP)
        self.assertEqual((before.per_mk, before.per_kn), (12.0, 4.0))
        self.assertEqual((after.per_mk, after.per_kn), (8.0, 0.0))
        self.assertTrue(before.reads_b)
        self.assertFalse(after.reads_b)
        self.assertEqual((before.a_writes, after.a_writes), (2, 1))
        self.assertEqual((before.units(), after.units()), (4.0, 2.0))
        self.assertEqual((before.mib(), after.mib()), (256.0, 128.0))

    def test_a_pass_of_no_known_form_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, psp.STEP, "const double bytes = 8.0 * p.M * p.K;", "const double bytes = 8.0 * p.M;")
            with self.assertRaises(ValueError):
                psp.Pass.read(repo, psp.STEP)


class TileTest(unittest.TestCase):
    def test_reads_the_source(self):
        t, kn = psp.Tile.read(REPO_ROOT), pt.knobs(REPO_ROOT, psp.STEP)
        self.assertEqual(t.tile_kb, kn["BM"] * kn["TUNE_SPLIT"] * 4 // 1024)
        self.assertEqual((t.stage_tiles, t.b_values, t.wgmmas, t.maxima_instructions), (3, 16, 12, 1))
        self.assertFalse(t.waits_for_splitters)
        self.assertEqual((t.bm, t.raw_min_k, t.splitters), (kn["BM"], kn["RAW_MIN_K"], kn["SPLITTERS"]))

    def test_a_first_sweep_that_waits_for_the_splitters_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, psp.STEP, "constexpr bool from_pass = SPLIT_ONCE && first;", "constexpr bool from_pass = false;")
            self.assertTrue(psp.Tile.read(repo).waits_for_splitters)
            with self.assertRaises(ValueError):
                psp.PICTURES[NAME](repo)

    def test_two_instructions_a_value_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, psp.STEP, 'asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(m), "f"(fabsf(x)));',
                      "r = fmaxf(m, fabsf(x));")
            with self.assertRaises(ValueError):
                psp.Tile.read(repo)


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(psp.PICTURES), [NAME])
        self.assertIn("plots.pictures_small_pass", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = psp.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, psp.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)
        self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / psp.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_small_pass")
        self.assertEqual(path.read_text(encoding="utf-8"), psp.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_small_pass")

    def test_labels_stay_on_the_page_and_apart(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = psp.draw_small_part_pass(REPO_ROOT)
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
        self.assertEqual(drawn.count("read A"), 2)
        self.assertEqual(drawn.count("read B"), 1)
        self.assertEqual(drawn.count("write A's\nsmall part"), 2)
        self.assertEqual(drawn.count("write A's\nbig part"), 1)
        self.assertIn("12 MK + 4 KN bytes:\n256 MiB at 4096^3", drawn)
        self.assertIn("8 MK bytes:\n128 MiB at 4096^3", drawn)
        self.assertIn("largest |b|:\n16 FMNMX", drawn)
        self.assertIn("12 wgmmas:\n3 products", drawn)
        self.assertTrue(any("RAW_MIN_K = 32" in t for t in drawn))

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = psp.PICTURES[NAME](repo)
            self.assertEqual(before, psp.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            edit_step(repo, psp.STEP, "SGEMM_KNOB(RAW_MIN_K, 32)", "SGEMM_KNOB(RAW_MIN_K, 64)")
            self.assertTrue(any("RAW_MIN_K = 64" in t for t in texts(draw(repo))))
            self.assertNotEqual(psp.PICTURES[NAME](repo), before)


if __name__ == "__main__":
    unittest.main()
