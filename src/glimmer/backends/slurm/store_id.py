"""The identity of one state directory's run store, written into every stamp it makes.

Several submit hosts may drive runs on one cluster, each with its own state directory. A drain
reason names the store whose run made it, so the orphan reaper of one store judges only its
own stamps: another host's run is absent from this store, yet alive. The id is made once, at
random, and kept in ``<state>/store-id``; losing it (a new state directory) makes the old
stamps foreign, which leaves them drained — the safe side.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from glimmer.backends.common.files import locked, write_atomically

FILE = "store-id"
LENGTH = 12  # hex digits: 48 bits, ample for the submit hosts of one cluster


def store_id(state_dir: Path) -> str:
    """The store id of ``state_dir``, made (under a lock, once) when it has none yet."""
    path = Path(state_dir) / FILE
    found = _read(path)
    if found:
        return found
    with locked(path.with_suffix(".lock")):
        found = _read(path)
        if not found:
            found = secrets.token_hex(LENGTH // 2)
            write_atomically(path, found + "\n")
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""
