# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared checkpoint_io_* variables: coercion, limits, defaults, and the README's table kept in step."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import SPEC, check_inputs, readme_rows

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


@pytest.mark.parametrize('given, message', [
    ({'checkpoint_io_verify_ranks': 0}, 'checkpoint_io_verify_ranks: 0 is below the minimum 1'),
    ({'checkpoint_io_verify_ranks': 'abc'}, "checkpoint_io_verify_ranks: 'abc' is not an integer (1 to 1024)"),
    ({'checkpoint_io_ranks': 2048}, 'checkpoint_io_ranks: 2048 is above the maximum 1024'),
    ({'checkpoint_io_ranks': 2.5}, 'checkpoint_io_ranks: 2.5 is not an integer (1 to 1024)'),
    ({'checkpoint_io_queue_depth': 'deep'}, "checkpoint_io_queue_depth: 'deep' is not an integer (1 to 65535 or "
                                            "auto)"),
    ({'checkpoint_io_queue_depth': 0}, 'checkpoint_io_queue_depth: 0 is below the minimum 1'),
    ({'checkpoint_io_verify_repeats': 21}, 'checkpoint_io_verify_repeats: 21 is above the maximum 20'),
    ({'checkpoint_io_verify_total_size': '10XB'}, 'checkpoint_io_verify_total_size'),
    ({'checkpoint_io_verify_free_share': 0}, 'checkpoint_io_verify_free_share: 0 is out of range: it must be above '
                                             '0.0 and at most 0.9'),
    # issue 31, finding 13: all the free space can never be written (the filesystem needs room of its own)
    ({'checkpoint_io_verify_free_share': 1.0}, 'checkpoint_io_verify_free_share: 1.0 is out of range: it must be '
                                               'above 0.0 and at most 0.9'),
    ({'checkpoint_io_verify_min_fraction': 'half'}, "checkpoint_io_verify_min_fraction: 'half' is not a number"),
    ({'checkpoint_io_verify_ioengine': 'spdk'}, "checkpoint_io_verify_ioengine: 'spdk' is not one of io_uring, "
                                                "libaio, psync"),
    ({'checkpoint_io_alignment': 'ignore'}, "checkpoint_io_alignment: 'ignore' is not one of fail, warn"),
    ({'checkpoint_io_xfs': 'maybe'}, "checkpoint_io_xfs: 'maybe' is not a boolean"),
    ({'checkpoint_io_verify_dirs': ['relative/dir']}, "checkpoint_io_verify_dirs[0]: 'relative/dir' is not an "
                                                      "absolute path"),
    ({'checkpoint_io_verify_dirs': '/one/dir'}, "checkpoint_io_verify_dirs: '/one/dir' is not a list of absolute "
                                                "paths"),
    ({'checkpoint_io_data_drives': ['DATA0001']}, "checkpoint_io_data_drives: ['DATA0001'] is not a dict"),
    ({'checkpoint_io_report_dir': ''}, "checkpoint_io_report_dir: '' is not a non-empty string"),
    ({'checkpoint_io_serial': []}, 'checkpoint_io_serial: [] is an empty list (hosts 1 to 100000 or 1% to 100%, or a '
                                   'list of them)'),
    ({'checkpoint_io_serial': 'abc'}, "checkpoint_io_serial: 'abc' is not a host count or a percentage"),
    ({'checkpoint_io_serial': [1, '0%']}, "checkpoint_io_serial[1]: '0%' is outside 1% to 100%"),
    ({'checkpoint_io_serial': ['150%']}, "checkpoint_io_serial[0]: '150%' is outside 1% to 100%"),
    ({'checkpoint_io_serial': [0]}, 'checkpoint_io_serial[0]: 0 is below the minimum 1'),
    ({'checkpoint_io_serial': -5}, 'checkpoint_io_serial: -5 is below the minimum 1'),
    ({'checkpoint_io_serial': 2.5}, 'checkpoint_io_serial: 2.5 is not a host count or a percentage'),
    ({'checkpoint_io_serial': True}, 'checkpoint_io_serial: True is not a host count or a percentage'),
    ({'checkpoint_io_max_fail_percentage': 101}, 'checkpoint_io_max_fail_percentage: 101 is above the maximum 100'),
    ({'checkpoint_io_max_fail_percentage': -1}, 'checkpoint_io_max_fail_percentage: -1 is below the minimum 0'),
    ({'checkpoint_io_max_fail_percentage': '25%'}, "checkpoint_io_max_fail_percentage: '25%' is not an integer (0 to "
                                                   "100)"),
])
def test_bad_values_name_the_value_and_the_limit(given, message):
    result = check_inputs(given)
    assert len(result['errors']) == 1 and message in result['errors'][0], result['errors']


def test_defaults_and_coercion():
    values = check_inputs({'checkpoint_io_ranks': '4', 'checkpoint_io_xfs': 'yes', 'checkpoint_io_queue_depth': 'auto',
                           'checkpoint_io_verify_total_size': '1G', 'checkpoint_io_other': 'ignored',
                           'checkpoint_io_verify_poll': '0.5'})
    assert values['errors'] == []
    v = values['values']
    assert v['checkpoint_io_ranks'] == 4 and v['checkpoint_io_verify_ranks'] == 4
    assert v['checkpoint_io_xfs'] is True and v['checkpoint_io_queue_depth'] == 'auto'
    assert v['checkpoint_io_verify_total_size'] == 1024 ** 3 and v['checkpoint_io_verify_poll'] == 0.5
    assert v['checkpoint_io_verify_repeats'] == 3 and v['checkpoint_io_hosts'] == 'checkpoint_nodes'
    assert 'checkpoint_io_other' not in v and set(v) == set(SPEC)


def test_canary_batches_defaults_and_coercion():
    values = check_inputs({})['values']
    assert values['checkpoint_io_serial'] == [1, '10%', '100%']
    assert values['checkpoint_io_max_fail_percentage'] == 50
    # the default is a fresh list each time (a caller's change never reaches the table)
    values['checkpoint_io_serial'].append(7)
    assert SPEC['checkpoint_io_serial'][1] == [1, '10%', '100%']
    values = check_inputs({'checkpoint_io_serial': ['1', ' 25 % ', 100], 'checkpoint_io_max_fail_percentage': '0'})
    assert values['errors'] == []
    assert values['values']['checkpoint_io_serial'] == [1, '25%', 100]
    assert values['values']['checkpoint_io_max_fail_percentage'] == 0
    assert check_inputs({'checkpoint_io_serial': '100%'})['values']['checkpoint_io_serial'] == ['100%']


def test_several_bad_values_are_all_reported():
    errors = check_inputs({'checkpoint_io_ranks': 0, 'checkpoint_io_verify_repeats': 0})['errors']
    assert len(errors) == 2


def test_the_readme_table_lists_every_variable():
    with open(os.path.join(ROOT, 'README.md')) as handle:
        readme = handle.read()
    for name, kind, default, _doc in readme_rows():
        row = '| `%s` | %s | %s |' % (name, kind, '`%s`' % default if default != '-' else '-')
        assert row in readme, row


def test_the_batches_travel_through_one_group_and_come_back_checked():
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import batches_group, run_batches
    default = batches_group(check_inputs({})['values'])
    assert default == 'checkpoint_io_batches__1_10p_100p__f50'
    mine = batches_group(check_inputs({'checkpoint_io_serial': [2, '50%'], 'checkpoint_io_max_fail_percentage': 0})
                         ['values'])
    groups = {'all': [], 'ungrouped': [], mine: ['n1']}
    assert run_batches(groups, 'serial') == [2, '50%'] and run_batches(groups, 'max_fail_percentage') == 0
    # an extra variable wins; hosts that disagree, nothing, or a bad value give the default
    assert run_batches(groups, 'serial', '100%') == ['100%']
    assert run_batches(dict(groups, **{default: ['n2']}), 'serial') == [1, '10%', '100%']
    assert run_batches({}, 'max_fail_percentage') == 50
    assert run_batches({}, 'serial', 'abc') == [1, '10%', '100%']
