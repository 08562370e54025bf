"""Scenario 28's training-step formats (specs/certify.md §9.2, §2.8, §6.2): N4 (NeMo 1.x, the
Lightning progress bar of the Nemotron-4 recipes), N5 (Megatron-LM, the catalog's built-in
``megatron-training`` of the Nemotron-5 entries) and N6 (the ``nemotron-6-megatron`` profile of
§6.2, with the NeMo-6 warmup marker). Each profile is a LogProfile loaded the way a cluster's
is, so every pattern's example is checked against its regex; each log has one interruption."""

from __future__ import annotations

import json
import re

import pytest

import glimmer.api.certify.kinds  # noqa: F401  (registers LogProfile with the loader)
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.load import load_text
from glimmer.certify.catalog.entries import log_profiles
from glimmer.certify.measure.goodput import goodput, parse_training, training_profile
from glimmer.errors import InputErrors


def _profile(text: str) -> LogProfile:
    (item,) = load_text(text, "lp.yaml")
    assert isinstance(item.obj, LogProfile)
    return item.obj


# N4: NeMo 1.x prints its own lines as ``[NeMo I <time> <file>:<line>]`` (second precision) and
# the step as a redrawn progress bar: 0-based ``global_step`` as a float, step time in seconds.
# Its checkpoints are saved asynchronously: training goes on between "Scheduled" and
# "finalized".
_TS = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}"
_N4_CKPT = "/results/checkpoints/megatron_gpt--step=100-consumed_samples=51200.0.ckpt"


def _profile_yaml(name: str, layout: str, patterns: dict[str, dict[str, object]], tail: str) -> str:
    """A LogProfile document; each pattern field written as a JSON string (valid YAML)."""
    rows = "".join(
        f"    {event}:\n" + "".join(f"      {k}: {json.dumps(v)}\n" for k, v in fields.items())
        for event, fields in patterns.items()
    )
    return (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: LogProfile\n"
        f"metadata: {{name: {name}}}\nspec:\n  timestamp: {{layout: {json.dumps(layout)}}}\n"
        f"  patterns:\n{rows}{tail}"
    )


N4_PROFILE = _profile_yaml(
    "nemotron4-nemo",
    "2006-01-02 15:04:05",
    {
        "applicationStart": {
            "regex": rf"^\[NeMo I (?P<timestamp>{_TS}) [\w.]+:\d+\] Experiments will be logged at",
            "example": "[NeMo I 2026-01-05 09:58:40 exp_manager:396] Experiments will be logged at "
            "/results/n4",
        },
        "trainingStep": {
            "regex": r"Epoch (?P<epoch>\d+): .*global_step=(?P<globalStep>[\d.]+)"
            r".*train_step_timing in s=(?P<stepTiming>[\d.]+)",
            "example": "Epoch 0: :   5%|▌         | 10/200 [00:42<13:18, reduced_train_loss=9.870, "
            "global_step=9.000, consumed_samples=5120.0, train_step_timing in s=3.890]",
            "units": {"stepTiming": "s"},
        },
        "checkpointSave": {
            "regex": r"Scheduled async checkpoint save for "
            r"(?P<path>\S*step=(?P<globalStep>\d+)\S*)",
            "example": "[NeMo I 2026-01-05 10:05:00 dist_ckpt_io:421] Scheduled async checkpoint "
            f"save for {_N4_CKPT}",
        },
        "checkpointDone": {
            "regex": r"Async checkpoint save for step (?P<globalStep>\d+) \((?P<path>[^)]+)\) "
            r"finalized successfully",
            "example": "[NeMo I 2026-01-05 10:05:09 dist_ckpt_io:456] Async checkpoint save for "
            f"step 100 ({_N4_CKPT}) finalized successfully.",
        },
        "checkpointRestore": {
            "regex": r"Restoring states from the checkpoint path at (?P<path>\S+)",
            "example": f"Restoring states from the checkpoint path at {_N4_CKPT}",
        },
        "checkpointLoaded": {
            "regex": r"Restored all states from the checkpoint at (?P<path>\S+)",
            "example": f"Restored all states from the checkpoint at {_N4_CKPT}",
        },
    },
    "  workerStrategy: {type: Single, replicatedJobName: node}\n  warmupSteps: 1\n",
)


def _bar(step: int, took: float) -> str:
    return (
        f"Epoch 0: :   {step // 2}%|▌         | {step + 1}/200 [00:42<13:18, "
        f"reduced_train_loss=9.870, global_step={step}.000, consumed_samples={512 * (step + 1)}.0, "
        f"train_step_timing in s={took:.3f}]"
    )


_CKPT = "/results/checkpoints/megatron_gpt--step=4-consumed_samples=2560.0.ckpt"
N4_LOG = "\n".join(
    [
        "2026-01-05T10:00:00Z [NeMo I 2026-01-05 10:00:00 exp_manager:396] Experiments will be "
        "logged at /results/n4",
        "2026-01-05T10:00:30Z " + _bar(0, 30.0),  # warmup: warmupSteps 1 from global_step 0
        "2026-01-05T10:00:34Z " + _bar(1, 4.0),
        # Two redraws of the bar in one kubelet line: both steps count, at the line's time.
        "2026-01-05T10:00:38Z " + _bar(2, 4.0) + "\r" + _bar(3, 4.0),
        "2026-01-05T10:00:40Z [NeMo I 2026-01-05 10:00:40 dist_ckpt_io:421] Scheduled async "
        f"checkpoint save for {_CKPT}",
        "2026-01-05T10:00:42Z " + _bar(4, 4.0),  # training goes on while the save runs
        "2026-01-05T10:00:46Z [NeMo I 2026-01-05 10:00:46 dist_ckpt_io:456] Async checkpoint "
        f"save for step 4 ({_CKPT}) finalized successfully.",
        "2026-01-05T10:00:50Z " + _bar(5, 4.0),
        "2026-01-05T10:00:55Z node-0:311:402 [0] NCCL INFO [Service thread] Connection closed",
        "2026-01-05T10:01:25Z [NeMo I 2026-01-05 10:01:25 exp_manager:396] Experiments will be "
        "logged at /results/n4",
        f"2026-01-05T10:01:30Z Restoring states from the checkpoint path at {_CKPT}",
        f"2026-01-05T10:01:35Z Restored all states from the checkpoint at {_CKPT}",
        "2026-01-05T10:01:45Z " + _bar(4, 10.0),  # warmup after the restore
        "2026-01-05T10:01:49Z " + _bar(5, 4.0),
        "2026-01-05T10:01:53Z " + _bar(6, 4.0),
    ]
)


def test_n4_nemo_progress_bar_steps_async_checkpoint_and_restore() -> None:
    g = parse_training(N4_LOG, training_profile(_profile(N4_PROFILE)))
    assert g is not None
    assert (g.interruptions, g.highest_step) == (1, 6)  # the restore lines are its resume
    assert (g.training_time, g.lost_work, g.reschedule, g.resume, g.checkpoint_save) == (
        pytest.approx(113.0),  # 10:00:00 -> 10:01:53
        pytest.approx(9.0),  # finalized 10:00:46 -> last line 10:00:55
        pytest.approx(30.0),  # -> 10:01:25
        pytest.approx(20.0),  # -> first step 10:01:45
        pytest.approx(6.0),  # scheduled 10:00:40 -> finalized 10:00:46, a step between
    )
    assert g.ratio == pytest.approx(goodput(113, 20, 9, 30, 6))
    assert g.avg_step_time == pytest.approx(4.0)  # 0-based global_step 0 and the restart's
    assert g.avg_tflops_per_gpu is None  # the NeMo 1.x bar prints no TFLOPs


# N5: Megatron-LM through the built-in profile exactly as the catalog ships it (its captures are
# ``globalStep`` and ``stepTiming``, read as §2.8's well-known names).
def _builtin(name: str) -> LogProfile:
    (path,) = [p for p in log_profiles() if p.stem == name]
    return _profile(path.read_text(encoding="utf-8"))


def _iteration(ts: str, i: int, ms: float, tflops: float) -> str:
    return (
        f"2026-01-05T{ts}Z  [2026-01-05 {ts}] iteration {i:>8}/      50 | consumed samples: "
        f"{i * 128:>12} | elapsed time per iteration (ms): {ms:.1f} | throughput per GPU "
        f"(TFLOP/s/GPU): {tflops:.1f} | learning rate: 3.0E-04 | global batch size:   128 |"
    )


N5_LINES = (
    "2026-01-05T10:00:00.000000Z  [2026-01-05 10:00:00.000000] training ...",
    _iteration("10:00:05.000000", 1, 5000.0, 100.0),  # warmup (warmupSteps 2)
    _iteration("10:00:07.000000", 2, 2000.0, 300.0),  # warmup
    _iteration("10:00:08.000000", 3, 1000.0, 400.0),
    _iteration("10:00:09.000000", 4, 1000.0, 400.0),
    "2026-01-05T10:00:10.000000Z  [2026-01-05 10:00:10.000000] saving checkpoint at "
    "iteration        4 to /mnt/workspace/checkpoints",
    "2026-01-05T10:00:13.000000Z  [2026-01-05 10:00:13.000000]   successfully saved "
    "checkpoint from iteration        4 to /mnt/workspace/checkpoints",
    _iteration("10:00:14.000000", 5, 1000.0, 400.0),
    "2026-01-05T10:00:20.000000Z [rank 0] NCCL watchdog: collective timed out",
    "2026-01-05T10:00:50.000000Z  [2026-01-05 10:00:50.000000] training ...",
    "2026-01-05T10:00:55.000000Z   successfully loaded checkpoint from "
    "/mnt/workspace/checkpoints [ t 1/2, p 1/1 ] at iteration 4",
    _iteration("10:01:00.000000", 5, 5000.0, 100.0),  # warmup after the restore
    _iteration("10:01:02.000000", 6, 2000.0, 300.0),
    _iteration("10:01:03.000000", 7, 1000.0, 400.0),
)
N5_LOG = "\n".join(N5_LINES)


def test_n5_megatron_steps_through_the_built_in_profile_as_shipped() -> None:
    g = parse_training(N5_LOG, training_profile(_builtin("megatron-training")))
    assert g is not None
    assert (g.interruptions, g.highest_step) == (1, 7)
    assert (g.training_time, g.lost_work, g.reschedule, g.resume, g.checkpoint_save) == (
        pytest.approx(63.0),
        pytest.approx(7.0),  # saved 10:00:13 -> last line 10:00:20
        pytest.approx(30.0),
        pytest.approx(10.0),
        pytest.approx(3.0),
    )
    assert g.avg_step_time == pytest.approx(1.0)  # ms -> s, warmup excluded
    assert g.avg_tflops_per_gpu == pytest.approx(400.0)


def test_n5_megatron_loading_its_checkpoint_before_training_is_one_interruption() -> None:
    # Megatron's own order on a restart: the checkpoint is loaded, then "training ..." is
    # printed. The loaded line opens the new attempt and the start joins it.
    restart = N5_LINES.index(
        "2026-01-05T10:00:50.000000Z  [2026-01-05 10:00:50.000000] training ..."
    )
    real = [
        *N5_LINES[:restart],
        "2026-01-05T10:00:50.000000Z   successfully loaded checkpoint from "
        "/mnt/workspace/checkpoints [ t 1/2, p 1/1 ] at iteration 4",
        "2026-01-05T10:00:55.000000Z  [2026-01-05 10:00:55.000000] training ...",
        *N5_LINES[restart + 2 :],
    ]
    g = parse_training("\n".join(real), training_profile(_builtin("megatron-training")))
    assert g is not None and g.interruptions == 1
    assert (g.training_time, g.lost_work, g.reschedule, g.resume, g.checkpoint_save) == (
        pytest.approx(63.0),
        pytest.approx(7.0),
        pytest.approx(30.0),  # to the loaded line, the first the new attempt printed
        pytest.approx(10.0),
        pytest.approx(3.0),
    )


# N6: the §6.2 profile, literally, with the NeMo-6 marker on the warmup iterations.
_N6_TS = rf"\[(?P<timestamp>{_TS}\.\d+)\]"
N6_PROFILE = _profile_yaml(
    "nemotron-6-megatron",
    "2006-01-02 15:04:05.999999",
    {
        "trainingStep": {
            "regex": rf"{_N6_TS}\s+iteration\s+(?P<iteration>\d+)/\s*\d+\s*\|.*elapsed time per "
            r"iteration \(ms\):\s*(?P<elapsedTime>[\d.]+)\s*\|.*throughput per GPU "
            r"\(TFLOP/s/GPU\):\s*(?P<tflops>[\d.]+)\s*\|.*lm loss:\s*(?P<loss>[\d.eE+\-]+)",
            "example": "[2026-01-05 10:00:03.250000] iteration        3/     100 | consumed "
            "samples:          384 | elapsed time per iteration (ms): 1000.0 | throughput per GPU "
            "(TFLOP/s/GPU): 500.0 | learning rate: 3.0E-04 | lm loss: 9.5E+00 |",
            "units": {"elapsedTime": "ms"},
        },
        "checkpointSave": {
            "regex": rf"{_N6_TS}\s+saving checkpoint at iteration\s+(?P<step>\d+)\s+to\s+"
            r"(?P<path>\S+)",
            "example": "[2026-01-05 10:00:04.000000] saving checkpoint at iteration        3 to "
            "/ckpt",
        },
        "checkpointDone": {
            "regex": rf"{_N6_TS}\s+successfully saved checkpoint from iteration\s+(?P<step>\d+)"
            r"\s+to\s+(?P<path>\S+)",
            "example": "[2026-01-05 10:00:06.000000] successfully saved checkpoint from "
            "iteration        3 to /ckpt",
        },
        "applicationStart": {
            "regex": rf"\[before the start of training step\]\s+datetime:\s+"
            rf"(?P<timestamp>{_TS}\.\d+)",
            "example": "[before the start of training step] datetime: 2026-01-05 10:00:00.000000",
        },
        "checkpointLoaded": {
            "regex": r"successfully loaded checkpoint from\s+(?P<path>\S+).*at iteration\s+"
            r"(?P<step>\d+)",
            "example": "  successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] at "
            "iteration 3",
        },
        "warmupStep": {
            "regex": "is warmup iteration",
            "example": "[2026-01-05 10:00:01.000000] iteration 1/ 100 | is warmup iteration",
        },
    },
    "  logInterval: 1\n",
)


def _n6(ts: str, i: int, ms: float, tflops: float, warm: bool = False) -> str:
    return (
        f"2026-01-05T{ts}Z [2026-01-05 {ts}] iteration {i:>8}/     100 | consumed samples: "
        f"{i * 128:>12} | elapsed time per iteration (ms): {ms:.1f} | throughput per GPU "
        f"(TFLOP/s/GPU): {tflops:.1f} | learning rate: 3.0E-04 | lm loss: {10 - i * 0.1:.4E} |"
        + (" is warmup iteration" if warm else "")
    )


N6_LOG = "\n".join(
    [
        "2026-01-05T10:00:00.000000Z [before the start of training step] datetime: "
        "2026-01-05 10:00:00.000000",
        _n6("10:00:01.000000", 1, 8000.0, 50.0, warm=True),
        _n6("10:00:02.000000", 2, 3000.0, 150.0, warm=True),
        _n6("10:00:03.000000", 3, 1000.0, 500.0),
        "2026-01-05T10:00:04.000000Z [2026-01-05 10:00:04.000000] saving checkpoint at "
        "iteration        3 to /ckpt",
        "2026-01-05T10:00:06.000000Z [2026-01-05 10:00:06.000000] successfully saved checkpoint "
        "from iteration        3 to /ckpt",
        _n6("10:00:07.000000", 4, 1000.0, 500.0),
        _n6("10:00:08.000000", 5, 1000.0, 500.0),  # the last line before the crash
        "2026-01-05T10:00:28.000000Z [before the start of training step] datetime: "
        "2026-01-05 10:00:28.000000",
        "2026-01-05T10:00:30.000000Z   successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] "
        "at iteration 3",
        _n6("10:00:33.000000", 4, 4000.0, 100.0, warm=True),
        _n6("10:00:34.000000", 5, 1000.0, 500.0),
        _n6("10:00:35.000000", 6, 1000.0, 500.0),
    ]
)


def test_n6_marker_alone_flags_warmup_and_the_loss_capture_is_carried() -> None:
    g = parse_training(N6_LOG, training_profile(_profile(N6_PROFILE)))
    assert g is not None
    assert (g.interruptions, g.highest_step) == (1, 6)
    assert (g.training_time, g.lost_work, g.reschedule, g.resume, g.checkpoint_save) == (
        pytest.approx(35.0),
        pytest.approx(2.0),  # saved 10:00:06 -> last step 10:00:08
        pytest.approx(20.0),
        pytest.approx(5.0),
        pytest.approx(2.0),
    )
    assert g.avg_step_time == pytest.approx(1.0)  # the three marked iterations are left out
    assert g.avg_tflops_per_gpu == pytest.approx(500.0)


@pytest.mark.parametrize("profile", [N4_PROFILE, N6_PROFILE], ids=["n4", "n6"])
def test_a_format_profile_whose_example_no_longer_matches_is_refused(profile: str) -> None:
    broken = re.sub(r'example: ".*"', 'example: "nothing like it"', profile, count=1)
    with pytest.raises(InputErrors, match=r"example .nothing like it. does not match the regex"):
        _profile(broken)


@pytest.mark.parametrize(
    ("log", "profile"),
    [(N4_LOG, N6_PROFILE), (N6_LOG, N4_PROFILE)],
    ids=["n4-log-n6-profile", "n6-log-n4-profile"],
)
def test_a_log_read_with_another_formats_profile_measures_nothing(log: str, profile: str) -> None:
    assert parse_training(log, training_profile(_profile(profile))) is None
