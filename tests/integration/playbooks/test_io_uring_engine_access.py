# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The io_uring_engine role's access settings through one real ``ansible-playbook --check --diff`` run.

The role reads the fake node (tests/unit/checkpoint_io_fake_node.py; its /proc says Linux 6.6+: io_uring_disabled 0,
io_uring_group -1) through module_defaults, and this machine's real group and user database through getent, so the
io_uring group of each case is a real group of this machine: one with other users (members, or users whose primary
group it is) and one without. Every case is a host (an alias of localhost) with its own state directory and files
under the test's tmp; the run is in check mode, and nothing on this machine changes (checked).

Shows: a shared group refused naming its users, or warned about (play output and the profile fact) when allowed;
memlock auto written as the bound (256 MiB for the fake node's one drive), nonsense refused naming the value and
the limit; the record accumulating a second run's group change; the revert taking every recorded user out of every
recorded group where it is still a member.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import json
import os
import pwd
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='the role runs as root (check mode)')

MIB = 1024 * 1024
REAL = ('/etc/group', '/etc/passwd', '/etc/security/limits.d', '/etc/sysctl.d',
        '/var/lib/ai_storage_checkpoint_io', '/etc/ai_storage_checkpoint_io')


def _users_of():
    """{group name: sorted users} of this machine: its members and the users whose primary group it is."""
    users = pwd.getpwall()
    return dict((group.gr_name, sorted(set(group.gr_mem) | set(u.pw_name for u in users if u.pw_gid == group.gr_gid)))
                for group in grp.getgrall())


def _pick():
    users = _users_of()
    shared = sorted(name for name, members in users.items() if len([m for m in members if m != 'trainer']) >= 1
                    and name != 'root')
    alone = sorted(name for name, members in users.items() if not members)
    member_groups = sorted(name for name in users if grp.getgrnam(name).gr_mem)
    if not shared or not alone or not member_groups:
        pytest.skip('this machine has no group with other users, or none without (getent group / passwd)')
    return users, shared[0], alone[0], member_groups[0]


PLAY = '''---
- name: io_uring_engine access
  hosts: cases
  gather_facts: false
  module_defaults:
    ai_storage.checkpoint_io.checkpoint_io_facts:
      sysfs_root: %(sys)s
      procfs_root: %(proc)s
      devfs_root: %(dev)s
      etc_root: %(etc)s
  roles:
    - role: ai_storage.checkpoint_io.io_uring_engine
'''


def _snapshot():
    seen = {}
    for path in REAL:
        if os.path.isdir(path):
            for top, _dirs, files in os.walk(path):
                for name in files:
                    full = os.path.join(top, name)
                    with open(full, 'rb') as handle:
                        seen[full] = handle.read()
        elif os.path.exists(path):
            with open(path, 'rb') as handle:
                seen[path] = handle.read()
    return seen


def _state_dir(base, host, record=None):
    path = os.path.join(base, 'state', host)
    os.makedirs(path, mode=0o700)
    os.chmod(path, 0o700)
    if record is not None:
        from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
        state_store.write_record(path, 'io_uring_engine', record, 'test')
    return path


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    from checkpoint_io_fake_node import build_node, write
    users, shared, alone, member_group = _pick()
    base = str(tmp_path_factory.mktemp('io_uring_access'))
    os.chmod(base, 0o755)
    node = build_node(os.path.join(base, 'node'))
    write(os.path.join(node.proc, 'sys', 'kernel', 'io_uring_disabled'), '0')
    write(os.path.join(node.proc, 'sys', 'kernel', 'io_uring_group'), '-1')
    member = grp.getgrnam(member_group).gr_mem[0]
    common = {'checkpoint_io_data_drives': {'devices': ['/dev/nvme1n1']}, 'io_uring_engine_training_user': 'trainer',
              'io_uring_engine_verify': False, 'io_uring_engine_ranks': 8, 'io_uring_engine_rank_queue_depth': 8}
    earlier = {'schema_version': 2, 'generator': 'ai_storage.checkpoint_io.io_uring_engine',
               'sysctl': {'io_uring_group': -1}, 'group_additions': [{'user': 'trainer', 'group': 'iouring-old'}],
               'profile_dir_existed': False}
    cases = {
        'refused': {'io_uring_engine_io_uring_group': shared, 'io_uring_engine_io_uring_disabled': 1},
        'allowed': {'io_uring_engine_io_uring_group': shared, 'io_uring_engine_io_uring_disabled': 1,
                    'io_uring_engine_allow_shared_group': True},
        'too_low': {'io_uring_engine_memlock': '64M'},
        'second_run': {'io_uring_engine_io_uring_group': alone, 'io_uring_engine_io_uring_disabled': 1,
                       '__record': earlier},
        'revert': {'io_uring_engine_state': 'absent',
                   '__record': {'schema_version': 2, 'sysctl': {},
                                'group_additions': [{'user': member, 'group': member_group},
                                                    {'user': 'trainer', 'group': member_group}]}},
    }
    hosts = {}
    for host, extra in cases.items():
        extra = dict(extra)
        record = extra.pop('__record', None)
        files = os.path.join(base, 'files', host)
        hosts[host] = dict(common, checkpoint_io_state_dir=_state_dir(base, host, record),
                           io_uring_engine_sysctl_file=os.path.join(files, 'sysctl.conf'),
                           io_uring_engine_limits_file=os.path.join(files, 'limits.conf'),
                           io_uring_engine_profile_file=os.path.join(files, 'profile', 'engine_profile.json'), **extra)
    inventory = {'all': {'vars': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable},
                         'children': {'cases': {'hosts': hosts}}}}
    with open(os.path.join(base, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump(inventory, handle)
    playbook = os.path.join(base, 'playbook.yml')
    with open(playbook, 'w') as handle:
        handle.write(PLAY % dict(sys=node.sys, proc=node.proc, dev=node.dev, etc=node.etc))
    # Mitogen's linear strategy (as the lab scenarios run): one interpreter per host instead of one per task
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='mitogen_linear',
               ANSIBLE_STRATEGY_PLUGINS=os.path.join(ROOT, 'tests', 'ansible_plugins', 'strategy'),
               ANSIBLE_STDOUT_CALLBACK='json', ANSIBLE_NOCOLOR='1', ANSIBLE_FORKS='8')
    before = _snapshot()
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    proc = subprocess.run([binary, '-i', os.path.join(base, 'inventory.yml'), '--check', '--diff', playbook],
                          env=env, cwd=base, capture_output=True, text=True, check=False, timeout=600)
    assert _snapshot() == before, 'the check-mode run changed this machine'
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('no JSON (rc %d): %s' % (proc.returncode, (proc.stdout + proc.stderr)[-4000:]))
    results = {}
    for task in doc['plays'][0]['tasks']:
        for host, result in task['hosts'].items():
            results.setdefault(host, []).append((task['task']['name'], result))
    assert not os.path.exists(os.path.join(base, 'files'))  # check mode made no file, no directory
    return {'results': results, 'stats': doc['stats'], 'users': users, 'shared': shared, 'alone': alone,
            'member_group': member_group, 'member': member}


ROLE = 'ai_storage.checkpoint_io.io_uring_engine : '
REFUSE = ROLE + 'Refuse bad input before any change'


def _task(run, host, name):
    for task, result in run['results'][host]:
        if task == ROLE + name:
            return result
    raise AssertionError('%s did not run %r: %s' % (host, name, [task for task, _r in run['results'][host]]))


def _failure(run, host):
    failed = [(task, result) for task, result in run['results'][host] if result.get('failed')]
    assert len(failed) == 1, failed
    return failed[0]


def _changed_before(run, host, task_name):  # task_name as the run names it (with the role)
    names = []
    for task, result in run['results'][host]:
        if task == task_name:
            return names
        if result.get('changed'):
            names.append(task)
    return names


def test_a_shared_io_uring_group_is_refused_naming_its_users(run):
    task, result = _failure(run, 'refused')
    others = [user for user in run['users'][run['shared']] if user != 'trainer']
    assert task == REFUSE
    assert 'nothing was changed' in result['msg']
    assert 'the io_uring group %s (gid %d) has other members besides trainer: ' % (
        run['shared'], grp.getgrnam(run['shared']).gr_gid) in result['msg']
    for user in others:
        assert user in result['msg']
    assert 'every member of kernel.io_uring_group may create io_uring instances' in result['msg']
    assert 'io_uring_engine_allow_shared_group: true' in result['msg']
    assert _changed_before(run, 'refused', task) == []


def test_an_allowed_shared_group_is_warned_about_in_the_output_and_the_profile(run):
    assert run['stats']['allowed']['failures'] == 0
    warning = _task(run, 'allowed', 'Warn that other users may use io_uring through the group')
    assert 'WARNING io_uring_engine_io_uring_group: the io_uring group %s' % run['shared'] in warning['msg']
    profile = _task(run, 'allowed', "Add this run's verification to the profile")['ansible_facts'][
        'checkpoint_io_engine_profile']
    shared = profile['io_uring']['shared_group']
    assert shared['others'] == [user for user in run['users'][run['shared']] if user != 'trainer']
    assert shared['warning'] in profile['notes']


def test_a_group_of_the_training_users_own_is_not_warned_about(run):
    assert run['stats']['second_run']['failures'] == 0
    result = _task(run, 'second_run', 'Warn that other users may use io_uring through the group')
    assert result.get('skipped') is True


def test_memlock_auto_writes_the_bound_the_profile_needs(run):
    # the fake node: 1 data drive; 8 ranks x 8 x 1 MiB + 1 drive x 32 x 1 MiB = 96 MiB -> 2 x 96 + 64 = 256 MiB
    result = _task(run, 'second_run',
                   "Set RLIMIT_MEMLOCK of the training user for registered io_uring buffers and DeepSpeed's locked buffers")
    after = result['diff'][0]['after'] if isinstance(result['diff'], list) else result['diff']['after']
    assert 'trainer soft memlock 262144\ntrainer hard memlock 262144\n' in after
    assert '8 ranks x queue depth 8 x block 1048576 B + 1 drives x depth 32' in after
    profile = _task(run, 'second_run', "Add this run's verification to the profile")['ansible_facts'][
        'checkpoint_io_engine_profile']
    assert profile['memlock']['limit']['soft'] == 256 * MIB and profile['memlock']['limit']['need']['need_bytes'] == \
        96 * MIB
    assert profile['memlock']['covers_fixedbufs'] is True and 'unlimited' not in after


def test_memlock_below_the_need_is_refused_before_any_change(run):
    task, result = _failure(run, 'too_low')
    assert task == REFUSE
    assert "io_uring_engine_memlock: '64M' is 67108864 bytes, below the 100663296 bytes the profile pins" in \
        result['msg'], result['msg']
    assert _changed_before(run, 'too_low', task) == []


def test_a_second_runs_group_change_is_added_to_the_record(run):
    result = _task(run, 'second_run', 'Record what this run is about to change (added to what earlier runs recorded)')
    assert result['changed'] is True
    assert result['record']['group_additions'] == [{'user': 'trainer', 'group': 'iouring-old'},
                                                   {'user': 'trainer', 'group': run['alone']}]
    # io_uring_group was recorded by the first run (-1): kept; io_uring_disabled 0 -> 1 is new
    assert result['record']['sysctl'] == {'io_uring_group': -1, 'io_uring_disabled': 0}


def test_the_revert_takes_every_recorded_user_out_of_every_recorded_group(run):
    result = _task(run, 'revert', 'Take each user out of each group a run of the role added it to')
    items = dict((item['item']['user'], item) for item in result['results'])
    # still a member: gpasswd would run (check mode); no longer a member: left alone
    assert items[run['member']]['msg'] == 'Command would have run if not in check mode'
    assert items[run['member']]['cmd'] == ['gpasswd', '--delete', run['member'], run['member_group']]
    assert items['trainer'].get('false_condition') == "item.user in (__entry[2] | default('')).split(',')"
    assert run['stats']['revert']['failures'] == 0
