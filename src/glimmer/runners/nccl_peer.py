"""Which peer a broken collective lost, said first in the rank's message.

When one rank of a gloo collective dies (its job cancelled, its node gone), every other rank's
collective fails with gloo's own words — ``Connection closed by peer [10.0.0.13]:41234`` — and
the group's message shows each rank's line cut to a few hundred bytes, where the address comes
late. So a rank that lost a peer says so at the front, with the peer's host name when the hosts
file knows it: the survivors then point at the rank that went away instead of reading like
failures of their own. Only the hosts file is read (never DNS: a lookup that times out would
delay the Error for nothing).
"""

from __future__ import annotations

import re
from pathlib import Path

HOSTS = Path("/etc/hosts")
_PEER = re.compile(r"\[(\d{1,3}(?:\.\d{1,3}){3})\]")
_LOST = ("closed by peer", "reset by peer", "Read error", "Broken pipe")


def host_of(address: str, hosts_text: str) -> str | None:
    """The first name the hosts file gives ``address``; None when it names none."""
    for line in hosts_text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and fields[0] == address:
            return fields[1]
    return None


def lost_peer(text: str, hosts: Path = HOSTS) -> str | None:
    """``the peer at <address> (<host>) went away`` when ``text`` is gloo losing a peer."""
    found = _PEER.search(text)
    if found is None or not any(word in text for word in _LOST):
        return None
    address = found[1]
    try:
        name = host_of(address, hosts.read_text())
    except OSError:
        name = None
    return f"the peer at {address}{f' ({name})' if name else ''} went away"
