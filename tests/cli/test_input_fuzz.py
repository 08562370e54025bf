"""Every command's file argument, fed random bytes and truncated valid files: exit 2, one line.

Bad input is never a traceback and never writes anything: each example runs in an empty working
folder that must stay empty. The valid files are glimmer's own samples with ``kind`` moved to the
last line, and every truncation cuts before that line, so each truncated file is certainly
incomplete (a truncation that happened to stay valid would prove nothing).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.cli.app import main

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO.parent / "shared" / "conformance" / "glimmer-samples"
FLEET = REPO / "src" / "glimmer" / "data" / "fleets" / "ai-factory-fixture.yaml"
BIG_FLEET = REPO / "src" / "glimmer" / "data" / "fleets" / "ai-factory.yaml"  # has H100 SXM
PROFILE = REPO / "src" / "glimmer" / "data" / "profiles" / "smoke.yaml"
TEST = SAMPLES / "disk-io.yaml"
SCHEDULE = (
    "apiVersion: burnin.glimmer.ai/v1alpha1\nmetadata: {name: nightly}\n"
    "spec: {schedule: '@daily', profileRef: smoke, target: {nodeNames: [pcie-node-0000]}}\n"
    "kind: BurnInSchedule\n"
)
CERTIFICATION = REPO / "tests" / "certify" / "catalog" / "samples" / "certification-h100.yaml"

EXAMPLES = 25  # per command: the whole module stays well under a minute on two cores


def _kind_last(doc: dict[str, Any]) -> dict[str, Any]:
    return {**{k: v for k, v in doc.items() if k != "kind"}, "kind": doc["kind"]}


def _yaml_kind_last(path: Path) -> str:
    """The documents of ``path``, ``kind`` last in each."""
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    return "---\n".join(yaml.safe_dump(_kind_last(d), sort_keys=False) for d in docs)


@contextlib.contextmanager
def _quiet() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The JSON of a finished smoke run on the fixture fleet, ``kind`` last."""
    where = tmp_path_factory.mktemp("run")
    with _quiet() as (out, _):
        code = main(
            ["run", "--fleet", "ai-factory-fixture", "--profile", "smoke", "--no-faults",
             "--output", "json", "--report", str(where / "reports")]
        )  # fmt: skip
    assert code == 0
    run = json.loads(out.getvalue())
    run["spec"]["baseline"] = True  # so that baseline derive takes it, as report does
    return json.dumps(_kind_last(run), indent=1)


class Inputs(dict[str, str]):
    """The texts by name; a short repr keeps a failing example's report readable."""

    def __repr__(self) -> str:
        return f"Inputs({', '.join(self)})"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, saved_run: str) -> dict[str, str]:
    """Valid files the commands need beside the fuzzed one, and the valid texts to truncate."""
    where = tmp_path_factory.mktemp("inputs")
    run = where / "run.json"
    run.write_text(saved_run, encoding="utf-8")
    schedule = where / "schedule.yaml"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    with _quiet() as (out, _):
        assert main(["fingerprint", "--fleet", "ai-factory-fixture", "--all"]) == 0
    fingerprints = yaml.safe_load_all(out.getvalue())
    return Inputs(
        {
            "run-file": str(run),
            "schedule-file": str(schedule),
            "run": saved_run,
            "fleet": _yaml_kind_last(FLEET),
            "big-fleet": _yaml_kind_last(BIG_FLEET),
            "profile": _yaml_kind_last(PROFILE),
            "test": _yaml_kind_last(TEST),
            "schedule": _yaml_kind_last(PROFILE) + "---\n" + SCHEDULE,
            "certification": _yaml_kind_last(CERTIFICATION),
            "fingerprint": yaml.safe_dump(_kind_last(next(iter(fingerprints))), sort_keys=False),
        }
    )


@dataclass(frozen=True)
class Case:
    """A command whose file argument is fuzzed: its argv around FILE, and what FILE holds."""

    name: str
    argv: Callable[[str, dict[str, str]], list[str]]
    valid: str | None  # key of ``inputs`` holding a valid text to truncate; None: random only
    suffix: str = ".yaml"


CASES = [
    Case("validate", lambda f, _: ["validate", f], "test"),
    Case("lint", lambda f, _: ["lint", f], "profile"),
    Case("fleet validate", lambda f, _: ["fleet", "validate", "--fleet", f], "fleet"),
    Case("fleet show", lambda f, _: ["fleet", "show", "--fleet", f], "fleet"),
    Case("fleet topology", lambda f, _: ["fleet", "topology", "--fleet", f], "fleet"),
    Case("fleet telemetry", lambda f, _: ["fleet", "telemetry", "--fleet", f], "fleet"),
    Case("fleet serve", lambda f, _: ["fleet", "serve", "--fleet", f, "--port", "0"], "fleet"),
    Case("report", lambda f, _: ["report", f, "-d", "out"], "run", ".json"),
    Case(
        "report --fleet",
        lambda f, i: ["report", i["run-file"], "--fleet", f, "-d", "out"],
        "fleet",
    ),
    Case(
        "baseline derive",
        lambda f, _: ["baseline", "derive", f, "--profile", "smoke", "--out", "derived.yaml"],
        "run",
        ".json",
    ),
    Case(
        "baseline derive --file",
        lambda f, i: [
            "baseline",
            "derive",
            i["run-file"],
            "--profile",
            "smoke",
            "--file",
            f,
            "--out",
            "derived.yaml",
        ],
        "profile",
    ),
    Case(
        "baseline strip --profile",
        lambda f, _: ["baseline", "strip", "--profile", f, "--out", "stripped.yaml"],
        "profile",
    ),
    Case("run -f", lambda f, _: ["run", "-f", f, "--fleet", "ai-factory-fixture"], "profile"),
    Case("run --fleet", lambda f, _: ["run", "--fleet", f], "fleet"),
    Case(
        "certify run -f",
        lambda f, _: ["certify", "run", "-f", f, "--fleet", "ai-factory"],
        "certification",
    ),
    Case(
        "certify run --fleet",
        lambda f, _: ["certify", "run", "-f", str(CERTIFICATION), "--fleet", f],
        "big-fleet",
    ),
    Case("certify render", lambda f, _: ["certify", "render", "-f", f], "certification"),
    Case("certify report", lambda f, _: ["certify", "report", f], None, ".json"),
    Case(
        "schedule run -f",
        lambda f, _: ["schedule", "run", "-f", f, "--fleet", "ai-factory-fixture", "--ticks", "1"],
        "schedule",
    ),
    Case(
        "schedule run --fleet",
        lambda f, i: ["schedule", "run", "-f", i["schedule-file"], "--fleet", f, "--ticks", "1"],
        "fleet",
    ),
    Case("fingerprint --fleet", lambda f, _: ["fingerprint", "--fleet", f, "--all"], "fleet"),
    Case(
        "fingerprint --against",
        lambda f, _: ["fingerprint", "--fleet", "ai-factory-fixture", "--all", "--against", f],
        "fingerprint",
    ),
]


def _truncations(text: str) -> st.SearchStrategy[bytes]:
    """Strict prefixes of ``text`` that end before its last ``kind`` line starts."""
    last_kind = max(text.rfind("\nkind:"), text.rfind('\n "kind"'))
    assert last_kind > 0, "the valid text ends with its kind"
    return st.integers(0, last_kind).map(lambda n: text[:n].encode("utf-8"))


def _bytes_for(case: Case, inputs: dict[str, str]) -> st.SearchStrategy[bytes]:
    noise = st.binary(max_size=400) | st.text(max_size=400).map(lambda t: t.encode("utf-8"))
    if case.valid is None:
        return noise
    return noise | _truncations(inputs[case.valid])


def _refused_cleanly(case: Case, inputs: dict[str, str], data: bytes, *, one: bool) -> None:
    """Exit 2, no traceback, nothing written, and each stderr line one error naming the file.

    ``one``: exactly one line. Random text may happen to hold several documents each wrong in
    its own way, and glimmer reports every problem of a file, one a line; so random inputs need
    each line to be such an error, the classic bad files exactly one."""
    with tempfile.TemporaryDirectory() as work:
        given_file = Path(work) / f"given{case.suffix}"
        given_file.write_bytes(data)
        before = os.getcwd()
        os.chdir(work)
        try:
            with _quiet() as (_, err):
                code = main(case.argv(str(given_file), inputs))
        finally:
            os.chdir(before)
        left = sorted(p.name for p in Path(work).iterdir() if p != given_file)
    text = err.getvalue()
    lines = text.splitlines()
    assert "Traceback" not in text
    assert code == 2, (code, text)
    assert lines, "a refusal says why"
    assert all(line.startswith(f"error: {given_file}") for line in lines), text
    if one:
        assert len(lines) == 1, text
    assert left == [], f"written although the input was refused: {left}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_command_refuses_random_or_truncated_input_in_one_line_and_writes_nothing(
    case: Case, inputs: dict[str, str], data: st.DataObject
) -> None:
    _refused_cleanly(case, inputs, data.draw(_bytes_for(case, inputs)), one=False)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize(
    "raw",
    [b"", b"\xff\xfe\x00\x01binary", b"# only a comment\n", b"\x00" * 64, b"[[[[[[[[[[", b"{"],
    ids=["empty", "not-utf8", "comment", "nul", "open-brackets", "open-brace"],
)
def test_a_command_refuses_the_classic_bad_files_in_one_line(
    case: Case, inputs: dict[str, str], raw: bytes
) -> None:
    _refused_cleanly(case, inputs, raw, one=True)


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.valid is not None and c.name != "fleet serve"],  # serve would serve
    ids=lambda c: c.name,
)
def test_each_command_takes_its_untruncated_valid_file(case: Case, inputs: dict[str, str]) -> None:
    # The harness proves something only if the valid text (kind last) is accepted whole: then
    # each refusal above is the fuzzed file's doing, not a flaw of the other arguments.
    assert case.valid is not None
    with tempfile.TemporaryDirectory() as work:
        given_file = Path(work) / f"given{case.suffix}"
        given_file.write_text(inputs[case.valid], encoding="utf-8")
        before = os.getcwd()
        os.chdir(work)
        try:
            with _quiet() as (_, err):
                code = main(case.argv(str(given_file), inputs))
        finally:
            os.chdir(before)
    assert code in (0, 1), err.getvalue()


@pytest.mark.parametrize("command", ["validate", "lint"])
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.binary(max_size=400) | st.text(max_size=400).map(lambda t: t.encode("utf-8")))
def test_stdin_refuses_random_bytes_in_one_error_a_line(command: str, data: bytes) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    saved = sys.stdin
    sys.stdin = stdin
    try:
        with _quiet() as (_, err):
            code = main([command, "-"])
    finally:
        sys.stdin = saved
    lines = err.getvalue().splitlines()
    assert code == 2 and lines and "Traceback" not in err.getvalue()
    assert all(line.startswith("error: <stdin>") for line in lines), err.getvalue()
