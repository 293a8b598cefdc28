"""The permission matrix, generated from the spec: every keyed operation by every way of calling it.

Nothing here lists operations by hand. For each keyed operation of ``spec/openapi.yaml`` and
each way of authenticating, the expected answer follows from the operation's ``x-permission``:

- ``full`` (every permission): never 401/403, and the call does what it says;
- ``readonly`` (every Read permission): Read permissions allowed, everything else 403;
- ``none`` (no permission): 403;
- ``disabled`` (an existing key, switched off): 401;
- ``unknown`` (a fresh, well-formed key value no target holds): 401;
- ``missing``, ``short``, ``long`` (no header; shorter than 64; longer than 256): 401.

Every refused call addresses a real record the run created (so the refusal is not a 404 in
disguise), sends a valid body (so only the key stands between it and success), and must leave
nothing changed: a refused write reads back unchanged with the full key, a refused create adds
no record, a refused trigger fires no relay (seen through the control plane where there is
one). The ``full`` case checks the same probes move, which proves they can see a change.

A refused write changes nothing on a conforming target, so the records refused writes address
are shared, one per kind of record and run (``matrix:record:…``, booked as set-ups): a person
serves every refused write to persons, whichever operation and way. Each case still compares
the record before and after its own call, a refused create still sends a body of its own, and
a case that fails hands the next one fresh records (``Run.shared``): a target that changed or
removed a shared record fails that case alone. Permitted writes make records of their own.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.fixtures import jpeg_bytes
from amws_conformance.harness import ControlPlane
from amws_conformance.suites.rules._run_shared import shared_pictured

API = "/api/ws/v1"
RELAY_CONTROL = "Access Control Point Relay Control"
KEY_WAYS = ("full", "readonly", "none", "disabled")
HEADER_WAYS = {"unknown": "AUTH-INVALID-KEY-401", "missing": "AUTH-HEADER-REQUIRED"}
HEADER_WAYS |= {"short": "AUTH-HEADER-LENGTH", "long": "AUTH-HEADER-LENGTH"}
WAYS = (*KEY_WAYS, *HEADER_WAYS)
# Reads that address the run's shared person with a photo: (path parameter, which handle).
PICTURED_READS = {
    "downloadPhoto": ("uuid", "photo"),
    "downloadThumbnail": ("uuid", "photo"),
    "getPerson": ("uuid", "person"),
    "listCredentialsByPerson": ("personUuid", "person"),
}


def _is_read(permission: str | None) -> bool:
    text = str(permission)
    return text.startswith("Read ") or text.endswith("- Read")


def _kind(op: spec.Operation) -> str:
    if op.permission == RELAY_CONTROL:
        return "trigger"
    if _is_read(op.permission):
        return "read"
    return "create" if op.method == "POST" else "change"


def _expected(op: spec.Operation, way: str) -> int | None:
    """None: allowed (anything but 401/403); else the refusal status."""
    if way == "full" or (way == "readonly" and _is_read(op.permission)):
        return None
    return 403 if way in ("readonly", "none") else 401


def _rules(op: spec.Operation, way: str) -> list[str]:
    if way in HEADER_WAYS:
        return [HEADER_WAYS[way]]
    if way == "disabled":
        return ["AUTH-DISABLED-KEY-401"]
    rules = ["AUTH-PERMISSION-READ-WRITE"]
    if _expected(op, way) == 403:
        rules.append(
            "AUTH-403-NO-PARTIAL-RESULT" if _kind(op) == "read" else "AUTH-403-NOTHING-CHANGED"
        )
    if way == "readonly" and _kind(op) == "trigger":
        rules.append("AUTH-RELAY-CONTROL-SEPARATE")
    if op.permission_assumed and way in ("full", "readonly"):
        # Which of the two invitation permissions an operation needs (their names are ours).
        rules.append("INV-PERMISSION-NAMES")
    return rules


def _covers(op: spec.Operation, way: str) -> list[str]:
    """What a case samples for a run plan (harness/plans.yaml): a permission refused to a key
    that lacks it, or a way of failing authentication on a read or on a write."""
    if _expected(op, way) == 403:
        return [f"permission:{op.permission}"]
    if _expected(op, way) == 401:
        return [f"failed-auth:{way}:{'read' if _kind(op) == 'read' else 'write'}"]
    return []


def _cases() -> list[Any]:
    cases = []
    for op in spec.operations():
        if not op.keyed:
            continue
        for way in WAYS:
            marks = [pytest.mark.rule(*_rules(op, way)), pytest.mark.covers(*_covers(op, way))]
            if way in ("readonly", "none", "disabled"):
                marks.append(pytest.mark.requires(way))
            if way == "full" and _kind(op) == "trigger":
                marks.append(pytest.mark.physical)  # a permitted trigger fires a real relay
            cases.append(
                pytest.param(op.operation_id, way, marks=marks, id=f"{op.operation_id}-{way}")
            )
    return cases


# -- the records a case addresses (all created with the full key) ---------------------------
NAMED = {"Department", "Organisation", "CostCenter", "VisitReason", "Group"}
# The path segment in front of a path parameter -> the operation that creates such a record.
CREATES = {
    "departments": "createDepartment",
    "organisations": "createOrganisation",
    "cost-centers": "createCostCenter",
    "visit-reason": "createVisitReason",
    "groups": "createGroup",
    "roles": "createRole",
    "locations": "createLocation",
    "persons": "createPerson",
    "by-person": "createPerson",
    "users": "createUser",
    "by-user": "createUser",
    "credentials": "createCredential",
    "watchlists": "createWatchlist",
    "entries": "createWatchlistEntry",
    "invites": "createInvite",
    "files": "uploadFile",
}


# A record made for a case: its UUID, the body that made it, and an invitation's host user.
Made = tuple[str, dict[str, Any], str | None]
# Run.shared: a value made once per run under a set-up's name, or ``None`` (made per case).
Sharing = Callable[[str, Callable[[], Made]], Made]


class World:
    """Makes the run's own records for one case, remembering what a later probe needs.
    ``person`` gives the person a credential create addresses (by default a new one);
    ``sharing`` (refused writes only) makes each kind of record once per run."""

    def __init__(
        self,
        api: Any,
        factories: Any,
        profile: Any,
        person: Callable[[], str] | None = None,
        sharing: Sharing | None = None,
    ) -> None:
        self.api, self.f, self.profile = api, factories, profile
        self.person = person or (lambda: self.record("createPerson", {}))
        self.sharing = sharing
        self.hosts: dict[str, str] = {}  # invitation -> its host user
        self.bodies: dict[str, dict[str, Any]] = {}  # record -> the body that made it
        self._kinds: dict[str, str] = {}  # shared record -> the name it is shared under

    def body(self, op_id: str, params: dict[str, str]) -> tuple[Any, Any]:
        """A valid (json, files) for the operation, addressed at ``params``."""
        f, resource = self.f, op_id.removeprefix("create").removeprefix("update")
        if op_id == "uploadFile":
            image = jpeg_bytes(f.random.randrange(1 << 30), (48, 48))
            return None, {"file": ("matrix.jpg", image, "image/jpeg")}
        if resource in NAMED and op_id != resource:
            return f.named(op_id, resource.lower()[:4]), None
        simple = {"Location": f.location, "Role": f.role, "Person": f.person, "User": f.user}
        simple |= {"Watchlist": f.watchlist, "WatchlistEntry": f.watchlist_entry}
        if resource in simple and op_id != resource:
            return simple[resource](), None
        if op_id == "createCredential":
            return f.credential(personUuid=self.person()), None
        if op_id == "updateCredential":
            return {"comments": f.tag("comment")}, None
        if op_id == "createInvite":
            # A host of its own, never a shared one: a refused create is judged by whether
            # its host has an invitation, and another case's invitation must not count.
            return f.invite(self.make("createUser", {})), None
        if op_id == "updateInvite":
            return f.invite(self.hosts[params["registrationId"]]), None
        if op_id == "changeInviteStatus":
            return {"status": "VISITOR_CHECK_IN"}, None
        if op_id == "searchPersons":
            return {"lastName": self.bodies[self.make("createPerson", {})]["lastName"]}, None
        if op_id == "searchUsers":
            return {"email": self.bodies[self.make("createUser", {})]["email"]}, None
        if op_id == "matchWatchlists":
            entry = self.bodies[
                self.make("createWatchlistEntry", self.params("createWatchlistEntry"))
            ]
            return {"identityNumber": entry["identityNumber"]}, None
        return None, None

    def record(self, op_id: str, params: dict[str, str], kind: str = "", **overrides: Any) -> str:
        """A record ``op_id`` makes under ``params``: the run's shared one of its kind when
        sharing (named by the operation, the kind and the shared records above it), else new."""
        if self.sharing is None:
            return self.make(op_id, params, **overrides)
        parents = ",".join(f"{k}={self._kinds[v]}" for k, v in sorted(params.items()))
        name = f"{op_id}{':' + kind if kind else ''}({parents})"
        uuid, body, host = self.sharing(
            f"matrix:record:{name}", lambda: self._made(op_id, params, **overrides)
        )
        self.bodies[uuid] = body
        if host is not None:
            self.hosts[uuid] = host
        self._kinds[uuid] = name
        return uuid

    def _made(self, op_id: str, params: dict[str, str], **overrides: Any) -> Made:
        made = self.make(op_id, params, **overrides)
        return made, self.bodies[made], self.hosts.get(made)

    def make(self, op_id: str, params: dict[str, str], **overrides: Any) -> str:
        json, files = self.body(op_id, params)
        if json is not None:
            json = {**json, **overrides}
        response = self.api.post(
            _concrete(spec.operation(op_id).path, params), json=json, files=files
        )
        assert response.status_code in (200, 201), f"setup {op_id}: {response.status_code}"
        made = response.json().get("registrationId") or response.json()["uuid"]
        self.bodies[made] = json or {}
        if op_id == "createInvite":
            self.hosts[made] = json["hostUser"]
        return made

    def params(self, op_id: str) -> dict[str, str]:
        """Real records for every path parameter of the operation."""
        op, params = spec.operation(op_id), {}
        segments = op.path.split("/")
        for index, segment in enumerate(segments):
            if not segment.startswith("{"):
                continue
            name, before = segment[1:-1], segments[index - 1]
            if before == "trigger":
                params[name] = self.point()
            elif op_id == "enableUser" and before == "users":
                params[name] = self.record("createUser", params, "disabled", enabled=False)
            else:
                params[name] = self.record(CREATES[before], params)
        return params

    def point(self) -> str:
        """An existing access control point, not the virtual reader's when there is another."""
        points = [p["uuid"] for p in self.api.get(f"{API}/access-control-points").json()]
        assert points, "the target has no access control point to address"
        reader = (self.profile.section("virtual_reader") or {}).get("access_control_point")
        return next((p for p in reversed(points) if p != reader), points[0])


def _result_in(body: Any) -> list[str]:
    """The keys of a refusal's body that carry record data: beside its code, reason and the
    optional errors object, a refusal may hold keys of its own (the documents do not forbid
    them), but no list, object or identifier, which only a result would put there."""
    extra = {k: v for k, v in body.items() if k not in ("code", "reason", "errors")}
    uuid = spec.uuid_pattern()
    return [
        k
        for k, v in extra.items()
        if isinstance(v, (list, dict)) or (isinstance(v, str) and uuid.search(v))
    ]


def _concrete(path: str, params: dict[str, str]) -> str:
    for name, value in params.items():
        path = path.replace("{" + name + "}", value)
    return path


# -- probes: what a permitted key sees before and after the call ---------------------------
def _read_path(path: str) -> str | None:
    """The GET that shows the record a write addresses (its own path, or its parent's)."""
    for candidate in (path, path.rsplit("/", 1)[0]):
        found = spec.match("GET", candidate)
        if found and found[0].keyed:
            return candidate
    return None


def _snapshot(api: Any, path: str) -> tuple[int, Any]:
    response = api.get(path)
    return response.status_code, response.json() if response.status_code == 200 else None


def _created(
    world: World, op: spec.Operation, params: dict[str, str], json: Any, files: Any
) -> bool:
    """Whether the record the create would make exists (read with the full key)."""
    api, op_id = world.api, op.operation_id
    if op_id == "uploadFile":
        # Staged bytes are unique per system: a second upload of them is refused while staged.
        return api.post(op.path, files=files).status_code == 422
    if op_id in ("createPerson", "createUser"):
        field = "lastName" if op_id == "createPerson" else "email"
        found = api.post(f"{op.path}/search", json={field: json[field]}).json()["entries"]
        return any(row.get(field) == json[field] for row in found)
    if op_id == "createCredential":
        rows = api.get(f"{API}/credentials/by-person/{json['personUuid']}").json()
        return any(r.get("uniqueIdentifier") == json["uniqueIdentifier"] for r in rows)
    if op_id == "createInvite":
        return bool(api.get(f"{API}/users/{json['hostUser']}/invites").json())
    listed = api.get(_concrete(op.path, params)).json()
    rows = listed["entries"] if isinstance(listed, dict) else listed
    field = "identityNumber" if op_id == "createWatchlistEntry" else "name"
    return any(row.get(field) == json[field] for row in rows)


def _relay_count(control: ControlPlane, point: str, full: bool) -> int:
    """Firings of the point by the full key (``full``), or by anything else."""
    events = control.relay_events()
    return sum(1 for e in events if e.get("point") == point and (e.get("key") == "full") is full)


def _caller(client: Any, way: str) -> tuple[Any, dict[str, str]]:
    if way == "unknown":
        # A fresh value of valid length per case: no target holds it, and its own bucket is full.
        return client("missing"), {"Authorization": secrets.token_hex(32)}
    return client(way), {}


@pytest.mark.parametrize(("op_id", "way"), _cases())
def test_permission_matrix(
    amws_run, api, client, factories, profile, control_or_none, op_id: str, way: str
) -> None:
    op = spec.operation(op_id)
    kind, expected = _kind(op), _expected(op, way)
    caller, headers = _caller(client, way)

    def pictured() -> dict[str, Any]:
        return shared_pictured(amws_run, api, factories)

    def make(sharing: Sharing | None = None) -> tuple[World, dict[str, str], Any, Any]:
        # The credential create under test (allowed or refused) adds at most a credential of
        # its own to the shared person with a photo, whose credentials nobody reads as a whole
        # (records made for other cases keep persons of their own).
        holder = (lambda: pictured()["person"]) if op_id == "createCredential" else None
        world = World(api, factories, profile, person=holder, sharing=sharing)
        params = world.params(op_id)
        return world, params, *world.body(op_id, params)

    # Reads and triggers change nothing: one set-up serves every way of calling them, and the
    # run books it apart, so a plan keeping any one case pays for it once. The photo downloads
    # and the reads of a person address the person with a photo other suites only read too.
    shared = kind in ("read", "trigger")
    if op_id in PICTURED_READS:
        world, json, files = World(api, factories, profile), None, None
        param, field = PICTURED_READS[op_id]
        params = {param: pictured()[field]}
    elif shared:
        world, params, json, files = amws_run.shared(f"matrix:{op_id}", make)
    elif expected is not None and "/files" not in op.path:
        # A refused write: the run's shared records of each kind (a staged file, which has no
        # read to compare before and after, is made per case). The body is the case's own.
        world, params, json, files = make(sharing=amws_run.shared)
    else:
        world, params, json, files = make()
    path = _concrete(op.path, params)
    read = _read_path(path) if kind == "change" else None
    before = _snapshot(api, read) if read else None
    by_full = way == "full"
    relays = control_or_none if kind == "trigger" else None  # relay events, where observable
    fired = _relay_count(relays, params["uuid"], by_full) if relays is not None else None

    response = caller.request(op.method, path, json=json, files=files, headers=headers)

    if expected is None:
        assert response.status_code not in (401, 403), f"{way} was refused {op_id}"
        assert response.status_code < 300, f"{way} {op_id}: {response.status_code}"
    else:
        assert response.status_code == expected, f"{way} {op_id}: {response.status_code}"
        if expected == 403:
            assert not _result_in(response.json()), "a 403 carries part of the result"
    changed = expected is None  # what the probes must show: a change exactly when allowed
    if kind == "create":
        assert _created(world, op, params, json, files) is changed, f"{op_id} by {way}"
    elif kind == "change" and read is not None:
        assert (_snapshot(api, read) != before) is changed, f"{op_id} by {way} changed the record"
    elif kind == "change":
        # No read of this record (a staged file): only a permitted delete may have removed it.
        assert api.request(op.method, path).status_code == (404 if changed else 200)
    elif kind == "trigger" and fired is not None and relays is not None:
        assert (_relay_count(relays, params["uuid"], by_full) > fired) is changed, "relay firings"
