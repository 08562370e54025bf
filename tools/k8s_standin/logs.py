"""Pod logs: ``GET .../pods/{name}/log`` answers the text of ``<log_dir>/<ns>/<pod>.log``,
the file the kubelet stand-in appends its container's output to.

``tailLines`` keeps the last lines; ``follow=true`` streams what is appended until the pod
finishes (phase Succeeded or Failed, or deleted) or the client goes, as ``kubectl logs -f``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

import aiohttp.web

FOLLOW_POLL = 0.1  # seconds between looks at a followed file


def log_path(log_dir: Path | None, namespace: str, pod: str) -> Path | None:
    return None if log_dir is None else log_dir / namespace / f"{pod}.log"


def tail(text: str, lines: str | None) -> str:
    if lines is None:
        return text
    count = int(lines)
    kept = text.splitlines(keepends=True)
    return "".join(kept[-count:]) if count > 0 else ""


async def follow(
    request: aiohttp.web.BaseRequest,
    path: Path,
    tail_lines: str | None,
    running: Callable[[], bool],
) -> aiohttp.web.StreamResponse:
    response = aiohttp.web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    with contextlib.suppress(ConnectionResetError):
        data = path.read_bytes()
        await response.write(tail(data.decode(errors="replace"), tail_lines).encode())
        offset = len(data)
        while True:
            alive = running()
            size = path.stat().st_size if path.exists() else offset
            if size > offset:
                with path.open("rb") as f:
                    f.seek(offset)
                    chunk = f.read(size - offset)
                offset += len(chunk)
                await response.write(chunk)
            elif not alive:
                break
            else:
                await asyncio.sleep(FOLLOW_POLL)
        await response.write_eof()
    return response
