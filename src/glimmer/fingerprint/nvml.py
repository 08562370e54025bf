"""NVIDIA GPUs through NVML, when the ``pynvml`` module (package ``nvidia-ml-py``, the ``gpu``
extra) and a driver are present. Imported lazily: everywhere else this returns None and the
caller falls back to sysfs."""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from glimmer.fingerprint.identity import Gpu
from glimmer.fingerprint.keys import MAX_GPUS


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def nvml_gpus() -> list[Gpu] | None:
    """NVIDIA GPUs as NVML reports them, or None when NVML cannot be used here."""
    try:
        nvml: Any = importlib.import_module("pynvml")
    except ImportError:
        return None
    try:
        nvml.nvmlInit()
    except Exception:  # NVMLError_LibraryNotFound, DriverNotLoaded ...: no NVML on this host
        return None
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        out = []
        for i in range(min(int(nvml.nvmlDeviceGetCount()), MAX_GPUS)):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
            out.append(
                Gpu(
                    index=i,
                    vendor="nvidia",
                    model=_text(nvml.nvmlDeviceGetName(handle)),
                    arch=f"sm_{major}{minor}",
                    memory_bytes=int(nvml.nvmlDeviceGetMemoryInfo(handle).total),
                    driver_version=driver,
                )
            )
        return out
    except Exception:  # a GPU that fell off the bus mid-query: report what NVML cannot read as none
        return None
    finally:
        # Shutting down a half-initialised NVML is best effort.
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
