"""The one exception hierarchy of glimmer.

Every error a user can cause by handing us bad input is an :class:`InputError`. It carries where
the problem is (file, document number, object, field path, line) so the CLI can print one clear
line and exit 2 without a traceback. Everything else that glimmer raises on purpose derives from
:class:`GlimmerError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class GlimmerError(Exception):
    """Base class of every error glimmer raises deliberately."""


@dataclass
class Location:
    """Where in the user's input a problem sits. Every part is optional."""

    file: str | None = None
    document: int | None = None  # 1-based index of the YAML document in the file
    obj: str | None = None  # "Kind/name" of the object, when known
    field: str | None = None  # dotted field path, e.g. spec.thresholds[0].value
    line: int | None = None  # 1-based line in the file

    def render(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
            parts.append(where)
        if self.document is not None:
            parts.append(f"document {self.document}")
        if self.obj:
            parts.append(self.obj)
        if self.field:
            parts.append(f"field {self.field}")
        return ", ".join(parts)


@dataclass
class InputError(GlimmerError):
    """Bad input from the user: a file, an object or a flag that glimmer refuses."""

    message: str
    location: Location = field(default_factory=Location)

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.location.render()
        return f"{where}: {self.message}" if where else self.message


class InputErrors(GlimmerError):
    """Several input errors found in one pass (all are reported, not only the first)."""

    def __init__(self, errors: list[InputError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))
