"""Outbound visit events: the dispatcher that signs and sends them, and a receiver app.

The domain publishes ``VisitChanged``; the dispatcher, once installed, subscribes to it and
``emit`` queues the event. The receiver lives in :mod:`reference_server.webhooks.receiver` and
is imported only by whoever runs one.
"""

from amws_conformance.reference_server.webhooks.dispatcher import emit

__all__ = ["emit"]
