"""The control plane's ``peer-request`` hook: one API request served as if from another address
(how the suite observes AUTH-RESTRICT-TO-LOCALHOST without importing the server)."""

from __future__ import annotations

import httpx

from tests.reference_server.conftest import LiveServer

DEPTS = "/api/ws/v1/departments"
HOOK = "/_reference/peer-request"


def _as(control: httpx.Client, peer: str, headers: dict[str, str]) -> httpx.Response:
    return control.post(
        HOOK, json={"peer": peer, "method": "GET", "path": DEPTS, "headers": headers}
    )


def test_a_peer_request_is_served_as_from_that_address(live: LiveServer, control) -> None:
    full = {"Authorization": live.profile["keys"]["full"]}
    answered = _as(control, "203.0.113.7", full)
    assert answered.status_code == 200, answered.text
    assert answered.json()["status"] == 200 and isinstance(answered.json()["body"], list)
    control.put("/_reference/settings", json={"restrict_to_localhost": True}).raise_for_status()
    try:
        assert _as(control, "203.0.113.7", full).json()["status"] == 403
        assert _as(control, "127.0.0.1", full).json()["status"] == 200
        assert _as(control, "::1", full).json()["status"] == 200
    finally:
        control.put("/_reference/settings", json={"restrict_to_localhost": False})


def test_the_hook_needs_the_control_token_an_address_and_an_api_path(live: LiveServer) -> None:
    full = {"Authorization": live.profile["keys"]["full"]}
    with live.client("full") as api:
        body = {"peer": "203.0.113.7", "path": DEPTS, "headers": full}
        assert api.post(HOOK, json=body).status_code == 401
    with live.control() as control:
        assert _as(control, "not-an-address", full).status_code == 400
        wrong = {"peer": "203.0.113.7", "path": "/_reference/settings"}
        assert control.post(HOOK, json=wrong).status_code == 400
