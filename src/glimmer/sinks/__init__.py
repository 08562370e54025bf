"""Sinks: where a run's envelopes go (specs/burnin.md §5).

* :mod:`.envelope` — the §5.3 envelope and ``deliveryId``, built in one place for every substrate
* :mod:`.sender` — the retry engine; the operator and CLI policies as data
* :mod:`.webhook`, :mod:`.jsonl`, :mod:`.directory`, :mod:`.prometheus` — the sinks
* :mod:`.signing` — the HMAC-SHA256 signature of webhook bodies
* :mod:`.outbox` — envelopes owed, on disk, so a restart re-sends them
* :mod:`.sinkset` — routing a transition to its sinks; a sink failure never reaches the run
* :mod:`.config` — ``sinks_from_specs``: a SinkSet from ``--sink`` flags and BurnInSink objects
* :mod:`.serve` — ``/metrics`` from envelopes already delivered (``glimmer sink serve``)

The engine never imports this package; a backend converts the engine's delivery into a
:class:`~glimmer.sinks.envelope.Transition` at its edge.
"""
