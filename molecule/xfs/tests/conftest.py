"""Fixtures of the xfs scenario (helpers in xfs_node.py, a name of its own so imports are unambiguous)."""
import pytest

from xfs_node import read_node


@pytest.fixture(scope="module")
def node(host):
    """The node's state at the start of a test module."""
    return read_node(host)
