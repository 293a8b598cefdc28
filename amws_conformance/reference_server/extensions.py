"""Parts of the server that hook into provisioning, the profile and the domain's events.

Hardware, virtual readers and webhooks install themselves here so the core stays small: each
``install`` registers typed hooks on the server (provisioners, profile extenders, background
workers) and subscribes to the domain events it follows (``reference_server/_events.py``).
"""

from __future__ import annotations

from amws_conformance.reference_server._state import Server
from amws_conformance.reference_server.hardware import controllers, readers
from amws_conformance.reference_server.webhooks import dispatcher


def install(server: Server) -> None:
    for part in (controllers, readers, dispatcher):
        part.install(server)
