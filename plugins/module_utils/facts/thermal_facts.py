# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe thermal facts: hwmon first (no tool needed), nvme smart-log / id-ctrl
for thresholds and throttling counters, and the derived throttle verdict."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    listdir,
    natural_key,
    read_int,
    read_str,
)

TEMP_INPUT_RE = re.compile(r'^temp(\d+)_input$')

SMART_FIELDS = (
    'critical_warning', 'critical_warning_bits', 'available_spare_pct', 'percentage_used', 'media_errors',
    'data_units_written',
    'warning_temp_time_min', 'critical_comp_time_min',
    'thm_temp1_trans_count', 'thm_temp2_trans_count', 'thm_temp1_total_time_s', 'thm_temp2_total_time_s',
)
ID_CTRL_FIELDS = ('wctemp_c', 'cctemp_c', 'mntmt_c', 'mxtmt_c', 'hctma')
HISTORY_FIELDS = ('thm_temp1_trans_count', 'thm_temp2_trans_count', 'warning_temp_time_min',
                  'critical_comp_time_min')


def _millic(value):
    return None if value is None else round(value / 1000.0, 2)


def hwmon_dir(ctx, ctrl):
    """The controller's hwmon directory: <ctrl>/hwmonN (newer kernels) or <ctrl>/device/hwmon/hwmonN."""
    base = ctx.sys('class', 'nvme', ctrl)
    candidates = sorted(glob.glob(os.path.join(base, 'hwmon*')), key=natural_key)
    candidates += sorted(glob.glob(os.path.join(base, 'device', 'hwmon', 'hwmon*')), key=natural_key)
    for path in candidates:
        if os.path.isfile(os.path.join(path, 'temp1_input')):
            return path
    return None


def hwmon_facts(path):
    """Sensors of one nvme hwmon dir; temperatures in degrees Celsius (floats)."""
    sensors = []
    for entry in listdir(path):
        match = TEMP_INPUT_RE.match(entry)
        if not match:
            continue
        prefix = 'temp%s' % match.group(1)
        sensors.append({
            'sensor': prefix,
            'label': read_str(os.path.join(path, prefix + '_label')) or None,
            'temp_c': _millic(read_int(os.path.join(path, entry))),
        })
    return {
        'hwmon': os.path.basename(path),
        'sensors': sensors,
        'temp_max_c': _millic(read_int(os.path.join(path, 'temp1_max'))),
        'temp_min_c': _millic(read_int(os.path.join(path, 'temp1_min'))),
        'temp_crit_c': _millic(read_int(os.path.join(path, 'temp1_crit'))),
        'temp_alarm': None if read_int(os.path.join(path, 'temp1_alarm')) is None
        else bool(read_int(os.path.join(path, 'temp1_alarm'))),
    }


def _kelvin(celsius, source):
    """Whole Kelvin back from a Celsius value.

    Drives report whole Kelvin; the kernel's hwmon converts with 273.15 and
    nvme-cli (and units.kelvin_to_celsius) with 273, so comparing in Kelvin is exact.
    """
    if celsius is None:
        return None
    if source == 'hwmon':
        return int(round(celsius + 273.15))
    return int(round(celsius + 273))


def throttle_verdict(facts):
    """(throttled, reason): True/False when knowable, None when nothing tells."""
    bits = facts.get('critical_warning_bits') or {}
    composite = facts.get('composite_temp_c')
    wctemp = facts.get('wctemp_c')
    cctemp = facts.get('cctemp_c')
    comp_k = _kelvin(composite, facts.get('composite_source'))
    wc_k = _kelvin(wctemp, 'id-ctrl')
    numbers = 'composite %s °C, WCTEMP %s °C, CCTEMP %s °C' % (composite, wctemp, cctemp)
    if bits.get('temperature_threshold'):
        return True, 'critical_warning temperature bit set (%s)' % numbers
    if comp_k is not None and wc_k is not None and comp_k >= wc_k:
        return True, 'composite temperature %s °C >= WCTEMP %s °C (CCTEMP %s °C)' % (composite, wctemp, cctemp)
    if facts.get('critical_warning') is not None or (comp_k is not None and wc_k is not None):
        return False, None
    return None, None


def throttle_history(facts):
    values = [facts.get(key) for key in HISTORY_FIELDS]
    known = [v for v in values if v is not None]
    if not known:
        return None
    return any(v > 0 for v in known)


def controller_thermal(ctx, inv, ctrl):
    facts = {
        'name': ctrl,
        'composite_temp_c': None,
        'composite_source': None,
        'hwmon': None,
        'sensors': [],
        'temp_max_c': None,
        'temp_min_c': None,
        'temp_crit_c': None,
        'temp_alarm': None,
        'smart_log_temp_c': None,
        'smart_log_sensors_c': [],
    }
    for key in SMART_FIELDS + ID_CTRL_FIELDS:
        facts[key] = None

    path = hwmon_dir(ctx, ctrl)
    if path:
        facts.update(hwmon_facts(path))
        composite = [s for s in facts['sensors'] if s['sensor'] == 'temp1']
        if composite and composite[0]['temp_c'] is not None:
            facts['composite_temp_c'] = composite[0]['temp_c']
            facts['composite_source'] = 'hwmon'

    smart = inv.get(ctrl, 'smart-log')
    if smart:
        for key in SMART_FIELDS:
            facts[key] = smart.get(key)
        facts['smart_log_temp_c'] = smart.get('temperature_c')
        facts['smart_log_sensors_c'] = list(smart.get('sensors_c') or [])
        if facts['composite_temp_c'] is None and smart.get('temperature_c') is not None:
            facts['composite_temp_c'] = smart.get('temperature_c')
            facts['composite_source'] = 'smart-log'

    id_ctrl = inv.get(ctrl, 'id-ctrl')
    if id_ctrl:
        for key in ID_CTRL_FIELDS:
            facts[key] = id_ctrl.get(key)

    facts['throttled'], facts['throttle_reason'] = throttle_verdict(facts)
    facts['throttle_history'] = throttle_history(facts)
    return facts


def collect(ctx, inv):
    """The ``thermal`` section: one entry per controller."""
    controllers, errors = inv.per_controller(lambda ctrl: controller_thermal(ctx, inv, ctrl),
                                             ('smart-log', 'id-ctrl'))
    return {
        'controllers': controllers,
        'throttled_controllers': [c['name'] for c in controllers if c['throttled']],
        'errors': errors,
    }
