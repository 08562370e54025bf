"""Host paths are named as they are (issue 10 item 9): normalised (``//``, ``/./``, a trailing
``/``), and a ``..`` that would make a path read as one folder and reach another is refused at
load, at its file:line and field."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from glimmer.api.test import HostPathMount, RunnerSpec
from glimmer.cli.app import main

BAD = Path(__file__).resolve().parents[1] / "fixtures" / "bad"


@pytest.mark.parametrize("field", ["path", "mountPath"])
@pytest.mark.parametrize("value", ["/dev/../etc", "/usr/../../etc", "/var/lib/..", "/.."])
def test_a_host_path_that_climbs_with_dotdot_is_refused(field: str, value: str) -> None:
    other = "mountPath" if field == "path" else "path"
    with pytest.raises(ValidationError) as err:
        HostPathMount.model_validate({field: value, other: "/ok"})
    assert "climbs with '..'" in str(err.value)


@pytest.mark.parametrize(
    ("written", "meant"),
    [("/dev/", "/dev"), ("//", "/"), ("/./", "/"), ("/dev//shm/./", "/dev/shm"), ("/", "/")],
)
def test_a_host_path_is_normalised(written: str, meant: str) -> None:
    mount = HostPathMount.model_validate({"path": written, "mountPath": written})
    assert (mount.path, mount.mount_path) == (meant, meant)


def test_two_spellings_of_one_mount_path_are_one_mount() -> None:
    with pytest.raises(ValidationError) as err:
        RunnerSpec.model_validate(
            {
                "hostPaths": [
                    {"path": "/opt/a", "mountPath": "/usr/local/dcgm"},
                    {"path": "/opt/b", "mountPath": "/usr/local//dcgm/"},
                ]
            }
        )
    assert "already mounted by entry 0" in str(err.value)


@pytest.mark.parametrize(
    ("name", "line", "field"),
    [
        ("hostpath-path-traversal.yaml", 11, "path"),
        ("hostpath-mountpath-traversal.yaml", 12, "mountPath"),
        ("hostpath-path-trailing-dotdot.yaml", 11, "path"),
    ],
)
def test_a_climbing_host_path_file_is_refused_on_one_line_naming_file_line_and_field(
    name: str, line: int, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = BAD / name
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {path}:{line}, ")
    assert f"field spec.runner.hostPaths[0].{field}: " in err and "climbs with '..'" in err


_SEGMENT = st.sampled_from(["", ".", "..", "dev", "etc", "a.b", "..x", "x.."]) | st.text(
    alphabet=string.ascii_lowercase + ".-_", min_size=1, max_size=6
)


@given(st.lists(_SEGMENT, max_size=8))
def test_any_absolute_path_is_refused_for_dotdot_or_kept_normalised(segments: list[str]) -> None:
    written = "/" + "/".join(segments)
    try:
        mount = HostPathMount.model_validate({"path": written, "mountPath": "/m"})
    except ValidationError:
        assert ".." in written.split("/")
        return
    kept = mount.path
    assert kept.startswith("/") and "//" not in kept and ".." not in kept.split("/")
    assert "." not in kept.split("/") and (kept == "/" or not kept.endswith("/"))
    assert kept.split("/")[1:] == [s for s in segments if s not in ("", ".")] or kept == "/"
