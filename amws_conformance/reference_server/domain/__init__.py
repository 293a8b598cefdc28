"""Domain handlers, one module per resource; each registers the operations it implements."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable

from starlette.responses import Response

from amws_conformance.reference_server._call import Call

Handler = Callable[[Call], Awaitable[Response]]
HANDLERS: dict[str, Handler] = {}


def handles(*operation_ids: str) -> Callable[[Handler], Handler]:
    """Register a coroutine as the implementation of the named spec operations."""

    def register(func: Handler) -> Handler:
        for operation_id in operation_ids:
            if operation_id in HANDLERS:
                raise RuntimeError(f"{operation_id} is implemented twice")
            HANDLERS[operation_id] = func
        return func

    return register


def load_all() -> dict[str, Handler]:
    """Import every domain module (which registers its handlers) and return the registry."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return HANDLERS
