"""Step 38's picture (plots/pictures_short_epilogue.py): what it reads from the profile (step 37's
stretch of stores, the kernels' lengths of steps 37 and 38 and of step 38's first form), the four
loops step 38 compiles and the check that their counts are of the profiled build and of the
epilogue's current code, the first form's loops, step 37's per-sum choice, the experiment's times
and the pieces step 37's rule cuts K into, the survey's small shapes (step 37 and step 38 from one
run, the first form from another); and the picture: the same bytes every time, labels on the page
and apart, the committed copy current, registered, and a change of the files or of the code seen
in it or refused. The expected numbers are read from the committed files, not typed."""

import csv
import re
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
    (step 37's rule), tests/shapes.txt, the profile and the two experiments."""
    files = [*(REPO_ROOT / "steps").glob("*/*.cu"), REPO_ROOT / "scripts" / "paths.py", REPO_ROOT / pse.SHAPES,
             REPO_ROOT / pse.PROFILE, REPO_ROOT / pse.EXPERIMENT, REPO_ROOT / pse.FORMS]
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


def profile_text() -> str:
    return (REPO_ROOT / pse.PROFILE).read_text(encoding="utf-8")


def profile_loops(prefix: str) -> dict[tuple[bool, bool], int]:
    """The profile's lines `{prefix}loop scaled S, beta zero B: N instructions`, read here apart."""
    return {(a == "true", b == "true"): int(n) for a, b, n in
            re.findall(rf"(?m)^{prefix}loop scaled (\w+), beta zero (\w+): (\d+) instructions", profile_text())}


def profile_length(label: str, kernel: str) -> int:
    return int(re.search(rf"(?m)^{re.escape(label)} {re.escape(kernel)} (\d+)$", profile_text()).group(1))


def forms_rows() -> dict[str, dict[tuple[int, int, int], dict[str, str]]]:
    """The two-forms experiment's rows by variant (as labelled in the file) and shape."""
    out: dict[str, dict] = {}
    with (REPO_ROOT / pse.FORMS).open(newline="", encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            out.setdefault(f"{r['step']}: {r['variant']}", {})[(int(r["m"]), int(r["n"]), int(r["k"]))] = r
    return out


def forms_row(step: str, variant_start: str, shape: tuple[int, int, int]) -> dict[str, str]:
    rows = [v[shape] for label, v in forms_rows().items()
            if label.startswith(f"{step}: {variant_start}") and shape in v]
    assert len(rows) == 1, (step, variant_start, shape)
    return rows[0]


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
        self.assertEqual(profile.lengths[(37, profile.kernel)], profile_length("37_tile_by_shape", profile.kernel))
        self.assertEqual(profile.lengths[(38, profile.kernel)], profile_length("38_short_epilogue", profile.kernel))
        self.assertEqual(profile.lengths[(38, profile.kernel)], pse.LOOPS_KERNEL_LENGTH)
        self.assertEqual(len(profile.lengths), 12, "six kernels of each step")
        self.assertEqual(profile.first_lengths[profile.kernel],
                         profile_length("step 38's first form:", profile.kernel))
        self.assertEqual(len(profile.first_lengths), 6, "six kernels of the first form")
        self.assertLess(profile.lengths[(38, profile.kernel)], profile.lengths[(37, profile.kernel)],
                        "the final form's kernel is shorter than step 37's")
        self.assertGreater(profile.first_lengths[profile.kernel], profile.lengths[(37, profile.kernel)],
                           "the first form's was longer")

    def test_the_loops_are_of_the_profiled_build(self):
        counted = pse.loops(REPO_ROOT, pse.Profile.read(REPO_ROOT))
        self.assertEqual(counted, profile_loops(""))
        self.assertEqual(list(counted), list(pse.LOOPS))
        self.assertEqual(pse.Profile.read(REPO_ROOT).lengths[(38, pse.LOOPS_KERNEL)], pse.LOOPS_KERNEL_LENGTH)
        self.assertLess(max(counted.values()), pse.Profile.read(REPO_ROOT).stretch, "each loop is shorter")
        self.assertEqual(min(counted, key=counted.get), (False, True), "the unscaled beta-0 loop is the shortest")

    def test_the_first_form_s_loops(self):
        first = pse.first_form_loops(REPO_ROOT)
        counted = pse.loops(REPO_ROOT, pse.Profile.read(REPO_ROOT))
        self.assertEqual(first, profile_loops("first form: "))
        self.assertNotEqual(first, counted, "the two forms' loops are read apart")
        self.assertTrue(all(counted[case] < first[case] for case in pse.LOOPS), "each loop got shorter")

    def test_another_build_is_refused(self):
        kernel = pse.LOOPS_KERNEL
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(repo / pse.PROFILE, f"38_short_epilogue {kernel} {pse.LOOPS_KERNEL_LENGTH}\n",
                 f"38_short_epilogue {kernel} {pse.LOOPS_KERNEL_LENGTH + 64}\n")
            with self.assertRaises(ValueError):
                pse.PICTURES[NAME](repo)

    def test_a_profile_without_the_first_form_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            path = repo / pse.PROFILE
            path.write_text(re.sub(r"(?m)^first form: loop scaled true, beta zero true:.*\n", "",
                                   path.read_text(encoding="utf-8")), encoding="utf-8")
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
            edit(pt.step_source_path(repo, 38), "float& c = at[v][4 * h];", "float& c = at[v][4 * h + 0];")
            with self.assertRaises(ValueError):
                pse.PICTURES[NAME](repo)

    def test_a_store_per_address_is_refused(self):
        """The picture says a sum is stored through a pointer per row under one predicate: the
        first form's address per sum is refused by dispatch itself, whatever the hash says."""
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            edit(pt.step_source_path(repo, 38), "float& c = at[v][4 * h];",
                 "float& c = out[(row0 + 8 * j + v) * ld + col + 4 * h];")
            with self.assertRaises(ValueError):
                pse.dispatch(repo)

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
        for r in rows:
            before = forms_row("37_tile_by_shape", "step 37, run of the final form", r.shape)
            first = forms_row("38_short_epilogue", "first form:", r.shape)
            final = forms_row("38_short_epilogue", "final form:", r.shape)
            self.assertAlmostEqual(r.before_us, float(before["ms_median"]) * 1000)
            self.assertAlmostEqual(r.first_us, float(first["ms_median"]) * 1000)
            self.assertAlmostEqual(r.step_us, float(final["ms_median"]) * 1000)
            self.assertAlmostEqual(r.cublas_us, float(final["cublas_ms_median"]) * 1000)
            self.assertEqual(before["git_rev"], final["git_rev"], "step 37 and step 38: one run")
        self.assertTrue(all(r.step_us < r.before_us for r in rows))

    def test_the_final_form_is_the_step_s_survey(self):
        """The experiment's final-form rows are the step's survey rows (one run)."""
        with (REPO_ROOT / pse.GPU / "survey" / "38_short_epilogue.csv").open(newline="", encoding="utf-8") as handle:
            surveyed = {(int(r["m"]), int(r["n"]), int(r["k"])): r for r in csv.DictReader(handle)}
        for r in pse.survey(REPO_ROOT):
            self.assertEqual(float(surveyed[r.shape]["ms_median"]) * 1000, r.step_us)

    def test_the_runs_are_told_apart(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            final = forms_row("38_short_epilogue", "final form:", (128, 128, 128))
            path = repo / pse.FORMS
            text = path.read_text(encoding="utf-8")
            line = next(l for l in text.splitlines() if l.startswith("38_short_epilogue,\"final form")
                        and ",128,128,128," in l)
            path.write_text(text.replace(line, line.replace(final["git_rev"], "0123456789ab")), encoding="utf-8")
            with self.assertRaises(ValueError):
                pse.survey(repo)


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
        profile = pse.Profile.read(REPO_ROOT)
        counted, first = pse.loops(REPO_ROOT, profile), pse.first_form_loops(REPO_ROOT)
        small = pse.survey(REPO_ROOT)[0]
        for label in ("step 37", "step 38", f"{profile.stretch:,} instructions, {profile.stores} stores",
                      *(f"{n:,}" for n in counted.values()), *(f"{n:,}" for n in first.values()),
                      "unscaled, beta 0", "scaled, beta != 0", "14.1", "18.2", "16 x 4", "1 x 1", "128^3",
                      "96x200x300", f"{small.before_us:.1f} -> {small.step_us:.1f}"):
            self.assertIn(label, drawn)
        flat = [t.replace("\n", " ") for t in drawn]
        self.assertTrue(any(f"{profile.ran:,} of them ran" in t for t in flat))
        before, now = profile.lengths[(37, profile.kernel)], profile.lengths[(38, profile.kernel)]
        then = profile.first_lengths[profile.kernel]
        self.assertTrue(any(f"has {now:,} instructions, {before - now:,} shorter than step 37's {before:,}" in t
                            and f"(its first form's {then:,}: {then - before:,} longer)" in t and "70%" in t
                            for t in flat), "the kernel's length, shorter or longer as the profile says")
        self.assertFalse(any("-" + f"{abs(now - before):,}" in t for t in flat), "no negative 'longer'")
        self.assertTrue(any("from K = 256" in t and "no block runs more than 4 k tiles" in t for t in flat))

    def test_shorter_or_longer(self):
        self.assertEqual(pse._change(6144, 5648), "496 shorter")
        self.assertEqual(pse._change(6144, 8136), "1,992 longer")
        self.assertEqual(pse._change(6144, 6144), "as long")

    def test_follows_the_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            before = pse.PICTURES[NAME](repo)
            self.assertEqual(before, pse.PICTURES[NAME](REPO_ROOT), "the copy draws what the repository does")
            profile = pse.Profile.read(REPO_ROOT)
            edit(repo / pse.PROFILE, f"of which {profile.ran} ran", f"of which {profile.ran + 16} ran")
            final = forms_row("38_short_epilogue", "final form:", (128, 128, 128))
            slower = float(final["ms_median"]) + 0.001
            path = repo / pse.FORMS
            text = path.read_text(encoding="utf-8")
            line = next(l for l in text.splitlines() if l.startswith("38_short_epilogue,\"final form")
                        and ",128,128,128," in l)
            path.write_text(text.replace(line, line.replace(f",{final['ms_median']},", f",{slower:g},", 1)),
                            encoding="utf-8")
            flat = [t.replace("\n", " ") for t in texts(draw(repo))]
            self.assertTrue(any(f"{profile.ran + 16:,} of them ran" in t for t in flat))
            small = pse.survey(REPO_ROOT)[0]
            self.assertIn(f"{small.before_us:.1f} -> {slower * 1000:.1f}", flat)
            self.assertNotEqual(pse.PICTURES[NAME](repo), before)

    def test_a_scaled_survey_is_refused(self):
        """The picture marks the loop the small shapes ran: beta 0 and no scale, from their rows."""
        with tempfile.TemporaryDirectory() as tmp:
            repo = copy_sources(Path(tmp))
            path = repo / pse.FORMS
            text = path.read_text(encoding="utf-8")
            line = next(l for l in text.splitlines() if l.startswith("38_short_epilogue,\"final form")
                        and ",128,128,128,1,0,," in l)
            path.write_text(text.replace(line, line.replace(",128,128,128,1,0,,", ",128,128,128,1,0,tiny,")),
                            encoding="utf-8")
            with self.assertRaises(ValueError):
                pse.PICTURES[NAME](repo)


if __name__ == "__main__":
    unittest.main()
