import pytest

from glimmer.contract.text import clamp_utf8, fields, trim_space


def test_trim_space_uses_go_whitespace_not_python_separators() -> None:
    assert trim_space(" \t\u00a0a b\u3000\r\n") == "a b"
    assert trim_space("\x1fa\x1c") == "\x1fa\x1c"  # Python's strip() would remove these


def test_fields_splits_on_runs_of_whitespace() -> None:
    assert fields("  a\t b\u00a0c  ") == ["a", "b", "c"]
    assert fields("") == [] and fields(" \t ") == []


@pytest.mark.parametrize("limit", range(0, 12))
def test_clamp_utf8_never_splits_a_rune(limit: int) -> None:
    data = "aé€😀b".encode()  # 1-, 2-, 3- and 4-byte sequences
    out = clamp_utf8(data, limit)
    assert len(out) <= limit
    assert data.startswith(out)
    out.decode("utf-8")  # raises if a sequence was cut


def test_clamp_utf8_keeps_short_input_whole() -> None:
    assert clamp_utf8(b"abc", 120) == b"abc"
