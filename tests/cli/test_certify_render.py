"""``glimmer certify render``: golden manifests, Trainer-valid output and one-line errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from glimmer.cli.app import main

REPO = Path(__file__).resolve().parents[2]
CATALOG_TESTS = REPO / "tests" / "certify" / "catalog"
SAMPLES = CATALOG_TESTS / "samples"
GOLDEN = CATALOG_TESTS / "golden"
UPDATE = "GLIMMER_UPDATE_GOLDEN"

sys.path.insert(0, str(CATALOG_TESTS))
from trainer_schemas import FILES, problems  # noqa: E402

CASES = {
    "certification-h100-aws": ["-f", str(SAMPLES / "certification-h100.yaml"), "--platform", "aws"],
    "workloadrun-mpi-gcp-gb200": [
        "-f",
        str(SAMPLES / "workloadrun-mpi.yaml"),
        "--platform",
        "gcp",
        "--gpu",
        "gb200",
    ],
    "entry-dcgm-level4-oci-l40s": [
        "--entry",
        "diagnostics/dcgm-level4",
        "--platform",
        "oci",
        "--gpu",
        "NVIDIA-L40S",
    ],
}


def _render(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["certify", "render", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", sorted(CASES))
def test_rendered_manifests_match_the_golden_files(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _render(CASES[case], capsys)
    assert code == 0, err
    golden = GOLDEN / f"{case}.yaml"
    if os.environ.get(UPDATE):
        golden.write_text(out, encoding="utf-8")
    assert golden.exists(), f"no golden file; create it with {UPDATE}=1 pytest {__file__}"
    assert out == golden.read_text(encoding="utf-8"), (
        f"rendered {case} differs from {golden.name}; if the change is intended, regenerate with "
        f"{UPDATE}=1 .venv/bin/pytest tests/cli/test_certify_render.py and review the diff"
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_rendered_trainer_object_validates_against_the_trainer_crds(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = _render(CASES[case], capsys)
    objects = list(yaml.safe_load_all(out))
    assert "TrainJob" in {o["kind"] for o in objects}
    for obj in objects:
        if obj["kind"] in FILES:
            assert problems(obj) == [], obj["metadata"]["name"]


def test_a_certification_renders_one_trainjob_per_category_with_gang_and_env(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = _render(CASES["certification-h100-aws"], capsys)
    objects = list(yaml.safe_load_all(out))
    jobs = [o for o in objects if o["kind"] == "TrainJob"]
    assert len(jobs) == 3
    for job in jobs:
        assert job["metadata"]["labels"]["kai.scheduler/queue"] == "acceptance"
        assert job["metadata"]["labels"]["team"] == "fleet"
        assert job["metadata"]["namespace"] == "certify"
    nccl_args = jobs[0]["spec"]["trainer"]["args"]
    assert "NCCL_NVLS_ENABLE=0" in nccl_args  # spec.env reaches MPI ranks as -x pairs
    training_env = jobs[2]["spec"]["trainer"]["env"]
    assert {"name": "NCCL_NVLS_ENABLE", "value": "0"} in training_env
    assert jobs[2]["metadata"]["labels"]["stage"] == "training"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--entry", "communication/nccl-all-reduce", "--platform", "moon"],
            'invalid --platform "moon"',
        ),
        (["--entry", "communication/nccl-all-reduce"], "cannot determine the GPU architecture"),
        (["--entry", "communication/nope", "--gpu", "h100"], "is not in the catalog"),
        (["--entry", "nccl", "--gpu", "h100"], "'nccl' is not in the catalog"),
        (["--gpu", "h100"], "exactly one of -f FILE and --entry"),
        (["-f", "/no/such/file.yaml"], "no such file"),
        (["--entry", "communication/nccl-all-reduce", "--gpu", "z900"], "unknown GPU architecture"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _render(args, capsys)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err


def test_a_render_error_names_the_file_object_and_category(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "cert.yaml"
    bad.write_text(
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: Certification\nmetadata: {name: c}\n"
        "spec:\n  target: {nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}\n"
        "  categories:\n    - {domain: communication, variant: nccl-all-reduce}\n"
        "    - {domain: training, variant: nemotron5-8b, options: {gpusPerNode: 1}}\n"
    )
    code, _, err = _render(["-f", str(bad)], capsys)
    assert code == 2
    assert f"{bad}:8, document 1, Certification/c, field spec.categories[1]" in err
    assert "requires at least 4 GPUs" in err


def test_a_workload_run_with_a_reserved_mount_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "run.yaml"
    bad.write_text(
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: WorkloadRun\nmetadata: {name: w}\n"
        "spec:\n  image: i\n  numNodes: 1\n  framework: {mpi: {binary: b, mpirunPath: m}}\n"
        "  volumes: [{name: keys, emptyDir: {}}]\n"
        "  volumeMounts: [{name: keys, mountPath: /root/.ssh/extra}]\n"
    )
    code, _, err = _render(["-f", str(bad), "--gpu", "h100"], capsys)
    assert code == 2
    assert "WorkloadRun/w" in err and "spec.volumeMounts[0].mountPath" in err


def test_a_file_without_certification_or_workload_run_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _render(["-f", str(SAMPLES / "logprofile-nccl.yaml")], capsys)
    assert code == 2 and "no Certification or WorkloadRun to render" in err


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("# nothing yet\n", "no document (the file is empty or holds only comments)"),
        (
            "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\nmetadata: {name: p}\n"
            "spec:\n  tests: [{testRef: gpu-burn}]\n",
            "BurnInProfile/p",
        ),
    ],
)
def test_a_render_file_of_the_wrong_kind_is_refused_naming_what_it_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, holds: str
) -> None:
    path = tmp_path / "wrong.yaml"
    path.write_text(text)
    code, out, err = _render(["-f", str(path), "--gpu", "h100"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"error: {path}: holds no Certification or WorkloadRun to render: it holds {holds}\n"
    )


def test_a_workload_run_on_aws_leads_with_platform_mpi_args_and_wraps_pre_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _render(
        ["-f", str(SAMPLES / "workloadrun-mpi.yaml"), "--platform", "aws", "--gpu", "h100"], capsys
    )
    assert code == 0, err
    job = next(o for o in yaml.safe_load_all(out) if o["kind"] == "TrainJob")
    trainer = job["spec"]["trainer"]
    assert trainer["command"] == ["/bin/bash", "-c"]
    script = trainer["args"][0]
    assert script.startswith("rm -rf /opt/amazon\nunset NCCL_NET_PLUGIN")
    last = script.splitlines()[-1]
    assert last.startswith("exec timeout 3600 /usr/local/mpi/bin/mpirun -N 8 ")
    # Platform mpiArgs lead the user's; env the user's mpiArgs already forward is not repeated.
    assert last.index("NCCL_NET_PLUGIN=none") < last.index("NCCL_DEBUG=WARN")
    assert "NCCL_DEBUG=INFO" not in last
    assert "'-o StrictHostKeyChecking=no -o ConnectionAttempts=10'" in last


def test_certify_crds_writes_what_is_checked_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certify", "crds", "--output-dir", str(tmp_path)]) == 0
    written = {p.name: p.read_text() for p in tmp_path.glob("*.yaml")}
    checked_in = {p.name: p.read_text() for p in (REPO / "deploy/crds-certify").glob("*.yaml")}
    assert written == checked_in and len(written) == 9


def test_the_certification_samples_pass_glimmer_validate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", str(SAMPLES)]) == 0


def test_entry_accepts_a_bare_variant_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, bare, _ = _render(
        ["--entry", "dcgm-level4", "--platform", "oci", "--gpu", "l40s"], capsys
    )
    assert code == 0
    _, full, _ = _render(CASES["entry-dcgm-level4-oci-l40s"], capsys)
    assert bare == full


_RUN = (
    "apiVersion: certify.glimmer.ai/v1alpha1\n"  # 1
    "kind: WorkloadRun\n"  # 2
    "metadata: {name: w}\n"  # 3
    "spec:\n"  # 4
    "  image: i\n"  # 5
    "  numNodes: 1\n"  # 6
    "  framework: {mpi: {binary: b, mpirunPath: m}}\n"  # 7
)


@pytest.mark.parametrize(
    ("tail", "line", "field", "message"),
    [
        (
            "  volumes:\n    - {name: a, emptyDir: {}}\n    - {name: mpi-ssh-auth, emptyDir: {}}\n",
            10,
            "spec.volumes[1].name",
            '"mpi-ssh-auth" is reserved on mpi',
        ),
        (
            "  volumeMounts:\n    - name: keys\n      mountPath: /root/.ssh/extra\n",
            10,
            "spec.volumeMounts[0].mountPath",
            "(/root/.ssh and below)",
        ),
        (
            "  initContainers:\n    - name: node\n      image: busybox\n",
            9,
            "spec.initContainers[0].name",
            "the workload container's name",
        ),
        (
            "  gangScheduler: {schedulerName: kai-scheduler, queue: q}\n"
            "  workloadMetadata:\n    labels:\n      kai.scheduler/queue: other\n",
            11,
            'spec.workloadMetadata.labels["kai.scheduler/queue"]',
            'conflicting label value "other", expected "q"',
        ),
        (
            "  overrides:\n    - when: {}\n      jobTemplatePatch:\n"
            "        - {op: add, path: /spec/a, value: 1}\n"
            "        - {op: remove, path: /spec/nope}\n",
            12,
            "spec.overrides[0].jobTemplatePatch[1].path",
            "no such location",
        ),
        (
            "  overrides:\n    - when: {}\n      jobTemplate: {}\n"
            "    - when: {expression: 'true'}\n      jobTemplate: {}\n",
            11,
            "spec.overrides[1].when.expression",
            "CEL is not supported",
        ),
    ],
)
def test_a_bad_workload_run_names_the_line_and_field_at_fault(
    tail: str,
    line: int,
    field: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "wlr.yaml"
    bad.write_text(_RUN + tail)
    code, out, err = _render(["-f", str(bad), "--gpu", "h100"], capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {bad}:{line}, document 1, WorkloadRun/w, field {field}: ")
    assert message in lines[0] and "Traceback" not in err


def test_a_flag_error_with_a_file_does_not_point_into_the_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _render(["-f", str(SAMPLES / "workloadrun-mpi.yaml"), "--gpu", "z900"], capsys)
    assert code == 2
    assert err.startswith("error: unknown GPU architecture 'z900'"), err


def test_an_entry_not_in_the_catalog_names_the_entry_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _render(["--entry", "nccl-allreduce"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error: field --entry: category 'nccl-allreduce' is not in the catalog")
    assert len(err.splitlines()) == 1
