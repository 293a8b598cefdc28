"""The control plane under ``/_reference``: what a real deployment does in its admin screens.

Token-protected (``Authorization: Bearer <control token>``); an API key never opens it.

``POST /_reference/peer-request`` is a test hook: it serves one API request in-process as if
it came from another client address (``{peer, method, path, headers, json}`` in; ``{status,
body}`` out), so that a suite running on this machine can observe the loopback-only setting
from the outside (AUTH-RESTRICT-TO-LOCALHOST) without importing the server.
"""

from __future__ import annotations

import ipaddress
import json
from http import HTTPStatus
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from amws_conformance.reference_server._crypto import equal
from amws_conformance.reference_server._events import ClockMoved
from amws_conformance.reference_server._state import Server
from amws_conformance.reference_server._time import format_instant, parse_instant
from amws_conformance.reference_server.hardware import controllers
from amws_conformance.reference_server.webhooks import dispatcher


def _error(status: int, reason: str) -> JSONResponse:
    return JSONResponse({"code": status, "reason": reason}, status_code=status)


def build_control_plane(server: Server, api: Any = None) -> Starlette:
    """The control plane of ``server``; ``api`` is the ASGI app serving its ``/api/ws/v1``
    (what ``peer-request`` calls)."""

    def authorised(request: Request) -> bool:
        header = request.headers.get("authorization", "")
        return equal(header, f"Bearer {server.control_token}")

    async def body_of(request: Request) -> dict[str, Any]:
        try:
            body = json.loads(await request.body() or b"null")
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        if not isinstance(body, dict):
            raise ValueError("a JSON object is required")
        return body

    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            if not authorised(request):
                return _error(401, "control token required")
            try:
                return await handler(request)
            except (ValueError, TypeError, KeyError) as exc:
                return _error(400, f"bad control request: {exc}")

        return endpoint

    async def clock(request: Request) -> JSONResponse:
        if request.method == "PUT":
            body = await body_of(request)
            if "now" in body:
                server.clock.set(parse_instant(str(body["now"])))
            elif "advance_seconds" in body:
                server.clock.advance(float(body["advance_seconds"]))
            else:
                raise ValueError("give now or advance_seconds")
            server.events.publish(ClockMoved())
        return JSONResponse({"now": format_instant(server.clock.now())})

    async def settings(request: Request) -> JSONResponse:
        if request.method == "PUT":
            body = await body_of(request)
            unknown = set(body) - set(server.settings)
            if unknown:
                raise ValueError(f"unknown settings {sorted(unknown)}")
            return JSONResponse(server.update_settings(body))
        return JSONResponse(server.settings)

    async def webhook_integration(request: Request) -> JSONResponse:
        if request.method == "GET":
            # What the admin screen shows: lets a suite restore the integration it changes.
            return JSONResponse(dispatcher.shown(server))
        body = await body_of(request)
        return JSONResponse(dispatcher.configure(server, body))

    def listing(kind: str) -> Any:
        async def handler(request: Request) -> JSONResponse:
            return JSONResponse(server.store.all(kind))

        return handler

    async def controller_credentials(request: Request) -> JSONResponse:
        return JSONResponse(controllers.listing(server))

    async def faults(request: Request) -> JSONResponse:
        # The self-check switches faults between groups of tests instead of restarting.
        if request.method == "PUT":
            server.faults.switch((await body_of(request)).get("active", []))
        return JSONResponse({"active": sorted(server.faults.active)})

    async def watchlist_flags(request: Request) -> JSONResponse:
        # Flags raised on hardware per watchlist entry, and the order of raises and withdrawals.
        return JSONResponse(
            {
                "flags": server.store.all("watchlist_flag"),
                "log": server.store.all("watchlist_hardware_log"),
            }
        )

    async def empty_photo(request: Request) -> JSONResponse:
        # Simulates storage that lost a photo's bytes (the "stored image is empty" case).
        photo_id = request.path_params["photo_id"]
        record = server.store.get("photo", photo_id)
        if record is None:
            return _error(404, "no such photo")
        server.store.replace("photo", photo_id, {**record, "_jpeg": "", "_thumbnail": ""})
        return JSONResponse({"emptied": photo_id})

    async def peer_request(request: Request) -> JSONResponse:
        # One API request served as if from ``peer`` (the hook's whole purpose is the address).
        body = await body_of(request)
        peer = str(ipaddress.ip_address(str(body["peer"])))
        path = str(body["path"])
        if api is None or not path.startswith("/api/"):
            raise ValueError("only requests to the API can be sent as from another peer")
        transport = httpx.ASGITransport(app=api, client=(peer, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://reference") as peer_:
            answer = await peer_.request(
                str(body.get("method", "GET")),
                path,
                headers=dict(body.get("headers") or {}),
                json=body.get("json"),
            )
        try:
            content: Any = answer.json()
        except ValueError:
            content = answer.text
        return JSONResponse({"status": answer.status_code, "body": content})

    return Starlette(
        routes=[
            Route("/_reference/clock", guarded(clock), methods=["GET", "PUT"]),
            Route("/_reference/peer-request", guarded(peer_request), methods=["POST"]),
            Route("/_reference/settings", guarded(settings), methods=["GET", "PUT"]),
            Route(
                "/_reference/webhook-integration",
                guarded(webhook_integration),
                methods=["GET", "PUT"],
            ),
            Route(
                "/_reference/hardware/relay-events",
                guarded(listing("relay_event")),
                methods=["GET"],
            ),
            Route(
                "/_reference/hardware/credentials", guarded(controller_credentials), methods=["GET"]
            ),
            Route("/_reference/audit", guarded(listing("audit")), methods=["GET"]),
            Route("/_reference/outbox", guarded(listing("outbox")), methods=["GET"]),
            Route("/_reference/faults", guarded(faults), methods=["GET", "PUT"]),
            Route(
                "/_reference/hardware/watchlist-flags", guarded(watchlist_flags), methods=["GET"]
            ),
            Route(
                "/_reference/photos/{photo_id}/content", guarded(empty_photo), methods=["DELETE"]
            ),
            Route(
                "/_reference/hardware/access-events",
                guarded(listing("access_event")),
                methods=["GET"],
            ),
        ],
        # An unknown control path or method answers the same JSON body as the API's errors,
        # not Starlette's plain text.
        exception_handlers={HTTPException: _http_error},
    )


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    return _error(status, f"{status} - {HTTPStatus(status).phrase}")
