"""Certification on a cluster: the substrate pieces the certify controllers read and write
through (specs/certify.md §1: Certification -> Workflow -> Job -> TrainJob -> pods).

* :mod:`.resources` — the lightkube generic resources of the ``certify.glimmer.ai`` kinds and
  Kubeflow Trainer's kinds.
* :mod:`.nodes` — a Node object as the certification core's :class:`NodeInfo`.
* :mod:`.ledger` — the Job-CR ledger the replayed core asks for its jobs' logs.
* :mod:`.logs` — incremental pod-log reads of a workload's launcher (rank 0) pod.
"""
