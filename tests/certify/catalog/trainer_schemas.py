"""Validators for the Kubeflow Trainer CRDs in the shared schemas folder (openAPIV3Schema)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

SCHEMAS = Path(__file__).resolve().parents[3].parent / "shared" / "schemas" / "kubeflow-trainer"
FILES = {
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
    "ClusterTrainingRuntime": "trainer.kubeflow.org_clustertrainingruntimes.yaml",
}


def _plain(node: Any) -> Any:
    # Kubernetes-only keywords (x-kubernetes-*) mean nothing to JSON schema; an int-or-string
    # node carries no type, which JSON schema reads as "anything", the right reading here.
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items() if not k.startswith("x-")}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


@cache
def validator(kind: str) -> jsonschema.protocols.Validator:
    crd = yaml.safe_load((SCHEMAS / FILES[kind]).read_text(encoding="utf-8"))
    schema = _plain(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def problems(obj: dict[str, Any]) -> list[str]:
    """Every schema violation of one Trainer object (empty when valid)."""
    found = validator(obj["kind"]).iter_errors(obj)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found]
