"""``glimmer run --help`` shows every option's help whole: the help is rendered as rich markup,
where ``[server, client]`` reads as a style tag and vanishes unless escaped (``--peer-node``
once read "the link is named )."). Each option's help, as the reader should see it, must be in
the rendered page, brackets included."""

from __future__ import annotations

import re

import pytest
import typer

from glimmer.cli.app import app, main

BOX = re.compile(r"[│╭╮╰╯─]")


def _run_options() -> list[tuple[str, str]]:
    """(first flag, help) of every option of ``glimmer run`` that has a help text."""
    command = typer.main.get_command(app)
    run = command.commands["run"]  # type: ignore[attr-defined]
    return [(p.opts[0], p.help) for p in run.params if getattr(p, "help", None)]


def _flat(text: str) -> str:
    return " ".join(BOX.sub(" ", text).split())


def _page(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "1000")  # one line per option: nothing wraps
    assert main(["run", "--help"]) == 0
    return _flat(capsys.readouterr().out)


def test_every_option_of_glimmer_run_shows_its_help_brackets_included(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = _page(capsys, monkeypatch)
    lost = [
        flag
        for flag, help_text in _run_options()
        if _flat(help_text.replace("\\[", "[")) not in page
    ]
    assert lost == []


def test_the_peer_node_help_names_the_link(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = _page(capsys, monkeypatch)
    assert "(the link is named [server, client])." in page
    assert "the link is named )" not in page
