"""The contract: ``openapi.yaml`` and ``rules.yaml``, loaded once and shared by server and suite.

Everything that knows a field limit, a status code, a rate cost or a permission reads it
from here; nothing else in the project keeps a second copy.
"""

from amws_conformance.spec._load import (
    Dependency,
    Operation,
    RateLimit,
    RequestJson,
    Rule,
    Throttle,
    enforced,
    key_header_length,
    merged,
    openapi,
    operation,
    operations,
    rate_limit,
    request_json,
    resolve,
    rules,
    throttle,
    throttle_names,
    uuid_pattern,
)
from amws_conformance.spec._routing import allowed_methods, match
from amws_conformance.spec._schemas import validator_at, validator_for

__all__ = [
    "Dependency",
    "Operation",
    "RateLimit",
    "RequestJson",
    "Rule",
    "Throttle",
    "allowed_methods",
    "enforced",
    "key_header_length",
    "match",
    "merged",
    "openapi",
    "operation",
    "operations",
    "rate_limit",
    "request_json",
    "resolve",
    "rules",
    "throttle",
    "throttle_names",
    "uuid_pattern",
    "validator_at",
    "validator_for",
]
