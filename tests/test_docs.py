"""The documentation site builds with ``mkdocs build --strict``: a broken link, a missing
anchor or a page left out of the navigation fails CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_MOST_LINES = 150


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "plans" / "index.html").exists()


def test_the_readme_stays_short_and_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MOST_LINES
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    missing = sorted(p for p in pages if f"(docs/{p})" not in readme)
    assert not missing, f"pages the README does not point to: {missing}"
