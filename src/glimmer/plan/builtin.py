"""The built-in profiles shipped in ``glimmer/data/profiles``: tests and profiles that a run can
name without any file of the user's.

A run's ``profileRef`` names a profile in its namespace; when no such profile was given, a
built-in profile of that name stands in (:func:`profile_or_builtin`). Either way the built-in
tests are part of every namespace: a ``testRef`` the given tests lack resolves to the built-in
test of that name, and a test of the user's with the same name wins, so a custom profile can
name ``host-fault-counters`` without copying its file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from glimmer.api.load import Loaded, load_paths
from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTest, BurnInTestSpec


def builtin_profiles_dir() -> Path:
    """The folder holding the built-in tests and profiles."""
    return Path(str(files("glimmer.data") / "profiles"))


def load_builtin() -> list[Loaded]:
    """Every built-in test and profile, typed."""
    return load_paths([str(builtin_profiles_dir())])


@lru_cache(maxsize=1)
def _builtin() -> tuple[dict[str, BurnInProfile], dict[str, BurnInTestSpec]]:
    # The shipped files never change under a running process; read them once.
    profiles: dict[str, BurnInProfile] = {}
    tests: dict[str, BurnInTestSpec] = {}
    for item in load_builtin():
        if isinstance(item.obj, BurnInProfile):
            profiles[item.name] = item.obj
        elif isinstance(item.obj, BurnInTest):
            tests[item.name] = item.obj.spec
    return profiles, tests


def builtin_profile_names() -> list[str]:
    """Names of the built-in profiles, in file order."""
    return [i.name for i in load_builtin() if isinstance(i.obj, BurnInProfile)]


def builtin_test_names() -> list[str]:
    return [i.name for i in load_builtin() if isinstance(i.obj, BurnInTest)]


def builtin_profile(name: str) -> BurnInProfile | None:
    """A copy of the built-in profile ``name``, or None."""
    found = _builtin()[0].get(name)
    return found.model_copy(deep=True) if found is not None else None


def builtin_tests() -> dict[str, BurnInTestSpec]:
    """Copies of every built-in test's spec, by name."""
    return {name: spec.model_copy(deep=True) for name, spec in _builtin()[1].items()}


class BuiltinAndGiven(Mapping[str, BurnInTestSpec]):
    """The built-in tests under the given ones (a given name wins). A built-in spec is copied
    when it is first read through this mapping, not all of them up front: a plan reads the few
    its profile names, and a sweep of 2,048 pairs deep-copied every built-in test per start
    (11 % of its CPU)."""

    def __init__(self, given: Mapping[str, BurnInTestSpec]) -> None:
        self._given = given
        self._builtin = _builtin()[1]
        self._copied: dict[str, BurnInTestSpec] = {}

    def __getitem__(self, name: str) -> BurnInTestSpec:
        if name in self._given:
            return self._given[name]
        copied = self._copied.get(name)
        if copied is None:
            copied = self._copied[name] = self._builtin[name].model_copy(deep=True)
        return copied

    def __iter__(self) -> Iterator[str]:
        # The order a merged dict had: built-in names in file order, then names only given.
        yield from self._builtin
        yield from (name for name in self._given if name not in self._builtin)

    def __len__(self) -> int:
        return len(self._builtin.keys() | self._given.keys())


def profile_or_builtin(
    profile_ref: str,
    profile: BurnInProfile | None,
    tests: Mapping[str, BurnInTestSpec],
) -> tuple[BurnInProfile, Mapping[str, BurnInTestSpec]] | None:
    """The profile a run's ``profileRef`` names, and the tests it may refer to.

    A given ``profile`` wins over the built-in profile of that name; without one, the built-in
    profile is used. None when neither exists. The tests are ``tests`` over the built-in ones:
    a test name ``tests`` lacks resolves to the built-in test, the user's own of the same name
    wins.
    """
    found = profile if profile is not None else builtin_profile(profile_ref)
    if found is None:
        return None
    return found, tests_with_builtin(tests)


def tests_with_builtin(tests: Mapping[str, BurnInTestSpec]) -> Mapping[str, BurnInTestSpec]:
    """The tests a profile may name: the built-in ones, with ``tests`` winning on a name."""
    return BuiltinAndGiven(tests)
