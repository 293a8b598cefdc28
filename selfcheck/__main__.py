"""``python -m selfcheck``: the same as ``amws-selfcheck``."""

from selfcheck.cli import main

raise SystemExit(main())
