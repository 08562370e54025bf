"""The operator's deployment (issue 16, Deployment): deploy/operator/ is what
glimmer.operator.manifests generates; the Deployment runs ``glimmer operator run`` non-root on
a read-only root filesystem with resource requests and kopf's liveness endpoint as its probe;
the CRDs are deploy/crds and deploy/crds-certify (plus kopf's peering kinds); the generator
imports no cluster library; and the real kubectl applies the folder to the API stand-in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from glimmer.operator import manifests
from glimmer.operator.rbac import CLUSTER_ROLE
from tests.k8s_api import Kubectl

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "deploy" / "operator"


def docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((FOLDER / name).read_text()) if d]


def test_the_checked_in_operator_manifests_are_what_the_code_generates() -> None:
    found = {p.name: p.read_text() for p in sorted(FOLDER.glob("*.yaml"))}
    assert found == manifests.files(), (
        "run: glimmer operator manifests --output-dir deploy/operator"
    )


def test_the_printed_stream_holds_every_checked_in_object_in_apply_order() -> None:
    printed = [d for d in yaml.safe_load_all(manifests.text()) if d]
    checked_in = [d for name in sorted(manifests.files()) for d in docs(name)]
    assert printed == checked_in
    assert printed[0]["kind"] == "Namespace"


def test_the_module_prints_the_stream_or_writes_the_files(tmp_path: Path) -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "glimmer.operator.manifests"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert printed.stdout == manifests.text()
    assert manifests.main(["--output-dir", str(tmp_path)]) == 0
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == manifests.files()


def test_the_crds_are_those_of_deploy_crds_and_deploy_crds_certify_and_kopf_peering() -> None:
    shipped = [
        yaml.safe_load(p.read_text())
        for folder in ("crds", "crds-certify")
        for p in sorted((REPO / "deploy" / folder).glob("*.yaml"))
    ]
    generated = {d["metadata"]["name"]: d for d in docs("10-crds.yaml")}
    for crd in shipped:
        assert generated[crd["metadata"]["name"]] == crd
    assert {"clusterkopfpeerings.kopf.dev", "kopfpeerings.kopf.dev"} <= set(generated)


def _deployment() -> dict[str, Any]:
    [deployment] = docs("30-deployment.yaml")
    return deployment


def test_the_deployment_runs_the_operator_non_root_on_a_read_only_root_filesystem() -> None:
    pod = _deployment()["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["command"][:3] == ["glimmer", "operator", "run"]
    security = container["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] != 0
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert pod["securityContext"]["runAsNonRoot"] is True
    # A read-only root still needs somewhere to write temporary files.
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert {"name": "tmp", "emptyDir": {}} in pod["volumes"]
    assert container["resources"]["requests"]["cpu"]
    assert container["resources"]["requests"]["memory"]
    assert pod["serviceAccountName"] == "glimmer-operator"


def test_the_liveness_probe_is_the_endpoint_the_operator_is_told_to_serve() -> None:
    [container] = _deployment()["spec"]["template"]["spec"]["containers"]
    command = container["command"]
    url = command[command.index("--liveness") + 1]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    probe = container["livenessProbe"]["httpGet"]
    assert url == f"http://0.0.0.0:{ports[probe['port']]}{probe['path']}"


def test_the_pod_knows_its_name_for_peering_and_its_namespace_for_fingerprints() -> None:
    [container] = _deployment()["spec"]["template"]["spec"]["containers"]
    fields = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in container["env"]}
    assert fields == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}


def test_the_metrics_service_selects_the_operator_pods_metrics_port() -> None:
    [service] = docs("40-metrics-service.yaml")
    pod = _deployment()["spec"]["template"]
    assert service["spec"]["selector"] == pod["metadata"]["labels"]
    [port] = service["spec"]["ports"]
    [container] = pod["spec"]["containers"]
    assert port["targetPort"] in {p["name"] for p in container["ports"]}


def test_the_service_account_is_bound_to_the_operators_cluster_role() -> None:
    account, role, binding = docs("20-rbac.yaml")
    assert role["kind"] == "ClusterRole" and role["metadata"]["name"] == CLUSTER_ROLE
    assert binding["roleRef"]["name"] == CLUSTER_ROLE
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": account["metadata"]["name"],
            "namespace": account["metadata"]["namespace"],
        }
    ]
    for rule in role["rules"]:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"]


def test_generating_the_manifests_imports_no_cluster_library() -> None:
    probe = (
        "import sys, glimmer.operator.manifests as m; m.text(); "
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'kopf', 'lightkube'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"


def test_kubectl_applies_the_operator_manifests_to_the_api_stand_in(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "-f", str(FOLDER))
    assert applied.returncode == 0, applied.stderr
    got = kubectl("get", "deployment", "glimmer-operator", "-n", "glimmer-system", "-o", "yaml")
    assert got.returncode == 0, got.stderr
    assert yaml.safe_load(got.stdout)["spec"]["replicas"] == 2
    role = kubectl("get", "clusterrole", CLUSTER_ROLE, "-o", "yaml")
    assert role.returncode == 0, role.stderr
    again = kubectl("apply", "-f", str(FOLDER))
    assert again.returncode == 0, again.stderr
