"""API errors as the engine's: what a status code means for the pass that met it.

404 is :class:`~glimmer.engine.backend.NotFound`; 409 (a stale resourceVersion, or a write
that lost a race) is :class:`~glimmer.engine.backend.Conflict`, so the pass is retried from a
fresh read; anything
else the server answered, and any transport failure (refused, reset, timed out), is a
transient :class:`~glimmer.engine.backend.BackendError` — never an absence, which is decided
only from a 404 (§2.1, "a cache miss is never treated as absence").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
from lightkube import ApiError

from glimmer.engine.backend import BackendError, Conflict, NotFound


def code_of(error: ApiError) -> int:
    """The HTTP status of an API error."""
    return int(error.status.code or error.response.status_code)


class AlreadyExists(Conflict):
    """A create met an object of that name (409, reason ``AlreadyExists``) — unlike another
    409, which says the write lost a race and did nothing."""


def translated(error: Exception, what: str) -> BackendError:
    """``error`` (met while doing ``what``) as the engine's error."""
    if isinstance(error, ApiError):
        code = code_of(error)
        message = f"{what}: {error.status.message or error.status.reason or code}"
        if code == 404:
            return NotFound(message)
        if code == 409 and error.status.reason == "AlreadyExists":
            return AlreadyExists(message)
        if code == 409:
            return Conflict(message)
        return BackendError(f"{message} (HTTP {code})")
    return BackendError(f"{what}: {type(error).__name__}: {error}")


@contextmanager
def api_call(what: str) -> Iterator[None]:
    """Run one API call, raising the engine's error for whatever went wrong."""
    try:
        yield
    except (ApiError, httpx2.HTTPError) as e:
        raise translated(e, what) from e
