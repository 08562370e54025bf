"""glimmer.engine: the one reconciler of a BurnInRun (specs/burnin.md §2), over any substrate.

Entry point: :class:`~glimmer.engine.reconciler.Engine` — ``Engine(backend).reconcile(ns,
name)`` runs one pass and returns an :class:`~glimmer.engine.wake.Outcome` saying when to
come back. The substrate is anything implementing :class:`~glimmer.engine.backend.Backend`;
the engine never imports a substrate.

Modules, one idea each, top-down:

* :mod:`.backend` — the Backend protocol and the values crossing it (nodes, executions)
* :mod:`.reconciler` — dispatch of one pass (§2.0)
* :mod:`.start` — start and markRunning (§2.1–§2.5); the planner decides, the engine applies
* :mod:`.step` — cancel, deadline, execute, and what the pass found (§2.6, §2.13)
* :mod:`.execute` — the sweep: tests in order, waves under the live cap, then release; the
  units it sweeps come from :mod:`glimmer.plan.units`
* :mod:`.node_unit` / :mod:`.pair_unit` / :mod:`.group_unit` — one unit per scope (§2.7–§2.9)
* :mod:`.unit` — overdue, lost executions and machinery errors, shared by the units
* :mod:`.harvest` — a terminated execution's exit, log and parse (§2.7a)
* :mod:`.results` — opening results and attempts, recording verdict-layer decisions (§2.11)
* :mod:`.checkpoint` — mid-flight readings (§2.12a)
* :mod:`.cordon` — stamp, cordon, heat, release (§2.10)
* :mod:`.stop` — cancel and deadline settlement
* :mod:`.terminate` — the terminal, terminal-path and deleted-path orderings (§2.14, §2.15)
* :mod:`.persist` — deliveries before, kills and checkpoints after the status write
* :mod:`.wake` — when to come back
* :mod:`.memory` — what the engine keeps between its passes (per run, by resourceVersion),
  and when it forgets (terminal, deleted, gone); no module of the engine holds state
* :mod:`.book` — the pass's copy-on-write, indexed working copy of the results
* :mod:`.podspec`, :mod:`.names`, :mod:`.keys` — the execution built once (§2.16), its
  deterministic names, and every key and constant of Appendices A and B
"""
