"""Reading the run a report is made from: a BurnInRun as ``glimmer run --output json`` writes
it (JSON or YAML, one document)."""

from __future__ import annotations

from glimmer.api.load import load_paths
from glimmer.api.run import BurnInRun
from glimmer.errors import InputError, InputErrors, Location


def read_run(path: str) -> BurnInRun:
    """The one BurnInRun in ``path``. Any problem is one InputError naming the file (a report
    command prints one line and exits 2)."""
    try:
        loaded = load_paths([path])
    except InputErrors as errs:
        first = errs.errors[0]
        if len(errs.errors) > 1:
            first.message += f" (and {len(errs.errors) - 1} more problem(s))"
        raise first from None
    runs = [item for item in loaded if isinstance(item.obj, BurnInRun)]
    if len(loaded) != 1 or len(runs) != 1:
        kinds = ", ".join(item.ref for item in loaded) or "nothing"
        raise InputError(f"expected exactly one BurnInRun, found {kinds}", Location(file=path))
    run = runs[0].obj
    assert isinstance(run, BurnInRun)
    return run
