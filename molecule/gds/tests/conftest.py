"""Fixtures of the gds scenario (helpers in gds_node.py)."""
import pytest

from gds_node import read_node


@pytest.fixture(scope="module")
def node(host):
    """The node's state at the start of a test module."""
    return read_node(host)
