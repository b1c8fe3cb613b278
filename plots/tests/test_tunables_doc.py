"""The repository's own docs/tunables.md describes every tunable of every step."""

import unittest

from plots import tunables
from plots.steps import step_dirs
from plots.tests.helpers import REPO_ROOT


class TunablesDocTest(unittest.TestCase):
    def test_every_knob_is_described(self):
        meanings = tunables.read_meanings(REPO_ROOT)
        self.assertTrue(meanings, "docs/tunables.md has no rows")
        self.assertEqual(tunables.undescribed(REPO_ROOT, step_dirs(REPO_ROOT), meanings), [])
