"""Names of what a certification creates (specs/certify.md §1.3): deterministic, and short enough
for the suffixes Kubernetes and JobSet append."""

from __future__ import annotations

from glimmer.api.certify.options import CategoryOptions

NAME_MAX = 63
WORKLOAD_MAX = 44  # room for JobSet's "-launcher-N-hash" pod suffix
JOB_MAX = 35  # room for "-workload"
WORKFLOW_MAX = 31  # room for "-job" and "-workload"


def fnv32a(text: str) -> int:
    """The 32-bit FNV-1a hash of the UTF-8 bytes of ``text``."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def short_hash(name: str) -> str:
    """Five hex characters of the FNV-1a hash of ``name``."""
    return f"{fnv32a(name):08x}"[:5]


def truncate(name: str, limit: int) -> str:
    """``name`` unchanged when it fits; else its first ``limit - 6`` characters, trailing dashes
    stripped, then ``-`` and the hash of the whole original name."""
    if len(name) <= limit:
        return name
    return f"{name[: limit - 6].rstrip('-')}-{short_hash(name)}"


def extract_hash(name: str) -> str:
    """The hash a truncated name ends with, or the hash of the name when it has none."""
    last = name.rsplit("-", 1)[-1]
    return last if "-" in name and len(last) == 5 else short_hash(name)


def option_suffix(options: CategoryOptions | None) -> str:
    """The tokens that tell the same category apart when it runs twice with other options."""
    if options is None:
        return ""
    tokens: list[str] = []
    if options.nodes_per_job is not None:
        tokens.append(f"n{options.nodes_per_job}")
    if options.enable_mnnvl is not None:
        tokens.append("mnnvl" if options.enable_mnnvl else "nomnnvl")
    if options.test_scale is not None:
        tokens.append(str(options.test_scale))
    if options.enable_checkpoint:
        tokens.append("ckpt")
    if options.max_steps is not None:
        tokens.append(f"s{options.max_steps}")
    if options.exit_duration_mins is not None:
        tokens.append(f"e{options.exit_duration_mins}")
    if options.gpus_per_node is not None:
        tokens.append(f"g{options.gpus_per_node}")
    return "".join(f"-{t}" for t in tokens)


def workflow_name(cert: str, domain: str, variant: str, options: CategoryOptions | None) -> str:
    """``<cert>-<domain>-<variant>[-tokens]``, truncated to 31 characters."""
    return truncate(f"{cert}-{domain}-{variant}{option_suffix(options)}", WORKFLOW_MAX)


def job_name(workflow: str) -> str:
    """The Job of a single-group, single-iteration Workflow."""
    return truncate(f"{workflow}-job", JOB_MAX)


def workload_name(job: str) -> str:
    """The TrainJob of a Job."""
    return truncate(f"{job}-workload", WORKLOAD_MAX)


def job_scoped_suffix(workflow: str) -> str:
    """The suffix of a dependency copied for the single Job of a Workflow."""
    return f"-{extract_hash(workflow)}-job"
