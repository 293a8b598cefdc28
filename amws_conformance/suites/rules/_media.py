"""Photos and signed media links as a target hands them out, found by what the documents give.

doc3 gives the links' shape (``.../api/ws/v1/storage/{thumbnail|file}/{entityUUID}/{expires}/
{signature}/{filename}``) and says the service generates them; no document says under which
field of a read they appear (doc2 names no person read field but ``hasPhoto``). So a link is
any string of a read with that shape, wherever the read carries it (nested values included),
or only in the fields the profile names (``media_links.fields``). The route segment tells the
file link from the thumbnail link. A read that carries neither leaves the rules that need the
link undecided (a skip naming what was looked for), never failed.

The same holds for a photo's own identifier: doc3 says the record that owns a photo returns
it, but no document names the field (``photoId`` is our name, PHOTO-ID-FROM-RECORD, assumed).
It is the one UUID of the read that is neither the record's own, nor the upload it claimed,
nor one the request or a documented read field (a user's role) put there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import pytest

from amws_conformance import spec

SHAPE = re.compile(
    r"^(?P<head>.*/api/ws/v1/storage)/(?P<route>thumbnail|file)/(?P<entity>[^/]+)/"
    r"(?P<expires>[^/]+)/(?P<signature>[^/]+)/(?P<filename>[^/?#]+)$"
)
ROUTES = ("file", "thumbnail")
_UUID = spec.uuid_pattern()


@dataclass(frozen=True)
class Link:
    """A handed-out link split into its segments (kept exactly as written)."""

    head: str
    route: str
    entity: str
    expires: str
    signature: str
    filename: str

    @property
    def url(self) -> str:
        tail = f"{self.entity}/{self.expires}/{self.signature}/{self.filename}"
        return f"{self.head}/{self.route}/{tail}"

    def altered(self, **segments: str) -> str:
        return replace(self, **segments).url


def absolute(profile: Any, link: str) -> str:
    """A link as an absolute URL: a relative one is joined with the profile's base_url."""
    if urlsplit(link).scheme:
        return link
    return profile.base_url + (link if link.startswith("/") else f"/{link}")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def where(profile: Any) -> str:
    """Where links are looked for, in words (for an undecided reason)."""
    fields = profile.media_link_fields
    if fields:
        named = ", ".join(fields)
        return f"the read fields the profile's media_links.fields names ({named}), nowhere else"
    return (
        "every string of the read, nested values included (the profile's media_links.fields "
        "can name the fields that carry them)"
    )


def found(profile: Any, read: dict[str, Any]) -> dict[str, Link]:
    """The read's signed links by route (the first of each), as absolute URLs."""
    fields = profile.media_link_fields
    values = [read.get(field) for field in fields] if fields else [read]
    links: dict[str, Link] = {}
    for text in (s for value in values for s in _strings(value)):
        match = SHAPE.match(absolute(profile, text))
        if match and match["route"] not in links:
            links[match["route"]] = Link(**match.groupdict())
    return links


def of_record(profile: Any, read: dict[str, Any], *routes: str) -> dict[str, Link]:
    """The read's links of ``routes`` (both by default); a missing one leaves the test's rules
    undecided: the documents do not say where a target hands links out."""
    links = found(profile, read)
    missing = [route for route in routes or ROUTES if route not in links]
    if missing:
        pytest.skip(
            f"undecided: the read of a record with a photo holds no signed {' or '.join(missing)} "
            f"link (a string shaped /api/ws/v1/storage/{{thumbnail|file}}/{{uuid}}/{{expires}}/"
            f"{{signature}}/{{filename}}); looked in {where(profile)}"
        )
    return links


def photo_id(read: dict[str, Any], *not_it: Any) -> str:
    """The photo's own identifier on the read of the record that owns it: our ``photoId``
    where the read has it, else the one UUID of the read that none of ``not_it`` (the record's
    uuid, the claimed upload, the UUIDs the request sent) accounts for. A read that shows none,
    or several, leaves the test's rules undecided."""
    known = {str(v).lower() for v in not_it if v} | {str(read.get("role", "")).lower()}
    candidates = {s for s in _strings(read) if _UUID.fullmatch(s) and s.lower() not in known}
    named = read.get("photoId")
    if isinstance(named, str) and named in candidates:
        return named
    if len(candidates) == 1:
        return candidates.pop()
    pytest.skip(
        f"undecided: the read of a record with a photo shows {len(candidates)} UUIDs other than "
        "the record's own, the claimed upload's and those the request sent, so the photo's "
        "identifier (doc3: returned on the owning record, field not named) is not known"
    )
