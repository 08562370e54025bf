"""glimmer.fingerprint: what hardware a verdict was about (specs/burnin.md §1.6, §7.2).

* ``identity``: the salient identity (OS, kernel, hardware labels, GPUs, NICs) as values.
* ``digest``: ``v1:<sha256>`` over its canonical JSON.
* ``labels``: which node labels describe hardware (operator/verdict labels never do).
* ``node_object``: identity from a Kubernetes Node (a plain dict): labels, nodeInfo, allocatable.
* ``simulated``: identity of a node of a simulated fleet.
* ``host``, ``sysfs``, ``nvml``: identity of the machine this runs on.
* ``changes``: a drift message naming what changed.
* ``reconcile``: one observation folded into a NodeFingerprint: sticky ``Drifted``, the
  ``HardwareDrift`` event, ``capturedAt`` moving only on change. It creates no run, ever.
* ``naming``: the NodeFingerprint object name of a node.
"""
