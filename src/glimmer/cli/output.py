"""Shared console objects and output helpers for the CLI (formatting only, no decisions)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from socketserver import BaseServer
from typing import Any

from rich.console import Console

from glimmer.api.dump import json_text

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def print_json(data: Any) -> None:
    """Machine-readable output: plain JSON on stdout, never rich-styled."""
    print(json_text(data, ensure_ascii=True))


def write_manifests(
    objs: list[dict[str, Any]],
    output_dir: Path | None,
    file_name: Callable[[dict[str, Any]], str],
    file_text: Callable[[dict[str, Any]], str],
    stream_text: str,
) -> None:
    """Generated manifests (CRDs): the YAML stream on stdout, or one file each in
    ``output_dir`` with the paths printed."""
    if output_dir is None:
        sys.stdout.write(stream_text)
        return
    output_dir.mkdir(parents=True, exist_ok=True)
    for obj in objs:
        target = output_dir / file_name(obj)
        target.write_text(file_text(obj), encoding="utf-8")
        print(target)


def serve_until_interrupted(server: BaseServer) -> None:
    """Serve until Ctrl-C, then close the socket (the live /metrics commands)."""
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
