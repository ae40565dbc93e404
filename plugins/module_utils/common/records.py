# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the records of the state store mean (state_store.py writes and reads them; this reads their data).

Every function takes the whole ``ansible_facts.checkpoint_io`` (the ``state`` section gathered) and reads it through
:func:`records`, so a role or play never builds a record's key or walks its layout in Jinja.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

DEPTH_SWEEP = 'depth_sweep'


def records(facts):
    """The records of the ``state`` section ({} when it was not gathered or the store is empty)."""
    return section(facts, 'state').get('records') or {}


def record(facts, name, default=None):
    value = records(facts).get(name)
    return default if value is None else value


def sweep_key(directory, block_size, ranks):
    """The key of one sweep in the depth_sweep record: the directory, the block size in bytes and the rank count."""
    if not isinstance(directory, str) or not posixpath.isabs(directory):
        raise ValueError('sweep directory %r is not an absolute path' % (directory,))
    return '%s|%d|%d' % (posixpath.normpath(directory), parse_size(block_size, 'block_size'), int(ranks))


def _sweep_directory(key, entry):
    if isinstance(entry, dict) and entry.get('directory'):
        return posixpath.normpath(entry['directory'])
    return key.rsplit('|', 2)[0]


def recorded_sweep(facts, directory, block_size, ranks, nearest=False):
    """The recorded sweep of this directory, block size and rank count, or {}. ``nearest``: where there is none,
    the newest sweep of the directory in another shape (what a decision to sweep again compares with, to say what
    changed), or {}."""
    sweeps = record(facts, DEPTH_SWEEP, {}) or {}
    found = sweeps.get(sweep_key(directory, block_size, ranks)) or {}
    if found or not nearest:
        return found
    directory = posixpath.normpath(directory)
    same = [entry for key, entry in sorted(sweeps.items())
            if isinstance(entry, dict) and _sweep_directory(key, entry) == directory]
    return max(same, key=lambda entry: str(entry.get('measured_at') or '')) if same else {}


def sweep_ceiling_bytes(facts, directory):
    """The best bandwidth (bytes/s) any recorded sweep of ``directory`` measured, or None (the verification's
    ceiling)."""
    directory = posixpath.normpath(directory)
    best = [entry.get('knee', {}).get('best_bw_bytes') for key, entry in sorted(record(facts, DEPTH_SWEEP, {}).items())
            if isinstance(entry, dict) and _sweep_directory(key, entry) == directory]
    best = [value for value in best if isinstance(value, (int, float)) and not isinstance(value, bool)]
    return max(best) if best else None


def volume_from_record(record, md_kernel_name=None):
    """The checkpoint volume the xfs role made, from its record: {exists, holders, mount_point, checkpoint_dir,
    md_uuid}. ``md_kernel_name``: the kernel name the record's md array has now (md127), found by the node from its
    UUID link; the array's members are held by it, and the collection's own holder is never a foreign one."""
    record = record if isinstance(record, dict) else {}
    md = record.get('md') if isinstance(record.get('md'), dict) else {}
    return {'exists': record.get('state') == 'present',
            'holders': [md_kernel_name] if md_kernel_name else [],
            'mount_point': record.get('mount_point'),
            'checkpoint_dir': record.get('checkpoint_dir'),
            'md_uuid': md.get('uuid')}


def own_holders(facts):
    """The kernel names of the collection's own md array (the state section's volume), [] when none."""
    volume = section(facts, 'state').get('volume') or {}
    return [name for name in volume.get('holders') or [] if isinstance(name, str)]


THERMAL = 'thermal'


def thermal_backoff(facts):
    """The thermal_validate role's back-off in force on this node: {per_rank_depth, from_depth, reason, drives}
    while its record says a drive throttled and the back-off applies; None when none is recorded, the last
    validation found the drives cool, or it was recorded with ``thermal_validate_backoff: false``."""
    doc = record(facts, THERMAL, {}) or {}
    backoff = doc.get('backoff') if isinstance(doc, dict) else None
    if not isinstance(backoff, dict) or not backoff.get('apply'):
        return None
    depth = backoff.get('per_rank_depth')
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError('the thermal record holds per_rank_depth %r, not a depth of 1 or more' % (depth,))
    return backoff


def thermal_depth(facts, depth):
    """The per-rank depth a write may use on this node: ``depth``, or the thermal back-off where it is lower
    (raising a depth above it is refused while the record says a drive throttled). {queue_depth, asked, backoff,
    note}."""
    asked = int(depth)
    backoff = thermal_backoff(facts)
    if backoff is None or backoff['per_rank_depth'] >= asked:
        return {'queue_depth': asked, 'asked': asked, 'backoff': backoff, 'note': None}
    return {'queue_depth': backoff['per_rank_depth'], 'asked': asked, 'backoff': backoff,
            'note': 'per-rank depth %d kept at %d: %s (thermal_validate recorded it; a later validation that finds '
                    'the drives cool lifts it)' % (asked, backoff['per_rank_depth'], backoff.get('reason'))}
