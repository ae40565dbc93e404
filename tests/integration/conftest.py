"""The host integration tier: real processes on this machine (fio, loop devices, ansible-playbook on localhost,
the modules as processes, the bad-input sweep). It shares the unit tier's set-up and helpers (tests/unit is put on
sys.path: helpers.py, the fake node, fixtures/)."""
import os
import sys

UNIT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit")
if UNIT not in sys.path:
    sys.path.insert(0, UNIT)

from testenv import (COLLECTIONS, FIXTURES, REAL_WORLD, ROOT,  # noqa: E402,F401 pylint: disable=unused-import
                     _fresh_module_warnings, warned)
