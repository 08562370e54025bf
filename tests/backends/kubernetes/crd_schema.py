"""The CRDs' own schemas (deploy/crds) as validators, for what the substrate sends a cluster."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

CRDS = Path(__file__).resolve().parents[3] / "deploy" / "crds"


@cache
def schema(plural: str) -> dict[str, Any]:
    """The openAPIV3Schema of ``burnin.glimmer.ai_<plural>.yaml``'s served version."""
    crd = yaml.safe_load((CRDS / f"burnin.glimmer.ai_{plural}.yaml").read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v.get("served", True)]
    found: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return found


def status_problems(status: Any) -> list[str]:
    """Why the BurnInRun CRD's status schema refuses ``status`` (empty: accepted)."""
    validator = jsonschema.Draft7Validator(schema("burninruns")["properties"]["status"])
    return [
        f"{'.'.join(str(p) for p in e.absolute_path) or '<status>'}: {e.message}"
        for e in validator.iter_errors(status)
    ]


def run_problems(run: Any) -> list[str]:
    """Why the BurnInRun CRD's schema refuses the whole object ``run``."""
    validator = jsonschema.Draft7Validator(schema("burninruns"))
    return [
        f"{'.'.join(str(p) for p in e.absolute_path) or '<run>'}: {e.message}"
        for e in validator.iter_errors(run)
    ]
