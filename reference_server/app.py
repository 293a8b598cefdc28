"""The ASGI application: one pipeline in front of every operation of the spec.

Order of checks, the same for every operation: client address (hardening setting), route,
API key (header length, key, enabled), rate charge, permission, path UUIDs, JSON body and
query parameters against the spec, then the domain handler; responses get the key's field
encryption. Each step answers with the documented error body. Before all of them a request
head over the HTTP layer's size is refused, and after all of them a catch-all turns any
failure nobody foresaw into the documented 500 body: no answer of the app is ever plain text.
The JSON body is read by :mod:`reference_server._json_body` (only text that can be stored and
answered back unchanged).
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

import spec
from reference_server import (
    _encryption,
    _json_body,
    _pipeline_faults,
    _shaping,
    _validation,
    domain,
)
from reference_server._call import Call
from reference_server._errors import ApiError, invalid_fields
from reference_server._http import HEAD_TOO_LONG, MAX_REQUEST_HEAD, head_size
from reference_server._routing import match
from reference_server._state import ApiKey, Server

MAX_JSON_BODY = 1024 * 1024
MAX_UPLOAD_BODY = 10 * 1024 * 1024
FAILED_AUTH_COST = spec.rate_limit().failed_authentication_cost  # no operation carries it
HEADER_LENGTH = spec.key_header_length()
RELAY_CONTROL = "Access Control Point Relay Control"
_log = logging.getLogger("amws.reference")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ReferenceApp:
    """ASGI callable serving ``/api/ws/v1`` and the control plane under ``/_reference``."""

    def __init__(self, server: Server) -> None:
        from reference_server.control_plane import build_control_plane

        self.server = server
        self.handlers = domain.load_all()
        self.control = build_control_plane(server, api=self)
        self._throttle = _pipeline_faults.SystemThrottle(server)
        self._refused_bodies: set[str] = set()  # fault refused-body-accepted-on-retry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        if head_size(scope) > MAX_REQUEST_HEAD:
            await self._head_too_long(request)(scope, receive, send)
            return
        try:
            await self._serve(request, scope, receive, watched)
        except Exception:
            # The last resort: a failure nobody foresaw still answers the documented body
            # (the reader's shape on its operations), never uvicorn's text/plain 500.
            _log.exception("unhandled error answering %s %s", scope["method"], scope["path"])
            if started:
                raise  # the answer is half sent; uvicorn can only close the connection
            failure = ApiError(500, "the server could not complete the request")
            await _shaping.error_response(failure, request)(scope, receive, send)

    def _head_too_long(self, request: Request) -> Response:
        if self.server.faults.on("http-layer-plain-text"):
            return Response("Invalid HTTP request received.", 400, media_type="text/plain")
        return _shaping.error_response(ApiError(400, HEAD_TOO_LONG), request)

    async def _serve(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].startswith("/_reference"):
            await self.control(scope, receive, send)
            return
        try:
            response = await self._handle(request)
        except ApiError as error:
            response = _shaping.error_response(error, request, self.server.faults)
        response = _shaping.swap_status(
            self.server, getattr(request.state, "operation", None), response
        )
        await response(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.server.start_background()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.server.stop_background()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- pipeline ---------------------------------------------------------------------
    async def _handle(self, request: Request) -> Response:
        server = self.server
        client = request.client.host if request.client else ""
        restricted = server.settings["restrict_to_localhost"]
        if (
            restricted
            and not _is_loopback(client)
            and not server.faults.on("localhost-not-enforced")
        ):
            raise ApiError(403, "the service accepts loopback clients only")
        path = request.url.path
        if server.faults.on("any-version-served"):
            path = re.sub(r"^/api/ws(/v[0-9]+)?/", "/api/ws/v1/", path)
        if (listing := _pipeline_faults.wholesale_list(server, request)) is not None:
            return listing
        if server.faults.on("vehicle-writes-acknowledged"):
            from reference_server.domain.vehicles import acknowledged_write

            if (stub := acknowledged_write(request)) is not None:
                return stub
        op, path_params = match(request.method, path)
        request.state.operation = op
        if server.faults.on("path-checked-before-key"):
            self._check_path(op, path_params)
        refusal: ApiError | None = None
        try:
            key = self._authenticate(request, op, client)
        except ApiError as error:
            key = getattr(request.state, "key", None)
            if key is None or not _pipeline_faults.carried_out_anyway(server.faults, error, op):
                raise
            if error.status == 429 and not self._permitted(key, op):
                raise
            refusal = error
        self._check_path(op, path_params)
        body = await self._read_body(request, op, key)
        query = _validation.validate_query(op, request.query_params, server.faults)
        _pipeline_faults.skew_paging(server.faults, query, body)
        _pipeline_faults.body_uuid_wins(server.faults, op, path_params, body)
        handler = self.handlers.get(op.operation_id)
        if handler is None:
            raise ApiError(501, "operation not implemented by the reference server")
        call = Call(
            op=op, path=path_params, query=query, body=body, key=key, server=server, request=request
        )
        response = await handler(call)
        if refusal is not None:
            return _shaping.refused_after_all(refusal, request, response)
        response = _shaping.apply_faults(server, op, response)
        encryption = _pipeline_faults.encryption_of(server.faults, key)
        encrypting = encryption and not server.faults.on("encryption-ignored")
        if encrypting and response.media_type == "application/json":
            response = _encryption.encrypt_response(response, encryption)
        if key is not None and server.faults.on("session-cookie"):
            response.set_cookie("session", request.headers.get("authorization", ""))
        return response

    def _authenticate(self, request: Request, op: spec.Operation, client: str) -> ApiKey | None:
        server = self.server
        header = request.headers.get("authorization")
        if not op.keyed:
            _pipeline_faults.keyless_header(server, header)
            return None
        if header is None and server.faults.on("session-cookie"):
            header = request.cookies.get("session")
        if header is None and server.faults.on("missing-header-403"):
            raise ApiError(403, "no API key was given")
        if header is None:
            self._fail_auth(f"anon:{client}", "the Authorization header is missing")
        if not HEADER_LENGTH[0] <= len(header) <= HEADER_LENGTH[1]:
            self._fail_auth(f"anon:{client}", "the Authorization header has the wrong length")
        value = (
            header if server.faults.on("bearer-not-stripped") else header.removeprefix("Bearer ")
        )
        key = server.key_by_value(value) or _pipeline_faults.key_by_prefix(server, value)
        if key is None:
            # An unknown key pays from a bucket of its own value (RATE-COST-FAILED-AUTH-400).
            digest = hashlib.sha256(value.encode()).hexdigest()
            self._fail_auth(f"anon:key:{digest}", "unknown API key")
        if not key.enabled and not server.faults.on("disabled-key-accepted"):
            self._fail_auth(key.uuid, "the API key is disabled")
        cost = int(op.rate_cost or 0)
        if server.faults.on("reads-free") and cost == 30:
            cost = 0
        request.state.key = key
        cost = _pipeline_faults.cost(server.faults, op, cost)
        self._throttle.check(key)
        with self._throttle.watching(key):
            self._charge(key.uuid, cost)
        if not self._permitted(key, op):
            raise ApiError(403, "the API key lacks the permission for this operation")
        return key

    def _permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        faults = self.server.faults
        faulty = _pipeline_faults.permitted(faults, key, op)
        if faulty is not None:
            return faulty
        if op.permission in key.permissions:
            return True
        if faults.on("readonly-can-write") and not str(op.permission).startswith("Read"):
            return True
        return (
            faults.on("relay-control-with-read")
            and op.permission == RELAY_CONTROL
            and "Read Access Control Points" in key.permissions
        )

    def _charge(self, bucket: str, cost: int) -> None:
        wait = self.server.buckets.charge(bucket, cost)
        if wait is not None:
            if self.server.faults.on("retry-after-one-second"):
                wait = 1
            headers = {} if self.server.faults.on("no-retry-after") else {"Retry-After": str(wait)}
            raise ApiError(429, "rate limit exhausted", headers=headers)

    def _fail_auth(self, bucket: str, detail: str) -> None:
        if not self.server.faults.on("failed-auth-free"):
            self._charge(bucket, FAILED_AUTH_COST)
        raise ApiError(401, detail)

    def _check_path(self, op: spec.Operation, params: dict[str, str]) -> None:
        errors: dict[str, str] = {}
        for param in op.parameters():
            if param.get("in") != "path":
                continue
            schema = spec._load.resolve(param["schema"])
            value = params.get(param["name"], "")
            # An empty segment is a missing parameter (400), not a malformed one (422).
            missing = not value.strip() and op.keyed and "400" in op.statuses
            if missing and not self.server.faults.on("empty-path-parameter-422"):
                raise ApiError(400, f"the path parameter {param['name']} is missing")
            if schema.get("format") == "uuid" and not _validation.is_uuid(value):
                errors[param["name"]] = "is not a valid uuid"
        if errors and op.keyed:
            if self.server.faults.on("bad-uuid-404"):
                raise ApiError(404, "no record with that identifier")
            raise invalid_fields(errors)

    async def _read_body(self, request: Request, op: spec.Operation, key: ApiKey | None) -> Any:
        request_body = spec._load.resolve(op.raw.get("requestBody")) or {}
        content = request_body.get("content", {})
        limit = MAX_UPLOAD_BODY if "multipart/form-data" in content else MAX_JSON_BODY
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise ApiError(413, "request body too large")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > limit:
                raise ApiError(413, "request body too large")
        request.state.raw_body = raw
        if "application/json" not in content:
            return None
        if not raw.strip():
            raise ApiError(400, "a JSON body is required")
        body = _json_body.read(raw, request.headers.get("content-type"), self.server.faults)
        encryption = _pipeline_faults.encryption_of(self.server.faults, key)
        if encryption and isinstance(body, dict):
            body = _encryption.decrypt_request(body, encryption)
        try:
            return _validation.validate_body(op, body, self.server.faults)
        except ApiError as error:
            if error.status == 422 and self.server.faults.on("refused-body-accepted-on-retry"):
                digest = hashlib.sha256(raw).hexdigest()
                if digest in self._refused_bodies:
                    return body
                self._refused_bodies.add(digest)
            raise


def create_app(server: Server) -> ReferenceApp:
    """The ASGI app for an already provisioned :class:`Server`."""
    return ReferenceApp(server)
