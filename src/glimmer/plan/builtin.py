"""The built-in profiles shipped in ``glimmer/data/profiles``: tests and profiles that a run can
name without any file of the user's."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from glimmer.api.load import Loaded, load_paths
from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTest


def builtin_profiles_dir() -> Path:
    """The folder holding the built-in tests and profiles."""
    return Path(str(files("glimmer.data") / "profiles"))


def load_builtin() -> list[Loaded]:
    """Every built-in test and profile, typed."""
    return load_paths([str(builtin_profiles_dir())])


def builtin_profile_names() -> list[str]:
    """Names of the built-in profiles, in file order."""
    return [i.name for i in load_builtin() if isinstance(i.obj, BurnInProfile)]


def builtin_test_names() -> list[str]:
    return [i.name for i in load_builtin() if isinstance(i.obj, BurnInTest)]
