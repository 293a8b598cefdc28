"""Records made once per run and shared by the tests of several modules (helpers, not tests).

Each is made on first use through :meth:`harness.Run.shared`, so it is booked as a set-up of its
own, and every test that asks for it is recorded as using it: a plan that keeps any of those
tests pays for it once. Ask for a record from the test (or a function-scoped fixture), never
from a module- or session-scoped fixture: only then is each test that relies on it recorded.

Under the self-check's fault matrix every fault gets records of its own (``Run.shared`` keys
them by the fault switched on), so a fault in a write path still meets the records its tests
read, and a test that fails drops the records it used.
"""

from __future__ import annotations

from typing import Any

from amws_conformance.fixtures import jpeg_bytes
from amws_conformance.harness import Run

API = "/api/ws/v1"


def shared_pictured(run: Run, api: Any, factories: Any) -> dict[str, Any]:
    """A person with a photo (``person``, the ``body`` that made it, the ``photo``'s photoId,
    and the ``image`` bytes and ``staged`` uuid of the upload it claimed), made once per run,
    for tests that only read, search for or download it (as any key, or as another system's
    key, which must be refused), or upload its image again: none of that changes the person.
    Credentials may be added to the person (the rate-limit drain adds some and deletes them
    when it ends, the permission matrix's credential create adds one), but nobody asserts
    what the person's whole list of credentials holds, and nobody changes or deletes the
    person, its photo or the upload it claimed."""

    def make() -> dict[str, Any]:
        image = jpeg_bytes(factories.random.randrange(1 << 30), (48, 48))
        staged = api.post(f"{API}/files/upload", files={"file": ("p.jpg", image, "image/jpeg")})
        assert staged.status_code == 200, f"uploading a photo: {staged.text}"
        body = factories.person(photoUuid=staged.json()["uuid"])
        person = api.post(f"{API}/persons", json=body)
        assert person.status_code == 201, f"creating the photo's person: {person.text}"
        uuid = str(person.json()["uuid"])
        photo = api.get(f"{API}/persons/{uuid}").json().get("photoId")
        assert photo, "the person read shows no photoId after claiming an upload"
        upload = str(staged.json()["uuid"])
        return {"person": uuid, "body": body, "photo": str(photo), "image": image, "staged": upload}

    made: dict[str, Any] = run.shared("media:pictured", make)
    return made


def shared_photo(run: Run, api: Any, factories: Any) -> str:
    """The photoId of the run's shared person with a photo (see :func:`shared_pictured`)."""
    return str(shared_pictured(run, api, factories)["photo"])
