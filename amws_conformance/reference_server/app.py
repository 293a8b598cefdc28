"""The ASGI application: one pipeline in front of every operation of the spec.

Order of checks, the same for every operation: client address (hardening setting), route,
API key (header length, key, enabled), rate charge, permission, path UUIDs, JSON body and
query parameters against the spec, then the domain handler; responses get the key's field
encryption. Each step answers with the documented error body. Before all of them a request
head over the HTTP layer's size is refused, and after all of them a catch-all turns any
failure nobody foresaw into the documented 500 body: no answer of the app is ever plain text.
The JSON body is read by :mod:`reference_server._json_body` (only text that can be stored and
answered back unchanged).

This module holds the correct pipeline only. The decisions inside its steps are asked of the
policies in force (``reference_server/_policy.py``): ``RequestPolicy`` (addresses, keys,
charges, permissions, path values, what the handler is asked), ``JsonBodyPolicy`` and
``ValidationPolicy`` (reading and checking a body), ``EncryptionPolicy``, ``ShapingPolicy``
(the answer) and ``HttpLayerPolicy`` (an over-long head). The faults of the pipeline bend
those decisions from the fault package; nothing here asks whether a fault is on.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from typing import Any, NoReturn

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from amws_conformance import spec
from amws_conformance.reference_server import _encryption, _json_body, _shaping, _validation, domain
from amws_conformance.reference_server._call import Call
from amws_conformance.reference_server._encryption import EncryptionPolicy
from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._http import MAX_REQUEST_HEAD, HttpLayerPolicy, head_size
from amws_conformance.reference_server._json_body import JsonBodyPolicy
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server._routing import match
from amws_conformance.reference_server._shaping import ShapingPolicy
from amws_conformance.reference_server._state import ApiKey, Server
from amws_conformance.reference_server._validation import ValidationPolicy
from amws_conformance.reference_server.control_plane import build_control_plane

MAX_JSON_BODY = 1024 * 1024
MAX_UPLOAD_BODY = 10 * 1024 * 1024
HEADER_LENGTH = spec.key_header_length()
_log = logging.getLogger("amws.reference")


class ReferenceApp:
    """ASGI callable serving ``/api/ws/v1`` and the control plane under ``/_reference``."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.handlers = domain.load_all()
        self.control = build_control_plane(server, api=self)

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
            refusal = self.server.policy(HttpLayerPolicy).head_too_long(request)
            await refusal(scope, receive, send)
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
            documented = ShapingPolicy(self.server)  # whatever the shaping in force
            await _shaping.error_response(failure, request, documented)(scope, receive, send)

    async def _serve(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].startswith("/_reference"):
            await self.control(scope, receive, send)
            return
        try:
            response = await self._handle(request)
        except ApiError as error:
            shaping = self.server.policy(ShapingPolicy)
            response = _shaping.error_response(error, request, shaping)
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
        policy = server.policy(RequestPolicy)
        peer = request.scope.get("client")  # what request.client is made of, without the copy
        client = peer[0] if peer else ""
        if not policy.client_admitted(client):
            raise ApiError(403, "the service accepts loopback clients only")
        path = policy.routed_path(_request_path(request))
        if (answer := policy.answered_before_routing(request)) is not None:
            return answer
        op, path_params = match(request.method, path)
        request.state.operation = op
        if policy.path_checked_first():
            self._check_path(op, path_params, policy)
        refusal: ApiError | None = None
        try:
            key = self._authenticate(request, op, client, policy)
        except ApiError as error:
            # A refusal is answered at once, unless the policy carries the request out first.
            key = getattr(request.state, "key", None)
            if key is None or not policy.carries_out_refused(error, key, op):
                raise
            refusal = error
        self._check_path(op, path_params, policy)
        body = await self._read_body(request, op, key, policy)
        # An operation without query parameters ignores the query: it is not even parsed.
        asked = request.query_params if _validation.takes_query(op) else {}
        query = _validation.validate_query(op, asked, server.policy(ValidationPolicy))
        query = policy.paging_asked(query)
        if isinstance(body, dict):
            body = policy.paging_asked(body)
        path_params = policy.addressed(op, path_params, body)
        handler = self.handlers.get(op.operation_id)
        if handler is None:
            raise ApiError(501, "operation not implemented by the reference server")
        call = Call(
            op=op, path=path_params, query=query, body=body, key=key, server=server, request=request
        )
        response = await handler(call)
        if refusal is not None:
            return policy.refused_answer(refusal, request, response)
        response = _shaping.shaped(server.policy(ShapingPolicy), op, response)
        encryption = server.policy(EncryptionPolicy).answer_settings(key)
        if encryption and response.media_type == "application/json":
            response = _encryption.encrypt_response(response, encryption)
        return policy.answered(response, request, key)

    def _authenticate(
        self, request: Request, op: spec.Operation, client: str, policy: RequestPolicy
    ) -> ApiKey | None:
        if not op.keyed:
            policy.keyless_header(request.headers.get("authorization"))
            return None
        header = policy.header(request)
        if header is None:
            self._fail_auth(f"anon:{client}", "the Authorization header is missing", policy)
        if not HEADER_LENGTH[0] <= len(header) <= HEADER_LENGTH[1]:
            self._fail_auth(
                f"anon:{client}", "the Authorization header has the wrong length", policy
            )
        value = policy.key_value(header)
        key = policy.key_for(value)
        if key is None:
            # An unknown key pays from a bucket of its own value (RATE-COST-FAILED-AUTH-400).
            digest = hashlib.sha256(value.encode()).hexdigest()
            self._fail_auth(f"anon:key:{digest}", "unknown API key", policy)
        if not policy.authenticates(key):
            self._fail_auth(key.uuid, "the API key is disabled", policy)
        request.state.key = key
        policy.charge_key(key, policy.cost(op))
        if not policy.permitted(key, op):
            raise ApiError(403, "the API key lacks the permission for this operation")
        return key

    def _fail_auth(self, bucket: str, detail: str, policy: RequestPolicy) -> NoReturn:
        policy.charge_failed_authentication(bucket)
        raise ApiError(401, detail)

    def _check_path(
        self, op: spec.Operation, params: dict[str, str], policy: RequestPolicy
    ) -> None:
        errors: dict[str, str] = {}
        for name, uuid in _path_parameters(op):
            value = params.get(name, "")
            # An empty segment is a missing parameter (400), not a malformed one (422).
            missing = not value.strip() and op.keyed and "400" in op.statuses
            if missing and policy.empty_segment_missing():
                raise ApiError(400, f"the path parameter {name} is missing")
            if uuid and not _validation.is_uuid(value):
                errors[name] = "is not a valid uuid"
        if errors and op.keyed:
            raise policy.malformed_path(errors)

    async def _read_body(
        self, request: Request, op: spec.Operation, key: ApiKey | None, policy: RequestPolicy
    ) -> Any:
        server = self.server
        content = _body_media_types(op)
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
        content_type = request.headers.get("content-type")
        body = _json_body.read(raw, content_type, server.policy(JsonBodyPolicy))
        encryption = server.policy(EncryptionPolicy).settings(key)
        if encryption and isinstance(body, dict):
            body = _encryption.decrypt_request(body, encryption)
        try:
            return _validation.validate_body(op, body, server.policy(ValidationPolicy))
        except ApiError as error:
            return policy.body_refused(raw, body, error)


# The characters of a path that starlette's URL (built from the Host header and the path, then
# split again) leaves as they are; it escapes ?, # and \ and drops control characters.
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9._~/-]*")


def _request_path(request: Request) -> str:
    """The path a request addresses: its own when plain, else as starlette's URL has it.

    Building the URL costs more than the rest of routing, so a plain path skips it.
    """
    path: str = request.scope["path"]
    return path if _PLAIN_PATH.fullmatch(path) else request.url.path


# What the pipeline reads of an operation's spec on every request, read once.
@functools.cache
def _path_parameters(op: spec.Operation) -> tuple[tuple[str, bool], ...]:
    """The operation's path parameters: each name, and whether its schema is a UUID."""
    return tuple(
        (param["name"], spec.resolve(param["schema"]).get("format") == "uuid")
        for param in op.parameters()
        if param.get("in") == "path"
    )


@functools.cache
def _body_media_types(op: spec.Operation) -> frozenset[str]:
    """The media types the operation's request body is documented in (none: no body)."""
    return frozenset((spec.resolve(op.raw.get("requestBody")) or {}).get("content", {}))


def create_app(server: Server) -> ReferenceApp:
    """The ASGI app for an already provisioned :class:`Server`."""
    return ReferenceApp(server)
