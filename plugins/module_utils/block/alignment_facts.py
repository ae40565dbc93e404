# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the facts say about each drive of an alignment plan: its block queue, the filesystem on it, the md array
over it, the ranks' share of it and the requests they keep in flight there (per-drive context for the checks of
:mod:`alignment`). Pure functions of the facts and the validated plan (:mod:`alignment_plan`)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import to_int
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block.alignment_plan import (
    _ceil_div,
    _dev_name,
    _names,
)


# ----------------------------------------------------------------------------------------------
# facts access
# ----------------------------------------------------------------------------------------------

def _block_devices(facts):
    block = section(facts, 'block')
    if not isinstance(block, dict) or not isinstance(block.get('devices'), list):
        raise ValueError('facts: no block section; gather ansible_facts.checkpoint_io with gather_subset '
                         'including block')
    devices = {}
    for entry in block['devices']:
        if isinstance(entry, dict) and entry.get('name'):
            devices[_dev_name(entry['name'], 'block.devices name')] = entry
    return devices


def _filesystems(facts):
    xfs = section(facts, 'xfs')
    if not isinstance(xfs, dict) or not isinstance(xfs.get('filesystems'), list):
        return []
    return [fs for fs in xfs['filesystems'] if isinstance(fs, dict)]


def _md_arrays(facts):
    """{md name: md dict} for md arrays under the XFS filesystems of the facts."""
    arrays = {}
    for fs in _filesystems(facts):
        md = fs.get('md')
        if isinstance(md, dict) and md.get('name') and isinstance(md.get('members'), list) and md['members']:
            arrays[md['name']] = md
    return arrays


def _is_on(fs, name):
    """Whether filesystem ``fs`` lives on device ``name`` (directly, on a partition or as an md member)."""
    kernel = fs.get('kernel_name') or ''
    if kernel == name:
        return True
    rest = kernel[len(name):] if kernel.startswith(name) else None
    if rest and rest.lstrip('p').isdigit():
        return True
    md = fs.get('md')
    return isinstance(md, dict) and name in (md.get('members') or [])


def _filesystem_for(facts, name):
    for fs in _filesystems(facts):
        if _is_on(fs, name):
            return fs
    return None


def _opt_int(entry, key):
    value = entry.get(key) if isinstance(entry, dict) else None
    if value is None or isinstance(value, bool):
        return None
    try:
        return to_int(value, key)
    except ValueError:
        return None


def _split(size, max_bytes):
    """Requests one I/O of ``size`` bytes becomes at a ``max_bytes`` transfer limit."""
    if not max_bytes:
        return 1
    return _ceil_div(size, max_bytes)


def _shares(target, plan, md_arrays, block):
    """{drive: (ios, requests)} one rank writing to ``target`` keeps in flight on each drive (floats)."""
    depth = plan['rank_depth']
    block_size = plan['block_size']
    md = md_arrays.get(target)
    if md is None:
        max_kb = _opt_int(block.get(target), 'max_sectors_kb')
        return {target: (float(depth), float(depth * _split(block_size, max_kb and max_kb * 1024)))}
    members = [_dev_name(m, 'md member') for m in md['members']]
    count = len(members)
    chunk = _opt_int(md, 'chunk_bytes')
    shares = {}
    for member in members:
        max_kb = _opt_int(block.get(member), 'max_sectors_kb')
        max_bytes = max_kb and max_kb * 1024
        if md.get('level') == 'raid1' or not chunk:
            # mirrors write every I/O to every member; without a chunk, assume the worst (all on each)
            shares[member] = (float(depth), float(depth * _split(block_size, max_bytes)))
            continue
        pieces = _ceil_div(block_size, chunk)
        piece = min(block_size, chunk)
        ios = depth * min(pieces, count) / count
        requests = depth * pieces / count * _split(piece, max_bytes)
        shares[member] = (ios, requests)
    return shares


def _per_drive(plan, facts, block):
    md_arrays = _md_arrays(facts)
    per_drive = {}
    for rank, target in enumerate(plan['rank_drives']):
        for drive, (ios, requests) in _shares(target, plan, md_arrays, block).items():
            entry = per_drive.setdefault(drive, {'rank_indexes': [], 'ios': 0.0, 'requests': 0.0,
                                                 'rank_ios': 0.0, 'rank_requests': 0.0, 'via': None})
            entry['rank_indexes'].append(rank)
            entry['ios'] += ios
            entry['requests'] += requests
            entry['rank_ios'] = max(entry['rank_ios'], ios)
            entry['rank_requests'] = max(entry['rank_requests'], requests)
            if target != drive:
                entry['via'] = target
    result = {}
    for drive in sorted(per_drive):
        acc = per_drive[drive]
        dev = block.get(drive)
        if dev is None:
            raise ValueError('%s: no block facts for this drive (ansible_facts.checkpoint_io.block.devices has %s)'
                             % (drive, _names(sorted(block))))
        fs = _filesystem_for(facts, acc['via'] or drive)
        aggregate = int(math.ceil(acc['ios'] - 1e-9))
        requests = int(math.ceil(acc['requests'] - 1e-9))
        result[drive] = {
            'ranks': len(acc['rank_indexes']),
            'rank_indexes': acc['rank_indexes'],
            'via': acc['via'],
            'rank_depth': int(math.ceil(acc['rank_ios'] - 1e-9)),
            'rank_requests': int(math.ceil(acc['rank_requests'] - 1e-9)),
            'aggregate_depth': aggregate,
            'requests_in_flight': requests,
            'requests_per_io': _ratio(requests, aggregate),
            'nr_requests': _opt_int(dev, 'nr_requests'),
            'hw_tag_depth': _opt_int(dev, 'hw_tag_depth'),
            'hw_contexts': _opt_int(dev, 'hw_contexts'),
            'scheduler': dev.get('scheduler'),
            'read_ahead_kb': _opt_int(dev, 'read_ahead_kb'),
            'max_sectors_kb': _opt_int(dev, 'max_sectors_kb'),
            'filesystem': fs.get('kernel_name') if fs else None,
            'stripe_unit_bytes': (_opt_int(fs, 'sunit_bytes') or None) if fs else None,
            'stripe_width_bytes': (_opt_int(fs, 'swidth_bytes') or None) if fs else None,
            'saturation_depth': plan['saturation_depth'].get(drive),
        }
    return result


def _ratio(numerator, denominator):
    if not denominator:
        return None
    if numerator % denominator == 0:
        return numerator // denominator
    return round(numerator / float(denominator), 2)
