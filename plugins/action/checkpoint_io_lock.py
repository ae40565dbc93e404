# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin in front of the checkpoint_io_lock module: names the run from the controller and takes over the
lease of a run of this controller whose ansible-playbook process is gone.

Workers are forked from the ansible-playbook process (under Mitogen too), so the topmost ancestor of this process
whose command line is ansible-playbook is the run: its pid and start time (from /proc, where the controller has it)
name the run across every play and task of the playbook. The lease also carries the controller's boot id and pid
namespace: only a lease of this very controller (same host name, boot and pid namespace) is judged by its pid.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import getpass
import os
import socket

from ansible.plugins.action import ActionBase


def _start_ticks(pid):
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or None."""
    try:
        with open('/proc/%d/stat' % pid) as handle:
            fields = handle.read().rsplit(')', 1)[1].split()
        return int(fields[19])
    except (IOError, OSError, IndexError, ValueError):
        return None


def _parent(pid):
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return int(handle.read().rsplit(')', 1)[1].split()[1])
    except (IOError, OSError, IndexError, ValueError):
        return None


def _is_playbook(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            args = handle.read().split(b'\0')
    except (IOError, OSError):
        return False
    return any(os.path.basename(arg).startswith(b'ansible-playbook') for arg in args[:3])


def run_pid():
    """The ansible-playbook process of this run: the topmost ancestor that is one (else the parent)."""
    found, pid = None, os.getppid()
    for _depth in range(32):
        if not pid or pid <= 1:
            break
        if _is_playbook(pid):
            found = pid
        pid = _parent(pid)
    return found or os.getppid()


def _boot_id():
    try:
        with open('/proc/sys/kernel/random/boot_id') as handle:
            return handle.read().strip() or None
    except (IOError, OSError):
        return None


def _pid_namespace():
    """The pid namespace of this process (``pid:[4026531836]``): a pid means a process only inside it."""
    try:
        return os.readlink('/proc/self/ns/pid')
    except (IOError, OSError):
        return None


def controller_identity():
    """{controller (host name), controller_boot_id, controller_pidns}: where a pid of the lease can be looked up.
    A host name alone is not: cloned bastions and containers share one; the boot id tells machines (and boots)
    apart, the pid namespace tells containers on one kernel apart."""
    return {'controller': socket.gethostname(), 'controller_boot_id': _boot_id(), 'controller_pidns': _pid_namespace()}


def run_identity():
    """(run_id, owner) of this ansible-playbook run."""
    pid = run_pid()
    where = controller_identity()
    ticks = _start_ticks(pid)
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry for the uid (containers): the uid names the user
        user = str(os.getuid())
    run_id = '%s:%d:%s' % (where['controller'], pid, ticks if ticks is not None else 'na')
    return run_id, dict(where, user=user, controller_pid=pid)


def run_is_gone(lease, where):
    """True when ``lease`` names a run of this very controller (host name, boot id and pid namespace all equal:
    ``where`` is controller_identity()) whose ansible-playbook process (pid and start time) no longer runs. A lease
    of another machine, another boot, another container or one without these (an older run) is never judged
    here: it lapses with its TTL or is taken with take_over."""
    if not isinstance(lease, dict) or not isinstance(where, dict):
        return False
    for key in ('controller', 'controller_boot_id', 'controller_pidns'):
        if not where.get(key) or lease.get(key) != where.get(key):
            return False
    try:
        pid = int(lease.get('controller_pid'))
    except (TypeError, ValueError):
        return False
    ticks = _start_ticks(pid)
    if ticks is None:
        return True
    return str(lease.get('run_id', '')).rsplit(':', 1)[-1] != str(ticks)


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        given = args.get('owner')
        if given is not None and not isinstance(given, dict):
            result.update(failed=True, msg='owner: %r is not a dict (user, controller, controller_pid, playbook); '
                                           'leave it out, the action plugin fills it in' % (given,))
            return result
        run_id, owner = run_identity()
        if args.get('run_id') is None:
            args['run_id'] = run_id
        playbook = task_vars.get('ansible_play_name') or ''
        args['owner'] = dict(owner, playbook=playbook,
                             **dict((str(key), value) for key, value in (given or {}).items()))
        module = 'ai_storage.checkpoint_io.checkpoint_io_lock'
        out = self._execute_module(module_name=module, module_args=args, task_vars=task_vars)
        holder = out.get('holder')
        if out.get('failed') and not args.get('take_over') and args.get('state', 'acquired') == 'acquired' \
                and run_is_gone(holder, owner):
            args['take_over'] = holder['run_id']
            out = self._execute_module(module_name=module, module_args=args, task_vars=task_vars)
            if not out.get('failed'):
                out.setdefault('warnings', []).append(
                    'took over the lease of run %s: its ansible-playbook process on this controller is gone'
                    % holder['run_id'])
        result.update(out)
        return result
