"""The embedded default target: a reference server started for one run, then stopped."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from amws_conformance.harness.target.profile import Profile, ProfileError, load


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
        command = [
            sys.executable,
            "-m",
            "amws_conformance.reference_server.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            ":memory:",
            "--profile-out",
            str(profile_path),
            *self._args,
        ]
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not profile_path.exists():
            if self._process.poll() is not None:
                output = (Path(self._dir.name) / "server.log").read_text(errors="replace")
                raise ProfileError(
                    f"the embedded reference server did not start: {output.strip()[-300:]}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise ProfileError(
                    "the embedded reference server did not write its profile in time"
                )
            time.sleep(0.02)
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
