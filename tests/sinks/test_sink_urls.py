"""A sink address that cannot work is refused at load (issue 9 item 5): a webhook URL that is
not an http(s) URL with a host, in a BurnInSink and on ``--sink``; a ``file=`` sink that is a
folder, a ``dir=`` sink that is a file, a ``--sink-state`` that is a file — before anything
runs, rather than as a failed delivery of every envelope of the run."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from glimmer.api.sink import TOKEN_PARAMS, WebhookSink, redact, webhook_url_problem
from glimmer.cli.app import main
from glimmer.errors import InputError
from glimmer.sinks.config import sinks_from_specs

NOT_WEBHOOKS = [
    ("not a url at all", "no scheme"),
    ("http://", "names no host"),
    ("https:///path-only", "names no host"),
    ("ftp://example.com/x", "has ftp://"),
    ("file:///etc/passwd", "has file://"),
    ("example.com/hook", "no scheme"),
    ("https://host:70000/x", "port"),
    ("https://host:0/x", "port 0"),
    ("https://host:/x", "empty port"),
    ("https://host/a b", "space"),
    ("https://user:pw@host/x", "credentials"),
    ("http://[::1/x", "not a URL"),
]


@pytest.mark.parametrize(("url", "words"), NOT_WEBHOOKS)
def test_a_burninsink_url_that_is_not_a_webhook_url_is_refused(url: str, words: str) -> None:
    with pytest.raises(ValidationError) as err:
        WebhookSink.model_validate({"url": url})
    assert words in str(err.value)


@pytest.mark.parametrize(("url", "words"), NOT_WEBHOOKS)
def test_a_sink_flag_url_that_is_not_a_webhook_url_is_refused_naming_the_flag(
    url: str, words: str
) -> None:
    with pytest.raises(InputError) as err:
        sinks_from_specs([f"webhook={url}"])
    shown = url.replace("user:pw@", "***@")  # a credential is named, never echoed
    assert words in str(err.value) and f"--sink webhook={shown}" in str(err.value)


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/hook", "https://hooks.example.com/a?b=c", "HTTPS://[::1]:443/x"],
)
def test_a_webhook_url_with_a_scheme_and_host_is_accepted(url: str) -> None:
    assert webhook_url_problem(url) is None
    assert WebhookSink.model_validate({"url": url}).url == url


_HOST = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){0,3}", fullmatch=True)
_PATH = st.text(alphabet=string.ascii_letters + string.digits + "/-_.?=&", max_size=30)


@given(
    scheme=st.sampled_from(["http", "https"]),
    host=_HOST,
    port=st.none() | st.integers(1, 65535),
    path=_PATH,
)
def test_every_http_url_with_a_host_and_a_real_port_passes(
    scheme: str, host: str, port: int | None, path: str
) -> None:
    url = f"{scheme}://{host}{f':{port}' if port else ''}/{path}"
    carries_token = any(
        pair.partition("=")[0].lower() in TOKEN_PARAMS
        for pair in re.split("[&;]", path.partition("?")[2])
    )
    assert (webhook_url_problem(url) is None) == (not carries_token)


@given(st.text(max_size=60))
def test_anything_passing_the_check_has_an_http_scheme_and_a_host(text: str) -> None:
    # Whatever the input, the check never raises, and what it lets through a client can use.
    if webhook_url_problem(text) is None:
        scheme, _, rest = text.partition("://")
        assert scheme.lower() in {"http", "https"} and rest.split("/")[0]
        assert not any(c.isspace() for c in text)


@given(scheme=st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8), host=_HOST)
def test_any_other_scheme_is_refused_naming_it(scheme: str, host: str) -> None:
    why = webhook_url_problem(f"{scheme}://{host}/x")
    assert (why is None) == (scheme in {"http", "https"})
    if why is not None:
        assert f"{scheme}://" in why


def test_a_file_sink_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        sinks_from_specs([f"file={tmp_path}"])
    assert "is a folder" in str(err.value) and f"--sink file={tmp_path}" in str(err.value)


def test_a_dir_sink_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError) as err:
        sinks_from_specs([f"dir={tmp_path / 'f'}"])
    assert "is a file" in str(err.value)


def test_a_file_sink_below_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError) as err:
        sinks_from_specs([f"file={tmp_path / 'f' / 'out.jsonl'}"])
    assert f"{tmp_path / 'f'} is a file" in str(err.value)


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_a_sink_path_holding_a_nul_is_refused(kind: str) -> None:
    with pytest.raises(InputError) as err:
        sinks_from_specs([f"{kind}=out\x00.jsonl"])
    assert "NUL" in str(err.value)


def test_a_sink_state_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("x")
    with pytest.raises(InputError) as err:
        sinks_from_specs([f"file={tmp_path / 'o.jsonl'}"], state_dir=tmp_path / "state")
    assert "--sink-state: not a folder" in str(err.value)


def test_a_ca_bundle_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        sinks_from_specs(["webhook=https://h.example/x"], ca_bundle=tmp_path)
    assert "--sink-ca: a folder" in str(err.value)


def test_prometheus_with_a_value_is_refused_saying_it_takes_none() -> None:
    with pytest.raises(InputError) as err:
        sinks_from_specs(["prometheus=:9090"])
    assert "prometheus takes no value" in str(err.value)


@pytest.mark.parametrize(
    "flags",
    [
        ["--sink", "file=FOLDER"],
        ["--sink", "webhook=http://"],
        ["--sink", "webhook=not a url at all"],
        ["--sink", "webhook=ftp://example.com/x"],
        ["--sink", "webhook=https://127.0.0.1:9/x", "--sink-ca", "FOLDER"],
        ["--sink", "webhook=https://127.0.0.1:9/x", "--sink-secret-file", "FOLDER"],
    ],
)
def test_glimmer_run_refuses_a_sink_that_cannot_work_before_running_anything(
    flags: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = ["run", "--no-faults", *(f.replace("FOLDER", str(folder)) for f in flags)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert list(work.iterdir()) == [] and list(folder.iterdir()) == []  # no report, no outbox


@given(
    kind=st.sampled_from(["webhook", "file", "dir", "prometheus", "kafka", "WEBHOOK", ""]),
    value=st.text(max_size=40),
)
def test_any_sink_flag_makes_a_sink_or_an_input_error_naming_the_flag(
    kind: str, value: str
) -> None:
    spec = f"{kind}={value}" if value or kind != "prometheus" else kind
    try:
        sinks = sinks_from_specs([spec])
    except InputError as e:
        assert f"--sink {redact(spec)}" in str(e)
    else:
        [sink] = sinks.always
        assert sink.ident
        sinks.close()
