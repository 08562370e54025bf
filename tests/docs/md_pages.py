"""How the doc checks read a Markdown page: prose and fenced lines, heading anchors as GitHub
makes them, link targets, and which relative links are broken.

Imports nothing of glimmer, so the contributor-page checks that use it run even while the code
they describe is being moved.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_CODE_SPAN = re.compile(r"(`+).*?\1")
# [text](target) and ![alt](target), with an optional <...> around the target and a title.
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def split(page: Path) -> tuple[list[str], list[str]]:
    """(prose lines, fenced lines) of a Markdown page; fence markers belong to neither."""
    prose: list[str] = []
    fenced: list[str] = []
    inside = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            inside = not inside
            continue
        (fenced if inside else prose).append(line)
    return prose, fenced


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower-cased, punctuation dropped, blanks to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    kept = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of ``page``; a repeated heading gets ``-1``, ``-2``… as on GitHub."""
    seen: Counter[str] = Counter()
    found: set[str] = set()
    for line in split(page)[0]:
        match = _HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(1))
        found.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
        seen[base] += 1
    return found


def links(page: Path) -> list[str]:
    """Link targets in the prose of ``page`` (code spans and fenced blocks are examples)."""
    # Link text may wrap onto the next line, so the prose is searched as one text.
    prose = "\n".join(_CODE_SPAN.sub("", line) for line in split(page)[0])
    return _LINK.findall(prose)


def broken_links(page: Path, root: Path) -> list[str]:
    """Why each relative link of ``page`` is broken: a missing file, or a ``#fragment`` no
    heading of the Markdown page it points into has. Links with a scheme are outside the tree."""
    broken: list[str] = []
    for target in links(page):
        if _SCHEME.match(target):
            continue
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target}: {dest} does not exist")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(
                f"{target}: no heading with anchor #{fragment} in {dest.relative_to(root)}"
            )
    return broken
