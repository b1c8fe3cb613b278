#!/usr/bin/env python3
"""What one step's code changes against another's, with re-tuned knobs set apart.

A knob is a line `constexpr int|bool NAME = SGEMM_KNOB(NAME, VALUE);` (or `= VALUE;`) with a literal VALUE (a number, true or
false). Steps re-tune knobs that their idea does not need (each step ships the values its
own sweep chose), so a plain diff mixes the idea with re-tuning. Here the old file's knobs
are first given the new file's values (and the new file's alignment, where the line differs
in blanks only): the diff that remains is the code, and the knobs whose values differ are
listed as "re-tuned knobs: NAME old -> new". A knob that only one of the files has is code
(added or removed with its idea).

    scripts/stepdiff.py OLD.cu NEW.cu            the code diff, then the re-tuned knobs
    scripts/stepdiff.py --raw OLD.cu NEW.cu      the plain diff of the two files
    scripts/stepdiff.py --stat OLD.cu NEW.cu     only the counts

scripts/stepdiff.sh names steps by number and calls this. The counts come from
diff_counts(old_path, new_path) -> (code_added, code_removed, retuned), which other tools
import (plots/ for docs/step-diffs.md); lines are counted with difflib.
"""
import argparse
import difflib
import re
import signal
import sys
from pathlib import Path

KNOB = re.compile(r"^(\s*constexpr\s+(?:int|bool)\s+(\w+)\s*=\s*(?:SGEMM_KNOB\(\s*\w+\s*,\s*)?)"
                  r"(-?\d+|true|false)(\s*\)?\s*;.*)$")


def knobs(lines: list[str]) -> dict[str, str]:
    """NAME -> VALUE of the knob lines (the first line of a name wins)."""
    found = {}
    for line in lines:
        if m := KNOB.match(line):
            found.setdefault(m.group(2), m.group(3))
    return found


def with_knobs_of(lines: list[str], new_lines: list[str]) -> list[str]:
    """`lines` with each knob that new_lines also has set to its value there; a knob line that
    then differs from new_lines' only in blanks (alignment) becomes new_lines' line."""
    new_knobs = {m.group(2): m for m in map(KNOB.match, new_lines) if m}
    out = []
    for line in lines:
        m = KNOB.match(line)
        if m and m.group(2) in new_knobs:
            new = new_knobs[m.group(2)]
            line = m.group(1) + new.group(3) + m.group(4)
            if line.split() == new.group(0).split():
                line = new.group(0)
        out.append(line)
    return out


def _read(path) -> list[str]:
    return Path(path).read_text(encoding="utf-8", errors="replace").splitlines()


def _split(old_lines: list[str], new_lines: list[str]):
    """(old lines with the new knob values, re-tuned knobs as (name, old, new))."""
    old_knobs, new_knobs = knobs(old_lines), knobs(new_lines)
    retuned = [(name, old_knobs[name], value) for name, value in new_knobs.items()
               if name in old_knobs and old_knobs[name] != value]
    return with_knobs_of(old_lines, new_lines), retuned


def line_counts(old_lines: list[str], new_lines: list[str]) -> tuple[int, int]:
    """(lines added, lines removed) going from old_lines to new_lines, counted with difflib."""
    # autojunk would treat frequent lines ("}", blank) as junk and inflate the counts.
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def diff_counts(old_path, new_path) -> tuple[int, int, list[tuple[str, str, str]]]:
    """(code lines added, code lines removed, re-tuned knobs [(name, old value, new value)])."""
    new_lines = _read(new_path)
    old_lines, retuned = _split(_read(old_path), new_lines)
    return (*line_counts(old_lines, new_lines), retuned)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--raw", action="store_true", help="the plain diff, knobs and all")
    mode.add_argument("--stat", action="store_true", help="only the counts")
    ap.add_argument("old")
    ap.add_argument("new")
    args = ap.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    old_lines, new_lines = _read(args.old), _read(args.new)
    if args.raw:
        sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
            old_lines, new_lines, args.old, args.new, lineterm=""))
        return 0
    code_old, retuned = _split(old_lines, new_lines)
    added, removed = line_counts(code_old, new_lines)
    raw_added, raw_removed = line_counts(old_lines, new_lines)
    if not args.stat:
        sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
            code_old, new_lines, f"{args.old} (with {args.new}'s knob values)", args.new, lineterm=""))
        print()
    print(f"{args.old} -> {args.new}: code {added} lines added, {removed} removed; "
          f"{len(retuned)} knob(s) re-tuned (plain diff: {raw_added} added, {raw_removed} removed)")
    if retuned:
        print("re-tuned knobs: " + ", ".join(f"{name} {old} -> {new}" for name, old, new in retuned))
    return 0


if __name__ == "__main__":
    sys.exit(main())
