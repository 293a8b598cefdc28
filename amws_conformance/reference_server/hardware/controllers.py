"""Simulated door controllers: what each one holds, and keeping that in step with the API.

Layout choice: one controller per system (a site controller) wired to every access control
point of the system (each point records it as ``_controller``). It holds exactly the system's
ACTIVE credentials, whatever lists they carry: a credential without lists is held but opens
nothing, and each held entry names the lists and the points they open, so a change of the
assignment shows on the hardware too. Beside the credentials the controller keeps a phonebook
of the persons holding at least one ACTIVE credential.

The held state is stored in the controller record and recomputed (``sync``) after every
credential write and every holder change (the domain's ``CredentialsChanged`` event), every
move of the server clock (``ClockMoved``), and before the control plane lists it (real time
passes as well, so a window may open between two calls). Whether writes reach the hardware at
all is the credentials part's decision (``CredentialPolicy.writes_reach_hardware``).
"""

from __future__ import annotations

from typing import Any

from amws_conformance.reference_server._events import ClockMoved, CredentialsChanged
from amws_conformance.reference_server._server import ServerView
from amws_conformance.reference_server.domain.credentials import CredentialPolicy, identifier_of
from amws_conformance.reference_server.store import Record

KIND = "controller"


def install(server: ServerView) -> None:
    """Hook the controllers into provisioning, the domain's credential events and the clock."""
    server.provisioners.append(sync_all)
    server.events.subscribe(CredentialsChanged, lambda event: _credentials_changed(server, event))
    server.events.subscribe(ClockMoved, lambda event: sync_all(server))


def _credentials_changed(server: ServerView, event: CredentialsChanged) -> None:
    """Push a system's credential changes to its controllers, in the writing request."""
    if server.policy(CredentialPolicy).writes_reach_hardware():
        sync(server, event.system)


def sync_all(server: ServerView) -> None:
    for system in server.systems():
        sync(server, system)


def _controller(server: ServerView, system: str) -> Record:
    """The system's controller, created (and wired to every point) on first use."""
    store = server.store
    found = store.all(KIND, system)
    if found:
        controller = found[0]
    else:
        empty = {"name": "Site controller", "_points": [], "_credentials": [], "_phonebook": []}
        controller = store.stored(KIND, store.insert(KIND, system, empty))
    for point in store.all("access_point", system, lambda p: not p.get("_controller")):
        store.replace("access_point", point["uuid"], {**point, "_controller": controller["uuid"]})
    return controller


def _covered_points(server: ServerView, system: str) -> dict[str, list[str]]:
    """Access control list uuid -> the points its rules cover."""
    return {
        acl["uuid"]: [rule["point"] for rule in acl.get("_rules", [])]
        for acl in server.store.all("acl", system)
    }


def _held(server: ServerView, system: str, points: list[str]) -> list[dict[str, Any]]:
    covered = _covered_points(server, system)
    # Which statuses a controller holds is the credentials part's decision (ACTIVE only).
    policy = server.policy(CredentialPolicy)
    held = []
    for record in server.store.all("credential", system):
        status = policy.status(record, server.clock.now())
        if not policy.held_by_controller(status):
            continue
        lists = list(record.get("accessControlListUuids") or [])
        opens = {p for acl in lists for p in covered.get(acl, [])}
        held.append(
            {
                "uuid": record["uuid"],
                "identifier": identifier_of(record),
                "status": status,
                "readerType": record.get("readerType"),
                "holderUuid": record.get("holderUuid"),
                "holderKind": record.get("_holderKind"),
                "activeDate": record.get("activeDate"),
                "expiryDate": record.get("expiryDate"),
                "useLimit": record.get("useLimit"),
                "accessControlListUuids": lists,
                "points": [p for p in points if p in opens],
            }
        )
    return held


def _phonebook(server: ServerView, system: str, held: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Persons holding an ACTIVE credential, once each, in the order their credentials came."""
    entries: dict[str, dict[str, Any]] = {}
    for credential in held:
        uuid = credential["holderUuid"]
        if credential["holderKind"] != "person" or not uuid or uuid in entries:
            continue
        person = server.store.get("person", uuid, system)
        if person is not None:
            entries[uuid] = {
                "uuid": uuid,
                "firstName": person.get("firstName"),
                "lastName": person.get("lastName"),
            }
    return list(entries.values())


def sync(server: ServerView, system: str) -> None:
    """Push the system's state to its controller: exactly the ACTIVE credentials, and phonebook."""
    store = server.store
    with store.transaction():
        controller = _controller(server, system)
        points = [p["uuid"] for p in store.all("access_point", system)]
        held = _held(server, system, points)
        state = {
            "_points": points,
            "_credentials": held,
            "_phonebook": _phonebook(server, system, held),
        }
        if any(controller.get(k) != v for k, v in state.items()):
            store.replace(KIND, controller["uuid"], {**controller, **state})


def controllers_of(server: ServerView, system: str) -> list[dict[str, Any]]:
    """The controllers of one system as the control plane shows them (no sync)."""
    return [_public(c, system) for c in server.store.all(KIND, system)]


def _public(controller: Record, system: str) -> dict[str, Any]:
    return {
        "controller": controller["uuid"],
        "name": controller["name"],
        "system": system,
        "points": list(controller.get("_points", [])),
        "credentials": list(controller.get("_credentials", [])),
        "phonebook": list(controller.get("_phonebook", [])),
    }


def listing(server: ServerView) -> list[dict[str, Any]]:
    """Every controller of every system, after bringing each up to date with the clock."""
    if server.policy(CredentialPolicy).writes_reach_hardware():
        sync_all(server)
    return [entry for system in server.systems() for entry in controllers_of(server, system)]
