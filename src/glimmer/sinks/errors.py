"""The one error a sink raises: a delivery that did not go through, and whether trying again
could help."""

from __future__ import annotations

from glimmer.errors import GlimmerError


class DeliveryError(GlimmerError):
    """A delivery failed. ``permanent`` failures (a 4xx answer, an envelope that fails
    validation, a sink that cannot be built) are never retried: sending the same bytes again
    would get the same answer."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent
