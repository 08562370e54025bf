"""Readiness probes, as a kubelet runs them: ``exec`` (a command in the container's network
namespace, environment and working directory; exit 0 is success) and ``tcpSocket`` (a
connection to the pod's address); ``initialDelaySeconds``, ``periodSeconds``,
``timeoutSeconds``, ``successThreshold`` and ``failureThreshold`` with the API's defaults.
An ``httpGet`` or ``grpc`` probe is not run: it counts as failing, so a pod never looks
Ready by mistake.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Connect to (host, port) within the pod's network; True when it answered within timeout.
Connector = Callable[[str, int, float], Awaitable[bool]]


@dataclass(frozen=True)
class ProbeTiming:
    """The probe's schedule, with the API's defaults."""

    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3

    @classmethod
    def of(cls, probe: Mapping[str, Any]) -> ProbeTiming:
        return cls(
            float(probe.get("initialDelaySeconds") or 0),
            float(probe.get("periodSeconds") or 10),
            float(probe.get("timeoutSeconds") or 1),
            int(probe.get("successThreshold") or 1),
            int(probe.get("failureThreshold") or 3),
        )


def _port(value: Any, container: Mapping[str, Any]) -> int:
    """A numeric port, or the containerPort of the named port."""
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    for port in container.get("ports") or []:
        if port.get("name") == value:
            return int(port["containerPort"])
    raise ValueError(f"no container port named {value!r}")


async def run_exec(
    wrap: Sequence[str],
    command: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
    cwd: Path | None = None,
) -> bool:
    proc = await asyncio.create_subprocess_exec(
        *wrap,
        *command,
        env=dict(env),
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        return await asyncio.wait_for(proc.wait(), timeout) == 0
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return False


class Readiness:
    """One container's readiness probe, run until cancelled; :attr:`ready` follows the
    thresholds and ``on_change`` is awaited each time it flips."""

    def __init__(
        self,
        probe: Mapping[str, Any],
        container: Mapping[str, Any],
        *,
        pod_ip: str,
        wrap: Sequence[str],
        env: Mapping[str, str],
        cwd: Path | None = None,
        connect: Connector,
        on_change: Callable[[bool], Awaitable[None]],
    ) -> None:
        self.probe = probe
        self.container = container
        self.timing = ProbeTiming.of(probe)
        self.pod_ip = pod_ip
        self.wrap = tuple(wrap)
        self.env = dict(env)
        self.cwd = cwd
        self.connect = connect
        self.on_change = on_change
        self.ready = False

    async def once(self) -> bool:
        """One probe: did it succeed?"""
        timeout = self.timing.timeout
        if "exec" in self.probe:
            command = (self.probe["exec"] or {}).get("command") or []
            if not command:
                return False
            try:
                return await run_exec(self.wrap, command, self.env, timeout, self.cwd)
            except OSError:
                return False  # the command is not there: a failing probe, as on a kubelet
        if "tcpSocket" in self.probe:
            sock = self.probe["tcpSocket"] or {}
            try:
                port = _port(sock.get("port"), self.container)
            except ValueError:
                return False
            return await self.connect(str(sock.get("host") or self.pod_ip), port, timeout)
        return False  # httpGet, grpc: not run by the stand-in

    async def run(self) -> None:
        successes = failures = 0
        await asyncio.sleep(self.timing.initial_delay)
        while True:
            ok = await self.once()
            successes, failures = (successes + 1, 0) if ok else (0, failures + 1)
            if not self.ready and successes >= self.timing.success_threshold:
                self.ready = True
                await self.on_change(True)
            elif self.ready and failures >= self.timing.failure_threshold:
                self.ready = False
                await self.on_change(False)
            await asyncio.sleep(self.timing.period)
