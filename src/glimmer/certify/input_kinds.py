"""What a file given to a certification command holds, in words, for the error that refuses it.

``certify run`` reads a Certification and ``certify render`` a Certification or a WorkloadRun;
a file of another kind (a BurnInProfile, a Fleet) or with no document at all is the user's
mistake, and the error names the file and what is in it, so they see which file they mixed up.
"""

from __future__ import annotations

from collections.abc import Sequence

from glimmer.api.load import Loaded

_SHOWN = 5


def what_it_holds(loaded: Sequence[Loaded]) -> str:
    """``"no document (the file is empty or holds only comments)"`` or
    ``"BurnInProfile/p, Fleet/f"`` (the first few objects, then a count)."""
    if not loaded:
        return "no document (the file is empty or holds only comments)"
    refs = [item.ref for item in loaded[:_SHOWN]]
    more = len(loaded) - len(refs)
    return ", ".join(refs) + (f" and {more} more" if more else "")
