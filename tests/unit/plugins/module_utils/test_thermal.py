# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The thermal verdicts, the back-off and the thermal record (module_utils/thermal/thermal.py, records.thermal_depth) on
sample series shaped like the sampler's (drive_sampler.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import records
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.thermal import thermal

MIB = 1024 * 1024
BLOCK = MIB


def series(bws, temps=None, latency_ms=10.0, counters=None, bits=None, name='nvme1n1', start=None):
    """Samples of one drive: bandwidth per 1 s interval (bytes/s), composite temperature per sample, counters
    per sample ({key: [values]}), critical-warning bits per sample ([{bit: bool}])."""
    temps = temps or [40.0] * (len(bws) + 1)
    samples = []
    sectors = 0
    ios = 0
    ticks = 0
    for i in range(len(bws) + 1):
        if i:
            sectors += bws[i - 1] // 512
            done = max(1, bws[i - 1] // (512 * 1024))
            ios += done
            ticks += int(done * latency_ms)
        drive = {'sectors_written': sectors, 'write_ios': ios, 'write_ticks_ms': ticks, 'inflight_writes': 4,
                 'temp_c': temps[i], 'temp_source': 'hwmon', 'critical_warning': 0,
                 'critical_warning_bits': dict((bits[i] if bits else {})),
                 'warning_temp_time_min': 0, 'critical_comp_time_min': 0, 'thm_temp1_trans_count': 0,
                 'thm_temp2_trans_count': 0, 'thm_temp1_total_time_s': 0, 'thm_temp2_total_time_s': 0, 'error': None}
        for key, values in (counters or {}).items():
            drive[key] = values[i]
        samples.append({'t': float(i), 'drives': {name: drive}})
    return samples


INFO = {'nvme1n1': {'controller': 'nvme1', 'serial': 'S1', 'wctemp_c': 70, 'cctemp_c': 80}}


def evaluate(samples, info=None, pol=None, ranks=2, depth=8):
    return thermal.evaluate({'samples': samples}, info or INFO, pol or {}, ranks, depth, BLOCK)


def test_a_cool_steady_drive_is_ok_and_backs_off_nothing():
    report = evaluate(series([100 * MIB] * 9))
    drive = report['drives'][0]
    assert report['verdict'] == 'ok' and drive['verdict'] == 'ok'
    assert drive['evidence'] == [] and drive['not_thermal_drop'] is None
    assert report['backoff'] is None
    assert drive['bw_first_bytes'] == 100 * MIB and drive['bw_last_bytes'] == 100 * MIB
    assert drive['latency_min_ms'] == pytest.approx(10.0, rel=0.05)


def test_the_temperature_warning_bit_is_throttling_and_backs_off_by_littles_law():
    bws = [140 * MIB] * 3 + [20 * MIB] * 6
    bits = [{}] * 3 + [{'temperature_threshold': True}] * 7
    report = evaluate(series(bws, bits=bits, latency_ms=100.0), ranks=2, depth=8)
    drive = report['drives'][0]
    assert drive['verdict'] == 'throttling'
    assert any('temperature bit' in line for line in drive['evidence'])
    assert drive['warning_bits_seen'] == {'temperature_threshold': 3.0}
    # 20 MiB/s x 0.1 s / 1 MiB = 2 in flight on the drive; 2 ranks over 1 drive: 1 per rank
    backoff = report['backoff']
    assert backoff['per_rank_depth'] == 1 and backoff['from_depth'] == 8
    assert '2.00 in flight' in backoff['drives'][0]['why']
    assert 'per-rank depth 8 -> 1' in backoff['reason']
    assert 'back-off: per-rank depth 8 -> 1' in thermal.drive_line(drive, backoff)


def test_moved_tmt_counters_and_warning_time_are_throttling():
    for key in ('thm_temp1_trans_count', 'thm_temp2_total_time_s', 'warning_temp_time_min'):
        values = [0] * 5 + [1] * 5
        report = evaluate(series([100 * MIB] * 9, counters={key: values}))
        assert report['drives'][0]['verdict'] == 'throttling', key
        assert any(key in line for line in report['drives'][0]['evidence'])
        assert report['drives'][0]['counter_deltas'][key] == 1


def test_a_drop_without_thermal_evidence_is_not_throttling():
    report = evaluate(series([150 * MIB] * 3 + [40 * MIB] * 6))
    drive = report['drives'][0]
    assert drive['verdict'] == 'ok'
    assert 'not heat' in drive['not_thermal_drop'] and 'no thermal evidence' in drive['not_thermal_drop']
    assert report['backoff'] is None


def test_a_drop_while_rising_toward_wctemp_is_throttling_and_far_below_it_is_not():
    bws = [150 * MIB] * 3 + [40 * MIB] * 6
    near = [50.0, 52, 54, 56, 58, 59, 60, 60, 60, 60]  # +10 C, peak 60 = WCTEMP 70 - 10, inside the 15 C approach
    assert evaluate(series(bws, temps=near))['drives'][0]['verdict'] == 'throttling'
    far = [t - 20 for t in near]  # the same rise ending at 40 C: 30 C below WCTEMP
    drive = evaluate(series(bws, temps=far))['drives'][0]
    assert drive['verdict'] == 'ok' and drive['not_thermal_drop']


def test_hot_and_critical_are_relative_to_the_drive_own_thresholds():
    temps = [66.0] * 10
    assert evaluate(series([100 * MIB] * 9, temps=temps))['drives'][0]['verdict'] == 'hot'
    cooler = {'nvme1n1': dict(INFO['nvme1n1'], wctemp_c=85, cctemp_c=95)}
    assert evaluate(series([100 * MIB] * 9, temps=temps), info=cooler)['drives'][0]['verdict'] == 'ok'
    assert evaluate(series([100 * MIB] * 9, temps=[81.0] * 10))['drives'][0]['verdict'] == 'critical'
    bits = [{}] * 5 + [{'available_spare': True}] * 5
    assert evaluate(series([100 * MIB] * 9, bits=bits))['drives'][0]['verdict'] == 'critical'
    comp = {'critical_comp_time_min': [0] * 5 + [2] * 5}
    assert evaluate(series([100 * MIB] * 9, counters=comp))['drives'][0]['verdict'] == 'critical'


def test_a_drive_without_wctemp_is_judged_by_counters_and_bits_only():
    info = {'nvme1n1': dict(INFO['nvme1n1'], wctemp_c=0, cctemp_c=0)}
    drive = evaluate(series([100 * MIB] * 9, temps=[99.0] * 10), info=info)['drives'][0]
    assert drive['verdict'] == 'ok' and drive['wctemp_c'] is None


def test_the_back_off_spreads_over_ranks_and_drives_and_never_raises():
    a = series([140 * MIB] * 3 + [60 * MIB] * 6, latency_ms=50.0, bits=[{}] * 3 + [{'temperature_threshold': True}] * 7)
    b = series([140 * MIB] * 9, latency_ms=50.0, name='nvme2n1')
    for sample, other in zip(a, b):
        sample['drives'].update(other['drives'])
    info = dict(INFO, nvme2n1={'controller': 'nvme2', 'serial': 'S2', 'wctemp_c': 70, 'cctemp_c': 80})
    report = evaluate(a, info=info, ranks=4, depth=8)
    assert [d['verdict'] for d in report['drives']] == ['throttling', 'ok']
    # 60 MiB/s x 50 ms = 3 in flight per drive; 4 ranks over 2 drives: ceil(3 x 2 / 4) = 2 per rank
    assert report['backoff']['per_rank_depth'] == 2 and report['verdict'] == 'throttling'
    assert report['backoff']['drives'][0]['serial'] == 'S1'
    low = evaluate(a, info=info, ranks=4, depth=1)
    assert low['backoff']['per_rank_depth'] == 1 and 'add cooling' in low['backoff']['reason']


def test_policy_values_out_of_range_are_refused_naming_value_and_limit():
    errors = thermal.policy_errors({'duration': 0, 'interval': 5, 'hot_margin_c': 60, 'drop_fraction': 1})
    text = ' | '.join(errors)
    assert 'thermal_validate_duration: 0 is out of range [1..86400]' in text
    assert 'thermal_validate_hot_margin_c: 60 is out of range [0..50]' in text
    assert 'thermal_validate_drop_fraction: 1 is out of range (0..1)' in text
    assert thermal.policy_errors({'duration': 5, 'interval': 10}) == [
        'thermal_validate_interval: 10 s is longer than thermal_validate_duration 5 s (a write needs at least one '
        'interval)']
    assert 'below thermal_validate_hot_margin_c' in ' '.join(
        thermal.policy_errors({'hot_margin_c': 10, 'approach_margin_c': 5}))
    assert 'not a number' in ' '.join(thermal.policy_errors({'rise_c': 'nan'}))
    assert 'not a whole number' in ' '.join(thermal.policy_errors({'duration': 2.5}))
    assert thermal.policy_errors({}) == []
    with pytest.raises(ValueError):
        thermal.policy({'duration': -1})


def test_the_record_keeps_verdicts_and_back_off_only_and_thermal_depth_applies_it():
    bits = [{}] * 3 + [{'temperature_threshold': True}] * 7
    report = evaluate(series([140 * MIB] * 3 + [20 * MIB] * 6, bits=bits, latency_ms=100.0), ranks=2, depth=8)
    data = thermal.record_data(report, True, 2, 8, BLOCK)
    assert data['drives'] == {'S1': {'name': 'nvme1n1', 'verdict': 'throttling'}}
    assert data['backoff']['apply'] is True and data['backoff']['per_rank_depth'] == 1
    again = evaluate(series([140 * MIB] * 3 + [20 * MIB] * 6, bits=bits, latency_ms=100.0), ranks=2, depth=8)
    assert thermal.record_data(again, True, 2, 8, BLOCK) == data
    facts = {'state': {'records': {'thermal': data}}}
    assert records.thermal_depth(facts, 8)['queue_depth'] == 1
    assert 'kept at 1' in records.thermal_depth(facts, 8)['note']
    assert records.thermal_depth(facts, 1) == {'queue_depth': 1, 'asked': 1, 'backoff': data['backoff'], 'note': None}
    off = dict(data, backoff=dict(data['backoff'], apply=False))
    assert records.thermal_depth({'state': {'records': {'thermal': off}}}, 8)['queue_depth'] == 8
    cool = thermal.record_data(evaluate(series([100 * MIB] * 9)), True, 2, 8, BLOCK)
    assert records.thermal_depth({'state': {'records': {'thermal': cool}}}, 8)['queue_depth'] == 8
    assert records.thermal_depth({}, 8)['queue_depth'] == 8
    bad = dict(data, backoff=dict(data['backoff'], per_rank_depth=0))
    with pytest.raises(ValueError):
        records.thermal_depth({'state': {'records': {'thermal': bad}}}, 8)


def test_intervals_skip_bad_points_and_progress_line_names_warnings():
    samples = series([100 * MIB] * 3)
    samples[2]['drives']['nvme1n1']['sectors_written'] = None
    assert len(thermal.intervals(samples, 'nvme1n1')) == 1
    assert thermal.intervals(samples, 'nvme9n9') == []
    line = thermal.progress_line({'nvme1n1': {'bw_bytes': 10 * MIB, 'temp_c': 50.0, 'critical_warning': 2},
                                  'nvme2n1': {'bw_bytes': None, 'temp_c': None}})
    assert line == 'nvme1n1 10.0 MiB/s 50.0 C critical_warning 2, nvme2n1 n/a MiB/s None C'
    assert thermal.progress_line({}) == 'no drive sampled yet'
