"""Every file the sinks read is held to a byte budget (issue 9 item 7): a CA bundle, a mounted
Secret's key, the outbox log, a file= sink read back and a folder sink's entries are refused
before they are read when over it, the budget named; the CLI says so in one line, exit 2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from receiver import Receiver
from sink_doubles import FakeClock, an_envelope

from glimmer.api.budget import MiB, budget
from glimmer.api.load import load_text, of_kind
from glimmer.api.sink import BurnInSink
from glimmer.cli.app import main
from glimmer.errors import InputError
from glimmer.sinks.base import encode
from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.directory import DirectorySink, read_directory
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.jsonl import read_jsonl
from glimmer.sinks.outbox import FILENAME
from glimmer.sinks.webhook import WebhookSink

LOG = budget("sink-log").max_bytes
ENTRY = budget("sink-envelope").max_bytes
KEY = "0123456789abcdef0123456789abcdef"

HOOK = """
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInSink
metadata: {name: results-webhook, namespace: lab}
spec:
  type: Webhook
  webhook:
    url: URL
    tokenSecretRef: {name: burnin-webhook-token, key: token}
"""


def _sparse(path: Path, size: int) -> Path:
    # As big as a hostile input to stat, but nothing is written to disk.
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.truncate(size)
    return path


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert "Traceback" not in captured.err + captured.out
    return line


def test_the_sink_log_budget_holds_several_of_the_largest_runs_glimmer_writes() -> None:
    # docs/sinks.md: a 10,000-node run writes ~103 MB (smoke) to ~150 MB (acceptance) to a
    # file= sink, and as much to the outbox against a dead webhook; both logs append run after
    # run. Its terminal envelope, every result in one, is about half of that.
    assert LOG >= 7 * 150_000_000
    assert ENTRY >= 4 * 75_000_000


def test_sink_ca_over_its_budget_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ca = _sparse(tmp_path / "ca.pem", 5 * MiB)
    argv = ["sink", "flush", "--sink", "webhook=https://h.example/x"]
    assert main([*argv, "--sink-state", str(tmp_path / "box"), "--sink-ca", str(ca)]) == 2
    line = _one_error_line(capsys)
    assert line == f"error: {ca}: file is 5.2 MB, over the 4 MiB budget for a CA bundle"


def test_a_webhook_sink_made_by_hand_checks_its_ca_bundle_too(tmp_path: Path) -> None:
    ca = _sparse(tmp_path / "ca.pem", 5 * MiB)
    with pytest.raises(InputError) as err:
        WebhookSink("https://h.example/x", ca_bundle=ca)
    assert err.value.message == "file is 5.2 MB, over the 4 MiB budget for a CA bundle"
    with pytest.raises(InputError) as err:
        WebhookSink("https://h.example/x", ca_bundle=Path("ca\x00.pem"))
    assert err.value.message == "a path cannot hold a NUL character"


def test_an_outbox_log_over_its_budget_is_refused_before_it_is_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _sparse(tmp_path / "box" / FILENAME, LOG + 1)
    argv = ["sink", "flush", "--sink", f"file={tmp_path / 'out.jsonl'}"]
    assert main([*argv, "--sink-state", str(tmp_path / "box")]) == 2
    line = _one_error_line(capsys)
    assert line == f"error: {log}: file is 1.1 GB, over the 1 GiB budget for a sink log"


def test_sink_serve_refuses_a_file_sink_over_its_budget_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _sparse(tmp_path / "out.jsonl", LOG + 1)
    assert main(["sink", "serve", "--once", "--from", str(path)]) == 2
    line = _one_error_line(capsys)
    assert line == f"error: {path}: file is 1.1 GB, over the 1 GiB budget for a sink log"
    with pytest.raises(InputError):
        list(read_jsonl(path))


def test_sink_serve_refuses_a_folder_entry_over_the_envelope_budget_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = _sparse(tmp_path / "cm" / f"{KEY}.json", ENTRY + 1)
    assert main(["sink", "serve", "--once", "--from", str(tmp_path / "cm")]) == 2
    line = _one_error_line(capsys)
    assert line == f"error: {entry}: file is 536.9 MB, over the 512 MiB budget for a sink envelope"
    with pytest.raises(InputError):
        list(read_directory(tmp_path / "cm"))


def test_the_folder_sink_never_reads_an_entry_of_another_size_to_compare_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = an_envelope()
    key = str(env["deliveryId"])
    foreign = _sparse(tmp_path / "cm" / f"{key}.json", 64 * MiB)
    real_read = Path.read_bytes
    read: list[Path] = []

    def read_bytes(self: Path) -> bytes:
        read.append(self)
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    sink = DirectorySink(tmp_path / "cm")
    sink.send(env, encode(env), 5.0)
    assert read == []  # a 64 MiB entry is not read to be compared with a small body
    sink.send(env, encode(env), 5.0)  # the same body again: as big, so compared, left alone
    assert read == [foreign]
    monkeypatch.undo()
    assert foreign.read_bytes() == encode(env)


def _hook_sink(url: str, secrets: Path) -> WebhookSink:
    objects = [obj for obj, _ in of_kind(load_text(HOOK.replace("URL", url)), BurnInSink)]
    sinks = sinks_from_specs(objects=objects, secrets_dir=secrets, clock=FakeClock())
    [sink] = sinks.named.values()
    assert isinstance(sink, WebhookSink)
    return sink


@pytest.mark.parametrize(
    ("write", "words"),
    [
        (lambda p: _sparse(p, 1 * MiB), "file is 1.0 MB, over the 64 KiB budget for a secret"),
        (lambda p: p.write_bytes(b"\xfftoken"), "not a UTF-8 text file (byte 0 is not UTF-8)"),
    ],
    ids=["over-budget", "not-utf8"],
)
def test_a_secret_key_over_its_budget_or_not_text_fails_the_delivery_for_good(
    receiver: Receiver, tmp_path: Path, write: Callable[[Path], object], words: str
) -> None:
    folder = tmp_path / "secrets" / "burnin-webhook-token"
    folder.mkdir(parents=True)
    write(folder / "token")
    sink = _hook_sink(receiver.url, tmp_path / "secrets")
    env = an_envelope()
    with pytest.raises(DeliveryError) as err:
        sink.send(env, encode(env), 5.0)
    assert err.value.permanent
    assert str(err.value) == f"Secret 'burnin-webhook-token' key 'token': {words}"
    assert not receiver.requests  # nothing was sent without its credentials
