"""The built-in profiles are claims: every gate must say where its number came from."""

from pathlib import Path

from glimmer.plan.builtin import builtin_profiles_dir


def _yaml_files() -> list[Path]:
    return sorted(builtin_profiles_dir().glob("*.yaml"))


def test_every_gate_is_preceded_by_a_comment_naming_its_source() -> None:
    bare: list[str] = []
    for path in _yaml_files():
        previous = ""
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if line.strip().startswith("- metric:") and not previous.strip().startswith("#"):
                bare.append(f"{path.name}:{number}: {line.strip()}")
            previous = line
    assert not bare, "gates without a source comment:\n" + "\n".join(bare)


def test_acceptance_covers_clocks_stress_bandwidth_host_health_and_dcgm() -> None:
    text = (builtin_profiles_dir() / "tests.yaml").read_text()
    for kind in ("clockprobe", "gpu-burn", "memory-bw", "host-health", "dcgm-diag"):
        assert f"kind: {kind}" in text
