# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mitogen's ``mitogen_linear`` strategy from the ``mitogen`` package of the venv (requirements-dev.txt).

The Molecule scenarios that run under Mitogen name this folder in ``strategy_plugins``, so no path into the
venv's site-packages (which differs per Python version) is written anywhere. Mitogen adds its own connection
and action plugins when the strategy starts.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_mitogen.plugins.strategy.mitogen_linear import StrategyModule  # noqa: F401 pylint: disable=unused-import
