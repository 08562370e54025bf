"""The GEMM of each precision gemm-sweep (§9.5) and compute-smoke (§9.1) run, on one torch
device, with its operands, its reference and the on-device comparison of every result.

Operands live on an integer grid chosen so that every precision computes the exact answer:
A holds ±1 in at most 256 places per row (zeros elsewhere) and B holds ±1 everywhere, so each
element of A·B is an integer of magnitude ≤ 256 — exact in bf16, fp8 (e4m3) and e2m1 operands,
exact in a bf16 output and in any fp32 accumulation order (split-K included, since every
partial sum is bounded the same way). The reference is then the float64 product on the host
and any difference at all is a wrong answer. compute-smoke instead draws its fp4 operands from
the whole e2m1 grid, so its bf16 output rounds and its error is the real NVFP4 floor (~0.002).

The kernels: ``torch.matmul`` in float64, in float32 with TF32 allowed, and in bfloat16;
``torch._scaled_mm`` for fp8 (e4m3, tensor-wise scale 1) and for fp4 (e2m1 pairs with
block-of-16 e4m3 scales of 1). On torch's ``cpu`` device (test mode only) fp4 has no kernel, so
the test device multiplies the unpacked e2m1 values instead: packing, reference and comparison
are the same code either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

PRECISIONS = ("fp4", "fp8", "bf16", "tf32", "fp64")
# The lowest compute capability with each precision's GEMM path. fp4 is block-scaled NVFP4,
# which only Blackwell (10.x, 12.x) has; Hopper and Ada stop at fp8, Ampere at bf16/tf32.
MIN_CC: dict[str, tuple[int, int]] = {
    "fp64": (0, 0),
    "tf32": (8, 0),
    "bf16": (8, 0),
    "fp8": (8, 9),
    "fp4": (10, 0),
}
FP4_MAJORS = frozenset({10, 12})
EXACT_TOLERANCE = 1e-6  # integer-grid operands: every exact precision
FP4_TOLERANCE = 0.01  # the block-scaled fp4 cell (clean floor ~0.002)
MAX_NONZEROS = 256  # per row of A: bounds every element of A·B to 256
# The sixteen e2m1 codes (sign bit 3, two exponent bits, one mantissa bit).
E2M1_VALUES = (
    0.0,
    0.5,
    1.0,
    1.5,
    2.0,
    3.0,
    4.0,
    6.0,
    -0.0,
    -0.5,
    -1.0,
    -1.5,
    -2.0,
    -3.0,
    -4.0,
    -6.0,
)
FP4_BLOCK = 16  # elements sharing one e4m3 scale
HOST_REFERENCE_MACS = 1 << 31


def has_precision(precision: str, cc: tuple[int, int]) -> bool:
    """Whether a part of compute capability ``cc`` has the precision's GEMM path at all."""
    if precision == "fp4":
        return cc[0] in FP4_MAJORS
    return cc >= MIN_CC[precision]


def _round_up(x: int, to: int) -> int:
    return (x + to - 1) // to * to


@dataclass
class Checked:
    """What the comparison accumulated on the device over every checked result."""

    max_abs_error: float
    max_abs_ref: float
    nonfinite: int
    all_zero_results: int
    iterations: int

    @property
    def max_relative_error(self) -> float:
        return self.max_abs_error / self.max_abs_ref if self.max_abs_ref > 0 else 0.0


class Gemm:
    """One precision's GEMM of shape m×n×k on one device, with its compare loop state."""

    def __init__(
        self,
        torch: ModuleType,
        device: str,
        precision: str,
        m: int,
        n: int,
        k: int,
        full_grid: bool = False,
        seed: int = 20240611,
    ) -> None:
        self.torch = torch
        self.device = device
        self.precision = precision
        self.m, self.n, self.k = m, n, k
        self.on_cpu = device == "cpu"
        gen = torch.Generator().manual_seed(seed)
        if full_grid:
            a_codes = torch.randint(0, 16, (m, k), generator=gen, dtype=torch.uint8)
            b_codes = torch.randint(0, 16, (n, k), generator=gen, dtype=torch.uint8)
            table = torch.tensor(E2M1_VALUES, dtype=torch.float64)
            a64, bt64 = table[a_codes.long()], table[b_codes.long()]
        else:
            a64 = self._sparse_signs(gen, m, k)
            bt64 = torch.randint(0, 2, (n, k), generator=gen, dtype=torch.float64) * 2 - 1
        # The reference, in double precision, computed once: on the host up to 2³¹
        # multiply-adds (1024³ is 2³⁰); a larger shape (the device check's 8192³ would take
        # the host minutes) is multiplied in float64 on the device, still exact on this grid
        # and independent of the precision under test.
        where = "cpu" if m * n * k <= HOST_REFERENCE_MACS else device
        ref = a64.to(where) @ bt64.to(where).t()
        self.max_abs_ref = float(ref.abs().max())
        ref_dtype = torch.float64 if precision == "fp64" else torch.float32
        self.ref = ref.to(device=device, dtype=ref_dtype)
        del ref
        self._operands(a64, bt64)
        self.out: Any = None
        self._zero_stats()

    def _sparse_signs(self, gen: Any, m: int, k: int) -> Any:
        torch = self.torch
        nonzeros = min(k, MAX_NONZEROS)
        a = torch.zeros((m, k), dtype=torch.float64)
        # Columns drawn with repetition: a repeated column is overwritten, so a row holds at
        # most ``nonzeros`` entries and the bound on every element of A·B stands.
        cols = torch.randint(0, k, (m, nonzeros), generator=gen)
        signs = torch.randint(0, 2, (m, nonzeros), generator=gen, dtype=torch.float64) * 2 - 1
        a.scatter_(1, cols, signs)
        return a

    def _operands(self, a64: Any, bt64: Any) -> None:
        torch, dev, p = self.torch, self.device, self.precision
        if p == "fp64":
            self.a, self.b = a64.to(dev), bt64.t().contiguous().to(dev)
        elif p == "tf32":
            self.a, self.b = a64.float().to(dev), bt64.t().contiguous().float().to(dev)
        elif p == "bf16":
            self.a = a64.to(torch.bfloat16).to(dev)
            self.b = bt64.t().contiguous().to(torch.bfloat16).to(dev)
        elif p == "fp8":
            self.a = a64.to(torch.float8_e4m3fn).to(dev)
            # _scaled_mm wants B column-major: the transpose of a row-major Bᵀ.
            self.b = bt64.to(torch.float8_e4m3fn).to(dev).t()
            self.scale = torch.tensor(1.0, device=dev)
        elif p == "fp4":
            self.a = self._pack_fp4(a64).to(dev)
            self.b = self._pack_fp4(bt64).to(dev).t()
            scales_a = _round_up(self.m, 128) * _round_up(self.k // FP4_BLOCK, 4)
            scales_b = _round_up(self.n, 128) * _round_up(self.k // FP4_BLOCK, 4)
            # Every scale is 1, so the swizzled layout cuBLASLt expects needs no arranging.
            self.scale_a = torch.ones(scales_a, device=dev).to(torch.float8_e4m3fn)
            self.scale_b = torch.ones(scales_b, device=dev).to(torch.float8_e4m3fn)
            if self.on_cpu:
                self._fp4_table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=dev)
        else:
            raise ValueError(f"unknown precision {p!r}")

    def _pack_fp4(self, values: Any) -> Any:
        """Rows of e2m1 values, two codes a byte (the first in the low nibble)."""
        torch = self.torch
        table = torch.tensor(E2M1_VALUES[:8], dtype=torch.float64)
        magnitude = (values.abs().unsqueeze(-1) - table).abs().argmin(dim=-1)
        codes = (magnitude | ((values < 0).long() << 3)).to(torch.uint8)
        packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
        return packed.contiguous().view(torch.float4_e2m1fn_x2)

    def _unpack_fp4(self, packed: Any) -> Any:
        """The test device's stand-in for the fp4 tensor core: e2m1 codes back to float32."""
        raw = packed.view(self.torch.uint8)
        low, high = (raw & 0xF).long(), (raw >> 4).long()
        codes = self.torch.stack((low, high), dim=-1).flatten(-2)
        return self._fp4_table[codes]

    def _zero_stats(self) -> None:
        torch, dev = self.torch, self.device
        self._err = torch.zeros((), dtype=self.ref.dtype, device=dev)
        self._nonfinite = torch.zeros((), dtype=torch.int64, device=dev)
        self._zero_results = torch.zeros((), dtype=torch.int64, device=dev)
        self.iterations = 0

    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k

    def launch(self) -> Any:
        """One GEMM; its result stays on the device (``self.out``)."""
        torch, p = self.torch, self.precision
        if p in ("fp64", "tf32", "bf16"):
            self.out = torch.matmul(self.a, self.b)
        elif p == "fp8":
            self.out = torch._scaled_mm(
                self.a, self.b, scale_a=self.scale, scale_b=self.scale, out_dtype=torch.bfloat16
            )
        elif self.on_cpu:
            a = self._unpack_fp4(self.a)
            b = self._unpack_fp4(self.b.t()).t()
            self.out = (a @ b).to(torch.bfloat16)
        else:
            self.out = torch._scaled_mm(
                self.a, self.b, scale_a=self.scale_a, scale_b=self.scale_b,
                out_dtype=torch.bfloat16,
            )  # fmt: skip
        return self.out

    def corrupt(self, element: int) -> None:
        """Self-test: change one element of the last result before it is compared."""
        flat = self.out.view(-1)
        at = element % flat.numel()
        flat[at] = flat[at] + max(64.0, self.max_abs_ref)

    def check(self) -> None:
        """Compare the last result with the reference, on the device, without waiting for it:
        the largest difference, the non-finite elements, and whether it was all zeros."""
        torch = self.torch
        out = self.out.to(self.ref.dtype)
        finite = torch.isfinite(out)
        self._nonfinite += (~finite).sum()
        diff = torch.where(finite, (out - self.ref).abs(), 0)
        self._err = torch.maximum(self._err, diff.amax())
        self._zero_results += (out.abs().amax() == 0).to(torch.int64)
        self.iterations += 1

    def checked(self) -> Checked:
        """Read the accumulated comparison (waits for the device)."""
        return Checked(
            max_abs_error=float(self._err.item()),
            max_abs_ref=self.max_abs_ref,
            nonfinite=int(self._nonfinite.item()),
            all_zero_results=int(self._zero_results.item()),
            iterations=self.iterations,
        )


def enable_tf32(torch: ModuleType) -> None:
    """tf32 is float32 storage with TF32 tensor-core math, which torch leaves off by default
    (asked through ``fp32_precision`` where torch has it: ``allow_tf32`` is deprecated)."""
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "tf32"
    else:
        matmul.allow_tf32 = True


def arch_list(torch: ModuleType) -> list[str]:
    """The CUDA targets this torch build carries (``sm_90``, ``compute_120`` ...)."""
    try:
        return [str(a) for a in torch.cuda.get_arch_list()]
    except (AttributeError, RuntimeError):
        return []


def build_covers(archs: list[str], cc: tuple[int, int]) -> bool | None:
    """Whether a torch build for ``archs`` runs kernels on ``cc``: an exact ``sm_XY``, or PTX
    (``compute_XY``) at or below it that the driver can compile forward; None without a list
    (no claim either way)."""
    if not archs:
        return None
    want = cc[0] * 10 + cc[1]
    for arch in archs:
        kind, _, digits = arch.partition("_")
        digits = digits.rstrip("af")
        if not digits.isdigit():
            continue
        if (kind == "sm" and int(digits) == want) or (kind == "compute" and int(digits) <= want):
            return True
    return False


def baked_arch_covers(arch: str, cc: str) -> bool | None:
    """Whether an image whose baked ``BURNIN_CUDA_ARCH`` is ``arch`` runs on ``cc`` (§9.1):
    ``sm_120a``/``sm_121a`` exact, ``sm_120f`` covers 12.0 and 12.1, plain ``sm_XY`` runs
    forward within its major; an unknown string makes no claim (None)."""
    table = {"sm_120a": ("12.0",), "sm_121a": ("12.1",), "sm_120f": ("12.0", "12.1")}
    if arch in table:
        return cc in table[arch]
    digits = arch.removeprefix("sm_")
    if arch.startswith("sm_") and digits.isdigit() and len(digits) >= 2:
        major, minor = int(digits[:-1]), int(digits[-1])
        got_major, _, got_minor = cc.partition(".")
        if not (got_major.isdigit() and got_minor.isdigit()):
            return None
        return int(got_major) == major and int(got_minor) >= minor
    return None
