"""Parts of the server that hook into provisioning, the clock and the profile.

Hardware, virtual readers and webhooks install themselves here so the core stays small.
"""

from __future__ import annotations

import importlib

from reference_server._state import Server

_PARTS: tuple[str, ...] = (
    "reference_server.hardware.controllers",
    "reference_server.hardware.readers",
    "reference_server.webhooks.dispatcher",
)


def install(server: Server) -> None:
    for name in _PARTS:
        importlib.import_module(name).install(server)
