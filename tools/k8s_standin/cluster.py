"""A whole stand-in cluster for a test or a demo: the API stand-in, a kubelet stand-in serving
``node-1``..``node-N`` (each in its own network namespace), their Node objects, a kubeconfig.

Both servers run on one background thread with its own event loop, so the code under test —
synchronous clients, kubectl, kopf on a loop of its own — reaches them over HTTP only. Leaving
the context manager, however the body ended, stops every pod's process, the API, and removes
every namespace the cluster made.

``trainer=True`` adds the Kubeflow Trainer stand-in (trainer.py) on the same loop, with the
Trainer's CRDs registered so every TrainJob and runtime write is validated against them;
``fleet`` (a :class:`~tools.k8s_standin.trainer_fleet.TrainerFleet`) implies it, makes the nodes
the fleet's hosts (labels, GPUs) and has the workload pods print what the fleet simulator says
their job prints. ``dra=True`` adds the DRA stand-in (dra.py: NVIDIA's ComputeDomain
controller and the scheduling of pods claiming a domain's channel), with its CRDs registered.
``crd_dirs`` are further CRD folders to preload (deploy/crds-certify).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tools.k8s_standin.api import GLIMMER_CRDS, running_api
from tools.k8s_standin.dra import DRA_CRDS, ComputeDomainDriver
from tools.k8s_standin.kubeconfig import write_kubeconfig
from tools.k8s_standin.kubelet import Kubelet
from tools.k8s_standin.node_netns import HostNetwork, NetnsNetwork, NodeNetworks

if TYPE_CHECKING:
    from tools.k8s_standin.trainer import TrainerStandIn
    from tools.k8s_standin.trainer_fleet import TrainerFleet

Network = Literal["netns", "host"]


@dataclass(frozen=True)
class StandInCluster:
    """A running stand-in cluster: where to reach it and what it is made of."""

    url: str
    kubeconfig: Path
    nodes: tuple[str, ...]
    addresses: Mapping[str, str]  # node -> the address its pods have
    log_dir: Path  # <log_dir>/<namespace>/<pod>.log
    journal: Path | None  # every API request, one JSON line each
    root: Path
    prefix: str | None  # the namespaces' prefix (network "netns")
    fleet: TrainerFleet | None = None  # the simulated fleet behind the nodes, if any


def node_names(nodes: int | Sequence[str]) -> tuple[str, ...]:
    return (
        tuple(f"node-{i}" for i in range(1, nodes + 1)) if isinstance(nodes, int) else tuple(nodes)
    )


@contextlib.contextmanager
def standin_cluster(
    nodes: int | Sequence[str] = 3,
    root: Path | None = None,
    *,
    conflict_every: int | None = None,
    network: Network = "netns",
    journal: bool = True,
    port: int = 0,
    subnet: str | None = None,
    prefix: str | None = None,
    namespace: str = "default",
    node_labels: Mapping[str, str] | None = None,
    pod_binding: bool = True,
    start_timeout: float = 60.0,
    trainer: bool = False,
    fleet: TrainerFleet | None = None,
    crd_dirs: Sequence[Path] = (),
    dra: bool = False,
    dra_delay_s: float = 0.5,
) -> Iterator[StandInCluster]:
    """The cluster under ``root`` (logs/, pods/, kubeconfig, journal.jsonl). ``network="host"``
    needs no root but gives no per-node address and no rendezvous by name. ``pod_binding``:
    the API serves ``pods/binding``, so the scheduler's choice is the pod's ``spec.nodeName``
    (and a deleted bound pod waits for the kubelet, as on a cluster); off, the kubelet keeps
    the choice to itself."""
    if root is None:
        raise ValueError("standin_cluster needs a root folder (a test's tmp_path)")
    names = fleet.hostnames if fleet is not None else node_names(nodes)
    trainer = trainer or fleet is not None
    crds: tuple[Path, ...] = (GLIMMER_CRDS, *crd_dirs)
    make_trainer: type[TrainerStandIn] | None = None
    if trainer:
        # Imported only when asked for: the Trainer stand-in brings the fleet simulator, seconds
        # of imports every other stand-in process (the launcher's up and down) need not pay.
        from tools.k8s_standin.trainer import TRAINER_CRDS, TrainerStandIn

        if not any(TRAINER_CRDS.glob("*.yaml")):
            raise FileNotFoundError(
                f"the Kubeflow Trainer CRDs the Trainer stand-in serves are not at {TRAINER_CRDS} "
                "(the shared folder beside the repository)"
            )
        crds = (*crds, TRAINER_CRDS)
        make_trainer = TrainerStandIn
    if dra:
        crds = (*crds, DRA_CRDS)
    log_dir, work_dir = root / "logs", root / "pods"
    journal_path = root / "journal.jsonl" if journal else None
    nets: NodeNetworks = (
        NetnsNetwork(names, prefix=prefix, subnet=subnet)
        if network == "netns"
        else HostNetwork(names)
    )
    started = threading.Event()
    box: dict[str, Any] = {}

    async def main(stop: asyncio.Event) -> None:
        async with running_api(
            port=port,
            log_dir=log_dir,
            conflict_every=conflict_every,
            journal=journal_path,
            pod_binding=pod_binding,
            crd_dirs=crds,
        ) as running:
            controller = (
                make_trainer(running.url, root / "trainer", fleet)
                if make_trainer is not None
                else None
            )
            driver = ComputeDomainDriver(running.url, dra_delay_s) if dra else None
            kubelet = Kubelet(
                running.url,
                nets,
                names,
                log_dir=log_dir,
                work_dir=work_dir,
                node_labels=node_labels,
                node_shape=fleet.shape if fleet is not None else None,
                player=controller.player if controller is not None else None,
                claims=driver,
            )
            parts: set[asyncio.Task[None]] = set()

            async def start(
                what: str, run: Callable[[asyncio.Event], Coroutine[Any, Any, None]]
            ) -> None:
                ready = asyncio.Event()
                serving = asyncio.create_task(run(ready))
                parts.add(serving)
                waiting = asyncio.create_task(ready.wait())
                await asyncio.wait({serving, waiting}, return_when=asyncio.FIRST_COMPLETED)
                if serving.done():
                    waiting.cancel()
                    for part in parts:
                        part.cancel()
                    serving.result()  # raises what stopped it
                    raise RuntimeError(f"the {what} stand-in stopped before it was ready")

            await start("kubelet", kubelet.run)
            if controller is not None:
                await start("Trainer", controller.run)
            if driver is not None:
                driver.placed = kubelet.placed_pods
                await start("DRA", driver.run)
            box["url"] = running.url
            started.set()
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({*parts, stopping}, return_when=asyncio.FIRST_COMPLETED)
            for part in parts:
                part.cancel()
            stopping.cancel()
            await asyncio.gather(*parts, return_exceptions=True)

    def thread_main() -> None:
        loop = asyncio.new_event_loop()
        stop = asyncio.Event()
        box["loop"], box["stop"] = loop, stop
        try:
            loop.run_until_complete(main(stop))
        except BaseException as exc:  # told to the starting thread, not lost in this one
            box["error"] = exc
        finally:
            started.set()
            loop.close()

    thread = threading.Thread(target=thread_main, name="k8s-standin-cluster", daemon=True)
    try:
        thread.start()
        if not started.wait(start_timeout):
            raise RuntimeError(f"the stand-in cluster did not start within {start_timeout} s")
        if "error" in box:
            raise RuntimeError("the stand-in cluster failed to start") from box["error"]
        kubeconfig = write_kubeconfig(root / "kubeconfig", box["url"], namespace)
        yield StandInCluster(
            url=box["url"],
            kubeconfig=kubeconfig,
            nodes=names,
            addresses={n: nets.address(n) for n in names},
            log_dir=log_dir,
            journal=journal_path,
            root=root,
            prefix=getattr(nets, "prefix", None),
            fleet=fleet,
        )
    finally:
        if "loop" in box and thread.is_alive():
            box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(timeout=60)
        nets.down()
