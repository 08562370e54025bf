"""Environment helpers: the NCCL base environment, merging by name, and ``-x`` forwarding.

Env vars are plain mappings shaped like ``corev1.EnvVar`` (``name`` and ``value`` or
``valueFrom``). Every function returns new lists and leaves its inputs alone.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

EnvVar = dict[str, Any]

# Model-independent NCCL settings, safe for any workload. NCCL_NVLS_ENABLE is deliberately absent:
# NCCL's own default (2) probes multicast support before using NVLink SHARP, while forcing 1
# asserts support the hardware may lack and, before NCCL 2.29, turns a failed bind into an
# aborted job. Platform fragments that know their fabric set it themselves.
_BASE_NCCL: tuple[tuple[str, str], ...] = (
    ("NCCL_DEBUG", "INFO"),
    ("NCCL_CUMEM_ENABLE", "1"),
    ("NCCL_NET_GDR_C2C", "1"),
    ("NCCL_NET_GDR_LEVEL", "PHB"),
    ("NCCL_P2P_NET_CHUNKSIZE", "2097152"),
    ("NCCL_SHM_DISABLE", "1"),
)
_AFTER_MNNVL: tuple[tuple[str, str], ...] = (("NCCL_SOCKET_IFNAME", "eth0"),)

FORWARD_FLAG = "-x"


def base_nccl_env_vars(enable_mnnvl: bool) -> list[EnvVar]:
    """Model-independent NCCL environment variables, safe to inject into any workload.

    Platform-specific variables (FastRak, InfiniBand, RoCE) come from overrides, never from here.
    """
    pairs = (*_BASE_NCCL, ("NCCL_MNNVL_ENABLE", "1" if enable_mnnvl else "0"), *_AFTER_MNNVL)
    return [{"name": name, "value": value} for name, value in pairs]


def merge_env_vars(
    base: Sequence[Mapping[str, Any]], user: Sequence[Mapping[str, Any]]
) -> list[EnvVar]:
    """Base variables the user did not set (base order), then every user variable (user order).

    User-provided values take precedence by name.
    """
    if not user:
        return [dict(copy.deepcopy(v)) for v in base]
    taken = {v.get("name") for v in user}
    kept = [dict(copy.deepcopy(v)) for v in base if v.get("name") not in taken]
    return kept + [dict(copy.deepcopy(v)) for v in user]


def forwarded_names(mpi_args: Sequence[str]) -> set[str]:
    """Names that ``-x NAME`` or ``-x NAME=value`` pairs in an mpirun argument list forward.

    A ``-x`` in the last position has no operand and forwards nothing.
    """
    found: set[str] = set()
    for i, arg in enumerate(mpi_args[:-1]):
        if arg == FORWARD_FLAG:
            found.add(mpi_args[i + 1].split("=", 1)[0])
    return found


def forward_arg(var: Mapping[str, Any]) -> str:
    """The operand of ``-x`` for one variable: ``NAME=value``, or ``NAME`` for a ``valueFrom``
    variable (mpirun then forwards the launcher's resolved value)."""
    name = str(var.get("name", ""))
    if var.get("valueFrom") is not None:
        return name
    return f"{name}={var.get('value') or ''}"


def mpi_env_args(env: Sequence[Mapping[str, Any]], mpi_args: Sequence[str]) -> list[str]:
    """``-x`` arguments forwarding ``env`` to MPI ranks, which start under sshd with a fresh
    environment and never see container env.

    Names ``mpi_args`` already forwards are skipped, so platform and user mpiArgs keep precedence.
    """
    taken = forwarded_names(mpi_args)
    out: list[str] = []
    for var in env:
        if var.get("name") in taken:
            continue
        out += [FORWARD_FLAG, forward_arg(var)]
    return out
