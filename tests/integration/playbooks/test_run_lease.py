# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run lease through real ansible-playbook processes on this machine (connection local, a temporary state
directory): a second run is refused naming the first, a run with a wait goes on after it, a dead run of this
controller is taken over, and the real playbooks refuse a node another run holds before they gather anything."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import subprocess
import sys
import time

from helpers import run_playbook

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROOT = os.path.dirname(ROOT)

HOLD = """
- name: Hold the node
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Take the lease
      ai_storage.checkpoint_io.checkpoint_io_lock:
        state_dir: "{{ sdir }}"
        wait: "{{ wait | default(0) }}"
    - name: Work a while
      ansible.builtin.command: sleep {{ hold | default(0) }}
      changed_when: false
    - name: Give it back
      ai_storage.checkpoint_io.checkpoint_io_lock:
        state_dir: "{{ sdir }}"
        state: released
"""


def _playbook(tmp_path):
    path = tmp_path / 'hold.yml'
    path.write_text(HOLD)
    return str(path)


def _start(playbook, **extra):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='linear',
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR='1')
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    return subprocess.Popen([binary, '-i', 'localhost,', '-c', 'local', playbook, '-e', json.dumps(extra)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_for_lease(sdir, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        lease = state_store.lease_holder(sdir) if os.path.isdir(sdir) else None
        if lease:
            return lease
        time.sleep(0.2)
    raise AssertionError('no lease appeared in %s' % sdir)


def test_two_runs_on_one_node_are_refused_or_serialised(tmp_path):
    sdir = str(tmp_path / 'state')
    playbook = _playbook(tmp_path)
    first = _start(playbook, sdir=sdir, hold=12)
    try:
        lease = _wait_for_lease(sdir)
        assert lease['controller'] == socket.gethostname() and lease['controller_pid'] == first.pid
        rc, out = run_playbook(playbook, '-e', json.dumps({'sdir': sdir}))
        assert rc != 0, out
        assert 'another checkpoint_io run holds this node' in out and lease['run_id'] in out, out
        assert 'Work a while' not in out
        waiting = _start(playbook, sdir=sdir, wait=120)
        out_waiting = waiting.communicate(timeout=200)[0]
        assert waiting.returncode == 0, out_waiting  # it waited for the first run, then ran
        first_out = first.communicate(timeout=60)[0]
        assert first.returncode == 0, first_out
    finally:
        for proc in (first,):
            if proc.poll() is None:
                proc.kill()
    assert state_store.lease_holder(sdir) is None  # both gave the node back
    assert 'changed=0' in out_waiting  # the lease is bookkeeping, not a change to the node


def test_a_dead_run_of_this_controller_is_taken_over_with_a_warning(tmp_path):
    sdir = str(tmp_path / 'state')
    dead = subprocess.Popen(['true'])
    dead.wait()
    from ansible_collections.ai_storage.checkpoint_io.plugins.action.checkpoint_io_lock import controller_identity
    owner = dict(controller_identity(), run_id='%s:%d:1' % (socket.gethostname(), dead.pid), controller_pid=dead.pid,
                 user='root', playbook='killed run')
    state_store.acquire_run(sdir, owner, ttl=3600)
    rc, out = run_playbook(_playbook(tmp_path), '-e', json.dumps({'sdir': sdir}))
    assert rc == 0, out
    assert 'took over the lease of run %s' % owner['run_id'] in out


def test_the_playbooks_refuse_a_node_another_run_holds_before_gathering(tmp_path):
    sdir = str(tmp_path / 'state')
    other = {'run_id': 'ctl9:4242:77', 'controller': 'ctl9', 'controller_pid': 4242, 'user': 'alice',
             'playbook': 'Checkpoint I/O facts before tuning'}
    state_store.acquire_run(sdir, other, ttl=3600)
    for name in ('tune_checkpoint_nodes.yml', 'verify_checkpoint_write.yml'):
        rc, out = run_playbook(os.path.join(ROOT, 'playbooks', name), '--check', '-e', json.dumps(
            {'checkpoint_io_hosts': 'localhost', 'checkpoint_io_state_dir': sdir}))
        assert rc != 0, out[-3000:]
        assert 'another checkpoint_io run holds this node' in out and 'ctl9:4242:77' in out, out[-3000:]
        assert 'alice' in out and 'checkpoint_io_lock_take_over=ctl9:4242:77' in out, out[-3000:]
        assert 'Gather every layer' not in out and 'Settle the directories' not in out, out[-3000:]
    assert state_store.lease_holder(sdir)['run_id'] == 'ctl9:4242:77'  # check mode took nothing


RENEW = """
- name: First play (the preflight role takes the lease)
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Preflight
      ansible.builtin.include_role:
        name: ai_storage.checkpoint_io.preflight
    - name: Keep the lease as taken
      ansible.builtin.copy:
        src: "{{ checkpoint_io_state_dir }}/run_lease.json"
        dest: "{{ first }}"
        mode: "0600"
    - name: Let half the TTL pass (as a long fleet run would)
      ansible.builtin.set_fact:
        checkpoint_io_lease_renew_at: 0
- name: A later play (renews first)
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Renew
      ansible.builtin.include_role:
        name: ai_storage.checkpoint_io.preflight
        tasks_from: renew
- name: Another later play (half a TTL has not passed again, nothing runs on the node)
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Renew
      ansible.builtin.include_role:
        name: ai_storage.checkpoint_io.preflight
        tasks_from: renew
"""


def test_a_later_play_renews_the_lease_once_half_its_ttl_has_passed(tmp_path):
    """Issue 31, finding 8: a run that outlasts its lease lets a second run in (whose reaper ends its fio)."""
    sdir = str(tmp_path / 'state')
    path = tmp_path / 'renew.yml'
    path.write_text(RENEW)
    first_copy = str(tmp_path / 'first.json')
    rc, out = run_playbook(str(path), '-e', json.dumps({'checkpoint_io_state_dir': sdir, 'checkpoint_io_lock_ttl': 60,
                                                        'first': first_copy}))
    assert rc == 0, out
    with open(first_copy) as handle:
        first = json.load(handle)['data']
    with open(os.path.join(sdir, 'run_lease.json')) as handle:
        second = json.load(handle)['data']
    assert second['run_id'] == first['run_id'] and second['expires'] > first['expires']  # renewed by play 2
    assert out.count("Renew the node's run lease (half its TTL has passed since this run took it)") == 2
    assert 'skipping: [localhost]' in out.split('Another later play')[1]  # play 3: nothing to renew yet
