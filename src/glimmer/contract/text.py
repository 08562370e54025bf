"""Small text helpers shared by the parser and the artifact scanner.

Runner output is compared with what the original (Go) implementation accepted, so whitespace
means what Go's ``unicode.IsSpace`` means, not Python's wider ``str.isspace`` (which also counts
the ASCII separators 0x1C-0x1F).
"""

from __future__ import annotations

# Go's unicode.IsSpace: ASCII \t \n \v \f \r and space, U+0085, U+00A0, and category Z.
SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + ("\u2028\u2029\u202f\u205f\u3000")
)
_SPACE_SET = frozenset(SPACE)


def trim_space(text: str) -> str:
    """Strip leading and trailing whitespace as Go's strings.TrimSpace does."""
    return text.strip(SPACE)


def fields(text: str) -> list[str]:
    """Split on runs of whitespace as Go's strings.Fields does (no empty fields)."""
    out: list[str] = []
    start = -1
    for i, ch in enumerate(text):
        if ch in _SPACE_SET:
            if start >= 0:
                out.append(text[start:i])
                start = -1
        elif start < 0:
            start = i
    if start >= 0:
        out.append(text[start:])
    return out


def clamp_utf8(data: bytes, limit: int) -> bytes:
    """At most ``limit`` bytes of ``data`` without cutting a UTF-8 sequence in half.

    Byte-level truncation that split runes shipped twice in the original; backing off to the
    start of the cut sequence keeps the result decodable whenever the input was.
    """
    if len(data) <= limit:
        return data
    end = limit
    # 0b10xxxxxx bytes continue a sequence; back off to the byte that starts it.
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end]
