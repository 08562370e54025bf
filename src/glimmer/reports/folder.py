"""A report folder: what glimmer owns in it, whether it can be written, and how files land.

A folder holds the reports of one run. glimmer owns the files it writes there and nothing else:
a file is glimmer's when its name is one glimmer writes (``junit.xml``, ``burn-in-report.html``,
``burnin-report.md``, ``diag.json``, ``diag-*.json``, or an interrupted write's ``.<name>.*``)
*and* its text carries the mark its format always writes (a real ``dcgmi diag -j`` output saved
as ``diag-node1.json`` has the name but not the mark, so it is left alone). Before a run's
reports are written, glimmer's files of an earlier run that this run does not write again are
removed, so a reader of the folder (an NVVS tool reading every ``diag-*.json``) never mixes two
runs; every other file in the folder is the user's and is never touched.

Files are written to a temporary name beside the target and renamed over it, so a reader sees
the old file or the new one, never half of one. They are created with mode 0666 and so honour
the process umask, like any file the user's shell would create; nothing is chmod-ed.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from glimmer.errors import InputError

# The fixed names glimmer writes, by format, and the pattern of the per-node NVVS documents.
FIXED_NAMES = {
    "junit.xml": "junit",
    "burn-in-report.html": "html",
    "burnin-report.md": "md",
    "diag.json": "nvvs",
}
NVVS_PREFIX, NVVS_SUFFIX = "diag-", ".json"

# Text each format writes whatever the run and the stamp: the proof that a file is glimmer's.
# tests/reports/test_folder.py checks every renderer still writes its mark.
MARKS = {
    "junit": "<!-- glimmer burn-in report: ",
    "html": "A pass is a statement about the gates that were applied, not a warranty.",
    "md": "A pass is a statement about the gates that were applied, not a warranty.",
    "nvvs": "is not produced or endorsed by NVIDIA",
}
# A file bigger than this is not one glimmer wrote (a 1,024-node HTML page is under 3 MB); it
# is not read to look for a mark, and is left alone.
LARGEST_OWNED_BYTES = 64 * 1024 * 1024
_TEMP_SUFFIX = ".tmp"

# Plural kinds for the one-line summary of what was written.
KIND_WORDS = {"junit": "JUnit", "html": "HTML", "md": "Markdown", "nvvs": "NVVS"}


def format_of(name: str) -> str | None:
    """The format a file name belongs to, or None when glimmer never writes that name."""
    if name in FIXED_NAMES:
        return FIXED_NAMES[name]
    if name.startswith(NVVS_PREFIX) and name.endswith(NVVS_SUFFIX) and len(name) > 10:
        return "nvvs"
    return None


# Before temporaries were named ``.<name>.<random>.tmp``, they were ``.<name>.<8 characters>``.
_OLD_TEMP_TOKEN = re.compile(r"[a-z0-9_]{8}")


def _temp_target(name: str) -> str | None:
    """The name an interrupted write of ``.<name>.<random>.tmp`` was writing, else None."""
    if not name.startswith("."):
        return None
    if name.endswith(_TEMP_SUFFIX):
        target, _, _ = name[1 : -len(_TEMP_SUFFIX)].rpartition(".")
    else:
        target, _, token = name[1:].rpartition(".")
        if not _OLD_TEMP_TOKEN.fullmatch(token):
            return None
    return target if format_of(target) else None


def _carries_mark(path: Path, fmt: str) -> bool:
    try:
        if not path.is_file() or path.is_symlink():
            return False
        if path.stat().st_size > LARGEST_OWNED_BYTES:
            return False
        return MARKS[fmt] in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def owned_files(folder: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """glimmer's report files in ``folder`` (name and mark), plus leftovers of interrupted
    writes; sorted. Names in ``skip`` are not looked at. Empty when there is no folder."""
    if not folder.is_dir():
        return []
    out = []
    for path in folder.iterdir():
        if path.name in skip:
            continue
        target = _temp_target(path.name)
        if target is not None and path.is_file() and not path.is_symlink():
            out.append(path)
            continue
        fmt = format_of(path.name)
        if fmt is not None and _carries_mark(path, fmt):
            out.append(path)
    return sorted(out)


def _first_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def folder_problem(folder: Path) -> str | None:
    """Why reports cannot be written to ``folder``, or None. Reads only: creates nothing."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        return "is a file, not a folder: give a folder to write the reports into"
    existing = _first_existing(folder)
    if not existing.is_dir():
        return f"cannot be created: {existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "is" if existing == folder else f"cannot be created: {existing} is"
        return f"{what} not writable"
    return None


def refuse_unwritable(folder: Path, what: str) -> None:
    """Raise the one-line InputError ``<what> <folder>: <why>`` when reports cannot go there;
    ``what`` names the flag the folder came from (``--report``)."""
    problem = folder_problem(folder)
    if problem is not None:
        raise InputError(f"{what} {folder}: {problem}")


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename; the
    file is created 0666 less the umask."""
    for _ in range(8):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{_TEMP_SUFFIX}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - eight collisions of 32 random bits
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def replace_reports(folder: Path, files: Mapping[str, str]) -> list[Path]:
    """Make ``folder`` hold exactly ``files`` (name → text) of glimmer's: write each one, then
    remove glimmer's files there that this set does not contain. The user's files stay."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = folder / name
        write_atomically(path, text)
        written.append(path)
    # The files just written are not read again: on a 1,000-node run that is 1,000 reads.
    for stale in owned_files(folder, skip=frozenset(files)):
        stale.unlink(missing_ok=True)
    return written


def summary(folder: Path, paths: Iterable[Path]) -> str:
    """``glimmer-report/ (25 files: 1 JUnit, 1 HTML, 1 Markdown, 22 NVVS)``: one line for a
    run of any size."""
    counts: dict[str, int] = {}
    for path in paths:
        fmt = format_of(path.name) or "other"
        counts[fmt] = counts.get(fmt, 0) + 1
    total = sum(counts.values())
    kinds = ", ".join(
        f"{counts[k]} {KIND_WORDS.get(k, 'other')}" for k in (*KIND_WORDS, "other") if k in counts
    )
    shown = str(folder).rstrip("/") + "/"
    noun = "file" if total == 1 else "files"
    return f"{shown} ({total} {noun}: {kinds})" if total else f"{shown} (no files)"
