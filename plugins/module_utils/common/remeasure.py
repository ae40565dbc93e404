# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a recorded measurement still holds, or must be measured again (issue 34's "re-measure only when
something changed").

Every measurement the collection writes onto the data drives (the depth sweep, the thermal validation, the
checkpoint-write verification, the io_uring engine's fio check) is recorded on the node with what it depended on:
:func:`depends_on` (the drives by serial, model, firmware, WWID and size; the kernel release; the volume; the
measurement's own settings) and when it was measured (:func:`stamp`). A later run asks :func:`decide`: the record
is reused when everything it depended on is the same and, under the policy ``auto``, it is younger than the
policy's days; otherwise it is measured again, and the decision says why. Pure functions: the roles pass the
facts, the record and the time.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import json
import math
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section

# auto: reuse what nothing changed under and is younger than the days; always: measure every run; changed: reuse
# what nothing changed under, whatever its age.
POLICIES = ('auto', 'always', 'changed')
DEFAULT_DAYS = 7
MAX_DAYS = 3650
DRIVE_KEYS = ('serial', 'model', 'firmware', 'wwid', 'size_bytes')
TIME_FORMAT = '%Y-%m-%dT%H:%M:%SZ'
SHOWN_CHANGES = 6           # a reason names at most this many changes (the decision's 'changed' holds them all)


def check_policy(policy, days, name='checkpoint_io_remeasure'):
    """(policy, days) checked; ValueError naming the value and the limit."""
    if policy not in POLICIES:
        raise ValueError('%s is %r: it must be one of %s' % (name, policy, ', '.join(POLICIES)))
    if isinstance(days, bool):
        raise ValueError('%s_days is %r: it must be a whole number of days from 0 to %d' % (name, days, MAX_DAYS))
    try:
        number = float(days)
    except (TypeError, ValueError):
        raise ValueError('%s_days is %r: it must be a whole number of days from 0 to %d' % (name, days, MAX_DAYS))
    if math.isnan(number) or number < 0 or number > MAX_DAYS or number != int(number):
        raise ValueError('%s_days is %r: it must be a whole number of days from 0 to %d' % (name, days, MAX_DAYS))
    return policy, int(number)


def role_input_errors(values, prefix):
    """The messages of a role's ``<prefix>_remeasure`` and ``<prefix>_remeasure_days`` out of their limits ([] when
    both hold or neither is given)."""
    name = prefix + '_remeasure'
    if name not in values and name + '_days' not in values:
        return []
    try:
        check_policy(values.get(name, 'auto'), values.get(name + '_days', DEFAULT_DAYS), name)
    except ValueError as exc:
        return [str(exc)]
    return []


def _canonical(value):
    """JSON's view of a value (what a record keeps), so a value compares equal to its stored copy."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def drive_identities(facts, names):
    """What a measurement on the namespaces ``names`` depended on of the drives: [{serial, model, firmware, wwid,
    size_bytes}] sorted by serial (the kernel names are left out: they may change at a boot)."""
    nvme = section(facts, 'nvme')
    controllers = dict((c.get('name'), c) for c in nvme.get('controllers') or [] if isinstance(c, dict))
    out = []
    wanted = set(name for name in names or [] if isinstance(name, str))
    for ns in nvme.get('namespaces') or []:
        if not isinstance(ns, dict) or ns.get('name') not in wanted:
            continue
        ctrl = controllers.get((ns.get('controllers') or [None])[0]) or {}
        out.append({'serial': ctrl.get('serial'), 'model': ctrl.get('model'), 'firmware': ctrl.get('firmware'),
                    'wwid': ns.get('wwid'), 'size_bytes': ns.get('size_bytes')})
    missing = sorted(wanted - set(ns.get('name') for ns in nvme.get('namespaces') or [] if isinstance(ns, dict)))
    out.extend({'serial': None, 'model': None, 'firmware': None, 'wwid': None, 'size_bytes': None, 'device': name}
               for name in missing)
    return sorted(out, key=lambda d: (str(d.get('serial')), str(d.get('wwid')), str(d.get('device'))))


def depends_on(facts, names, settings=None, volume=True):
    """{drives, kernel, volume, settings}: what a measurement on ``names`` with ``settings`` depended on.
    ``volume`` false: a measurement of the raw drives (the io_uring check), which the checkpoint volume does not
    change (its volume is then null)."""
    state = section(facts, 'state')
    volume = (state.get('volume') if isinstance(state.get('volume'), dict) else {}) if volume else None
    return _canonical({'drives': drive_identities(facts, names),
                       'kernel': (state.get('kernel') or {}).get('release') if isinstance(state.get('kernel'), dict)
                       else None,
                       'volume': {'mount_point': volume.get('mount_point'), 'md_uuid': volume.get('md_uuid')}
                       if volume is not None else None,
                       'settings': settings if settings is not None else {}})


def stamp(depends, now=None):
    """The fields a measurement's record carries: {depends_on, measured_at}."""
    now = time.time() if now is None else float(now)
    return {'depends_on': _canonical(depends), 'measured_at': time.strftime(TIME_FORMAT, time.gmtime(now))}


def _short(value):
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + '...'


def _drive_changes(old, new):
    def label(d):
        return d.get('serial') or d.get('wwid') or d.get('device') or '?'
    old_by, new_by = dict((label(d), d) for d in old or []), dict((label(d), d) for d in new or [])
    out = ['drive %s left' % key for key in sorted(set(old_by) - set(new_by))]
    out += ['drive %s new' % key for key in sorted(set(new_by) - set(old_by))]
    for key in sorted(set(old_by) & set(new_by)):
        for field in DRIVE_KEYS:
            if old_by[key].get(field) != new_by[key].get(field):
                out.append('drive %s %s %s -> %s' % (key, field, _short(old_by[key].get(field)),
                                                     _short(new_by[key].get(field))))
    return out


def changes(old, new):
    """What differs between two depends_on documents, in words ([] when nothing)."""
    old, new = old if isinstance(old, dict) else {}, _canonical(new)
    out = _drive_changes(old.get('drives'), new.get('drives'))
    if old.get('kernel') != new.get('kernel'):
        out.append('kernel %s -> %s' % (old.get('kernel'), new.get('kernel')))
    leaves = []
    for part in ('volume', 'settings'):
        leaves.extend(_leaf_changes(old.get(part), new.get(part), '' if part == 'settings' else part))
    # the measurement's own top-level settings first (ranks 1 -> 2), then what nests (after_settings.queue_depth)
    return out + sorted(leaves, key=lambda text: text.split(' ', 1)[0].count('.'))


def _leaf_changes(was, now, path, depth=0):
    """'<path> <old> -> <new>' for each leaf that differs (dicts walked to 4 levels; lists compared whole)."""
    if was == now:
        return []
    if isinstance(was, dict) and isinstance(now, dict) and depth < 4:
        out = []
        for key in sorted(set(was) | set(now), key=str):
            out.extend(_leaf_changes(was.get(key), now.get(key), '%s.%s' % (path, key) if path else str(key),
                                     depth + 1))
        return out
    return ['%s %s -> %s' % (path or 'settings', _short(was), _short(now))]


def _age_s(measured_at, now):
    try:
        return now - calendar.timegm(time.strptime(measured_at, TIME_FORMAT))
    except (TypeError, ValueError):
        return None


def _ago(seconds):
    if seconds < 3600:
        return '%d min ago' % max(0, seconds // 60)
    if seconds < 2 * 86400:
        return '%.1f h ago' % (seconds / 3600.0)
    return '%.1f days ago' % (seconds / 86400.0)


def decide(entry, depends, policy='auto', days=DEFAULT_DAYS, now=None, label='measurement',
           measure_reason=None, name='checkpoint_io_remeasure'):
    """Reuse ``entry`` (a record with depends_on and measured_at) or measure again:
    {label, reuse, reason, changed, measured_at, age_s, policy}. ``measure_reason``: the measurement's own reason
    to measure again whatever the record (a drive that throttled last time), or None."""
    policy, days = check_policy(policy, days, name)
    now = time.time() if now is None else float(now)
    entry = entry if isinstance(entry, dict) else {}
    out = {'label': label, 'reuse': False, 'changed': [], 'measured_at': entry.get('measured_at'), 'age_s': None,
           'policy': policy}
    if not entry:
        return dict(out, reason='measured: none recorded')
    if 'depends_on' not in entry or not entry.get('measured_at'):
        return dict(out, reason='measured: the record does not say what it depended on (written before the '
                                'collection recorded it)')
    age = _age_s(entry.get('measured_at'), now)
    out['age_s'] = int(age) if age is not None else None
    out['changed'] = changes(entry.get('depends_on'), depends)
    if policy == 'always':
        return dict(out, reason='measured: %s is always' % name)
    if out['changed']:
        shown = out['changed'][:SHOWN_CHANGES]
        more = len(out['changed']) - len(shown)
        return dict(out, reason='measured: ' + '; '.join(shown) + ('; and %d more' % more if more else ''))
    if measure_reason:
        return dict(out, reason='measured: %s' % measure_reason)
    if age is None or age < -300:
        return dict(out, reason='measured: the record\'s time %r is not a time in the past' % entry.get('measured_at'))
    if policy == 'auto' and age > days * 86400:
        return dict(out, reason='measured: the record is %.1f days old, over %s_days %d' % (age / 86400.0, name, days))
    return dict(out, reuse=True, reason='reused: measured %s (%s); nothing it depends on changed (drives, firmware, '
                                        'kernel, volume, settings)' % (entry['measured_at'], _ago(max(0, int(age)))))


def line(decision, written=None):
    """One line of the summary for a decision: '<label>: reused ...' or '<label>: measured ..., N MiB written'."""
    if not isinstance(decision, dict):
        return None
    text = '%s: %s' % (decision.get('label'), decision.get('reason'))
    if not decision.get('reuse') and isinstance(written, (int, float)) and not isinstance(written, bool):
        text += ' (%.0f MiB written)' % (written / 1048576.0)
    return text
