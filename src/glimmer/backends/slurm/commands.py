"""Calling Slurm's own client programs: every call bounded, every failure a BackendError.

The slurm substrate speaks to the cluster only through the programs a site already has
(``sbatch``, ``squeue``, ``scontrol``, ``scancel``, ``sinfo``), never through a REST daemon a
site may not run. A client that cannot reach ``slurmctld`` does not fail fast (``sinfo`` takes
about 9 s to give up, ``srun`` retries for minutes), so every call has a timeout, and a timeout
is a transient :class:`~glimmer.engine.backend.BackendError`: the engine's pass stops and is
retried, never turned into a verdict.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from glimmer.engine.backend import BackendError

# Long enough for a busy controller, short enough that a pass never hangs on a dead one.
DEFAULT_TIMEOUT = 30.0


class SlurmCommandError(BackendError):
    """A Slurm client program failed, timed out or is not installed; the message names the
    command and what it said."""


@dataclass(frozen=True)
class Slurm:
    """How to call the cluster's client programs.

    ``env`` is added to this process's environment for every call (``SLURM_CONF``, a ``PATH``
    whose first entry holds the site's wrappers); ``bin_dir``, when given, is where the
    programs are looked up first; ``timeout`` bounds every call in seconds.
    """

    env: Mapping[str, str] = field(default_factory=dict)
    bin_dir: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    def program(self, name: str) -> str:
        """The path (or bare name, found on PATH) a program is started with."""
        return os.path.join(self.bin_dir, name) if self.bin_dir else name

    def run(self, *argv: str, input: str | None = None, check: bool = True) -> str:
        """Run ``argv`` (its first element a program name such as ``squeue``) and return its
        stdout. Raises :class:`SlurmCommandError` on a timeout, a missing program, or (with
        ``check``) a non-zero exit, naming the command and its stderr."""
        return self.call(*argv, input=input, check=check).stdout

    def call(
        self, *argv: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Like :meth:`run`, returning the whole completed process (exit code, stderr)."""
        if not argv:
            raise ValueError("no Slurm command given")
        command = [self.program(argv[0]), *argv[1:]]
        shown = " ".join(argv)
        try:
            done = subprocess.run(
                command,
                input=input,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                env={**os.environ, **self.env},
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise SlurmCommandError(
                f"{shown}: no answer within {self.timeout:g} s (is slurmctld reachable?)"
            ) from exc
        except OSError as exc:
            raise SlurmCommandError(f"{shown}: cannot start {command[0]}: {exc}") from exc
        if check and done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise SlurmCommandError(
                f"{shown}: exit {done.returncode}: {said[-1] if said else 'no message'}"
            )
        return done


def key_values(record: str) -> dict[str, str]:
    """One record of ``scontrol show <entity> -o`` (``Key=Value`` pairs on one line) as a dict.

    Values may contain spaces (``Reason=being tested [root@...]``, ``OS=Linux 6.1 #1 SMP``):
    a word that has no ``=`` of its own, or whose text before ``=`` is not a key Slurm would
    write, continues the previous value.
    """
    fields: dict[str, str] = {}
    key = ""
    for word in record.split(" "):
        name, eq, value = word.partition("=")
        if eq and name and _is_key(name):
            key = name
            fields[key] = value
        elif key:
            fields[key] = f"{fields[key]} {word}"
    return {k: v.strip() for k, v in fields.items()}


def _is_key(name: str) -> bool:
    # Slurm's keys are CamelCase words, some with ':' or '/' (``Gres/gpu``, ``TRES``): never
    # beginning with a digit or punctuation, never containing brackets or quotes.
    return name[0].isalpha() and all(c.isalnum() or c in "_:/." for c in name)


def records(text: str) -> list[dict[str, str]]:
    """Every record of ``scontrol show <entity> -o`` output, one per non-empty line."""
    return [key_values(line) for line in text.splitlines() if line.strip()]
