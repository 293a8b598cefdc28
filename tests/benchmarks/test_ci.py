"""The CI benchmark times what CI runs: the README's set-up command, as .ci/run has it."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.ci import readme_commands

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_reads_the_command_ci_runs() -> None:
    install, tests = readme_commands()
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"{install} && {tests}\n" in ci_run
    assert install.startswith("python3 -m venv .venv") and tests.endswith(" tests")


def test_a_readme_without_the_command_is_refused(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("    .venv/bin/pytest amws_conformance/suites\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no set-up command"):
        readme_commands(readme)
