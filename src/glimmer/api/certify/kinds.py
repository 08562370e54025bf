"""Registers the certification kinds with the one loader (importing this module is enough)."""

from __future__ import annotations

from glimmer.api.certify.certification import Certification
from glimmer.api.certify.job import Job
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.certify.measurement import BandwidthMeasurement, GoodputMeasurement
from glimmer.api.certify.meta import API_VERSION, CertifyResource
from glimmer.api.certify.report_export import ReportExport, ReportExportPolicy
from glimmer.api.certify.workflow import Workflow
from glimmer.api.certify.workloadrun import WorkloadRun
from glimmer.api.kinds import register_kind

# What users write first, then what the controllers make of it.
CERTIFY_KINDS: tuple[type[CertifyResource], ...] = (
    Certification,
    WorkloadRun,
    LogProfile,
    Workflow,
    Job,
    GoodputMeasurement,
    BandwidthMeasurement,
    ReportExportPolicy,
    ReportExport,
)

for _model in CERTIFY_KINDS:
    register_kind(API_VERSION, _model.KIND, _model)
