# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mitogen's ``mitogen_linear`` strategy from the ``mitogen`` package of the venv (requirements-dev.txt), with
Mitogen's CPU pinning turned off.

The Molecule scenarios and the lab tests that run under Mitogen name this folder in ``strategy_plugins``, so no
path into the venv's site-packages (which differs per Python version) is written anywhere. Mitogen adds its own
connection and action plugins when the strategy starts.

Pinning: Mitogen's default policy (``ansible_mitogen.affinity.LinuxPolicy``) keeps CPU 0 for its multiplexer and,
on a machine with 2 or 3 CPUs, puts the top-level process, every worker and every process they start on CPU 1.
On this project's 2-CPU test machine that put each lab's QEMU (started from the scenario's create play) and both
controllers of two scenarios run side by side on one CPU while the other idled (measured: QEMU's affinity mask
0x2, /proc/stat's cpu0 idle, CPU pressure 98%). The base ``Policy`` of the same module pins nothing.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ansible_mitogen.affinity
from ansible_mitogen.plugins.strategy.mitogen_linear import StrategyModule  # noqa: F401 pylint: disable=unused-import

ansible_mitogen.affinity.policy = ansible_mitogen.affinity.Policy()
