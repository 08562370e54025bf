"""glimmer.schedule: BurnInSchedule semantics (specs/burnin.md §1.5, §7.1) as pure functions.

The grammar of ``spec.schedule`` and ``spec.timeZone`` lives in the API layer
(``glimmer.api.cron``, ``glimmer.api.duration``, ``glimmer.api.cadence``), so a schedule a
user wrote is refused at load, field and line named, rather than first at its first tick.

* ``ticks``: which tick is due at a time (no bursts, deadline, backlog resync).
* ``history``: the runs a schedule owns, newest first, and which ones history pruning deletes.
* ``observe``: the status read off those runs, and the ``ScheduleValid`` condition.
* ``stamp``: the run a tick creates (deterministic name, label, annotation, template).
* ``decide``: one reconcile: (schedule, owned runs, now) -> an ordered list of actions.
* ``actions``: those actions and the order-preserving ``apply`` a driver runs them with.
* ``keys``: the label, annotation and Appendix A constants.

The simulator driver is ``glimmer.cli.schedule_cmd`` (``glimmer schedule run``).
"""
