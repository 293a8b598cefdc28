"""Authentication, permissions, hardening and per-key encryption, through HTTP."""

from __future__ import annotations

import asyncio
import secrets

import httpx
import pytest

from amws_conformance.reference_server._crypto import decrypt_text, encrypt_text
from amws_conformance.reference_server.app import create_app
from tests.reference_server.conftest import LiveServer

DEPTS = "/api/ws/v1/departments"


def _get(live: LiveServer, header: str | None) -> httpx.Response:
    headers = {} if header is None else {"Authorization": header}
    return httpx.get(f"{live.base_url}{DEPTS}", headers=headers)


def test_bearer_prefix_and_bare_key_are_equal(live: LiveServer) -> None:
    key = live.profile["keys"]["full"]
    bare, bearer = _get(live, key), _get(live, f"Bearer {key}")
    assert bare.status_code == bearer.status_code == 200
    assert bare.json() == bearer.json()


@pytest.mark.parametrize("length", [0, 63, 257, 400])
def test_header_outside_64_to_256_is_401(live: LiveServer, length: int) -> None:
    response = _get(live, "k" * length)
    assert response.status_code == 401
    assert set(response.json()) == {"code", "reason"}


def test_missing_unknown_and_disabled_keys_are_401(live: LiveServer) -> None:
    assert _get(live, None).status_code == 401
    assert _get(live, secrets.token_hex(32)).status_code == 401
    assert _get(live, live.profile["keys"]["disabled"]).status_code == 401


def test_key_without_permission_gets_403_and_nothing_changes(live: LiveServer, api, unique) -> None:
    name = unique("forbidden")
    with live.client("none") as none:
        response = none.post(DEPTS, json={"name": name})
    assert response.status_code == 403
    assert name not in {d["name"] for d in api.get(DEPTS).json()}


def test_readonly_key_reads_but_cannot_write(live: LiveServer, api, unique) -> None:
    uuid = api.post(DEPTS, json={"name": unique("ro")}).json()["uuid"]
    with live.client("readonly") as readonly:
        assert readonly.get(f"{DEPTS}/{uuid}").status_code == 200
        assert readonly.put(f"{DEPTS}/{uuid}", json={"name": unique("renamed")}).status_code == 403
        assert readonly.delete(f"{DEPTS}/{uuid}").status_code == 403
    assert api.get(f"{DEPTS}/{uuid}").status_code == 200


def test_api_key_never_opens_the_control_plane(live: LiveServer) -> None:
    response = httpx.get(
        f"{live.base_url}/_reference/settings",
        headers={"Authorization": f"Bearer {live.profile['keys']['full']}"},
    )
    assert response.status_code == 401


def _get_as(live: LiveServer, host: str, headers: dict[str, str]) -> httpx.Response:
    """GET the departments as a peer at ``host``.

    The hardening setting judges the peer address; an in-process ASGI transport lets the
    test present a non-loopback peer without sending traffic off this machine.
    """

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(live.server), client=(host, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://reference") as client:
            return await client.get(DEPTS, headers=headers)

    return asyncio.run(send())


@pytest.fixture
def loopback_only(control: httpx.Client):
    control.put("/_reference/settings", json={"restrict_to_localhost": True}).raise_for_status()
    yield
    control.put("/_reference/settings", json={"restrict_to_localhost": False}).raise_for_status()


def test_restrict_to_localhost_refuses_others_before_authentication(
    live: LiveServer, loopback_only: None
) -> None:
    key = {"Authorization": live.profile["keys"]["full"]}
    refused = _get_as(live, "203.0.113.7", key)
    unauthenticated = _get_as(live, "203.0.113.7", {})
    assert refused.status_code == unauthenticated.status_code == 403
    assert _get_as(live, "::1", key).status_code == 200


def test_restrict_to_localhost_is_off_by_default(live: LiveServer, control: httpx.Client) -> None:
    assert control.get("/_reference/settings").json()["restrict_to_localhost"] is False
    key = {"Authorization": live.profile["keys"]["full"]}
    assert _get_as(live, "203.0.113.7", key).status_code == 200


def test_encrypting_key_sends_and_receives_listed_fields_encrypted(
    live: LiveServer, api, unique
) -> None:
    settings = live.profile["keys"]["encrypted"]
    secret, iv = settings["secret"], settings["iv"]
    assert "name" in settings["fields"]
    name = unique("cipher")
    with live.client("encrypted") as client:
        created = client.post(DEPTS, json={"name": encrypt_text(name, secret, iv)})
        assert created.status_code == 201
        uuid = created.json()["uuid"]
        seen = client.get(f"{DEPTS}/{uuid}").json()
    assert seen["name"] != name
    assert decrypt_text(seen["name"], secret, iv) == name
    assert seen["uuid"] == uuid  # fields off the list travel in plain text
    assert api.get(f"{DEPTS}/{uuid}").json()["name"] == name


def test_encrypting_key_refuses_plain_text_in_listed_fields(live: LiveServer, unique) -> None:
    with live.client("encrypted") as client:
        response = client.post(DEPTS, json={"name": unique("plain")})
    assert response.status_code == 422
    assert "name" in response.json()["errors"]
