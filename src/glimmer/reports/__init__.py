"""glimmer.reports: the evidence of a burn-in run for the people and tools that read it.

One assembled model of a BurnInRun (:mod:`.assemble`) feeds four formats, one module each:
JUnit XML for CI (:mod:`.junit`), Markdown for tickets (:mod:`.markdown`), a self-contained
HTML page with inline SVG charts (:mod:`.html`, :mod:`.charts`) and NVVS-compatible JSON per
node for DCGM-shaped tooling (:mod:`.nvvs`). :func:`write_reports` is the entry point; what a
report folder holds afterwards (this run's files, the user's left alone) is :mod:`.folder`'s
rule, and :mod:`.findings` is the list of units that did not pass that the HTML page and
``glimmer run``'s verdict table both lead with.
"""

from glimmer.reports.assemble import Report, Stamp, assemble
from glimmer.reports.read import read_run
from glimmer.reports.write import FORMATS, formats_of, write_reports

__all__ = ["FORMATS", "Report", "Stamp", "assemble", "formats_of", "read_run", "write_reports"]
