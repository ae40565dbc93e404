# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checkpoint planner: what a fleet's checkpoint needs from its drives and what it costs (pure functions).

Given a checkpoint (bytes, or one of MLPerf Storage's Llama3 checkpoint shapes), the fleet (nodes, ranks and
accelerators per node), a write window and the measured per-drive ceiling and latency (the depth sweep's), it gives:

* the drives per node the window needs: ceil(node bandwidth / drive ceiling);
* the queue depth needed, by Little's Law: in flight = bandwidth x latency / block size, for the node (aggregate)
  and per rank (aggregate / ranks, rounded up);
* the fleet's checkpoint time now and after tuning: the fleet's checkpoint is saved when its slowest node is done,
  so each is the node's share over the slowest node's bandwidth;
* with a failure rate (MTBF of one node, the fleet's MTBF = MTBF_node / nodes), the Young/Daly first-order optimum
  interval sqrt(2 x C x M_fleet), and the accelerator time lost per day: first order, the fraction of time lost is
  C / tau (writing checkpoints, the accelerators wait) + tau / (2 x M_fleet) (the work redone after a failure,
  half an interval on average), times the accelerators, times 24 hours.

With a drive's rated endurance (terabytes written, or drive writes per day over the warranty) and an interval
(given, or the tuned Young/Daly one), what the checkpoints cost the drives: the bytes each drive writes per
checkpoint (the node's share over its drives) and per day, the share of its rated life a day of checkpoints uses,
and the years until the checkpoints alone reach it. Host writes: the drive's own write amplification (about 1 for
large sequential writes) is not counted.

Presets (PRESETS): the total checkpoint and the rank count of MLPerf Storage's checkpointing workloads
(mlcommons/storage, the checkpointing table of its README; GB there are 1024^3 bytes, as its results count):
Llama3 8B 105 GB over 8 ranks, 70B 912 GB over 64, 405B 5.29 TB over 512, 1T 18 TB over 1024. The first three match
about 14 bytes per parameter (bf16 weights 2 + fp32 master weights 4 + two fp32 Adam moments 8): 8.03e9 x 14 =
104.7 GiB; the 1T shape is taken as the table states it (about 19.8 bytes per parameter).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import units

GIB = 1024 ** 3
TIB = 1024 ** 4
MIB = 1024 ** 2

# name: (total bytes, ranks, parameters); the source is the module docstring.
PRESETS = {
    'llama3-8b': (105 * GIB, 8, 8.0e9),
    'llama3-70b': (912 * GIB, 64, 70.6e9),
    'llama3-405b': (int(round(5.29 * TIB)), 512, 405.9e9),
    'llama3-1t': (18 * TIB, 1024, 1.0e12),
}
BYTES_PER_PARAMETER = 14   # bf16 weights + fp32 master weights + 2 fp32 Adam moments (the presets' check)
HOURS_PER_DAY = 24
DAYS_PER_YEAR = 365
TB = 1000 ** 4             # endurance ratings are in decimal terabytes


def _positive(name, value, integer=False, zero_ok=False):
    """``value`` as a number above zero (or zero where ``zero_ok``); a ValueError naming it and the limit."""
    if isinstance(value, bool) or value is None:
        raise ValueError('%s: %r is not a number (it must be %s 0)' % (name, value, '>=' if zero_ok else '>'))
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError('%s: %r is not a number (it must be %s 0)' % (name, value, '>=' if zero_ok else '>'))
    if math.isnan(number) or math.isinf(number):
        raise ValueError('%s: %r is not a finite number' % (name, value))
    if number < 0 or (number == 0 and not zero_ok):
        raise ValueError('%s: %r must be %s 0' % (name, value, '>=' if zero_ok else '>'))
    if integer:
        if number != int(number):
            raise ValueError('%s: %r must be a whole number' % (name, value))
        return int(number)
    return number


def checkpoint_size(checkpoint):
    """(bytes, preset name or None, preset ranks or None) of a size (bytes, '105G') or a preset name."""
    if isinstance(checkpoint, str) and checkpoint.strip().lower() in PRESETS:
        name = checkpoint.strip().lower()
        size, ranks, _params = PRESETS[name]
        return size, name, ranks
    if isinstance(checkpoint, str) and not checkpoint.strip()[:1].isdigit() and checkpoint.strip()[:1] != '-':
        raise ValueError('checkpoint: %r is neither a size nor a preset (%s)' % (checkpoint, ', '.join(sorted(PRESETS))))
    if isinstance(checkpoint, (int, float)) and not isinstance(checkpoint, bool) and checkpoint <= 0:
        raise ValueError('checkpoint: %r must be > 0 bytes' % (checkpoint,))
    return units.parse_size(checkpoint, 'checkpoint'), None, None


def _ceil(value):
    """Rounded up, after rounding away float noise (1000 MiB/s x 8 ms / 1 MiB is 8, not 9)."""
    return int(math.ceil(round(value, 9)))


def lost_fraction(checkpoint_s, interval_s, mtbf_s):
    """First-order fraction of time lost: writing (C / tau) + redoing half an interval per failure (tau / 2M)."""
    return checkpoint_s / interval_s + interval_s / (2.0 * mtbf_s)


def young_daly(checkpoint_s, mtbf_s):
    """The first-order optimum checkpoint interval, sqrt(2 C M) (Young 1974, Daly 2006)."""
    return math.sqrt(2.0 * checkpoint_s * mtbf_s)


def _cost(checkpoint_s, mtbf_fleet_s, accelerators):
    interval = young_daly(checkpoint_s, mtbf_fleet_s)
    fraction = lost_fraction(checkpoint_s, interval, mtbf_fleet_s)
    return {'checkpoint_s': checkpoint_s, 'interval_s': interval, 'lost_fraction': fraction,
            'accelerator_hours_per_day': fraction * accelerators * HOURS_PER_DAY,
            'first_order_valid': checkpoint_s < mtbf_fleet_s / 2.0}


def rated_bytes(drive_tbw=None, drive_dwpd=None, drive_capacity=None, warranty_years=5):
    """(bytes a drive is rated to write, how it was known) from its TBW (terabytes, 10^12 bytes, as datasheets
    state it) or its drive writes per day x capacity x 365 x the warranty's years; (None, None) without either."""
    if drive_tbw is not None:
        if drive_dwpd is not None:
            raise ValueError('drive_tbw and drive_dwpd: give one rating, not both')
        return _positive('drive_tbw', drive_tbw) * TB, 'tbw'
    if drive_dwpd is None:
        return None, None
    dwpd = _positive('drive_dwpd', drive_dwpd)
    if drive_capacity is None:
        raise ValueError('drive_dwpd: %r needs drive_capacity (the drive\'s size) to give bytes' % (drive_dwpd,))
    capacity = units.parse_size(drive_capacity, 'drive_capacity')
    return dwpd * capacity * DAYS_PER_YEAR * _positive('warranty_years', warranty_years), 'dwpd'


def endurance(per_node, drives, rated, source, interval_s=None, interval_source=None, capacity=None):
    """What the checkpoints cost each drive (the module docstring); the per-day figures None without an interval."""
    per_checkpoint = per_node / float(drives)
    out = {'rated_bytes_per_drive': rated, 'rated_from': source, 'bytes_per_drive_per_checkpoint': per_checkpoint,
           'interval_s': interval_s, 'interval_from': interval_source, 'checkpoints_per_day': None,
           'bytes_per_drive_per_day': None, 'drive_writes_per_day': None, 'life_share_per_day': None,
           'years_to_rated_life': None}
    if interval_s:
        per_day = HOURS_PER_DAY * 3600.0 / interval_s
        daily = per_checkpoint * per_day
        out.update(checkpoints_per_day=per_day, bytes_per_drive_per_day=daily, life_share_per_day=daily / rated,
                   years_to_rated_life=rated / daily / DAYS_PER_YEAR,
                   drive_writes_per_day=daily / capacity if capacity else None)
    return out


def plan(checkpoint, ranks_per_node, window_s, drive_mib_s, latency_ms, block_size='1M', nodes=None,
         now_mib_s=None, tuned_mib_s=None, drives_per_node=None, mtbf_hours=None, accelerators_per_node=None,
         drive_tbw=None, drive_dwpd=None, drive_capacity=None, warranty_years=5, interval_s=None):
    """The plan (a dict; see the module docstring and plugins/filter/checkpoint_plan.yml).

    ``nodes``: the fleet size; by default a preset's ranks / ranks_per_node (rounded up), else 1.
    ``now_mib_s``: the slowest node's checkpoint bandwidth now (MiB/s; the verification's "before").
    ``tuned_mib_s``: the slowest node's bandwidth after tuning; by default drives_per_node (installed, or the
    drives the window needs) x the drive ceiling.
    ``drive_tbw`` or ``drive_dwpd`` (with ``drive_capacity``, ``warranty_years``): the drive's rated endurance;
    ``interval_s``: the checkpoint interval (by default the tuned Young/Daly one, with ``mtbf_hours``).
    """
    rated, rated_from = rated_bytes(drive_tbw, drive_dwpd, drive_capacity, warranty_years)
    if interval_s is not None:
        interval_s = _positive('interval_s', interval_s)
    size, preset, preset_ranks = checkpoint_size(checkpoint)
    ranks = _positive('ranks_per_node', ranks_per_node, integer=True)
    window = _positive('window_s', window_s)
    drive_bw = _positive('drive_mib_s', drive_mib_s) * MIB
    latency = _positive('latency_ms', latency_ms) / 1000.0
    block = units.parse_size(block_size, 'block_size')
    if nodes is None:
        nodes = _ceil(preset_ranks / float(ranks)) if preset_ranks else 1
    nodes = _positive('nodes', nodes, integer=True)
    accel = _positive('accelerators_per_node', ranks if accelerators_per_node is None else accelerators_per_node,
                      integer=True)

    per_node = size / float(nodes)
    node_bw = per_node / window
    drives_needed = _ceil(node_bw / drive_bw)
    aggregate_depth = _ceil(node_bw * latency / block)
    out = {
        'checkpoint_bytes': size, 'preset': preset, 'preset_ranks': preset_ranks, 'nodes': nodes,
        'ranks_per_node': ranks, 'accelerators': nodes * accel, 'window_s': window,
        'bytes_per_node': per_node, 'bytes_per_rank': per_node / ranks,
        'node_mib_s_needed': node_bw / MIB, 'drive_mib_s': drive_bw / MIB, 'latency_ms': latency * 1000.0,
        'block_size': block, 'drives_per_node_needed': drives_needed,
        'aggregate_depth': aggregate_depth, 'per_rank_depth': _ceil(aggregate_depth / float(ranks)),
        'per_drive_depth': _ceil(aggregate_depth / float(max(drives_needed, 1))),
    }
    installed = None
    if drives_per_node is not None:
        installed = _positive('drives_per_node', drives_per_node, integer=True)
        out['drives_per_node'] = installed
        out['window_met_by_drives'] = installed >= drives_needed
    tuned_bw = (_positive('tuned_mib_s', tuned_mib_s) * MIB if tuned_mib_s is not None
                else (installed or drives_needed) * drive_bw)
    out['tuned_mib_s'] = tuned_bw / MIB
    out['checkpoint_s_after'] = per_node / tuned_bw
    out['checkpoint_s_now'] = None
    if now_mib_s is not None:
        now_bw = _positive('now_mib_s', now_mib_s) * MIB
        out['now_mib_s'] = now_bw / MIB
        out['checkpoint_s_now'] = per_node / now_bw
    out['mtbf_hours'] = None
    if mtbf_hours is not None:
        mtbf_node = _positive('mtbf_hours', mtbf_hours) * 3600.0
        fleet = mtbf_node / nodes
        out['mtbf_hours'] = mtbf_node / 3600.0
        out['mtbf_fleet_s'] = fleet
        out['after'] = _cost(out['checkpoint_s_after'], fleet, out['accelerators'])
        out['now'] = _cost(out['checkpoint_s_now'], fleet, out['accelerators']) if out['checkpoint_s_now'] else None
        if out['now']:
            out['accelerator_hours_per_day_saved'] = (out['now']['accelerator_hours_per_day']
                                                      - out['after']['accelerator_hours_per_day'])
    out['endurance'] = None
    if rated:
        interval, source = ((interval_s, 'given') if interval_s else
                            (out['after']['interval_s'], 'young_daly') if out.get('after') else (None, None))
        capacity = units.parse_size(drive_capacity, 'drive_capacity') if drive_capacity is not None else None
        out['endurance'] = endurance(per_node, installed or drives_needed, rated, rated_from, interval, source,
                                     capacity)
    return out


def plan_line(p):
    """One line of a plan for the console and the report."""
    text = ('%s over %d nodes x %d ranks: %.0f MiB/s per node for a %g s window -> %d drives of %.0f MiB/s, '
            'depth %d per node (%d per rank) at %g ms' % (
                p['preset'] or ('%d bytes' % p['checkpoint_bytes']), p['nodes'], p['ranks_per_node'],
                p['node_mib_s_needed'], p['window_s'], p['drives_per_node_needed'], p['drive_mib_s'],
                p['aggregate_depth'], p['per_rank_depth'], p['latency_ms']))
    if p.get('checkpoint_s_now') is not None:
        text += '; checkpoint %.1f s now' % p['checkpoint_s_now']
    text += ', %.1f s tuned' % p['checkpoint_s_after']
    if p.get('after'):
        if p.get('now'):
            text += '; Young/Daly interval %.0f s now, %.0f s tuned; %.1f -> %.1f accelerator-hours/day lost' % (
                p['now']['interval_s'], p['after']['interval_s'], p['now']['accelerator_hours_per_day'],
                p['after']['accelerator_hours_per_day'])
        else:
            text += '; Young/Daly interval %.0f s; %.1f accelerator-hours/day lost' % (
                p['after']['interval_s'], p['after']['accelerator_hours_per_day'])
    wear = p.get('endurance') or {}
    if wear.get('life_share_per_day') is not None:
        text += '; each drive writes %.2f TB a day of checkpoints, %.2f%% of its rated life a year (%.1f years to it)' % (
            wear['bytes_per_drive_per_day'] / TB, wear['life_share_per_day'] * DAYS_PER_YEAR * 100,
            wear['years_to_rated_life'])
    return text
