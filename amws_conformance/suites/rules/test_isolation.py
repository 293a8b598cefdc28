"""System scope: another system's records are not found, not changed and never listed.

Generated from the spec. Every operation with a UUID path parameter is called with the
``other_system`` key against records the run created (with the ``full`` key) in the first
system: it must answer 404 like an unknown UUID (403 for the two photo downloads, which doc3
states specifically), and a write must leave the record as it was (re-read with the full key).
Every list and search of the spec is read with the ``other_system`` key and must not show a
record of the first system, nor count it in a total.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.fixtures import Factories
from amws_conformance.fixtures.images import jpeg_bytes
from amws_conformance.harness.target.client import TargetClient
from amws_conformance.suites.rules._run_shared import shared_photo

V1 = "/api/ws/v1"
SCOPE_404 = "CONV-SYSTEM-SCOPE-404"
SCOPE_LISTS = "CONV-SYSTEM-SCOPE-LISTS"
PHOTO_403 = "PHOTO-403-OTHER-SYSTEM"
# The photo downloads answer 403 for another system's photo (doc3) or 404 (doc1's scoping
# rule): the documents contradict each other there, and the rule names them.
PHOTO_OPS = frozenset(next(r for r in spec.rules() if r.id == PHOTO_403).operations)

pytestmark = pytest.mark.requires("other_system")

# -- which record a UUID path parameter addresses ------------------------------------------
_PARAM_KIND = {
    "registrationId": "invite",
    "personUuid": "person",
    "userUuid": "user",
    "watchlistUuid": "watchlist",
    "entryUuid": "watchlist_entry",
}
_SEGMENT_KIND = {
    "departments": "department",
    "organisations": "organisation",
    "cost-centers": "cost_center",
    "visit-reason": "visit_reason",
    "locations": "location",
    "roles": "role",
    "groups": "group",
    "persons": "person",
    "users": "user",
    "credentials": "credential",
    "watchlists": "watchlist",
    "files": "staged_file",
    "photo": "photo",
    "thumbnail": "photo",
    "trigger": "access_control_point",
    "invites": "invite",
    "vehicles": "vehicle",
    "access-control-lists": "access_control_list",
    "access-control-points": "access_control_point",
    "match": "watchlist_entry",
}
NOT_CREATABLE = {
    "access_control_point": "access control points are built in the admin screens, "
    "the API cannot create one",
    "access_control_list": "access control lists are built in the admin screens",
    "vehicle": "vehicles are never created through the API",
}
_NAMED = {  # name-only kinds: (collection, create operation)
    "department": ("departments", "createDepartment"),
    "organisation": ("organisations", "createOrganisation"),
    "cost_center": ("cost-centers", "createCostCenter"),
    "visit_reason": ("visit-reason", "createVisitReason"),
    "group": ("groups", "createGroup"),
}


def uuid_params(op: spec.Operation) -> list[str]:
    return [
        p["name"]
        for p in op.parameters()
        if p.get("in") == "path" and spec.resolve(p.get("schema", {})).get("format") == "uuid"
    ]


def path_kinds(op: spec.Operation) -> dict[str, str | None]:
    """Kind of record behind each UUID path parameter (None: the suite knows no such kind)."""
    segments = op.path.split("/")
    kinds: dict[str, str | None] = {}
    for name in uuid_params(op):
        before = segments[segments.index("{" + name + "}") - 1]
        kinds[name] = _PARAM_KIND.get(name) or _SEGMENT_KIND.get(before)
    return kinds


# -- valid bodies for the writes (so only the scope can refuse them) ----------------------
BODIES: dict[str, Callable[[Factories], Any]] = {
    "updateDepartment": lambda f: f.named("updateDepartment", "dept"),
    "updateOrganisation": lambda f: f.named("updateOrganisation", "org"),
    "updateCostCenter": lambda f: f.named("updateCostCenter", "cc"),
    "updateVisitReason": lambda f: f.named("updateVisitReason", "vr"),
    "updateGroup": lambda f: f.named("updateGroup", "grp"),
    "updateLocation": lambda f: f.location(),
    "updateRole": lambda f: f.role(),
    "updatePerson": lambda f: f.person(),
    "updateUser": lambda f: f.user(),
    "updateCredential": lambda f: {"comments": "written through another system"},
    "updateWatchlist": lambda f: f.watchlist(),
    "createWatchlistEntry": lambda f: f.watchlist_entry(),
    "updateWatchlistEntry": lambda f: f.watchlist_entry(),
    "updateInvite": lambda f: {"firstName": "Changed"},
    "changeInviteStatus": lambda f: {"status": "VISIT_CANCELLED"},
}


def takes_json(op: spec.Operation) -> bool:
    body = spec.resolve(op.raw.get("requestBody")) or {}
    return "application/json" in body.get("content", {})


class Records:
    """Records of the first system, made on demand with the full key (one per kind).

    Each kind is made once per run and shared by every test asking for it (``Run.shared``
    books it to a set-up): the other system's calls must leave the records as they were, and
    each test checks that they did (a snapshot read with the full key before and after), so
    on a correct target none of them changes. The photo is the one of ``_run_shared`` that
    other suites only download too. The staged file, which a test deletes with the full key,
    is made per test."""

    def __init__(self, api: TargetClient, factories: Factories, run: Any) -> None:
        self.api, self.f, self.run = api, factories, run
        self.ids: dict[str, str] = {}
        self.info: dict[str, dict[str, Any]] = {}

    def __getitem__(self, kind: str) -> str:
        if kind not in self.ids:
            if kind == "staged_file":
                self.ids[kind] = self._staged_file()
            elif kind == "photo":
                # The photo the permission matrix and the rate-limit suite also only download.
                self.ids[kind] = shared_photo(self.run, self.api, self.f)
            else:
                made = self.run.shared(f"isolation:{kind}", lambda: self._make(kind))
                self.ids[kind], self.info[kind] = made
        return self.ids[kind]

    def _make(self, kind: str) -> tuple[str, dict[str, Any]]:
        make = getattr(self, f"_{kind}", None)
        uuid = make() if make else self._named(kind)
        return uuid, self.info.get(kind, {})

    def _post(self, path: str, body: dict[str, Any], kind: str) -> dict[str, Any]:
        response = self.api.post(V1 + path, json=body)
        assert response.status_code == 201, f"creating a {kind}: {response.text}"
        self.info[kind] = {**body, **response.json()}
        return response.json()

    def _named(self, kind: str) -> str:
        collection, create = _NAMED[kind]
        return self._post(f"/{collection}", self.f.named(create, kind[:4]), kind)["uuid"]

    def _location(self) -> str:
        return self._post("/locations", self.f.location(), "location")["uuid"]

    def _role(self) -> str:
        return self._post("/roles", self.f.role(), "role")["uuid"]

    def _person(self) -> str:
        return self._post("/persons", self.f.person(), "person")["uuid"]

    def _user(self) -> str:
        return self._post("/users", self.f.user(), "user")["uuid"]

    def _credential(self) -> str:
        body = self.f.credential(personUuid=self["person"])
        return self._post("/credentials", body, "credential")["uuid"]

    def _watchlist(self) -> str:
        return self._post("/watchlists", self.f.watchlist(), "watchlist")["uuid"]

    def _watchlist_entry(self) -> str:
        path = f"/watchlists/{self['watchlist']}/entries"
        return self._post(path, self.f.watchlist_entry(), "watchlist_entry")["uuid"]

    def _invite(self) -> str:
        return self._post("/invites", self.f.invite(self["user"]), "invite")["registrationId"]

    def _staged_file(self) -> str:
        image = jpeg_bytes(self.f.random.randrange(1 << 30))
        response = self.api.post(
            V1 + "/files/upload", files={"file": ("p.jpg", image, "image/jpeg")}
        )
        assert response.status_code == 200, f"uploading a photo: {response.text}"
        return response.json()["uuid"]

    # -- what the full key reads of a record ------------------------------------------
    def reads(self, kind: str) -> list[str]:
        uuid = self[kind]
        if kind in _NAMED:
            return [f"/{_NAMED[kind][0]}/{uuid}"]
        if kind == "watchlist_entry":
            # Apart, so that no other kind's read makes (or books) the watchlist.
            return [f"/watchlists/{self['watchlist']}/entries/{uuid}"]
        return {
            "location": [f"/locations/{uuid}"],
            "role": [f"/roles/{uuid}"],
            "person": [f"/persons/{uuid}", f"/credentials/by-person/{uuid}"],
            "user": [f"/users/{uuid}", f"/users/{uuid}/registrations"],
            "credential": [f"/credentials/{uuid}"],
            "watchlist": [f"/watchlists/{uuid}", f"/watchlists/{uuid}/entries"],
            "invite": [f"/invites/{uuid}"],
            "photo": [f"/photos/photo/{uuid}"],
            "staged_file": [],  # no read; checked by deleting it with the full key
        }[kind]

    def snapshot(self, kinds: Iterable[str]) -> list[tuple[str, int, Any]]:
        found = []
        for kind in kinds:
            for path in self.reads(kind):
                response = self.api.get(V1 + path)
                found.append((path, response.status_code, _content(response)))
        return found


def _content(response: httpx.Response) -> Any:
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    return response.content


def fill(template: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


# -- every operation with a UUID path parameter ---------------------------------------------
def _scoped_params() -> list[Any]:
    params = []
    for op in spec.operations():
        if not uuid_params(op):
            continue
        rules = [SCOPE_404] + ([PHOTO_403] if op.operation_id in PHOTO_OPS else [])
        params.append(pytest.param(op, marks=pytest.mark.rule(*rules), id=op.operation_id))
    return params


@pytest.mark.parametrize("op", _scoped_params())
def test_other_system_record_is_not_found(
    api, client, factories, amws_run, op: spec.Operation
) -> None:
    if not op.keyed:
        pytest.skip("signed media links carry no API key: the signature, not a system, scopes them")
    kinds = path_kinds(op)
    unknown = [name for name, kind in kinds.items() if kind is None]
    assert not unknown, f"the suite has no record factory for {op.operation_id} {unknown}"
    for kind in kinds.values():
        if kind in NOT_CREATABLE:
            pytest.skip(f"{op.operation_id}: {NOT_CREATABLE[kind]}")
    body = None
    if takes_json(op):
        assert op.operation_id in BODIES, f"the suite has no valid body for {op.operation_id}"
        body = BODIES[op.operation_id](factories)
    records = Records(api, factories, amws_run)
    path = fill(op.path, {name: records[kind] for name, kind in kinds.items()})
    before = records.snapshot(kinds.values())

    answer = client("other_system").request(op.method, path, json=body)

    if op.operation_id in PHOTO_OPS:
        # doc3's 403 and doc1's 404 for another system's UUID: the documents allow both.
        assert answer.status_code in (403, 404), f"{op.operation_id} of another system's photo"
        assert not answer.headers.get("content-type", "").startswith("image/")
    else:
        assert answer.status_code == 404, (
            f"{op.method} {op.path} with another system's key answered {answer.status_code}"
        )
    assert records.snapshot(kinds.values()) == before, "the other system's call changed the record"
    if "staged_file" in kinds.values():
        # The staged file is still there: the full key can delete it.
        assert api.delete(f"{V1}/files/{records['staged_file']}").status_code == 200


# -- every list and search ------------------------------------------------------------------
def _list_ops() -> list[Any]:
    found = []
    for op in spec.operations():
        if not op.keyed or op.path_parameters:
            continue
        reads = op.method == "GET" or str(op.permission or "").startswith("Read")
        if reads:
            found.append(pytest.param(op, marks=pytest.mark.rule(SCOPE_LISTS), id=op.operation_id))
    return found


def _list_kind(op: spec.Operation) -> str:
    segments = [s for s in op.path.split("/") if s and s != "search"]
    return _SEGMENT_KIND[segments[-1]]


def _rows(body: Any) -> list[dict[str, Any]]:
    if isinstance(body, dict):
        return body.get("entries", body.get("matches", []))
    return body


def _ids(body: Any) -> set[str]:
    keys = ("uuid", "registrationId", "entryUuid")
    return {row[k] for row in _rows(body) for k in keys if isinstance(row.get(k), str)}


# Fields a caller might hope widen the scope; unknown fields are ignored, so nothing may widen.
WIDENING = {"allSystems": True, "system": "*"}


def _ask(client: TargetClient, op: spec.Operation, filters: dict[str, Any]) -> httpx.Response:
    if op.method == "GET":
        params = {**{k: str(v).lower() for k, v in WIDENING.items()}, **filters}
        return client.get(op.path, params=params)
    return client.post(op.path, json={**WIDENING, **filters})


def _filters(op: spec.Operation, kind: str, records: Records) -> dict[str, Any]:
    """The criteria that single out the record (empty for the unpaged name lists)."""
    info = records.info[kind]
    if op.operation_id == "matchWatchlists":
        return {"identityNumber": info["identityNumber"]}
    if op.operation_id == "listInvites":
        return {"visitorUUID": info["visitorId"]}
    if kind in ("person", "user"):
        return {"email": info["email"]}
    return {}


@pytest.mark.parametrize("op", _list_ops())
def test_other_system_lists_leave_record_out(
    api, client, factories, amws_run, op: spec.Operation
) -> None:
    other = client("other_system")
    kind = _list_kind(op)
    if kind in NOT_CREATABLE:
        # Nothing to create: the two systems' listings must not share a single record.
        mine, theirs = _ids(_ask(api, op, {}).json()), _ids(_ask(other, op, {}).json())
        if not mine:
            pytest.skip(f"{op.operation_id}: the first system lists nothing to compare")
        assert not mine & theirs, f"{op.operation_id} shows records of both systems"
        return
    records = Records(api, factories, amws_run)
    uuid = records[kind]
    filters = _filters(op, kind, records)
    seen = _ask(api, op, filters)
    assert seen.status_code == 200
    assert uuid in _ids(seen.json()), f"{op.operation_id} does not show the run's own {kind}"

    answer = _ask(other, op, filters)
    assert answer.status_code == 200
    body = answer.json()
    assert uuid not in _ids(body), f"{op.operation_id} shows another system's {kind}"
    if "name" in records.info[kind]:
        names = {row.get("name") for row in _rows(body)}
        assert records.info[kind]["name"] not in names
    if filters and isinstance(body, dict) and "totalCount" in body:
        assert body["totalCount"] == 0, "another system's record counts in totalCount"
    if op.operation_id == "matchWatchlists":
        assert body["matched"] is False, "a match hit another system's watchlist entry"
    if op.operation_id == "listInvites":
        unfiltered = _ask(other, op, {}).json()
        assert uuid not in _ids(unfiltered)
