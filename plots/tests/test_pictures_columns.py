"""Step 34's picture and its ports (plots/pictures_columns.py): warp 0's loops are the steps' (step
33 reads each B tile STAGES-1 uses behind its copies and gives it back, one more arrival on
`empty`; step 34 copies only, one thread, and `empty` counts the consumers); the fragments drawn
are the step's (operand_col(), k = t + 4 kh + WGMMA_K step): every value of a warpgroup's B tile
loaded by exactly one thread, a column's values with the four lanes 4 g + t of one warp, and the
step's shuffles combining exactly those four; and the picture: the same bytes every time, labels
on the page and apart, the committed copy current, and a change of a knob or a line seen in it."""

import re
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_columns as pcol
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT
from plots.tests.test_pictures_pass import copy_sources, texts

NAME = "34_columns_by_consumers.svg"


def edit_step(repo: Path, number: int, old: str, new: str) -> None:
    source = pt.step_source_path(repo, number)
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new), encoding="utf-8")


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return pcol.draw_columns_by_consumers(repo)


class Warp0Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.before = pcol.Warp0.read(REPO_ROOT, pcol.BEFORE)
        cls.after = pcol.Warp0.read(REPO_ROOT, pcol.STEP)
        cls.knobs = pt.knobs(REPO_ROOT, pcol.STEP)

    def test_reads_the_knobs(self):
        kn = self.knobs
        self.assertEqual((self.after.stages, self.after.consumers), (kn["STAGES"], kn["BN"] // 64))
        self.assertEqual(self.after.b_tile_bytes, kn["TUNE_SPLIT"] * kn["BN"] * 4)
        self.assertEqual((self.before.stages, self.before.behind, self.before.b_tile_bytes), (4, 3, 16384))

    def test_who_gives_a_stage_back(self):
        """Step 33: the 256 consumer threads and warp 0; step 34: the consumers alone."""
        self.assertTrue(self.before.reads_b)
        self.assertFalse(self.after.reads_b)
        self.assertEqual((self.before.empty_arrivals, self.after.empty_arrivals), (257, 256))

    def test_warp_0_reading_again_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, pcol.STEP, "barrier_init(&empty[s], 128 * CONSUMERS);",
                      "barrier_init(&empty[s], 128 * CONSUMERS + (SPLIT_ONCE ? 0 : 1));")
            with self.assertRaises(ValueError):
                pcol.Warp0.read(repo, pcol.STEP)

    def test_step_33s_loop_is_required(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, pcol.BEFORE, "const int q = n - (STAGES - 1);", "const int q = n - STAGES;")
            with self.assertRaises(ValueError):
                pcol.Warp0.read(repo, pcol.BEFORE)


class FragmentsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = pcol.Fragments.read(REPO_ROOT)
        cls.knobs = pt.knobs(REPO_ROOT, pcol.STEP)

    def test_reads_the_source(self):
        kn = self.knobs
        self.assertEqual((self.f.wgmma_m, self.f.wgmma_k, self.f.tune_split, self.f.b_box),
                         (64, 8, kn["TUNE_SPLIT"], kn["B_BOX"]))
        self.assertEqual(self.f.k_steps, kn["TUNE_SPLIT"] // 8)
        self.assertEqual(self.f.shuffles, (1, 2))
        self.assertEqual(self.f.consumers, kn["BN"] // 64)

    def test_every_value_of_the_tile_once(self):
        """A warpgroup's 128 threads load its WGMMA_M columns x TUNE_SPLIT k of B, each value once."""
        loads = Counter(v for w in range(4) for lane in range(32) for v in self.f.values(w, lane))
        self.assertEqual(set(loads.values()), {1})
        self.assertEqual(set(loads), {(c, k) for c in range(self.f.wgmma_m) for k in range(self.f.tune_split)})
        self.assertEqual(len(self.f.values(0, 0)), 16, "16 values a k tile a thread")

    def test_a_column_lies_with_four_lanes(self):
        for c in range(self.f.wgmma_m):
            with self.subTest(column=c):
                holders = self.f.holders(c)
                self.assertEqual(len(holders), 4)
                self.assertEqual(len({w for w, _ in holders}), 1, "one warp")
                lanes = [lane for _, lane in holders]
                self.assertEqual(len({lane // 4 for lane in lanes}), 1, "one g")
                self.assertEqual(sorted(lane % 4 for lane in lanes), [0, 1, 2, 3], "t = 0 .. 3")
                ks = sorted(k for w, lane in holders for col, k in self.f.values(w, lane) if col == c)
                self.assertEqual(ks, list(range(self.f.tune_split)), "its whole k tile")

    def test_the_picture_s_column(self):
        self.assertEqual(self.f.column(0, 0, 1), 1)
        self.assertEqual([lane for _, lane in self.f.holders(1)], [4, 5, 6, 7])
        self.assertEqual([self.f.column(0, h, 1) for h in range(2)], [1, 5])
        self.assertEqual([self.f.k(0, kh, step) for step in range(4) for kh in range(2)],
                         [0, 4, 8, 12, 16, 20, 24, 28])

    def test_two_shuffles_combine_the_four(self):
        for lane in range(32):
            self.assertEqual(self.f.combined(lane), {0, 1, 2, 3})
        self.assertEqual([sorted(r) for r in self.f.rounds(5)], [[1], [0, 1], [0, 1, 2, 3]])

    def test_shuffles_that_leave_the_column_are_refused(self):
        with self.assertRaises(ValueError):
            pcol.Fragments(64, 8, 32, 32, (1, 4), 2)
        with self.assertRaises(ValueError):
            pcol.Fragments(64, 8, 32, 32, (1,), 2)
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, pcol.STEP, "m = max(m, __shfl_xor_sync(0xffffffffu, m, 2));",
                      "m = max(m, __shfl_xor_sync(0xffffffffu, m, 8));")
            with self.assertRaises(ValueError):
                pcol.Fragments.read(repo)

    def test_another_operand_layout_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, pcol.STEP, "return B_BOX * (warp / 2) + 4 * q + g % 4 + 16 * (g / 4);",
                      "return B_BOX * (warp / 2) + 8 * q + g;")
            with self.assertRaises(ValueError):
                pcol.Fragments.read(repo)

    def test_maxima_kept_by_the_consumers(self):
        self.assertEqual(pcol.maxima_instructions(REPO_ROOT), 2)
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit_step(repo, pcol.STEP, "if constexpr (first) seen[h] = max(seen[h], __float_as_uint(b) & 0x7fffffffu);",
                      "")
            with self.assertRaises(ValueError):
                pcol.maxima_instructions(repo)


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(pcol.PICTURES), [NAME])
        self.assertIn("plots.pictures_columns", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = pcol.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, pcol.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)
        self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / pcol.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_columns")
        self.assertEqual(path.read_text(encoding="utf-8"), pcol.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_columns")

    def test_labels_stay_on_the_page_and_apart(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = pcol.draw_columns_by_consumers(REPO_ROOT)
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
        self.assertIn("wait: use n - 3\nlanded", drawn)
        self.assertIn("32 lanes read its B tile,\n16 KB: 4 columns a lane", drawn)
        self.assertTrue(any("empty counts 257" in t for t in drawn))
        self.assertTrue(any("empty counts 256: the consumers alone" in t for t in drawn))
        self.assertIn("largest |b| a column:\n32 instructions", drawn)
        self.assertIn("load 16 values of B\n(2 columns x 8 k)", drawn)
        self.assertIn("12 wgmmas: 3\nproducts x 4", drawn)
        self.assertIn("cols 1, 5", drawn)
        self.assertEqual([t for t in drawn if re.fullmatch(r"g = \d", t)], [f"g = {g}" for g in range(8)])
        self.assertIn("lane 4 (t = 0) writes col_max[1]", drawn)
        self.assertIn("max with lane xor 1", drawn)
        self.assertIn("max with lane xor 2", drawn)
        self.assertEqual(sum(t.endswith("all four") for t in drawn), 4)
        self.assertTrue(any("t = 0 the k 0, 4, 8, 12, 16, 20, 24, 28" in t for t in drawn))

    def test_follows_the_knobs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = pcol.PICTURES[NAME](repo)
            self.assertEqual(before, pcol.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            edit_step(repo, pcol.STEP, "SGEMM_KNOB(STAGES, 4)", "SGEMM_KNOB(STAGES, 3)")
            drawn = texts(draw(repo))
            self.assertIn("wait: use n - 3\ngiven back", drawn)
            self.assertTrue(any("up to 3 uses ahead" in t for t in drawn))
            self.assertNotEqual(pcol.PICTURES[NAME](repo), before)
            edit_step(repo, pcol.BEFORE, "SGEMM_KNOB(STAGES, 4)", "SGEMM_KNOB(STAGES, 3)")
            self.assertIn("wait: use n - 2\nlanded", texts(draw(repo)))
            edit_step(repo, pcol.STEP, "SGEMM_KNOB(BN, 128)", "SGEMM_KNOB(BN, 64)")
            self.assertTrue(any("empty counts 128: the consumers alone" in t for t in texts(draw(repo))))
            edit_step(repo, pcol.STEP, "if (t == 0) col_max[consumer * WGMMA_M + operand_col(warp, h, g)] = m;", "")
            with self.assertRaises(ValueError):
                pcol.PICTURES[NAME](repo)


if __name__ == "__main__":
    unittest.main()
