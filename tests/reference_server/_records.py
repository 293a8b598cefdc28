"""Reading and searching one resource's records through HTTP (shared by the server's tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Records:
    """The records under ``path`` (e.g. /api/ws/v1/persons)."""

    path: str

    def read(self, api: httpx.Client, uuid: str) -> dict[str, Any]:
        response = api.get(f"{self.path}/{uuid}")
        assert response.status_code == 200, response.text
        return response.json()

    def search(self, api: httpx.Client, **body: Any) -> dict[str, Any]:
        response = api.post(f"{self.path}/search", json=body)
        assert response.status_code == 200, response.text
        return response.json()
