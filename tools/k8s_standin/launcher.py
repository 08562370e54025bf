"""``tools/k8s-standin up|down``: the stand-in cluster by hand, for a demo or a look around.

``up --nodes N --dir D [--port P]`` starts the API stand-in and a kubelet stand-in for
``node-1``..``node-N`` (standin_cluster), writes ``D/kubeconfig``, and stays in the foreground
until SIGINT or SIGTERM, when it stops every pod and removes its network namespaces (with
``--background`` it detaches once it serves, for a script or a make target). It also
writes ``D/standin.json`` (its pid, URL, namespace prefix, nodes), which is how ``down --dir D``
stops a backgrounded one: SIGTERM to that pid (SIGKILL if it will not go), then any namespace
of its prefix still there is removed. The pod logs (``D/logs``) and the request journal
(``D/journal.jsonl``) stay for reading afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.k8s_standin import node_netns
from tools.k8s_standin.cluster import standin_cluster

STATE = "standin.json"
_STOP_WAIT = 60.0


def _state(folder: Path) -> dict[str, Any] | None:
    try:
        loaded = json.loads((folder / STATE).read_text())
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _is_launcher(pid: int) -> bool:
    """``pid`` is alive and is a stand-in launcher (not a process that reused the pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(b"k8s_standin" in part or b"k8s-standin" in part for part in cmdline)


def _background(args: argparse.Namespace, folder: Path) -> int:
    """Start ``up`` detached (its output in ``launcher.log``) and return once it serves."""
    argv = [sys.executable, "-m", "tools.k8s_standin", *(["-v"] if args.verbose else []), "up",
            "--nodes", str(args.nodes), "--dir", str(folder), "--port", str(args.port),
            "--network", args.network]  # fmt: skip
    if args.subnet:
        argv += ["--subnet", args.subnet]
    if args.conflict_every:
        argv += ["--conflict-every", str(args.conflict_every)]
    log = folder / "launcher.log"
    with open(log, "wb") as out:
        child = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    end = time.monotonic() + _STOP_WAIT
    while time.monotonic() < end:
        state = _state(folder)
        if state and state.get("pid") == child.pid:
            print(f"k8s-standin: {len(state['nodes'])} node(s) up at {state['url']} "
                  f"(pid {child.pid}); export KUBECONFIG={state['kubeconfig']}")  # fmt: skip
            return 0
        if child.poll() is not None:
            break
        time.sleep(0.05)
    if child.poll() is None:
        child.terminate()
    print(f"k8s-standin: did not come up; {log}:\n{log.read_text()}", file=sys.stderr)
    return 1


def up(args: argparse.Namespace) -> int:
    folder: Path = args.dir.resolve()
    previous = _state(folder)
    if previous and _is_launcher(int(previous.get("pid", 0))):
        print(f"k8s-standin: already up in {folder} (pid {previous['pid']})", file=sys.stderr)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    if args.background:
        return _background(args, folder)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        with standin_cluster(
            args.nodes,
            folder,
            port=args.port,
            network=args.network,
            subnet=args.subnet,
            conflict_every=args.conflict_every,
        ) as cluster:
            state = {
                "pid": os.getpid(),
                "url": cluster.url,
                "kubeconfig": str(cluster.kubeconfig),
                "prefix": cluster.prefix,
                "nodes": dict(cluster.addresses),
            }
            (folder / STATE).write_text(json.dumps(state, indent=2) + "\n")
            print(
                f"k8s-standin: {len(cluster.nodes)} node(s) up at {cluster.url}; "
                f"export KUBECONFIG={cluster.kubeconfig}",
                flush=True,
            )
            stop.wait()
            print("k8s-standin: stopping", flush=True)
    except node_netns.NetworkUnavailable as e:
        print(f"k8s-standin: {e}", file=sys.stderr)
        return 1
    finally:
        with contextlib.suppress(OSError):
            (folder / STATE).unlink()
    print("k8s-standin: down", flush=True)
    return 0


def down(args: argparse.Namespace) -> int:
    folder: Path = args.dir.resolve()
    state = _state(folder)
    if state is None:
        print(f"k8s-standin: nothing up in {folder}")
        return 0
    pid = int(state.get("pid", 0))
    if _is_launcher(pid):
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + _STOP_WAIT
        while _is_launcher(pid) and time.monotonic() < end:
            time.sleep(0.05)
        if _is_launcher(pid):
            os.kill(pid, signal.SIGKILL)
    prefix = state.get("prefix")
    left = node_netns.remove_prefix(str(prefix)) if prefix and os.geteuid() == 0 else []
    with contextlib.suppress(OSError):
        (folder / STATE).unlink()
    extra = f" (removed {len(left)} namespace(s) it left)" if left else ""
    print(f"k8s-standin: down{extra}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="tools/k8s-standin",
        description="A Kubernetes API stand-in with a kubelet stand-in, on this machine.",
    )
    top.add_argument("-v", "--verbose", action="store_true", help="log what the kubelet does")
    verbs = top.add_subparsers(dest="verb", required=True)
    start = verbs.add_parser("up", help="start a cluster; runs until SIGINT or SIGTERM")
    start.add_argument("--nodes", type=int, default=3, help="node-1..node-N (default 3)")
    start.add_argument("--dir", type=Path, required=True, help="kubeconfig, logs, state")
    start.add_argument("--port", type=int, default=0, help="API port (default: a free one)")
    start.add_argument(
        "--network",
        choices=("netns", "host"),
        default="netns",
        help="netns: a network namespace per node (root); host: all on 127.0.0.1",
    )
    start.add_argument("--subnet", default=None, help="the nodes' /24 (default: a free one)")
    start.add_argument("--conflict-every", type=int, default=None, help="409 every N-th write")
    start.add_argument(
        "--background", action="store_true",
        help="detach once it serves (output in DIR/launcher.log); stop it with down",
    )  # fmt: skip
    start.set_defaults(run=up)
    stop = verbs.add_parser("down", help="stop the cluster started with --dir")
    stop.add_argument("--dir", type=Path, required=True)
    stop.set_defaults(run=down)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    if args.verbose:  # the kubelet's own account, not every library's
        logging.getLogger("k8s_standin").setLevel(logging.DEBUG)
    if args.verb == "up" and args.nodes < 1:
        print("k8s-standin: --nodes must be at least 1", file=sys.stderr)
        return 2
    return int(args.run(args))
