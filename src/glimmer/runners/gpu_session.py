"""How an NVML-reading accelerator kind starts: its devices found and allocated, torch loaded,
and an NVML session open — or the Outcome that ends the run before any load (no device: the
kind's Skip; NVML unusable while a GPU is visible: Error). clockprobe and the soak kinds start
this way."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from glimmer.runners import devices as dv
from glimmer.runners.nvml import Session, open_session
from glimmer.runners.outcome import Outcome, errored
from glimmer.runners.settings import Settings


@dataclass(frozen=True)
class GpuSession:
    torch: ModuleType
    found: dv.Discovery
    allocated: tuple[dv.Device, ...]
    mode: str  # sequential or all, the kind's default unless the settings say
    session: Session


def open_gpus(settings: Settings, default_mode: str) -> GpuSession | Outcome:
    """The devices and the NVML session of a run, or why it cannot start."""
    torch = dv.load_torch()
    found = dv.discover(settings, torch)
    if not found.visible:
        return dv.no_device_outcome(found)
    allocated = dv.allocate(settings, found)
    mode = dv.concurrency(settings, default_mode)
    if torch is None:  # discover shows devices only through torch
        return errored("devices were shown without torch")
    opened = open_session(settings)
    if opened.session is None:
        return errored(f"NVML is {opened.status} while a GPU is visible: {opened.why}")
    return GpuSession(torch, found, allocated, mode, opened.session)
