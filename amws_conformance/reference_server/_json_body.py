"""Reading a JSON request body: only text that can be stored and answered back unchanged.

Python's ``json`` module is more lenient than JSON: it reads UTF-16 and UTF-32 bytes, the
literals NaN and Infinity, escapes of lone UTF-16 surrogates, numbers of any length and
nesting up to the interpreter's recursion limit. Each of those either cannot be written back
into a JSON answer (the response encoder refuses NaN and lone surrogates, so a stored value
breaks every later read of the record and every search that meets it) or costs the server an
exception it does not expect. So a body is read here, once, under the bounds of the spec's
root ``x-request-json`` (our choice; rules CONV-JSON-MEDIA-TYPE and CONV-JSON-READABLE), and
anything outside them is the documented 400 for an unreadable body, before any handler runs.

A string holding U+0000 is valid JSON and valid Unicode; it is refused with a 422 naming its
field (CONV-TEXT-NUL) by :func:`nul_fields`, which request validation calls. Only the
operation's own fields are looked at: unknown fields are ignored, and never stored.

The decisions of reading are the methods of ``JsonBodyPolicy``; the pipeline hands
:func:`read` the one in force (``server.policy(JsonBodyPolicy)``), where the reading faults
plug in.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._policy import Policy

LIMITS = spec.request_json()
_SURROGATE = re.compile("[\ud800-\udfff]")
LONE_SURROGATE = "a string of the body holds a lone surrogate, which is no text"


class _Unreadable(Exception):
    """Raised from inside the decoder's hooks; becomes the 400 with this detail."""


def _parse_int(literal: str) -> int:
    # int() itself refuses more than 4300 digits with a ValueError; the bound keeps well
    # below it so no number ever reaches that conversion.
    if len(literal) > LIMITS.max_number_length:
        raise _Unreadable(f"a number is longer than {LIMITS.max_number_length} characters")
    return int(literal)


def _parse_float(literal: str) -> float:
    if len(literal) > LIMITS.max_number_length:
        raise _Unreadable(f"a number is longer than {LIMITS.max_number_length} characters")
    value = float(literal)
    if not math.isfinite(value):  # 1e400 overflows to infinity, which JSON cannot carry
        raise _Unreadable("a number is beyond the range of a double")
    return value


def _no_constant(literal: str) -> Any:
    raise _Unreadable("NaN and Infinity are not JSON numbers")


# Built once: json.loads with hooks would build a decoder (and its C scanner) per body.
_DECODER = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_no_constant
)


def declared_json(content_type: str | None) -> bool:
    """Whether the Content-Type names the JSON media type (a charset, if any, UTF-8)."""
    if not content_type:
        return False
    media, *params = content_type.split(";")
    if media.strip().lower() != LIMITS.media_type:
        return False
    for param in params:
        name, _, value = param.partition("=")
        charset = value.strip().strip('"').lower().replace("_", "-")
        if name.strip().lower() == "charset" and charset not in (LIMITS.charset, "utf8"):
            return False
    return True


def _nodes(body: Any) -> Iterator[tuple[Any, int]]:
    """Every value of the document with the number of arrays and objects it sits in, itself
    included (the top-level object is at 1); an object's keys come as strings of depth 0, so a
    scan sees them too. Iterative: a deep document must not exhaust the interpreter's stack
    here either."""
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        if isinstance(node, dict):
            for key, value in node.items():
                yield key, 0
                stack.append((value, depth + 1))
        elif isinstance(node, list):
            stack.extend((value, depth + 1) for value in node)


def lone_surrogate(body: Any) -> bool:
    """Whether a string of the document (a key or a value) holds a lone UTF-16 surrogate."""
    return any(isinstance(node, str) and _SURROGATE.search(node) for node, _ in _nodes(body))


def _check_tree(body: Any, *, surrogates_refused: bool) -> None:
    for node, depth in _nodes(body):
        if depth > LIMITS.max_depth and isinstance(node, (dict, list)):
            raise ApiError(400, f"the body nests deeper than {LIMITS.max_depth} levels")
        if surrogates_refused and isinstance(node, str) and _SURROGATE.search(node):
            raise ApiError(400, LONE_SURROGATE)


class JsonBodyPolicy(Policy):
    """The decisions of reading a JSON body, each answering what the spec's bounds require."""

    def media_type_accepted(self, content_type: str | None) -> bool:
        """Whether a body declared with ``content_type`` is read: only as JSON in UTF-8."""
        return declared_json(content_type)

    def parsed(self, raw: bytes) -> Any:
        """The JSON value of the bytes within the spec's bounds, or the 400 refusing them."""
        try:
            text = raw.decode("utf-8")  # strict: other encodings and encoded surrogates fail
        except UnicodeDecodeError:
            raise ApiError(400, "the body is not UTF-8 text") from None
        try:
            body = _DECODER.decode(text)
        except _Unreadable as error:
            raise ApiError(400, str(error)) from None
        except RecursionError:
            raise ApiError(400, f"the body nests deeper than {LIMITS.max_depth} levels") from None
        except json.JSONDecodeError:
            raise self.syntax_error() from None
        _check_tree(body, surrogates_refused=self.lone_surrogates_refused())
        return body

    def syntax_error(self) -> ApiError:
        """The refusal of bytes that are no JSON: the 400 for an unreadable body."""
        return ApiError(400, "the body is not readable JSON")

    def lone_surrogates_refused(self) -> bool:
        """Whether a string holding a lone surrogate escape is refused: yes, it is no text."""
        return True


def read(raw: bytes, content_type: str | None, policy: JsonBodyPolicy) -> Any:
    """The JSON value of a non-empty body, or the 400 that refuses it."""
    if not policy.media_type_accepted(content_type):
        raise ApiError(400, f"the body must be sent as {LIMITS.media_type}")
    return policy.parsed(raw)


def nul_fields(body: Any, known: set[str]) -> dict[str, str]:
    """The known fields whose text holds U+0000, each with its 422 message (CONV-TEXT-NUL).

    Unknown fields are ignored, never refused (CONV-UNKNOWN-FIELDS-IGNORED), and nothing of
    them is stored, so only the fields the operation's schema names are looked at.
    """
    if not isinstance(body, dict):
        return {}
    found: dict[str, str] = {}
    for name in sorted(known & set(body)):
        # The top-level field is named even for a value inside it (an array's item): the
        # names under it may be the sender's own, and are not echoed.
        if any(isinstance(node, str) and "\x00" in node for node, _ in _nodes(body[name])):
            found[name] = "must not contain the NUL character"
    return found
