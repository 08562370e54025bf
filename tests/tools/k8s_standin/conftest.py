"""The stand-in's own tests use the project's k8s_api fixtures (until the lead registers
tests/k8s_api.py in tests/conftest.py, this folder registers them itself)."""

from tests.k8s_api import k8s_api, kubectl  # noqa: F401 (fixtures)
