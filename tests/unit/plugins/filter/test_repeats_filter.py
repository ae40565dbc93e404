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
