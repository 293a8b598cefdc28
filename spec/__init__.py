"""The contract: ``openapi.yaml`` and ``rules.yaml``, loaded once and shared by server and suite.

Everything that knows a field limit, a status code, a rate cost or a permission reads it
from here; nothing else in the project keeps a second copy.
"""

from spec._load import Operation, Rule, openapi, operation, operations, rules

__all__ = ["Operation", "Rule", "openapi", "operation", "operations", "rules"]
