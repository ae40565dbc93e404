# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the checkpoint-write verification (module_utils/verify/verification.py). Documentation: the .yml files
beside this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import verification as _v


def _call(name, func, *args):
    try:
        return func(*args)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError('%s: %s' % (name, exc))


def aio_settings(facts):
    return _call('aio_settings', _v.aio_settings, facts)


def checkpoint_shape(avail_bytes, ranks, full_size, share, asked=False):
    return _call('checkpoint_shape', _v.checkpoint_shape, avail_bytes, ranks, full_size, share, asked)


def queue_settings(facts, names):
    return _call('queue_settings', _v.queue_settings, facts, names)


def before_side(baseline, settings_before, directories, replayed=None):
    return _call('before_side', _v.before_side, baseline, settings_before, directories, replayed)


def verify_report(parts):
    return _call('verify_report', _v.report, parts)


def verify_line(report):
    return _call('verify_line', _v.report_line, report)


def baseline_target(directories, selected, signed, force=None):
    return _call('baseline_target', _v.baseline_target, directories, selected, signed, force)


def write_places(df_output, dirs, facts=None):
    return _call('write_places', _v.write_places, df_output, dirs, facts)


def before_plan(baseline, drives_now, avail, ranks, full_size, share, asked=False):
    return _call('before_plan', _v.before_plan, baseline, drives_now, avail, ranks, full_size, share, asked)


def drive_ids(facts, names):
    return _call('drive_ids', _v.drive_ids, facts, names)


def verify_engine(facts, asked='auto'):
    return _call('verify_engine', _v.verify_engine, facts, asked)


def fastpersist_runs(result):
    return _call('fastpersist_runs', _v.fastpersist_runs, result)


def writer_settings(facts):
    return _call('writer_settings', _v.writer_settings, facts)


class FilterModule(object):
    """The checkpoint-write verification."""

    def filters(self):
        return {'aio_settings': aio_settings, 'checkpoint_shape': checkpoint_shape, 'queue_settings': queue_settings,
                'before_side': before_side, 'verify_report': verify_report, 'verify_line': verify_line,
                'baseline_target': baseline_target, 'write_places': write_places, 'before_plan': before_plan,
                'drive_ids': drive_ids, 'verify_engine': verify_engine, 'writer_settings': writer_settings,
                'fastpersist_runs': fastpersist_runs}
