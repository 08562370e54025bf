"""glimmer.certify: certification of a cluster under real distributed load (specs/certify.md).

* ``platform``: rendering Kubeflow Trainer objects (runtime builders, gang scheduling, image and
  env writes, workload metadata, the validations, override matching and merging) — the seed
  ``002_*.txt`` contract as pure functions over plain mappings.
* ``catalog``: the categories (NCCL collectives, DCGM levels, training) and platform overrides as
  data, and rendering a Certification, a WorkloadRun or one entry into cluster objects.
* ``measure``: bandwidth and goodput from logs, expectations and thresholds;
  ``threshold_verdict``: the ValidationFailed verdict of §7.5; ``health*``: the §7.1 node-health
  detector (a CEL subset over Node maps) and the failedNodes merge; ``attribution``: who a
  failed group blames and the node-result ConfigMap payloads (§7.2); ``grouping``:
  topology-aware groups; ``isolate*``: adaptive fault isolation; ``report_card``: the report
  of §8.
* A certification run: ``spec`` (a Certification as plain values), ``target`` (the nodes it
  certifies), ``category`` (communication, diagnostics and training categories), ``run`` (the
  entry point), ``result`` (the §8 result document). They run over ``substrate``, the small
  protocol a substrate implements (its nodes, its fabric, running one of the ``jobs``); the
  simulator's is ``glimmer.backends.sim.certify``.

It sits above ``api``, ``contract``, ``verdict`` and ``fleet``, and imports none of ``sim``,
``engine``, ``backends`` or ``cli``: what runs a job is the substrate's business.
"""
