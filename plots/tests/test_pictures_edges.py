"""The pictures of C cut at its edges and their port of launch()'s cut (plots/pictures_edges.py),
for steps 21 and 40: the decisions at the survey's shapes (cut at the odd shapes whose last block
column holds a column or a few, never at the bench's), the forced cut, a shape worked by hand,
the port's refusal of a source whose cut has changed, and the pictures: the same bytes every
time, labels on the page, the committed copies current and registered."""

import shutil
import tempfile
import unittest
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures, pictures_edges as pe
from plots import pictures_time as pt
from plots.survey import parse_shape
from plots.tests.helpers import REPO_ROOT

NAMES = {21: "21_edge_rectangles.svg", 40: "40_edge_rectangles.svg"}
SOURCES = {21: "steps/21_chosen_tile/chosen_tile.cu", 40: "steps/40_edge_rectangles/edge_rectangles.cu"}

# The survey shapes the port cuts (M x N x K: the rectangles' rows x columns, main first).
CUT = {
    21: {(3000, 3000, 3000): [(3000, 2816), (3000, 184)],
         (2047, 2049, 2047): [(2047, 2048), (2047, 1)],
         (4095, 4097, 4093): [(4095, 4096), (4095, 1)],
         (1023, 1025, 8190): [(1023, 1024), (1023, 1)],
         (777, 1555, 3111): [(768, 1536), (768, 19), (9, 1555)]},
    40: {(2047, 2049, 2047): [(1920, 2049), (127, 2049)],
         (1023, 1025, 8190): [(896, 1025), (127, 1025)]},
}


def survey_shapes() -> list[tuple[int, int, int]]:
    shapes = pe.survey_shapes(REPO_ROOT)
    assert len(shapes) >= 40 and (1000, 1000, 1000) in shapes, shapes
    return shapes


def bench_shapes() -> list[tuple[int, int, int]]:
    for line in (REPO_ROOT / "tests" / "shapes.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("bench "):
            return [parse_shape(s) for s in line.split()[1].split(",")]
    raise AssertionError("tests/shapes.txt has no bench set")


def draw(step: int):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return pe.draw_edges(REPO_ROOT, step)


class PortTest(unittest.TestCase):
    def test_survey_cuts(self):
        for step, expected in CUT.items():
            edges = pe.Edges(REPO_ROOT, step)
            found = {}
            for m, n, k in survey_shapes():
                cut = edges.cut(m, n, k)
                if cut.taken:
                    found[(m, n, k)] = [(p.rows, p.cols) for p in cut.parts]
                    self.assertLess(cut.us, cut.whole.us * (100 - edges.knobs["EDGE_GAIN_PERCENT"]) / 100.0)
            self.assertEqual(found, expected, f"step {step}")

    def test_bench_shapes_run_whole(self):
        """Powers of two from 256 up: every tile divides them, nothing to cut."""
        shapes = bench_shapes()
        self.assertGreaterEqual(len(shapes), 4)
        for step in CUT:
            edges = pe.Edges(REPO_ROOT, step)
            for shape in shapes:
                self.assertFalse(edges.cut(*shape).taken, f"step {step} at {shape}")
                self.assertFalse(edges.cut(*shape, force=True).taken, f"step {step} at {shape}, forced")

    def test_rectangles_cover_c_once(self):
        for step in CUT:
            edges = pe.Edges(REPO_ROOT, step)
            for m, n, k in [(2047, 2049, 2047), (1700, 2400, 230), (129, 257, 700), (300, 301, 64)]:
                cut = edges.cut(m, n, k, force=True)
                if not cut.taken:
                    continue
                covered = sum(p.rows * p.cols for p in cut.parts)
                self.assertEqual(covered, m * n)
                main = cut.parts[0]
                self.assertEqual((main.row, main.col), (0, 0))
                bm, bn = edges.largest
                self.assertEqual(main.rows % bm if main.rows != m else 0, 0)
                self.assertEqual(main.cols % bn if main.cols != n else 0, 0)
                for part in cut.parts[1:]:
                    self.assertTrue((part.col == main.cols and part.rows == main.rows) or
                                    (part.row == main.rows and part.cols == n), part)

    def test_forced_cut_at_the_largest_tile(self):
        """Forced, the cut is at 128 x 128's multiples and the cheapest of the cuts runs, whatever
        the whole's estimate: at 1700 x 2400 x 230 the strip below alone (36 rows), not the
        strip of 96 columns too."""
        edges = pe.Edges(REPO_ROOT, 40)
        self.assertFalse(edges.cut(1700, 2400, 230).taken)
        cut = edges.cut(1700, 2400, 230, force=True)
        self.assertEqual([(p.row, p.col, p.rows, p.cols) for p in cut.parts],
                         [(0, 0, 1664, 2400), (1664, 0, 36, 2400)])

    def test_a_shape_by_hand(self):
        """Step 40 at 2047 x 2049 x 2047: the whole is 16 x 17 = 272 wide tiles, three waves of 132;
        without the last block row, 15 x 17 = 255, two waves. N is odd, so B is copied before the
        whole (its copy costs less than the phases' PHASES_PERCENT of that GEMM) and read in phases
        in the main rectangle: each estimate carries its own. The cut's estimate is the
        rectangles' and one EDGE_LAUNCH_US."""
        edges = pe.Edges(REPO_ROOT, 40)
        rule, kn = edges.rule, edges.knobs
        cut = edges.cut(2047, 2049, 2047)
        self.assertEqual([(p.row, p.col, p.rows, p.cols) for p in cut.parts], [(0, 0, 1920, 2049), (1920, 0, 127, 2049)])
        self.assertEqual((cut.whole.plan.tiles, cut.parts[0].plan.tiles), (272, 255))
        self.assertEqual((cut.parts[0].plan.splits, cut.whole.plan.splits), (1, 1))
        k_tiles = rule.cdiv(2047, kn["TUNE_SPLIT"])
        per_wave = (k_tiles + kn["PIECE_OVERHEAD_TILES"]) * rule.tile_us(rule.wide_bn) * 100.0 / kn["TENSOR_PERCENT"]
        self.assertAlmostEqual(cut.whole.plan.gemm_us, 3 * per_wave, places=6)
        self.assertAlmostEqual(cut.parts[0].plan.gemm_us, 2 * per_wave, places=6)
        pace = rule.gpu["dram_bytes_per_us"] * kn["COPY_PERCENT"] / 100.0
        b_copy = 8.0 * 2047 * 2049 / pace + kn["PASS_US"]
        self.assertAlmostEqual(cut.whole.us, cut.whole.plan.us + b_copy, places=6)
        main = cut.parts[0]
        self.assertAlmostEqual(main.us, main.plan.us * (100 + kn["PHASES_PERCENT"]) / 100.0, places=6)
        self.assertAlmostEqual(cut.us, sum(p.us for p in cut.parts) + kn["EDGE_LAUNCH_US"], places=6)

    def test_a_strip_that_copies_a(self):
        """A strip of one column split in its pipeline, K odd: A's rows are not aligned for TMA,
        so its launch copies A (M x K floats read and written) first, and its estimate says so."""
        edges = pe.Edges(REPO_ROOT, 40)
        kn = edges.knobs
        strip = edges.part(0, 2048, 2047, 1, 2047, 2049)
        self.assertFalse(strip.plan.once)
        pace = edges.rule.gpu["dram_bytes_per_us"] * kn["COPY_PERCENT"] / 100.0
        self.assertGreaterEqual(strip.us - strip.plan.us, 8.0 * 2047 * 2047 / pace + kn["PASS_US"] - 1e-6)

    def test_refuses_a_changed_cut(self):
        for step in CUT:
            with tempfile.TemporaryDirectory() as tmp:
                repo = Path(tmp)
                shutil.copytree(REPO_ROOT / "steps", repo / "steps")
                shutil.copytree(REPO_ROOT / "scripts", repo / "scripts")
                path = repo / SOURCES[step]
                src = path.read_text(encoding="utf-8")
                changed = src.replace("double us = EDGE_LAUNCH_US * (n - 1);", "double us = 0;")
                self.assertNotEqual(changed, src)
                path.write_text(changed, encoding="utf-8")
                with self.assertRaisesRegex(ValueError, "EDGE_LAUNCH_US"):
                    pe.Edges(repo, step)


class PictureTest(unittest.TestCase):
    def test_registered(self):
        self.assertEqual(sorted(pe.PICTURES), sorted(NAMES.values()))
        self.assertIn("plots.pictures_edges", pictures.MODULES)
        for name in NAMES.values():
            self.assertIn(name, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        for name in NAMES.values():
            self.assertEqual(pe.PICTURES[name](REPO_ROOT), pe.PICTURES[name](REPO_ROOT))

    def test_committed_pictures_are_current(self):
        for name in NAMES.values():
            path = REPO_ROOT / pe.PICTURES_DIR / name
            self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_edges")
            self.assertEqual(path.read_text(encoding="utf-8"), pe.PICTURES[name](REPO_ROOT),
                             f"{path} is stale: python -m plots.pictures_edges")

    def test_labels_stay_on_the_page(self):
        for step in NAMES:
            canvas = draw(step)
            for text, (x0, y0, x1, y1) in canvas.text_boxes():
                self.assertTrue(x0 >= 0 and y0 >= 0 and x1 <= canvas.width and y1 <= canvas.height,
                                f"step {step}: {text!r} leaves the page: {(x0, y0, x1, y1)}")


if __name__ == "__main__":
    unittest.main()
