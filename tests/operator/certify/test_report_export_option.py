"""``--allow-plain-http-exports``: off unless given, carried from ``glimmer operator run`` to
``python -m glimmer.operator run`` (the argv the CLI execs) and refused nowhere else."""

from __future__ import annotations

from glimmer.operator.options import checked, parse


def test_plain_http_exports_are_off_unless_the_flag_is_given() -> None:
    assert parse(["run"]).allow_plain_http_exports is False
    assert "--allow-plain-http-exports" not in checked().argv()


def test_the_flag_survives_the_argv_the_cli_execs() -> None:
    options = parse(["run", "--standalone", "--allow-plain-http-exports"])
    assert options.allow_plain_http_exports is True
    again = parse(options.argv())
    assert again == options
