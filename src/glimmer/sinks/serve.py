"""Serving the Prometheus exporter over HTTP from envelopes already delivered.

``glimmer sink serve`` runs apart from the process that delivered (a run on this host, a
simulator session), so it reads what a file sink (JSONL) or a folder sink (one entry per
deliveryId) holds, and catches up at each scrape: a file is read on from where the last scrape
stopped (a file that shrank was rotated: it is read again from the start); a folder's new and
changed entries are read, and a run whose every entry is gone — deleted, or collected by its
TTL — is forgotten. Within a run only an envelope at least as new as the last one shown
reaches the exporter, so entries read out of order never roll a run back; the exporter folds a
TestCompleted or Checkpoint (which carry only what changed) into the run it shows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from glimmer.api.budget import budget, check_size, over_budget
from glimmer.contract.vocab import TERMINAL_PHASES
from glimmer.errors import InputError
from glimmer.sinks.directory import entries, read_entry
from glimmer.sinks.envelope import RUN_PHASE_CHANGED, Envelope
from glimmer.sinks.jsonl import decode_line
from glimmer.sinks.prometheus import Exporter

log = logging.getLogger(__name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_TERMINAL = frozenset(p.value for p in TERMINAL_PHASES)


def _order(envelope: Envelope) -> tuple[str, int]:
    """Newer first by time sent; at one instant a phase change into a running phase, then the
    per-unit envelopes, then the terminal one (which says everything)."""
    if envelope.get("phase") in _TERMINAL and envelope.get("reason") == RUN_PHASE_CHANGED:
        rank = 2
    elif envelope.get("reason") == RUN_PHASE_CHANGED:
        rank = 0
    else:
        rank = 1
    return (str(envelope.get("sentAt") or ""), rank)


class EnvelopeSource:
    """Feeds ``exporter`` from a JSONL file or a folder sink, a little more at each refresh."""

    def __init__(self, path: Path, exporter: Exporter) -> None:
        if path.is_file():
            check_size(path, "sink-log")  # refused at start, not at the first scrape
        self.path = path
        self.exporter = exporter
        self._offset = 0
        self._tail = b""
        # deliveryId -> ((name, mtime_ns, size) of each of its files, run uid)
        self._files: dict[str, tuple[tuple[tuple[str, int, int], ...], str]] = {}
        self._shown: dict[str, tuple[str, int]] = {}  # run uid -> order of what is shown
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Read what arrived since the last refresh."""
        with self._lock:
            if self.path.is_dir():
                self._refresh_folder()
            elif self.path.exists():
                self._refresh_file()

    def _show(self, envelopes: Iterable[Envelope]) -> None:
        for envelope in sorted(envelopes, key=_order):
            uid = str((envelope.get("run") or {}).get("uid") or "")
            order = _order(envelope)
            newer = order >= self._shown.get(uid, ("", 0))
            if uid and newer and self.exporter.observe(envelope):
                self._shown[uid] = order

    def _refresh_file(self) -> None:
        size = self.path.stat().st_size
        if size < self._offset:  # rotated or truncated: start over
            for uid in list(self._shown):
                self.exporter.forget(uid)
            self._shown.clear()
            self._offset, self._tail = 0, b""
        limit = budget("sink-log")
        if size - self._offset > limit.max_bytes:  # never more than a budget read at once
            raise over_budget(size, limit, str(self.path))
        with self.path.open("rb") as f:
            f.seek(self._offset)
            chunk = f.read(size - self._offset)  # what grew since is read at the next scrape
        self._offset += len(chunk)
        data = self._tail + chunk
        lines = data.split(b"\n")
        self._tail = lines.pop()  # an unfinished last line waits for the next refresh
        decoded = (decode_line(line) for line in lines if line.strip())
        self._show(e for e in decoded if e is not None)

    def _refresh_folder(self) -> None:
        present = entries(self.path)
        gone = [key for key in self._files if key not in present]
        fresh: list[Envelope] = []
        for key, paths in present.items():
            try:
                seen = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
            except OSError:
                continue  # replaced while we looked: the next scrape reads it
            if self._files.get(key, ((), ""))[0] == seen:
                continue
            envelope = read_entry(paths)
            if envelope is None:
                continue
            uid = str((envelope.get("run") or {}).get("uid") or "")
            self._files[key] = (seen, uid)
            fresh.append(envelope)
        self._show(fresh)
        for key in gone:
            uid = self._files.pop(key)[1]
            if uid and not any(f[1] == uid for f in self._files.values()):
                self.exporter.forget(uid)
                self._shown.pop(uid, None)


def metrics_server(
    exporter: Exporter, source: EnvelopeSource | None, host: str, port: int
) -> ThreadingHTTPServer:
    """An HTTP server answering ``GET /metrics`` (not started; the caller serves it)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self._send(404, "text/plain; charset=utf-8", b"not found; try /metrics\n")
                return
            if source is not None:
                try:
                    source.refresh()
                except OSError as e:  # the source went away or cannot be read for now
                    log.warning("cannot read %s: %s; serving what was read before", source.path, e)
                except InputError as e:  # grown past its budget, or a foreign entry too big
                    log.warning("%s; serving what was read before", e)
            self._send(200, CONTENT_TYPE, exporter.exposition().encode())

        def _send(self, code: int, ctype: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # scrapes are frequent; stay quiet

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
