"""Synthetic identities of a fleet, derived from the seed and physical keys only (§2).

Nothing here depends on declaration order or on which collectors are enabled, so the same
declaration gives the same UUIDs, serials and keys on every run and every machine.
"""

from __future__ import annotations

import hashlib


def digest(seed: str, *parts: str) -> str:
    """``Sum``: 64 lowercase hex of sha256(seed ":" parts joined by ":")."""
    return hashlib.sha256(f"{seed}:{':'.join(parts)}".encode()).hexdigest()


def hex_id(seed: str, n: int, *parts: str) -> str:
    """The first ``n`` hex digits of :func:`digest`."""
    return digest(seed, *parts)[:n]


def node_uid(seed: str, *parts: str) -> str:
    """A UUID-shaped id (8-4-4-4-12) from the first 32 hex digits of :func:`digest`."""
    h = digest(seed, *parts)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def gpu_hash(seed: str, *parts: str) -> int:
    """The first 16 hex digits of :func:`digest` as an unsigned 64-bit integer."""
    return int(digest(seed, *parts)[:16], 16)


def serial(seed: str, kind: str, *parts: str) -> str:
    """``GPUSerial``: ``SYN`` + 16 uppercase hex digits."""
    return "SYN" + hex_id(seed, 16, kind, *parts).upper()


def gpu_uuid(seed: str, pool: str, ordinal: int, slot: int) -> str:
    """``GPU-`` + a node uid over (gpu_uuid, pool, node ordinal, slot)."""
    return "GPU-" + node_uid(seed, "gpu_uuid", pool, str(ordinal), str(slot))


def node_serial(seed: str, pool: str, ordinal: int) -> str:
    return serial(seed, "node_serial", pool, str(ordinal))


def node_uid_of(seed: str, pool: str, ordinal: int) -> str:
    return node_uid(seed, "gpu_node", pool, str(ordinal))


def board_serial(seed: str, pool: str, ordinal: int, board: int) -> str:
    """Serial of one board; NVL72 passes slot // 2 so two GPUs share a board serial."""
    return serial(seed, "board", pool, str(ordinal), str(board))


def device_serial(seed: str, device_key: str) -> str:
    """Serial of a device (BMC, switch, NVSwitch) from its key."""
    return serial(seed, "device_serial", device_key)


def tray_id(seed: str, tray_key: str) -> str:
    return serial(seed, "tray", tray_key)


def hostname(prefix: str, ordinal: int) -> str:
    """``<prefix>-0000``; ordinals above 9999 simply widen."""
    return f"{prefix}-{ordinal:04d}"


def pci_bus_id(slot: int) -> str:
    """The explicitly synthetic default bus id ``00000000:<0x20+slot>:00.0``."""
    return f"{0:08x}:{0x20 + slot:02x}:{0:02x}.{0}"


def execution_id(seed: str, workload_key: str, cycle: int) -> str:
    """Lineage id of one cycle of a workload (never a metric label)."""
    return "exec-" + hex_id(seed, 24, "gpu_execution", workload_key, str(cycle))


def pod_name(seed: str, cluster: str, sched: str, workload: str, worker: str) -> str:
    """Name of the pod a Kubernetes worker runs as: ``<wl>-<10 hex>-<5 hex>`` where ``wl`` is
    ``<scheduler>-<workload>-<worker>``, hashed under the cluster's seed ``<seed>:<cluster>``."""
    s, wl = f"{seed}:{cluster}", f"{sched}-{workload}-{worker}"
    return f"{wl}-{hex_id(s, 10, 'rs', wl)}-{hex_id(s, 5, 'pod', wl, '0')}"


# Key formats (§2.2). One function per key kind so no caller hand-builds a key.


def rack_key(site: str, rack: str) -> str:
    return f"rack:{site}/{rack}"


def node_key(host: str) -> str:
    return f"node:{host}"


def gpu_key(host: str, slot: int) -> str:
    return f"gpu:{host}/{slot}"


def compute_tray_key(site: str, rack: str, slot: int) -> str:
    return f"tray:{site}/{rack}/compute/{slot}"


def switch_tray_key(site: str, rack: str, tray: int) -> str:
    return f"tray:{site}/{rack}/nvswitch/{tray}"


def cpu_key(host: str, index: int) -> str:
    return f"cpu:{host}/{index}"


def nvl72_stem(site: str, rack: str, domain: str) -> str:
    return f"{site}/{rack}/{domain}"


def hgx_stem(site: str, rack: str, host: str, domain: str) -> str:
    return f"{site}/{rack}/hgx/{host}/{domain}"


def domain_key(stem: str) -> str:
    return f"domain:{stem}"


def partition_key(stem: str, partition: str) -> str:
    return f"partition:{stem}/{partition}"


def nvl72_switch_key(stem: str, tray: int, switch: int) -> str:
    return f"nvswitch:{stem}/{tray}/{switch}"


def nvl72_port_key(stem: str, tray: int, switch: int, port: int) -> str:
    return f"nvport:{stem}/{tray}/{switch}/{port}"


def hgx_switch_key(stem: str, switch: int) -> str:
    return f"nvswitch:{stem}/{switch}"


def hgx_port_key(stem: str, switch: int, port: int) -> str:
    return f"nvport:{stem}/{switch}/{port}"


def nvlink_key(host: str, slot: int, link: int) -> str:
    return f"nvlink:{host}/{slot}/{link}"


def device_key(name: str) -> str:
    return f"device:{name}"


def fabric_key(fabric: str) -> str:
    return f"fabric:{fabric}"


def switch_key(fabric: str, device: str) -> str:
    return f"switch:{fabric}/{device}"


def port_key(fabric: str, device: str, port: str) -> str:
    return f"port:{fabric}/{device}/{port}"


def nic_key(owner: str, nic: str) -> str:
    return f"nic:{owner}/{nic}"


def storage_key(name: str) -> str:
    return f"storage:{name}"


def client_key(storage: str, host: str) -> str:
    return f"client:{storage}/{host}"


def scheduler_key(s: str) -> str:
    return f"scheduler:{s}"


def project_key(s: str, p: str) -> str:
    return f"project:{s}/{p}"


def workload_key(s: str, w: str) -> str:
    return f"gpuworkload:{s}/{w}"


def worker_key(s: str, w: str, worker: str) -> str:
    return f"worker:{s}/{w}/{worker}"
