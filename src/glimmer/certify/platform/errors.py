"""The error of the platform package: a rendered object breaks a rule the package promises.

It is an :class:`~glimmer.errors.InputError` because every such failure traces back to what a
user wrote (a Certification, a WorkloadRun, an override), so the CLI reports it in one line.
"""

from __future__ import annotations

from glimmer.errors import InputError


class PlatformError(InputError):
    """A render or validation rule of the platform package was broken."""
