# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fact gathering entry point: gather_subset resolution and the orchestration of
the per-layer collectors.

Collectors live in one file per layer (nvme_facts, block_facts, thermal_facts,
io_uring_facts, xfs_facts, gds_facts, deepspeed_facts; the state section is the state store's records).  None of them raises: a
missing file or a failed command becomes None plus an entry in the section's
``errors`` list.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import records, state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.schema import SCHEMA_VERSION, SUBSETS  # noqa: F401 (re-exported: the fact schema)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import (
    block_facts,
    deepspeed_facts,
    gds_facts,
    io_uring_facts,
    nvme_facts,
    thermal_facts,
    xfs_facts,
)

SUBSET_CHOICES = ['all'] + list(SUBSETS) + ['!' + name for name in SUBSETS]


def resolve_subsets(requested):
    """['all', '!gds'] -> ordered list of subset names; only exclusions imply 'all'."""
    include = set()
    exclude = set()
    only_exclusions = True
    for item in requested or ['all']:
        item = item.strip()
        if item.startswith('!'):
            name = item[1:]
            exclude.update(SUBSETS if name == 'all' else [name])
        else:
            only_exclusions = False
            include.update(SUBSETS if item == 'all' else [item])
    if only_exclusions:
        include = set(SUBSETS)
    return [name for name in SUBSETS if name in include and name not in exclude]


def gather_facts(ctx, params):
    """Collect the requested sections; returns the ``checkpoint_io`` fact dict."""
    subsets = resolve_subsets(params.get('gather_subset'))
    facts = {'schema_version': SCHEMA_VERSION, 'gather_subset': subsets}

    inventory = None
    if set(subsets) & set(('nvme', 'block', 'thermal')):
        inventory = nvme_facts.NvmeInventory(ctx, use_nvme_cli=params.get('use_nvme_cli', True))
        logs = []
        if 'nvme' in subsets:
            logs.extend(['id-ctrl', 'num-queues'])
        if 'thermal' in subsets:
            logs.extend(['id-ctrl', 'smart-log'])
        inventory.prefetch(logs)

    collectors = (
        ('nvme', lambda: nvme_facts.collect(ctx, inventory)),
        ('block', lambda: block_facts.collect(ctx, inventory)),
        ('thermal', lambda: thermal_facts.collect(ctx, inventory)),
        ('io_uring', lambda: io_uring_facts.collect(ctx, training_user=params.get('training_user'),
                                                    fio_probe=params.get('fio_probe', True))),
        ('xfs', lambda: xfs_facts.collect(ctx, checkpoint_paths=params.get('checkpoint_paths') or [])),
        ('gds', lambda: gds_facts.collect(ctx, job_dirs=params.get('gds_job_dirs') or [],
                                          training_user=params.get('training_user'))),
        ('deepspeed', lambda: deepspeed_facts.collect(ctx, params.get('deepspeed_configs') or [],
                                                      params.get('deepspeed_python'))),
        ('state', lambda: state_facts(params.get('state_dir') or state_store.STATE_DIR,
                                      params.get('devfs_root') or '/dev', params.get('procfs_root') or '/proc')),
    )
    facts['gathered_at'] = {}
    for name, collector in collectors:
        if name in subsets:
            facts[name] = _guarded(name, collector)
            facts['gathered_at'][name] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    return facts


def state_facts(state_dir, devfs_root='/dev', proc_root='/proc'):
    """The ``state`` section: every record of the state store, the run lease apart, the checkpoint volume the
    xfs role made (its md array found by its UUID link, whatever name an initramfs gave it), and the kernel's
    release (what a recorded measurement depended on: common/remeasure.py)."""
    section = state_store.read_all(state_dir)
    lease = section['records'].pop(state_store.RUN_LEASE, None)
    section['meta'].pop(state_store.RUN_LEASE, None)
    section['lease'] = lease if isinstance(lease, dict) and lease.get('expires', 0) > time.time() else None
    record = section['records'].get('xfs')
    uuid = ((record or {}).get('md') or {}).get('uuid') if isinstance(record, dict) else None
    kernel = None
    if isinstance(uuid, str) and uuid and '/' not in uuid:
        link = os.path.join(devfs_root, 'disk', 'by-id', 'md-uuid-' + uuid)
        if os.path.islink(link):
            kernel = os.path.basename(os.path.realpath(link))
    section['volume'] = records.volume_from_record(record, kernel)
    try:
        with open(os.path.join(proc_root, 'sys', 'kernel', 'osrelease')) as handle:
            section['kernel'] = {'release': handle.read().strip() or None}
    except (IOError, OSError, UnicodeDecodeError):
        section['kernel'] = {'release': None}
    return section


def _guarded(name, collector):
    """Run one collector; an unexpected exception becomes the section's only error."""
    try:
        return collector()
    except Exception as e:  # facts must never fail a play: report instead
        return {'errors': ['%s collector failed unexpectedly: %s: %s' % (name, type(e).__name__, e)]}
