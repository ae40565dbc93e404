"""Fixtures of the thermal_validate scenario (helpers in thermal_node.py)."""
import pytest

from thermal_node import read_node


@pytest.fixture(scope="module")
def node(host):
    """The node's state at the start of a test module."""
    return read_node(host)
