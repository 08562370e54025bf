"""The stand-in in a background thread with its own event loop.

The code under test may be synchronous (lightkube's sync client, kubectl) or run its own loop
(kopf in a thread), so the API must not live in the test's loop: here it serves from a thread
of its own, reachable only over HTTP, and stops (ending its watch streams) when the context
manager exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tools.k8s_standin.api import GLIMMER_CRDS, Running, serve


@contextlib.contextmanager
def api_in_thread(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log_dir: Path | None = None,
    conflict_every: int | None = None,
    journal: Path | None = None,
    crd_dirs: tuple[Path, ...] = (GLIMMER_CRDS,),
    graceful_pod_deletion: bool = True,
    pod_binding: bool = False,
    start_timeout: float = 30.0,
) -> Iterator[Running]:
    started = threading.Event()
    box: dict[str, Any] = {}

    def main() -> None:
        loop = asyncio.new_event_loop()
        box["loop"] = loop
        stop = asyncio.Event()
        box["stop"] = stop

        def ready(running: Running) -> None:
            box["running"] = running
            started.set()

        try:
            loop.run_until_complete(
                serve(
                    host=host,
                    port=port,
                    log_dir=log_dir,
                    conflict_every=conflict_every,
                    journal=journal,
                    crd_dirs=crd_dirs,
                    graceful_pod_deletion=graceful_pod_deletion,
                    pod_binding=pod_binding,
                    ready=ready,
                    stop=stop,
                )
            )
        except BaseException as exc:  # reported to the starting thread, not lost in this one
            box["error"] = exc
            started.set()
        finally:
            loop.close()

    thread = threading.Thread(target=main, name="k8s-standin-api", daemon=True)
    thread.start()
    if not started.wait(start_timeout):
        raise RuntimeError("the Kubernetes API stand-in did not start")
    if "error" in box:
        raise RuntimeError("the Kubernetes API stand-in failed to start") from box["error"]
    try:
        yield box["running"]
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(timeout=30)
