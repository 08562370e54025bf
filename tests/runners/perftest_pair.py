"""What the perftest kinds' tests share: a clean environment, a fixture RoCE device whose GID
carries 127.0.0.1, free loopback ports, and a Pair run of a runner module as server and client
on this host (the server started first, always reaped)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

LOOPBACK_GID = "0000:0000:0000:0000:0000:ffff:7f00:0001"  # ::ffff:127.0.0.1
CLIENT = {"BURNIN_ROLE": "client", "BURNIN_PEER_HOST": "127.0.0.1"}


def clean_env(prefixes: tuple[str, ...] = ("BURNIN_",), /, **extra: str) -> dict[str, str]:
    """This process's environment without the runner's own variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(extra)
    return env


def run_module(
    module: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def roce_sysfs(
    root: Path,
    state: str = "4: ACTIVE",
    gids: Iterable[tuple[int, str]] = ((3, "RoCE v2"),),
    counters: bool = False,
) -> Path:
    """One RoCE device, mlx5_0 port 1, whose GIDs carry 127.0.0.1 on ``lo``."""
    port = root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    subs = ("gids", "gid_attrs/types", "gid_attrs/ndevs", *(("counters",) if counters else ()))
    for sub in subs:
        (port / sub).mkdir(parents=True)
    (port / "state").write_text(state + "\n")
    (port / "link_layer").write_text("Ethernet\n")
    for i, kind in gids:
        (port / "gids" / str(i)).write_text(LOOPBACK_GID + "\n")
        (port / "gid_attrs" / "types" / str(i)).write_text(kind + "\n")
        (port / "gid_attrs" / "ndevs" / str(i)).write_text("lo\n")
    if counters:
        (port / "counters" / "symbol_error").write_text("0\n")
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_pair(
    module: str,
    env: dict[str, str],
    client_env: dict[str, str] | None = None,
    *,
    before_client: Callable[[], None] | None = None,
    timeout: float = 120,
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The server of ``module`` started, then (after ``before_client``) its client to the end;
    (client run, server run with its stdout and stderr together)."""
    server = subprocess.Popen(
        [sys.executable, "-m", module],
        env={**env, "BURNIN_ROLE": "server"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        if before_client is not None:
            before_client()
        client = run_module(module, {**env, **CLIENT, **(client_env or {})}, timeout)
        served, _ = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return client, subprocess.CompletedProcess(server.args, server.returncode, served, "")
