# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a sustained checkpoint-shaped write says about each drive's heat: per-interval bandwidth, latency and
effective depth from the kernel's block counters, the drive's own thermal evidence (temperatures against its
WCTEMP/CCTEMP, the SMART thermal counters, critical-warning bits), a verdict per drive with that evidence, and the
per-rank depth to back off to where a drive throttles. Pure functions: the samples come from
``drive_sampler.py`` (through the checkpoint_write module), the verdicts go to the thermal_validate role.

Verdicts, worst first:
  - ``critical``: the composite reached CCTEMP, ``critical_comp_time`` moved, or a critical-warning bit other than
    temperature (spare, reliability, read-only, volatile backup, PMR) is set;
  - ``throttling``: thermal management acted - a TMT transition count or total time moved, ``warning_temp_time``
    moved, critical-warning bit 1 (temperature) was set, the composite reached WCTEMP, or the bandwidth fell by
    more than ``drop_fraction`` while the composite rose by at least ``rise_c`` to within ``approach_margin_c``
    of WCTEMP;
  - ``hot``: within ``hot_margin_c`` of WCTEMP, no throttling seen yet;
  - ``ok``. A bandwidth drop without thermal evidence keeps ``ok`` and is reported as not thermal (an SLC cache
    filling, a ceiling outside the drive's thermal control), never as throttling.
Every threshold is relative to the drive's own WCTEMP/CCTEMP (Identify Controller), never a fixed Celsius value.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

VERDICTS = ('ok', 'hot', 'throttling', 'critical')
FAILING = ('throttling', 'critical')
COUNTERS = ('warning_temp_time_min', 'critical_comp_time_min', 'thm_temp1_trans_count', 'thm_temp2_trans_count',
            'thm_temp1_total_time_s', 'thm_temp2_total_time_s')
TMT_COUNTERS = ('thm_temp1_trans_count', 'thm_temp2_trans_count', 'thm_temp1_total_time_s',
                'thm_temp2_total_time_s')
CRITICAL_BITS = ('available_spare', 'reliability_degraded', 'read_only', 'volatile_backup_failed', 'pmr_read_only')
SECTOR = 512
MIB = 1024.0 * 1024.0

# name -> (low, high, low_open, high_open, what): the policy values and their limits (the role's variables are
# thermal_validate_<name>).
POLICY_LIMITS = {
    'duration': (1, 86400, False, False, 'seconds of sustained write'),
    'interval': (0.2, 3600, False, False, 'seconds between two samples'),
    'hot_margin_c': (0, 50, False, False, 'degrees below WCTEMP that count as hot'),
    'approach_margin_c': (0, 100, False, False, 'degrees below WCTEMP a rising drive must reach for a bandwidth '
                                                'drop to count as thermal'),
    'rise_c': (0, 50, False, False, 'degrees the composite must rise for a bandwidth drop to count as thermal'),
    'drop_fraction': (0, 1, True, True, 'fraction the bandwidth must fall by to count as a drop'),
}
DEFAULT_POLICY = {'duration': 120, 'interval': 1, 'hot_margin_c': 5, 'approach_margin_c': 15, 'rise_c': 3,
                  'drop_fraction': 0.2}


def _number(value):
    if isinstance(value, bool):
        raise ValueError('a boolean')
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        number = float(str(value).strip())
    if math.isnan(number) or math.isinf(number):
        raise ValueError('not finite')
    return number


def policy_errors(values, prefix='thermal_validate_'):
    """Messages for policy values out of their limits, each naming the variable, the value and the limit ([] when
    all hold). ``values``: {name: value} with the names of :data:`POLICY_LIMITS` (missing ones take the default)."""
    errors = []
    checked = {}
    for name in sorted(POLICY_LIMITS):
        low, high, low_open, high_open, what = POLICY_LIMITS[name]
        value = values.get(name, DEFAULT_POLICY[name])
        try:
            number = _number(value)
        except (TypeError, ValueError):
            errors.append('%s%s: %r is not a number (%s)' % (prefix, name, value, what))
            continue
        below = number <= low if low_open else number < low
        above = number >= high if high_open else number > high
        if below or above:
            errors.append('%s%s: %s is out of range %s%s..%s%s (%s)' % (
                prefix, name, value, '(' if low_open else '[', low, high, ')' if high_open else ']', what))
            continue
        checked[name] = number
    if 'interval' in checked and 'duration' in checked and checked['interval'] > checked['duration']:
        errors.append('%sinterval: %s s is longer than %sduration %s s (a write needs at least one interval)'
                      % (prefix, values.get('interval'), prefix, values.get('duration')))
    if 'duration' in checked and checked['duration'] != int(checked['duration']):
        errors.append('%sduration: %s is not a whole number of seconds' % (prefix, values.get('duration')))
    if ('hot_margin_c' in checked and 'approach_margin_c' in checked
            and checked['approach_margin_c'] < checked['hot_margin_c']):
        errors.append('%sapproach_margin_c: %s is below %shot_margin_c %s (a drive is hot before it approaches)'
                      % (prefix, values.get('approach_margin_c'), prefix, values.get('hot_margin_c')))
    return errors


def policy(values=None):
    """The policy with defaults filled in, as numbers; ValueError with every problem when one is out of range."""
    values = dict(values or {})
    errors = policy_errors(values)
    if errors:
        raise ValueError('; '.join(errors))
    merged = dict(DEFAULT_POLICY)
    merged.update(dict((key, _number(value)) for key, value in values.items() if key in POLICY_LIMITS))
    return merged


def _median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2.0


def _delta(first, last, key):
    a, b = first.get(key), last.get(key)
    if a is None or b is None:
        return None
    return b - a


def intervals(samples, name):
    """One drive's intervals between consecutive samples: [{t, seconds, bw_bytes, write_ios, latency_ms,
    effective_depth_bytes, temp_c}] (``latency_ms`` = the interval's write ticks / write completions, the kernel's
    mean per NVMe command; ``effective_depth_bytes`` = Little's Law, bandwidth x latency)."""
    out = []
    points = [(s.get('t'), (s.get('drives') or {}).get(name)) for s in samples]
    points = [(t, d) for t, d in points if t is not None and isinstance(d, dict)]
    for (t0, a), (t1, b) in zip(points, points[1:]):
        seconds = t1 - t0
        sectors = _delta(a, b, 'sectors_written')
        if seconds <= 0 or sectors is None or sectors < 0:
            continue
        ios = _delta(a, b, 'write_ios')
        ticks = _delta(a, b, 'write_ticks_ms')
        bw = sectors * SECTOR / seconds
        latency = (float(ticks) / ios) if ios and ticks is not None and ticks >= 0 else None
        out.append({'t': round(t1, 3), 'seconds': round(seconds, 3), 'bw_bytes': int(bw), 'write_ios': ios,
                    'latency_ms': None if latency is None else round(latency, 3),
                    'effective_depth_bytes': None if latency is None else int(bw * latency / 1000.0),
                    'temp_c': b.get('temp_c')})
    return out


def full_intervals(series):
    """The intervals the write filled: those with bytes written, less the first and the last (fio starting, the
    final fsync: partial intervals) when at least three remain."""
    active = [i for i in series if i['bw_bytes'] > 0]
    return active[1:-1] if len(active) >= 5 else active


def _phases(series):
    """(early, late) medians of the bandwidth: the first and the last third of the full intervals."""
    values = [i['bw_bytes'] for i in full_intervals(series)]
    if not values:
        return None, None
    third = max(1, len(values) // 3)
    return _median(values[:third]), _median(values[-third:])


def _bits_seen(samples, name):
    """{bit name: first t it was set} over the samples of one drive."""
    seen = {}
    for sample in samples:
        drive = (sample.get('drives') or {}).get(name) or {}
        for bit, value in sorted((drive.get('critical_warning_bits') or {}).items()):
            if value and bit not in seen:
                seen[bit] = sample.get('t')
    return seen


def drive_verdict(name, info, samples, pol):
    """The verdict of one drive with its evidence (see the module's doc)."""
    info = info or {}
    series = intervals(samples, name)
    own = [(s.get('drives') or {}).get(name) for s in samples]
    own = [d for d in own if isinstance(d, dict)]
    first, last = (own[0], own[-1]) if own else ({}, {})
    temps = [d.get('temp_c') for d in own if d.get('temp_c') is not None]
    start_temp = temps[0] if temps else None
    peak = max(temps) if temps else None
    wctemp = info.get('wctemp_c') or None  # 0 means "not reported" in Identify Controller
    cctemp = info.get('cctemp_c') or None
    deltas = dict((key, _delta(first, last, key)) for key in COUNTERS)
    bits = _bits_seen(samples, name)
    early, late = _phases(series)
    drop = (1.0 - float(late) / early) if early and late is not None else None
    rise = (peak - start_temp) if peak is not None and start_temp is not None else None

    thermal = []  # what says thermal management acted
    critical = []
    hot = []
    if cctemp is not None and peak is not None and peak >= cctemp:
        critical.append('composite %s C reached CCTEMP %s C' % (peak, cctemp))
    if (deltas['critical_comp_time_min'] or 0) > 0:
        critical.append('critical_comp_time_min +%s' % deltas['critical_comp_time_min'])
    for bit in CRITICAL_BITS:
        if bit in bits:
            critical.append('critical_warning %s set (at %s s)' % (bit, bits[bit]))
    for key in TMT_COUNTERS:
        if (deltas[key] or 0) > 0:
            thermal.append('%s +%s' % (key, deltas[key]))
    if (deltas['warning_temp_time_min'] or 0) > 0:
        thermal.append('warning_temp_time_min +%s' % deltas['warning_temp_time_min'])
    if 'temperature_threshold' in bits:
        thermal.append('critical_warning temperature bit set (at %s s)' % bits['temperature_threshold'])
    if wctemp is not None and peak is not None and peak >= wctemp:
        thermal.append('composite %s C reached WCTEMP %s C' % (peak, wctemp))
    dropped = drop is not None and drop > pol['drop_fraction']
    if (dropped and rise is not None and rise >= pol['rise_c'] and wctemp is not None
            and peak >= wctemp - pol['approach_margin_c']):
        thermal.append('bandwidth fell %d%% while the composite rose %s C to %s C (WCTEMP %s C)'
                       % (round(drop * 100), round(rise, 1), peak, wctemp))
    if wctemp is not None and peak is not None and peak >= wctemp - pol['hot_margin_c']:
        hot.append('composite %s C within %s C of WCTEMP %s C' % (peak, pol['hot_margin_c'], wctemp))

    if critical:
        verdict, evidence = 'critical', critical + thermal
    elif thermal:
        verdict, evidence = 'throttling', thermal
    elif hot:
        verdict, evidence = 'hot', hot
    else:
        verdict, evidence = 'ok', []
    not_thermal = None
    if dropped and verdict not in FAILING:
        not_thermal = ('bandwidth fell %d%% (%.1f -> %.1f MiB/s) with no thermal evidence (composite %s, counters '
                       'unchanged, no temperature warning): a cache phase or a ceiling outside the drive\'s '
                       'thermal control, not heat' % (round(drop * 100), early / MIB, late / MIB,
                                                      'unchanged' if not rise else '%+.1f C' % rise))
    full = full_intervals(series)
    latencies = [i['latency_ms'] for i in full if i['latency_ms']]
    return {
        'name': name, 'serial': info.get('serial'), 'controller': info.get('controller'), 'verdict': verdict,
        'evidence': evidence, 'not_thermal_drop': not_thermal,
        'start_temp_c': start_temp, 'peak_temp_c': peak, 'wctemp_c': wctemp, 'cctemp_c': cctemp,
        'temp_source': last.get('temp_source'), 'counter_deltas': deltas, 'warning_bits_seen': bits,
        'bw_first_bytes': full[0]['bw_bytes'] if full else None,
        'bw_last_bytes': full[-1]['bw_bytes'] if full else None,
        'bw_early_bytes': None if early is None else int(early), 'bw_late_bytes': None if late is None else int(late),
        'bw_drop_fraction': None if drop is None else round(drop, 3),
        'latency_min_ms': min(latencies) if latencies else None,
        'intervals': len(series), 'sample_errors': sorted(set(d.get('error') for d in own if d.get('error'))),
    }


def backoff(drives, ranks, queue_depth, block_size, member_count):
    """The per-rank depth that still reaches each throttling drive's throttled bandwidth (Little's Law on the
    measured latency): per drive ``ceil(late bandwidth x least interval latency / block size)`` requests in flight,
    spread back over the ranks (every rank's writes stripe over the ``member_count`` drives), never above
    ``queue_depth``. {per_rank_depth, from_depth, drives: [...], reason} or None when no drive throttles."""
    hot = [d for d in drives if d['verdict'] in FAILING]
    if not hot:
        return None
    needs = []
    for drive in hot:
        if drive['bw_late_bytes'] is None or drive['latency_min_ms'] is None:
            needs.append({'name': drive['name'], 'serial': drive['serial'], 'depth': None,
                          'why': 'no bandwidth or latency measured: the depth is kept'})
            continue
        in_flight = drive['bw_late_bytes'] * drive['latency_min_ms'] / 1000.0 / block_size
        needs.append({'name': drive['name'], 'serial': drive['serial'], 'depth': max(1, int(math.ceil(in_flight))),
                      'why': '%.1f MiB/s throttled x %.1f ms least latency / %d KiB = %.2f in flight' % (
                          drive['bw_late_bytes'] / MIB, drive['latency_min_ms'], block_size // 1024, in_flight)})
    known = [n['depth'] for n in needs if n['depth'] is not None]
    if not known:
        depth = queue_depth
    else:
        depth = int(math.ceil(max(known) * max(1, member_count) / float(max(1, ranks))))
        depth = max(1, min(queue_depth, depth))
    reason = ('%s throttled: per-rank depth %d -> %d (%d ranks over %d drives)'
              % (', '.join('%s (%s)' % (d['name'], d['serial']) for d in hot), queue_depth, depth, ranks,
                 member_count) if depth < queue_depth else
              '%s throttled, and its throttled bandwidth still needs per-rank depth %d: no lower depth helps; add '
              'cooling' % (', '.join(d['name'] for d in hot), queue_depth))
    return {'per_rank_depth': depth, 'from_depth': queue_depth, 'drives': needs, 'reason': reason}


def evaluate(write, info, pol, ranks, queue_depth, block_size):
    """The validation of one sustained write: {verdict (the worst), drives: [drive_verdict], backoff}.
    ``write``: the checkpoint_write result with ``samples``; ``info``: {name: {serial, controller, wctemp_c,
    cctemp_c, ...}} (``sampled_drives``)."""
    pol = policy(pol)
    samples = write.get('samples') or []
    names = sorted(info or {})
    drives = [drive_verdict(name, info[name], samples, pol) for name in names]
    worst = max([VERDICTS.index(d['verdict']) for d in drives] or [0])
    return {'verdict': VERDICTS[worst], 'drives': drives,
            'backoff': backoff(drives, int(ranks), int(queue_depth), int(block_size), len(drives)),
            'samples': len(samples)}


def drive_line(drive, backoff_doc=None):
    """One summary line per drive: verdict, peak temperature against WCTEMP, counter deltas, bandwidth of the first
    and the last full interval, and the depth it backed off to."""
    deltas = drive.get('counter_deltas') or {}

    def delta(key):
        value = deltas.get(key)
        return 'n/a' if value is None else '%+d' % value

    def mib(value):
        return 'n/a' if value is None else '%.1f' % (value / MIB)

    line = '%s (%s): %s - peak %s C / WCTEMP %s C, warning_temp_time %s min, critical_comp_time %s min, ' \
           'TMT1 %s, TMT2 %s; bandwidth first %s, last %s MiB/s' % (
               drive.get('name'), drive.get('serial'), drive.get('verdict'), drive.get('peak_temp_c'),
               drive.get('wctemp_c'), delta('warning_temp_time_min'), delta('critical_comp_time_min'),
               delta('thm_temp1_trans_count'), delta('thm_temp2_trans_count'), mib(drive.get('bw_first_bytes')),
               mib(drive.get('bw_last_bytes')))
    if drive.get('evidence'):
        line += '; ' + '; '.join(drive['evidence'])
    if drive.get('not_thermal_drop'):
        line += '; ' + drive['not_thermal_drop']
    mine = [n for n in (backoff_doc or {}).get('drives') or [] if n.get('name') == drive.get('name')]
    if mine:
        line += '; back-off: per-rank depth %s -> %s' % (backoff_doc['from_depth'], backoff_doc['per_rank_depth'])
    return line


def record_data(report, apply_backoff, ranks, queue_depth, block_size):
    """What the state store's ``thermal`` record keeps of one validation: the verdicts by drive and the back-off
    (``apply``: whether deepspeed_config and the verification use it). Only what a second identical validation
    gives again (no temperatures or bandwidths: those are in the time series), so a repeated cool run changes
    nothing."""
    backoff = report.get('backoff')
    if backoff is not None:
        backoff = {'per_rank_depth': backoff['per_rank_depth'], 'from_depth': backoff['from_depth'],
                   'reason': backoff['reason'], 'apply': bool(apply_backoff),
                   'drives': sorted(d['serial'] or d['name'] for d in backoff['drives'])}
    return {'verdict': report['verdict'], 'ranks': int(ranks), 'queue_depth': int(queue_depth),
            'block_size': int(block_size), 'backoff': backoff,
            'drives': dict((d['serial'] or d['name'], {'name': d['name'], 'verdict': d['verdict']})
                           for d in report['drives'])}


def progress_line(drives):
    """The progress of a sampled write in one line: ``nvme1n1 70.1 MiB/s 49.9 C, ...`` (a critical warning named)."""
    parts = []
    for name in sorted(drives or {}):
        drive = drives[name] or {}
        bw = drive.get('bw_bytes')
        part = '%s %s MiB/s %s C' % (name, 'n/a' if bw is None else '%.1f' % (bw / MIB), drive.get('temp_c'))
        if drive.get('critical_warning'):
            part += ' critical_warning %s' % drive['critical_warning']
        parts.append(part)
    return ', '.join(parts) or 'no drive sampled yet'
