"""The exit status follows the certifying verdict: a run whose only failures are assumed rules
(our choices where the documents are silent) exits 0 and says so in one line; with
``--strict-informative`` the same run exits 1.

Both runs are as a user starts them, in a process of their own, against the embedded reference
server with ``content-type-ignored`` switched on (the self-check plugin's ``--reference-fault``):
it breaks CONV-JSON-MEDIA-TYPE, an assumed rule, and nothing normative.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests._served import PACKAGE, ordinary_env

ASSUMED_FAULT, ASSUMED_RULE = "content-type-ignored", "CONV-JSON-MEDIA-TYPE"


def _run(folder: Path, *options: str) -> tuple[int, str, dict]:
    command = [sys.executable, "-m", "pytest", "suites", "-q", "-n", "0", "-p", "no:cacheprovider"]
    command += ["-p", "amws_conformance.selfcheck.plugin", "--reference-fault", ASSUMED_FAULT]
    command += ["--rules", ASSUMED_RULE, "--conformance-report", str(folder), *options]
    done = subprocess.run(
        command, cwd=PACKAGE, env=ordinary_env(), capture_output=True, text=True, check=False
    )
    document = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return done.returncode, done.stdout + done.stderr, document


@pytest.mark.parametrize(("strict", "status"), [(False, 0), (True, 1)], ids=["default", "strict"])
def test_a_run_failing_only_assumed_rules_exits_by_the_certifying_verdict(
    tmp_path: Path, strict: bool, status: int
) -> None:
    options = ("--strict-informative",) if strict else ()
    returned, output, document = _run(tmp_path, *options)
    assert returned == status, output[-3000:]
    assert document["exit_status"] == status
    assert document["rules"][ASSUMED_RULE]["verdict"] == "failed"
    assert document["normative_summary"]["failed"] == 0
    lines = [line for line in output.splitlines() if line.startswith("AMWS exit status")]
    assert len(lines) == 1, output[-3000:]
    assert lines[0].startswith(f"AMWS exit status {status}: ")
    assert ASSUMED_RULE in lines[0]
    if not strict:
        assert "not counted (--strict-informative counts them)" in lines[0]
