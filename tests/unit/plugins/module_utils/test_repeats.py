# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Medians, spreads, the depth choice within noise and honest before/after verdicts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.repeats import (
    compare,
    median,
    smallest_within_noise,
    summary,
)


def test_median_odd_and_even():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_summary_reports_the_spread_around_the_median():
    assert summary([90, 100, 110]) == {'median': 100, 'min': 90, 'max': 110, 'n': 3, 'spread': 0.2}
    assert summary([0, 0])['spread'] == 0.0


@pytest.mark.parametrize('values, message', [
    ([], 'no repeats'),
    ('100', 'is not a list of numbers'),
    ([1, -2], 'values[1]: -2 is not a number >= 0'),
    ([1, True], 'values[1]: True is not a number >= 0'),
])
def test_bad_repeats_are_named(values, message):
    with pytest.raises(ValueError, match=message.replace('[', r'\[').replace(']', r'\]')):
        summary(values)


def curve(*medians_and_spreads):
    """Points at depths 1, 2, 4, ... with three repeats around each median."""
    points = []
    for index, (mid, spread) in enumerate(medians_and_spreads):
        half = mid * spread / 2
        points.append({'depth': 2 ** index, 'bw': [mid - half, mid, mid + half]})
    return points


def test_the_knee_is_the_smallest_depth_within_noise_of_the_best():
    # Little's Law to depth 8, then a plateau within 3%: 8 is chosen, not the best point (16).
    choice = smallest_within_noise(curve((40, 0.02), (80, 0.02), (160, 0.02), (300, 0.02), (309, 0.02)))
    assert choice['depth'] == 8 and choice['best_depth'] == 16
    assert choice['noise'] == 0.05  # the floor: the repeats agreed better than a drive varies
    assert [p['depth'] for p in choice['points']] == [1, 2, 4, 8, 16]


def test_noisy_repeats_widen_what_counts_as_the_same():
    # At 8 the median is 12% below the best but its repeats spread 20%: it is not told apart from the best.
    choice = smallest_within_noise(curve((40, 0.02), (80, 0.02), (160, 0.02), (264, 0.2), (300, 0.02)))
    assert choice['depth'] == 8 and choice['noise'] == 0.2


def test_a_point_clearly_below_the_best_is_not_chosen():
    choice = smallest_within_noise(curve((40, 0.02), (80, 0.02), (160, 0.02), (250, 0.02), (300, 0.02)))
    assert choice['depth'] == 16


def test_order_of_points_does_not_matter():
    points = curve((40, 0.02), (80, 0.02), (160, 0.02), (300, 0.02))
    assert smallest_within_noise(list(reversed(points)))['depth'] == 8


@pytest.mark.parametrize('points, message', [
    ([], 'is not a non-empty list'),
    ([{'depth': 0, 'bw': [1]}], 'depth: 0 is not a depth >= 1'),
    ([{'depth': 1, 'bw': [1]}, {'depth': 1, 'bw': [2]}], 'depth 1 is listed twice'),
    ([{'depth': 1}], 'is not {depth, bw: \\[repeats\\]}'),
    ([{'depth': 1, 'bw': [0, 0]}], 'every median is 0'),
])
def test_bad_curves_are_refused(points, message):
    with pytest.raises(ValueError, match=message):
        smallest_within_noise(points)


def test_identical_settings_are_no_change_whatever_the_numbers():
    result = compare([0.50, 0.51, 0.52], [0.55, 0.55, 0.56], same_settings=True)
    assert result['verdict'] == 'no change' and result['ratio'] is None
    assert result['before']['median'] == 0.51 and result['after']['median'] == 0.55


def test_a_gain_beyond_the_noise_is_faster_with_its_range():
    result = compare([100, 102, 98], [160, 158, 162])
    assert result['verdict'] == 'faster' and result['ratio'] == round(160 / 100.0, 3)
    assert result['ratio_low'] == round(158 / 102.0, 3) and result['ratio_high'] == round(162 / 98.0, 3)


def test_a_difference_inside_the_spread_is_within_noise():
    # The case: 0.508 -> 0.552 GiB/s (+9%) with repeats spreading 12%.
    result = compare([0.48, 0.508, 0.54], [0.52, 0.552, 0.585])
    assert result['verdict'] == 'within noise' and result['ratio'] == round(0.552 / 0.508, 3)


def test_a_loss_beyond_the_noise_is_slower():
    assert compare([100, 100, 101], [80, 81, 80])['verdict'] == 'slower'


def test_nothing_measured_before_is_said():
    assert compare([0, 0], [1, 1])['verdict'] == 'not measured'
