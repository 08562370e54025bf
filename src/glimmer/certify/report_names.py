"""Where a certification's results live on a cluster, named once: the controllers write them
and ``glimmer certify status`` reads them (the CLI may not import the controllers, which
import kopf, so the names live here, below both).

A finished Workflow leaves ConfigMap ``<workflow>-result`` (its category's result document
under :data:`CATEGORY_KEY`); a finished Certification leaves ``<certification>-report`` (the
whole result document under :data:`REPORT_KEY`).
"""

from __future__ import annotations

from typing import Final

from glimmer.certify.catalog.naming import NAME_MAX, truncate

CATEGORY_KEY: Final = "category.json"
REPORT_KEY: Final = "result.json"


def result_name(workflow: str) -> str:
    """The ConfigMap holding a Workflow's category result."""
    return truncate(f"{workflow}-result", NAME_MAX)


def report_name(certification: str) -> str:
    """The ConfigMap holding a Certification's report."""
    return truncate(f"{certification}-report", NAME_MAX)
