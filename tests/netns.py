"""Network namespaces as stand-in hosts for tests: each test makes its own (names unique per
process and test), joins them with veth pairs, and ALWAYS deletes them on the way out, whatever
failed in between. Deleting a namespace deletes the veths inside it. Needs root (CI runs as
root); an ``ip`` that refuses fails the test, naming the command, never skips it.

A "host" made here has a fabric address (the veth toward its peer) and, when asked, a
management veth pair of its own (both ends inside it) carrying the default route: tcp-baseline
refuses to load the default-route interface (§9.13), so a host with only that pair is the
one-NIC node its guard skips on.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

_serial = itertools.count()


def ip(*args: str) -> None:
    """Run ``ip ARGS``; a refusal fails the test, naming the command and ip's words."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"`ip {' '.join(args)}` was refused: {done.stderr.strip()}")


@dataclass
class Hosts:
    """Namespaces made for one test, and the interfaces and addresses made in them."""

    tag: str
    names: list[str] = field(default_factory=list)
    veths: int = 0

    def host(self, label: str) -> str:
        """A new namespace (its loopback up), named ``<tag>-<label>``."""
        name = f"{self.tag}-{label}"
        ip("netns", "add", name)
        self.names.append(name)
        ip("-n", name, "link", "set", "lo", "up")
        return name

    def _veth(self) -> tuple[str, str]:
        self.veths += 1
        return f"{self.tag}v{self.veths}a", f"{self.tag}v{self.veths}b"

    def link(self, a: str, a_addr: str, b: str, b_addr: str) -> tuple[str, str]:
        """A veth pair from namespace ``a`` to ``b`` with ``<addr>/24`` on each end; the two
        interface names."""
        end_a, end_b = self._veth()
        ip("link", "add", end_a, "netns", a, "type", "veth", "peer", "name", end_b, "netns", b)
        ip("-n", a, "addr", "add", f"{a_addr}/24", "dev", end_a)
        ip("-n", b, "addr", "add", f"{b_addr}/24", "dev", end_b)
        ip("-n", a, "link", "set", end_a, "up")
        ip("-n", b, "link", "set", end_b, "up")
        return end_a, end_b

    def management(self, ns: str, subnet: str) -> str:
        """A veth pair with both ends inside ``ns``, the first holding the default route
        (``<subnet>.1/24`` via ``<subnet>.2``); its interface name."""
        first, second = self._veth()
        ip("-n", ns, "link", "add", first, "type", "veth", "peer", "name", second)
        ip("-n", ns, "addr", "add", f"{subnet}.1/24", "dev", first)
        ip("-n", ns, "link", "set", first, "up")
        ip("-n", ns, "link", "set", second, "up")
        ip("-n", ns, "route", "add", "default", "via", f"{subnet}.2", "dev", first)
        return first


def _short_tag() -> str:
    # Interface names are at most 15 bytes: keep the tag short (pid and a per-process serial).
    return f"g{os.getpid() % 100000}{next(_serial)}"


@contextmanager
def namespaces() -> Iterator[Hosts]:
    """Namespaces for one test, all deleted when it ends (pass, fail or error)."""
    hosts = Hosts(_short_tag())
    try:
        yield hosts
    finally:
        for name in hosts.names:
            subprocess.run(["ip", "netns", "delete", name], check=False, capture_output=True)


def in_ns(ns: str, *argv: str) -> list[str]:
    """``argv`` run inside namespace ``ns``."""
    return ["ip", "netns", "exec", ns, *argv]
