"""Step 38's picture (plots/pictures_short_epilogue.py): what it reads from the profile (step 37's
stretch of stores, both steps' kernel lengths), the four loops step 38 compiles and the check that
their counts are of the profiled build and of the epilogue's current code, step 37's per-sum
choice, the experiment's times and the pieces step 37's rule cuts K into, the survey's small
shapes; and the picture: the same bytes every time, labels on the page and apart, the committed
copy current, registered, and a change of the files or of the code seen in it or refused."""

import csv
import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib
import matplotlib.style

from plots import pictures_short_epilogue as pse
from plots import pictures_time as pt
from plots.tests.helpers import REPO_ROOT

NAME = "38_short_epilogue.svg"


def copy_sources(root: Path) -> Path:
    """A repository holding only what the picture reads: the steps' kernel files, scripts/paths.py
    (step 37's rule), tests/shapes.txt, the profile, the experiment and the two surveys."""
    files = [*(REPO_ROOT / "steps").glob("*/*.cu"), REPO_ROOT / "scripts" / "paths.py", REPO_ROOT / pse.SHAPES,
             REPO_ROOT / pse.PROFILE, REPO_ROOT / pse.EXPERIMENT, *(REPO_ROOT / p for p in pse.SURVEYS.values())]
    for source in files:
        destination = root / source.relative_to(REPO_ROOT)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def texts(canvas) -> list[str]:
    return [t.get_text() for t in canvas.ax.texts]


def draw(repo: Path):
    with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
        return pse.draw_short_epilogue(repo)


class ProfileTest(unittest.TestCase):
    def test_reads_the_profile(self):
        profile = pse.Profile.read(REPO_ROOT)
        self.assertEqual(profile.kernel, "sgemm_kernel<64, 0, 1>")
        self.assertEqual((profile.stretch, profile.stores, profile.ran), (3161, 256, 1484))
        self.assertEqual((profile.after_wgmma, profile.executed), (27318, 39270))
        self.assertEqual(round(100 * profile.after_wgmma / profile.executed), 70)
        self.assertEqual(profile.lengths[(37, profile.kernel)], 6144)
        self.assertEqual(profile.lengths[(38, profile.kernel)], 8136)
        self.assertEqual(len(profile.lengths), 12, "six kernels of each step")

    def test_the_loops_are_of_the_profiled_build(self):
        counted = pse.loops(REPO_ROOT, pse.Profile.read(REPO_ROOT))
        self.assertEqual(counted, {(False, False): 942, (False, True): 998, (True, False): 1631, (True, True): 1504})
        self.assertEqual(pse.Profile.read(REPO_ROOT).lengths[(38, pse.LOOPS_KERNEL)], pse.LOOPS_KERNEL_LENGTH)
        self.assertLess(max(counted.values()), pse.Profile.read(REPO_ROOT).stretch, "each loop is shorter")

    def test_another_build_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(repo / pse.PROFILE, "38_short_epilogue sgemm_kernel<64, 0, 1> 8136",
                 "38_short_epilogue sgemm_kernel<64, 0, 1> 8200")
            with self.assertRaises(ValueError):
                pse.PICTURES[NAME](repo)


class SourceTest(unittest.TestCase):
    def test_four_loops(self):
        self.assertEqual(sorted(pse.dispatch(REPO_ROOT)), sorted(pse.LOOPS))

    def test_the_epilogue_counted_is_the_step_s(self):
        self.assertEqual(pse.epilogue_sha(REPO_ROOT), pse.EPILOGUE_SHA)

    def test_a_comment_changes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(pt.step_source_path(repo, 38), "  // SCALED and BETA_ZERO (std::bool_constant): the four loops",
                 "  // SCALED and BETA_ZERO (std::bool_constant), the four loops")
            self.assertEqual(pse.epilogue_sha(repo), pse.EPILOGUE_SHA)

    def test_a_changed_epilogue_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(pt.step_source_path(repo, 38), "float& c = out[row * ld + col];",
                 "float& c = out[static_cast<long long>(row) * ld + col];")
            with self.assertRaises(ValueError):
                pse.PICTURES[NAME](repo)

    def test_per_sum_dispatch_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(pt.step_source_path(repo, 38), "    else store(std::true_type{}, std::false_type{});\n", "")
            with self.assertRaises(ValueError):
                pse.dispatch(repo)

    def test_step_37_chose_per_sum(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(pt.step_source_path(repo, 37), "store_c(p, row, col, sum);", "store_c(p, row, col, 2.0f * sum);")
            with self.assertRaises(ValueError):
                pse.dispatch(repo)


class TimesTest(unittest.TestCase):
    def test_the_experiment(self):
        points = pse.fixed_cost(REPO_ROOT)
        self.assertEqual([p.k for p in points], [32, 64, 128, 256, 512, 1024, 2048])
        with (REPO_ROOT / pse.EXPERIMENT).open(newline="", encoding="utf-8") as handle:
            rows = {int(r["k"]): r for r in csv.DictReader(handle)}
        for p in points:
            self.assertAlmostEqual(p.us, float(rows[p.k]["ms_median"]) * 1000)
            self.assertAlmostEqual(p.cublas_us, float(rows[p.k]["cublas_ms_median"]) * 1000)
        self.assertTrue(all(14 <= p.us <= 19 for p in points), "step 37's fixed cost: 14-18 us at every K")

    def test_the_pieces(self):
        """Step 37's rule at 128 x 64 x K, the 128 x 64 tile: one block up to 4 k tiles, then pieces
        of MIN_SPLIT_K_TILES (4) k tiles."""
        points = pse.fixed_cost(REPO_ROOT)
        self.assertEqual([(p.pieces, p.per_piece) for p in points],
                         [(1, 1), (1, 2), (1, 4), (2, 4), (4, 4), (8, 4), (16, 4)])
        self.assertEqual(max(p.per_piece for p in points), pt.knobs(REPO_ROOT, 37)["MIN_SPLIT_K_TILES"])

    def test_the_survey(self):
        rows = pse.survey(REPO_ROOT)
        self.assertEqual([r.shape for r in rows], [(128, 128, 128), (256, 256, 256), (384, 384, 384),
                                                   (512, 512, 512), (640, 640, 640), (96, 200, 300)])
        self.assertTrue(all(r.beta_zero and r.ordinary for r in rows))
        self.assertEqual((round(rows[0].before_us, 1), round(rows[0].step_us, 1)), (13.9, 11.0))
        self.assertTrue(all(r.step_us < r.before_us for r in rows))


class PictureTest(unittest.TestCase):
    def test_names_and_registered(self):
        from plots import pictures
        self.assertEqual(list(pse.PICTURES), [NAME])
        self.assertIn("plots.pictures_short_epilogue", pictures.MODULES)
        self.assertIn(NAME, pictures.drawers())

    def test_renders_the_same_bytes_twice(self):
        svg = pse.PICTURES[NAME](REPO_ROOT)
        self.assertEqual(svg, pse.PICTURES[NAME](REPO_ROOT))
        root = ElementTree.fromstring(svg.encode("utf-8"))
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(root.get("width"), f"{pt.WIDTH * 72 // pt.DPI}pt")
        self.assertNotIn("<dc:date>", svg)
        self.assertLess(len(svg), 400_000, "keep the pictures small")

    def test_committed_picture_is_current(self):
        path = REPO_ROOT / pse.PICTURES_DIR / NAME
        self.assertTrue(path.is_file(), f"{path} is missing: python -m plots.pictures_short_epilogue")
        self.assertEqual(path.read_text(encoding="utf-8"), pse.PICTURES[NAME](REPO_ROOT),
                         f"{path} is stale: python -m plots.pictures_short_epilogue")

    def test_labels_stay_on_the_page_and_apart(self):
        with matplotlib.style.context("default"), matplotlib.rc_context(pt._RC):
            canvas = pse.draw_short_epilogue(REPO_ROOT)
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
        for label in ("step 37", "step 38", "3,161 instructions, 256 stores", "942", "998", "1,631", "1,504",
                      "unscaled, beta 0", "scaled, beta != 0", "14.1", "18.2", "16 x 4", "1 x 1", "128^3",
                      "96x200x300", "13.9 -> 11.0"):
            self.assertIn(label, drawn)
        flat = [t.replace("\n", " ") for t in drawn]
        self.assertTrue(any("1,484 of them ran" in t for t in flat))
        self.assertTrue(any("1,992 instructions longer" in t and "(6,144 to 8,136)" in t and "70%" in t
                            for t in flat))
        self.assertTrue(any("from K = 256" in t and "no block runs more than 4 k tiles" in t for t in flat))

    def test_follows_the_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = pse.PICTURES[NAME](repo)
            self.assertEqual(before, pse.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            edit(repo / pse.PROFILE, "of which 1484 ran", "of which 1500 ran")
            edit(repo / pse.SURVEYS[38], "38_short_epilogue,,128,128,128,1,0,,200,0.011008,",
                 "38_short_epilogue,,128,128,128,1,0,,200,0.012008,")
            flat = [t.replace("\n", " ") for t in texts(draw(repo))]
            self.assertTrue(any("1,500 of them ran" in t for t in flat))
            self.assertIn("13.9 -> 12.0", flat)
            self.assertNotEqual(pse.PICTURES[NAME](repo), before)

    def test_a_scaled_survey_is_refused(self):
        """The picture marks the loop the small shapes ran: beta 0 and no scale, from their rows."""
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(repo / pse.SURVEYS[38], "38_short_epilogue,,128,128,128,1,0,,", "38_short_epilogue,,128,128,128,1,0,tiny,")
            with self.assertRaises(ValueError):
                pse.PICTURES[NAME](repo)


if __name__ == "__main__":
    unittest.main()
