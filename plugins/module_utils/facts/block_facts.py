# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Block layer queue facts of the NVMe namespaces (/sys/block/<dev>/queue, mq/)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    block_stat,
    isdir,
    listdir,
    read_int,
    read_scheduler,
    read_str,
)

NVME_PARAMS = ('io_queue_depth', 'poll_queues', 'write_queues')


def _bool_flag(value):
    return None if value is None else bool(value)


def module_params(ctx):
    """nvme / nvme_core module parameters that bound the tag-set depth and queue maps."""
    params = dict(('nvme_%s_param' % name, read_int(ctx.sys('module', 'nvme', 'parameters', name)))
                  for name in NVME_PARAMS)
    multipath = read_str(ctx.sys('module', 'nvme_core', 'parameters', 'multipath'))
    params['nvme_core_multipath'] = None if multipath is None else multipath.upper() in ('Y', '1')
    return params


def hw_contexts(ctx, name):
    """Count and tag depth of the blk-mq hardware contexts (None for bio-based devices)."""
    mq = ctx.sys('block', name, 'mq')
    if not isdir(mq):
        return None, None
    contexts = [entry for entry in listdir(mq) if entry.isdigit() and isdir(os.path.join(mq, entry))]
    depth = None
    if contexts:
        depth = read_int(os.path.join(mq, contexts[0], 'nr_tags'))
    return len(contexts), depth


def queue_facts(ctx, name, params):
    queue = ctx.sys('block', name, 'queue')
    sched = read_scheduler(os.path.join(queue, 'scheduler'))
    contexts, tags = hw_contexts(ctx, name)
    tag_source = 'mq' if tags is not None else None
    if tags is None and contexts:
        tags = params.get('nvme_io_queue_depth_param')
        tag_source = 'module_param' if tags is not None else None
    return {
        'name': name,
        'device': os.path.join('/dev', name),
        'scheduler': sched['active'],
        'schedulers_available': sched['available'],
        'nr_requests': read_int(os.path.join(queue, 'nr_requests')),
        'read_ahead_kb': read_int(os.path.join(queue, 'read_ahead_kb')),
        'max_sectors_kb': read_int(os.path.join(queue, 'max_sectors_kb')),
        'max_hw_sectors_kb': read_int(os.path.join(queue, 'max_hw_sectors_kb')),
        'nomerges': read_int(os.path.join(queue, 'nomerges')),
        'rq_affinity': read_int(os.path.join(queue, 'rq_affinity')),
        'io_poll': _bool_flag(read_int(os.path.join(queue, 'io_poll'))),
        'write_cache': read_str(os.path.join(queue, 'write_cache')) or None,
        'rotational': _bool_flag(read_int(os.path.join(queue, 'rotational'))),
        'hw_contexts': contexts,
        'hw_tag_depth': tags,
        'hw_tag_depth_source': tag_source,
        # the sectors (512 bytes) written since boot: a run's writes to the drive are the change between gathers
        'sectors_written': block_stat(ctx.sysfs_root, name)['sectors_written'],
    }


def collect(ctx, inv):
    """The ``block`` section: one entry per NVMe namespace block device."""
    params = module_params(ctx)
    devices = [queue_facts(ctx, name, params) for name in inv.namespace_names()]
    section = {'devices': devices, 'errors': []}
    section.update(params)
    return section
