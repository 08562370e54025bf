"""``python -m tools.demo_k8s``: what ``make demo-k8s`` runs.

1. ``tools/k8s-standin up --nodes 3 --network host --background``: the API stand-in and a
   kubelet that runs each pod as a local process (host network: the ``host`` profile's link
   gate reads the machine's own NICs, as ``hostNetwork: true`` does on a node).
2. The ``host`` profile's four BurnInTests, cut to seconds, applied into the namespace (a
   namespace's test of a built-in's name wins over the built-in), so the demo takes about two
   minutes instead of six.
3. ``glimmer operator run`` as a process, the way the Deployment of deploy/operator/ runs it.
4. ``kubectl get bir -w`` beside ``glimmer run --backend kubernetes --nodes node-1,node-2,node-3``:
   the run submitted, its phase changing as the operator drives it, its results as they settle,
   the verdict.
5. Everything stopped and removed, whatever happened; the folder with the kubeconfig, the pod
   logs, the operator's log and the API's request journal is kept and named at the end.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
KUBECTL = REPO / "tests" / "tools" / "bin" / "kubectl"
STANDIN = REPO / "tools" / "k8s-standin"
HOST_PROFILE = REPO / "src" / "glimmer" / "data" / "profiles" / "host.yaml"
NODES = ("node-1", "node-2", "node-3")
TESTS = "/apis/burnin.glimmer.ai/v1alpha1/namespaces/default/burnintests"
# Seconds instead of the profile's 30-60 s; the same kinds, gates and runners.
SHORT = {"host-kernel-and-links": 5, "host-memory": 5, "host-disk": 10}
MEMORY_MIB = 300  # the memory runner's share: over its 256 MiB floor, small on any machine


def _memory_fraction() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return f"{MEMORY_MIB * 1024 / int(line.split()[1]):.4f}"
    return "0.02"


def short_tests(scratch: Path) -> list[dict[str, Any]]:
    """The host profile's BurnInTests with short durations, the disk test in ``scratch``."""
    out = []
    for doc in yaml.safe_load_all(HOST_PROFILE.read_text()):
        if not doc or doc.get("kind") != "BurnInTest":
            continue
        test = copy.deepcopy(doc)
        name, spec = test["metadata"]["name"], test["spec"]
        if name in SHORT:
            spec["durationSeconds"] = SHORT[name]
        runner = spec.get("runner", {})
        for item in runner.get("env", []):
            if item["name"] == "BURNIN_MEMORY_FRACTION":
                item["value"] = _memory_fraction()
            if item["name"] == "DISK_IO_PATH":
                item["value"] = str(scratch)
            if item["name"] == "DISK_IO_SIZE_MB":
                item["value"] = "16"
        for mount in runner.get("hostPaths", []):
            if mount["path"] == "/var/tmp":
                mount["path"] = mount["mountPath"] = str(scratch)
        out.append(test)
    return out


def _say(line: str) -> None:
    print(f"\n== {line}", flush=True)


def main() -> int:
    if not KUBECTL.is_file():
        print(f"demo-k8s: no kubectl at {KUBECTL} (make tools installs it)", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="glimmer-demo-k8s-"))
    scratch = folder / "disk"
    scratch.mkdir()
    env = {**os.environ, "KUBECONFIG": str(folder / "kubeconfig")}
    started: list[subprocess.Popen[bytes]] = []
    try:
        _say("the stand-in cluster: an API server and a kubelet for three nodes")
        subprocess.run(
            [str(STANDIN), "up", "--nodes", str(len(NODES)), "--dir", str(folder),
             "--network", "host", "--background"],
            check=True, cwd=REPO,
        )  # fmt: skip
        subprocess.run([str(KUBECTL), "get", "nodes"], check=True, env=env)
        _say("the host profile's tests, cut to seconds, applied into the namespace")
        url = yaml.safe_load((folder / "kubeconfig").read_text())["clusters"][0]["cluster"]
        with httpx.Client(base_url=url["server"], timeout=30) as http:
            for test in short_tests(scratch):
                http.post(TESTS, json=test).raise_for_status()
        subprocess.run([str(KUBECTL), "get", "burnintests"], check=True, env=env)
        _say("glimmer operator run (what the Deployment in deploy/operator/ runs)")
        log = (folder / "operator.log").open("wb")
        started.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "glimmer.operator",
                    "run",
                    "--standalone",
                    "--namespace",
                    "default",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=REPO,
            )
        )
        _say("kubectl get bir -w, beside glimmer run --backend kubernetes")
        started.append(subprocess.Popen([str(KUBECTL), "get", "bir", "-w"], env=env))
        time.sleep(1.0)
        done = subprocess.run(
            [str(BIN / "glimmer"), "run", "--backend", "kubernetes",
             "--nodes", ",".join(NODES), "--max-concurrent", "1"],
            env=env, cwd=REPO,
        )  # fmt: skip
        time.sleep(1.0)  # the watch's last lines
        _say("the nodes afterwards: schedulable again, no stamp left")
        subprocess.run([str(KUBECTL), "get", "nodes"], env=env)
        print(f"\nkubeconfig, pod logs, operator log and request journal: {folder}")
        return 0 if done.returncode in (0, 1) else done.returncode
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        subprocess.run([str(STANDIN), "down", "--dir", str(folder)], cwd=REPO, check=False)


if __name__ == "__main__":
    raise SystemExit(main())
