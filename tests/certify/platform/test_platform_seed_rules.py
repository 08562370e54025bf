"""The seed 002 contract, rule by rule: every rule it states maps to the test that checks it.

This table is the index a reviewer reads to check the claim "every rule of the seed has a test";
the test below keeps it honest (every test named here exists in this folder).
"""

from __future__ import annotations

import re
from pathlib import Path

SEED_RULES: dict[str, list[tuple[str, str]]] = {
    "ApplyEnvToJobTemplate": [
        ("no-op when env is empty", "test_env_write_is_a_no_op_when_env_is_empty"),
        (
            "no trainJob workload: nothing created",
            "test_env_write_without_a_train_job_workload_creates_nothing",
        ),
        ("no trainer: nothing created", "test_env_write_without_a_trainer_creates_nothing"),
        (
            "MPI entries get -x NAME=VALUE pairs in trainer.args",
            "test_env_write_gives_mpi_entries_x_pairs_in_trainer_args",
        ),
        (
            "other entries get a trainer env var, upserted by name",
            "test_env_write_gives_every_other_entry_a_trainer_env_var_upserted_by_name",
        ),
        ("no dependency rewrite is needed", "test_env_write_needs_no_dependency_rewrite"),
        (
            "shape read from the runtime's mlPolicy, not the args",
            "test_env_write_reads_the_shape_from_ml_policy_not_from_x_pairs_in_args",
        ),
    ],
    "ApplyGangSchedulerToDependencies": [
        (
            "schedulerName set on every replicated job's pod spec",
            "test_gang_sets_scheduler_name_on_every_replicated_jobs_pod_spec",
        ),
        (
            "queue label on the job template metadata",
            "test_gang_puts_the_queue_label_on_the_job_template_metadata",
        ),
        (
            "queue label on the pod template metadata",
            "test_gang_puts_the_queue_label_on_the_pod_template_metadata_too",
        ),
        (
            "queueLabelKey defaults to kai.scheduler/queue",
            "test_gang_queue_label_key_omitted_uses_the_kai_default_and_queue_the_default_queue",
        ),
        (
            "matches what the builders emit for a WorkloadRun",
            "test_gang_rewrite_matches_what_the_builders_emit_for_a_workload_run",
        ),
        (
            "KAI + MPI: launcher gate and startupPolicy deleted, wait-for-workers appended",
            "test_gang_kai_mpi_deletes_launcher_gate_and_startup_policy_and_appends_wait",
        ),
        (
            "a dependency that is not the node-ready gate keeps its meaning",
            "test_gang_kai_keeps_a_dependency_that_is_not_the_launchers_node_ready_gate",
        ),
        ("no-op when gs is nil", "test_gang_is_a_no_op_when_gs_is_nil"),
        (
            "no-op when the scheduler name is empty",
            "test_gang_is_a_no_op_when_the_scheduler_name_is_empty",
        ),
        (
            "scheduler name overwritten unconditionally",
            "test_gang_scheduler_name_is_overwritten_unconditionally",
        ),
    ],
    "ApplyImageToDependencies": [
        (
            "containers[0] of every replicated job gets the image",
            "test_image_replaces_the_primary_container_of_launcher_and_worker",
        ),
        (
            "init containers sharing the primary's old image follow it",
            "test_image_init_containers_sharing_the_primarys_old_image_follow_it",
        ),
        (
            "init containers with a distinct image stay pinned",
            "test_image_init_containers_with_a_distinct_image_stay_pinned",
        ),
        (
            "non-init containers beyond index 0 are never touched",
            "test_image_never_touches_non_init_containers_beyond_index_0",
        ),
        ("strict no-op when image is empty", "test_image_is_a_strict_no_op_when_empty"),
        (
            "never creates structure",
            "test_image_never_creates_structure_a_job_without_containers_is_left_alone",
        ),
    ],
    "ApplyImageToJobTemplate": [
        ("trainer.image set", "test_image_to_job_template_points_the_trainer_at_the_image"),
        ("no-op when image is empty", "test_image_to_job_template_is_a_no_op_when_empty"),
        ("no trainJob: left alone", "test_image_to_job_template_without_a_train_job_is_left_alone"),
        ("no trainer: left alone", "test_image_to_job_template_without_a_trainer_is_left_alone"),
    ],
    "ApplyResolvedWorkflowTransforms": [
        (
            "the order is pinned (gang, trainer image, dependency images, env, metadata)",
            "test_transforms_run_in_the_pinned_order",
        ),
        (
            "metadata last: the resolved JobSpec labels are the base map",
            "test_catalog_labels_are_the_base_map_and_owner_labels_overlay_them",
        ),
        (
            "the resolved intent is recorded on spec.gangScheduler",
            "test_gang_scheduler_derives_the_workload_queue_label_and_records_the_intent",
        ),
        (
            "ValidateResolvedJobTemplate runs",
            "test_explicit_queue_label_conflicting_with_the_gang_fails",
        ),
    ],
    "ApplyWorkloadRunScheduling": [
        (
            "composes workload metadata and records the intent",
            "test_workload_run_scheduling_composes_labels_and_records_the_intent",
        ),
        (
            "no ApplyGangSchedulerToDependencies call",
            "test_workload_run_scheduling_rewrites_no_dependency",
        ),
    ],
    "BaseNCCLEnvVars": [
        (
            "NCCL_NVLS_ENABLE is deliberately absent",
            "test_base_nccl_env_leaves_nccl_nvls_enable_to_nccls_own_default",
        ),
        (
            "model-independent variables",
            "test_base_nccl_env_is_model_independent_and_sets_mnnvl_from_the_flag",
        ),
        (
            "platform-specific variables come from overrides, not here",
            "test_base_nccl_env_has_no_platform_specific_variables",
        ),
    ],
    "BuildExecRuntime": [
        (
            "single replicatedJob layout with torch mlPolicy",
            "test_exec_runtime_is_the_single_job_layout_with_torch_ml_policy",
        ),
    ],
    "BuildMPIRuntime": [
        (
            "MPI mlPolicy with launcher and node replicated jobs",
            "test_mpi_runtime_has_mpi_ml_policy_and_node_plus_launcher_jobs",
        ),
        (
            "worker: sshd, capabilities, ssh readiness probe, env",
            "test_mpi_worker_runs_sshd_with_ipc_lock_an_ssh_readiness_probe_and_env",
        ),
        (
            "launcher: mpirun, ssh key setup, env",
            "test_mpi_launcher_runs_mpirun_setup_ssh_keys_and_gets_env",
        ),
        (
            "sshd install guarded by test -x /usr/sbin/sshd",
            "test_mpi_worker_sshd_install_is_guarded_by_test_x_on_the_exact_exec_path",
        ),
        (
            "env on both containers as container env",
            "test_mpi_env_goes_on_both_containers_as_container_env",
        ),
        (
            "volumes, mounts, init containers on the worker after built-ins",
            "test_mpi_user_volumes_mounts_and_init_containers_go_on_the_worker_after_builtins",
        ),
        (
            "the launcher gets none of them",
            "test_mpi_launcher_gets_none_of_the_user_volumes_mounts_or_init_containers",
        ),
        (
            "launcher resources fixed (cpu 2, memory 1Gi, no GPU)",
            "test_mpi_launcher_has_fixed_resources_and_no_gpu_whatever_spec_resources_say",
        ),
        (
            "the config volume is mounted read-only on the launcher",
            "test_mpi_launcher_mounts_the_config_volume_read_only",
        ),
    ],
    "BuildTorchRuntime": [
        (
            "torch mlPolicy and a single node replicated job",
            "test_torch_runtime_has_torch_ml_policy_and_a_single_node_replicated_job",
        ),
    ],
    "MPIEnvArgs": [
        ("-x args forward env to the ranks", "test_mpi_env_args_forwards_env_to_ranks_as_x_pairs"),
        (
            "names mpiArgs already forwards are skipped",
            "test_mpi_env_args_skips_names_mpi_args_already_forwards",
        ),
    ],
    "MergeEnvVars": [
        (
            "user values take precedence by name",
            "test_merge_env_vars_user_values_take_precedence_by_name",
        ),
    ],
    "Names": [
        (
            "every platform name in help and error order",
            "test_names_returns_every_platform_in_help_and_error_order",
        ),
    ],
    "NamesList": [
        ("joined with ', '", "test_names_list_joins_the_names_with_comma_space"),
    ],
    "OverridesFS": [
        (
            "the platform overrides, which declare dependencies",
            "test_overrides_fs_holds_the_workloadrun_overrides",
        ),
        (
            "dependency kinds derive from it",
            "test_the_dependency_kinds_a_role_must_grant_derive_from_the_override_files",
        ),
    ],
    "PreserveSchedulingFields": [
        (
            "copies the gang fields from original into renamed",
            "test_preserve_copies_the_queue_label_back_after_renaming_hit_it",
        ),
        (
            "inserts nothing: absent stays absent",
            "test_preserve_inserts_nothing_a_field_absent_from_original_stays_absent",
        ),
        (
            "an overridden value is carried through unchanged",
            "test_preserve_carries_an_overridden_value_through_unchanged",
        ),
        ("no-op when gs configures nothing", "test_preserve_is_a_no_op_when_gs_configures_nothing"),
    ],
    "ResolvedGangScheduler": [
        (
            "queue and queueLabelKey defaulted",
            "test_resolved_gang_scheduler_fills_queue_and_queue_label_key_defaults",
        ),
        (
            "nil when gs configures nothing",
            "test_resolved_gang_scheduler_is_nil_when_nothing_is_configured",
        ),
    ],
    "ValidateFlag": [
        ("empty is allowed", "test_validate_flag_allows_empty_and_every_platform_name"),
        (
            "the error text derives the names from Names()",
            "test_validate_flag_error_text_derives_the_valid_names_from_names",
        ),
    ],
    "ValidateResolvedGangScheduling": [
        (
            "workload queue label removed by an override is restored",
            "test_workload_queue_label_removed_by_an_override_is_restored",
        ),
        (
            "workload queue label equal passes",
            "test_workload_queue_label_equal_to_the_intent_passes",
        ),
        (
            "workload queue label changed fails",
            "test_workload_queue_label_changed_by_an_override_fails_with_the_conflict_message",
        ),
        (
            "missing runtime queue label fails, never repaired",
            "test_runtime_queue_label_missing_fails_and_is_never_repaired",
        ),
        ("conflicting runtime queue label fails", "test_runtime_queue_label_redirected_fails"),
        (
            "pod scheduler name missing or different fails",
            "test_runtime_scheduler_name_missing_or_changed_fails",
        ),
        ("works on a working copy", "test_restoring_the_label_works_on_a_copy_not_the_stored_spec"),
        ("nil gs is a no-op", "test_nil_gang_scheduler_is_a_no_op"),
        (
            "gs is re-resolved",
            "test_gs_is_re_resolved_so_a_scheduler_name_alone_checks_the_default_queue",
        ),
    ],
    "ValidateResolvedJobTemplate": [
        (
            "workload metadata validated whatever the scheduling",
            "test_job_template_validation_checks_workload_labels_without_gang_scheduling",
        ),
        (
            "gang contract checked when an intent is persisted",
            "test_job_template_validation_checks_the_gang_contract_when_an_intent_is_set",
        ),
    ],
    "ValidateWorkloadInitContainers": [
        (
            "an init container named like the workload container is refused",
            "test_init_container_taking_the_workload_containers_name_is_refused",
        ),
        (
            "fix-ssh-permissions is not reserved",
            "test_fix_ssh_permissions_is_not_reserved_user_inits_never_reach_the_launcher",
        ),
    ],
    "ValidateWorkloadVolumes": [
        ("mpi-ssh-auth volume name on mpi", "test_mpi_refuses_the_mpi_ssh_auth_volume_name"),
        (
            "kubeflow-trainer-token volume name on torch and exec",
            "test_torch_and_exec_refuse_the_trainer_token_volume_name",
        ),
        (
            "mount at /dev/shm (and the dshm volume)",
            "test_every_framework_refuses_the_dshm_volume_and_a_mount_at_dev_shm",
        ),
        (
            "ssh directories reserved with every path below",
            "test_mpi_reserves_the_ssh_directories_and_every_path_below_them",
        ),
        (
            "token directory reserved with every path below",
            "test_torch_and_exec_reserve_the_trainer_token_directory_and_below",
        ),
        (
            "/dev/shm and /config reserved exactly",
            "test_dev_shm_and_config_are_reserved_exactly_so_mounts_below_them_pass",
        ),
        ("a relative mountPath is refused", "test_a_relative_mount_path_is_refused_outright"),
        (
            "mpi-only names and paths checked on mpi alone",
            "test_mpi_only_names_and_paths_are_checked_on_mpi_alone",
        ),
        (
            "the token is checked on torch and exec only",
            "test_mpi_allows_the_trainer_token_name_it_lands_on_the_launcher",
        ),
        (
            "/config taken only when spec.config is set",
            "test_config_path_is_taken_only_when_spec_config_is_set",
        ),
        (
            "a mount may name config-volume only with spec.config",
            "test_a_mount_may_name_config_volume_only_when_spec_config_is_set",
        ),
        (
            "the config-volume name is reserved either way",
            "test_the_config_volume_name_is_reserved_either_way",
        ),
    ],
}


def _defined_tests() -> set[str]:
    names: set[str] = set()
    for path in Path(__file__).parent.glob("test_platform_*.py"):
        names |= set(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    return names


def test_every_seed_rule_names_a_test_that_exists() -> None:
    defined = _defined_tests()
    missing = [t for rules in SEED_RULES.values() for _, t in rules if t not in defined]
    assert missing == []


def test_every_documented_seed_function_has_rules() -> None:
    assert len(SEED_RULES) == 22  # every function the seed documents
    assert all(SEED_RULES.values())
