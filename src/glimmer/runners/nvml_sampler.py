"""Sampling one device's NVML readings on a thread while a load runs, into running figures
(nothing grows with the length of a soak): clock, temperature and power means and extremes,
utilisation, and the throttle-reason evidence the accelerator kinds print.

Samples are counted only while :attr:`Sampler.counting` is set, so a kind decides what its
window is (clockprobe: only while its load is busy, after warm-up; the soaks: everything after
warm-up). Idle is never throttle: the ``gpuIdle`` reason is counted per sample like the others
but never makes a sample throttled or starts a throttle event.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from glimmer.runners.devices import TEST_DEVICE
from glimmer.runners.nvml import (
    APPLICATIONS_CLOCKS,
    IDLE,
    POWER_CAP,
    PROTECTIVE,
    REASONS,
    THERMAL,
    Device,
    Sample,
    reason_names,
)
from glimmer.runners.outcome import ConfigError
from glimmer.runners.settings import Settings

# A sample with one of these latched is throttled: capped (swPowerCap) or protecting itself.
CAPPING = POWER_CAP | PROTECTIVE


@dataclass
class Mean:
    total: float = 0.0
    count: int = 0
    low: float | None = None
    high: float | None = None

    def add(self, value: float | None) -> None:
        if value is None:
            return
        self.total += value
        self.count += 1
        self.low = value if self.low is None else min(self.low, value)
        self.high = value if self.high is None else max(self.high, value)

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None


@dataclass
class Stats:
    """Running figures over the counted samples of one device."""

    samples: int = 0
    sm: Mean = field(default_factory=Mean)
    mem: Mean = field(default_factory=Mean)
    temp: Mean = field(default_factory=Mean)
    power: Mean = field(default_factory=Mean)
    util: Mean = field(default_factory=Mean)
    mem_util: Mean = field(default_factory=Mean)
    temp_at_min_clock: float | None = None
    reasons_read: int = 0  # samples whose throttle reasons NVML answered
    reasons_mask: int = 0  # OR of every reason seen (idle included: it is evidence)
    per_reason: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS.values(), 0))
    throttled_samples: int = 0
    capping_events: int = 0  # transitions into any capping reason
    protective_events: int = 0  # transitions into a protective reason (§9.3)
    power_cap_events: int = 0  # transitions into swPowerCap
    pstates: dict[int, int] = field(default_factory=dict)  # P-state -> samples in it
    _previous: int = 0

    def add(self, s: Sample) -> None:
        self.samples += 1
        if s.sm_clock_mhz is not None and (self.sm.low is None or s.sm_clock_mhz < self.sm.low):
            self.temp_at_min_clock = s.temp_c
        self.sm.add(s.sm_clock_mhz)
        self.mem.add(s.mem_clock_mhz)
        self.temp.add(s.temp_c)
        self.power.add(s.power_w)
        self.util.add(s.gpu_util_pct)
        self.mem_util.add(s.mem_util_pct)
        if s.pstate is not None:
            self.pstates[s.pstate] = self.pstates.get(s.pstate, 0) + 1
        if s.throttle_reasons is None:
            return
        mask = s.throttle_reasons
        self.reasons_read += 1
        self.reasons_mask |= mask
        for name in reason_names(mask):
            self.per_reason[name] += 1
        if mask & CAPPING:
            self.throttled_samples += 1
        entered = mask & ~self._previous
        self.capping_events += bool(entered & CAPPING)
        self.protective_events += bool(entered & PROTECTIVE)
        self.power_cap_events += bool(entered & POWER_CAP)
        self._previous = mask

    def classification(self) -> str:
        """What held the clock back, by the reason latched in the most samples: none (no
        capping reason ever latched), thermal, powerCap, applicationClocks, or unknown (no
        reason readable, or only reasons that name no cause)."""
        if not self.reasons_read:
            return "unknown"
        counts = {
            "thermal": sum(self.per_reason[n] for n in reason_names(THERMAL)),
            "powerCap": self.per_reason["swPowerCap"] + self.per_reason["hwPowerBrake"],
            "applicationClocks": self.per_reason["applicationsClocks"],
        }
        if not self.reasons_mask & (CAPPING | APPLICATIONS_CLOCKS):
            return "none"
        best = max(counts, key=lambda k: counts[k])
        return best if counts[best] else "unknown"

    def pstate_text(self) -> str:
        """The P-state held longest under load and its share of samples (``P8 in 100 %``):
        a part pinned low shows it here while every throttle reason reads clear."""
        if not self.pstates:
            return ""
        state, count = max(self.pstates.items(), key=lambda kv: (kv[1], -kv[0]))
        return f"P{state} in {count / sum(self.pstates.values()) * 100:.0f} % of samples"

    def thermal_latched(self) -> bool:
        return bool(self.reasons_mask & THERMAL)

    def reasons_text(self) -> str:
        names = [n for n in reason_names(self.reasons_mask & ~IDLE)]
        return ",".join(names) or "none"


class Sampler:
    """Samples ``device`` every ``interval_s`` on a daemon thread, counting the samples taken
    while :attr:`counting` is set. :meth:`stop` joins the thread."""

    def __init__(self, device: Device, interval_s: float) -> None:
        self.device = device
        self.interval_s = interval_s
        self.stats = Stats()
        self.counting = threading.Event()
        self.last: Sample | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            if not self.counting.is_set():
                continue
            sample = self.device.sample()
            with self._lock:
                self.last = sample
                self.stats.add(sample)

    def sample_now(self) -> None:
        """Take one counted sample on the caller's thread (a window too short for the thread
        to have sampled still gets one)."""
        sample = self.device.sample()
        with self._lock:
            self.last = sample
            self.stats.add(sample)

    def snapshot(self) -> Stats:
        """A copy of the figures so far, consistent under the lock."""
        with self._lock:
            copy = Stats(**{k: getattr(self.stats, k) for k in Stats.__dataclass_fields__})
            copy.per_reason = dict(self.stats.per_reason)
            copy.pstates = dict(self.stats.pstates)
            for name in ("sm", "mem", "temp", "power", "util", "mem_util"):
                setattr(copy, name, Mean(**vars(getattr(self.stats, name))))
            return copy

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10.0)


TIME_SCALE = "BURNIN_TEST_TIME_SCALE"


def time_scale(settings: Settings) -> float:
    """Test only: the factor every wall-clock interval of the accelerator kinds is multiplied
    by (duration, warm-up, windows, sample and progress intervals), so a CI test runs a 60 s
    clockprobe's real code paths in a few seconds. The figures echoed (``durationRequestedS``,
    ``warmupS``, ...) stay the configured ones. Honoured only with ``BURNIN_TEST_DEVICE`` set;
    given without it, exit 3: a real run is never shortened by a stray variable."""
    raw = settings.raw(TIME_SCALE)
    if raw is None:
        return 1.0
    if settings.raw(TEST_DEVICE) is None:
        raise ConfigError(TIME_SCALE, f"test only: needs {TEST_DEVICE}")
    try:
        scale = float(raw)
    except ValueError:
        raise ConfigError(TIME_SCALE, f"{raw!r} is not a number") from None
    if not 0 < scale <= 1:
        raise ConfigError(TIME_SCALE, f"{scale} is not in (0, 1]")
    return scale
