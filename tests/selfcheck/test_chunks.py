"""How the self-check splits the catalogue over servers: a fault that leaves records its server
cannot read back runs on a server of its own, so it cannot hide the faults tested after it."""

from __future__ import annotations

from amws_conformance.reference_server.faults import CATALOGUE
from amws_conformance.reference_server.faults._model import Fault
from amws_conformance.selfcheck.cli import _chunks


def test_a_lasting_fault_gets_a_server_of_its_own() -> None:
    faults = [
        Fault("a", "R1", "x"),
        Fault("poison", "R2", "x", lasting=True),
        Fault("b", "R3", "x"),
    ]
    rule_map = {"t1": ["R1"], "t2": ["R2"], "t3": ["R3"]}
    groups = _chunks(faults, rule_map, 1)
    assert [f.name for f in groups[-1]] == ["poison"]
    assert all("poison" not in [f.name for f in g] for g in groups[:-1])
    assert sum(len(g) for g in groups) == 3


def test_the_faults_that_store_unreadable_values_are_marked_lasting() -> None:
    lasting = {name for name, f in CATALOGUE.items() if f.lasting}
    assert {"lone-surrogate-stored", "json-read-leniently"} <= lasting
