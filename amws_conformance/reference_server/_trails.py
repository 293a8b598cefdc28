"""The trails the admin screens show: the audit trail (who did what) and the relay log.

Kept apart from the server state so a domain module can write them without importing
``_state``, which imports the fault package, which imports the domain modules' policies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amws_conformance.reference_server._time import format_instant

if TYPE_CHECKING:
    from amws_conformance.reference_server._server import ServerView


def record_audit(server: ServerView, system: str, key_name: str, action: str, target: str) -> None:
    """Append an audit event (who did what), as the admin screens' audit trail would."""
    server.store.insert(
        "audit",
        system,
        {
            "at": format_instant(server.clock.now()),
            "key": key_name,
            "action": action,
            "target": target,
        },
    )


def record_relay(
    server: ServerView, system: str, point: str, cause: str, key_name: str = ""
) -> None:
    """Append a relay firing of an access control point's simulated relay."""
    server.store.insert(
        "relay_event",
        system,
        {"at": format_instant(server.clock.now()), "point": point, "cause": cause, "key": key_name},
    )
