"""Pair combination: one verdict about the LINK between a server and a client (§2.8).

A Pair verdict is never split per node. The client is the deciding side (it drives the
measurement), the server's word still counts, and a server that exits clean before any client
ran has measured nothing, so that is an Error rather than a pass.
"""

from __future__ import annotations

from glimmer.contract.vocab import ParsedResult, RunnerVerdict
from glimmer.verdict.ends import NEVER_RAN_EXIT, PRECEDENCE, end_summary


def _merged_evidence(
    server: ParsedResult | None, client: ParsedResult | None
) -> tuple[dict[str, str], frozenset[str], tuple[str, ...]]:
    """Server's readings first, then the client's (the client wins a shared key). ``n/a`` from
    either end stands only where neither end reported a value; rejected names deduplicated."""
    ends = [p for p in (server, client) if p is not None]
    metrics: dict[str, str] = {}
    declared: set[str] = set()
    invalid: dict[str, None] = {}
    for end in ends:
        metrics.update(end.metrics)
        declared |= end.unmeasurable
        invalid.update(dict.fromkeys(end.invalid_names))
    return metrics, frozenset(declared - metrics.keys()), tuple(invalid)


def _deciding(
    server: ParsedResult | None, client: ParsedResult | None
) -> tuple[RunnerVerdict, int]:
    if server is None and client is None:
        return RunnerVerdict.ERROR, NEVER_RAN_EXIT
    if client is None:
        assert server is not None
        # A clean server exit with no client measured no link at all.
        if server.verdict is RunnerVerdict.PASS:
            return RunnerVerdict.ERROR, server.exit_code
        return server.verdict, server.exit_code
    if server is None:
        return client.verdict, client.exit_code
    for verdict in PRECEDENCE:
        for end in (client, server):
            if end.verdict is verdict:
                return verdict, end.exit_code
    # A verdict outside the four cannot come from the parser; treat it as the client's Error.
    return RunnerVerdict.ERROR, client.exit_code


def pair_message(
    server_node: str, client_node: str, server: ParsedResult | None, client: ParsedResult | None
) -> str:
    """``pair <server> <-> <client> (this verdict is about the LINK, …): <server>; <client>``."""
    return (
        f"pair {server_node} <-> {client_node} (this verdict is about the LINK, not about "
        f"either endpoint): {end_summary(f'server {server_node}', server)}; "
        f"{end_summary(f'client {client_node}', client)}"
    )


def combine_pair(
    server_node: str,
    client_node: str,
    server: ParsedResult | None,
    client: ParsedResult | None,
) -> ParsedResult:
    """Combine the two ends of a link into one parsed result for :func:`attempt_outcome`.

    ``None`` means that end never reported (no pod, or not terminated). The combined result's
    message is the pair summary; it is never flagged as an undeclared skip because the summary
    already explains an end that exited 2 without a marker.
    """
    verdict, exit_code = _deciding(server, client)
    metrics, unmeasurable, invalid = _merged_evidence(server, client)
    artifacts = tuple(a for end in (server, client) if end is not None for a in end.artifacts)
    return ParsedResult(
        verdict=verdict,
        exit_code=exit_code,
        metrics=metrics,
        unmeasurable=unmeasurable,
        invalid_names=invalid,
        message=pair_message(server_node, client_node, server, client),
        undeclared_skip=False,
        artifacts=artifacts,
    )
