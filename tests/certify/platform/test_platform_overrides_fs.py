"""OverridesFS: the platform's own override files, which declare dependencies of their own."""

from __future__ import annotations

from glimmer.certify.platform.overrides import dependency_kinds, load_overrides, overrides_fs


def test_overrides_fs_holds_the_workloadrun_overrides() -> None:
    names = {entry.name for entry in overrides_fs().iterdir()}
    assert "workloadrun.yaml" in names
    assert load_overrides("workloadrun.yaml")


def test_the_dependency_kinds_a_role_must_grant_derive_from_the_override_files() -> None:
    assert dependency_kinds() == {"ComputeDomain", "TrainingRuntime"}
