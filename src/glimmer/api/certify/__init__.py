"""The ``certify.glimmer.ai/v1alpha1`` resources (specs/certify.md §2): pydantic models, their
vocabulary and thresholds, and the CRD schemas generated from them.

* ``certification``: Certification; ``workloadrun``: WorkloadRun; ``logprofile``: LogProfile;
* what the controllers write: ``workflow`` (+ ``workflow_status``): Workflow; ``job``: Job;
  ``measurement``: GoodputMeasurement and BandwidthMeasurement; ``conditions``: their condition
  types and failed-node reasons;
* ``options``, ``types``, ``threshold``, ``labels``, ``meta``: what they are built from;
* ``kinds``: registers the kinds with the one loader (import it before loading);
* ``crd``: the CRD documents; ``catalog``: the view of the catalog a higher layer registers.
"""
