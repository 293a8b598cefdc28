"""A pytest plugin object that puts a run's plan to work on the collection.

Folders the plan keeps no test from are not collected at all (the contract suite's schemas
alone take seconds to build). Of what is collected, the plan keeps its tests, in an order where
the buckets drain side by side; the rest are deselected and reported as *not run (plan)*, as
are the table's tests of the folders never collected.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from amws_conformance.harness._run import Run
from amws_conformance.harness.evidence.report import Collector
from amws_conformance.harness.evidence.verdicts import PLAN_LEFT_OUT
from amws_conformance.harness.plan.schedule import Schedule


def _folder(nodeid: str) -> str:
    return nodeid.split("::")[0].rpartition("/")[0]


class Planning:
    """Registered by the plugin for one run."""

    def __init__(self, run: Run, schedule: Schedule, collector: Collector) -> None:
        self.run, self.schedule, self.collector = run, schedule, collector
        self.ignored: set[str] = set()  # test folders the plan kept nothing from
        # Run the kept tests in the order they come (another plugin ordered them: the
        # self-check's fault matrix runs the tests of each fault together), not interleaved.
        self.keep_order = False
        # Run the longest tests first (a pytest-xdist worker against the embedded server, where
        # no bucket paces the order).
        self.longest_first = False

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        plan, table = self.schedule.plan, self.schedule.table
        if plan.everything or not collection_path.is_dir():
            return None
        try:
            folder = collection_path.relative_to(config.rootpath).as_posix()
        except ValueError:
            return None
        measured = {_folder(n) for n in table.tests}
        if folder not in measured - {_folder(n) for n in plan.keeps}:
            return None
        self.ignored.add(folder)
        return True

    def select(
        self, config: pytest.Config, items: list[pytest.Item], key: Callable[[pytest.Item], str]
    ) -> None:
        """Keep the plan's tests of ``items``, in a bucket-friendly order; report the rest."""
        kept_flags = self.schedule.keep([key(i) for i in items])
        left_out = [i for i, k in zip(items, kept_flags, strict=True) if not k]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [i for i, k in zip(items, kept_flags, strict=True) if k]
        if self.longest_first and not self.keep_order:
            order = self.schedule.longest_first([key(i) for i in items])
            items[:] = [items[i] for i in order]
            self.schedule.order = [key(i) for i in items]
        elif not self.keep_order:
            order = self.schedule.interleave([key(i) for i in items], self.run.profile)
            items[:] = [items[i] for i in order]
            self.schedule.order = [key(i) for i in items]
        self.collector.collected(items)
        self.collector.collected(left_out, PLAN_LEFT_OUT)
        if self.ignored:
            tests = self.schedule.table.tests
            skipped_folders = {n: e for n, e in tests.items() if _folder(n) in self.ignored}
            self.collector.never_collected(skipped_folders, PLAN_LEFT_OUT)
            # Left out as well, though never collected: the plan line counts them as the
            # report does.
            self.schedule.left_out += len(skipped_folders)
