"""conftest.py: the two tiers of the pytest suites. Tests marked `full` (long
cases: tuning runs, fault injection over every call, every dtype where a
family representative suffices in the quick tier) run only in the long tier:
`make test-full` sets CLNZ_TEST_FULL=1; `make test` deselects them."""
import os

import pytest

FULL = os.environ.get("CLNZ_TEST_FULL") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "full: a long case, run by make test-full only")


def pytest_collection_modifyitems(config, items):
    if FULL:
        return
    kept = [item for item in items if "full" not in item.keywords]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if "full" in i.keywords])
        items[:] = kept
