"""A run of the suites on pytest-xdist workers writes one report holding what every worker saw.

Targeted: two modules on two workers, each with an embedded reference server of its own. The
whole suite runs once, end to end, in tests/test_conformance_run.py.
"""

from __future__ import annotations

from pathlib import Path

from tests._served import passed, suites_run


def test_workers_report_to_one_report(tmp_path: Path) -> None:
    """Two workers, each with an embedded server, one test module each: the controller's
    report holds what both saw (coverage, units, tests), not only their outcomes."""
    files = ("suites/rules/test_reference_data.py", "suites/rules/test_persons.py")
    started = suites_run(tmp_path, *files, "-n", "2", "--dist", "loadfile", "-v")
    document, output = passed(started, tmp_path)
    # Each worker ran one module (xdist's loadfile gives the two modules to two workers).
    ran = {
        line.split()[0]: line.split()[-1].split("::")[0]
        for line in output.splitlines()
        if line.startswith("[gw") and " PASSED " in line
    }
    assert sorted(ran.values()) == sorted(files) and len(ran) == 2, output[-3000:]
    assert not document["cleanup_problems"]
    assert {n.split("::")[0] for n in document["tests"]} == set(files)
    assert document["coverage"]["listDepartments"] and document["coverage"]["createPerson"]
    spent = [
        sum(t["units"].get("full", 0) for n, t in document["tests"].items() if n.startswith(f))
        for f in files
    ]
    assert all(spent) and document["rate_units"]["keys"]["full"] >= sum(spent), spent
