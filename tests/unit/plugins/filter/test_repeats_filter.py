# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""before_after: the verdict the verification and the reports print."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.filter.repeats import FilterModule

before_after = FilterModule().filters()['before_after']


def test_identical_settings_are_reported_as_no_change():
    # The run: the same depth and block size before and after, 0.508 -> 0.552 GiB/s.
    verdict = before_after([0.508], [0.552], True)
    assert verdict['verdict'] == 'no change' and verdict['ratio'] is None


def test_a_real_change_gets_a_ratio_and_its_range():
    verdict = before_after([0.30, 0.31, 0.29], [0.60, 0.62, 0.61])
    assert verdict['verdict'] == 'faster' and verdict['ratio'] == round(0.61 / 0.30, 3)
    assert verdict['ratio_low'] < verdict['ratio'] < verdict['ratio_high']


def test_a_summary_can_stand_for_the_repeats():
    summary = {'median': 1.0, 'min': 0.9, 'max': 1.1, 'n': 3, 'spread': 0.2}
    assert before_after(summary, [1.05, 1.05, 1.05])['verdict'] == 'within noise'


def test_bad_input_names_the_side():
    with pytest.raises(AnsibleFilterError, match=r'before_after: after: no repeats'):
        before_after([1.0], [])


def test_repeats_summary_leaves_out_runs_without_a_value():
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.repeats import repeats_summary
    assert repeats_summary([2.0, None, 4.0, 3.0]) == {'median': 3.0, 'min': 2.0, 'max': 4.0, 'n': 3, 'spread': 0.6667}
    assert repeats_summary([None, None]) is None
    with pytest.raises(AnsibleFilterError, match=r"repeats_summary\[1\]: -1 is not a number >= 0"):
        repeats_summary([1, -1])
    with pytest.raises(AnsibleFilterError, match='is not a list of numbers'):
        repeats_summary(5)


SIDE = {'where': 'directory', 'target': ['/mnt/checkpoints'], 'settings': {'queue_depth': 8, 'block_size': 1048576},
        'block': {'nvme1n1': {'scheduler': 'none', 'nr_requests': 1023}}}


def test_identical_settings_are_reported_as_no_change():
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.repeats import before_after, same_settings
    after = dict(SIDE, settings={'queue_depth': '8', 'block_size': 1048576})  # the ds_config's numbers as text
    assert same_settings(SIDE, after) is True
    verdict = before_after([0.50, 0.52, 0.49], [0.61, 0.60, 0.62], same_settings(SIDE, after))
    assert verdict['verdict'] == 'no change' and verdict['ratio'] is None


@pytest.mark.parametrize('change', [
    {'where': 'drives'},
    {'target': ['/mnt/other']},
    {'settings': {'queue_depth': 16, 'block_size': 1048576}},
    {'settings': {'queue_depth': 8, 'block_size': 262144}},
    {'block': {'nvme1n1': {'scheduler': 'mq-deadline', 'nr_requests': 1023}}},
])
def test_any_difference_is_a_change(change):
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.repeats import same_settings
    assert same_settings(SIDE, dict(SIDE, **change)) is False


def test_same_settings_names_what_is_wrong():
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.repeats import same_settings
    with pytest.raises(AnsibleFilterError, match=r"after.settings.queue_depth: 'auto' is not a number"):
        same_settings(SIDE, dict(SIDE, settings={'queue_depth': 'auto', 'block_size': 1}))
    with pytest.raises(AnsibleFilterError, match='before: None is not'):
        same_settings(None, SIDE)


def test_a_different_writer_buffer_is_a_change_where_deepspeed_wrote_the_after_side():
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.repeats import same_settings
    writer = {'io_buffer_size': 134217728, 'io_buffer_double': True}
    # fio wrote both sides: the writer keys are not part of what it ran with
    assert same_settings(dict(SIDE, settings=dict(SIDE['settings'], writer=writer)), SIDE) is True
    after = dict(SIDE, settings=dict(SIDE['settings'], writer=writer))
    assert same_settings(SIDE, after) is False  # DeepSpeed's defaults before, a tuned buffer after
    assert same_settings(dict(SIDE, settings=dict(SIDE['settings'], writer=dict(writer))), after) is True
    # a settings_before record of an earlier release (no writer) and DeepSpeed's defaults after: the same
    assert same_settings(SIDE, dict(SIDE, settings=dict(SIDE['settings'], writer={}))) is True
