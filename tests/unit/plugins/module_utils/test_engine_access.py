# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/io_uring/engine_access.py: the memlock bound, the io_uring group's other users, the accumulated record."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring.engine_access import (
    access_record,
    memlock_need,
    memlock_plan,
    shared_group,
)

MIB = 1024 * 1024
LIMITS = '/etc/security/limits.d/90-ai-storage-checkpoint-io-io-uring.conf'
OPTIONS = {'ranks': 8, 'rank_queue_depth': 8, 'block_size': '1M', 'drives': 4, 'target_depth': 32,
           'limits_file': LIMITS}


def _configured(soft, hard=None, source='/etc/security/limits.conf:12'):
    return {'memlock': {'configured_soft_bytes': soft, 'configured_hard_bytes': hard if hard is not None else soft,
                        'configured_soft_source': source, 'configured_hard_source': source}}


# --- memlock ------------------------------------------------------------------------------------------------------
def test_the_bound_is_what_the_ranks_and_the_drives_pin_twice_plus_the_headroom():
    need = memlock_need(8, 8, MIB, 4, 32)
    assert need['ranks_bytes'] == 64 * MIB and need['drives_bytes'] == 128 * MIB and need['need_bytes'] == 192 * MIB
    assert need['bound_bytes'] == 448 * MIB
    assert need['formula'] == ('8 ranks x queue depth 8 x block 1048576 B + 4 drives x depth 32 x block 1048576 B = '
                               '201326592 B pinned at most; x 2 + 64 MiB headroom = 469762048 B (448 MiB)')
    # rounded up to a MiB
    assert memlock_need(1, 1, 4096, 0, 1)['bound_bytes'] == 65 * MIB


def test_auto_is_the_default_and_a_bounded_value():
    plan = memlock_plan('auto', OPTIONS)
    assert plan['errors'] == [] and plan['manage'] == 'write'
    assert (plan['soft'], plan['hard']) == (448 * MIB, 448 * MIB)
    assert (plan['limits_soft'], plan['limits_hard']) == ('458752', '458752')
    assert plan['value'] == 448 * MIB and plan['reason'].startswith('auto: 8 ranks x queue depth 8')


def test_queue_depth_auto_counts_as_the_deepest_depth_the_sweep_tries():
    plan = memlock_plan('auto', dict(OPTIONS, rank_queue_depth='auto'))
    assert plan['need']['rank_queue_depth'] == 256
    assert plan['soft'] == (2 * (8 * 256 + 4 * 32) + 64) * MIB


def test_unlimited_only_when_asked_by_that_word():
    assert memlock_plan('unlimited', OPTIONS)['limits_soft'] == 'unlimited'
    assert memlock_plan('Infinity', OPTIONS)['limits_hard'] == 'unlimited'
    for value in (-1, '-1'):
        plan = memlock_plan(value, OPTIONS)
        assert plan['manage'] == 'remove' and plan['value'] is None
        assert plan['errors'] == ['io_uring_engine_memlock: %r is negative: a size such as 512M, auto (the bound the '
                                  'profile needs) or unlimited (no limit, asked for by that word)' % (value,)]


@pytest.mark.parametrize('value, message', [
    ('64M', "io_uring_engine_memlock: '64M' is 67108864 bytes, below the 201326592 bytes the profile pins (8 ranks x "
            "queue depth 8 x block 1048576 B + 4 drives x depth 32 x block 1048576 B = 201326592 B pinned at most; "
            "x 2 + 64 MiB headroom = 469762048 B (448 MiB)): raise it to at least 196608K, or use auto"),
    ('-512M', "io_uring_engine_memlock: '-512M' is negative"),
    ('1X', "io_uring_engine_memlock: '1X' is not a size"),
    ('1GB', "io_uring_engine_memlock: '1GB' is ambiguous"),
    (1000, 'io_uring_engine_memlock: 1000 is 1000 bytes, not a whole number of KiB'),
    (True, 'io_uring_engine_memlock: True is not a size'),
    ([1], 'io_uring_engine_memlock: [1] is not a size'),
])
def test_nonsense_is_refused_naming_the_value_and_the_limit(value, message):
    plan = memlock_plan(value, OPTIONS)
    assert len(plan['errors']) == 1 and plan['errors'][0].startswith(message), plan['errors']
    assert plan['manage'] == 'remove' and plan['limits_soft'] is None


def test_an_explicit_size_at_or_above_the_need_is_written_as_it_is():
    plan = memlock_plan('192M', OPTIONS)
    assert plan['errors'] == [] and plan['limits_soft'] == plan['limits_hard'] == '196608'


def test_bad_plan_inputs_are_named():
    plan = memlock_plan('auto', dict(OPTIONS, ranks=0, rank_queue_depth='deep', block_size='1X'))
    assert 'io_uring_engine_ranks: 0 is outside 1..1024' in plan['errors']
    assert "io_uring_engine_rank_queue_depth: 'deep' is not an integer (allowed: 1 to 65535)" in plan['errors']
    # the block size is the profile's: engine_options_check names it, once
    assert not any('block_size' in error for error in plan['errors'])
    assert plan['need'] is None and plan['manage'] == 'remove'


def test_null_is_not_managed():
    plan = memlock_plan(None, OPTIONS)
    assert plan['manage'] == 'remove' and plan['value'] is None and plan['errors'] == []


def test_a_node_that_grants_enough_already_is_left_as_it_is():
    # RDMA setups give the training user unlimited: auto never lowers it
    plan = memlock_plan('auto', OPTIONS, _configured('unlimited'))
    assert plan['manage'] == 'remove' and plan['value'] == 'unlimited'
    assert plan['reason'].startswith('/etc/security/limits.conf:12 already gives the training user unlimited')
    plan = memlock_plan('auto', OPTIONS, _configured(512 * MIB))
    assert plan['manage'] == 'remove' and plan['value'] == 512 * MIB


def test_a_larger_hard_limit_is_kept():
    plan = memlock_plan('auto', OPTIONS, _configured(8 * MIB, 'unlimited'))
    assert plan['manage'] == 'write' and plan['limits_soft'] == '458752' and plan['limits_hard'] == 'unlimited'
    assert 'the hard limit unlimited of /etc/security/limits.conf:12 is kept' in plan['reason']


def test_the_roles_own_file_is_not_counted_the_record_of_before_is():
    ours = _configured(448 * MIB, source=LIMITS + ':3')
    # the role's file wins now; what the node granted before it is in the record
    assert memlock_plan('auto', OPTIONS, ours)['manage'] == 'write'
    recorded = {'soft_bytes': 'unlimited', 'hard_bytes': 'unlimited', 'soft_source': '/etc/security/limits.conf:9'}
    plan = memlock_plan('auto', OPTIONS, ours, recorded)
    assert plan['manage'] == 'remove' and plan['value'] == 'unlimited'


# --- the io_uring group ---------------------------------------------------------------------------------------------
PASSWD = {'trainer': ['x', '1000', '1000', '', '/home/trainer', '/bin/bash'],
          'bob': ['x', '1001', '100', '', '/home/bob', '/bin/bash'],
          'svc': ['x', '998', '998', '', '/', '/usr/sbin/nologin']}


def test_other_members_and_primary_users_are_named_and_refused():
    result = shared_group({'name': 'users', 'gid': 100, 'members': ['trainer', 'alice']}, PASSWD, 'trainer', -1)
    assert result['others'] == ['alice', 'bob'] and result['primary'] == ['bob'] and result['grants'] is True
    assert result['warning'] == (
        'io_uring_engine_io_uring_group: the io_uring group users (gid 100) has other members besides trainer: '
        'alice, bob (primary group). With kernel.io_uring_disabled=1 every member of kernel.io_uring_group may '
        'create io_uring instances (io_uring has had privilege-escalation bugs; that is why access is limited)')
    assert result['error'] == result['warning'] + (
        "; use a group of the training user's own (e.g. groupadd io_uring) or set "
        'io_uring_engine_allow_shared_group: true to accept it')


def test_a_shared_group_is_only_warned_about_when_allowed_or_already_set():
    group = {'name': 'users', 'gid': 100, 'members': ['alice']}
    allowed = shared_group(group, PASSWD, 'trainer', -1, allow_shared=True)
    assert allowed['warning'] and allowed['error'] is None
    already = shared_group(group, PASSWD, 'trainer', 100)
    assert already['grants'] is False and already['warning'] and already['error'] is None


def test_a_group_of_its_own_is_fine():
    result = shared_group({'name': 'io_uring', 'gid': 990, 'members': ['trainer']}, PASSWD, 'trainer', -1)
    assert result['others'] == [] and result['warning'] is None and result['error'] is None
    assert shared_group(None, PASSWD, 'trainer') is None


# --- the record ------------------------------------------------------------------------------------------------------
def _run(previous, sysctl=(), add_user=None, memlock=None, profile_dir_existed=True):
    return access_record(previous, {'sysctl': list(sysctl), 'add_user': add_user, 'memlock': memlock or {},
                                    'limits_file': LIMITS, 'profile_dir_existed': profile_dir_existed})


def test_the_record_accumulates_every_change_of_every_run():
    # run 1: io_uring_group -1 -> 990 (io_uring), trainer added to it; the profile directory was made
    first = _run(None, [{'key': 'kernel.io_uring_group', 'value': 990, 'found': -1}],
                 {'user': 'trainer', 'group': 'io_uring'}, {'configured_soft_bytes': None}, False)
    assert first['sysctl'] == {'io_uring_group': -1}
    assert first['group_additions'] == [{'user': 'trainer', 'group': 'io_uring'}]
    assert first['profile_dir_existed'] is False and first['memlock_before']['soft_bytes'] is None
    # run 2, another group and user, and io_uring_disabled 0 -> 1: added; the first values stay the first
    second = _run(first, [{'key': 'kernel.io_uring_group', 'value': 991, 'found': 990},
                          {'key': 'kernel.io_uring_disabled', 'value': 1, 'found': 0}],
                  {'user': 'trainer2', 'group': 'ckpt'}, {'configured_soft_bytes': 448 * MIB,
                                                          'configured_soft_source': LIMITS + ':3'})
    assert second['sysctl'] == {'io_uring_group': -1, 'io_uring_disabled': 0}
    assert second['group_additions'] == [{'user': 'trainer', 'group': 'io_uring'},
                                         {'user': 'trainer2', 'group': 'ckpt'}]
    assert second['profile_dir_existed'] is False and second['memlock_before']['soft_bytes'] is None
    # run 3 changes nothing: the record is the same (the module then writes nothing)
    assert _run(second, [{'key': 'kernel.io_uring_group', 'value': 991, 'found': 991}]) == second
    assert _run(second, add_user={'user': 'trainer', 'group': 'io_uring'}) == second


def test_values_found_equal_to_the_wanted_ones_are_no_change():
    record = _run(None, [{'key': 'kernel.io_uring_disabled', 'value': 1, 'found': 1},
                         {'key': 'kernel.io_uring_group', 'value': 5, 'found': None}])
    assert record['sysctl'] == {} and record['group_additions'] == []


def test_a_record_of_the_first_layout_is_read_into_the_current_one():
    legacy = {'schema_version': 1, 'generator': 'ai_storage.checkpoint_io.io_uring_engine', 'training_user': 'trainer',
              'sysctl': {'io_uring_disabled': 0, 'io_uring_group': -1}, 'io_uring_group': 'io_uring',
              'user_was_in_group': False, 'profile_dir_existed': False}
    record = access_record(legacy)
    assert record == {'schema_version': 2, 'generator': 'ai_storage.checkpoint_io.io_uring_engine',
                      'sysctl': {'io_uring_disabled': 0, 'io_uring_group': -1},
                      'group_additions': [{'user': 'trainer', 'group': 'io_uring'}], 'profile_dir_existed': False}
    member = dict(legacy, user_was_in_group=True)
    assert access_record(member)['group_additions'] == []
    assert access_record(None) == {'schema_version': 2, 'generator': 'ai_storage.checkpoint_io.io_uring_engine',
                                   'sysctl': {}, 'group_additions': []}
