#!/usr/bin/env bash
# Make `ib_write_bw` available for the perftest runner tests (Debian package `perftest`: it also
# ships ib_write_lat). With no RDMA device the runners only ever start it to find it missing one.
exec "$(dirname "$0")/ensure_tool.sh" ib_write_bw perftest
