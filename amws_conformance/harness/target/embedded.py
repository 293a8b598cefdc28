"""The embedded default target: a reference server started for one run, then stopped.

:func:`serve_command` and :func:`wait_for_profile` are the one way this project starts a served
reference server and waits for it (the embedded target, the project's tests and benchmarks).
The harness only runs the command: it never imports the reference server.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from amws_conformance.harness.target.profile import Profile, ProfileError, load

REFERENCE_MODULE = "amws_conformance.reference_server.cli"


class ServerDidNotStart(Exception):
    """The served reference server exited, or wrote no profile in time; ``str`` says which."""


def serve_command(
    profile_out: Path, *, db: str = ":memory:", args: Sequence[str] = ()
) -> list[str]:
    """``amws-reference serve`` on a loopback port the system picks, with this interpreter,
    writing the target profile to ``profile_out`` once it listens (``args``: further options)."""
    return [
        sys.executable,
        "-m",
        REFERENCE_MODULE,
        "serve",
        *("--host", "127.0.0.1", "--port", "0"),
        *("--db", db, "--profile-out", str(profile_out)),
        *args,
    ]


def wait_for_profile(
    process: subprocess.Popen[bytes],
    profile_out: Path,
    timeout: float = 30.0,
    log: Path | None = None,
) -> None:
    """Until ``process`` (started from :func:`serve_command`) has written its profile. The
    server listens before it writes the file, and writes it whole (a rename), so the target
    answers once the file is there. A process that exits first, or is not done within
    ``timeout`` seconds, is stopped and reaped, and :class:`ServerDidNotStart` says why (with
    the end of ``log``, the process's output, when given)."""
    deadline = time.monotonic() + timeout
    while not profile_out.exists():
        exited = process.poll() is not None
        if exited or time.monotonic() > deadline:
            if not exited:
                process.kill()
            process.wait(timeout=10)
            said = log.read_text(errors="replace").strip()[-300:] if log is not None else ""
            what = (
                f"exited with {process.returncode}"
                if exited
                else f"wrote no profile in {timeout:.0f} s"
            )
            raise ServerDidNotStart(f"the reference server {what}" + (f": {said}" if said else ""))
        time.sleep(0.02)


class EmbeddedServer:
    """``amws-reference serve`` on a free loopback port with a fresh in-memory database."""

    def __init__(self, args: Sequence[str] = ()) -> None:
        self._args = tuple(args)  # added to the serve command (Run.server_args)
        self._dir = tempfile.TemporaryDirectory(prefix="amws-embedded-")
        self._process: subprocess.Popen[bytes] | None = None
        self.profile: Profile | None = None

    def start(self, timeout: float = 30.0) -> Profile:
        profile_path = Path(self._dir.name) / "profile.yaml"
        log = open(Path(self._dir.name) / "server.log", "wb")  # noqa: SIM115 - lives with the process
        command = serve_command(profile_path, args=self._args)
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_profile(self._process, profile_path, timeout, log=Path(log.name))
        except ServerDidNotStart as error:
            self.stop()
            raise ProfileError(f"the embedded {error}") from None
        self.profile = load(profile_path)
        self.profile = Profile(data=self.profile.data, source="embedded reference server")
        return self.profile

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        self._dir.cleanup()
