"""glimmer.schedule: BurnInSchedule semantics (specs/burnin.md §1.5, §7.1) as pure functions.

* ``duration``: Go-style durations for ``@every``.
* ``cron``: the 5-field cron expression and its next fire time on a zone's wall clock.
* ``cadence``: a schedule's text and zone parsed into something with ``next(after)``.
* ``ticks``: which tick is due at a time (no bursts, deadline, backlog resync).
* ``history``: the runs a schedule owns, newest first, and which ones history pruning deletes.
* ``observe``: the status read off those runs, and the ``ScheduleValid`` condition.
* ``stamp``: the run a tick creates (deterministic name, label, annotation, template).
* ``decide``: one reconcile: (schedule, owned runs, now) -> an ordered list of actions.
* ``actions``: those actions and the order-preserving ``apply`` a driver runs them with.
* ``keys``: the label, annotation and Appendix A constants.

The simulator driver is ``glimmer.cli.schedule_cmd`` (``glimmer schedule run``).
"""
