"""Writing reports to a folder: the one entry point the CLI and ``glimmer run --report`` call.

Formats and their files (§6): ``junit`` → ``junit.xml``, ``html`` → ``burn-in-report.html``,
``md`` → ``burnin-report.md``, ``nvvs`` → ``diag-<node>.json`` per node plus ``diag.json`` for
node-less results; ``all`` is the four. What a folder holds afterwards, and how files are
written, is :mod:`.folder`'s rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from glimmer.api.run import BurnInRun
from glimmer.errors import InputError
from glimmer.fleet.topology import Topology
from glimmer.reports import html, junit, markdown
from glimmer.reports.assemble import Report, Stamp, assemble
from glimmer.reports.folder import folder_problem, replace_reports
from glimmer.reports.nvvs import render_nvvs

FORMATS: tuple[str, ...] = ("junit", "html", "md", "nvvs")
ALL = "all"

_RENDERERS: dict[str, Callable[[Report], dict[str, str]]] = {
    "junit": lambda r: {junit.FILE_NAME: junit.render_junit(r)},
    "html": lambda r: {html.FILE_NAME: html.render_html(r)},
    "md": lambda r: {markdown.FILE_NAME: markdown.render_markdown(r)},
    "nvvs": render_nvvs,
}


def formats_of(names: Iterable[str]) -> tuple[str, ...]:
    """The formats named (``all`` expands), each once, in the canonical order."""
    wanted: set[str] = set()
    for name in names:
        for part in name.split(","):
            part = part.strip().lower()
            if part == ALL:
                wanted.update(FORMATS)
            elif part in FORMATS:
                wanted.add(part)
            else:
                known = ", ".join((*FORMATS, ALL))
                raise InputError(f"unknown report format {part!r} (known: {known})")
    if not wanted:
        raise InputError("no report format given")
    return tuple(f for f in FORMATS if f in wanted)


def render(report: Report, formats: Iterable[str]) -> dict[str, str]:
    """File name → content for every requested format, in order."""
    out: dict[str, str] = {}
    for fmt in formats_of(formats):
        out.update(_RENDERERS[fmt](report))
    return out


def write_reports(
    run: BurnInRun,
    out_dir: Path,
    formats: Iterable[str] = FORMATS,
    fleet: Topology | None = None,
    *,
    stamp: Stamp | None = None,
) -> list[Path]:
    """Render ``run`` in ``formats`` (``junit``, ``html``, ``md``, ``nvvs`` or ``all``) into
    ``out_dir`` (created if missing); the paths written, in order. Afterwards the folder holds
    exactly these of glimmer's report files: those of an earlier run are removed, the user's
    own files are left alone. ``fleet`` places nodes in their racks on the HTML map; ``stamp``
    fixes the generator line (tests). A folder that cannot be written is an InputError."""
    out_dir = Path(out_dir)
    problem = folder_problem(out_dir)
    if problem is not None:
        raise InputError(f"report folder {out_dir}: {problem}")
    files = render(assemble(run, fleet, stamp), formats)
    try:
        return replace_reports(out_dir, files)
    except OSError as e:
        raise InputError(f"report folder {out_dir}: {e.strerror or e}") from None
