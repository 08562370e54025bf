"""tcp-baseline: iperf3 -J output (captured on this machine across two network namespaces) read
from the sender's summary."""

from __future__ import annotations

from pathlib import Path

from glimmer.runners.tcp_baseline_iperf import read_run

FIXTURES = Path(__file__).parent / "fixtures" / "tcp-baseline"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_the_sender_summary_gives_throughput_retransmits_and_rtt() -> None:
    run = read_run(_read("client-veth.json"))
    assert run.error is None
    assert run.version == "iperf 3.12"
    assert run.throughput_gbps is not None and round(run.throughput_gbps, 3) == 12.418
    assert run.bytes == 3104833536
    assert run.retransmits == 323
    assert run.mean_rtt_us == 269.0
    assert run.seconds == 2.000272


def test_without_tcp_info_retransmits_and_rtt_are_absent_not_zero() -> None:
    text = _read("client-veth.json").replace('"retransmits"', '"x_retransmits"')
    text = text.replace('"mean_rtt"', '"x_mean_rtt"')
    run = read_run(text)
    assert run.retransmits is None
    assert run.mean_rtt_us is None
    assert run.throughput_gbps is not None


def test_connection_errors_are_errors_and_retryable() -> None:
    for name in ("client-connection-refused.json", "client-connect-timeout.json"):
        run = read_run(_read(name))
        assert run.error is not None and "unable to connect" in run.error
        assert run.retryable
        assert run.throughput_gbps is None


def test_the_server_reads_what_it_received_after_a_warning_line() -> None:
    served = read_run(_read("server-served.json"))
    assert served.error is None and served.received_bytes == 560857088
    probed = read_run(_read("server-probe-consumed.json"))  # "WARNING: ..." precedes the JSON
    assert probed.error is not None and "unable to receive parameters" in probed.error


def test_output_that_is_not_json_is_an_error() -> None:
    run = read_run("iperf3: error - some failure\n")
    assert run.error is not None and "no JSON" in run.error
    assert read_run("").error is not None
