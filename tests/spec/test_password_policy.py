"""The password rule of users, as the spec encodes it, accepts and refuses what doc2 says."""

from __future__ import annotations

import jsonschema
import pytest

from amws_conformance import spec
from amws_conformance.spec._load import resolve


def _password_schema() -> dict:
    body = resolve(spec.operation("createUser").raw["requestBody"])
    user = resolve(body["content"]["application/json"]["schema"])
    return resolve(user["properties"]["password"])


@pytest.mark.parametrize(
    ("password", "ok"),
    [
        ("Abcdef1!", True),
        ("Zz9#" * 7 + "Zz", True),
        ("Abcde1!", False),  # 7 characters
        ("Abcdefgh1!" * 3 + "A", False),  # 31 characters
        ("abcdef1!", False),  # no upper case
        ("ABCDEF1!", False),  # no lower case
        ("Abcdefg!", False),  # no digit
        ("Abcdefg1", False),  # no symbol
        ("Abc def1!", False),  # a space
        ("Abc\u3000def1!", False),  # an ideographic space
        # Found by schemathesis's CLI: \x1c is white space to Python's \s, not to ECMA 262's,
        # so the pattern spells its white space out and every engine reads it alike.
        ("Abc\x1cdef1!", False),
        ("Abc\ufeffdef1!", True),  # a byte-order mark is no space to either
    ],
)
def test_password_policy(password: str, ok: bool) -> None:
    validator = jsonschema.Draft202012Validator(_password_schema())
    assert validator.is_valid(password) is ok
