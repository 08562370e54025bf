from pathlib import Path

from glimmer.contract.docgen import REGENERATE, render
from glimmer.contract.kinds import KINDS
from glimmer.contract.registry import METRICS

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_checked_in_metrics_doc_equals_the_rendering() -> None:
    assert DOC.is_file(), f"docs/metrics.md is missing; create it with: {REGENERATE}"
    assert DOC.read_text(encoding="utf-8") == render(), (
        f"docs/metrics.md is out of date with the registry; regenerate it with: {REGENERATE}"
    )


def test_rendering_has_one_row_per_registered_metric_and_every_alias() -> None:
    text = render()
    for m in METRICS:
        assert f"| `{m.name}` |" in text, m.name
    for kind in KINDS:
        for raw, target in kind.aliases.items():
            assert f"| {kind.name} | `{raw}` | `{target}` |" in text


def test_pipes_in_descriptions_do_not_break_the_table() -> None:
    row = next(line for line in render().splitlines() if "`throttleClassification`" in line)
    assert "none\\|thermal\\|powerCap" in row
    assert row.count(" | ") == 7  # eight cells, however many pipes the description holds
