"""Each invitation fault breaks its rule; the ordinary tests show the rule on a normal server."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx

from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_invites import (
    INVITES,
    create,
    invite_body,
    new_host,
    watchlisted,
)


@contextmanager
def started(
    faulty: Callable[..., LiveServer], name: str, unique: Callable[[str], str]
) -> Iterator[tuple[httpx.Client, httpx.Client, str]]:
    """(api client, control client, a host user) of a server with the fault on."""
    server = faulty(name)
    with server.client("full") as api, server.control() as control:
        yield api, control, new_host(api, unique)


def test_fault_activation_not_rounded(faulty, unique) -> None:
    with started(faulty, "activation-not-rounded", unique) as (api, control, host):
        activation = invite_body(host, control)["activation"][:17] + "30.500Z"
        registration = create(api, host, control, activation=activation)
        assert api.get(f"{INVITES}/{registration}").json()["activation"] == activation


def test_fault_expiry_not_rounded(faulty, unique) -> None:
    with started(faulty, "expiry-not-rounded", unique) as (api, control, host):
        body = invite_body(host, control)
        expiry = body["expiry"][:17] + "10.000Z"
        registration = create(api, host, control, expiry=expiry)
        assert api.get(f"{INVITES}/{registration}").json()["expiry"] == expiry


def test_fault_identical_update_200(faulty, unique) -> None:
    with started(faulty, "identical-update-200", unique) as (api, control, host):
        registration = create(api, host, control, lastName="Same")
        response = api.put(f"{INVITES}/{registration}", json={"lastName": "Same"})
        assert response.status_code == 200
        assert api.get(f"{INVITES}/{registration}/status").json()["status"] == "VISIT_UPDATED"


def test_fault_watchlist_ignored_on_invite(faulty, unique) -> None:
    with started(faulty, "watchlist-ignored-on-invite", unique) as (api, control, host):
        identity = unique("ID")
        with watchlisted(api, unique, identityNumber=identity):
            body = invite_body(host, control, identityNumber=identity)
            assert api.post(INVITES, json=body).status_code == 201


def test_fault_watchlist_451_once(faulty, unique) -> None:
    with started(faulty, "watchlist-451-once", unique) as (api, control, host):
        identity = unique("ID")
        with watchlisted(api, unique, identityNumber=identity):
            body = invite_body(host, control, identityNumber=identity)
            assert api.post(INVITES, json=body).status_code == 451
            assert api.post(INVITES, json=body).status_code == 201


def test_fault_missing_host_201(faulty, unique) -> None:
    with started(faulty, "missing-host-201", unique) as (api, control, _host):
        body = invite_body(str(uuidlib.uuid4()), control)
        assert api.post(INVITES, json=body).status_code == 201


def test_fault_underscore_spelling_ignored(faulty, unique) -> None:
    with started(faulty, "underscore-spelling-ignored", unique) as (api, control, host):
        registration = create(api, host, control, last_name="Hopper", visit_type="audit")
        record = api.get(f"{INVITES}/{registration}").json()
        assert record["lastName"] is None and record["visitType"] is None


def test_fault_location_name_tolerated(faulty, unique) -> None:
    with started(faulty, "location-name-tolerated", unique) as (api, control, host):
        body = invite_body(host, control, location=unique("nowhere"))
        assert api.post(INVITES, json=body).status_code == 201


def test_fault_update_closed_accepted(faulty, unique) -> None:
    with started(faulty, "update-closed-accepted", unique) as (api, control, host):
        registration = create(api, host, control)
        cancel = {"status": "VISIT_CANCELLED"}
        assert api.put(f"{INVITES}/{registration}/status", json=cancel).status_code == 200
        response = api.put(f"{INVITES}/{registration}", json={"lastName": "Late"})
        assert response.status_code == 200


def test_fault_check_out_before_check_in(faulty, unique) -> None:
    with started(faulty, "check-out-before-check-in", unique) as (api, control, host):
        registration = create(api, host, control)
        response = api.put(f"{INVITES}/{registration}/status", json={"status": "VISITOR_CHECK_OUT"})
        assert response.status_code == 200
        assert api.get(f"{INVITES}/{registration}/status").json()["status"] == "VISITOR_CHECK_OUT"
