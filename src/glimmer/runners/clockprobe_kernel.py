"""clockprobe's load: a register-resident FP32 FMA chain whose speed is set by the SM clock
alone (no memory traffic inside the loop), so the clock NVML reports under it is the clock the
part sustains when it is busy.

On a CUDA device with Triton (shipped with the CUDA wheels of PyTorch), the chain is a Triton
kernel: 8 independent chains per thread, 256 threads per block, blocks = SMs x 8 (§9.2). Without
Triton, and on the test-mode ``cpu`` device, the same chain is torch elementwise ``addcmul``
steps over a buffer of the same shape: the calibration, windows, sampling and figures are the
same code; only the kernel differs, and the run says so in ``configWarnings`` on a GPU (a
launch-bound torch chain loads the clock less evenly than Triton's).
"""

from __future__ import annotations

import importlib
import time
from types import ModuleType
from typing import Any

CHAINS = 8
THREADS_PER_BLOCK = 256
BLOCKS_PER_SM = 8
TEST_SMS = 4  # the test-mode cpu device's stand-in SM count: 64 Ki floats
# x -> x*A + B converges to B/(1-A) = 1.0: the chain stays finite however long it runs.
A, B = 0.999999, 1e-6
MAX_ITERS = 1 << 26


def triton_kernel() -> Any | None:
    """The Triton launcher, or None when Triton is not installed."""
    try:
        module = importlib.import_module("glimmer.runners.clockprobe_triton")
    except ImportError:
        return None
    return module.launch


class FmaLoad:
    """One device's FMA chain: :meth:`launch` enqueues ``iters`` steps of every chain,
    :meth:`sync` waits for the device."""

    def __init__(self, torch: ModuleType, torch_device: str, sms: int) -> None:
        self.torch = torch
        self.device = torch.device(torch_device)
        self.cuda = self.device.type == "cuda"
        self.blocks = sms * BLOCKS_PER_SM
        self.threads = self.blocks * THREADS_PER_BLOCK
        self._triton = triton_kernel() if self.cuda else None
        self.kernel = "triton" if self._triton is not None else "torch-addcmul"
        size = self.threads * CHAINS
        self.x = torch.rand(size, dtype=torch.float32, device=self.device)
        self._chains = self.x.view(CHAINS, self.threads)
        self._a = torch.full_like(self._chains, A)
        self._b = torch.full_like(self._chains, B)

    def flops(self, iters: int) -> float:
        return 2.0 * CHAINS * self.threads * iters  # one FMA = 2 flops

    def launch(self, iters: int) -> None:
        if self._triton is not None:
            self._triton(self.x, iters, A, B, self.blocks, THREADS_PER_BLOCK)
            return
        x, a, b = self._chains, self._a, self._b
        for _ in range(iters):
            self.torch.addcmul(b, x, a, out=x)

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def finite(self) -> bool:
        return bool(self.torch.isfinite(self.x).all().item())

    def calibrate(self, target_s: float, start: int) -> int:
        """Iterations per launch so that one launch takes about ``target_s``."""
        self.launch(1)  # the first launch compiles (Triton): not part of any timing
        self.sync()
        iters = start
        for _ in range(4):
            began = time.perf_counter()
            self.launch(iters)
            self.sync()
            took = time.perf_counter() - began
            if took <= 0:
                iters = min(MAX_ITERS, iters * 10)
                continue
            scaled = max(1, min(MAX_ITERS, int(iters * target_s / took)))
            if 0.8 <= took / target_s <= 1.25:
                return scaled
            iters = scaled
        return iters


def sm_count(torch: ModuleType, torch_device: str) -> int:
    device = torch.device(torch_device)
    if device.type != "cuda":
        return TEST_SMS
    return int(torch.cuda.get_device_properties(device).multi_processor_count)
