"""The reference implementation of the AMWS API: a real HTTP server over SQLite.

``build_server`` provisions a demo deployment; ``create_app`` wraps it as an ASGI app;
``amws-reference serve`` runs it under uvicorn and writes the target profile.
"""

from amws_conformance.reference_server._state import Server
from amws_conformance.reference_server.app import create_app
from amws_conformance.reference_server.cli import build_server

__all__ = ["Server", "build_server", "create_app"]
