"""Which cell of a per-product (gpuClass) matrix judges a node: measure in its own cell, Skip in
the others, and Error wherever skipping would let the node pass by omission."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.contract.gpu_class import AXIS_ENV, CLASSES_ENV, Choice, choose, parse_classes

TABLE = "gen5=NVIDIA H100 80GB HBM3,NVIDIA H200; gen4=NVIDIA L40S ;c2c=NVIDIA GB200"
H100 = "NVIDIA H100 80GB HBM3"


def _env(cell: str | None, table: str | None = TABLE) -> dict[str, str]:
    env = {}
    if cell is not None:
        env[AXIS_ENV] = cell
    if table is not None:
        env[CLASSES_ENV] = table
    return env


def test_the_table_reads_classes_and_names_with_spaces_trimmed() -> None:
    assert parse_classes(TABLE) == {
        "gen5": ("NVIDIA H100 80GB HBM3", "NVIDIA H200"),
        "gen4": ("NVIDIA L40S",),
        "c2c": ("NVIDIA GB200",),
    }


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ("gen5", "is not <class>="),
        ("=NVIDIA H200", "is not <class>="),
        ("gen5=", "lists no GPU names"),
        ("gen5=A;gen5=B", "appears twice"),
        ("gen5=A;gen4=A", "in both class 'gen5' and 'gen4'"),
        (" ; ", "names no class"),
    ],
)
def test_a_malformed_table_is_refused_naming_the_entry(table: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_classes(table)


def test_the_own_cell_measures_and_the_others_skip_naming_the_judging_cell() -> None:
    assert choose(_env("gen5"), [H100] * 8).choice is Choice.MEASURE
    other = choose(_env("gen4"), [H100] * 8)
    assert other.choice is Choice.SKIP
    assert other.reason == f"{H100} is judged by the gen5 cell, not gen4"


def test_without_the_axis_the_test_is_a_plain_one_and_measures() -> None:
    assert choose(_env(None), ["NVIDIA A100-SXM4-80GB"]).choice is Choice.MEASURE
    assert choose({}, []).choice is Choice.MEASURE


@pytest.mark.parametrize(
    ("env", "gpus", "words"),
    [
        # Every cell would skip a GPU no class lists: the node would pass by omission.
        (_env("gen5"), ["NVIDIA A100-SXM4-80GB"], "is in no class"),
        (_env("gen5"), [H100, "NVIDIA L40S"], "fall in classes gen4, gen5"),
        (_env("gen3"), [H100], "names no class of BURNIN_GPU_CLASSES (c2c, gen4, gen5)"),
        (_env("gen5", None), [H100], "does not say which GPUs it judges"),
        (_env("gen5", "gen5"), [H100], "BURNIN_GPU_CLASSES is malformed"),
    ],
)
def test_whatever_would_pass_by_omission_is_an_error(
    env: dict[str, str], gpus: list[str], words: str
) -> None:
    got = choose(env, gpus)
    assert got.choice is Choice.ERROR
    assert words in got.reason


def test_with_no_gpu_visible_every_cell_measures_so_the_runner_rules_decide_alike() -> None:
    assert {choose(_env(c), []).choice for c in ("gen5", "gen4", "c2c")} == {Choice.MEASURE}


@given(st.text(), st.text(), st.lists(st.text(), max_size=4))
def test_no_table_or_cell_value_makes_the_choice_raise(
    table: str, cell: str, gpus: list[str]
) -> None:
    got = choose({AXIS_ENV: cell, CLASSES_ENV: table}, gpus)
    assert got.choice in set(Choice)
    assert (got.choice is Choice.MEASURE) == (got.reason == "")


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.lists(st.sampled_from("xyz"), min_size=1, max_size=3, unique=True),
        min_size=1,
    )
)
def test_exactly_one_cell_measures_a_node_its_table_covers(classes: dict[str, list[str]]) -> None:
    owner: dict[str, str] = {}
    for name, gpus in classes.items():
        for gpu in gpus:
            owner.setdefault(gpu, name)
    table = ";".join(
        f"{name}={','.join(g for g in gpus if owner[g] == name)}"
        for name, gpus in classes.items()
        if any(owner[g] == name for g in gpus)
    )
    for gpu, home in owner.items():
        cells = {c: choose(_env(c, table), [gpu]).choice for c in parse_classes(table)}
        assert [c for c, got in cells.items() if got is Choice.MEASURE] == [home]
        assert all(got is Choice.SKIP for c, got in cells.items() if c != home)
