"""Small helpers shared by the unit tests."""
import os

from conftest import FIXTURES


def fixture(kind, name):
    """The text of tests/unit/fixtures/<kind>/<name>."""
    with open(os.path.join(FIXTURES, kind, name)) as handle:
        return handle.read()


def subset(actual, expected):
    """Assert every key of ``expected`` has that value in ``actual``."""
    for key, value in expected.items():
        assert actual[key] == value, "%s: %r != %r" % (key, actual[key], value)
