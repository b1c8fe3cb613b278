"""The step pages keep the lesson's rules (scripts/pages.py): prose within about 1,500 words,
the idea in the first paragraph, a picture from step 03 on, and no words of our work orders
or commit hashes in the pages, the README and docs/ outside docs/notes/.

Run by scripts/test.sh:  python3 -m unittest discover -s tests -p "test_*.py"
"""
import io
import sys
import unittest
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import pages  # noqa: E402

PAGE = """# Step 99: an example

Previous step: [98](../98/README.md)

The idea in one short paragraph.

## Why

Prose words here.

```cpp
int code_is_not_prose = 1;
```

| a table | is not prose |
| --- | --- |

<!-- BEGIN results -->
generated words are not prose
<!-- END results -->
"""


class Rules(unittest.TestCase):
    def test_every_page_keeps_the_rules(self):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = pages.main(["--check"])
        self.assertEqual(rc, 0, "scripts/pages.py --check:\n" + out.getvalue())

    def test_prose_leaves_out_code_tables_and_generated_blocks(self):
        words = sum(pages.words(line) for line in pages.prose_lines(PAGE))
        self.assertEqual(words, 4 + 3 + 6 + 1 + 3)  # title, "Previous step" line (not its link), idea, heading, prose

    def test_the_idea_is_the_first_paragraph_after_the_previous_step_line(self):
        self.assertEqual(pages.idea_words(PAGE), 6)
        self.assertEqual(pages.idea_words("# T\n\n## What changes\n\ntext\n"), 0)

    def test_commit_hashes_and_work_order_words_are_found(self):
        self.assertTrue(pages.HASH.search("measured at 1a44685 on the H100"))
        self.assertFalse(pages.HASH.search("steps/23_wgmma and 0x1000u and deadbeef"))
        self.assertTrue(pages.ORDER_WORDS.search("the floor of this chapter"))
        self.assertFalse(pages.ORDER_WORDS.search("floored division"))


if __name__ == "__main__":
    unittest.main()
