"""Faults of authentication and permissions.

The API key header and how a key is found (Bearer prefix, disabled keys, a prefix compare, a
session cookie, the keyless operations), the permission an operation needs and the 403 that
refuses it, the loopback-only setting and a key's payload encryption. Each fault overrides one
decision of the request pipeline or the encryption (``RequestPolicy``, ``EncryptionPolicy``;
the policy seam, ``reference_server/_policy.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from amws_conformance import spec
from amws_conformance.reference_server._encryption import EncryptionPolicy
from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server.faults._model import overrides
from amws_conformance.reference_server.faults._responses import refused_after_all

if TYPE_CHECKING:
    from amws_conformance.reference_server._api_key import ApiKey


@overrides("bearer-not-stripped", "AUTH-BEARER-PREFIX", "a Bearer-prefixed key is not recognised")
class _BearerNotStripped(RequestPolicy):
    def key_value(self, header: str) -> str:
        return header


@overrides("disabled-key-accepted", "AUTH-DISABLED-KEY-401", "a disabled key authenticates")
class _DisabledKeyAccepted(RequestPolicy):
    def authenticates(self, key: ApiKey) -> bool:
        return True


@overrides("readonly-can-write", "AUTH-PERMISSION-READ-WRITE", "write permissions are not checked")
class _ReadonlyCanWrite(RequestPolicy):
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        return super().permitted(key, op) or not str(op.permission).startswith("Read")


RELAY_CONTROL = "Access Control Point Relay Control"


@overrides(
    "relay-control-with-read", "AUTH-RELAY-CONTROL-SEPARATE", "reading points allows the trigger"
)
class _RelayControlWithRead(RequestPolicy):
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        return super().permitted(key, op) or (
            op.permission == RELAY_CONTROL and "Read Access Control Points" in key.permissions
        )


@overrides(
    "encryption-ignored", "AUTH-PAYLOAD-ENCRYPTION", "responses to an encrypting key are plain"
)
class _EncryptionIgnored(EncryptionPolicy):
    def answer_settings(self, key: ApiKey | None) -> dict[str, Any] | None:
        return None


@overrides(
    "localhost-not-enforced", "AUTH-RESTRICT-TO-LOCALHOST", "the loopback-only setting is ignored"
)
class _LocalhostNotEnforced(RequestPolicy):
    def client_admitted(self, client: str) -> bool:
        return True


@overrides("missing-header-403", "AUTH-HEADER-REQUIRED", "a request without a header answers 403")
class _MissingHeader403(RequestPolicy):
    def header(self, request: Request) -> str | None:
        found = super().header(request)
        if found is None:
            raise ApiError(403, "no API key was given")
        return found


@overrides(
    "keyless-checks-header",
    "AUTH-KEYLESS-OPERATIONS",
    "signed links and the virtual reader refuse an unknown Authorization header with 401",
)
class _KeylessChecksHeader(RequestPolicy):
    def keyless_header(self, header: str | None) -> None:
        super().keyless_header(header)
        if header and self.server.key_by_value(header.removeprefix("Bearer ")) is None:
            raise ApiError(401, "unknown API key")


@overrides(
    "path-checked-before-key",
    "AUTH-HEADER-LENGTH",
    "path UUIDs are checked before the Authorization header",
)
class _PathCheckedBeforeKey(RequestPolicy):
    def path_checked_first(self) -> bool:
        return True


@overrides(
    "key-compared-by-prefix",
    "AUTH-INVALID-KEY-401",
    "a value sharing a key's first 32 characters authenticates as that key",
)
class _KeyComparedByPrefix(RequestPolicy):
    def key_for(self, value: str) -> ApiKey | None:
        found = super().key_for(value)
        if found is not None:
            return found
        store = self.server.store
        for system in self.server.systems():
            for record in store.all("apikey", system):
                if record["value"][:32] == value[:32]:
                    return self.server.key_by_value(record["value"])
        return None


@overrides(
    "session-cookie",
    "AUTH-NO-SESSION",
    "answers set a session cookie that authenticates later requests without a header",
)
class _SessionCookie(RequestPolicy):
    def header(self, request: Request) -> str | None:
        found = super().header(request)
        return request.cookies.get("session") if found is None else found

    def answered(self, response: Response, request: Request, key: ApiKey | None) -> Response:
        response = super().answered(response, request, key)
        if key is not None:
            response.set_cookie("session", request.headers.get("authorization", ""))
        return response


@overrides(
    "refused-write-applied",
    "AUTH-403-NOTHING-CHANGED",
    "a write refused with 403 is carried out before the refusal",
)
class _RefusedWriteApplied(RequestPolicy):
    def carries_out_refused(self, error: ApiError, key: ApiKey, op: spec.Operation) -> bool:
        write = error.status == 403 and op.method != "GET"
        return write or super().carries_out_refused(error, key, op)

    def refused_answer(self, refusal: ApiError, request: Request, response: Response) -> Response:
        return refused_after_all(refusal, request, response)


@overrides(
    "refused-read-leaks-result",
    "AUTH-403-NO-PARTIAL-RESULT",
    "a read refused with 403 carries the result next to the error",
)
class _RefusedReadLeaksResult(RequestPolicy):
    def carries_out_refused(self, error: ApiError, key: ApiKey, op: spec.Operation) -> bool:
        read = error.status == 403 and op.method == "GET"
        return read or super().carries_out_refused(error, key, op)

    def refused_answer(self, refusal: ApiError, request: Request, response: Response) -> Response:
        return refused_after_all(refusal, request, response)


@overrides(
    "override-list-merged",
    "AUTH-ENCRYPTION-OVERRIDE-LIST",
    "a key's override list is added to the default list instead of replacing it",
)
class _OverrideListMerged(EncryptionPolicy):
    def settings(self, key: ApiKey | None) -> dict[str, Any] | None:
        settings = super().settings(key)
        if not settings or not settings.get("fields"):
            return settings
        default = spec.openapi()["x-default-encrypted-fields"]
        return {**settings, "fields": [*settings["fields"], *default]}
