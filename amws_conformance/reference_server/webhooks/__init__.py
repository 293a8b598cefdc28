"""Outbound visit events: the dispatcher that signs and sends them.

The domain publishes ``VisitChanged``; the dispatcher, once installed, subscribes to it and
``emit`` queues the event. The server has no receiver of its own: the harness's
(``harness/target/receiver.py``, written from doc3 alone) receives and verifies what it sends,
in a run and in the project's tests alike.
"""

from amws_conformance.reference_server.webhooks.dispatcher import emit

__all__ = ["emit"]
