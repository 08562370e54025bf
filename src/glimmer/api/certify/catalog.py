"""What a Certification may name from the catalog, known when the file loads.

The catalog is data of a higher layer (:mod:`glimmer.certify.catalog`), so it registers a view
of itself here — each ``domain/variant`` with the threshold keys its measurements produce — and
the Certification model checks its categories and thresholds against that view as it loads.
Without a registered view (the API models used on their own) these checks are left to the
commands that run the file, which always load the catalog.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

# "domain/variant" -> the threshold keys that entry's measurements produce.
CatalogView = Mapping[str, frozenset[str]]

_views: list[Callable[[], CatalogView]] = []


def register_catalog(view: Callable[[], CatalogView]) -> None:
    """Make ``view`` the catalog that Certification files are checked against (the last one
    registered wins)."""
    _views[:] = [view]


def catalog_view() -> CatalogView | None:
    """The registered catalog, or None when none is."""
    return _views[0]() if _views else None
