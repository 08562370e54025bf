"""clockprobe's FMA chain as a Triton kernel (imported only on a CUDA device, and only when
Triton is installed: importing this module without Triton raises ImportError, which
:func:`glimmer.runners.clockprobe_kernel.triton_kernel` reads as "no Triton").

Each program holds 8 independent chains of one element per thread in registers and runs the
``x * a + b`` step ``iters`` times; only the final sum is stored, so the loop does no memory
traffic and the compiler can neither drop nor fold it.
"""

from __future__ import annotations

import importlib
from typing import Any

triton: Any = importlib.import_module("triton")
tl: Any = importlib.import_module("triton.language")


@triton.jit  # type: ignore[untyped-decorator]
def _fma_chain(x_ptr, iters, a, b, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x0 = tl.load(x_ptr + offs)
    x1 = x0 + 1.0
    x2 = x0 + 2.0
    x3 = x0 + 3.0
    x4 = x0 + 4.0
    x5 = x0 + 5.0
    x6 = x0 + 6.0
    x7 = x0 + 7.0
    for _ in range(iters):
        x0 = x0 * a + b
        x1 = x1 * a + b
        x2 = x2 * a + b
        x3 = x3 * a + b
        x4 = x4 * a + b
        x5 = x5 * a + b
        x6 = x6 * a + b
        x7 = x7 * a + b
    total = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7
    tl.store(x_ptr + offs, total * 0.125)


def launch(x: Any, iters: int, a: float, b: float, blocks: int, threads: int) -> None:
    """One launch over ``blocks`` programs of ``threads`` threads (one element each); ``x``
    holds at least blocks x threads floats."""
    _fma_chain[(blocks,)](x, iters, a, b, BLOCK=threads, num_warps=threads // 32)
