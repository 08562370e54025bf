"""The linter flags a host path a runner should never write (issue 10 item 9): ``/`` mounted
read-write is Unsound, at that mount's ``readOnly``; read-only, or a narrower folder, is not."""

from __future__ import annotations

from glimmer.verdict.lint import WRITABLE_HOST_PATH_RISKS, Severity, TestDefinition, lint_test


def test_the_whole_node_filesystem_mounted_read_write_is_unsound() -> None:
    problems = lint_test(TestDefinition(kind="custom", writable_host_paths=((2, "/"),)))
    assert [(p.field, p.severity) for p in problems] == [
        ("runner.hostPaths[2].readOnly", Severity.UNSOUND)
    ]
    assert "whole filesystem" in problems[0].reason


def test_a_narrow_writable_folder_is_not_flagged() -> None:
    writable = ((0, "/dev/infiniband"), (1, "/var/tmp/burnin"))
    assert lint_test(TestDefinition(kind="custom", writable_host_paths=writable)) == []


def test_every_flagged_path_is_written_as_the_loader_normalises_it() -> None:
    for path in WRITABLE_HOST_PATH_RISKS:
        assert path.startswith("/") and (path == "/" or not path.endswith("/"))
        assert "//" not in path and ".." not in path.split("/")
