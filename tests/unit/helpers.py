"""Small helpers shared by the unit tests."""
import contextlib
import os

from ansible.module_utils.testing import patch_module_args

from conftest import FIXTURES


def fixture(kind, name):
    """The text of tests/unit/fixtures/<kind>/<name>."""
    with open(os.path.join(FIXTURES, kind, name)) as handle:
        return handle.read()


def subset(actual, expected):
    """Assert every key of ``expected`` has that value in ``actual``."""
    for key, value in expected.items():
        assert actual[key] == value, "%s: %r != %r" % (key, actual[key], value)


@contextlib.contextmanager
def module_args(args):
    """Run a module's main() with ``args`` as its parameters (ansible-core 2.19's patch_module_args)."""
    with patch_module_args(args):
        yield
