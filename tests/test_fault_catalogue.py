"""Every fault of the reference server's catalogue is killed by the suites (the self-check).

The baseline (the suites passing on the correct server) is not repeated here: the whole run of
tests/test_conformance_run.py is that baseline, in the same CI run.

CI runs every hand-written fault and a fixed sample of the spec-derived mutants (every
``MUTANT_SAMPLE``-th in catalogue order, so every kind of constraint and most resources are
in it); the whole mutant population takes the self-check a quarter of an hour on two cores,
``amws-conformance selfcheck --kind mutants`` runs it, and the README gives its figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests._served import ordinary_env

ROOT = Path(__file__).resolve().parent.parent
MUTANT_SAMPLE = 12


def test_every_fault_of_the_catalogue_is_killed(tmp_path: Path) -> None:
    matrix = tmp_path / "kill-matrix.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "amws_conformance.selfcheck",
            "--skip-baseline",
            "--mutant-sample",
            str(MUTANT_SAMPLE),
            "--output",
            str(matrix),
        ],
        cwd=ROOT,
        env=ordinary_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    document = json.loads(matrix.read_text())
    survived = [f["name"] for f in document["faults"] if not f["killed"]]
    assert not survived, result.stdout[-3000:]
    assert document["proven_rules"] > 0
    assert sum(f["mutant"] for f in document["faults"]) >= 1000 // MUTANT_SAMPLE
