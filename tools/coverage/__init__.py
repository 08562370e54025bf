"""The fault-coverage sweep: inject each fault mode of the simulator alone, run the built-in
profiles on the nodes it reaches and on nodes it does not, and record which detector saw it
(docs/fault-coverage.md). Test support and a doc generator, outside the wheel.

- :mod:`tools.coverage.sweep`: the scenarios and the judging;
- :mod:`tools.coverage.engine`: settling through the run engine on the simulator backend (the
  method the document records); run ``python -m tools.coverage --write docs/fault-coverage.md``;
- :mod:`tools.coverage.harness`: settling one unit through the simulated runners, the contract
  parser and the verdict rules, without the engine (a second settlement path, for tests only);
- :mod:`tools.coverage.detectors`: the mode table's detectors and corrections, as the sweep
  uses them;
- :mod:`tools.coverage.doc`: rendering the document.
"""
