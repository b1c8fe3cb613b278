"""A colour per step: shades of its chapter's hue, never one colour for two steps in a figure;
the size plot and the heat map drawn by chapter."""

import unittest

import matplotlib
import matplotlib.colors
import matplotlib.style

from plots import palette
from plots.figures import _RC, plot_gflops_vs_size, plot_ratio_heatmap
from plots.tests.helpers import assert_nothing_cut_off, figure_texts, synthetic_gpu

TUTORIAL = [f"{n:02d}_step{n}" for n in range(41)]


def hex_color(color) -> str:
    return matplotlib.colors.to_hex(color, keep_alpha=True)


class PaletteTest(unittest.TestCase):
    def test_chapters(self):
        names = {n: palette.chapter_of(f"{n:02d}_x") for n in (1, 9, 10, 12, 13, 21, 22, 40)}
        self.assertEqual([names[n].label for n in (1, 9)], ["01–09 the blog series"] * 2)
        self.assertEqual([names[n].label for n in (10, 12)], ["10–12 MoYe.jl's pipeline"] * 2)
        self.assertEqual([names[n].label for n in (13, 21)],
                         ["13–21 CUDA cores to cuBLAS"] * 2)
        self.assertEqual([names[n].label for n in (22, 40)],
                         ["22–40 3xTF32 on tensor cores"] * 2)
        self.assertIsNone(palette.chapter_of("00_cublas"))
        self.assertIs(palette.chapter_of("41_later"), palette.OTHER)
        self.assertIs(palette.chapter_of("unnumbered"), palette.OTHER)

    def test_no_colour_for_two_steps(self):
        steps = TUTORIAL + ["41_later", "42_later", "unnumbered"]
        colors = [hex_color(palette.step_color(step, steps)) for step in steps]
        self.assertEqual(len(set(colors)), len(steps), colors)

    def test_a_step_keeps_its_colour(self):
        """A step's shade comes from its number, not from which other steps have results."""
        some = ["01_a", "05_b", "13_c", "24_d"]
        for step in some:
            self.assertEqual(hex_color(palette.step_color(step, some)),
                             hex_color(palette.step_color(step, TUTORIAL)))

    def test_markers_differ_within_a_chapter(self):
        for chapter in palette.CHAPTERS:
            members = [s for s in TUTORIAL if palette.chapter_of(s) is chapter]
            markers = [palette.step_style(step, TUTORIAL)[1] for step in members]
            self.assertEqual(len(set(markers)), len(members), chapter.label)


class ChapterFiguresTest(unittest.TestCase):
    def setUp(self):
        self.gpu, self.steps = synthetic_gpu()
        context = matplotlib.rc_context(_RC)
        style = matplotlib.style.context("default")
        style.__enter__()
        context.__enter__()
        self.addCleanup(style.__exit__, None, None, None)
        self.addCleanup(context.__exit__, None, None, None)

    def test_size_plot_a_panel_per_chapter_and_a_colour_per_step(self):
        fig = plot_gflops_vs_size(self.gpu, self.steps)
        panels = [ax for ax in fig.axes if ax.get_visible()]
        self.assertEqual([ax.get_title() for ax in panels],
                         [chapter.label for chapter in palette.CHAPTERS])
        colors = {}
        for ax in panels:
            for line in ax.get_lines():
                step = line.get_label()
                if step in self.steps:
                    colors.setdefault(step, set()).add(hex_color(line.get_color()))
        self.assertEqual(len(colors), len(self.steps) - 3)  # no 00, 23 or 24 line
        self.assertTrue(all(len(c) == 1 for c in colors.values()))
        self.assertEqual(len({c for cs in colors.values() for c in cs}), len(colors))
        legends = [t.get_text() for t in figure_texts(fig)]
        self.assertIn("23_step23: not measured", legends)
        self.assertIn("FP32 FFMA peak (66.9 TFLOPS)", legends)
        assert_nothing_cut_off(self, fig)

    def test_heatmap_every_shape_and_chapter_rules(self):
        fig = plot_ratio_heatmap(self.gpu, self.steps)
        ax = fig.axes[0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()],
                         ["1024", "2048", "4096", "8192", "1024×1024\n×8192", "256×256\n×16384"])
        # A rule after 00 and between the four chapters, and one before the K-heavy shapes.
        self.assertEqual(len(ax.get_lines()), 5)
        self.assertEqual([t.get_text() for t in ax.texts].count("not measured"), 12)
        assert_nothing_cut_off(self, fig)


if __name__ == "__main__":
    unittest.main()
