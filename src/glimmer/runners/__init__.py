"""The real runner programs, one module per kind (``python -m glimmer.runners.<module>`` or
``glimmer-runner <kind>``). They import only :mod:`glimmer.contract` and the standard library,
so a minimal image or a bare host can run them without the rest of glimmer installed."""
