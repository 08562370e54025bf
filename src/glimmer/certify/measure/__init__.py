"""Measurements read from workload logs (specs/certify.md §6, §7.5).

* ``bandwidth``: nccl-tests tables and the LogProfile ``bandwidthResult`` recipe;
* ``goodput``: goodput and step figures from training logs;
* ``expect``: what a healthy group should measure, per architecture and path, with sources;
* ``threshold``: a certification's thresholds judged against measured values;
* ``render``: writing an nccl-tests log in the tool's own format (for a simulated run).
"""
