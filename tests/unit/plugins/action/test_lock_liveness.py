# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whose lease may be judged by its pid (issue 31, finding 8): only one of this very controller."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ai_storage.checkpoint_io.plugins.action import checkpoint_io_lock as lock

HERE = {'controller': 'bastion', 'controller_boot_id': 'b00t', 'controller_pidns': 'pid:[4026531836]'}


def _lease(pid, ticks, **where):
    return dict(HERE, run_id='bastion:%d:%s' % (pid, ticks), controller_pid=pid, **where)


def test_a_clone_with_the_same_host_name_never_takes_a_live_lease_over():
    dead_here = _lease(999999, 1)  # no such pid here
    assert lock.run_is_gone(dead_here, HERE)
    assert not lock.run_is_gone(dict(dead_here, controller_boot_id='other-boot'), HERE)  # a cloned bastion
    assert not lock.run_is_gone(dict(dead_here, controller_pidns='pid:[4026532000]'), HERE)  # another container
    older = dict((k, v) for k, v in dead_here.items() if k != 'controller_boot_id')  # a lease of an older run
    assert not lock.run_is_gone(older, HERE)
    assert not lock.run_is_gone(dead_here, dict(HERE, controller_boot_id=None))  # this controller cannot say


def test_a_live_process_is_alive_only_with_its_start_time():
    me = os.getpid()
    ticks = lock._start_ticks(me)
    assert not lock.run_is_gone(_lease(me, ticks), HERE)
    assert lock.run_is_gone(_lease(me, ticks + 1), HERE)  # the pid reused by another process


def test_this_controller_names_its_boot_and_pid_namespace():
    where = lock.controller_identity()
    assert where['controller'] and where['controller_boot_id'] and where['controller_pidns'].startswith('pid:[')
