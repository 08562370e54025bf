"""Every ``x-kubernetes-validations`` rule of Trainer's three CRDs, driven both ways over HTTP
against the API stand-in: an object the rule accepts is stored, one it refuses is answered 422
with the API server's wording (``<path>: Invalid value: "<type>": <message>``, ``<nil>`` for a
root rule). A transition rule (``self == oldSelf``) is driven by an update that keeps the field
(accepted) and one that changes it (refused). A test holds the cases to the CRDs' rules."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tools.k8s_standin import cel
from tools.k8s_standin.background import api_in_thread

Obj = dict[str, Any]
TRAINER = Path(__file__).resolve().parents[3].parent / "shared" / "schemas" / "kubeflow-trainer"
GROUP = "/apis/trainer.kubeflow.org/v1alpha1"
COLLECTIONS = {
    "TrainJob": f"{GROUP}/namespaces/default/trainjobs",
    "TrainingRuntime": f"{GROUP}/namespaces/default/trainingruntimes",
    "ClusterTrainingRuntime": f"{GROUP}/clustertrainingruntimes",
}
RUNTIMES = ("TrainingRuntime", "ClusterTrainingRuntime")
PATCH_POD = (
    "spec.runtimePatches.[manager].trainingRuntimeSpec.template.spec.replicatedJobs.[name]"
    ".template.spec.template.spec"
)


@pytest.fixture(scope="module")
def trainer_crds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """One stand-in for the module, Trainer's CRDs installed once: compiling their 44 rules
    is most of a stand-in's start, and each test leaves the collections empty again."""
    logs = tmp_path_factory.mktemp("trainer-crd-rules")
    with api_in_thread(log_dir=logs) as running, httpx.Client(base_url=running.url) as http:
        for path in sorted(TRAINER.glob("*.yaml")):
            crd = yaml.safe_load(path.read_text())
            made = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
            assert made.status_code == 201, made.text
        deadline = time.monotonic() + 30
        while http.get(COLLECTIONS["TrainJob"]).status_code != 200:
            assert time.monotonic() < deadline, "the Trainer CRDs were never served"
            time.sleep(0.05)
        yield http


@pytest.fixture
def trainer_api(trainer_crds: httpx.Client) -> Iterator[httpx.Client]:
    """The module's stand-in, with every Trainer object a test made deleted after it."""
    yield trainer_crds
    for collection in COLLECTIONS.values():
        for item in trainer_crds.get(collection).json()["items"]:
            gone = trainer_crds.delete(f"{collection}/{item['metadata']['name']}")
            assert gone.status_code == 200, gone.text
        assert trainer_crds.get(collection).json()["items"] == []


def train_job() -> Obj:
    pod = {
        "containers": [{"name": "node", "image": "trainer:1"}],
        "imagePullSecrets": [{"name": "pull"}],
        "initContainers": [{"name": "init", "image": "init:1"}],
        "securityContext": {"runAsUser": 1000},
        "serviceAccountName": "trainer",
        "terminationGracePeriodSeconds": 5,
        "volumes": [{"name": "scratch", "emptyDir": {}}],
    }
    replicated = {"name": "node", "template": {"spec": {"template": {"spec": pod}}}}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "job"},
        "spec": {
            "runtimeRef": {"name": "rt"},
            "trainer": {"numNodes": 1, "numProcPerNode": 1},
            "managedBy": "trainer.kubeflow.org/trainjob-controller",
            "activeDeadlineSeconds": 600,
            "initializer": {
                "dataset": {"storageUri": "hf://datasets/d"},
                "model": {"storageUri": "hf://models/m"},
            },
            "runtimePatches": [
                {
                    "manager": "tests/pin",
                    "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [replicated]}}},
                }
            ],
        },
    }


def runtime(kind: str) -> Obj:
    pod = {"containers": [{"name": "node", "image": "trainer:1"}]}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": kind,
        "metadata": {"name": "rt"},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
            "template": {
                "spec": {
                    "network": {"enableDNSHostnames": True},
                    "successPolicy": {"operator": "All"},
                    "failurePolicy": {"maxRestarts": 0},
                    "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
                    "volumeClaimPolicies": [
                        {"templates": [{"metadata": {"name": "scratch"}, "spec": {}}]}
                    ],
                    "replicatedJobs": [
                        {"name": "init", "template": {"spec": {"template": {"spec": pod}}}},
                        {
                            "name": "node",
                            "dependsOn": [{"name": "init", "status": "Complete"}],
                            "template": {"spec": {"template": {"spec": pod}}},
                        },
                    ],
                }
            },
        },
    }


def _at(obj: Obj, *path: str | int) -> Any:
    for step in path:
        obj = obj[step]  # type: ignore[index]
    return obj


def _pod(obj: Obj) -> Obj:
    spec = _at(obj, "spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec")
    return _at(spec, "replicatedJobs", 0, "template", "spec", "template", "spec")  # type: ignore[no-any-return]


def _tspec(obj: Obj) -> Obj:
    return _at(obj, "spec", "template", "spec")  # type: ignore[no-any-return]


Edit = Callable[[Obj], None]


@dataclass(frozen=True)
class Case:
    """One rule: where it sits (the schema path ``cel.rules_of`` gives) and its text, an edit
    of the base object the rule accepts and one it refuses (on create; on update from the base
    for a transition rule), and the refusal the API server words."""

    kinds: tuple[str, ...]
    path: str
    rule: str
    good: Edit
    bad: Edit | None  # None: no write can break the rule (see the case)
    refusal: str
    update: bool = False
    status: bool = False


def _set(*path_then_value: Any) -> Edit:
    """The edit that sets the field at the path (all but the last argument) to the last."""
    *path, value = path_then_value

    def edit(obj: Obj) -> None:
        _at(obj, *path[:-1])[path[-1]] = value

    return edit


def _pod_set(field: str, value: Any) -> Edit:
    return lambda obj: _pod(obj).__setitem__(field, value)


def _tspec_set(field: str, value: Any) -> Edit:
    return lambda obj: _tspec(obj).__setitem__(field, value)


def _in_order(obj: Obj) -> None:
    """InOrder startup, without the dependsOn it excludes."""
    _tspec(obj)["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    for job in _tspec(obj)["replicatedJobs"]:
        job.pop("dependsOn", None)


def _keep(obj: Obj) -> None:
    obj["metadata"].setdefault("labels", {})["touched"] = "yes"


IMMUTABLE_POD = {
    "containers": [{"name": "sidecar"}],
    "imagePullSecrets": [{"name": "other"}],
    "initContainers": [{"name": "fetch"}],
    "securityContext": {"runAsUser": 0},
    "serviceAccountName": "root",
    "terminationGracePeriodSeconds": 30,
    "volumes": [{"name": "scratch", "hostPath": {"path": "/tmp"}}],
}
POD_TYPES = {"serviceAccountName": "string", "terminationGracePeriodSeconds": "integer"}
URI = "storageUri may be empty, or it must be a valid URI (scheme://...)"

CASES = [
    Case(
        ("TrainJob",),
        "",
        "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        _set("metadata", "name", "job-1"),
        _set("metadata", "name", "1job"),  # a DNS-1123 subdomain, not an RFC 1035 label
        '<nil>: Invalid value: "object": metadata.name must match RFC 1035 DNS label format',
    ),
    Case(
        ("TrainJob",),
        "",
        "size(self.metadata.name) <= 63",
        _set("metadata", "name", "j" * 63),
        _set("metadata", "name", "j" * 64),
        '<nil>: Invalid value: "object": metadata.name must be no more than 63 characters',
    ),
    *(
        Case(
            ("TrainJob",),
            f"spec.initializer.{part}.storageUri",
            "self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')",
            _set("spec", "initializer", part, "storageUri", ""),
            _set("spec", "initializer", part, "storageUri", "/data/not-a-uri"),
            f'spec.initializer.{part}.storageUri: Invalid value: "string": {URI}',
        )
        for part in ("dataset", "model")
    ),
    Case(
        ("TrainJob",),
        "spec.managedBy",
        "self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue']",
        _set("spec", "managedBy", "kueue.x-k8s.io/multikueue"),
        _set("spec", "managedBy", "example.com/mine"),
        'spec.managedBy: Invalid value: "string": ManagedBy must be '
        "trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set",
    ),
    Case(
        ("TrainJob",),
        "spec.trainer.numProcPerNode",
        "self >= 1",
        _set("spec", "trainer", "numProcPerNode", 8),
        _set("spec", "trainer", "numProcPerNode", 0),
        'spec.trainer.numProcPerNode: Invalid value: "integer": '
        "numProcPerNode must be greater than or equal to 1",
    ),
    Case(
        ("TrainJob",),
        "status.trainerStatus",
        "has(self.lastUpdatedTime)",
        _set("status", {"trainerStatus": {"lastUpdatedTime": "2026-01-01T00:00:00Z"}}),
        _set("status", {"trainerStatus": {"progressPercentage": 40}}),
        'status.trainerStatus: Invalid value: "object": '
        "lastUpdatedTime is required when trainerStatus is present",
        status=True,
    ),
    *(
        Case(
            ("TrainJob",),
            f"spec.{field}",
            "self == oldSelf",
            _keep,
            _set("spec", field, value),
            f'spec.{field}: Invalid value: "{kind}": field is immutable',
            update=True,
        )
        for field, value, kind in (
            ("activeDeadlineSeconds", 60, "integer"),
            ("initializer", {"model": {"storageUri": "s3://m"}}, "object"),
            ("managedBy", "kueue.x-k8s.io/multikueue", "string"),
            ("runtimeRef", {"name": "other"}, "object"),
            ("trainer", {"numNodes": 2, "numProcPerNode": 1}, "object"),
        )
    ),
    *(
        Case(
            ("TrainJob",),
            f"{PATCH_POD}.{field}",
            "self == oldSelf",
            _keep,
            _pod_set(field, value),
            "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
            f'.template.spec.template.spec.{field}: Invalid value: "{POD_TYPES.get(field, kind)}"'
            ": field is immutable",
            update=True,
        )
        for field, value in IMMUTABLE_POD.items()
        for kind in ("array" if isinstance(value, list) else "object",)
    ),
    Case(
        ("TrainJob",),
        "spec.runtimePatches.[manager].manager",
        "self == oldSelf",
        # A map list's item is known by its key: a patch under another manager is another
        # item, never compared with the stored one, and the stored manager's item has the same
        # manager by construction. So no write is refused by this rule on a real API server
        # either; the renaming update is accepted (an index-matched check would refuse it).
        _set("spec", "runtimePatches", 0, "manager", "tests/other"),
        None,
        "",
        update=True,
    ),
    Case(
        RUNTIMES,
        "spec.mlPolicy",
        "[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)]"
        ".filter(x, x).size() <= 1",
        _set("spec", "mlPolicy", {"numNodes": 1, "mpi": {"numProcPerNode": 8}}),
        _set(
            "spec",
            "mlPolicy",
            {"numNodes": 1, "torch": {}, "mpi": {"numProcPerNode": 8}},
        ),
        'spec.mlPolicy: Invalid value: "object": Only one of the policy can be configured',
    ),
    *(
        Case(
            RUNTIMES,
            f"spec.mlPolicy.{policy}.numProcPerNode",
            "self >= 1",
            _set("spec", "mlPolicy", {"numNodes": 1, policy: {"numProcPerNode": 1}}),
            _set("spec", "mlPolicy", {"numNodes": 1, policy: {"numProcPerNode": 0}}),
            f'spec.mlPolicy.{policy}.numProcPerNode: Invalid value: "integer": '
            f"NumProcPerNode in {policy}Policy must be >= 1",
        )
        for policy in ("flux", "mpi")
    ),
    Case(
        RUNTIMES,
        "spec.mlPolicy.torch.envInjection.targets.[jobName].containerNames",
        "!self.exists(c, c == 'node')",
        _set(
            "spec",
            "mlPolicy",
            "torch",
            "envInjection",
            {"targets": [{"jobName": "node", "containerNames": ["sidecar"]}]},
        ),
        _set(
            "spec",
            "mlPolicy",
            "torch",
            "envInjection",
            {"targets": [{"jobName": "node", "containerNames": ["sidecar", "node"]}]},
        ),
        'spec.mlPolicy.torch.envInjection.targets[0].containerNames: Invalid value: "array": '
        "containerNames must not include the main node container because PET_* envs are "
        "always injected into it",
    ),
    Case(
        RUNTIMES,
        "spec.template.spec",
        "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
        "self.replicatedJobs.exists(x, has(x.dependsOn)))",
        _tspec_set("startupPolicy", {"startupPolicyOrder": "AnyOrder"}),
        _tspec_set("startupPolicy", {"startupPolicyOrder": "InOrder"}),
        'spec.template.spec: Invalid value: "object": '
        "StartupPolicy and DependsOn APIs are mutually exclusive",
    ),
    Case(
        RUNTIMES,
        "spec.template.spec.volumeClaimPolicies.[]",
        "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)",
        _tspec_set("volumeClaimPolicies", [{"templates": [{"metadata": {"namespace": ""}}]}]),
        _tspec_set("volumeClaimPolicies", [{"templates": [{"metadata": {"namespace": "x"}}]}]),
        'spec.template.spec.volumeClaimPolicies[0]: Invalid value: "object": '
        "namespace cannot be set for VolumeClaimPolicies templates",
    ),
    *(
        Case(
            RUNTIMES,
            f"spec.template.spec.{field}",
            "self == oldSelf",
            _keep,
            _tspec_set(field, value),
            f'spec.template.spec.{field}: Invalid value: "{kind}": Value is immutable',
            update=True,
        )
        for field, value, kind in (
            ("failurePolicy", {"maxRestarts": 3}, "object"),
            ("network", {"enableDNSHostnames": False}, "object"),
            ("successPolicy", {"operator": "Any"}, "object"),
            ("volumeClaimPolicies", [], "array"),
        )
    ),
    Case(
        RUNTIMES,
        "spec.template.spec.startupPolicy",
        "self == oldSelf",
        _keep,
        _in_order,
        'spec.template.spec.startupPolicy: Invalid value: "object": Value is immutable',
        update=True,
    ),
    Case(
        RUNTIMES,
        "spec.template.spec.replicatedJobs.[name].dependsOn",
        "self == oldSelf",
        _keep,
        lambda obj: _tspec(obj)["replicatedJobs"][1]["dependsOn"][0].update(status="Ready"),
        'spec.template.spec.replicatedJobs[1].dependsOn: Invalid value: "array": '
        "Value is immutable",
        update=True,
    ),
]


def _drive(http: httpx.Client, kind: str, case: Case) -> None:
    base = train_job() if kind == "TrainJob" else runtime(kind)
    collection = COLLECTIONS[kind]
    if case.update or case.status:
        made = http.post(collection, json=base)
        assert made.status_code == 201, made.text
        stored = made.json()
        url = f"{collection}/{stored['metadata']['name']}" + ("/status" if case.status else "")
        for edit, accepted in ((case.good, True), (case.bad, False)):
            if edit is None:
                continue
            body = copy.deepcopy(stored)
            edit(body)
            answer = http.put(url, json=body)
            if accepted:
                assert answer.status_code == 200, answer.text
                stored = http.get(f"{collection}/{stored['metadata']['name']}").json()
                if case.status:  # the status written is taken away again: a clean base
                    continue
            else:
                _refused(answer, case.refusal)
        return
    for edit, accepted in ((case.good, True), (case.bad, False)):
        assert edit is not None
        body = copy.deepcopy(base)
        edit(body)
        answer = http.post(collection, json=body)
        if accepted:
            assert answer.status_code == 201, answer.text
            assert http.delete(f"{collection}/{body['metadata']['name']}").status_code == 200
        else:
            _refused(answer, case.refusal)


def _refused(answer: httpx.Response, refusal: str) -> None:
    assert answer.status_code == 422, answer.text
    status = answer.json()
    assert status["reason"] == "Invalid"
    assert status["message"].endswith(f" is invalid: {refusal}"), status["message"]


def _ids() -> Iterator[tuple[str, Case]]:
    for case in CASES:
        for kind in case.kinds:
            yield kind, case


@pytest.mark.parametrize(
    ("kind", "case"),
    list(_ids()),
    ids=[f"{k}:{c.path or '<root>'}:{c.rule[:30]}" for k, c in _ids()],
)
def test_each_trainer_rule_accepts_and_refuses_as_the_api_server_does(
    trainer_api: httpx.Client, kind: str, case: Case
) -> None:
    _drive(trainer_api, kind, case)


def test_the_cases_are_every_rule_of_trainers_crds() -> None:
    held = {(kind, case.path, case.rule) for kind, case in _ids()}
    declared = set()
    for path in sorted(TRAINER.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        for version in crd["spec"]["versions"]:
            for rule in cel.rules_of(version["schema"]["openAPIV3Schema"]):
                assert rule.tree is not None, (path.name, rule.rule)
                declared.add((crd["spec"]["names"]["kind"], ".".join(rule.path), rule.rule))
    assert held == declared


def test_a_trainjob_table_prints_its_newest_condition(trainer_api: httpx.Client) -> None:
    made = trainer_api.post(COLLECTIONS["TrainJob"], json=train_job()).json()
    conditions = [
        {"type": t, "status": "True", "reason": t, "message": t,
         "lastTransitionTime": "2026-01-01T00:00:00Z"}
        for t in ("Created", "Complete")
    ]  # fmt: skip
    wrote = trainer_api.put(
        f"{COLLECTIONS['TrainJob']}/job/status", json={**made, "status": {"conditions": conditions}}
    )
    assert wrote.status_code == 200, wrote.text
    table = trainer_api.get(
        COLLECTIONS["TrainJob"], headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    ).json()
    names = [c["name"] for c in table["columnDefinitions"]]
    assert table["rows"][0]["cells"][names.index("State")] == "Complete"
