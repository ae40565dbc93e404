# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Repeated measurements and what may honestly be said about them (pure functions).

A bandwidth measured once says little on a shared machine or a drive with a write cache: every figure the
collection reports is the median of repeats with their spread beside it, a choice between depths counts a
difference only beyond the measured noise, and a before/after with the same settings is "no change", not a ratio.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Below this relative spread two medians are not told apart even when the repeats agreed better (a drive's own
# variation between runs of a few seconds, measured on the lab's drive models: 1-5%).
NOISE_FLOOR = 0.05


def _numbers(values, name):
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, '__iter__'):
        raise ValueError('%s: %r is not a list of numbers' % (name, values))
    values = list(values)
    if not values:
        raise ValueError('%s: no repeats (an empty list)' % name)
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError('%s[%d]: %r is not a number >= 0' % (name, index, value))
    return values


def median(values, name='values'):
    values = sorted(_numbers(values, name))
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2.0


def summary(values, name='values'):
    """{median, min, max, n, spread}: spread = (max - min) / median, 0 when the median is 0."""
    values = _numbers(values, name)
    mid = median(values, name)
    low, high = min(values), max(values)
    return {'median': mid, 'min': low, 'max': high, 'n': len(values),
            'spread': round((high - low) / mid, 4) if mid > 0 else 0.0}


def noise(summaries, floor=NOISE_FLOOR):
    """The relative noise of a set of summaries: the largest spread among them, at least ``floor``."""
    if not 0 <= floor < 1:
        raise ValueError('noise floor: %r is outside 0..1' % (floor,))
    return round(max([floor] + [s['spread'] for s in summaries]), 4)


def smallest_within_noise(points, key='bw', floor=NOISE_FLOOR):
    """The smallest-depth point whose median is within the noise of the best median.

    ``points``: [{"depth": int, key: [repeat values]}, ...]. Noise: the spread of the best point's repeats and
    of the chosen candidate's, at least ``floor``; a depth is chosen when its median is at least best x (1 -
    noise). Returns {"depth", "best_depth", "threshold", "noise", "points": [{depth, median, min, max, n,
    spread}]} with the points in ascending depth.
    """
    if not isinstance(points, (list, tuple)) or not points:
        raise ValueError('points: %r is not a non-empty list of {depth, %s: [repeats]}' % (points, key))
    table = []
    seen = set()
    for index, point in enumerate(points):
        if not isinstance(point, dict) or 'depth' not in point or key not in point:
            raise ValueError('points[%d]: %r is not {depth, %s: [repeats]}' % (index, point, key))
        depth = point['depth']
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError('points[%d].depth: %r is not a depth >= 1' % (index, depth))
        if depth in seen:
            raise ValueError('points[%d].depth: depth %d is listed twice' % (index, depth))
        seen.add(depth)
        entry = summary(point[key], 'points[%d].%s' % (index, key))
        entry['depth'] = depth
        table.append(entry)
    table.sort(key=lambda entry: entry['depth'])
    best = max(table, key=lambda entry: (entry['median'], -entry['depth']))
    if best['median'] <= 0:
        raise ValueError('points: every median is 0: nothing was measured')
    for entry in table:
        level = noise([best, entry], floor)
        threshold = best['median'] * (1 - level)
        if entry['median'] >= threshold:
            return {'depth': entry['depth'], 'best_depth': best['depth'], 'threshold': threshold,
                    'noise': level, 'points': table}
    raise AssertionError('unreachable: the best point is within its own noise')


def compare(before, after, same_settings=False, floor=NOISE_FLOOR):
    """What a before/after pair of repeats says: {verdict, ratio, ratio_low, ratio_high, before, after, noise}.

    ``verdict``: "no change" (the same settings: no ratio is given, whatever the repeats say), "faster" or
    "slower" (the medians differ beyond the noise), "within noise" (they do not). ``ratio_low``/``ratio_high``:
    the ratio's range from the repeats' extremes (after.min / before.max .. after.max / before.min).
    """
    b = before if isinstance(before, dict) else summary(before, 'before')
    a = after if isinstance(after, dict) else summary(after, 'after')
    level = noise([a, b], floor)
    result = {'before': b, 'after': a, 'noise': level, 'ratio': None, 'ratio_low': None, 'ratio_high': None}
    if same_settings:
        result['verdict'] = 'no change'
        return result
    if b['median'] <= 0:
        result['verdict'] = 'not measured'
        return result
    ratio = a['median'] / b['median']
    result.update(ratio=round(ratio, 3),
                  ratio_low=round(a['min'] / b['max'], 3) if b['max'] > 0 else None,
                  ratio_high=round(a['max'] / b['min'], 3) if b['min'] > 0 else None)
    if ratio > 1 + level:
        result['verdict'] = 'faster'
    elif ratio < 1 - level:
        result['verdict'] = 'slower'
    else:
        result['verdict'] = 'within noise'
    return result


def _setting(side, name, key):
    try:
        return int(side['settings'][key])
    except (KeyError, TypeError, ValueError):
        raise ValueError('%s.settings.%s: %r is not a number' % (name, key, (side.get('settings') or {}).get(key)))


def same_settings(before, after):
    """Whether ``before`` and ``after`` ran with the same settings, so that their difference is noise.

    Each side: {where: directory|drives, target: [paths], settings: {queue_depth, block_size}, block: {device:
    {queue settings}} or None}. The same place (``where`` and ``target``), the same depth and block size, and the
    same block queue settings where ``before`` recorded them (a block_layer change between the two is a change);
    where ``after``'s settings carry a ``writer`` (DeepSpeed's FastPersist writer wrote it), the same writer keys.
    """
    for name, side in (('before', before), ('after', after)):
        if not isinstance(side, dict):
            raise ValueError('%s: %r is not {where, target, settings, block}' % (name, side))
    if before.get('where') != after.get('where') or list(before.get('target') or []) != list(after.get('target') or []):
        return False
    for key in ('queue_depth', 'block_size'):
        if _setting(before, 'before', key) != _setting(after, 'after', key):
            return False
    # DeepSpeed's writer wrote the "after" side (its settings carry the checkpoint.writer keys): its buffer too
    if 'writer' in (after.get('settings') or {}) and \
            ((before.get('settings') or {}).get('writer') or {}) != (after['settings']['writer'] or {}):
        return False
    if before.get('block') is not None and before.get('block') != after.get('block'):
        return False
    return True
