"""The C++ harness and the plot tool agree on the CSV columns."""

import re
import unittest

from plots import schema
from plots.tests.helpers import REPO_ROOT

CSV_CPP = REPO_ROOT / "common" / "csv.cpp"


def cpp_columns() -> list[str]:
    """The strings of `kColumns[] = {...};` in common/csv.cpp, in order."""
    text = CSV_CPP.read_text(encoding="utf-8")
    match = re.search(r"kColumns\[\]\s*=\s*\{(.*?)\};", text, re.S)
    if match is None:
        raise AssertionError(f"no kColumns[] = {{...}} in {CSV_CPP}")
    return re.findall(r'"([^"]*)"', match.group(1))


class CsvColumnsTest(unittest.TestCase):
    def test_python_schema_is_the_harness_header(self):
        self.assertEqual(list(schema.HEADER), cpp_columns())

    def test_old_header_is_the_new_one_without_the_accuracy(self):
        self.assertEqual(len(schema.OLD_HEADER), 27)
        self.assertEqual([c for c in cpp_columns() if c not in schema.ACCURACY + schema.TUNING + schema.INPUTS],
                         list(schema.OLD_HEADER))
        self.assertEqual([c for c in cpp_columns() if c not in schema.TUNING + schema.INPUTS],
                         list(schema.PRE_TUNING_HEADER))
        self.assertEqual([c for c in cpp_columns() if c not in schema.INPUTS],
                         list(schema.PRE_INPUTS_HEADER))
        self.assertTrue(set(schema.ACCURACY) <= set(cpp_columns()))
