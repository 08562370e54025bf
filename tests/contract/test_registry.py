from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.registry import METRICS, REGISTRY


def test_registry_holds_every_metric_of_the_contract_once() -> None:
    assert len(METRICS) == 141
    assert len(REGISTRY) == 141


def test_every_alias_target_is_registered() -> None:
    for kind in BUILT_IN.values():
        for raw, canonical in kind.aliases.items():
            assert canonical in REGISTRY, f"{kind.name}: {raw} -> {canonical}"
