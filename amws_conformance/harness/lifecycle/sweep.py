"""``amws-conformance sweep``: remove what an interrupted or killed run left on its target.

Two sources:

- the run's **ledger file** (written through as the run went, see :mod:`harness.lifecycle.journal`):
  exactly the records the run made and had not removed;
- the run's **name tag** (``amws-<label>-``, see :func:`fixtures.factories.run_tag`): the
  records of the kinds whose names carry the tag, found by the API's lists and searches, each
  checked on our side to carry it. A record without the tag is never touched; kinds that carry
  no name (staged files) cannot be found this way.

A run with a ledger file is swept by both: a SIGKILL between a create's answer and its line in
the file loses that one record from the file, never its tag. A run whose file is gone is swept
by its tag alone.

Either way the deletes go through the run's own cleanup (:meth:`harness._run.Run.cleanup`):
paced by the profile's buckets, records on door hardware first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amws_conformance import spec
from amws_conformance.fixtures.factories import run_tag
from amws_conformance.harness._run import Run
from amws_conformance.harness.lifecycle.interrupts import Interrupts
from amws_conformance.harness.lifecycle.journal import SUFFIX, Entry, Journal, files_of, read
from amws_conformance.harness.lifecycle.ledger import delete_path_for
from amws_conformance.harness.target.client import TargetClient
from amws_conformance.harness.target.profile import load

API = "/api/ws/v1"


@dataclass(frozen=True)
class Kind:
    """A kind of record the tag finds: how to list it, which field carries the tag, and how."""

    create: str  # the create's operation id: the ledger's label, which sets the delete order
    path: str  # collection (GET) or search (POST) path
    field: str
    contains: bool = False  # the tag is inside the field (a last name), not its start
    search: bool = False  # POST a search body, paged
    paged: bool = False  # GET with start and limit
    id_field: str = "uuid"


# Registered in this order; the cleanup deletes in reverse (records that refer to others first)
# and puts what is on door hardware (credentials, persons, watchlists) before the rest.
KINDS = (
    Kind("createVisitReason", "/visit-reason", "name"),
    Kind("createCostCenter", "/cost-centers", "name"),
    Kind("createOrganisation", "/organisations", "name"),
    Kind("createDepartment", "/departments", "name"),
    Kind("createLocation", "/locations", "name"),
    Kind("createRole", "/roles", "name"),
    Kind("createGroup", "/groups", "name"),
    Kind("createUser", "/users/search", "email", search=True),
    Kind("createPerson", "/persons/search", "lastName", contains=True, search=True),
    Kind(
        "createInvite", "/invites", "lastName", contains=True, paged=True, id_field="registrationId"
    ),
    Kind("createWatchlist", "/watchlists", "name"),
)
CREDENTIALS_OF = {
    "createPerson": "/credentials/by-person/{}",
    "createUser": "/credentials/by-user/{}",
}


def _carries(value: Any, tag: str, contains: bool) -> bool:
    return isinstance(value, str) and (tag in value if contains else value.startswith(tag))


def _largest_page(kind: Kind) -> int:
    """The spec's maximum ``limit`` of the search body or of the list's query."""
    op = spec.match("POST" if kind.search else "GET", f"{API}{kind.path}")
    assert op is not None, kind.path
    if kind.search:
        body = spec.resolve(op[0].raw["requestBody"])["content"]["application/json"]["schema"]
        limit = spec.resolve(body)["properties"]["limit"]
    else:
        limit = next(p["schema"] for p in op[0].parameters() if p["name"] == "limit")
    return int(spec.resolve(limit)["maximum"])


def _rows(client: TargetClient, kind: Kind, tag: str) -> Iterator[dict[str, Any]]:
    """Every record of ``kind`` the target lists (narrowed by the tag where a search can)."""
    if not (kind.search or kind.paged):
        response = client.unchecked.get(f"{API}{kind.path}")
        response.raise_for_status()
        yield from response.json()
        return
    start, page = 0, _largest_page(kind)
    while True:
        if kind.search:
            body = {kind.field: tag, "start": start, "limit": page}
            response = client.unchecked.post(f"{API}{kind.path}", json=body)
        else:
            params = {"start": start, "limit": page, "filter": "ALL"}
            response = client.unchecked.get(f"{API}{kind.path}", params=params)
        response.raise_for_status()
        entries = response.json().get("entries") or []
        yield from entries
        if len(entries) < page:
            return
        start += len(entries)


def _entry(create: str, uuid: str) -> Entry:
    """The record ``create`` made, deleted where the ledger would delete it."""
    return Entry(uuid, delete_path_for(spec.operation(create), {}, uuid), "full", create)


def tagged(client: TargetClient, tag: str) -> list[Entry]:
    """The records carrying ``tag``, in registration order (see :data:`KINDS`)."""
    found: list[Entry] = []
    credentials: list[Entry] = []
    for kind in KINDS:
        for row in _rows(client, kind, tag):
            uuid = row.get(kind.id_field)
            if not isinstance(uuid, str) or not _carries(row.get(kind.field), tag, kind.contains):
                continue
            found.append(_entry(kind.create, uuid))
            if kind.create in CREDENTIALS_OF:
                # Deleting a person or user unlinks its credentials, which stay: find them now.
                listed = client.unchecked.get(API + CREDENTIALS_OF[kind.create].format(uuid))
                for card in listed.json() if listed.status_code == 200 else []:
                    if _carries(card.get("uniqueIdentifier"), tag, False):
                        credentials.append(_entry("createCredential", card["uuid"]))
    return found + credentials


@dataclass
class Sweep:
    """One sweep of one target; ``say`` prints a line."""

    profile: str
    dry_run: bool = False
    say: Callable[[str], None] = print

    def _run(self) -> Run:
        run = Run(target=self.profile, state_dir=None)
        run.interrupts = Interrupts(say=self.say)
        run.interrupts.install()
        run.start()
        return run

    def _remove(self, run: Run, records: list[Entry], what: str) -> bool:
        """Delete ``records`` (oldest first as given) through the run's cleanup; say what
        happened; whether nothing is left."""
        assert run.session is not None
        if self.dry_run:
            for record in records:
                self.say(f"would delete {record.label} {record.uuid}: {record.delete_path}")
            self.say(f"{what}: {len(records)} records would be deleted (dry run)")
            return True
        for record in records:
            run.session.ledger.register(record.uuid, record.delete_path, record.key, record.label)
        assert run.interrupts is not None
        with run.interrupts.cleaning():
            run.stop()
        left = run.cleanup_problems
        gone = run.session.ledger.gone
        self.say(
            f"{what}: {len(records) - gone - len(left)} deleted, {gone} already gone, "
            f"{len(left)} left" + ("".join(f"\n  {p}" for p in left))
        )
        return not left

    def ledger(self, path: Path) -> bool:
        target, records = read(path)
        base_url = load(self.profile).base_url
        if target.get("base_url") != base_url:
            self.say(
                f"{path}: the run was against {target.get('base_url')}, not the profile's "
                f"{base_url}; not swept"
            )
            return False
        run = self._run()
        try:
            assert run.session is not None
            client = run.client("full")
            assert client is not None
            run_id = str(target.get("run_id") or path.name.removesuffix(SUFFIX))
            listed = {record.uuid.lower() for record in records}
            extra = [m for m in tagged(client, run_tag(run_id)) if m.uuid.lower() not in listed]
            if not self.dry_run:
                # The gone lines go to the same file: a second sweep retries only the rest.
                run.session.ledger.journal = Journal(path, None)
            what = f"{path.name} (run {run_id}, {len(extra)} more found by its tag)"
            return self._remove(run, records + extra, what)
        finally:
            self._end(run)

    def tag(self, run_id: str) -> bool:
        tag = run_tag(run_id)
        run = self._run()
        try:
            client = run.client("full")
            assert client is not None
            self.say(f"no ledger file of run {run_id}: finding records whose names carry {tag}")
            return self._remove(run, tagged(client, tag), f"run {run_id} by its tag {tag}")
        finally:
            self._end(run)

    @staticmethod
    def _end(run: Run) -> None:
        run.stop()  # closes the clients (its cleanup has nothing left to do)
        if run.interrupts is not None:
            run.interrupts.restore()


def main(
    profile: str,
    run_id: str | None,
    ledger: str | None,
    state_dir: Path,
    dry_run: bool,
) -> int:
    """Sweep one run (by its ledger file or run id), or every ledger file left for the
    profile's target in ``state_dir``; 0 when nothing is left."""
    sweep = Sweep(profile, dry_run)
    if ledger is not None:
        return 0 if sweep.ledger(Path(ledger)) else 1
    files = files_of(state_dir, run_id)
    if run_id is not None and not files:
        return 0 if sweep.tag(run_id) else 1
    if run_id is None:
        # Every run left on this target; files of other targets are theirs to sweep.
        base_url = load(profile).base_url
        files = [f for f in files if read(f)[0].get("base_url") == base_url]
    if not files:
        print(f"no ledger file of this target in {state_dir}: nothing to sweep")
        return 0
    results = [sweep.ledger(path) for path in files]
    return 0 if all(results) else 1
