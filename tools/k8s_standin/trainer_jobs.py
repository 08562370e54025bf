"""Which certification job a TrainJob's trainer container runs, read from its command line and
environment as the workload itself would read them — so the stand-in can ask the fleet
simulator for that job's log.

* nccl-tests: a program named ``<collective>_perf`` (or ``_perf_mpi``) anywhere on the command
  line; ``-b``/``-e`` (``--minbytes``/``--maxbytes``) sizes with nccl-tests' K/M/G suffixes;
  ``NCCL_MNNVL_ENABLE`` from an ``mpirun -x NAME=VALUE`` or the container's env (unset: on, as
  NCCL enables MNNVL where the fabric has it);
* ``dcgmi diag --run N`` (or ``-r N``) on one node;
* anything else is a training job: ``TRAIN_ITERS``, ``ENABLE_CHECKPOINT``, ``SAVE_INTERVAL`` and
  ``MAX_RESTARTS`` from the env, as the catalog's Megatron script reads them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from glimmer.certify.jobs import DcgmJob, Job, NcclJob, TrainingJob
from glimmer.certify.measure.render import BINARIES
from glimmer.certify.platform.vocab import GROUP_LABEL

_COLLECTIVES = {binary: name for name, (binary, _) in BINARIES.items()}
_SIZE = re.compile(r"(\d+)([KkMmGg]?)")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_OFF = ("0", "false", "no", "off")


class NotAJob(ValueError):
    """The command line names a job the stand-in cannot simulate (its value says why)."""


def job_name(train_job: Mapping[str, object]) -> str:
    """The name the fleet simulator runs a TrainJob's job under: the core's job name from the
    group label the certification controllers set (``screen-0``, a node: the simulator seeds a
    job's noise by it, so both backends measure the same figures), else the TrainJob's name."""
    meta = train_job.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    labels = meta.get("labels")
    group = labels.get(GROUP_LABEL) if isinstance(labels, Mapping) else None
    return str(group or meta.get("name") or "")


def parse_size(text: str) -> int:
    """nccl-tests' size flag: ``8``, ``16G``, ``512M``."""
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        raise NotAJob(f"size {text!r} is not a number with an optional K, M or G")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def _flag(argv: Sequence[str], *names: str) -> str | None:
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if name.startswith("--") and arg.startswith(f"{name}="):
                return arg.split("=", 1)[1]
    return None


def _exported(argv: Sequence[str], env: Mapping[str, str], name: str) -> str | None:
    """``name`` as ``mpirun -x NAME=VALUE`` passes it, else the container's own value."""
    for i, arg in enumerate(argv[:-1]):
        if arg == "-x" and argv[i + 1].startswith(f"{name}="):
            return argv[i + 1].split("=", 1)[1]
    return env.get(name)


def _collective(argv: Sequence[str]) -> str | None:
    for arg in argv:
        base = os.path.basename(arg).removesuffix("_mpi")
        if base in _COLLECTIVES:
            return _COLLECTIVES[base]
    return None


def _on(value: str | None, default: bool) -> bool:
    return default if value is None else value.strip().lower() not in _OFF


def job_of(
    name: str, argv: Sequence[str], env: Mapping[str, str], nodes: tuple[str, ...], seed: int
) -> Job:
    """The job ``argv`` runs over ``nodes`` (hostnames, node rank order)."""
    collective = _collective(argv)
    if collective is not None:
        low, high = _flag(argv, "-b", "--minbytes"), _flag(argv, "-e", "--maxbytes")
        return NcclJob(
            name,
            collective,
            nodes,
            nvlink=_on(_exported(argv, env, "NCCL_MNNVL_ENABLE"), True),
            max_bytes=parse_size(high) if high else NcclJob.max_bytes,
            min_bytes=parse_size(low) if low else NcclJob.min_bytes,
            seed=seed,
        )
    names = [os.path.basename(a) for a in argv]
    if "dcgmi" in names and "diag" in names:
        level = _flag(argv, "--run", "-r")
        if level is None or not level.isdigit():
            raise NotAJob(f"dcgmi diag without a numeric --run level: {' '.join(argv)}")
        if len(nodes) != 1:
            raise NotAJob(f"dcgmi diag runs on one node, not {len(nodes)}")
        return DcgmJob(nodes[0], int(level), seed)
    defaults = TrainingJob(name, nodes)
    return TrainingJob(
        name,
        nodes,
        max_steps=int(env.get("TRAIN_ITERS") or defaults.max_steps),
        checkpoint=_on(env.get("ENABLE_CHECKPOINT"), defaults.checkpoint),
        save_interval=int(env.get("SAVE_INTERVAL") or defaults.save_interval),
        max_restarts=int(env.get("MAX_RESTARTS") or defaults.max_restarts),
        nvlink=_on(env.get("NCCL_MNNVL_ENABLE"), defaults.nvlink),
        seed=seed,
    )
