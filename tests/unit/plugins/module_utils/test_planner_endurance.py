# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The planner's endurance figures (module_utils/fleet/planner.py): the bytes each drive writes per checkpoint and
per day, against a rating in TBW or DWPD, computed by hand here; bad ratings refused with the value."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import planner

GIB = 1024 ** 3
TB = 1000 ** 4


def test_a_tbw_rating_and_a_given_interval():
    # llama3-70b: 912 GiB over 8 nodes = 114 GiB a node, over 4 installed drives = 28.5 GiB a drive a checkpoint;
    # one checkpoint an hour: 24 a day = 684 GiB a drive a day; 7,008 TBW
    p = planner.plan('llama3-70b', 8, 60, 2048, 2, drives_per_node=4, drive_tbw=7008, interval_s=3600)
    wear = p['endurance']
    assert wear['rated_bytes_per_drive'] == 7008 * TB and wear['rated_from'] == 'tbw'
    assert wear['bytes_per_drive_per_checkpoint'] == 28.5 * GIB
    assert wear['checkpoints_per_day'] == 24 and wear['bytes_per_drive_per_day'] == 684 * GIB
    assert wear['life_share_per_day'] == pytest.approx(684 * GIB / (7008.0 * TB))
    assert wear['years_to_rated_life'] == pytest.approx(7008.0 * TB / (684 * GIB) / 365)
    assert wear['interval_from'] == 'given' and wear['drive_writes_per_day'] is None
    assert 'TB a day of checkpoints' in planner.plan_line(p)


def test_a_dwpd_rating_and_the_young_daly_interval():
    p = planner.plan('llama3-8b', 8, 60, 2048, 2, nodes=1, drive_dwpd=1, drive_capacity=3840 * 10 ** 9,
                     warranty_years=5, mtbf_hours=20000)
    wear = p['endurance']
    assert wear['rated_bytes_per_drive'] == 3840 * 10 ** 9 * 365 * 5 and wear['rated_from'] == 'dwpd'
    assert wear['interval_from'] == 'young_daly' and wear['interval_s'] == p['after']['interval_s']
    assert wear['drive_writes_per_day'] == pytest.approx(wear['bytes_per_drive_per_day'] / (3840 * 10 ** 9))
    drives = p['drives_per_node_needed']
    assert wear['bytes_per_drive_per_checkpoint'] == 105 * GIB / float(drives)


def test_without_an_interval_only_the_checkpoint_is_counted():
    wear = planner.plan('llama3-8b', 8, 60, 2048, 2, drive_tbw=1000)['endurance']
    assert wear['bytes_per_drive_per_checkpoint'] > 0 and wear['bytes_per_drive_per_day'] is None
    assert wear['interval_from'] is None and wear['years_to_rated_life'] is None
    assert planner.plan('llama3-8b', 8, 60, 2048, 2)['endurance'] is None


@pytest.mark.parametrize('kwargs, message', [
    (dict(drive_tbw=0), 'drive_tbw: 0 must be > 0'),
    (dict(drive_tbw='x'), "drive_tbw: 'x' is not a number"),
    (dict(drive_tbw=10, drive_dwpd=1), 'give one rating, not both'),
    (dict(drive_dwpd=1), 'needs drive_capacity'),
    (dict(drive_dwpd=1, drive_capacity=0), 'drive_capacity: 0 is not a size'),
    (dict(drive_dwpd=1, drive_capacity='1T', warranty_years=-1), 'warranty_years: -1 must be > 0'),
    (dict(drive_tbw=10, interval_s=0), 'interval_s: 0 must be > 0'),
])
def test_bad_ratings_are_refused_with_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        planner.plan('llama3-8b', 8, 60, 2048, 2, **kwargs)


def test_the_fleet_reports_plan_carries_the_endurance():
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report
    plan = fleet_report.fleet_plan({'checkpoint': 'llama3-70b', 'ranks_per_node': 8, 'window_s': 60,
                                    'mtbf_hours': 20000, 'drive_tbw': 7008}, [2048.0], [2.0], 0.9, 1.8)
    assert plan['endurance']['rated_from'] == 'tbw' and plan['endurance']['interval_from'] == 'young_daly'
    assert 'of its rated life a year' in plan['line']
