"""How the link suites find a read's signed media links (suites/rules/_media.py): by the shape
doc3 gives, wherever the read carries them or in the fields the profile names, and an
undecided skip (never a failure) for a read that carries none."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from amws_conformance.suites.rules import _media as media

BASE = "http://target.example:8080"
ENTITY = "0b6f6f3c-3d55-4d7a-9a3e-2b7c1f0e9a11"
FILE = f"/api/ws/v1/storage/file/{ENTITY}/1900000000000/c2lnbmF0dXJl/p.jpg"
THUMB = f"{BASE}/api/ws/v1/storage/thumbnail/{ENTITY}/1900000000000/c2lnbmF0dXJl/t.jpg"
SECRET_LOOKING = "a-value-of-the-record-that-must-not-be-quoted"


def _profile(fields: list[str] | None = None) -> Any:
    return SimpleNamespace(
        base_url=BASE, media_link_fields=None if fields is None else tuple(fields)
    )


def test_links_are_found_by_shape_at_any_depth_and_classified_by_route() -> None:
    read = {"hasPhoto": True, "media": {"versions": [{"href": THUMB}, {"href": FILE}]}}
    links = media.found(_profile(), read)
    assert set(links) == {"file", "thumbnail"}
    # A relative link is joined with base_url; an absolute one is kept as written.
    assert links["file"].url == BASE + FILE
    assert links["thumbnail"].url == THUMB
    assert links["file"].entity == ENTITY and links["file"].filename == "p.jpg"


def test_strings_of_another_shape_are_not_links() -> None:
    read = {
        "a": f"/api/ws/v1/photos/photo/{ENTITY}",
        "b": f"/api/ws/v1/storage/other/{ENTITY}/1/s/n.jpg",
        "c": f"/api/ws/v1/storage/file/{ENTITY}/1/s",  # no file name segment
    }
    assert media.found(_profile(), read) == {}


def test_declared_fields_are_the_only_place_looked_at() -> None:
    read = {"imageLink": FILE, "elsewhere": THUMB}
    assert set(media.found(_profile(["imageLink"]), read)) == {"file"}
    assert set(media.found(_profile(["imageLink", "elsewhere"]), read)) == {"file", "thumbnail"}


@pytest.mark.parametrize(
    ("fields", "where"),
    [(None, "every string of the read"), (["photoLink"], "media_links.fields names (photoLink)")],
)
def test_a_read_without_links_leaves_the_rule_undecided(
    fields: list[str] | None, where: str
) -> None:
    read = {"hasPhoto": True, "note": SECRET_LOOKING, "imageLink": FILE}
    with pytest.raises(pytest.skip.Exception) as skipped:
        media.of_record(_profile(fields), read, "thumbnail")
    reason = str(skipped.value)
    assert reason.startswith("undecided:") and where in reason
    assert "media_links.fields" in reason  # how to tell the suite where the links are
    assert SECRET_LOOKING not in reason  # the record itself is not quoted
