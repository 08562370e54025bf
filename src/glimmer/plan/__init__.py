"""glimmer.plan: everything decided once, when a run starts, and the pure rules of its units.

The engine calls :func:`glimmer.plan.start.start_run` once per run (no plan pinned yet) and
applies the :class:`~glimmer.plan.decision.StartDecision` it returns. Modules, one idea each:

* :mod:`.start` — start_run: profile, targets, admission, plan, conditions (§2.1–§2.4)
* :mod:`.decision` — Admitted | Refused, the start's outcome
* :mod:`.nodes` — NodeInfo, a node as a backend lists it
* :mod:`.targets` — nodeNames / nodeSelector → target node names (§1.3)
* :mod:`.admission` — holders, the precedence order, TargetsBusy / AdmittedByForce (§2.2)
* :mod:`.resolve`, :mod:`.variants` — profile entries → planned tests, variant cells (§2.3)
* :mod:`.build` — buildPlan: every refusal at start, in order; the PlanDocument (§2.4)
* :mod:`.review` — ThresholdsSound and PlanExpanded of a pinned plan (§2.5)
* :mod:`.conditions` — condition types and reasons, the 1024-byte clamp
* :mod:`.grace` — configuration vs transient errors, the 2-minute resolve grace (§2.1)
* :mod:`.builtin` — built-in tests and profiles; a profileRef's built-in fallback
* :mod:`.slots` — slot costs 1/2/N and the wave interlock (§2.6)
* :mod:`.units` — the units of a pinned plan, the one enumeration the engine and progress read
* :mod:`.images` — runner image resolution by vendor (§2.16)
* :mod:`.env`, :mod:`.quantity` — BURNIN_* environment, durations, deadlines (§2.16)
* :mod:`.lint`, :mod:`.summary` — linting what a user wrote; a profile's plan summary
"""
