"""The replay at scale (issue 17): a diagnose certification of ``communication/nccl-all-reduce``
with one degraded NIC on an N-node stand-in cluster (the API, kubelet and Trainer stand-ins over
a generated HGX fleet), the operator's whole registry under kopf in this process.

It prints what the run cost: Workflow reconciles (each replays the category: one LIST of the
Workflow's Jobs per replay), the operator's LISTs and other requests (from the stand-in's
request journal), the operator's CPU (this process's; the cluster runs in a child process),
wall time, Jobs created, and who was named.

Run: ``.venv/bin/python bench/certify_cluster.py --nodes 1000`` (default 64). It only prints:
nothing asserts on time; the machine is shared, so compare figures with each other.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

NS = "default"
CERTS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/certifications"
OPERATOR_AGENTS = ("python-httpx2", "kopf")  # lightkube's and kopf's clients


def _fleet_file(nodes: int, folder: Path) -> Path:
    from glimmer.fleet.generate import generate, to_yaml

    path = folder / f"hgx-{nodes}.yaml"
    path.write_text(to_yaml(generate(nodes * 8, "hgx", f"hgx-{nodes}")))
    return path


def _serve(fleet: str, fault: str, seconds: float, root: str, pipe: Connection) -> None:
    """The child: the stand-in cluster, until the parent says stop."""
    from glimmer.fleet.faultspec import parse_fault
    from glimmer.fleet.load import load_topology
    from tools.k8s_standin.cluster import standin_cluster
    from tools.k8s_standin.trainer_fleet import TrainerFleet

    sim = TrainerFleet(load_topology(fleet), [parse_fault(fault)], seconds_per_job=seconds)
    with standin_cluster(
        root=Path(root),
        network="host",
        fleet=sim,
        crd_dirs=(REPO / "deploy" / "crds-certify",),
        start_timeout=600,
    ) as cluster:
        pipe.send(
            {"url": cluster.url, "kubeconfig": str(cluster.kubeconfig), "cpu0": time.process_time()}
        )
        pipe.recv()
        pipe.send({"cpu": time.process_time()})


def _certification(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Certification",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "target": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
            "categories": [
                {
                    "domain": "communication",
                    "variant": "nccl-all-reduce",
                    "options": {"testScale": "diagnose"},
                }
            ],
        },
    }


def _terminal(http: Any, name: str) -> dict[str, Any] | None:
    got = http.get(f"{CERTS}/{name}")
    body: dict[str, Any] = got.json() if got.status_code == 200 else {}
    for c in (body.get("status") or {}).get("conditions") or ():
        if c["type"] in ("Succeeded", "Failed") and c["status"] == "True":
            return body
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=64, help="fleet size (HGX, 8 GPUs each)")
    parser.add_argument("--seconds-per-job", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=600.0, help="give up after (s)")
    args = parser.parse_args(argv)

    import httpx
    from kopf.testing import KopfRunner

    from glimmer.backends.kubernetes.backend import KubernetesBackend
    from glimmer.backends.kubernetes.client import connect
    from glimmer.operator.context import OperatorContext
    from glimmer.operator.registry import build_registry
    from glimmer.operator.settings import operator_settings

    with tempfile.TemporaryDirectory(prefix="certify-bench-") as tmp:
        folder = Path(tmp)
        fleet = _fleet_file(args.nodes, folder)
        bad = f"hgx-su000-node-{min(5, args.nodes - 1):04d}"
        fault = f"nic_degraded@nic:{bad}/ib3"
        ctx = multiprocessing.get_context("fork")
        mine, theirs = ctx.Pipe()
        started = time.monotonic()
        child = ctx.Process(
            target=_serve, args=(str(fleet), fault, args.seconds_per_job, tmp, theirs)
        )
        child.start()
        info = mine.recv()
        print(f"cluster of {args.nodes} nodes up in {time.monotonic() - started:.1f} s")
        os.environ["KUBECONFIG"] = info["kubeconfig"]
        os.environ["POD_NAMESPACE"] = NS
        context = OperatorContext.over(
            KubernetesBackend(connect(Path(info["kubeconfig"]))), NS, identity="certify-bench"
        )
        runner = KopfRunner(
            ["run", "--standalone", "--namespace", NS],
            registry=build_registry(context),
            settings=operator_settings(),
            timeout=args.timeout + 60,
        )
        name = "bench"
        done: dict[str, Any] | None = None
        with runner, httpx.Client(base_url=info["url"], timeout=60) as http:
            cpu0, t0 = time.process_time(), time.monotonic()
            made = http.post(CERTS, json=_certification(name))
            assert made.status_code == 201, made.text
            while time.monotonic() - t0 < args.timeout and done is None:
                time.sleep(0.5)
                done = _terminal(http, name)
            wall, cpu = time.monotonic() - t0, time.process_time() - cpu0
            report = http.get(f"/api/v1/namespaces/{NS}/configmaps/{name}-report")
        mine.send("stop")
        cluster_cpu = mine.recv()["cpu"] - info["cpu0"]
        child.join(120)
        entries = [
            json.loads(line)
            for line in (folder / "journal.jsonl").read_text().splitlines()
            if line.strip().endswith("}")
        ]
    ours = [e for e in entries if str(e.get("user_agent", "")).startswith(OPERATOR_AGENTS)]
    lists = collections.Counter(e["resource"] for e in ours if e.get("verb") == "list")
    writes = collections.Counter(
        f"{e.get('verb')} {e['resource']}"
        for e in ours
        if e["method"] in ("POST", "PUT", "PATCH", "DELETE")
    )
    replays = sum(
        1
        for e in ours
        if e.get("verb") == "list"
        and e["resource"] == "jobs"
        and "labelSelector" in (e.get("query") or {})
    )
    jobs = sum(
        1 for e in ours if e["method"] == "POST" and e["resource"] == "jobs" and e["status"] == 201
    )
    print(f"nodes {args.nodes}, seconds per job {args.seconds_per_job}")
    state = "timed out" if done is None else "Failed" if _failed(done) else "Succeeded"
    print(f"finished: {state}")
    print(f"wall {wall:.1f} s, operator CPU {cpu:.1f} s, cluster CPU {cluster_cpu:.1f} s")
    print(f"jobs created {jobs}, replays (LISTs of the Workflow's Jobs) {replays}")
    print(
        f"operator LISTs {sum(lists.values())}: "
        + ", ".join(f"{r} {n}" for r, n in lists.most_common())
    )
    print(
        f"operator requests {len(ours)}, writes: "
        + ", ".join(f"{w} {n}" for w, n in writes.most_common(8))
    )
    if report.status_code == 200:
        doc = json.loads(report.json()["data"]["result.json"])
        named = [
            (f["name"], f["reason"])
            for c in doc["categories"]
            for f in c.get("failedNodeReasons") or ()
        ]
        print(f"named {named} (planted {fault})")
    return 0


def _failed(body: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Failed" and c["status"] == "True"
        for c in (body.get("status") or {}).get("conditions") or ()
    )


if __name__ == "__main__":
    raise SystemExit(main())
