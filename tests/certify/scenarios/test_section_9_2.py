"""The scenarios of specs/certify.md §9.2, each mapped to the tests that cover it.

Tests named ``test_sNN_…`` live in this module; the others are ``file::test`` under
``tests/certify/``. A scenario covered elsewhere and ported only in part here says which part.

==== =========================================================================================
 #   Covered by
==== =========================================================================================
 1   platform/test_platform_runtime_torch::test_runtime_without_gang_scheduler_has_no_scheduler_
     name_and_no_queue_label
 2   platform/test_platform_runtime_torch::test_runtime_with_gang_scheduler_and_no_queue_uses_
     default_queue_on_job_and_pod
 3   platform/test_platform_runtime_mpi::test_mpi_with_gang_scheduler_labels_worker_and_launcher;
     test_s03_mpi_gang_fields_sit_on_the_worker_at_index_0_and_the_launcher_at_index_1
 4   platform/test_platform_runtime_mpi::test_mpi_under_kai_waits_inside_the_launcher_instead_of_
     depends_on; platform/test_platform_gang::test_gang_kai_mpi_deletes_launcher_gate_and_
     startup_policy_and_appends_wait
 5   platform/test_platform_runtime_mpi::test_mpi_under_runai_keeps_depends_on_and_has_no_
     startup_policy; platform/test_platform_gang::test_gang_custom_queue_label_key_for_runai
 6   platform/test_platform_runtime_mpi::test_mpi_without_gang_scheduler_launcher_depends_on_
     ready_workers; test_s06_mpi_without_gang_scheduler_keeps_the_historical_shape_exactly
 7   platform/test_platform_runtime_mpi::test_mpi_worker_script_steps_are_chained_in_order_so_
     any_failure_aborts (+ …sshd_install_is_guarded…); catalog/test_catalog_build::test_worker_
     sshd_invariants_hold_for_catalog_and_override_outputs; test_s07_worker_sshd_invariants_
     hold_for_every_mpi_entry_and_workload_run_override (torch has no sshd to check)
 8   platform/test_platform_runtime_torch::test_user_resources_without_the_gpu_key_get_gpu_
     limits_and_requests_added, …naming_the_gpu_anywhere_even_zero_are_left_untouched
 9   platform/test_platform_gang::test_gang_scheduler_name_is_overwritten_unconditionally
     (the catalog shape with a hardcoded default-scheduler)
 10  platform/test_platform_gang::test_gang_is_a_no_op_when_the_scheduler_name_is_empty,
     …skips_malformed_shapes_silently, …leaves_non_training_runtime_dependencies_untouched
 11  platform/test_platform_image::test_image_replaces_the_primary_container_of_launcher_and_
     worker, …init_containers_sharing_the_primarys_old_image_follow_it, …init_containers_with_a_
     distinct_image_stay_pinned (tcpxo-daemon, same repo other tag); catalog/test_catalog_
     certification::test_image_override_reaches_trainer_primaries_and_following_inits_not_tcpxo
 12  platform/test_platform_transforms::test_catalog_labels_are_the_base_map…, …explicit_queue_
     label_matching_the_gang_is_idempotent, …conflicting_with_the_gang_fails, …reserved_
     workload_label_key_is_rejected; test_s12_a_conflicting_queue_label_fails_with_the_exact_
     message
 13  platform/test_platform_validate_gang (every case of the scenario, one test each)
 14  platform/test_platform_preserve::test_preserve_copies_the_queue_label_back…, …restores_a_
     scheduler_name…, …inserts_nothing…, …carries_an_overridden_value_through_unchanged
 15  platform/test_platform_workloadrun_overrides (mpi with MNNVL, torch without, exec single
     node, user env in trainer env / runtime env / -x pairs);
     test_s15_on_prem_gb200_requests_the_named_nic_resource_for_mpi_and_torch_only_when_named
 16  platform/test_platform_names::test_validate_flag_allows_empty_and_every_platform_name,
     …error_text_derives_the_valid_names_from_names
 17  catalog/test_catalog_build::test_every_entry_builds_with_default_options;
     catalog/test_catalog_renders_valid::test_every_category_renders_valid_trainer_objects…
 18  catalog/test_catalog_build::test_parallelism_errors_name_the_minimum_and_the_divisor,
     …max_valid_nodes_picks_the_largest_valid_count
 19  catalog/test_catalog_build::test_intra_node_forces_one_node_per_job, …diagnose_defaults_
     five_iterations_one_cycle_and_fifteen_minutes
 20  catalog/test_catalog_build::test_gpu_defaults_by_architecture_and_platform
 21  catalog/test_catalog_build::test_training_resources_default_and_override_per_field,
     …training_source_repo_has_a_default_and_an_override;
     test_s21_gcp_h100_pins_the_tcpxo_daemon_image_and_training_spreads_one_pod_per_host
 22  grouping/test_partition (simple exact fit, overflow borrowing, single-node jobs, topology
     exact fit / multi-domain / max domains / overflow, every error case)
 23  isolate/test_isolation::test_bisect_odd_split_and_by_domain; test_s23_bisect_* (no failed
     group, already at min, min exceeds the group, 4/8 splits, several failed, two racks)
 24  isolate/test_isolation::test_screen_groups_three_cliques_and_uneven, …without_topology_use_
     sqrt_chunks (12 nodes K=4, 1 node K=2); test_s24_three_equal_cliques_screen_one_per_clique
 25  isolate/test_isolation::test_cross_mixes_and_confirmation_rotation
 26  measure/test_nccl_parse (kubelet-stamped, raw, non-UTC offsets, header/INFO skipped,
     loopback zero busBW, multi-node busBW > 0, missing pattern, strip cases);
     test_s26_kubelet_stamped_and_raw_lines_mix_and_yield_four_rows. The original's two real
     logs (56 and 24 rows) are not ours to copy: our own real-format fixtures stand in.
 27  measure/test_goodput::test_goodput_formula (perfect, 0.928772, checkpoint overhead, all
     rescheduling, zero training time, negative numerator)
 28  measure/test_goodput (application start, save-and-done, NCCL noise, warmup steps and after
     restore, example mismatch, invalid regex, timestamp precision); test_s28_* (log interval
     10, warmup marker, unit normalisation); the N4/N5/N6 step formats, "only first restore",
     the in-memory step cap and multi-worker pending saves are test_goodput_log_formats,
     test_goodput_reader_rules, test_goodput_multi_worker and test_goodput_chunked_feed
 29  measure/test_thresholds (boundaries, range, ratio, syntax error, non-bool, unknown name,
     unknown keys sorted, violations sorted, missing skipped); test_s29_* (the §7.5 verdict of
     threshold_verdict: UnknownThresholdKey, MeasurementTimeout, ThresholdViolated,
     InvalidThresholdExpression, ThresholdsMet, when values count as measured)
 30  test_s30_* (health: taints, labels incl. nil, conditions, annotations, unschedulable,
     OR, invalid syntax / non-bool / undeclared variable, error absorption, the failedNodes merge)
 31  catalog/test_catalog_build::test_gpu_product_parsing; isolate/test_sim_certify::test_
     majority_architecture_tie_keeps_the_earliest_node; test_s31_majority_vote_*
     ("" is our spelling of unknown; a render writes it as "unknown")
 32  operator/certify/test_certification_sequence (on the API stand-in, through the controllers)
 33  operator/certify/test_certification_events
 34  catalog/test_catalog_renders_valid and catalog/golden (the renders themselves)
 35  operator/certify/test_certification_overrides
 36  operator/certify/test_measurement_bandwidth
 37  operator/certify/test_measurement_goodput
 38  operator/certify/test_measurement_goodput, test_job_controller_lifecycle
 39  operator/certify/test_workflow_replay, test_workflow_dependencies; the pure §7.2 rules
     beneath 38–39 (who a failed group blames, the node-result ConfigMaps) are test_7_2_* here
 40  operator/certify/test_job_pure_rules, test_job_on_trainer; certify/test_job_rules_*,
     test_discovery_rules, test_detect_platform
==== =========================================================================================
"""

from __future__ import annotations

import contextlib
import gzip
import json
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.workloadrun import WorkloadRun
from glimmer.api.load import load_text
from glimmer.certify.attribution import (
    failed_nodes_payload,
    group_failures,
    read_failed_nodes,
    read_succeeded_nodes,
    result_configmap_names,
    succeeded_nodes_payload,
    union_failed_nodes,
)
from glimmer.certify.catalog.entries import list_entries
from glimmer.certify.catalog.gpu import PRODUCT_LABEL, architectures
from glimmer.certify.catalog.render import render_entry
from glimmer.certify.catalog.workloadrun import render_workload_run
from glimmer.certify.grouping import NodeInfo
from glimmer.certify.health import (
    CORDON_EXPRESSION,
    HARDWARE_MESSAGE,
    HealthEvalError,
    HealthExpressionError,
    check_nodes,
    detector,
    effective_expression,
    hardware_failed_message,
    merge_failed_nodes,
    node_view,
)
from glimmer.certify.isolate import isolate
from glimmer.certify.isolate_split import Cell, screen_groups, split
from glimmer.certify.isolate_types import Outcome, Probe, Stage
from glimmer.certify.measure.bandwidth import NCCL_BANDWIDTH
from glimmer.certify.measure.goodput import MEGATRON, EventPattern, TrainingProfile, parse_training
from glimmer.certify.platform import (
    PlatformError,
    ResolvedWorkflowTransforms,
    RuntimeConfig,
    apply_resolved_workflow_transforms,
    build_mpi_runtime,
    build_torch_runtime,
    names,
)
from glimmer.certify.platform.scripts import FIX_SSH_SCRIPT, WORKER_SSHD_SCRIPT
from glimmer.certify.platform.when import MatchContext, matches_when
from glimmer.certify.platform.workloadrun_overrides import OverrideConfig, build_overrides
from glimmer.certify.result import FailedNode
from glimmer.certify.target import majority_arch
from glimmer.certify.threshold_verdict import available, go_duration, judge

Obj = dict[str, Any]


def _jobs(runtime: Obj) -> list[Obj]:
    found: list[Obj] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    return found


def _pod(job: Obj) -> Obj:
    found: Obj = job["template"]["spec"]["template"]["spec"]
    return found


# ---- platform (1–16) ---------------------------------------------------------------------------


def test_s03_mpi_gang_fields_sit_on_the_worker_at_index_0_and_the_launcher_at_index_1() -> None:
    cfg = RuntimeConfig(entry_name="n", image="i", gang_scheduler_name="kai-scheduler")
    jobs = _jobs(build_mpi_runtime(cfg))
    assert [j["name"] for j in jobs] == ["node", "launcher"]
    for job in jobs:
        assert _pod(job)["schedulerName"] == "kai-scheduler"
        assert job["template"]["metadata"]["labels"]["kai.scheduler/queue"] == "default-queue"


_HISTORICAL_WORKER: Obj = {
    "name": "node",
    "template": {
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "OnFailure",
                    "containers": [
                        {
                            "name": "node",
                            "image": "img:1",
                            "command": ["sh", "-c"],
                            "args": [WORKER_SSHD_SCRIPT],
                            "readinessProbe": {"tcpSocket": {"port": 22}, "initialDelaySeconds": 5},
                            "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                            "resources": {
                                "limits": {"nvidia.com/gpu": "8"},
                                "requests": {"nvidia.com/gpu": "8"},
                            },
                            "volumeMounts": [
                                {
                                    "name": "mpi-ssh-auth",
                                    "mountPath": "/tmp/mpi-ssh-raw",
                                    "readOnly": True,
                                },
                                {"name": "dshm", "mountPath": "/dev/shm"},
                            ],
                        }
                    ],
                    "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
                }
            }
        }
    },
}

_SSH_MOUNTS = [
    {"name": "mpi-ssh-auth", "mountPath": "/tmp/mpi-ssh-raw", "readOnly": True},
    {"name": "ssh-keys", "mountPath": "/root/.ssh"},
]

_HISTORICAL_LAUNCHER: Obj = {
    "name": "launcher",
    "dependsOn": [{"name": "node", "status": "Ready"}],
    "template": {
        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "OnFailure",
                    "initContainers": [
                        {
                            "name": "fix-ssh-permissions",
                            "image": "img:1",
                            "command": ["sh", "-c"],
                            "args": [FIX_SSH_SCRIPT],
                            "volumeMounts": _SSH_MOUNTS,
                        }
                    ],
                    "containers": [
                        {
                            "name": "node",
                            "image": "img:1",
                            "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
                            "volumeMounts": _SSH_MOUNTS,
                        }
                    ],
                    "volumes": [{"name": "ssh-keys", "emptyDir": {}}],
                }
            }
        },
    },
}


def test_s06_mpi_without_gang_scheduler_keeps_the_historical_shape_exactly() -> None:
    plain = RuntimeConfig(entry_name="nccl", image="img:1", gpus_per_node=8)
    rt = build_mpi_runtime(plain)
    assert _jobs(rt) == [_HISTORICAL_WORKER, _HISTORICAL_LAUNCHER]
    assert "startupPolicy" not in rt["spec"]["template"]["spec"]
    # A queue without a scheduler name asks for no gang scheduling: not one byte changes.
    queue_only = RuntimeConfig(
        entry_name="nccl",
        image="img:1",
        gpus_per_node=8,
        gang_scheduler_queue="team-a",
        gang_scheduler_queue_label_key="runai/queue",
    )
    assert json.dumps(build_mpi_runtime(queue_only)) == json.dumps(rt)


def _assert_sshd_worker(runtime: Obj) -> None:
    worker = next(j for j in _jobs(runtime) if j["name"] == "node")
    container = _pod(worker)["containers"][0]
    assert container["command"] == ["sh", "-c"] and container["args"] == [WORKER_SSHD_SCRIPT]
    assert {"name": "mpi-ssh-auth", "mountPath": "/tmp/mpi-ssh-raw", "readOnly": True} in (
        container["volumeMounts"]
    )


def _workload_run(framework: str) -> WorkloadRun:
    text = (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: WorkloadRun\n"
        "metadata: {name: probe, namespace: ns}\n"
        f"spec:\n  image: img:1\n  numNodes: 2\n  framework: {framework}\n"
        "  nicResourceName: rdma/ib\n"
    )
    (item,) = load_text(text)
    assert isinstance(item.obj, WorkloadRun)
    return item.obj


def test_s07_worker_sshd_invariants_hold_for_every_mpi_entry_and_workload_run_override() -> None:
    mpi_entries = [e for e in list_entries() if e.framework == "mpi"]
    assert mpi_entries
    run = _workload_run(
        "{mpi: {binary: /usr/local/bin/all_reduce_perf_mpi, mpirunPath: /usr/bin/mpirun}}"
    )
    for platform in names():
        for arch in architectures():
            for entry in mpi_entries:
                for obj in render_entry(entry.domain, entry.variant, platform, arch):
                    if obj["kind"] == "TrainingRuntime":
                        _assert_sshd_worker(obj)
            for obj in render_workload_run(run, platform, arch):
                if obj["kind"] == "TrainingRuntime":
                    _assert_sshd_worker(obj)


def test_s12_a_conflicting_queue_label_fails_with_the_exact_message() -> None:
    rt = build_torch_runtime(RuntimeConfig(entry_name="t", image="i"))
    spec: Obj = {
        "dependencies": [rt],
        "jobTemplate": {
            "spec": {
                "workload": {
                    "trainJob": {"runtimeRef": {"name": "t-runtime", "kind": "TrainingRuntime"}}
                }
            }
        },
    }
    t = ResolvedWorkflowTransforms(
        gang_scheduler={"schedulerName": "kai-scheduler", "queue": "team-a"},
        workload_labels={"kai.scheduler/queue": "team-b"},
    )
    with pytest.raises(PlatformError) as e:
        apply_resolved_workflow_transforms(spec, t)
    assert str(e.value) == (
        'spec.jobTemplate.spec.workloadMetadata.labels["kai.scheduler/queue"]: '
        'conflicting label value "team-b", expected "team-a"'
    )


def _on_prem_gb200(framework: str, nic: str, mlnx: int = 8) -> list[Obj]:
    """The dependency patches of the WorkloadRun overrides matching on-prem GB200."""
    cfg = OverrideConfig(
        "run",
        gpus_per_node=4,
        mlnx_per_node=mlnx,
        nic_resource_name=nic,
        enable_mnnvl=True,
        framework_type=framework,
    )
    ctx = MatchContext("onprem", "gb200")
    return [
        dep
        for o in build_overrides(cfg)
        if matches_when(o.spec.get("when"), ctx)
        for dep in o.spec.get("dependencies") or []
    ]


def _limits(deps: list[Obj]) -> list[Obj]:
    return [
        container["resources"]["limits"]
        for dep in deps
        if dep["kind"] == "TrainingRuntime"
        for job in _jobs(dep)
        for container in _pod(job).get("containers") or []
        if "limits" in container.get("resources", {})
    ]


@pytest.mark.parametrize("framework", ["mpi", "torch"])
def test_s15_on_prem_gb200_requests_the_named_nic_resource_for_mpi_and_torch_only_when_named(
    framework: str,
) -> None:
    assert _limits(_on_prem_gb200(framework, "rdma/ib")) == [{"rdma/ib": "8"}]
    assert _limits(_on_prem_gb200(framework, "")) == []  # no name: nothing is guessed
    assert _limits(_on_prem_gb200(framework, "rdma/ib", mlnx=0)) == []  # no NICs: opted out
    # The GB200 ComputeDomain is there either way; only the NIC request depends on the name.
    for nic in ("rdma/ib", ""):
        assert "ComputeDomain" in {d["kind"] for d in _on_prem_gb200(framework, nic)}


# ---- catalog (17–21) ---------------------------------------------------------------------------


def test_s21_gcp_h100_pins_the_tcpxo_daemon_image_and_training_spreads_one_pod_per_host() -> None:
    for obj in render_entry("communication", "nccl-all-reduce", "gcp", "h100"):
        if obj["kind"] == "TrainingRuntime":
            worker = next(j for j in _jobs(obj) if j["name"] == "node")
            (daemon,) = [c for c in _pod(worker)["initContainers"] if c["name"] == "tcpxo-daemon"]
            assert daemon["image"] == (
                "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.14"
            )
    (runtime,) = [
        o
        for o in render_entry("training", "nemotron5-8b", "onprem", "h100")
        if o["kind"] == "TrainingRuntime"
    ]
    spread = _pod(_jobs(runtime)[0])["topologySpreadConstraints"]
    assert spread[0]["topologyKey"] == "kubernetes.io/hostname"
    assert (spread[0]["maxSkew"], spread[0]["whenUnsatisfiable"]) == (1, "DoNotSchedule")


# ---- orchestration (22–25) ---------------------------------------------------------------------


def _nodes(n: int) -> list[NodeInfo]:
    return [NodeInfo(f"n{i:02d}") for i in range(n)]


def _oracle(bad: set[str]) -> Any:
    def run(p: Probe) -> Outcome:
        hit = sorted(bad.intersection(p.nodes))
        return Outcome(False, 1.0, f"slow with {hit}") if hit else Outcome(True, 100.0)

    return run


def _bisections(nodes: list[NodeInfo], bad: set[str], min_size: int = 2) -> list[Probe]:
    d = isolate(nodes, _oracle(bad), min_group_size=min_size, nvlink=False)
    assert d.faulty_nodes == sorted(bad)  # whatever the cut, the culprits are found
    return [t.probe for t in d.history if t.probe.stage is Stage.BISECT]


def test_s23_bisect_with_no_failed_group_has_converged_at_once() -> None:
    assert _bisections(_nodes(16), set()) == []


def test_s23_bisect_leaves_a_group_already_at_min_size_to_confirmation() -> None:
    assert _bisections(_nodes(4), {"n00"}) == []  # screening groups of K=2 = minGroupSize


def test_s23_bisect_leaves_a_group_smaller_than_min_size_whole() -> None:
    assert _bisections(_nodes(9), {"n04"}, min_size=5) == []


def test_s23_bisect_splits_4_into_2_2_and_8_into_4_4() -> None:
    a, b = split(Cell("g", tuple(f"n{i}" for i in range(4))), {}, 1, 0)
    assert (len(a.nodes), len(b.nodes)) == (2, 2)
    a, b = split(Cell("g", tuple(f"n{i}" for i in range(8))), {}, 1, 0)
    assert (a.nodes, b.nodes) == (("n0", "n1", "n2", "n3"), ("n4", "n5", "n6", "n7"))


def test_s23_bisect_splits_every_failed_group_in_the_same_round() -> None:
    probes = _bisections(_nodes(16), {"n00", "n05"})  # screen-0 and screen-1 fail
    first = [p.name for p in probes if p.name.startswith("bisect-1-")]
    assert first == ["bisect-1-0a", "bisect-1-0b", "bisect-1-1a", "bisect-1-1b"]


def test_s23_bisect_over_two_racks_puts_one_rack_in_each_half() -> None:
    dom = {f"n{i}": f"r{i // 3}" for i in range(6)}
    a, b = split(Cell("g", tuple(sorted(dom))), dom, 1, 0)
    assert (a.domains, b.domains) == (("r0",), ("r1",))
    assert (a.nodes, b.nodes) == (("n0", "n1", "n2"), ("n3", "n4", "n5"))


def test_s24_three_equal_cliques_screen_one_per_clique() -> None:
    key = "nvidia.com/gpu.clique"
    nodes = [NodeInfo(f"n{i}", {key: f"c{i % 3}"}) for i in range(9)]
    cells = screen_groups(nodes, key)
    assert [(c.name, c.domains, c.nodes) for c in cells] == [
        ("screen-0", ("c0",), ("n0", "n3", "n6")),
        ("screen-1", ("c1",), ("n1", "n4", "n7")),
        ("screen-2", ("c2",), ("n2", "n5", "n8")),
    ]


# ---- measurement (26–28) -----------------------------------------------------------------------

_ROW = "{size:>12} {count:>12}     float     sum      -1    10.00   {a:.2f}   {b:.2f}      0"
_MIXED = "\n".join(
    [
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor)",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "2026-03-14T09:26:53.123456789Z " + _ROW.format(size=8, count=2, a=0.1, b=0.2),
        "node-0:4211:4211 [0] NCCL INFO Channel 00/32 :    0   1",
        "2026-03-14T09:26:53Z " + _ROW.format(size=16, count=4, a=0.3, b=0.4),
        _ROW.format(size=32, count=8, a=0.5, b=0.6),
        _ROW.format(size=64, count=16, a=0.7, b=0.8),
        "# Avg bus bandwidth    : 0.5",
    ]
)


def test_s26_kubelet_stamped_and_raw_lines_mix_and_yield_four_rows() -> None:
    rows = NCCL_BANDWIDTH.parse(_MIXED)
    assert [(r.size, r.alg_bw, r.bus_bw) for r in rows] == [
        (8, 0.1, 0.2),
        (16, 0.3, 0.4),
        (32, 0.5, 0.6),
        (64, 0.7, 0.8),
    ]


def _steps_profile(unit: str = "ms", **kw: Any) -> TrainingProfile:
    return TrainingProfile(
        {
            "applicationStart": EventPattern("START"),
            "trainingStep": EventPattern(
                r"step (?P<iteration>\d+) took (?P<elapsedTime>[\d.]+)",
                # A unit for a field the regex never captures is ignored (the "unknown field").
                units={"elapsedTime": unit, "notCaptured": "ms"},
            ),
            "warmupStep": EventPattern("is warmup iteration"),
        },
        **kw,
    )


def _steps_log(*steps: tuple[int, float, str]) -> str:
    lines = ["2026-03-14T10:00:00Z START"]
    for i, (step, took, tail) in enumerate(steps, start=1):
        lines.append(f"2026-03-14T10:00:{i:02d}Z step {step} took {took}{tail}")
    return "\n".join(lines)


def test_s28_log_interval_10_keeps_only_steps_on_the_interval() -> None:
    log = _steps_log(*[(s, 100.0 if s % 10 else 2000.0, "") for s in range(1, 31)])
    g = parse_training(log, _steps_profile(log_interval=10))
    assert g is not None and g.highest_step == 30
    assert g.avg_step_time == pytest.approx(2.0)  # only steps 10, 20 and 30 were kept


def test_s28_a_step_carrying_the_warmup_marker_is_warmup_whatever_its_position() -> None:
    log = _steps_log((1, 500.0, ""), (2, 9000.0, " is warmup iteration"), (3, 700.0, ""))
    g = parse_training(log, _steps_profile())
    assert g is not None and g.avg_step_time == pytest.approx(0.6)
    assert "warmupStep" in MEGATRON.patterns  # the built-in profile knows the NeMo marker


@pytest.mark.parametrize(
    ("unit", "took", "seconds"),
    [("ms", 1500.0, 1.5), ("us", 2_000_000.0, 2.0), ("s", 3.0, 3.0), ("ms", 0.0, 0.0)],
)
def test_s28_durations_are_normalised_to_seconds(unit: str, took: float, seconds: float) -> None:
    g = parse_training(_steps_log((1, took, "")), _steps_profile(unit))
    assert g is not None and g.avg_step_time == pytest.approx(seconds)


def test_s28_an_unknown_unit_leaves_the_value_unchanged() -> None:
    g = parse_training(_steps_log((1, 42.0, "")), _steps_profile("fortnights"))
    assert g is not None and g.avg_step_time == pytest.approx(42.0)


# ---- thresholds (29) ---------------------------------------------------------------------------

ZERO = timedelta(0)


def test_s29_unknown_keys_fail_at_once_naming_them_sorted() -> None:
    v = judge({"zeta": "value > 1", "busBandwidthGBps": "value > 1", "alpha": "true"}, {}, ZERO)
    assert (v.failed, v.reason) == (True, "UnknownThresholdKey")
    assert v.message == "unknown threshold keys: [alpha zeta]"


def test_s29_a_missing_value_waits_then_times_out_naming_the_keys() -> None:
    gates = {"goodputRatio": "value >= 0.9", "busBandwidthGBps": "value >= 400"}
    assert judge(gates, {}, timedelta(minutes=4, seconds=59)).failed is None
    v = judge(gates, {"goodputRatio": 0.95}, timedelta(minutes=5))
    assert (v.failed, v.reason) == (True, "MeasurementTimeout")
    assert v.message == "Measurement data not available within 5m0s for keys: [busBandwidthGBps]"


def test_s29_the_first_violation_in_key_order_fails_with_the_pinned_message() -> None:
    gates = {"goodputRatio": "value >= 0.9", "busBandwidthGBps": "value >= 400"}
    v = judge(gates, {"goodputRatio": 0.5, "busBandwidthGBps": 399.5}, ZERO)
    assert (v.failed, v.reason) == (True, "ThresholdViolated")
    assert v.message == (
        'Threshold "busBandwidthGBps" violated: measured 399.5000, expression: value >= 400'
    )


def test_s29_every_threshold_met_clears_validation_failed() -> None:
    v = judge({"goodputRatio": "value >= 0.9"}, {"goodputRatio": 0.9}, ZERO)
    assert (v.failed, v.reason, v.message) == (
        False,
        "ThresholdsMet",
        "All performance thresholds satisfied",
    )


@pytest.mark.parametrize("expr", ["value +", "value * 2", "size > 1"])
def test_s29_an_invalid_expression_fails_as_invalid_not_as_violated(expr: str) -> None:
    v = judge({"avgStepTimeSec": expr}, {"avgStepTimeSec": 1.0}, ZERO)
    assert (v.failed, v.reason) == (True, "InvalidThresholdExpression")


def test_s29_values_count_only_from_complete_measurements_and_goodput_above_zero() -> None:
    bw = {"busBandwidthGBps": 410.0, "algBandwidthGBps": 220.0}
    gp = {"goodputRatio": 0.0, "avgStepTimeSec": 1.2}
    assert available(bandwidth_complete=False, bandwidth=bw) == {}
    assert available(bandwidth_complete=True, bandwidth=bw) == bw
    assert available(goodput_complete=False, goodput=gp) == {}
    assert available(goodput_complete=True, goodput=gp) == {"avgStepTimeSec": 1.2}


@pytest.mark.parametrize(
    ("d", "text"),
    [
        (timedelta(minutes=5), "5m0s"),
        (timedelta(hours=1), "1h0m0s"),
        (timedelta(seconds=30), "30s"),
    ],
)
def test_s29_timeouts_print_as_go_durations(d: timedelta, text: str) -> None:
    assert go_duration(d) == text


# ---- node health (30) --------------------------------------------------------------------------

TAINT = "node.spec.taints.exists(t, t.key == 'nvidia.com/gpu-unhealthy')"
LABEL = "'gpud.nvidia.com/unhealthy' in node.metadata.labels"
READY = "node.status.conditions.exists(c, c.type == 'Ready' && c.status != 'True')"
ANNOTATION = (
    "'health.example.com/state' in node.metadata.annotations && "
    "node.metadata.annotations['health.example.com/state'] == 'unhealthy'"
)
COMPLEX = (
    f"{CORDON_EXPRESSION} || {TAINT} || {LABEL} || "
    "node.status.conditions.exists(c, c.type == 'GPUHealthy' && c.status == 'False')"
)


def _node(
    name: str = "n1",
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    conditions: list[Obj] | None = None,
    unschedulable: bool | None = None,
) -> Obj:
    metadata: Obj = {"name": name, "labels": labels}
    if annotations is not None:
        metadata["annotations"] = annotations
    spec: Obj = {}
    if taints is not None:
        spec["taints"] = taints
    if unschedulable is not None:
        spec["unschedulable"] = unschedulable
    status: Obj = {} if conditions is None else {"conditions": conditions}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }


def _cond(kind: str, status: str) -> Obj:
    return {"type": kind, "status": status}


@pytest.mark.parametrize(
    ("expr", "node", "unhealthy"),
    [
        (TAINT, _node(taints=[{"key": "nvidia.com/gpu-unhealthy", "effect": "NoSchedule"}]), True),
        (TAINT, _node(taints=[{"key": "other", "effect": "NoSchedule"}]), False),
        (TAINT, _node(), False),  # no taints at all: the default []
        (LABEL, _node(labels={"gpud.nvidia.com/unhealthy": "true"}), True),
        (LABEL, _node(labels={"team": "a"}), False),
        (LABEL, _node(labels=None), False),  # nil labels: the default {}
        (READY, _node(conditions=[_cond("Ready", "True")]), False),
        (READY, _node(conditions=[_cond("Ready", "False")]), True),
        (READY, _node(), False),  # no conditions
        (ANNOTATION, _node(annotations={"health.example.com/state": "healthy"}), False),
        (ANNOTATION, _node(annotations={"health.example.com/state": "unhealthy"}), True),
        (ANNOTATION, _node(), False),
        (CORDON_EXPRESSION, _node(unschedulable=True), True),
        (CORDON_EXPRESSION, _node(unschedulable=False), False),
        (CORDON_EXPRESSION, _node(), False),  # unset: the default false
        (COMPLEX, _node(conditions=[_cond("GPUHealthy", "False")]), True),
        (COMPLEX, _node(labels={"gpud.nvidia.com/unhealthy": ""}), True),
        (COMPLEX, _node(conditions=[_cond("GPUHealthy", "True")]), False),
    ],
)
def test_s30_detector_judges_taints_labels_conditions_annotations_and_cordons(
    expr: str, node: Obj, unhealthy: bool
) -> None:
    assert detector(expr).unhealthy(node) is unhealthy


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        ("node.spec.taints.exists(t, t.key == ", "syntax error"),
        ("node.spec.unschedulable = true", "syntax error"),
        ("node.metadata.name", "must return bool, it returns dyn"),
        ("node.spec.unschedulable", "must return bool"),
        ("'x'", "must return bool, it returns string"),
        ("nodes.spec.unschedulable == true", "undeclared reference to 'nodes'"),
        ("node.spec.taints.exists(t, u.key == 'x')", "undeclared reference to 'u'"),
        ("'a' < 1", "no overload"),
        ("!'a'", "type error"),
        ("node.spec.taints.map(t, t.key) == []", "unsupported function 'map'"),
        ("node.spec.unschedulable ? true : false", "conditional operator"),
        ("size(node.spec.taints) + 1 > 2", "arithmetic"),
        ("{'a': 1} == {}", "map literals"),
        ("node.metadata.?labels.orValue({}) == {}", "optional selection"),
        ("node.metadata.labels[?'a'].hasValue()", "optional selection"),
        ("", "empty"),
        ("true && " * 300 + "true", "limit is 2048"),
    ],
)
def test_s30_invalid_expressions_are_refused_before_any_node_is_seen(expr: str, why: str) -> None:
    with pytest.raises(HealthExpressionError, match=why) as e:
        detector(expr)
    assert e.value.location.field == "spec.nodeHealthMonitor.cel.expression"


@pytest.mark.parametrize(
    ("expr", "unhealthy"),
    [
        ("has(node.metadata.labels.zone)", True),
        ("size(node.spec.taints) > 0", True),
        ("node.spec.taints.size() == 1", True),
        ("node.metadata.name.startsWith('gpu-')", True),
        ("node.metadata.name.endsWith('-7') && node.metadata.name.contains('pu')", True),
        ("node.spec.taints.all(t, t.effect in ['NoSchedule', 'NoExecute'])", True),
        ("node.status.capacity['nvidia.com/gpu'] != '8'", False),
        ("!(node.spec.unschedulable == true)", True),
        ("node.spec.taints[0].key == 'k'", True),
        ('node.metadata.labels["zone"] == "a"', True),
    ],
)
def test_s30_the_supported_forms_beyond_the_spec_examples(expr: str, unhealthy: bool) -> None:
    node = _node("gpu-7", labels={"zone": "a"}, taints=[{"key": "k", "effect": "NoSchedule"}])
    node["status"]["capacity"] = {"nvidia.com/gpu": "8"}
    assert detector(expr).unhealthy(node) is unhealthy


def test_s30_a_missing_key_is_an_error_unless_or_and_exists_already_decide() -> None:
    odd = "node.metadata.labels['rack'] == 'r1'"
    with pytest.raises(Exception, match="no such key"):
        detector(odd).unhealthy(_node())
    assert detector(f"{odd} || {CORDON_EXPRESSION}").unhealthy(_node(unschedulable=True))
    assert not detector(f"{odd} && false").unhealthy(_node())
    assert detector(f"false || {odd}").unhealthy(_node(labels={"rack": "r1"}))


def test_s30_equality_across_types_is_false_and_bools_are_not_numbers() -> None:
    node = _node(unschedulable=True)
    assert not detector("node.spec.unschedulable == 1").unhealthy(node)
    assert not detector("node.spec.unschedulable == 'true'").unhealthy(node)
    assert detector("1 == 1.0").unhealthy(node)


def test_s30_an_evaluation_error_on_one_node_is_recorded_and_the_others_still_judged() -> None:
    expr = "node.metadata.labels['state'] == 'bad'"
    got = check_nodes(expr, [_node("b", labels={"state": "bad"}), _node("a"), _node("c")])
    assert got.unhealthy == ("b",)
    assert [name for name, _ in got.errors] == ["a", "c"]
    assert all("no such key: 'state'" in why for _, why in got.errors)


def test_s30_the_view_fills_every_default_and_never_changes_the_node() -> None:
    node: Obj = {"metadata": {"name": "n", "labels": None}}
    view = node_view(node)
    assert view["metadata"] == {"name": "n", "labels": {}, "annotations": {}}
    assert view["spec"] == {"taints": [], "unschedulable": False}
    assert view["status"] == {"conditions": [], "addresses": [], "capacity": {}, "allocatable": {}}
    assert node == {"metadata": {"name": "n", "labels": None}}


@pytest.mark.parametrize(
    "expr", ["(" * 400 + "true" + ")" * 400, "node" + ".a" * 900 + " == 1", "!" * 500 + "true"]
)
def test_s30_hostile_nesting_is_refused_not_a_recursion_error(expr: str) -> None:
    with pytest.raises(HealthExpressionError, match="nests deeper than 100 levels"):
        detector(expr)


def test_s30_a_long_chain_of_alternatives_is_one_level_not_hundreds() -> None:
    expr = " || ".join(["1 == 2"] * 150 + [CORDON_EXPRESSION])  # 151 terms, 1.5k chars
    assert detector(expr).unhealthy(_node(unschedulable=True))


_SAMPLE = _node(
    "gpu-1", labels={"a": "b"}, taints=[{"key": "k"}], conditions=[_cond("Ready", "True")]
)
_PIECES = st.sampled_from(
    [
        "node",
        ".",
        "metadata",
        "spec",
        "labels",
        "taints",
        "exists",
        "(",
        ")",
        "t",
        ",",
        "t.key",
        "==",
        "!=",
        "<",
        "in",
        "&&",
        "||",
        "!",
        "'a'",
        "1",
        "true",
        "[",
        "]",
        "has",
        "size",
        " ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.lists(_PIECES, max_size=14).map("".join)))
def test_s30_any_text_compiles_or_is_refused_and_never_crashes_on_a_node(text: str) -> None:
    try:
        found = detector(text)
    except HealthExpressionError:
        return
    with contextlib.suppress(HealthEvalError):  # a node-side error is allowed, nothing else
        assert isinstance(found.unhealthy(_SAMPLE), bool)


def test_s30_detectors_are_compiled_once_per_expression() -> None:
    assert detector(TAINT) is detector(TAINT)


def test_s30_failures_merge_additively_sorted_and_recovered_nodes_stay() -> None:
    earlier = [
        FailedNode("n3", "WorkloadFailed", "exit 1"),
        FailedNode("n2", "HardwareFailureDetected", HARDWARE_MESSAGE),
    ]
    merged, added = merge_failed_nodes(earlier, ["n1", "n3"])  # n2 recovered: it stays
    assert [(f.name, f.reason) for f in merged] == [
        ("n1", "HardwareFailureDetected"),
        ("n2", "HardwareFailureDetected"),
        ("n3", "HardwareFailureDetected"),
        ("n3", "WorkloadFailed"),
    ]
    assert [f.name for f in added] == ["n1", "n3"]
    again, none = merge_failed_nodes(merged, ["n1"])
    assert again == merged and none == []  # no new (name, reason): no new HardwareFailed
    assert hardware_failed_message(merged) == ("Hardware failure detected on node(s): [n1 n2 n3]")


def test_s30_the_cordon_check_is_the_default_and_dropped_only_when_cordons_are_targeted() -> None:
    assert effective_expression(None, False) == CORDON_EXPRESSION
    assert effective_expression(None, True) is None
    assert effective_expression(f"  {CORDON_EXPRESSION}\n", True) is None
    assert effective_expression(TAINT, True) == TAINT


# ---- GPU architecture (31) ---------------------------------------------------------------------


def _gpu(name: str, product: str | None) -> NodeInfo:
    return NodeInfo(name, {PRODUCT_LABEL: product} if product else {})


def test_s31_majority_vote_beats_the_first_node() -> None:
    nodes = [
        _gpu("a", "NVIDIA-H100-80GB-HBM3"),
        _gpu("b", "NVIDIA-GB200"),
        _gpu("c", "NVIDIA-GB200"),
    ]
    assert majority_arch(nodes) == "gb200"


def test_s31_majority_vote_tie_keeps_the_earliest_nodes_architecture() -> None:
    assert majority_arch([_gpu("a", "NVIDIA-GB200"), _gpu("b", "NVIDIA-H100-NVL")]) == "gb200"


def test_s31_unlabelled_nodes_neither_vote_nor_outvote() -> None:
    nodes = [_gpu("a", None), _gpu("b", None), _gpu("c", None), _gpu("d", "NVIDIA-L40S")]
    assert majority_arch(nodes) == "l40s"


def test_s31_all_unlabelled_is_unknown() -> None:
    assert majority_arch([_gpu("a", None), _gpu("b", None)]) == ""


# ---- §7.2 attribution: the pure rules beneath the controller scenarios 38–39 --------------------


def test_7_2_a_group_blames_its_named_nodes_before_the_whole_group() -> None:
    named = [FailedNode("n2", "HardwareFailureDetected", HARDWARE_MESSAGE)]
    assert group_failures(named, ["n1", "n2"], workload_failed=True) == named
    blamed = group_failures([], ["n2", "n1"], threshold_violation=True, message="too slow")
    assert blamed == [
        FailedNode("n1", "ThresholdViolation", "too slow"),
        FailedNode("n2", "ThresholdViolation", "too slow"),
    ]
    assert [f.reason for f in group_failures([], ["n1"], workload_failed=True)] == [
        "WorkloadFailed"
    ]
    assert group_failures([], ["n1"]) == []  # a group that did not fail blames nobody


def test_7_2_failed_nodes_union_dedupes_by_name_and_reason_and_sorts() -> None:
    a = [FailedNode("n2", "WorkloadFailed", "first"), FailedNode("n1", "WorkloadFailed", "x")]
    b = [FailedNode("n2", "WorkloadFailed", "second"), FailedNode("n2", "ThresholdViolation", "")]
    assert [(f.name, f.reason, f.message) for f in union_failed_nodes(a, b)] == [
        ("n1", "WorkloadFailed", "x"),
        ("n2", "ThresholdViolation", ""),
        ("n2", "WorkloadFailed", "first"),
    ]


def test_7_2_result_config_maps_are_named_by_uid8_and_written_byte_stable() -> None:
    assert result_configmap_names("0123456789abcdef") == (
        "failed-nodes-01234567",
        "succeeded-nodes-01234567",
    )
    failed = [FailedNode("n2", "WorkloadFailed", "m"), FailedNode("n1", "WorkloadFailed", "m")]
    payload = failed_nodes_payload(failed)
    assert payload == failed_nodes_payload(list(reversed(failed)))  # no timestamp, sorted
    assert json.loads(gzip.decompress(payload)) == [
        {"name": "n1", "reason": "WorkloadFailed", "message": "m"},
        {"name": "n2", "reason": "WorkloadFailed", "message": "m"},
    ]
    assert read_failed_nodes(payload) == sorted(failed, key=lambda f: f.name)
    ok = succeeded_nodes_payload(["n3", "n1", "n3"])
    assert gzip.decompress(ok) == b"n1,n3" and read_succeeded_nodes(ok) == ["n1", "n3"]
    assert read_succeeded_nodes(succeeded_nodes_payload([])) == []
