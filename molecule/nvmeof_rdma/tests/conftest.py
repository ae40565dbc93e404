"""Fixtures of the nvmeof_rdma scenario (helpers in fabric_node.py)."""
import pytest

from fabric_node import read_node


@pytest.fixture(scope="module")
def node(host):
    """The initiator's state at the start of a test module."""
    return read_node(host)
