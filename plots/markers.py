"""Marked sections: the text between `<!-- BEGIN name -->` and `<!-- END name -->` in a markdown
file is generated; everything else in the file is left as it is."""

from __future__ import annotations

from pathlib import Path

from plots.schema import InputError, display_path, warn


def _line_of(text: str, marker: str) -> int:
    return text[:text.index(marker)].count("\n") + 1


def replace_section(text: str, name: str, content: str, path: Path) -> str | None:
    """Replaces what lies between the `name` markers; None if the text has neither marker."""
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    n_begin, n_end = text.count(begin), text.count(end)
    if n_begin == n_end == 0:
        return None
    if n_begin != 1 or n_end != 1:
        raise InputError(path, _line_of(text, begin if begin in text else end),
                         f"expected exactly one {begin} and one {end}, "
                         f"found {n_begin} and {n_end}")
    start, stop = text.index(begin) + len(begin), text.index(end)
    if start > stop:
        raise InputError(path, _line_of(text, end), f"{end} comes before {begin}")
    return f"{text[:start]}\n\n{content.strip()}\n\n{text[stop:]}"


# Sections that a file may lack without a warning (the markers are added as docs are written).
OPTIONAL_SECTIONS = ("profile", "profile-summary", "compare", "speed-vs-accuracy", "tunables",
                     "retunes", "shapes")


def update_sections(path: Path, sections: dict[str, str], template: str | None = None
                    ) -> bytes | None:
    """The new content of a markdown file with its marked sections regenerated.

    Returns None (after a warning) when the file should be left alone: it does not exist and
    there is no template to create it from, or it has none of the markers.
    """
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    elif template is not None:
        text = template
    else:
        warn(f"{display_path(path)} does not exist; skipped")
        return None
    unmarked = []
    for name, content in sections.items():
        new_text = replace_section(text, name, content, path)
        if new_text is None:
            unmarked.append(name)
        else:
            text = new_text
    markers = ", ".join(f"<!-- BEGIN {name} -->" for name in unmarked)
    if len(unmarked) == len(sections):
        warn(f"{display_path(path)} has no {markers} markers; file left untouched")
        return None
    unmarked = [name for name in unmarked if name not in OPTIONAL_SECTIONS]
    if unmarked:
        markers = ", ".join(f"<!-- BEGIN {name} -->" for name in unmarked)
        warn(f"{display_path(path)} has no {markers} markers; that part is not generated")
    return text.encode("utf-8")
