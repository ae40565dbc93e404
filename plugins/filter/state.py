# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the state store's records (module_utils/common/records.py). Documentation: the .yml files beside this."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import records, remeasure as _remeasure


def _call(name, func, *args):
    try:
        return func(*args)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('%s: %s' % (name, exc))


def sweep_key(directory, block_size, ranks):
    return _call('sweep_key', records.sweep_key, directory, block_size, ranks)


def recorded_sweep(facts, directory, block_size, ranks, nearest=False):
    return _call('recorded_sweep', records.recorded_sweep, facts, directory, block_size, ranks, nearest)


def sweep_ceiling(facts, directory):
    return _call('sweep_ceiling', records.sweep_ceiling_bytes, facts, directory)


def thermal_depth(facts, depth):
    return _call('thermal_depth', records.thermal_depth, facts, depth)


def measurement_depends(facts, names, settings=None, volume=True):
    return _call('measurement_depends', _remeasure.depends_on, facts, list(names or []), settings, bool(volume))


def measurement_stamp(depends):
    return _call('measurement_stamp', _remeasure.stamp, depends)


def remeasure(entry, depends, policy='auto', days=_remeasure.DEFAULT_DAYS, label='measurement', measure_reason=None,
              name='checkpoint_io_remeasure'):
    return _call('remeasure', _remeasure.decide, entry, depends, policy, days, None, label, measure_reason, name)


def remeasure_line(decision, written=None):
    return _call('remeasure_line', _remeasure.line, decision, written)


class FilterModule(object):
    """The state store's records."""

    def filters(self):
        return {'sweep_key': sweep_key, 'recorded_sweep': recorded_sweep, 'sweep_ceiling': sweep_ceiling,
                'thermal_depth': thermal_depth, 'measurement_depends': measurement_depends,
                'measurement_stamp': measurement_stamp, 'remeasure': remeasure, 'remeasure_line': remeasure_line}
