"""A test runner for one rank of a collective, run by the real runner plumbing (a BurnInTest's
``runner.command``): a real exchange over TCP through ``BURNIN_ROOT_HOST``.

Rank 0 listens on ``GROUP_EXCHANGE_PORT``; every other rank connects to rank 0, sends its rank
and waits for the answer; rank 0 sums every rank it heard (its own 0 included) and replies
``sum <total>`` to each, or ``incomplete <missing ranks>`` once ``BURNIN_DURATION_SECONDS`` pass
without every rank. Every rank prints ``key=value`` metrics and one marker, exit 0/2/3 as the
runner contract says. ``GROUP_EXCHANGE_HANG_RANK=i`` makes rank i hang without ever connecting
(writing its pid to ``GROUP_EXCHANGE_PID_DIR/rank-<i>.pid`` first, so the test can stop it).
"""

from __future__ import annotations

import os
import socket
import sys
import time

PREFIX = "GROUP_EXCHANGE"


def _say(marker: str, reason: str, code: int) -> int:
    print(f"{PREFIX}_{marker}: {reason}" if reason else f"{PREFIX}_{marker}")
    return code


def _root(nranks: int, port: int, window: float, host: str) -> int:
    started = time.monotonic()
    listener = socket.create_server((host, port), reuse_port=False)
    listener.settimeout(0.2)
    peers: dict[int, socket.socket] = {}
    while len(peers) < nranks - 1 and time.monotonic() - started < window:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(5)
        line = conn.makefile().readline().split()
        if len(line) == 2 and line[0] == "rank":
            peers[int(line[1])] = conn
    missing = [r for r in range(1, nranks) if r not in peers]
    elapsed = (time.monotonic() - started) * 1000
    print(f"ranks_reported={len(peers) + 1}")
    print(f"exchange_ms={elapsed:.1f}")
    if missing:
        for conn in peers.values():
            conn.sendall(f"incomplete {','.join(map(str, missing))}\n".encode())
            conn.close()
        named = ", ".join(f"rank {r}" for r in missing)
        return _say("ERROR", f"{named} never reported within {window:.0f} s", 3)
    total = sum(peers)  # rank 0 adds 0
    for conn in peers.values():
        conn.sendall(f"sum {total}\n".encode())
        conn.close()
    print(f"rank_sum={total}")
    return _say("PASS", f"{nranks} ranks exchanged, sum {total}", 0)


def _rank(rank: int, nranks: int, root: str, port: int, window: float) -> int:
    deadline = time.monotonic() + window + 30
    while True:
        try:
            conn = socket.create_connection((root, port), timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                return _say("ERROR", f"rank 0 at {root}:{port} never listened", 3)
            time.sleep(0.1)
    conn.settimeout(window + 30)
    conn.sendall(f"rank {rank}\n".encode())
    answer = conn.makefile().readline().split()
    print(f"ranks_reported={nranks if answer[:1] == ['sum'] else 0}")
    if answer[:1] != ["sum"]:
        return _say("ERROR", f"rank 0 answered {' '.join(answer) or 'nothing'}", 3)
    print(f"rank_sum={answer[1]}")
    return _say("PASS", f"rank {rank} of {nranks} heard sum {answer[1]}", 0)


def main() -> int:
    env = os.environ
    if "BURNIN_RANK" not in env or "BURNIN_NRANKS" not in env:
        return _say("SKIP", "not a rank of a collective (no BURNIN_RANK)", 2)
    rank, nranks = int(env["BURNIN_RANK"]), int(env["BURNIN_NRANKS"])
    port = int(env.get("GROUP_EXCHANGE_PORT", "5399"))
    window = float(env.get("BURNIN_DURATION_SECONDS", "5"))
    if env.get("GROUP_EXCHANGE_HANG_RANK") == str(rank):
        pid_dir = env.get("GROUP_EXCHANGE_PID_DIR", "")
        if pid_dir:
            with open(os.path.join(pid_dir, f"rank-{rank}.pid"), "w") as f:
                f.write(str(os.getpid()))
        while True:
            time.sleep(60)
    if rank == 0:
        return _root(nranks, port, window, env.get("BURNIN_ROOT_HOST", "0.0.0.0"))
    return _rank(rank, nranks, env["BURNIN_ROOT_HOST"], port, window)


if __name__ == "__main__":
    sys.exit(main())
