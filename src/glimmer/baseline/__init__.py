"""Fleet baselines: "ship thresholdless, measure, then pin", done for the user.

A baseline run (``spec.baseline: true``) measures a fleet known to be good and certifies
nothing. This package reads such runs, collects each planned test's metrics across the fleet
(:mod:`collect`), summarises them (:mod:`stats`), turns each distribution into a gate by a rule
stated per Aggregation (:mod:`rules`), checks that no healthy measured unit would fail and that
the linter finds nothing (:mod:`derive`), and writes the profile back with a comment on every
gate saying what it was made of (:mod:`write`). See docs/baselines.md.
"""
