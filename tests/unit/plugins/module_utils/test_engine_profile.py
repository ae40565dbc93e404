# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""engine_profile: the pure logic of the io_uring_engine role.

The fio fixtures are real fio 3.39 runs on a trixie lab node (kernel 6.12, QEMU NVMe under TCG):

* fio-3.39_iouring_read_2drives_qd16_sqpoll_fixedbufs.json: the role's verification job, two drives at once,
  sequential 1 MiB O_DIRECT reads of the raw drives (--readonly), iodepth 16, SQPOLL on CPU 1, submission on
  CPU 0, registered files and buffers, 256 MiB or 5 s per drive.
* fio-3.39_iouring_read_qd16_only_4_ios.json: iodepth 16 but only 4 MiB to read (4 I/Os): the depth can never
  reach 16 (deepest bucket "4").
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from helpers import fixture

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring import engine_profile as ep
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring import engine_verify as ev
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio import IODEPTH_BUCKETS

TWO_DRIVES = fixture('fio', 'fio-3.39_iouring_read_2drives_qd16_sqpoll_fixedbufs.json')
FOUR_IOS = fixture('fio', 'fio-3.39_iouring_read_qd16_only_4_ios.json')
MIB = 1024 * 1024


def drive(name, ctrl, serial, **extra):
    entry = {'name': name, 'device': '/dev/' + name, 'controller': ctrl, 'serial': serial,
             'model': 'QEMU NVMe Ctrl', 'wwid': 'wwid-' + name, 'logical_block_size': 512,
             'size_bytes': 4 * 1024 * MIB, 'mount_points': []}
    entry.update(extra)
    return entry


def controller(name, cpus, numa=None):
    return {'name': name, 'numa_node': numa, 'local_cpus': cpus,
            'local_cpulist': ep.format_cpulist(cpus) if cpus is not None else None}


IO_URING = {'io_uring_disabled': 0, 'io_uring_group': -1, 'training_user': 'trainer', 'training_user_uid': 1000,
            'training_user_groups': ['trainer'], 'allowed_for_user': True,
            'memlock': {'configured_soft_bytes': None, 'configured_soft_source': None}, 'fio_path': '/usr/bin/fio'}

LAB_FACTS = {
    'nvme': {'controllers': [controller('nvme0', [0, 1]), controller('nvme1', [0, 1]), controller('nvme2', [0, 1])]},
    'io_uring': IO_URING,
    'block': {'devices': [{'name': 'nvme1n1', 'nr_requests': 1023, 'hw_tag_depth': 1023},
                          {'name': 'nvme2n1', 'nr_requests': 4, 'hw_tag_depth': 1023}]},
}
LAB_SELECTION = {'selected': [drive('nvme1n1', 'nvme1', 'DATA0001'), drive('nvme2n1', 'nvme2', 'DATA0002')],
                 'refused': [], 'unmatched': []}

OPTIONS = {'training_user': 'trainer', 'target_depth': 16, 'block_size': '1M', 'sqpoll': True,
           'registerfiles': True, 'fixedbufs': True, 'cpus_per_drive': 1, 'exclude_cpus': [], 'memlock': '1G',
           'io_uring_disabled': 1, 'io_uring_group': 'iouring', 'group_gid': 991, 'add_user_to_group': True,
           'verify_mode': 'read', 'verify_runtime': 5, 'verify_size': '256M', 'allow_mounted_by': []}


def lab_profile(**changes):
    options = dict(OPTIONS)
    options.update(changes)
    return ep.build_profile(LAB_FACTS, LAB_SELECTION, options)


# --- cpulists and memlock ------------------------------------------------------------------------------------
@pytest.mark.parametrize('cpus, text', [
    ([], ''), ([3], '3'), ([0, 1], '0-1'), ([0, 1, 2, 5, 7, 8], '0-2,5,7-8'), ([8, 0, 1, 1], '0-1,8'),
])
def test_format_cpulist(cpus, text):
    assert ep.format_cpulist(cpus) == text


@pytest.mark.parametrize('value, expected', [
    ('unlimited', {'unlimited': True, 'bytes': None, 'kib': None, 'limits_value': 'unlimited'}),
    ('Infinity', {'unlimited': True, 'bytes': None, 'kib': None, 'limits_value': 'unlimited'}),
    (-1, {'unlimited': True, 'bytes': None, 'kib': None, 'limits_value': 'unlimited'}),
    ('1G', {'unlimited': False, 'bytes': 1024 * MIB, 'kib': 1048576, 'limits_value': '1048576'}),
    ('64K', {'unlimited': False, 'bytes': 65536, 'kib': 64, 'limits_value': '64'}),
    (1073741824, {'unlimited': False, 'bytes': 1024 * MIB, 'kib': 1048576, 'limits_value': '1048576'}),
    (None, None),
])
def test_parse_memlock(value, expected):
    assert ep.parse_memlock(value) == expected


@pytest.mark.parametrize('value, fragments', [
    ('1X', ["'1X' is not a size", 'io_uring_engine_memlock', 'or unlimited']),
    ('1GB', ["'1GB' is ambiguous", '1G']),
    (0, ['0 is not a size']),
    (1000, ['1000 bytes, not a whole number of KiB']),
    (True, ['True is not a size']),
    ('lots', ["'lots' is not a size"]),
])
def test_parse_memlock_refuses_with_the_value(value, fragments):
    with pytest.raises(ValueError) as exc:
        ep.parse_memlock(value)
    for fragment in fragments:
        assert fragment in str(exc.value)


@pytest.mark.parametrize('memlock, required, uid, allowed, fragment', [
    ('unlimited', 10 ** 12, 1000, True, 'unlimited'),
    (1024 * MIB, 32 * MIB, 1000, True, 'covers the 33554432 bytes'),
    (32 * MIB, 32 * MIB, 1000, True, 'covers'),
    (8 * MIB, 32 * MIB, 1000, False, 'below the 33554432 bytes'),
    (None, 32 * MIB, 1000, False, 'not configured'),
    (None, 32 * MIB, 0, True, 'CAP_IPC_LOCK'),
    ('1G', 32 * MIB, 1000, True, 'covers'),
    ({'unlimited': False, 'bytes': 64 * MIB}, 32 * MIB, 1000, True, 'covers'),
])
def test_memlock_allows(memlock, required, uid, allowed, fragment):
    result, reason = ep.memlock_allows(memlock, required, uid, 'trainer')
    assert result is allowed
    assert fragment in reason


# --- io_uring permission -----------------------------------------------------------------------------------------
def found(**changes):
    facts = dict(IO_URING)
    facts.update(changes)
    return facts


TRAINER = {'name': 'trainer', 'uid': 1000, 'groups': ['trainer']}


@pytest.mark.parametrize('facts, disabled, group, user, add, allowed, fragment', [
    (found(io_uring_disabled=None, io_uring_group=None), 2, 'iouring', TRAINER, True, True, 'before 6.6'),
    (found(), None, None, TRAINER, True, True, 'allowed for everyone'),
    (found(), 0, None, TRAINER, True, True, 'allowed for everyone'),
    (found(), 2, None, TRAINER, True, False, 'disabled for everyone, trainer included'),
    (found(), 1, None, {'name': 'root', 'uid': 0, 'groups': []}, True, True, 'uid 0'),
    (found(), 1, 'iouring', dict(TRAINER, groups=['trainer', 'iouring']), False, True, 'is in kernel.io_uring_group'),
    (found(), 1, 'iouring', TRAINER, True, True, 'trainer is in kernel.io_uring_group iouring'),
    (found(), 1, 'iouring', TRAINER, False, False, 'io_uring_engine_add_user_to_group is false'),
    (found(), 1, None, TRAINER, True, False, 'kernel.io_uring_group is unset'),
    (found(io_uring_disabled=1, io_uring_group=991, allowed_for_user=True), None, None, TRAINER, True, True,
     'is in kernel.io_uring_group 991'),
    (found(io_uring_disabled=1, io_uring_group=991, allowed_for_user=False), None, None, TRAINER, True, False,
     'is not in kernel.io_uring_group 991'),
    (found(io_uring_disabled=0, io_uring_group=991), 1, None, TRAINER, True, None, 'cannot tell'),
])
def test_io_uring_access(facts, disabled, group, user, add, allowed, fragment):
    result = ep.io_uring_access(facts, disabled, group, 991 if group else None, user, add)
    assert result['allowed'] is allowed, result
    assert fragment in result['reason']
    assert result['sysctl_present'] is (facts['io_uring_disabled'] is not None)


# --- input validation ------------------------------------------------------------------------------------------
GOOD = dict(OPTIONS, state='present', user_found=True, group_found=True, verify=True, fio_found=True,
            io_uring=IO_URING)


def test_good_options_have_no_problem():
    assert ep.check_options(GOOD) == []


def test_absent_needs_nothing():
    assert ep.check_options({'state': 'absent', 'target_depth': 0, 'memlock': '1X'}) == []


@pytest.mark.parametrize('changes, fragments', [
    ({'io_uring_disabled': 3}, ['io_uring_engine_io_uring_disabled: 3 is outside 0..2']),
    ({'io_uring_disabled': -1}, ['io_uring_engine_io_uring_disabled: -1 is outside 0..2']),
    ({'io_uring_group': 'nosuchgroup', 'group_found': False},
     ["io_uring_engine_io_uring_group: group 'nosuchgroup' does not exist", 'io_uring_engine_io_uring_disabled is 1']),
    ({'memlock': '1X'}, ["io_uring_engine_memlock: '1X' is not a size"]),
    ({'target_depth': 0}, ['io_uring_engine_target_depth: 0 is outside 1..4096']),
    ({'target_depth': 4097}, ['io_uring_engine_target_depth: 4097 is outside 1..4096']),
    ({'target_depth': 'deep'}, ["io_uring_engine_target_depth: 'deep' is not an integer (allowed: 1 to 4096)"]),
    ({'training_user': 'nosuchuser', 'user_found': False},
     ["io_uring_engine_training_user: user 'nosuchuser' does not exist"]),
    ({'training_user': None}, ['io_uring_engine_training_user is not set']),
    ({'training_user': ''}, ['io_uring_engine_training_user is not set']),
    ({'block_size': '1MB'}, ["io_uring_engine_block_size: '1MB' is ambiguous"]),
    ({'block_size': 1000}, ['io_uring_engine_block_size: 1000 is 1000 bytes, not a multiple of 4096']),
    ({'cpus_per_drive': 0}, ['io_uring_engine_cpus_per_drive: 0 is outside 1..64']),
    ({'exclude_cpus': ['a']}, ["io_uring_engine_exclude_cpus: 'a' is not a CPU number"]),
    ({'verify_runtime': 0}, ['io_uring_engine_verify_runtime: 0 is outside 1..600']),
    ({'verify_mode': 'write'}, ["io_uring_engine_verify_mode: 'write' is not one of read, scratch_write"]),
    ({'verify_size': '16M'}, ["io_uring_engine_verify_size: '16M' is 16777216 bytes, below 2 x target depth 16"]),
    ({'fio_found': False}, ['fio is not installed on this node']),
    ({'io_uring_disabled': 2}, ['io_uring would not be usable for trainer after this role',
                                'disabled for everyone']),
    ({'io_uring_group': None}, ['kernel.io_uring_group is unset']),
    ({'add_user_to_group': False}, ['io_uring_engine_add_user_to_group is false']),
])
def test_bad_options_are_named_with_value_and_limit(changes, fragments):
    options = dict(GOOD)
    options.update(changes)
    problems = ep.check_options(options)
    assert problems, changes
    text = '; '.join(problems)
    for fragment in fragments:
        assert fragment in text


def test_verify_settings_are_not_checked_when_verify_is_off():
    options = dict(GOOD, verify=False, verify_size='1K', verify_runtime=0, fio_found=False)
    assert ep.check_options(options) == []


def test_every_problem_is_reported_at_once():
    options = dict(GOOD, target_depth=0, memlock='1X', io_uring_disabled=7)
    assert len(ep.check_options(options)) == 3


# --- CPU spreading ---------------------------------------------------------------------------------------------
def test_spread_distinct_cpus_per_drive_when_there_are_enough():
    plan = ep.spread_cpus([[0, 1, 2, 3], [0, 1, 2, 3]], 1, sqpoll=True)
    assert [(p['submit_cpus'], p['sqpoll_cpu'], p['shared']) for p in plan] == [([0], 1, False), ([2], 3, False)]


def test_spread_without_sqpoll_gives_one_cpu_each():
    plan = ep.spread_cpus([[0, 1], [0, 1]], 1, sqpoll=False)
    assert [(p['submit_cpus'], p['sqpoll_cpu'], p['shared']) for p in plan] == [([0], None, False), ([1], None, False)]


def test_spread_wraps_and_says_shared_when_cpus_are_short():
    plan = ep.spread_cpus([[0, 1], [0, 1]], 1, sqpoll=True)
    assert [(p['submit_cpus'], p['sqpoll_cpu'], p['shared']) for p in plan] == [([0], 1, True), ([0], 1, True)]


def test_spread_keeps_each_numa_node_to_its_own_cpus():
    node0, node1 = list(range(0, 8)), list(range(8, 16))
    plan = ep.spread_cpus([node0, node1, node0, node1], 2, sqpoll=True)
    assert [p['submit_cpus'] for p in plan] == [[0, 1], [8, 9], [3, 4], [11, 12]]
    assert [p['sqpoll_cpu'] for p in plan] == [2, 10, 5, 13]
    assert not any(p['shared'] for p in plan)
    for cpus, p in zip([node0, node1, node0, node1], plan):
        assert set(p['submit_cpus']) | {p['sqpoll_cpu']} <= set(cpus)


def test_spread_skips_excluded_cpus_unless_they_are_all_there_is():
    plan = ep.spread_cpus([[0, 1, 2, 3], [0]], 1, sqpoll=False, exclude=[0])
    assert plan[0]['submit_cpus'] == [1] and not plan[0]['excluded_ignored']
    assert plan[1]['submit_cpus'] == [0] and plan[1]['excluded_ignored']


def test_spread_without_local_cpus_pins_nothing():
    plan = ep.spread_cpus([None, []], 1, sqpoll=True)
    assert plan == [{'submit_cpus': [], 'sqpoll_cpu': None, 'shared': False, 'excluded_ignored': False}] * 2


# --- the profile ---------------------------------------------------------------------------------------------
def test_lab_profile():
    profile = lab_profile()
    assert profile['schema_version'] == 1 and profile['generator'] == 'ai_storage.checkpoint_io.io_uring_engine'
    assert profile['training_user'] == 'trainer'
    assert profile['io_uring'] == {'sysctl_present': True, 'disabled': 1, 'group': 'iouring', 'group_gid': 991,
                                   'allowed_for_user': True,
                                   'reason': 'kernel.io_uring_disabled=1: trainer is in kernel.io_uring_group iouring'}
    assert profile['memlock'] == {'soft_bytes': 1024 * MIB, 'source': 'io_uring_engine_memlock',
                                  'required_bytes': 32 * MIB, 'covers_fixedbufs': True}
    assert [d['name'] for d in profile['drives']] == ['nvme1n1', 'nvme2n1']
    first = profile['drives'][0]
    assert first['serial'] == 'DATA0001' and first['numa_node'] is None
    assert first['local_cpus'] == [0, 1] and first['local_cpulist'] == '0-1'
    assert first['submit_cpus'] == [0] and first['sqthread_poll_cpu'] == 1 and first['cpus_shared'] is True
    assert first['fixedbufs'] is True and first['registered_buffer_bytes'] == 16 * MIB
    assert first['fio_options'] == {'ioengine': 'io_uring', 'iodepth': 16, 'bs': MIB, 'direct': 1, 'hipri': 0,
                                    'registerfiles': 1, 'fixedbufs': 1, 'sqthread_poll': 1, 'sqthread_poll_cpu': 1,
                                    'cpus_allowed': '0'}
    assert any('CPUs are shared' in note for note in profile['notes'])
    json.dumps(profile)  # the profile is written as JSON


def test_profile_is_deterministic():
    assert lab_profile() == lab_profile()


def test_profile_is_the_same_before_and_after_the_role_applied_it():
    """Idempotence: the second run sees the user in the group and the sysctl values set; same profile."""
    facts = copy.deepcopy(LAB_FACTS)
    facts['io_uring'].update(io_uring_disabled=1, io_uring_group=991, training_user_groups=['trainer', 'iouring'],
                             memlock={'configured_soft_bytes': 1024 * MIB,
                                      'configured_soft_source': '/etc/security/limits.d/90-x.conf:1'})
    assert ep.build_profile(facts, LAB_SELECTION, OPTIONS) == lab_profile()


def test_fixedbufs_off_when_memlock_is_too_small_and_the_reason_says_why():
    profile = lab_profile(memlock='16M')
    assert [d['fixedbufs'] for d in profile['drives']] == [False, False]
    assert [d['fio_options']['fixedbufs'] for d in profile['drives']] == [0, 0]
    assert 'below the 33554432 bytes' in profile['drives'][0]['fixedbufs_reason']
    assert profile['memlock']['covers_fixedbufs'] is False
    assert any('fixedbufs off' in note for note in profile['notes'])


def test_memlock_from_the_facts_when_the_role_does_not_manage_it():
    facts = copy.deepcopy(LAB_FACTS)
    facts['io_uring']['memlock'] = {'configured_soft_bytes': 'unlimited',
                                    'configured_soft_source': '/etc/security/limits.d/90-x.conf:1'}
    profile = ep.build_profile(facts, LAB_SELECTION, dict(OPTIONS, memlock=None))
    assert profile['memlock']['soft_bytes'] == 'unlimited'
    assert profile['memlock']['source'] == '/etc/security/limits.d/90-x.conf:1'
    assert profile['drives'][0]['fixedbufs'] is True


def test_fixedbufs_off_by_choice():
    profile = lab_profile(fixedbufs=False)
    assert profile['drives'][0]['fixedbufs'] is False
    assert profile['drives'][0]['fixedbufs_reason'] == 'io_uring_engine_fixedbufs is false'


def test_sqpoll_off_has_no_sqpoll_cpu():
    profile = lab_profile(sqpoll=False)
    first, second = profile['drives']
    assert first['sqthread_poll_cpu'] is None and 'sqthread_poll_cpu' not in first['fio_options']
    assert first['fio_options']['sqthread_poll'] == 0
    assert (first['submit_cpus'], second['submit_cpus']) == ([0], [1])
    assert not first['cpus_shared']


def test_two_numa_nodes():
    facts = copy.deepcopy(LAB_FACTS)
    facts['nvme']['controllers'] = [controller('nvme1', list(range(0, 4)), 0),
                                    controller('nvme2', list(range(4, 8)), 1)]
    profile = ep.build_profile(facts, LAB_SELECTION, OPTIONS)
    assert [(d['numa_node'], d['submit_cpus'], d['sqthread_poll_cpu']) for d in profile['drives']] == [
        (0, [0], 1), (1, [4], 5)]
    assert profile['notes'] == []


def test_drive_without_local_cpus_is_not_pinned():
    facts = copy.deepcopy(LAB_FACTS)
    facts['nvme']['controllers'] = [controller('nvme1', None), controller('nvme2', [0, 1])]
    profile = ep.build_profile(facts, LAB_SELECTION, dict(OPTIONS, sqpoll=False))
    assert profile['drives'][0]['submit_cpus'] == [] and 'cpus_allowed' not in profile['drives'][0]['fio_options']
    assert any('no local CPUs' in note for note in profile['notes'])


def test_block_size_must_fit_the_logical_block_size():
    selection = {'selected': [drive('nvme1n1', 'nvme1', 'DATA0001', logical_block_size=8192)]}
    with pytest.raises(ValueError) as exc:
        ep.build_profile(LAB_FACTS, selection, dict(OPTIONS, block_size='12K'))
    assert 'not a multiple of the logical block size 8192 of /dev/nvme1n1' in str(exc.value)


def test_old_kernel_profile_notes_the_skip():
    facts = copy.deepcopy(LAB_FACTS)
    facts['io_uring'].update(io_uring_disabled=None, io_uring_group=None)
    profile = ep.build_profile(facts, LAB_SELECTION, OPTIONS)
    assert profile['io_uring']['sysctl_present'] is False and profile['io_uring']['allowed_for_user'] is True
    assert any('before 6.6' in note for note in profile['notes'])


def test_bad_selection_is_refused():
    with pytest.raises(ValueError):
        ep.build_profile(LAB_FACTS, 'nvme1n1', OPTIONS)


# --- fio ---------------------------------------------------------------------------------------------------------
def test_fio_argv_reads_raw_drives_read_only_with_the_engine_first():
    argv = ev.fio_argv(lab_profile(), OPTIONS, LAB_SELECTION['selected'], '/usr/bin/fio')
    assert argv[:5] == ['/usr/bin/fio', '--output-format=json', '--runtime=5', '--thread', '--readonly']
    first = argv.index('--name=nvme1n1')
    second = argv.index('--name=nvme2n1')
    job = argv[first:second]
    assert job[:4] == ['--name=nvme1n1', '--filename=/dev/nvme1n1', '--rw=read', '--size=268435456']
    assert job[4] == '--ioengine=io_uring'
    for option in ('--iodepth=16', '--bs=1048576', '--direct=1', '--hipri=0', '--sqthread_poll=1',
                   '--sqthread_poll_cpu=1', '--registerfiles=1', '--fixedbufs=1', '--cpus_allowed=0'):
        assert option in job
    assert not any(arg.startswith('--rw=write') or arg.startswith('--unlink') for arg in argv)


def test_fio_size_is_capped_at_the_drive_and_whole_blocks():
    selected = [drive('nvme1n1', 'nvme1', 'DATA0001', size_bytes=100 * MIB + 4096),
                drive('nvme2n1', 'nvme2', 'DATA0002')]
    plan = ev.verify_plan(lab_profile(), dict(OPTIONS, verify_size='1G'), selected)
    assert [job['size'] for job in plan] == [100 * MIB, 1024 * MIB]


def test_scratch_write_only_on_a_drive_mounted_by_the_collection():
    selected = [drive('nvme1n1', 'nvme1', 'DATA0001', mount_points=['/mnt/ckpt']),
                drive('nvme2n1', 'nvme2', 'DATA0002')]
    options = dict(OPTIONS, verify_mode='scratch_write', allow_mounted_by=['/mnt/ckpt/'])
    plan = ev.verify_plan(lab_profile(), options, selected)
    assert plan[0] == {'name': 'nvme1n1', 'directory': '/mnt/ckpt', 'scratch': 'nvme1n1.scratch', 'filename': None,
                       'rw': 'write', 'size': 256 * MIB}
    assert plan[1]['filename'] == '/dev/nvme2n1' and plan[1]['rw'] == 'read'
    # The scratch file is the engine_verify module's (made where no user can redirect it): never a path here.
    with pytest.raises(ValueError) as exc:
        ev.fio_argv(lab_profile(), options, selected)
    assert 'nvme1n1 writes a scratch file in /mnt/ckpt, which only the engine_verify module makes' in str(exc.value)
    argv = ev.fio_argv(lab_profile(), options, selected, files={'nvme1n1': '/proc/self/fd/7'})
    assert '--readonly' not in argv
    job = argv[argv.index('--name=nvme1n1'):argv.index('--name=nvme2n1')]
    assert job[1] == '--filename=/proc/self/fd/7' and '--rw=write' in job and '--fallocate=none' in job
    assert not [arg for arg in argv if arg.startswith('--unlink')]
    # in read mode the mounted drive is read, never written
    plan = ev.verify_plan(lab_profile(), dict(options, verify_mode='read'), selected)
    assert plan[0]['rw'] == 'read' and plan[0]['filename'] == '/dev/nvme1n1'


def test_verification_of_the_real_lab_run():
    document = ev.verify_profile(lab_profile(), TWO_DRIVES, OPTIONS, LAB_SELECTION['selected'], LAB_FACTS['block'])
    assert document['verify']['ran'] is True and document['verify']['passed'] is True
    assert document['verify']['failures'] == []
    assert document['verify']['fio_version'] == 'fio-3.39'
    assert document['verify']['mode'] == 'read' and document['verify']['size_bytes'] == 256 * MIB
    first, second = [d['verify'] for d in document['drives']]
    assert first['target_depth'] == 16 and first['achieved_depth'] == 16 and first['reached'] is True
    assert first['achieved_depth_bucket'] == '16'
    assert first['achieved_depth_share_pct'] == pytest.approx(94.140625)
    assert first['bw_bytes'] == 60417613
    assert first['clat_p99_ns'] == 1027604480
    assert first['rw'] == 'read' and first['filename'] == '/dev/nvme1n1'
    assert first['device_avg_queue'] == pytest.approx(11191.0 / first['runtime_ms'], abs=0.01)
    assert first['drive_depth_cap'] == 1023 and first['capped_by'] is None
    # nr_requests 4 < target 16: the drive sees at most 4, whatever fio keeps in flight
    assert second['drive_depth_cap'] == 4 and second['capped_by'] == 'nr_requests'
    assert lab_profile() == ep.build_profile(LAB_FACTS, LAB_SELECTION, OPTIONS)  # the profile is not modified


def test_depth_not_reached_names_both_numbers():
    profile = ep.build_profile(LAB_FACTS, {'selected': LAB_SELECTION['selected'][:1]}, OPTIONS)
    document = ev.verify_profile(profile, FOUR_IOS, OPTIONS)
    result = document['drives'][0]['verify']
    assert result['achieved_depth'] == 4 and result['reached'] is False and result['error'] is None
    assert document['verify']['passed'] is False
    assert document['verify']['failures'] == [
        'nvme1n1 (DATA0001): fio kept at most 4 requests in flight (iodepth_level bucket 4), target depth 16']


def test_missing_job_fails_the_verification():
    document = ev.verify_profile(lab_profile(), FOUR_IOS, OPTIONS)
    assert document['drives'][1]['verify']['error'] == 'fio reported no job nvme2n1'
    assert document['verify']['passed'] is False
    assert 'fio reported no job nvme2n1' in document['verify']['failures'][-1]


def test_unparsable_output_fails_every_drive():
    document = ev.verify_profile(lab_profile(), 'fio: engine io_uring not loadable\n', OPTIONS)
    assert document['verify']['passed'] is False
    assert all(d['verify']['error'].startswith('fio reported no job') for d in document['drives'])


def test_not_run_in_check_mode():
    document = ev.verify_profile(lab_profile(), None, dict(OPTIONS, skip_reason='check mode'))
    assert document['verify'] == {'ran': False, 'passed': None, 'failures': [], 'reason': 'check mode'}
    assert [d['verify'] for d in document['drives']] == [None, None]


@pytest.mark.parametrize('target, bucket, reached', [
    (16, '16', True), (16, '8', False), (24, '16', True), (32, '16', False), (64, '>=64', True), (128, '>=64', True),
    (1, '1', True), (3, '2', True),
])
def test_target_is_reached_at_its_own_bucket(target, bucket, reached):
    doc = json.loads(TWO_DRIVES)
    doc['jobs'] = doc['jobs'][:1]
    doc['jobs'][0]['iodepth_level'] = dict((key, 100.0 if key == bucket else 0.0) for key in IODEPTH_BUCKETS)
    profile = ep.build_profile(LAB_FACTS, {'selected': LAB_SELECTION['selected'][:1]}, dict(OPTIONS, target_depth=target))
    document = ev.verify_profile(profile, json.dumps(doc), OPTIONS)
    assert document['drives'][0]['verify']['reached'] is reached


# --- the profile file ----------------------------------------------------------------------------------------
def to_nice_json(data):
    """What ansible's to_nice_json writes."""
    return json.dumps(data, indent=4, sort_keys=True, separators=(',', ': '))


def measured():
    return ev.verify_profile(lab_profile(), TWO_DRIVES, OPTIONS, LAB_SELECTION['selected'], LAB_FACTS['block'])


def test_first_write_is_the_document():
    document = measured()
    assert ep.profile_file_document(document, None) is document
    assert ep.profile_file_document(document, '') is document
    assert ep.profile_file_document(document, 'not json') is document


def test_new_measurement_alone_does_not_rewrite_the_file():
    first = measured()
    written = to_nice_json(ep.profile_file_document(first, None))
    second = measured()
    second['drives'][0]['verify'].update(bw_bytes=1, clat_p99_ns=2, achieved_depth_share_pct=50.0, runtime_ms=7,
                                         device_avg_queue=1.5, nr_requests=64, capped_by=None)
    again = ep.profile_file_document(second, written)
    assert to_nice_json(again) == written  # byte for byte: copy reports no change


def test_changed_verdict_or_profile_rewrites_the_file():
    written = to_nice_json(measured())
    failed = measured()
    failed['drives'][0]['verify'].update(achieved_depth=8, reached=False)
    assert ep.profile_file_document(failed, written) is failed
    other = ev.verify_profile(lab_profile(target_depth=32), TWO_DRIVES, OPTIONS)
    assert ep.profile_file_document(other, written) is other


def test_unmeasured_run_keeps_the_recorded_verification():
    written = to_nice_json(measured())
    check_mode = ev.verify_profile(lab_profile(), None, dict(OPTIONS, skip_reason='check mode'))
    assert to_nice_json(ep.profile_file_document(check_mode, written)) == written
    changed = ev.verify_profile(lab_profile(sqpoll=False), None, OPTIONS)
    assert ep.profile_file_document(changed, written) is changed
