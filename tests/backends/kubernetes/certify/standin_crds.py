"""CRDs for the certification tests' API stand-in: the repository's own (deploy/crds and
deploy/crds-certify), and for any kind the tests need that no folder defines (Kubeflow
Trainer's TrainJob on a stand-in without the Trainer stand-in's CRDs) a permissive one — any
spec, any status, a status subresource — written into the test's folder."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from tools.k8s_standin.api import GLIMMER_CRDS

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
REPO = Path(__file__).resolve().parents[4]
CERTIFY_CRDS = REPO / "deploy" / "crds-certify"

# (group, kind, plural, scope) of every kind the controllers under test touch.
NEEDED = (
    ("certify.glimmer.ai", "Certification", "certifications", "Namespaced"),
    ("certify.glimmer.ai", "Workflow", "workflows", "Namespaced"),
    ("certify.glimmer.ai", "Job", "jobs", "Namespaced"),
    ("certify.glimmer.ai", "GoodputMeasurement", "goodputmeasurements", "Namespaced"),
    ("certify.glimmer.ai", "BandwidthMeasurement", "bandwidthmeasurements", "Namespaced"),
    ("certify.glimmer.ai", "LogProfile", "logprofiles", "Cluster"),
    ("trainer.kubeflow.org", "TrainJob", "trainjobs", "Namespaced"),
    ("trainer.kubeflow.org", "TrainingRuntime", "trainingruntimes", "Namespaced"),
)


def permissive_crd(group: str, kind: str, plural: str, scope: str) -> dict[str, Any]:
    loose = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
            "scope": scope,
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": loose, "status": loose},
                        }
                    },
                }
            ],
        },
    }


@functools.lru_cache(maxsize=64)
def _defined_in(path: Path, mtime: float) -> frozenset[str]:
    # Parsed once per file version: the Trainer CRDs are large, and every test's fixture asks.
    return frozenset(
        str(doc["metadata"]["name"])
        for doc in yaml.load_all(path.read_text(), Loader=Loader)
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"
    )


def defined(folders: Iterable[Path]) -> set[str]:
    """The CRD names the YAML files of ``folders`` define."""
    names: set[str] = set()
    for folder in folders:
        for path in sorted(folder.glob("*.yaml")):
            names |= _defined_in(path, path.stat().st_mtime)
    return names


def crd_dirs(tmp: Path, extra: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """The repository's CRD folders (and ``extra``), plus one under ``tmp`` with a permissive
    CRD for every needed kind none of them defines."""
    folders = (GLIMMER_CRDS, CERTIFY_CRDS, *extra)
    have = defined(folders)
    fill = tmp / "crds-fill"
    fill.mkdir(exist_ok=True)
    docs = [permissive_crd(*row) for row in NEEDED if f"{row[2]}.{row[0]}" not in have]
    (fill / "fill.yaml").write_text(yaml.safe_dump_all(docs))
    return (*folders, fill)
