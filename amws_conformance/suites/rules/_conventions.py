"""What the convention suites share: the resources they create, read and walk; and the
records the ref group's modules share (``Shared``).

Each resource: (collection, create body, update body); ``kind_of`` maps an operation suffix or
a reference field (CostCenter, costCenter) to its resource.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from amws_conformance import spec
from amws_conformance.fixtures import Factories
from amws_conformance.fixtures._limits import enum_values, length_range

V1 = "/api/ws/v1"
UUID = spec.uuid_pattern()  # unanchored: fullmatch tests a value


def _named(create: str, update: str, kind: str) -> tuple[Callable, Callable]:
    return (lambda f, api: f.named(create, kind)), (lambda f, api: f.named(update, kind))


def person_of(api: Any, f: Factories) -> str:
    return api.post(f"{V1}/persons", json=f.person()).json()["uuid"]


RESOURCES: dict[str, tuple[str, Callable, Callable]] = {
    "department": ("/departments", *_named("createDepartment", "updateDepartment", "dept")),
    "organisation": ("/organisations", *_named("createOrganisation", "updateOrganisation", "org")),
    "cost_center": ("/cost-centers", *_named("createCostCenter", "updateCostCenter", "cc")),
    "visit_reason": ("/visit-reason", *_named("createVisitReason", "updateVisitReason", "vr")),
    "group": ("/groups", *_named("createGroup", "updateGroup", "grp")),
    "location": ("/locations", lambda f, api: f.location(), lambda f, api: f.location()),
    "role": ("/roles", lambda f, api: f.role(), lambda f, api: f.role()),
    "person": ("/persons", lambda f, api: f.person(), lambda f, api: f.person()),
    "user": ("/users", lambda f, api: f.user(), lambda f, api: f.user()),
    "credential": (
        "/credentials",
        lambda f, api: f.credential(personUuid=person_of(api, f)),
        lambda f, api: {"comments": f.tag("changed")},
    ),
    "watchlist": ("/watchlists", lambda f, api: f.watchlist(), lambda f, api: f.watchlist()),
}


def create(api: Any, factories: Factories, kind: str) -> tuple[str, dict[str, Any]]:
    collection, body_of, _ = RESOURCES[kind]
    body = body_of(factories, api)
    response = api.post(V1 + collection, json=body)
    assert response.status_code == 201, f"creating a {kind}: {response.text}"
    return response.json()["uuid"], body


def read(api: Any, kind: str, uuid: str) -> dict[str, Any]:
    response = api.get(f"{V1}{RESOURCES[kind][0]}/{uuid}")
    assert response.status_code == 200, response.text
    return response.json()


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (field name, value) pair of a JSON document."""
    if isinstance(node, dict):
        for name, value in node.items():
            yield name, value
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def rule_ops(rule_id: str) -> tuple[str, ...]:
    return next(r for r in spec.rules() if r.id == rule_id).operations


def kind_of(name: str) -> str:
    """The resource kind of an operation suffix or reference field (CostCenter, costCenter)."""
    wanted = name[0].upper() + name[1:]
    return next(k for k in RESOURCES if k.title().replace("_", "") == wanted)


PERSON_REFS = ("department", "organisation", "group", "costCenter", "location")
USER_REFS = ("department", "organisation", "group", "location", "role")
REFERENCES = (*PERSON_REFS, "role", "hostUser", "visitReason")


def refusals(
    api: Any, method: str, url: str, values: dict[str, Any], base: Callable[[], dict[str, Any]]
) -> dict[str, tuple[dict[str, Any], Any]]:
    """For each field of ``values`` (field -> an invalid value): the body and the answer that
    refused it with 422, in as few requests as the target allows. One body carries all the
    values first (``base()`` with them); a 422 reason names every offending field
    (ERR-422-REASON-FORMAT), so each field it names was refused there. A field it leaves
    unnamed is sent alone, so a target that reports only its first finding still has every
    value checked on its own. The caller checks each answer as it would a single refusal."""
    body = {**base(), **values}
    answer = api.request(method, url, json=body)
    assert answer.status_code == 422, (sorted(values), answer.status_code)
    found = {}
    for field, value in values.items():
        if f"@{field}" in answer.json()["reason"]:
            found[field] = (body, answer)
        else:
            alone = {**base(), field: value}
            found[field] = (alone, api.request(method, url, json=alone))
    return found


# -- records the ref group's modules share, each made once per run -----------------------------
NAMED = {  # the name-only resources: create operation suffix -> collection
    "Department": "/departments",
    "Organisation": "/organisations",
    "CostCenter": "/cost-centers",
    "VisitReason": "/visit-reason",
    "Group": "/groups",
}


def names_at(api: Any, collection: str) -> list[str]:
    """The names the target's list of ``collection`` holds (a short name must avoid them)."""
    answer = api.get(V1 + collection)
    assert answer.status_code == 200, f"listing {collection}: {answer.text}"
    return [item["name"] for item in answer.json()]


class Shared:
    """Records several tests of this group's modules share, each made once per run with
    ``Run.shared`` and booked as a set-up of its own: most are only read (or sent writes that
    must be refused); the scratch location and the holders are written in ways their
    accessors describe.

    Every accessor first asks for the records its record refers to, so each test that uses a
    record also says it uses those (the planner prices a test right whichever test of the run
    made them). Why sharing each one is safe is said at its accessor."""

    def __init__(self, run: Any, api: Any, factories: Factories) -> None:
        self.run, self.api, self.f = run, api, factories

    def _post(self, collection: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.api.post(V1 + collection, json=body)
        assert answer.status_code == 201, f"creating at {collection}: {answer.text}"
        return {**answer.json(), "body": body, "status": answer.status_code}

    def _shared(self, name: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        made: dict[str, Any] = self.run.shared(f"ref:{name}", make)
        return made

    def named(self, single: str, size: str) -> dict[str, Any]:
        """A record of a name-only resource whose name has the fewest (``size="shortest"``) or
        the most (``"longest"``) characters its create accepts: the length tests assert on
        these very creates. ``uuid``, ``name``, ``status`` (of the create).

        Shared: no test renames or deletes them; they are read, listed, referenced by the
        population's person and user, and sent writes that must be refused (a missing name, a
        duplicate name, an update of another record naming them in its body)."""
        low, high = length_range(f"create{single}", "name")
        length = low if size == "shortest" else high

        def make() -> dict[str, Any]:
            name = self.f.sized_name(single.lower(), length, names_at(self.api, NAMED[single]))
            answer = self.api.post(V1 + NAMED[single], json={"name": name})
            if answer.status_code == 201:
                return {"uuid": answer.json()["uuid"], "name": name, "status": 201}
            # A target refusing the boundary fails the length test (it asserts on ``status``),
            # not every test sharing the record: they get a record of an ordinary name.
            made = self._post(NAMED[single], self.f.named(f"create{single}", single.lower()))
            refused = answer.status_code
            return {"uuid": made["uuid"], "name": made["body"]["name"], "status": refused}

        return self._shared(f"{single}:{size}", make)

    def location(self) -> dict[str, Any]:
        """A location made of a name and a type alone: ``uuid``, ``name``, ``type``, ``status``.

        Shared: never changed; read, listed, referenced by the population's person and user,
        and sent a rename that must be refused. The test of a two-field create asserts on this
        very create."""

        def make() -> dict[str, Any]:
            kind = enum_values("createLocation", "type")[0]
            body = {"name": self.f.name_for("createLocation", "loc"), "type": kind}
            made = self._post("/locations", body)
            return {"uuid": made["uuid"], **body, "status": made["status"]}

        return self._shared("location", make)

    def role(self) -> dict[str, Any]:
        """A role, held by the shared user: ``uuid``, ``name``.

        Shared: never changed; read, listed, given to the user, and sent writes that must be
        refused (a delete while held, a second role of its name)."""

        def make() -> dict[str, Any]:
            made = self._post("/roles", self.f.role())
            return {"uuid": made["uuid"], "name": made["body"]["name"]}

        return self._shared("role", make)

    def user_refs(self) -> dict[str, str]:
        """What the shared user refers to: the longest-named department, organisation and
        group, the two-field location and the shared role."""
        refs = {f: self.named(f[0].upper() + f[1:], "longest")["uuid"] for f in USER_REFS[:3]}
        return {**refs, "location": self.location()["uuid"], "role": self.role()["uuid"]}

    def user_names(self) -> dict[str, str]:
        """A last name of the run's own, which the two shared users carry (so the deprecated
        list test finds exactly them by it), and an identity number of each one's own."""
        last = self.run.shared("ref:surname", lambda: self.f.tag("dep")[:50])
        return {"lastName": last, "identityNumber": self.f.tag("idn")}

    def user(self) -> dict[str, Any]:
        """A user holding every reference a user can hold (``user_refs``), with the shared last
        name and an identity number (``user_names``): ``uuid``, ``refs``, ``body``.

        Shared: never changed; read, listed, and the host of the shared invitation."""
        refs = self.user_refs()

        def make() -> dict[str, Any]:
            body = self.f.user(**self.user_names(), **refs)
            return {"uuid": self._post("/users", body)["uuid"], "refs": refs, "body": body}

        return self._shared("user", make)

    def watchlist(self) -> dict[str, Any]:
        """An enabled watchlist with one entry that lists only an identity number: ``uuid``,
        ``identity``. An invitation for that identity is refused with 451.

        Shared: never changed; read and listed. The entry carries no names or plate, so it
        matches no visitor but those given its run-tagged identity on purpose."""

        def make() -> dict[str, Any]:
            uuid = self._post("/watchlists", self.f.watchlist())["uuid"]
            identity = self.f.tag("wanted")
            entry = {"identityNumber": identity, "reason": "listed by the conformance run"}
            self._post(f"/watchlists/{uuid}/entries", entry)
            return {"uuid": uuid, "identity": identity}

        return self._shared("watchlist", make)

    def invite(self) -> dict[str, Any]:
        """An invitation hosted by the shared user: ``registrationId``, ``created`` (the create
        answer), ``body``.

        Shared: never changed; read, and sent updates that must be refused (451)."""
        host = self.user()["uuid"]

        def make() -> dict[str, Any]:
            body = self.f.invite(host)
            made = self._post("/invites", body)
            created = {k: v for k, v in made.items() if k not in ("body", "status")}
            return {"registrationId": made["registrationId"], "created": created, "body": body}

        return self._shared("invite", make)

    def scratch(self) -> str:
        """A location whose fields tests write and read back; created with every optional field
        a partial update must keep (complex, suburb, comments, expiresDate).

        Shared: each field belongs to the tests that write it, and each writes it before
        reading it (type: the enum test; latitude, longitude: the range test; keyContactNumber:
        the phone test; each text field: its length test; effectiveDate: the timestamp tests
        of test_conventions_timestamps.py). The partial-update test writes city and comments
        between two reads of its own; the duplicate-name test reads the name, sends a rename
        that must be refused, and reads it again. Two tests write a whole location body at
        once and read back only what they wrote (the body-uuid test of
        test_conventions_writes.py, the unknown-fields test of test_versioning.py). No test
        depends on another's writes, in any order."""

        def make() -> dict[str, Any]:
            body = self.f.location(
                complex=self.f.tag("cx")[:100],
                suburb=self.f.tag("sb")[:100],
                comments="kept by a partial update",
                # Far after any effectiveDate the timestamp tests write (2030).
                expiresDate=self.f.instant(days=365 * 40),
            )
            return {"uuid": self._post("/locations", body)["uuid"]}

        return str(self._shared("scratch", make)["uuid"])

    def holders(self) -> dict[str, Any]:
        """One record of each resource whose delete drops the references to it (department,
        organisation, cost center, group, location), and a person and a user that reference
        all of them (users hold no cost center): ``refs`` (field -> uuid), ``names`` (field ->
        name), ``paths`` (holder -> path), ``user`` (the user's uuid), ``user_body``. The user
        carries the shared last name (``user_names``).

        Shared: each delete test deletes only its own field's record and reads only that field
        of the person and user, so what one does is never seen by another; the holders
        themselves are never changed. The visit-reason test hosts invitations by the user, and
        the deprecated list test lists it; they read none of these fields."""

        def make() -> dict[str, Any]:
            refs, names = {}, {}
            for single, collection in NAMED.items():
                field = single[0].lower() + single[1:]
                if field in PERSON_REFS:
                    body = self.f.named(f"create{single}", single.lower())
                    refs[field], names[field] = self._post(collection, body)["uuid"], body["name"]
            location = self.f.location()
            refs["location"] = self._post("/locations", location)["uuid"]
            names["location"] = location["name"]
            made: dict[str, Any] = {"refs": refs, "names": names, "paths": {}}
            for holder, fields in (("person", PERSON_REFS), ("user", USER_REFS[:4])):
                held = {f: refs[f] for f in fields}
                if holder == "person":
                    body = self.f.person(**held)
                else:
                    body = made["user_body"] = self.f.user(**self.user_names(), **held)
                path = f"{V1}/{holder}s/{self._post(f'/{holder}s', body)['uuid']}"
                read = self.api.get(path).json()
                assert {f: read.get(f) for f in held} == held, f"the {holder} lost a reference"
                made["paths"][holder] = path
            made["user"] = made["paths"]["user"].rsplit("/", 1)[1]
            return made

        return self._shared("holders", make)
