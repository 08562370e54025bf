"""Reading a runner's configuration from its environment: the ``BURNIN_*`` variables the
dispatcher injects (§3.5) and the kind's own variables (§9), typed, with errors that name the
variable.

A malformed configuration variable is an Error (exit 3): the runner never guesses a meaning and
never measures under a configuration nobody asked for. Unset and empty read the same (the
default), because both dispatchers may pass an empty value for "not given".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from glimmer.runners.outcome import ConfigError

DURATION = "BURNIN_DURATION_SECONDS"
ATTEMPT = "BURNIN_ATTEMPT"


class Settings:
    """Typed reads of one environment (``os.environ`` unless given)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._env = dict(os.environ if environ is None else environ)

    def raw(self, name: str) -> str | None:
        """The trimmed value, or None when unset or empty."""
        value = self._env.get(name, "").strip()
        return value or None

    def is_set(self, name: str) -> bool:
        """True when ``name`` is in the environment at all, even empty: the one read where set
        but empty differs from unset (``BURNIN_RESOURCE_LIMITS``, §3.5)."""
        return name in self._env

    def text(self, name: str, default: str) -> str:
        return self.raw(name) or default

    def integer(
        self,
        name: str,
        default: int,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int:
        """A whole number; anything else (``12s``, ``1.5``, ``-1`` under a minimum of 0) is a
        ConfigError naming the variable."""
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = int(raw, 10)
        except ValueError:
            raise ConfigError(name, f"{raw!r} is not a whole number") from None
        if minimum is not None and value < minimum:
            raise ConfigError(name, f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise ConfigError(name, f"{value} is above the maximum {maximum}")
        return value

    def duration(self, default: int) -> int:
        """``BURNIN_DURATION_SECONDS``: the execution's duration; 0 or unset is the default."""
        value = self.integer(DURATION, default, minimum=0)
        return value or default

    def path(self, name: str, default: str) -> Path:
        return Path(self.text(name, default))

    def paths(self, name: str, default: str) -> tuple[Path, ...]:
        """A colon-separated list of paths (like ``PATH``); empty entries are ignored."""
        return tuple(Path(p) for p in self.text(name, default).split(":") if p.strip())

    def names(self, name: str) -> tuple[str, ...]:
        """A comma- or semicolon-separated list of names, trimmed, empty entries dropped."""
        raw = self.raw(name) or ""
        return tuple(p.strip() for p in raw.replace(";", ",").split(",") if p.strip())
