"""How long the operator takes per pass at 100 and 1,000 stand-in nodes.

A pass of the operator is one ``Engine.reconcile`` over the kubernetes backend (the operator's
run daemon adds only the waiting between passes), so this makes the passes itself, in this
process, against the API stand-in over HTTP: N Node objects, one BurnInRun of a Node-scope
host-health test on all N at once (``maxConcurrentNodes: N``, the widest pass there is). The
executions are simulated — a kubelet for 1,000 nodes of real processes is too heavy for one
machine — by patching each runner pod's status (Running, then Succeeded with exit 0) and
writing its log where the stand-in serves ``pods/log`` from, as tests/backends/kubernetes'
pod driver does.

Prints each pass's kind (start, mark running, launch, wait, harvest, terminal), its wall time
and the API requests it made (the stand-in's journal), then the totals per size. Only prints:
a slow machine is a finding, not a crash. Timings include the stand-in serving on another
thread of this process, so they are an upper bound for a real API server's client side.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools/ (the stand-ins)

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.engine.keys import FINALIZER
from glimmer.engine.reconciler import Engine
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

SIZES = (100, 1000)
NS = "default"
GROUP = f"/apis/burnin.glimmer.ai/v1alpha1/namespaces/{NS}"
PODS = f"/api/v1/namespaces/{NS}/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}
OUTPUT = "host_health_version=1\nxid_count=0\nkernel_hw_errors=0\nnode_ready=true\nHOST_HEALTH_OK\n"
TERMINAL = {"Passed", "Failed", "Error", "Cancelled"}
MAX_PASSES = 50


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _container(pod: dict[str, Any], ready: bool, state: dict[str, Any]) -> dict[str, Any]:
    image = pod["spec"]["containers"][0]["image"]
    return {
        "name": "runner",
        "image": image,
        "imageID": f"bench://{image}",
        "restartCount": 0,
        "ready": ready,
        "state": state,
    }


def step_pods(http: httpx.Client, log_dir: Path) -> int:
    """Pending pods start, Running ones finish: one kubelet step for every pod. The pods moved."""
    moved = 0
    for pod in http.get(PODS).json()["items"]:
        meta, phase = pod["metadata"], (pod.get("status") or {}).get("phase") or "Pending"
        at = _stamp()
        if phase == "Pending":
            log = log_dir / NS / f"{meta['name']}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(OUTPUT)
            running = {"running": {"startedAt": at}}
            status = {
                "phase": "Running",
                "startTime": at,
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [_container(pod, True, running)],
            }
        elif phase == "Running":
            started = pod["status"].get("startTime") or at
            done = {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": at}
            status = {
                "phase": "Succeeded",
                "conditions": [{"type": "Ready", "status": "False"}],
                "containerStatuses": [_container(pod, False, {"terminated": done})],
            }
        else:
            continue
        http.patch(f"{PODS}/{meta['name']}/status", json={"status": status}, headers=MERGE)
        moved += 1
    return moved


def _settled(run: dict[str, Any]) -> int:
    results = (run.get("status") or {}).get("results") or []
    return sum(1 for r in results if r.get("phase") not in (None, "", "Running", "Pending"))


def _kind(before: dict[str, Any], after: dict[str, Any], pods: tuple[int, int]) -> str:
    """What a pass did, read from the run and the pods before and after it."""
    was = (before.get("status") or {}).get("phase") or "Pending"
    now = (after.get("status") or {}).get("phase") or "Pending"
    did = []
    if "burnin.glimmer.ai/plan" not in (before["metadata"].get("annotations") or {}):
        did.append("start")
    if was == "Pending" and now == "Running":
        did.append("mark running")
    if pods[1] > pods[0]:
        did.append("launch")
    if _settled(after) > _settled(before):
        did.append("harvest")
    if now in TERMINAL and was not in TERMINAL:
        did.append("terminate")
    if was in TERMINAL:
        did.append("terminal path")
    return " + ".join(did) or "wait"


def bench(n: int, root: Path) -> None:
    log_dir, journal = root / "logs", root / "journal.jsonl"
    with api_in_thread(log_dir=log_dir, journal=journal) as running:
        kubeconfig = write_kubeconfig(root / "kubeconfig", running.url)
        names = [f"node-{i:04d}" for i in range(n)]
        with httpx.Client(base_url=running.url, timeout=60) as http:
            for name in names:
                body = {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                }
                http.post("/api/v1/nodes", json=body).raise_for_status()
            test = {
                "apiVersion": "burnin.glimmer.ai/v1alpha1",
                "kind": "BurnInTest",
                "metadata": {"name": "bench-health"},
                "spec": {"kind": "host-health", "scope": "Node", "durationSeconds": 1},
            }
            http.post(f"{GROUP}/burnintests", json=test).raise_for_status()
            profile = {
                "apiVersion": "burnin.glimmer.ai/v1alpha1",
                "kind": "BurnInProfile",
                "metadata": {"name": "bench"},
                "spec": {"tests": [{"testRef": "bench-health"}]},
            }
            http.post(f"{GROUP}/burninprofiles", json=profile).raise_for_status()
            run = {
                "apiVersion": "burnin.glimmer.ai/v1alpha1",
                "kind": "BurnInRun",
                "metadata": {"name": "wide"},
                "spec": {
                    "profileRef": "bench",
                    "target": {"nodeNames": names},
                    "maxConcurrentNodes": n,
                },
            }
            http.post(f"{GROUP}/burninruns", json=run).raise_for_status()
            engine = Engine(KubernetesBackend(connect(kubeconfig)))
            rows: list[tuple[str, float, int]] = []
            wall = time.perf_counter()
            for _ in range(MAX_PASSES):
                before = http.get(f"{GROUP}/burninruns/wide").json()
                pods_before = len(http.get(PODS).json()["items"])
                requests = sum(1 for _ in journal.open())
                started = time.perf_counter()
                engine.reconcile(NS, "wide")
                took = time.perf_counter() - started
                made = sum(1 for _ in journal.open()) - requests
                after = http.get(f"{GROUP}/burninruns/wide").json()
                pods = (pods_before, len(http.get(PODS).json()["items"]))
                rows.append((_kind(before, after, pods), took, made))
                phase = (after.get("status") or {}).get("phase")
                if phase in TERMINAL and FINALIZER not in (
                    after["metadata"].get("finalizers") or ()
                ):
                    break
                step_pods(http, log_dir)
            wall = time.perf_counter() - wall
            results = (after.get("status") or {}).get("results") or []
    print(
        f"\n{n} nodes: {len(rows)} passes, run {phase} with {len(results)} results, "
        f"{wall:.1f} s wall (passes and pod steps)"
    )
    print(f"  {'pass':<36}{'ms':>10}{'requests':>10}")
    for kind, took, made in rows:
        print(f"  {kind:<36}{took * 1000:>10.0f}{made:>10}")
    total = sum(t for _, t, _ in rows)
    print(
        f"  {'all passes':<36}{total * 1000:>10.0f}{sum(m for _, _, m in rows):>10}"
        f"   ({total / len(rows) * 1000:.0f} ms a pass, {total / n * 1000:.2f} ms a node)"
    )


def main() -> None:
    print(f"operator passes over the API stand-in (pid {os.getpid()}, {os.cpu_count()} CPUs)")
    for n in SIZES:
        with tempfile.TemporaryDirectory(prefix=f"operator-pass-{n}-") as tmp:
            bench(n, Path(tmp))


if __name__ == "__main__":
    main()
