"""Faults of the shared pipeline (conventions, paging, authentication, rate limits).

Each function is a no-op unless its fault is switched on; app.py calls them at the point of
the pipeline the rule concerns, so the correct path reads as before.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

import spec
from reference_server._errors import ApiError
from reference_server._state import ApiKey, Server
from reference_server.faults import Faults

# Cost faults: the operations each one charges wrongly, and what it charges them.
_COSTS: dict[str, tuple[tuple[str, ...], int]] = {
    "invite-writes-cost-30": (("createInvite", "updateInvite"), 30),
    "photo-upload-cost-30": (("uploadFile",), 30),
    "photo-downloads-cost-30": (("downloadPhoto", "downloadThumbnail"), 30),
    "status-read-cost-30": (("getInviteStatus", "deleteFile"), 30),
    "credential-writes-cost-30": (("createCredential", "updateCredential"), 30),
    "trigger-cost-50": (("triggerAccessControlPoint",), 50),
    "trigger-cost-30": (("triggerAccessControlPoint",), 30),
    "trigger-costs-a-read": (("triggerAccessControlPoint",), 30),
    "upload-charged-as-read": (("uploadFile",), 30),
    "thumbnail-charged-as-read": (("downloadThumbnail",), 30),
}


def cost(faults: Faults, op: spec.Operation, units: int) -> int:
    for name, (operations, wrong) in _COSTS.items():
        if faults.on(name) and op.operation_id in operations:
            return wrong
    return units


# Collections the spec gives no list operation, and the fault that lists them anyway.
_WHOLESALE = {
    "/api/ws/v1/persons": ("person", "persons-listed-wholesale"),
    "/api/ws/v1/credentials": ("credential", "credentials-listed-wholesale"),
}


def wholesale_list(server: Server, request: Request) -> Response | None:
    """``*-listed-wholesale``: a keyed GET on such a collection answers all its records."""
    kind, fault = _WHOLESALE.get(request.url.path, ("", ""))
    if request.method != "GET" or not kind or not server.faults.on(fault):
        return None
    key = server.key_by_value(request.headers.get("authorization", "").removeprefix("Bearer "))
    if key is None:
        return None
    records = server.store.all(kind, key.system)
    return JSONResponse([{k: v for k, v in r.items() if not k.startswith("_")} for r in records])


def permitted(faults: Faults, key: ApiKey, op: spec.Operation) -> bool | None:
    """A permission fault's verdict on ``key`` for ``op``; None when no fault decides."""
    operation_id = op.operation_id
    if faults.on("file-writes-need-read") and operation_id in ("uploadFile", "deleteFile"):
        return "Photos - Read" in key.permissions
    if faults.on("photo-downloads-unguarded") and operation_id.startswith("download"):
        return True
    if faults.on("trigger-needs-no-permission") and operation_id == "triggerAccessControlPoint":
        return True
    return None


def key_by_prefix(server: Server, value: str) -> ApiKey | None:
    """``key-compared-by-prefix``: the first 32 characters are all that is compared."""
    if not server.faults.on("key-compared-by-prefix"):
        return None
    for system in server.systems():
        for record in server.store.all("apikey", system):
            if record["value"][:32] == value[:32]:
                return ApiKey.from_record(record, system)
    return None


def encryption_of(faults: Faults, key: ApiKey | None) -> dict[str, Any] | None:
    """The key's encryption settings (``override-list-merged`` adds the default list)."""
    settings = key.encryption if key is not None else None
    if settings and settings.get("fields") and faults.on("override-list-merged"):
        default = spec.openapi()["x-default-encrypted-fields"]
        settings = {**settings, "fields": [*settings["fields"], *default]}
    return settings


def skew_paging(faults: Faults, query: dict[str, Any], body: Any) -> None:
    """``limit-ignored`` and ``page-starts-early``: change what the handler is asked for."""
    for asked in (query, body):
        if not isinstance(asked, dict):
            continue
        if faults.on("limit-ignored") and isinstance(asked.get("limit"), int):
            asked["limit"] = 1_000_000
        if faults.on("page-starts-early") and isinstance(asked.get("start"), int):
            asked["start"] = max(0, asked["start"] - 1)


def body_uuid_wins(faults: Faults, op: spec.Operation, path: dict[str, str], body: Any) -> None:
    """``body-uuid-wins``: an update addresses the record its body names."""
    wins = faults.on("body-uuid-wins") and op.method == "PUT" and "uuid" in path
    if wins and isinstance(body, dict) and isinstance(body.get("uuid"), str):
        path["uuid"] = body["uuid"]


def keyless_header(server: Server, header: str | None) -> None:
    """``keyless-checks-header``: a keyless operation refuses a header naming no key."""
    checked = bool(header) and server.faults.on("keyless-checks-header")
    if checked and server.key_by_value(str(header).removeprefix("Bearer ")) is None:
        raise ApiError(401, "unknown API key")


def carried_out_anyway(faults: Faults, error: ApiError, op: spec.Operation) -> bool:
    """Whether a fault lets a refused request run before its refusal is answered."""
    if error.status == 429:
        return faults.on("rate-limited-request-applied")
    if error.status != 403:
        return False
    if op.method == "GET":
        return faults.on("refused-read-leaks-result")
    return faults.on("refused-write-applied")


class SystemThrottle:
    """``system-wide-throttle``: a 429 of one key holds back every key of its system."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._until: dict[str, float] = {}

    def check(self, key: ApiKey) -> None:
        if not self.server.faults.on("system-wide-throttle"):
            return
        left = self._until.get(key.system, 0.0) - self.server.clock.timestamp()
        if left > 0:
            wait = str(math.ceil(left))
            raise ApiError(429, "rate limit exhausted", headers={"Retry-After": wait})

    @contextmanager
    def watching(self, key: ApiKey) -> Iterator[None]:
        """Remember a 429 answered to ``key`` inside the block."""
        try:
            yield
        except ApiError as error:
            if self.server.faults.on("system-wide-throttle") and error.status == 429:
                wait = float(error.headers.get("Retry-After", "1"))
                self._until[key.system] = self.server.clock.timestamp() + wait
            raise
