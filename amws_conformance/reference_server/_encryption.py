"""Per-key payload encryption: listed fields arrive encrypted and leave encrypted.

Which settings apply to a key's requests and answers is decided by ``EncryptionPolicy``
(``server.policy(EncryptionPolicy)``), where the encryption faults plug in.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response

from amws_conformance import spec
from amws_conformance.reference_server._crypto import decrypt_text, encrypt_text
from amws_conformance.reference_server._errors import invalid_fields
from amws_conformance.reference_server._policy import Policy

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._api_key import ApiKey


class EncryptionPolicy(Policy):
    """The field encryption of a key's requests and answers."""

    def settings(self, key: ApiKey | None) -> dict[str, Any] | None:
        """The encryption a key's request bodies arrive with: the key's own (None: plain)."""
        return key.encryption if key is not None else None

    def answer_settings(self, key: ApiKey | None) -> dict[str, Any] | None:
        """The encryption a key's answers leave with: the same as its requests."""
        return self.settings(key)


def fields_of(settings: dict[str, Any]) -> frozenset[str]:
    """The override list when one is given, else the spec's default list."""
    override = settings.get("fields") or []
    return frozenset(override or spec.openapi()["x-default-encrypted-fields"])


def decrypt_request(body: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    fields = fields_of(settings)
    out = dict(body)
    errors: dict[str, str] = {}
    for name in fields & set(body):
        if isinstance(body[name], str):
            try:
                out[name] = decrypt_text(body[name], settings["secret"], settings["iv"])
            except ValueError:
                errors[name] = "is not encrypted with this key"
    if errors:
        raise invalid_fields(errors)
    return out


def _encrypt(node: Any, fields: frozenset[str], secret: str, iv: str) -> Any:
    if isinstance(node, dict):
        return {
            k: encrypt_text(v, secret, iv)
            if k in fields and isinstance(v, str)
            else _encrypt(v, fields, secret, iv)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_encrypt(v, fields, secret, iv) for v in node]
    return node


def encrypt_response(response: Response, settings: dict[str, Any]) -> Response:
    body = json.loads(bytes(response.body))
    fields = fields_of(settings)
    headers = {
        k: v
        for k, v in response.headers.items()
        if k.lower() not in ("content-length", "content-type")
    }
    return JSONResponse(
        _encrypt(body, fields, settings["secret"], settings["iv"]), response.status_code, headers
    )


def encrypt_payload(payload: Any, settings: dict[str, Any]) -> Any:
    """Encrypt the listed fields of an outbound payload (webhooks use the same rule)."""
    return _encrypt(payload, fields_of(settings), settings["secret"], settings["iv"])
