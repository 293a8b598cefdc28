"""The README's set-up commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands(text: str) -> list[str]:
    return re.findall(r"^    (python3 -m venv .+)$", text, flags=re.M)


def test_readme_opens_with_the_test_command_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = "\n".join(readme.splitlines()[:15])
    commands = _commands(head)
    assert commands, "the set-up commands stand in the README's first lines"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = [c for c in commands if "/pytest " in c and c.endswith(" tests")]
    assert test_command and test_command[0] in ci
