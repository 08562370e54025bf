"""The Job controller's pure pieces: the TrainJob it builds, the MNNVL setting it reads, which
Node changes wake a Job, and the goodput parser's capture names."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from glimmer.certify.measure.goodput import EventPattern, TrainingProfile, parse_training
from glimmer.errors import InputError
from glimmer.operator.certify.health_watch import NodeChanges, health_fingerprint, jobs_on
from glimmer.operator.certify.job_workload import mnnvl_setting, train_job_manifest
from glimmer.operator.certify.measurement_goodput import parser_profile


def job(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns", "uid": "u-1"},
        "spec": {"workload": {"trainJob": {"trainer": {"numNodes": 2}}}, **spec},
    }


def test_the_job_label_patch_is_added_once() -> None:
    made = train_job_manifest(job())
    again = train_job_manifest({**job(), "spec": {"workload": {"trainJob": made["spec"]}}})
    assert len(made["spec"]["runtimePatches"]) == 1
    assert again["spec"]["runtimePatches"] == made["spec"]["runtimePatches"]
    assert made["metadata"]["name"] == "j-workload"
    assert made["metadata"]["namespace"] == "ns"


def test_a_job_without_a_trainjob_is_refused_naming_the_field() -> None:
    with pytest.raises(InputError, match=r"no TrainJob workload"):
        train_job_manifest({**job(), "spec": {"workload": {}}})


def test_mnnvl_is_read_from_the_trainer_env_or_args() -> None:
    env = job()
    env["spec"]["workload"]["trainJob"]["trainer"]["env"] = [
        {"name": "NCCL_MNNVL_ENABLE", "value": "0"}
    ]
    args = job()
    args["spec"]["workload"]["trainJob"]["trainer"]["args"] = ["mpirun -x NCCL_MNNVL_ENABLE=1 x"]
    assert (mnnvl_setting(env), mnnvl_setting(args), mnnvl_setting(job())) == (False, True, None)


NODE: dict[str, Any] = {
    "metadata": {"name": "gpu-01", "labels": {"a": "1"}, "resourceVersion": "1"},
    "spec": {},
    "status": {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "t1"}]},
}


def test_a_heartbeat_is_no_news_but_a_condition_taint_or_cordon_is() -> None:
    changes = NodeChanges()
    assert changes.changed("ADDED", NODE)
    beat = copy.deepcopy(NODE)
    beat["status"]["conditions"][0]["lastHeartbeatTime"] = "t2"
    beat["metadata"]["resourceVersion"] = "2"
    assert not changes.changed("MODIFIED", beat)
    for change in (
        lambda n: n["status"]["conditions"].append({"type": "GPUHealthy", "status": "False"}),
        lambda n: n["spec"].update(taints=[{"key": "k", "effect": "NoSchedule"}]),
        lambda n: n["spec"].update(unschedulable=True),
        lambda n: n["metadata"]["labels"].update(b="2"),
    ):
        moved = copy.deepcopy(NODE)
        change(moved)
        assert health_fingerprint(moved) != health_fingerprint(NODE)
    assert not changes.changed("DELETED", NODE)


def test_a_node_maps_to_the_jobs_whose_pods_run_on_it() -> None:
    def pod(job: str, node: str, ns: str = "default") -> dict[str, Any]:
        meta = {"namespace": ns, "labels": {"certify.glimmer.ai/job": job}}
        return {"metadata": meta, "spec": {"nodeName": node}}

    pods = [pod("b", "gpu-01"), pod("a", "gpu-01"), pod("a", "gpu-01"), pod("c", "gpu-02")]
    assert jobs_on("gpu-01", pods) == [("default", "a"), ("default", "b")]


def test_goodput_reads_a_profile_naming_steps_global_step_and_times_step_timing() -> None:
    ts = r"\[(?P<timestamp>[\d-]+ [\d:.]+)\]"
    profile = TrainingProfile(
        {
            "applicationStart": EventPattern(ts + r" training \.\.\."),
            "trainingStep": EventPattern(
                ts + r" iteration\s+(?P<globalStep>\d+) \| ms: (?P<stepTiming>[\d.]+)",
                units={"stepTiming": "ms"},
            ),
        }
    )
    log = (
        "[2026-12-02 03:00:00.000000] training ...\n"
        "[2026-12-02 03:00:05.000000] iteration 1 | ms: 500.0\n"
        "[2026-12-02 03:00:06.000000] iteration 2 | ms: 500.0\n"
    )
    got = parse_training(log, parser_profile(profile))
    assert got is not None
    assert (got.highest_step, got.avg_step_time) == (2, 0.5)
