"""glimmer reads back the runs it writes, at the sizes it writes them.

A saved BurnInRun of thousands of results was refused by the YAML node budget (about 1,600
results) and read slowly through the YAML composer even when it was JSON. Both formats now
load at that size, while alias bombs and deep nesting are still refused (test_resource_loading).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from glimmer.api.load import load_paths
from glimmer.api.run import BurnInRun
from glimmer.cli.app import main
from glimmer.reports import read_run


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The BurnInRun a healthy smoke run on the 20-node fixture fleet writes."""
    out = tmp_path_factory.mktemp("run")
    path = out / "run.json"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            ["run", "--fleet", "ai-factory-fixture", "--profile", "smoke", "--no-faults",
             "--output", "json", "--report", str(out / "reports")]
        )  # fmt: skip
    assert code == 0
    path.write_text(buffer.getvalue(), encoding="utf-8")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _grown(run: dict[str, Any], results: int) -> dict[str, Any]:
    """The run with its results repeated (on renamed nodes) until it holds ``results``."""
    grown = copy.deepcopy(run)
    template = run["status"]["results"]
    out = []
    for i in range(results):
        result = copy.deepcopy(template[i % len(template)])
        result["nodes"] = [f"{n}-x{i // len(template)}" for n in result["nodes"]]
        out.append(result)
    grown["status"]["results"] = out
    return grown


def test_a_json_run_of_five_thousand_results_reads_back(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_grown(small_run, 5_000), indent=2), encoding="utf-8")
    run = read_run(str(path))
    assert isinstance(run, BurnInRun) and len(run.status.results) == 5_000


def test_a_yaml_run_of_two_thousand_results_reads_back(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(
        yaml.dump(_grown(small_run, 2_000), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)),
        encoding="utf-8",
    )
    (loaded,) = load_paths([str(path)])
    assert isinstance(loaded.obj, BurnInRun) and len(loaded.obj.status.results) == 2_000


def test_an_error_deep_in_a_big_json_run_names_its_line(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    grown = _grown(small_run, 3_000)
    grown["status"]["results"][2_999]["phase"] = "Fine"
    text = json.dumps(grown, indent=2)
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    expected = max(i for i, line in enumerate(lines, 1) if '"phase": "Fine"' in line)
    with pytest.raises(Exception) as caught:
        read_run(str(path))
    where = caught.value.location  # type: ignore[attr-defined]
    assert where.field == "status.results[2999].phase" and where.line == expected
