"""The reference server's control plane (``/_reference/...``), as typed calls.

:class:`ControlPlane` is a plain :class:`httpx.Client` based at the SERVER ROOT, so a full path
(``control.get("/_reference/clock")``) still works; the methods below are what the suites need,
and each raises :class:`ControlPlaneError` on an answer outside 2xx.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import httpx

PREFIX = "/_reference"


class ControlPlaneError(httpx.HTTPStatusError):
    """The control plane answered a call outside 2xx."""


class ControlPlane(httpx.Client):
    """Clock, settings and the hardware and audit views of the reference server."""

    def _call(self, method: str, tail: str, json: dict[str, Any] | None = None) -> Any:
        response = self.request(method, f"{PREFIX}/{tail}", json=json)
        if not response.is_success:
            raise ControlPlaneError(
                f"control plane {method} {PREFIX}/{tail} answered {response.status_code}: "
                f"{response.text[:300]}",
                request=response.request,
                response=response,
            )
        return response.json()

    def _object(self, method: str, tail: str, json: dict[str, Any] | None = None) -> dict[str, Any]:
        """A call the control plane answers with a JSON object."""
        answer: dict[str, Any] = self._call(method, tail, json)
        return answer

    def _list(self, tail: str) -> list[dict[str, Any]]:
        """A read the control plane answers with a JSON list of objects."""
        answer: list[dict[str, Any]] = self._call("GET", tail)
        return answer

    # -- clock ---------------------------------------------------------------------------
    def now(self) -> datetime:
        """The server's now (aware, UTC)."""
        text = self._call("GET", "clock")["now"]
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    def advance(self, seconds: float) -> None:
        """Move the server's clock by ``seconds`` (back when negative)."""
        self._call("PUT", "clock", {"advance_seconds": seconds})

    def set_now(self, when: datetime) -> None:
        """Put the server's clock at ``when`` (an aware datetime)."""
        if when.tzinfo is None:
            raise ValueError("set_now needs an aware datetime")
        self._call("PUT", "clock", {"now": when.astimezone(UTC).isoformat()})

    # -- administrator settings ----------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        return self._object("GET", "settings")

    def update_settings(self, **changes: Any) -> dict[str, Any]:
        """Change the named settings; every setting as it is afterwards."""
        return self._object("PUT", "settings", changes)

    @contextmanager
    def settings_changed(self, **changes: Any) -> Iterator[dict[str, Any]]:
        """The settings changed for the block; the previous values are put back on exit."""
        before = self.settings()
        current = self.update_settings(**changes)
        try:
            yield current
        finally:
            self.update_settings(**{name: before[name] for name in changes})

    # -- requests from elsewhere --------------------------------------------------------
    def as_peer(
        self,
        peer: str,
        method: str,
        path: str,
        headers: dict[str, str] | None = None,
        json: Any = None,
    ) -> tuple[int, Any]:
        """One API request the server serves as if it came from client address ``peer``
        (the suite's own traffic always comes from this machine): its status and body."""
        sent = {"peer": peer, "method": method, "path": path, "headers": headers or {}}
        answer = self._call("POST", "peer-request", {**sent, "json": json})
        return answer["status"], answer["body"]

    # -- what the hardware and the audit trail saw --------------------------------------
    def relay_events(self) -> list[dict[str, Any]]:
        return self._list("hardware/relay-events")

    def access_events(self) -> list[dict[str, Any]]:
        return self._list("hardware/access-events")

    def audit(self) -> list[dict[str, Any]]:
        return self._list("audit")

    def outbox(self) -> list[dict[str, Any]]:
        """The e-mails the server would have sent (it sends none): kind, to, user, password."""
        return self._list("outbox")

    def controller_credentials(self) -> list[dict[str, Any]]:
        """What each controller holds now: its credentials and its phonebook."""
        return self._list("hardware/credentials")

    def watchlist_flags(self) -> dict[str, Any]:
        """The flags raised on hardware per watchlist entry (``flags``) and their ``log``."""
        return self._object("GET", "hardware/watchlist-flags")

    # -- staging ------------------------------------------------------------------------
    def empty_photo(self, photo_id: str) -> None:
        """Make the stored bytes of a photo empty (storage that lost them)."""
        self._call("DELETE", f"photos/{photo_id}/content")
