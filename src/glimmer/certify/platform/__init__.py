"""glimmer.certify.platform: rendering Kubeflow Trainer objects for certification workloads.

The contract is the seed ``002_*.txt`` (the platform package of the original engine), in Python
names, as pure functions over plain Kubernetes mappings: inputs are never changed, results are
new values. Each module holds one idea:

* ``vocab``: platforms, frameworks, reserved names, label keys; ``names``, ``names_list``,
  ``validate_flag``
* ``runtime`` / ``runtime_mpi``: ``RuntimeConfig``, ``build_torch_runtime``,
  ``build_exec_runtime``, ``build_mpi_runtime``
* ``gang``: ``apply_gang_scheduler_to_dependencies``, ``resolved_gang_scheduler``
* ``preserve``: ``preserve_scheduling_fields``
* ``image``: ``apply_image_to_dependencies``, ``apply_image_to_job_template``
* ``env``: ``base_nccl_env_vars``, ``merge_env_vars``, ``mpi_env_args``
* ``env_write``: ``apply_env_to_job_template``
* ``transforms``: ``apply_resolved_workflow_transforms``, ``apply_workload_run_scheduling``
* ``validate_gang``: ``validate_resolved_gang_scheduling``, ``validate_resolved_job_template``
* ``validate_workload``: ``validate_workload_volumes``, ``validate_workload_init_containers``
* ``overrides``: ``overrides_fs`` and applying overrides (specs/certify.md §5.4), with ``when``
  (matching), ``merge`` (strategic merge, dependency merge, RFC 6902) and ``fill`` (placeholders)
* ``workloadrun_overrides``: ``build_overrides``, the WorkloadRun platform overrides (§4.8)
"""

from glimmer.certify.platform.env import base_nccl_env_vars, merge_env_vars, mpi_env_args
from glimmer.certify.platform.env_write import apply_env_to_job_template
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.gang import (
    apply_gang_scheduler_to_dependencies,
    resolved_gang_scheduler,
)
from glimmer.certify.platform.image import (
    apply_image_to_dependencies,
    apply_image_to_job_template,
)
from glimmer.certify.platform.overrides import overrides_fs
from glimmer.certify.platform.preserve import preserve_scheduling_fields
from glimmer.certify.platform.runtime import RuntimeConfig, build_exec_runtime, build_torch_runtime
from glimmer.certify.platform.runtime_mpi import build_mpi_runtime
from glimmer.certify.platform.transforms import (
    ResolvedWorkflowTransforms,
    apply_resolved_workflow_transforms,
    apply_workload_run_scheduling,
)
from glimmer.certify.platform.validate_gang import (
    validate_resolved_gang_scheduling,
    validate_resolved_job_template,
)
from glimmer.certify.platform.validate_workload import (
    validate_workload_init_containers,
    validate_workload_volumes,
)
from glimmer.certify.platform.vocab import names, names_list, validate_flag
from glimmer.certify.platform.workloadrun_overrides import (
    OverrideConfig,
    WorkloadRunOverride,
    build_overrides,
)

__all__ = [
    "OverrideConfig",
    "PlatformError",
    "ResolvedWorkflowTransforms",
    "RuntimeConfig",
    "WorkloadRunOverride",
    "apply_env_to_job_template",
    "apply_gang_scheduler_to_dependencies",
    "apply_image_to_dependencies",
    "apply_image_to_job_template",
    "apply_resolved_workflow_transforms",
    "apply_workload_run_scheduling",
    "base_nccl_env_vars",
    "build_exec_runtime",
    "build_mpi_runtime",
    "build_overrides",
    "build_torch_runtime",
    "merge_env_vars",
    "mpi_env_args",
    "names",
    "names_list",
    "overrides_fs",
    "preserve_scheduling_fields",
    "resolved_gang_scheduler",
    "validate_flag",
    "validate_resolved_gang_scheduling",
    "validate_resolved_job_template",
    "validate_workload_init_containers",
    "validate_workload_volumes",
]
