"""A pytest plugin that writes each collected test's rule ids to $AMWS_RULES_OUT (as JSON)."""

from __future__ import annotations

import json
import os

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    found = {
        item.nodeid: sorted({r for m in item.iter_markers("rule") for r in m.args})
        for item in session.items
    }
    with open(os.environ["AMWS_RULES_OUT"], "w", encoding="utf-8") as fh:
        json.dump(found, fh)
