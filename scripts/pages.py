#!/usr/bin/env python3
"""Reads the step pages as a reader would and reports what makes one a lesson or not.

    python3 scripts/pages.py            a line per page: prose words, words before the first
                                        heading after the title, picture, notes link
    python3 scripts/pages.py --check    exit 1 if a page breaks a rule below

Rules (docs/methodology.md, "A step's page"):
- the prose of a page is at most PROSE_LIMIT words. Prose is what a reader reads as text:
  not code blocks, not tables, not the blocks the plot tool generates
  (<!-- BEGIN x --> .. <!-- END x -->), not image lines, not link targets;
- the idea comes first: the page's first paragraph after the title and the "Previous step"
  line, before any heading, states it in at most IDEA_LIMIT words;
- pages 03 onwards show a picture (an image line);
- no words of work orders and no commit hashes in pages, the README and docs/ outside
  docs/notes/ (the notes keep the history).
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROSE_LIMIT = 1600   # "about 1,500"
IDEA_LIMIT = 100
PICTURE_FROM = 3     # steps 01 and 02 change no geometry
ORDER_WORDS = re.compile(r"\b(floor|floors|development runs?|sessions?)\b", re.I)
# A commit hash: 7 to 40 hex digits with at least one letter and one digit, standing alone.
HASH = re.compile(r"(?<![\w/.#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w/-])")


def prose_lines(text: str):
    """The lines a reader reads as prose."""
    in_code = False
    generated = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if re.match(r"<!-- BEGIN [\w-]+ -->", stripped):
            generated = True
            continue
        if re.match(r"<!-- END [\w-]+ -->", stripped):
            generated = False
            continue
        if generated or stripped.startswith("|") or stripped.startswith("![") or stripped.startswith("<img"):
            continue
        if stripped.startswith("<!--"):
            continue
        yield line


def words(line: str) -> int:
    line = re.sub(r"\]\([^)]*\)", "]", line)  # link targets are not read
    line = re.sub(r"`[^`]*`", "x", line)      # inline code counts as one word
    return len(re.findall(r"[\w'’.-]+", line))


def idea_words(text: str) -> int:
    """Words of the first paragraph after the title and the "Previous step" line, or 0 when a
    heading comes first."""
    lines = list(prose_lines(text))
    i = 0
    while i < len(lines) and not lines[i].startswith("# "):
        i += 1
    i += 1
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith("Previous step")):
        i += 1
    n = 0
    while i < len(lines) and lines[i].strip() and not lines[i].startswith("#"):
        n += words(lines[i])
        i += 1
    return n


def pages():
    return sorted((ROOT / "steps").glob("[0-9][0-9]_*/README.md"))


def main(argv) -> int:
    check = "--check" in argv
    bad = []
    for page in pages():
        text = page.read_text()
        step = int(page.parent.name[:2])
        prose = sum(words(l) for l in prose_lines(text))
        idea = idea_words(text)
        picture = bool(re.search(r"^\s*(!\[|<img)", text, re.M))
        notes = "docs/notes/" in text
        problems = []
        if prose > PROSE_LIMIT:
            problems.append(f"{prose} words of prose (at most {PROSE_LIMIT})")
        if idea == 0 or idea > IDEA_LIMIT:
            problems.append(f"first paragraph {idea} words (the idea, at most {IDEA_LIMIT})")
        if step >= PICTURE_FROM and not picture:
            problems.append("no picture")
        if not check:
            print(f"{page.parent.name:28s} prose {prose:5d}  idea {idea:4d}  picture {'yes' if picture else 'no ':3s}"
                  f"  notes {'yes' if notes else 'no'}")
        bad += [f"{page.relative_to(ROOT)}: {p}" for p in problems]
    docs = [ROOT / "README.md", *pages(), *(p for p in (ROOT / "docs").rglob("*.md") if "notes" not in p.parts)]
    for doc in docs:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for m in ORDER_WORDS.finditer(line):
                bad.append(f"{doc.relative_to(ROOT)}:{n}: '{m.group(0)}' (a word of our work orders)")
            for m in HASH.finditer(line):
                bad.append(f"{doc.relative_to(ROOT)}:{n}: '{m.group(0)}' (a commit hash: the notes keep those)")
    try:
        for b in bad:
            print(b)
    except BrokenPipeError:
        pass
    return 1 if (check and bad) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
