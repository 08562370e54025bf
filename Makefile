# Every target installs what it needs into .venv by itself: on a fresh machine with Python 3.11,
# `make demo` and `make test` are the whole set-up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SRC    := src tests bench tools
# Two workers match the two cores of the CI machine.
PYTEST_WORKERS ?= 2

.PHONY: install tools demo demo-k8s test lint typecheck imports pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,k8s]'
	touch $(STAMP)

# The accelerator runner kinds (issue 14) run their real numeric code in the tests on torch's cpu
# device. torch is no part of the base install (the gpu extra brings it, with a CUDA build, to a
# GPU host), so the test set-up alone adds it here; on these machines this pin resolves to the
# CPU build of PyTorch (about 20 s).
TORCH_VERSION ?= 2.13.0
TORCH_STAMP   := $(VENV)/.torch-stamp

$(TORCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==$(TORCH_VERSION)
	touch $(TORCH_STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/glimmer demo

# A whole BurnInRun on a Kubernetes cluster, watched with kubectl: the stand-in cluster
# (tools/k8s-standin: an API server and a kubelet running pods as processes) and the operator
# as a process (issue 16). About two minutes; removes what it starts.
demo-k8s: $(STAMP)
	tests/tools/ensure_kubectl.sh
	$(BIN)/python -m tools.demo_k8s

lint: $(STAMP)
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)

typecheck: $(STAMP) $(TORCH_STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# Real components the tests start (promtool for the exposition; stressapptest, iperf3 and
# perftest for the runners), installed when missing.
tools:
	tests/tools/ensure_promtool.sh
	tests/tools/ensure_xmllint.sh
	tests/tools/ensure_chromium.sh
	tests/tools/ensure_stressapptest.sh
	tests/tools/ensure_iperf3.sh
	tests/tools/ensure_perftest.sh
	tests/tools/ensure_kubectl.sh

# The slurm substrate's tests (issue 15) run against a real Slurm cluster in network namespaces
# on this machine (tests/tools/slurm_cluster.sh; GLIMMER_SLURM_* choose its directory, prefix
# and subnet). It is brought up before pytest, for both workers, and taken down after it even
# when pytest fails: the trap runs on the recipe shell's exit and keeps pytest's exit status.
SLURM_CLUSTER := tests/tools/slurm_cluster.sh

# One Slurm cluster per pytest worker (tests/slurm_cluster.py picks gw<i>'s), so the Slurm tests
# of the two workers run side by side instead of queueing on one cluster's lock.
pytest: $(STAMP) $(TORCH_STAMP) tools
	@set -e; \
	clusters() { for i in $$(seq 0 $$(($(PYTEST_WORKERS) - 1))); do \
	  GLIMMER_SLURM_DIR=/tmp/glimmer-slurm-gw$$i GLIMMER_SLURM_PREFIX=glsl$$i \
	  GLIMMER_SLURM_NET=10.199.$$i $(SLURM_CLUSTER) $$1 || return 1; done; }; \
	trap 'clusters down' EXIT; \
	started=$$(date +%s%N); \
	clusters up; \
	echo "$(PYTEST_WORKERS) slurm clusters up in $$(( ($$(date +%s%N) - started) / 1000000 )) ms"; \
	$(BIN)/pytest -n $(PYTEST_WORKERS)

test: lint typecheck imports pytest

bench: $(STAMP)
	@for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache
