"""A tiny PNG reader for the screenshot test: 8-bit RGB/RGBA, non-interlaced, top rows only.

Enough to tell a rendered page from a blank one without a new dependency: zlib does the
inflating, the five scanline filters are undone here.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]  # the decoded top rows, each width * channels bytes


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(data: bytes, max_rows: int) -> Image:
    """Decode the first ``max_rows`` rows of an 8-bit RGB or RGBA PNG."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    at, idat, header = len(SIGNATURE), bytearray(), b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        body = data[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompressobj().decompress(bytes(idat), (stride + 1) * max_rows)
    rows: list[bytes] = []
    prior = bytearray(stride)
    for y in range(min(height, max_rows, len(raw) // (stride + 1))):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = prior[i]
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                corner = prior[i - channels] if i >= channels else 0
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(bytes(line))
        prior = line
    return Image(width, height, channels, rows)


def pixels(image: Image) -> list[bytes]:
    """Every decoded pixel's colour (alpha dropped)."""
    c = image.channels
    return [row[i : i + 3] for row in image.rows for i in range(0, len(row), c)]
