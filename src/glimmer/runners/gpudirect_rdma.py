"""gpudirect-rdma (§9.12, Pair): RDMA into GPU memory, ``ib_write_bw --use_cuda`` and
``ib_write_lat --use_cuda`` (perftest built with CUDA), over the same control connection as
ib-write-bw.

The applicability gate comes before the rendezvous: a registered peer-memory provider
(``<sysfs>/kernel/mm/memory_peers/<name>``; ``nvidia_peermem`` registers one) or Skip (GB10 by
design: unified memory). dma-buf-only stacks are knowingly reported as not applicable.

Metrics: ``bw_average`` (the same ``bandwidthGbps`` as ib-write-bw, on purpose) and
``t_avg_usec`` (``latencyUs``). No peak. Configuration as ib-write-bw, plus
``BURNIN_CUDA_DEVICE`` (0).
"""

from __future__ import annotations

from glimmer.runners.ib_write_bw import bandwidth_phase, latency_phase
from glimmer.runners.ib_write_bw_pair import (
    connect,
    fit,
    rdma_ports,
    refuse_scope,
    serve,
    settle_fit,
    tools,
)
from glimmer.runners.ib_write_bw_rdma import peer_memory_providers
from glimmer.runners.outcome import Outcome, failed, passed, skipped
from glimmer.runners.program import Context, main

KIND = "gpudirect-rdma"


def run_gpudirect_rdma(ctx: Context) -> Outcome:
    role = refuse_scope(ctx, KIND)
    ports = rdma_ports(ctx, KIND)
    binaries = tools(("ib_write_bw", "ib_write_lat"))
    if not peer_memory_providers(ctx.paths.sysfs):
        where = ctx.paths.sysfs / "kernel" / "mm" / "memory_peers"
        return skipped(
            f"no peer-memory provider registered ({where} is empty; nvidia_peermem not loaded)"
        )
    device = ctx.settings.integer("BURNIN_CUDA_DEVICE", 0, minimum=0)
    cuda = (f"--use_cuda={device}",)
    mine = fit(ctx)
    if role == "server":
        return passed(
            serve(ctx, ports, binaries, {"message_bytes": mine.message_bytes, "qps": mine.qps})
        )
    client = connect(ctx, ports, binaries)
    try:
        settled = settle_fit(mine, client.pushed)
        gbps = bandwidth_phase(
            ctx, client, settled.message_bytes, settled.qps, cuda, message_rate=False
        )
        if gbps <= 0:
            return failed(f"ib_write_bw --use_cuda to {client.peer} carried no traffic")
        latency_phase(ctx, client, cuda, mean_key="t_avg_usec")
    finally:
        client.close()
    return passed(f"measured RDMA into GPU memory with {client.peer}")


if __name__ == "__main__":
    main(KIND, run_gpudirect_rdma)
