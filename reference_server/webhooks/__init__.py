"""Outbound visit events: the dispatcher that signs and sends them, and a receiver app.

``emit`` is the entry point for the rest of the server; the receiver lives in
:mod:`reference_server.webhooks.receiver` and is imported only by whoever runs one.
"""

from reference_server.webhooks.dispatcher import emit

__all__ = ["emit"]
