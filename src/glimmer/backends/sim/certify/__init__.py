"""Certification on the simulated fleet: the twin as a certification substrate
(:mod:`glimmer.certify.substrate`), and the jobs it runs — nccl-tests over a group, ``dcgmi
diag`` on a node, a training job — as the simulated runners print them.

``substrate`` is the Substrate and the ``certify`` entry point over a twin; ``nodes`` the
fleet's nodes with a cluster's labels; ``nccl``, ``dcgm`` and ``training`` the jobs.
"""

from glimmer.backends.sim.certify.nodes import sim_nodes
from glimmer.backends.sim.certify.substrate import TwinSubstrate, certify, fleet_twin

__all__ = ["TwinSubstrate", "certify", "fleet_twin", "sim_nodes"]
