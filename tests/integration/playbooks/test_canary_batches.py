# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Canary batches: the plays of playbooks/tune_checkpoint_nodes.yml that change drives or node settings take
checkpoint_io_serial and checkpoint_io_max_fail_percentage, and real ansible-playbook runs show what they do.

The batches are Ansible's own (serial, max_fail_percentage), so the tests run them: a playbook built here from the
real playbook's two keyword expressions (copied verbatim, so the test follows the playbook) on six aliases of this
machine (connection local; its tasks only print or fail), and the real playbook in check mode on three aliases.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'tune_checkpoint_nodes.yml')
# the baseline writes the data drives raw before the xfs role formats them (issue 31, finding 7): in batches too
CHANGING_ROLES = ('verify_checkpoint_write:baseline', 'gds', 'io_uring_engine', 'block_layer', 'xfs',
                  'deepspeed_config', 'nvmeof_rdma')
HOSTS = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6']


def _plays():
    with open(PLAYBOOK) as handle:
        return yaml.safe_load(handle)


def _roles_of(play):
    """The collection roles a play runs (roles: and include_role tasks). The thermal validation runs on every node
    at once (a measurement): the deepspeed_config it includes only writes the back-off that measurement found (a
    lower depth, never a new tuning), so it counts as ``deepspeed_config:thermal_backoff``, not a changing role."""
    names = [entry['role'] if isinstance(entry, dict) else entry for entry in play.get('roles') or []]
    thermal = 'thermal_validate' in (play.get('tags') or [])
    tasks = [(task, os.path.dirname(PLAYBOOK)) for task in play.get('tasks') or []]
    while tasks:
        task, base = tasks.pop(0)
        tasks.extend((inner, base) for inner in task.get('block') or [])  # the tasks of a block count too
        included = task.get('ansible.builtin.include_tasks') or task.get('include_tasks')
        if included:  # and those of a task file the play includes (playbooks/tasks/), relative to the includer
            path = os.path.join(base, included['file'] if isinstance(included, dict) else included)
            with open(path) as handle:
                tasks.extend((inner, os.path.dirname(path)) for inner in yaml.safe_load(handle) or [])
        include = task.get('ansible.builtin.include_role') or task.get('include_role')
        if include:
            # entry points that change nothing keep their name apart: the baseline changes a drive (raw write)
            name = include['name'] + (':' + include['tasks_from'] if include.get('tasks_from') in ('baseline',
                                                                                                   'own_volume')
                                      else '')
            names.append(name + (':thermal_backoff' if thermal and name.endswith('deepspeed_config') else ''))
    return set(name.rsplit('.', 1)[-1] for name in names)


def _keywords():
    """The serial and max_fail_percentage expressions of the changing plays (asserted to be one pair)."""
    pairs = set((play.get('serial'), play.get('max_fail_percentage')) for play in _plays()
                if _roles_of(play) & set(CHANGING_ROLES))
    assert len(pairs) == 1, pairs
    return pairs.pop()


def test_every_play_that_changes_a_node_takes_the_two_inputs():
    changing = [play for play in _plays() if _roles_of(play) & set(CHANGING_ROLES)]
    assert set(role for play in changing for role in _roles_of(play)) >= set(CHANGING_ROLES)
    for play in changing:
        assert 'checkpoint_io_serial' in play['serial'], play['name']
        assert 'checkpoint_io_max_fail_percentage' in play['max_fail_percentage'], play['name']
    # The facts play (lease, checks), the verification and the summary run on every node at once.
    for play in _plays():
        if not _roles_of(play) & set(CHANGING_ROLES):
            assert 'serial' not in play, play.get('name')


def _inventory(tmp_path, hosts, host_vars=None):
    lines = ['[nodes]']
    for host in hosts:
        extra = ' '.join('%s=%s' % item for item in sorted((host_vars or {}).get(host, {}).items()))
        lines.append(('%s %s' % (host, extra)).strip())
    lines += ['[nodes:vars]', 'ansible_connection=local', 'ansible_python_interpreter=%s' % sys.executable]
    path = tmp_path / 'inventory.ini'
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def _run(tmp_path, playbook, inventory, extra, check=False):
    """(rc, [(play name, [hosts that ran a task of this batch], {task name: [hosts]})], stats) of a run."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='linear',
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR='1', ANSIBLE_STDOUT_CALLBACK='json',
               PWD=str(tmp_path))
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    argv = [binary, '-i', inventory, playbook, '-e', json.dumps(extra)] + (['--check'] if check else [])
    # the reports (the plans among them) go below the run's working directory: tmp_path
    proc = subprocess.run(argv, env=env, cwd=str(tmp_path), capture_output=True, text=True, check=False, timeout=300)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('no JSON from ansible-playbook (rc %d): %s %s'
                             % (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    batches = []
    for play in doc['plays']:
        tasks = dict((task['task']['name'], sorted(task['hosts'])) for task in play['tasks'])
        ran = sorted(set(host for hosts in tasks.values() for host in hosts))
        batches.append((play['play']['name'], ran, tasks))
    return proc.returncode, batches, doc['stats']


SYNTHETIC = """
- name: facts
  hosts: nodes
  gather_facts: false
  tasks:
    - name: Fail where asked
      ansible.builtin.fail:
        msg: fault in the facts play
      when: inventory_hostname in fail_facts
%(changing)s
"""

CHANGING = """
- name: %(name)s
  hosts: nodes
  gather_facts: false
  serial: %(serial)s
  max_fail_percentage: %(max_fail)s
  tasks:
    - name: Change the node
      ansible.builtin.fail:
        msg: fault in %(name)s
      when: inventory_hostname in fail_%(name)s
    - name: Finish
      ansible.builtin.debug:
        msg: "%(name)s done"
"""


@pytest.fixture(scope='module')
def synthetic(tmp_path_factory):
    """Run the two-play stand-in of the playbook (plays a and b carry the real keyword expressions)."""
    serial, max_fail = _keywords()
    changing = ''.join(CHANGING % dict(name=name, serial=json.dumps(serial), max_fail=json.dumps(max_fail))
                       for name in ('a', 'b'))
    base = tmp_path_factory.mktemp('canary')
    playbook = base / 'canary.yml'
    playbook.write_text(SYNTHETIC % dict(changing=changing))
    inventory = _inventory(base, HOSTS)

    def run(fail_facts=(), fail_a=(), fail_b=(), **extra):
        extra.update(fail_facts=list(fail_facts), fail_a=list(fail_a), fail_b=list(fail_b))
        return _run(base, str(playbook), inventory, extra)
    return run


def _batches_of(batches, name):
    return [ran for play, ran, _tasks in batches if play == name]


def test_the_canary_batch_runs_first_then_ten_percent_then_the_rest(synthetic):
    rc, batches, stats = synthetic()
    assert rc == 0
    # [1, "10%", "100%"] on six hosts: one canary, then 10% (at least one host), then the other four.
    assert _batches_of(batches, 'a') == [['n1'], ['n2'], ['n3', 'n4', 'n5', 'n6']]
    assert _batches_of(batches, 'b') == [['n1'], ['n2'], ['n3', 'n4', 'n5', 'n6']]
    # play b starts after play a has finished on every batch
    names = [play for play, _ran, _tasks in batches]
    assert names == ['facts', 'a', 'a', 'a', 'b', 'b', 'b']
    assert all(stats[host]['failures'] == 0 for host in HOSTS)


def test_a_failed_canary_stops_every_later_batch_and_play(synthetic):
    rc, batches, stats = synthetic(fail_a=['n1'])
    assert rc != 0
    assert _batches_of(batches, 'a') == [['n1']]
    assert _batches_of(batches, 'b') == []
    assert stats['n1']['failures'] == 1
    for host in HOSTS[1:]:
        # only the facts play reached them: nothing was changed there
        assert stats[host]['failures'] == 0 and stats[host]['ok'] == 0 and stats[host]['skipped'] == 1, stats


def test_half_of_a_batch_failing_fails_those_hosts_only(synthetic):
    # 2 of the last batch's 4 hosts: 50% is not more than checkpoint_io_max_fail_percentage 50
    rc, batches, stats = synthetic(fail_a=['n3', 'n4'])
    assert rc != 0
    a = [tasks for play, _ran, tasks in batches if play == 'a']
    assert a[2]['Finish'] == ['n5', 'n6']
    assert [ran for ran in _batches_of(batches, 'b') if ran] == [['n1'], ['n2'], ['n5', 'n6']]
    assert [host for host in HOSTS if stats[host]['failures']] == ['n3', 'n4']


def test_more_than_the_percentage_of_a_batch_failing_stops_the_run(synthetic):
    # 3 of 4 (75%): n6, healthy, is stopped before its next task; play b does not start
    rc, batches, stats = synthetic(fail_a=['n3', 'n4', 'n5'])
    assert rc != 0
    a = [tasks for play, _ran, tasks in batches if play == 'a']
    assert len(a) == 3 and 'Finish' not in a[2]
    assert _batches_of(batches, 'b') == []
    assert stats['n6']['failures'] == 0 and stats['n6']['ok'] == 0


def test_a_canary_lost_earlier_leaves_the_ten_percent_batch_as_the_canary(synthetic):
    # n1 failed in the facts play (unreachable, refused lease): its canary batch runs nothing, and n2, the 10%
    # batch, is the canary: its failure stops the run before the other four hosts.
    rc, batches, stats = synthetic(fail_facts=['n1'], fail_a=['n2'])
    assert rc != 0
    assert _batches_of(batches, 'a') == [[], ['n2']]
    assert _batches_of(batches, 'b') == []
    assert all(stats[host]['ok'] == 0 for host in HOSTS)


def test_the_inputs_set_the_batches(synthetic):
    rc, batches, _stats = synthetic(checkpoint_io_serial='100%')
    assert rc == 0 and _batches_of(batches, 'a') == [HOSTS]
    # max_fail_percentage 0: any failure in a batch stops the run (n5 and n6 never start)
    rc, batches, _stats = synthetic(checkpoint_io_serial=[2, 2], checkpoint_io_max_fail_percentage=0, fail_a=['n4'])
    assert _batches_of(batches, 'a') == [['n1', 'n2'], ['n3', 'n4']] and _batches_of(batches, 'b') == []


def test_a_bad_value_falls_back_to_the_default_in_the_play_keywords(synthetic):
    # The preflight role of the real playbook's first play fails every host naming the value; the play keywords
    # themselves must not break the run with a templating error.
    rc, batches, _stats = synthetic(checkpoint_io_serial='abc', checkpoint_io_max_fail_percentage='lots')
    assert rc == 0
    assert _batches_of(batches, 'a') == [['n1'], ['n2'], ['n3', 'n4', 'n5', 'n6']]


def test_the_real_playbook_stops_after_its_failed_canary(tmp_path):
    """playbooks/tune_checkpoint_nodes.yml in check mode on three aliases of this machine: the gds play runs in its
    three batches (n1, then n2, then n3: no GPU here, it passes; the baseline's play before it the same way), the
    canary n1 fails the io_uring_engine play (a bad role variable), n2 and n3 never enter it and no later play
    starts."""
    state = tmp_path / 'state'
    state.mkdir(mode=0o700)
    inventory = _inventory(tmp_path, ['n1', 'n2', 'n3'], {'n1': {'io_uring_engine_verify': 'notabool'}})
    # a model pattern (a fleet's, matching no drive on this machine: the first play lets such a pattern through)
    rc, batches, stats = _run(tmp_path, PLAYBOOK, inventory, {'checkpoint_io_hosts': 'nodes',
                                                              'checkpoint_io_state_dir': str(state),
                                                              'checkpoint_io_data_drives': {'models': ['^NONE$']}},
                              check=True)
    assert rc != 0
    names = [play for play, _ran, _tasks in batches]
    gds = 'GPUDirect Storage (gds)'
    base = 'Checkpoint write before tuning (first run on a node only)'
    fabric = 'NVMe over Fabrics initiators (nvmeof_rdma)'
    assert names == ['Checkpoint I/O facts before tuning', base, base, base, fabric, fabric, fabric,
                     gds, gds, gds, 'Async I/O engine (io_uring)'], names
    assert batches[0][1] == ['n1', 'n2', 'n3']
    # the baseline's play in batches too (check mode: it measures nothing; a real run writes raw there), then the
    # fabric connections (before the layers that tune their namespaces), then gds
    for first in (1, 4, 7):
        assert [batch[1] for batch in batches[first:first + 3]] == [['n1'], ['n2'], ['n3']]
    assert batches[10][1] == ['n1']
    # check mode writes the plans on the controller, nothing else
    assert sorted(os.listdir(str(tmp_path / 'checkpoint_io_reports' / 'plan'))) == ['n1.json', 'n2.json', 'n3.json']
    assert stats['n1']['failures'] == 1 and stats['n2']['failures'] == 0 and stats['n3']['failures'] == 0
    assert os.listdir(str(state)) == []


def test_the_inventorys_batches_reach_the_play_keywords(tmp_path):
    """Play keywords never see an inventory's variables (only -e and the groups): the first play carries the
    inventory's checked checkpoint_io_serial and checkpoint_io_max_fail_percentage to the later plays through a
    group (batches_group, run_batches). Here 100% in the inventory runs each changing play in one batch of three,
    where the keyword alone would give the default canary batches."""
    state = tmp_path / 'state'
    state.mkdir(mode=0o700)
    same = {'checkpoint_io_serial': '100%', 'checkpoint_io_max_fail_percentage': 0}
    inventory = _inventory(tmp_path, ['n1', 'n2', 'n3'], dict((host, same) for host in ['n1', 'n2', 'n3']))
    rc, batches, _stats = _run(tmp_path, PLAYBOOK, inventory, {'checkpoint_io_hosts': 'nodes',
                                                               'checkpoint_io_state_dir': str(state),
                                                               'checkpoint_io_data_drives': {'models': ['^NONE$']}},
                               check=True)
    gds = [batch[1] for batch in batches if batch[0] == 'GPUDirect Storage (gds)']
    assert gds == [['n1', 'n2', 'n3']], batches
