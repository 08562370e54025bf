"""Profile resolution: a profile's entries, against the tests at hand, as planned tests.

A ``testRef`` names a BurnInTest in the same namespace; an ``inline`` entry carries its own spec
and is named ``inline-<index>-<kind>``. Each entry then expands into its variant cells.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from glimmer.api.pinned import PlannedTest
from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTestSpec
from glimmer.errors import GlimmerError
from glimmer.plan.variants import expand_entry


class ResolveError(GlimmerError):
    """A profile that cannot be resolved: it names a test that does not exist."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field  # the profile field at fault, e.g. spec.tests[2].testRef


@dataclass(frozen=True)
class ResolvedEntry:
    """One profile entry with the spec it stands for, before variant expansion."""

    index: int
    name: str
    spec: BurnInTestSpec
    required: bool


def resolve_entries(
    profile: BurnInProfile, tests: Mapping[str, BurnInTestSpec]
) -> list[ResolvedEntry]:
    """Each entry of ``profile`` with its spec; ``tests`` maps BurnInTest names to specs."""
    entries: list[ResolvedEntry] = []
    for index, entry in enumerate(profile.spec.tests):
        name = entry.entry_name(index)
        if entry.inline is not None:
            spec = entry.inline
        else:
            found = tests.get(name)
            if found is None:
                owner = profile.metadata.name or "?"
                raise ResolveError(
                    f'profile "{owner}" refers to BurnInTest "{name}", which does not exist',
                    f"spec.tests[{index}].testRef",
                )
            spec = found
        entries.append(ResolvedEntry(index, name, spec, entry.required))
    return entries


def plan_tests(profile: BurnInProfile, tests: Mapping[str, BurnInTestSpec]) -> list[PlannedTest]:
    """The planned tests of ``profile``, in order, variants expanded."""
    planned: list[PlannedTest] = []
    for resolved in resolve_entries(profile, tests):
        entry = profile.spec.tests[resolved.index]
        planned.extend(
            expand_entry(resolved.name, resolved.spec, resolved.required, entry.variants)
        )
    return planned
