"""What the person and user suites share: the two kinds of record, and the helpers both use.

Persons and users are searched, deleted and checked alike, under rules of their own prefix
(PERS-, USER-); :func:`each_kind` parametrises a test over both, each parameter tagged with its
own kind's rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from amws_conformance.fixtures._limits import field_schema
from amws_conformance.fixtures.images import jpeg_bytes
from amws_conformance.fixtures.timestamps import parsed as instant
from amws_conformance.fixtures.timestamps import utc_millis

API = "/api/ws/v1"
CREDENTIALS = f"{API}/credentials"
# Search rows carry exactly these fields; the answer exactly this envelope.
ROW_FIELDS = {"uuid", "firstName", "lastName", "email", "mobile"}
ENVELOPE = {"entries", "startIndex", "countReturned", "totalCount"}
# search criterion -> the record field it is matched on
MATCHED_ON = {"mobileNumber": "mobile", "identityNr": "identityNumber"}


@dataclass(frozen=True)
class Kind:
    """Persons or users."""

    name: str  # "person" or "user": the factories' body and the operation ids' noun
    prefix: str  # of its rule ids
    # The field names the documents give the kind's read (doc2 § Endpoints). Any other name a
    # test looks up in a read is the request's, which the read carries only by our assumed
    # <PREFIX>-READ-FIELD-NAMES rule.
    read_names: frozenset[str] = frozenset()

    @property
    def path(self) -> str:
        return f"{API}/{self.name}s"

    @property
    def search_path(self) -> str:
        return f"{self.path}/search"

    @property
    def search_op(self) -> str:
        return f"search{self.name.capitalize()}s"

    @property
    def holder_field(self) -> str:
        """The credential field naming a holder of this kind (personUuid, userUuid)."""
        return f"{self.name}Uuid"

    def body(self, factories: Any, **fields: Any) -> dict[str, Any]:
        return getattr(factories, self.name)(**fields)

    def rule(self, suffix: str) -> str:
        return f"{self.prefix}-{suffix}"


# The person read names only hasPhoto ("exact response field names other than hasPhoto: not
# shown"). The user read spells these; the names, contact numbers and identity number it only
# describes, and it does not list the e-mail address, so those go by the request's names.
PERSON = Kind("person", "PERS", frozenset({"hasPhoto"}))
USER = Kind(
    "user",
    "USER",
    frozenset(
        {
            "username",
            "enabled",
            "role",
            "address",
            "comments",
            "location",
            "group",
            "organisation",
            "department",
            "accountActiveDate",
            "accountExpiryDate",
            "hasPhoto",
            "password",
        }
    ),
)
KINDS = (PERSON, USER)


def each_kind(*suffixes: str) -> list[Any]:
    """PERSON and USER as parameters, each tagged with its own ``<PREFIX>-<suffix>`` rules."""
    return [
        pytest.param(kind, marks=pytest.mark.rule(*(kind.rule(s) for s in suffixes)), id=kind.name)
        for kind in KINDS
    ]


# -- records shared by a module's tests ----------------------------------------------------
T = TypeVar("T")


class Shared:
    """Records tests share, each built on first use through :meth:`harness.Run.shared`: a
    module's (a module-scoped instance), or the whole group's (``scope`` "people":
    :func:`suites.rules._people_records.run_shared`). Each is booked as a set-up of its own,
    ``<scope or module>::<name>``, not to whichever test happens to ask first; per fault of a
    fault matrix, and dropped after a test that used it failed (see ``Run.shared``)."""

    def __init__(self, scope: str | None = None) -> None:
        self.scope = scope  # the set-ups' prefix; None: the asking test's module

    def _setup(self, request: pytest.FixtureRequest, name: str) -> str:
        return f"{self.scope or request.node.module.__name__}::{name}"

    def get(self, request: pytest.FixtureRequest, name: str, build: Callable[[], T]) -> T:
        made: T = request.getfixturevalue("amws_run").shared(self._setup(request, name), build)
        return made

    def forget(self, request: pytest.FixtureRequest, name: str) -> None:
        """Drop the record ``name``: a test that changed it outside its own rule hands the
        next test a new one without failing for it."""
        request.getfixturevalue("amws_run").forget_shared(self._setup(request, name))


@dataclass(frozen=True)
class Record:
    """A record the run created: its handle, the body sent and (where taken) its read."""

    uuid: str
    body: dict[str, Any]
    read: dict[str, Any] = dataclasses.field(default_factory=dict)


# -- records -----------------------------------------------------------------------------
def created(response: Any, key: str = "uuid") -> str:
    """The handle (``key``) of a record a 201 answer created."""
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()[key]


def read_record(api: Any, path: str, uuid: str) -> dict[str, Any]:
    response = api.get(f"{path}/{uuid}")
    assert response.status_code == 200, (response.status_code, response.text)
    return response.json()


def check_read_field_names(read: dict[str, Any], stored: set[str]) -> None:
    """A read of a record without a photo: the request's names for its ``stored`` fields, and
    the photo fields (empty), never the photoUuid handle."""
    expected = {*stored, "uuid", "hasPhoto", "photoId", "photo", "thumbnail"}
    assert expected <= set(read), f"missing {sorted(expected - set(read))}"
    assert "photoUuid" not in read
    assert (read["photoId"], read["photo"], read["thumbnail"]) == (None, None, None)


def shows(kind: Kind, read: dict[str, Any], field: str) -> bool:
    """Whether a check may look ``field`` up in ``read``. A name the documents give the read
    must be there; any other is looked at only when the read carries it, so a target whose read
    uses other names fails only the kind's READ-FIELD-NAMES test (an assumed rule)."""
    if field in kind.read_names:
        assert field in read, f"the {kind.name} read lacks {field}"
        return True
    return field in read


def read_back(
    kind: Kind, read: dict[str, Any], sent: dict[str, Any], *, instants: Iterable[str] = ()
) -> None:
    """Each value of ``sent`` is what ``read`` shows under its request name (where it shows
    that name: see :func:`shows`); the ``instants`` the same instant, in UTC."""
    instants = set(instants)
    for field, value in sent.items():
        if not shows(kind, read, field):
            continue
        if field in instants:
            assert isinstance(read[field], str), (field, read[field])
            shown = instant(read[field])
            assert shown.utcoffset() == timedelta(0), f"{field} is not in UTC: {read[field]}"
            assert shown == instant(value), (field, read[field], value)
        else:
            assert read[field] == value, (field, read[field], value)


def scalars(value: Any) -> list[Any]:
    """Every scalar held in a read, at any depth (whatever the names it sits under)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in scalars(v)]
    return [value]


def cleared(value: Any) -> bool:
    """Whether a read value shows a field as cleared: doc2 says a replace clears what it leaves
    out, not how a cleared field is written (null, an empty text or list, a false flag)."""
    return value is None or value is False or value in ("", [], {})


def unassigned(credential: dict[str, Any]) -> bool:
    """Whether a credential read names no holder. doc2 says an unlinked credential survives
    unassigned but not how an empty holderUuid is written: null, an empty string or left out."""
    return credential.get("holderUuid") in (None, "")


def refused(response: Any, field: str) -> None:
    """A 422 naming ``field``."""
    assert response.status_code == 422, (field, response.status_code, response.text)
    assert field in response.json()["reason"], (field, response.json()["reason"])


def sized(factories: Any, length: int) -> str:
    """A run-tagged value of exactly ``length`` characters (unique, for the numbers)."""
    return (factories.tag("len") + "x" * length)[:length]


def email_of_length(factories: Any, length: int) -> str:
    domain = "@example.com"
    return (factories.tag("m") + "x" * length)[: length - len(domain)] + domain


def iso(moment: datetime) -> str:
    """A whole-second instant in the request format."""
    return utc_millis(moment.replace(microsecond=0))


def live_references(api: Any, factories: Any, references: dict[str, Any]) -> dict[str, str]:
    """A live record for each reference field: ``references`` maps the field to (path of the
    records, their create operation)."""
    made = {}
    for field, (path, op) in references.items():
        body = factories.location() if field == "location" else factories.named(op, field)
        made[field] = created(api.post(path, json=body))
    return made


def upload_photo(api: Any, factories: Any, size: tuple[int, int] = (640, 480)) -> Any:
    """The answer to an upload of a run-specific JPEG image of ``size`` (never the identical
    file of another upload)."""
    text = f"{factories.run_id}:{factories.random.getrandbits(64)}"
    data = jpeg_bytes(int(hashlib.sha256(text.encode()).hexdigest()[:12], 16), size)
    return api.post(f"{API}/files/upload", files={"file": ("photo.jpg", data, "image/jpeg")})


def staged_photo(api: Any, factories: Any, size: tuple[int, int] = (640, 480)) -> str:
    """A fresh upload of a run-specific JPEG image of ``size``: its uuid."""
    upload = upload_photo(api, factories, size)
    assert upload.status_code == 200, upload.text
    return upload.json()["uuid"]


def credential_body(
    factories: Any, amws_run: Any, kind: Kind, holder: str, **extra: Any
) -> dict[str, Any]:
    """The body of a credential ``holder`` (of ``kind``) holds, open now on the target's clock."""
    now = datetime.fromtimestamp(amws_run.target_clock(), UTC)
    window = {
        "activeDate": iso(now - timedelta(hours=1)),
        "expiryDate": iso(now + timedelta(days=30)),
    }
    return factories.credential(**{kind.holder_field: holder}, **window, **extra)


def credential(
    api: Any, factories: Any, amws_run: Any, kind: Kind, holder: str, **extra: Any
) -> str:
    """A credential ``holder`` (of ``kind``) holds, open now on the target's clock."""
    body = credential_body(factories, amws_run, kind, holder, **extra)
    return created(api.post(CREDENTIALS, json=body))


# -- search ------------------------------------------------------------------------------
def limit_range(kind: Kind) -> tuple[int, int]:
    limit = field_schema(kind.search_op, "limit")
    return int(limit["minimum"]), int(limit["maximum"])


def token(factories: Any) -> str:
    """A run-unique text that ends in a delimiter, so no other token contains it (a long run
    id is shortened with a digest, so the names built on it stay within their limits)."""
    tag = factories.tag("srch").replace("-", "")
    if len(tag) > 24:
        tag = tag[:12] + hashlib.sha256(tag.encode()).hexdigest()[:10]
    return tag + "Q"


def digits(factories: Any, count: int) -> str:
    return "".join(str(factories.random.randrange(10)) for _ in range(count))


def searchable_body(factories: Any, kind: Kind, mark: str, **fields: Any) -> dict[str, Any]:
    """The body of a record whose every searchable field carries ``mark`` (mobile: its own
    digits)."""
    unique = digits(factories, 8)
    values = {
        "firstName": f"Fn{mark}Ab",
        "lastName": f"Roosevelt{mark}Cd",
        "email": f"em.{mark}.{unique}@example.com".lower(),
        "mobile": f"+27{digits(factories, 9)}",
        "identityNumber": f"Id{mark}E{unique}f",
    }
    return kind.body(factories, **{**values, **fields})


def searchable(
    api: Any, factories: Any, kind: Kind, mark: str, **fields: Any
) -> tuple[str, dict[str, Any]]:
    """A record whose every searchable field carries ``mark`` (mobile: its own digits)."""
    body = searchable_body(factories, kind, mark, **fields)
    return created(api.post(kind.path, json=body)), body


def search(api: Any, kind: Kind, **body: Any) -> dict[str, Any]:
    response = api.post(kind.search_path, json=body)
    assert response.status_code == 200, (body, response.status_code, response.text)
    return response.json()


def uuids(page: dict[str, Any]) -> list[str]:
    return [row["uuid"] for row in page["entries"]]
