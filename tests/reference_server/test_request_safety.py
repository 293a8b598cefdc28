"""No request can poison the server (issue 12): values that cannot be stored and answered back
unchanged are refused at the door with the documented body, nothing is written, and every read
and search of the system keeps answering 200.

One poisoned value of each class goes to every operation that takes a JSON body (creates,
updates, searches, the watchlist match, the virtual reader), in a text field and, for the
number classes, in a number field where the body has one. The live server is the module's own,
so the whole store can be compared before and after.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.fixtures import Factories
from tests.reference_server.conftest import LiveServer

V1 = "/api/ws/v1"
JSON = {"Content-Type": "application/json"}
DEEPER_THAN_BOUND = spec.request_json().max_depth + 1

# class -> (raw JSON text of the value, the status that refuses it, whether it is a number)
POISONS: dict[str, tuple[str, int, bool]] = {
    "lone-surrogate": ('"a\\ud800b"', 400, False),
    "lone-low-surrogate": ('"\\udc00"', 400, False),
    "nan": ("NaN", 400, True),
    "infinity": ("Infinity", 400, True),
    "minus-infinity": ("-Infinity", 400, True),
    "beyond-double": ("1e400", 400, True),
    "nesting-10000": ("[" * 10_000 + "]" * 10_000, 400, False),
    "nesting-past-bound": ("[" * DEEPER_THAN_BOUND + "]" * DEEPER_THAN_BOUND, 400, False),
    "integer-4301-digits": ("9" * 4301, 400, True),
    "nul": ('"a\\u0000b"', 422, False),
}
# The field a text poison goes into, by preference: unique names and identifiers first.
TEXT_FIELDS = ("name", "uniqueIdentifier", "firstName", "identityNumber", "email", "code", "key")


def _json_ops() -> list[Any]:
    return [
        pytest.param(op, id=op.operation_id)
        for op in spec.operations()
        if "application/json" in (spec.resolve(op.raw.get("requestBody")) or {}).get("content", {})
    ]


def _schema(op: spec.Operation) -> dict[str, Any]:
    body = spec.enforced()["paths"][op.path][op.method.lower()]["requestBody"]
    content = spec.resolve(body, spec.enforced())["content"]["application/json"]
    return spec.resolve(content["schema"], spec.enforced())


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    found = dict(schema.get("properties", {}))
    for part in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        for name, prop in _properties(spec.resolve(part, spec.enforced())).items():
            found.setdefault(name, prop)  # a branch's narrowing adds no type of its own
    return found


def _kinds(prop: Any) -> set[str]:
    prop = spec.resolve(prop, spec.enforced())
    kinds = prop.get("type", [])
    found = {kinds} if isinstance(kinds, str) else set(kinds)
    for part in prop.get("allOf", []) + prop.get("anyOf", []) + prop.get("oneOf", []):
        found |= _kinds(part)
    return found


def fields_of(op: spec.Operation, body: dict[str, Any]) -> tuple[str, str | None]:
    """(a text field of the body, a number field of the operation or None)."""
    props = _properties(_schema(op))
    texts = [n for n in body if isinstance(body[n], str) and "string" in _kinds(props.get(n, {}))]
    text = next((n for n in TEXT_FIELDS if n in texts), texts[0] if texts else "name")
    numbers = [n for n, p in props.items() if _kinds(p) & {"number", "integer"}]
    return text, next(iter(numbers), None)


def poisoned(body: dict[str, Any], field: str, raw: str) -> bytes:
    """The body as JSON text with ``field``'s value replaced by ``raw`` (text no encoder
    writes: that is the point)."""
    marker = f"poison-{uuidlib.uuid4().hex}"
    return json.dumps({**body, field: marker}).replace(f'"{marker}"', raw).encode("utf-8")


class Maker:
    """Valid bodies and the records a path names, made through the API."""

    def __init__(self, api: httpx.Client, live: LiveServer) -> None:
        self.api, self.live = api, live
        self.f = Factories(seed=12, run_id=f"safe{uuidlib.uuid4().hex[:6]}")

    def create_body(self, op_id: str) -> dict[str, Any]:
        f = self.f
        made: dict[str, Any] = {
            "createLocation": lambda: f.location(),
            "createRole": lambda: f.role(),
            "createPerson": lambda: f.person(),
            "createUser": lambda: f.user(),
            "createWatchlist": lambda: f.watchlist(),
            "createWatchlistEntry": lambda: f.watchlist_entry(),
            "createCredential": lambda: f.credential(personUuid=self.new("/persons")),
            "createInvite": lambda: f.invite(self.new("/users")),
        }
        return made[op_id]() if op_id in made else f.named(op_id, "rec")

    def new(self, collection: str) -> str:
        op = spec.match("POST", V1 + collection)
        assert op, collection
        answer = self.api.post(V1 + collection, json=self.create_body(op[0].operation_id))
        assert answer.status_code == 201, (collection, answer.text)
        return answer.json().get("uuid") or answer.json()["registrationId"]

    def path(self, template: str) -> str:
        done: list[str] = []
        for part in template.split("/"):
            if part.startswith("{"):
                part = self.new("/".join(done).removeprefix(V1))
            done.append(part)
        return "/".join(done)

    def body(self, op: spec.Operation) -> dict[str, Any]:
        reader = self.live.profile["virtual_reader"]
        if "Virtual reader" in op.tags:
            device = {"uuid": reader["uuid"], "key": reader["key"]}
            return device if op.path.endswith("/list") else {**device, "code": "123456"}
        if op.operation_id in ("searchPersons", "searchUsers", "matchWatchlists"):
            return {"firstName": "Ann"}
        if op.operation_id == "changeInviteStatus":
            return {"status": "VISIT_CANCELLED"}
        if op.operation_id == "updateCredential":
            return {"comments": "changed"}
        collection = op.path if op.method == "POST" else op.path.rsplit("/", 1)[0]
        return self.create_body(spec.match("POST", collection)[0].operation_id)


@pytest.fixture(scope="module")
def served() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


@pytest.fixture(scope="module")
def client(served: LiveServer) -> Iterator[httpx.Client]:
    with served.client("full") as api:
        yield api


@pytest.fixture(scope="module")
def standing(served: LiveServer, client: httpx.Client) -> dict[str, str]:
    """Records that every later read must still answer: a person, a user, a location and a
    watchlist with an entry."""
    maker = Maker(client, served)
    watchlist = maker.new("/watchlists")
    entry = client.post(
        f"{V1}/watchlists/{watchlist}/entries", json=maker.create_body("createWatchlistEntry")
    )
    assert entry.status_code == 201, entry.text
    return {
        "person": maker.new("/persons"),
        "user": maker.new("/users"),
        "location": maker.new("/locations"),
        "watchlist": watchlist,
    }


def _rows(live: LiveServer) -> list[tuple[Any, ...]]:
    store = live.server.store
    with store._lock:
        return store._db.execute("SELECT * FROM records ORDER BY uuid").fetchall()


def assert_reads_answer(api: httpx.Client, standing: dict[str, str]) -> None:
    for path in (
        f"{V1}/persons/{standing['person']}",
        f"{V1}/users/{standing['user']}",
        f"{V1}/locations/{standing['location']}",
        f"{V1}/watchlists/{standing['watchlist']}/entries",
        f"{V1}/departments",
    ):
        answer = api.get(path)
        assert answer.status_code == 200, (path, answer.text)
    for path in (f"{V1}/persons/search", f"{V1}/users/search"):
        answer = api.post(path, json={})
        assert answer.status_code == 200, (path, answer.text)


def assert_refusal(op: spec.Operation, answer: httpx.Response, status: int) -> dict[str, Any]:
    """The documented failure body (the reader's text code on its operations)."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    code = str(status) if "Virtual reader" in op.tags else status
    assert body["code"] == code and isinstance(body["reason"], str) and body["reason"], body
    return body


@pytest.mark.parametrize("op", _json_ops())
def test_every_poisoning_value_is_refused_and_reads_keep_answering(
    served: LiveServer, client: httpx.Client, standing: dict[str, str], op: spec.Operation
) -> None:
    maker = Maker(client, served)
    path = maker.path(op.path)
    body = maker.body(op)
    text_field, number_field = fields_of(op, body)
    readable = spec.match("GET", path) is not None and op.method == "PUT"
    before = client.get(path).json() if readable else None
    rows = _rows(served)
    for label, (raw, status, number) in POISONS.items():
        fields = [text_field] + ([number_field] if number and number_field else [])
        for field in fields:
            answer = client.request(
                op.method, path, content=poisoned(body, field, raw), headers=JSON
            )
            refusal = assert_refusal(op, answer, status)
            if status == 422:  # the field is named, and the value is not echoed
                assert f"@{field}:" in refusal["reason"], (label, refusal)
            assert "\\u0000" not in answer.text and "\\ud800" not in answer.text, label
    assert _rows(served) == rows, "a refused request wrote to the store"
    if readable:
        assert client.get(path).json() == before
    assert_reads_answer(client, standing)


def test_the_same_bodies_without_poison_are_accepted(
    served: LiveServer, client: httpx.Client
) -> None:
    """The refusals above are for the poison alone: the bodies they were put in are valid."""
    maker = Maker(client, served)
    for name in ("createPerson", "createLocation", "createWatchlistEntry", "createCredential"):
        op = spec.operation(name)
        body = maker.body(op)
        answer = client.post(maker.path(op.path), content=json.dumps(body), headers=JSON)
        assert answer.status_code == 201, (name, answer.text)


# -- malformed requests: 4xx with the documented body, never a 5xx ---------------------------
DEPARTMENTS = f"{V1}/departments"


@pytest.mark.parametrize(
    ("label", "content", "headers"),
    [
        ("10,000-deep", b'{"name": ' + b"[" * 10_000 + b"]" * 10_000 + b"}", JSON),
        ("4,301-digit integer", b'{"name": "ab", "n": ' + b"9" * 4301 + b"}", JSON),
        ("UTF-16", '{"name": "utf16 body"}'.encode("utf-16"), JSON),
        (
            "UTF-16 declared",
            '{"name": "utf16 body"}'.encode("utf-16-le"),
            {"Content-Type": "application/json; charset=utf-16"},
        ),
        ("UTF-8 byte order mark", b'\xef\xbb\xbf{"name": "bom body"}', JSON),
        ("encoded surrogate", b'{"name": "a\xed\xa0\x80b"}', JSON),
        ("text/plain", b'{"name": "plain body"}', {"Content-Type": "text/plain"}),
        ("form", b'{"name": "form body"}', {"Content-Type": "application/x-www-form-urlencoded"}),
        ("no Content-Type", b'{"name": "bare body"}', {}),
        ("lone surrogate in a unique name", b'{"name": "dup\\ud800"}', JSON),
        ("NaN", b'{"name": NaN}', JSON),
    ],
)
def test_malformed_bodies_get_400_with_the_documented_body(
    live: LiveServer, api: httpx.Client, label: str, content: bytes, headers: dict[str, str]
) -> None:
    before = api.get(DEPARTMENTS).json()
    answer = api.post(DEPARTMENTS, content=content, headers=headers)
    assert answer.status_code == 400, (label, answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("application/json"), label
    assert set(answer.json()) == {"code", "reason"} and answer.json()["code"] == 400
    assert api.get(DEPARTMENTS).json() == before


def test_a_utf8_charset_is_read_and_a_lone_surrogate_pair_is_text(
    api: httpx.Client, unique
) -> None:
    name = unique("pair")
    declared = {"Content-Type": "Application/JSON; charset=UTF-8"}
    # A surrogate *pair* escape is one astral character: ordinary text, stored as sent.
    content = json.dumps({"name": f"{name}\U0001f600"}).encode()
    made = api.post(DEPARTMENTS, content=content, headers=declared)
    assert made.status_code == 201, made.text
    assert api.get(f"{DEPARTMENTS}/{made.json()['uuid']}").json()["name"] == f"{name}\U0001f600"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (f"{V1}/persons/search", {"start": 1e308}),
        (f"{V1}/users/search", {"start": 2_147_483_648}),
    ],
)
def test_a_start_beyond_32_bits_is_refused_with_422(api: httpx.Client, path, body) -> None:
    answer = api.post(path, json=body)
    assert answer.status_code == 422, answer.text
    assert "@start:" in answer.json()["reason"]
    assert api.post(path, json={"start": 2_147_483_647}).json()["startIndex"] == 2_147_483_647


def test_a_start_beyond_32_bits_in_a_query_answers_its_documented_status(api) -> None:
    vehicles = api.get(f"{V1}/vehicles", params={"start": "2147483648"})
    assert vehicles.status_code == 400 and vehicles.json()["code"] == 400
    vehicles = api.get(f"{V1}/vehicles", params={"start": "9" * 5000})
    assert vehicles.status_code == 400 and vehicles.json()["code"] == 400


def test_an_unhandled_failure_answers_500_with_the_documented_body(
    live: LiveServer, api: httpx.Client, monkeypatch
) -> None:
    app_handlers = live._served._server.config.loaded_app
    while not hasattr(app_handlers, "handlers"):  # uvicorn may wrap the app
        app_handlers = app_handlers.app

    async def broken(call: Any) -> Any:
        raise RuntimeError("a bug nobody foresaw")

    monkeypatch.setitem(app_handlers.handlers, "listDepartments", broken)
    answer = api.get(DEPARTMENTS)
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == {
        "code": 500,
        "reason": "500 - Internal Server Error - the server could not complete the request",
    }
    monkeypatch.setitem(app_handlers.handlers, "virtualRead", broken)
    reader = live.profile["virtual_reader"]
    answer = httpx.post(
        f"{live.base_url}{V1}/virtual/reader",
        json={"uuid": reader["uuid"], "key": reader["key"], "code": "123456"},
    )
    assert answer.status_code == 500 and answer.json()["code"] == "500"  # the reader's shape


# -- the HTTP layer: what uvicorn refuses before the app still gets the documented body ------
def _raw_exchange(live: LiveServer, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes on a fresh connection; the status, headers and body of the answer."""
    import socket

    host, port = live.base_url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


@pytest.mark.parametrize(
    ("label", "request_bytes"),
    [
        ("not HTTP", b"GARBAGE\r\n\r\n"),
        ("bad Content-Length", b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n"),
        (
            "Content-Length of 5,000 digits",
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n",
        ),
        ("space in a header name", b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n"),
        ("head longer than h11's buffer, in pieces", None),
    ],
)
def test_http_layer_refusals_carry_the_documented_body(
    live: LiveServer, label: str, request_bytes: bytes | None
) -> None:
    if request_bytes is None:
        # A head that never ends and outgrows h11's 16 KiB buffer for an incomplete event:
        # refused by uvicorn's protocol itself, before the app sees anything.
        request_bytes = b"GET /api/ws/v1/departments HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 70_000
    status, headers, body = _raw_exchange(live, request_bytes)
    assert status == 400, label
    assert headers["content-type"] == "application/json", label
    assert json.loads(body)["code"] == 400 and json.loads(body)["reason"], label


@pytest.mark.parametrize("where", ["header", "url"])
def test_an_over_long_header_or_url_gets_400_with_the_documented_body(
    api: httpx.Client, where: str
) -> None:
    if where == "header":
        answer = api.get(DEPARTMENTS, headers={"X-Pad": "a" * 20_000})
    else:
        answer = api.get(f"{DEPARTMENTS}?pad={'a' * 20_000}")
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["code"] == 400 and "exceed" in answer.json()["reason"]


def test_the_http_layer_fault_answers_plain_text(faulty) -> None:
    server = faulty("http-layer-plain-text")
    status, headers, _ = _raw_exchange(server, b"GARBAGE\r\n\r\n")
    assert status == 400 and headers["content-type"].startswith("text/plain")
    with server.client() as api:
        answer = api.get(DEPARTMENTS, headers={"X-Pad": "a" * 20_000})
    assert answer.status_code == 400 and answer.headers["content-type"].startswith("text/plain")


def test_an_upgrade_request_is_served_as_plain_http(api: httpx.Client) -> None:
    answer = api.get(DEPARTMENTS, headers={"Connection": "Upgrade", "Upgrade": "websocket"})
    assert answer.status_code == 200, answer.text


# -- the faults that restore the old behaviour (the self-check's deviations) ------------------
def test_the_body_reading_faults(faulty) -> None:
    server = faulty(
        "content-type-ignored", "json-read-leniently", "lone-surrogate-stored", "huge-start-fails"
    )
    with server.client() as api:
        plain = api.post(DEPARTMENTS, content=b'{"name": "plain-x"}', headers={})
        assert plain.status_code == 201, plain.text
        utf16 = api.post(DEPARTMENTS, content='{"name": "utf16-x"}'.encode("utf-16"))
        assert utf16.status_code == 201, utf16.text
        deep = api.post(DEPARTMENTS, content=b'{"name": ' + b"[" * 10_000 + b"]" * 10_000 + b"}")
        assert deep.status_code == 500 and deep.json()["code"] == 500  # the catch-all's body
        stored = api.post(f"{V1}/persons", content=b'{"firstName": "a\\ud800"}')
        assert stored.status_code == 201, stored.text
        read = api.get(f"{V1}/persons/{stored.json()['uuid']}")
        assert read.status_code == 500 and read.json()["code"] == 500
        huge = api.post(f"{V1}/persons/search", json={"start": 1e308})
        assert huge.status_code == 500


def test_the_nul_fault_stores_text_cut_at_the_nul(faulty) -> None:
    with faulty("nul-truncates-text").client() as api:
        made = api.post(f"{V1}/persons", json={"firstName": "Ann\x00e"})
        assert made.status_code == 201, made.text
        assert api.get(f"{V1}/persons/{made.json()['uuid']}").json()["firstName"] == "Ann"


def test_nesting_up_to_the_bound_is_read_and_one_level_more_is_not() -> None:
    from amws_conformance.reference_server._errors import ApiError
    from amws_conformance.reference_server._json_body import JsonBodyPolicy, read
    from amws_conformance.reference_server._state import Server
    from amws_conformance.reference_server.store import Store

    policy = Server(store=Store()).policy(JsonBodyPolicy)
    depth = spec.request_json().max_depth
    inner = "[" * (depth - 1) + "]" * (depth - 1)  # inside the top-level object
    assert read(f'{{"a": {inner}}}'.encode(), "application/json", policy)
    deeper = "[" * depth + "]" * depth
    with pytest.raises(ApiError, match="nests deeper") as refused:
        read(f'{{"a": {deeper}}}'.encode(), "application/json", policy)
    assert refused.value.status == 400
