"""Marked sections: only the text between the markers is replaced."""

import unittest
from pathlib import Path

from plots import markers
from plots.schema import InputError


class MarkerTest(unittest.TestCase):
    TEXT = "intro\n<!-- BEGIN results -->\nold\n<!-- END results -->\noutro\n"

    def test_replaces_only_between_markers(self):
        new = markers.replace_section(self.TEXT, "results", "new table", Path("x.md"))
        self.assertEqual(new, "intro\n<!-- BEGIN results -->\n\nnew table\n\n"
                              "<!-- END results -->\noutro\n")

    def test_idempotent(self):
        once = markers.replace_section(self.TEXT, "results", "table", Path("x.md"))
        twice = markers.replace_section(once, "results", "table", Path("x.md"))
        self.assertEqual(once, twice)

    def test_no_markers(self):
        self.assertIsNone(markers.replace_section("text\n", "results", "t", Path("x.md")))

    def test_malformed_markers_are_errors(self):
        cases = {
            "a\n<!-- END results -->\n<!-- BEGIN results -->\n":
                "x.md:2: <!-- END results --> comes before <!-- BEGIN results -->",
            "<!-- BEGIN results -->\n<!-- BEGIN results -->\n<!-- END results -->\n":
                "x.md:1: expected exactly one <!-- BEGIN results --> and one "
                "<!-- END results -->, found 2 and 1",
            "a\n<!-- BEGIN results -->\n":
                "x.md:2: expected exactly one <!-- BEGIN results --> and one "
                "<!-- END results -->, found 1 and 0",
        }
        for text, message in cases.items():
            with self.subTest(text=text):
                with self.assertRaises(InputError) as caught:
                    markers.replace_section(text, "results", "t", Path("x.md"))
                self.assertEqual(str(caught.exception), message)
