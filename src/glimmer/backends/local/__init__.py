"""The local substrate: this host, runner processes under detached supervisors, the file run
store as the checkpoint (:mod:`.backend`). Nothing is imported here: the supervisor
(``python -m glimmer.backends.local.supervise``) loads this package and must start fast."""
