#!/usr/bin/env bash
# The device check of issue 14 item 5, in one call of at most 8 minutes on a GPU machine where
# nothing can be fetched: every accelerator runner kind for a short window beside the same-run
# references (torch.matmul bf16 8192^3, an 8 GiB device-to-device copy), one table printed
# (bench/device/gpu_runners.py says what is in it). Needs only a Python with torch (and
# nvidia-ml-py for the NVML kinds): the runners use glimmer/contract and glimmer/runners from
# this checkout, never pydantic or the rest of glimmer.
#
#   bench/device/gpu_runners.sh                              # on the GPU machine
#   GPU_RUNNERS_TEST_DEVICE=cpu bench/device/gpu_runners.sh  # dry run of the plumbing, no GPU
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
# The table's own budget is 450 s; the outer limit leaves the 8-minute call room to print.
exec timeout --signal=TERM 470 "$PYTHON" bench/device/gpu_runners.py "$@"
