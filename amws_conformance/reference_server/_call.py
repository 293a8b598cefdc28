"""What a domain handler receives, and the replies it gives back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from amws_conformance import spec

if TYPE_CHECKING:
    from amws_conformance.reference_server._api_key import ApiKey
    from amws_conformance.reference_server._server import ServerView


@dataclass
class Call:
    op: spec.Operation
    path: dict[str, str]
    query: dict[str, Any]
    body: Any
    key: ApiKey | None
    server: ServerView
    request: Request

    @property
    def system(self) -> str:
        assert self.key is not None, "only keyed operations have a system"
        return self.key.system

    @property
    def client(self) -> str:
        return self.request.client.host if self.request.client else ""

    @property
    def key_name(self) -> str:
        return self.key.name if self.key else ""


class _Json(JSONResponse):
    """starlette's JSON answer, its bytes the same, from an encoder built once (JSONResponse
    builds one per answer)."""

    def render(self, content: Any) -> bytes:
        return _ENCODER.encode(content).encode("utf-8")


# JSONResponse.render's own settings.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))


def reply(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Response:
    return _Json(body, status_code=status, headers=dict(headers or {}))


def ack(uuid: str, status: int = 200, message: str = "success") -> Response:
    """The acknowledgement every successful write answers with."""
    return reply(status, {"code": status, "message": message, "uuid": uuid})
