"""Small text helpers every verdict message uses: quoting, byte clamps, plural words.

Byte limits in the contract are UTF-8 byte counts; a clamp never splits a character (splitting
runes was a bug twice in the original project).
"""

from __future__ import annotations

TRUNCATED = "… (truncated)"

_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def quote(text: str) -> str:
    """Double-quote ``text`` the way Go's ``%q`` does: printable characters stay as they are,
    control and unprintable characters are escaped, so a message stays on one line."""
    out: list[str] = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def clamp_bytes(text: str, limit: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 encoding fits in ``limit`` bytes."""
    encoded = text.encode("utf-8", errors="surrogatepass")
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode("utf-8", errors="ignore")


def clamp_marked(text: str, limit: int) -> str:
    """Clamp ``text`` to ``limit`` bytes, marker included, ending ``… (truncated)`` when cut."""
    if len(text.encode("utf-8", errors="surrogatepass")) <= limit:
        return text
    return clamp_bytes(text, max(0, limit - len(TRUNCATED.encode()))) + TRUNCATED


def flatten(text: str) -> str:
    """Collapse every run of whitespace (newlines included) to one space and trim the ends."""
    return " ".join(text.split())


def plural(count: int, word: str, many: str | None = None) -> str:
    """``word`` or its plural (``many``, default ``word + 's'``) to go with ``count``."""
    return word if count == 1 else (many if many is not None else word + "s")


def name_some(names: list[str], limit: int, sep: str = ", ") -> str:
    """Join the first ``limit`` names and count the rest: ``a, b, and 3 more``."""
    shown = sep.join(names[:limit])
    rest = len(names) - limit
    return f"{shown}{sep}and {rest} more" if rest > 0 else shown
