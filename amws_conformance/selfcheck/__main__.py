"""``python -m amws_conformance.selfcheck``: the same as ``amws-selfcheck``."""

from amws_conformance.selfcheck.cli import main

raise SystemExit(main())
