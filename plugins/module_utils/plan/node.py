# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's plan: what the run will do to it, layer by layer, decided before anything changes (pure).

:func:`node_plan` takes the node's facts (``ansible_facts.checkpoint_io``, the ``state`` section with the records),
the checked ``checkpoint_io_*`` inputs and the role settings (each role's defaults, the inventory's values over
them) and returns the plan: the drives (one selection verdict), the per-rank queue depth policy (depth.py), and per
layer in the seed's order the target it will set with the reason (layers.py). The ``checkpoint_io_plan`` action
gathers the facts once, calls it, records the plan on the node and writes it on the controller; the plays apply
their section. :func:`plan_lines` is what ``--check`` prints.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan import layers
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan.depth import depth_policy
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

SCHEMA_VERSION = 1
# The seed's order of the decisions. The plays apply them in this order, except that fabric connections are made
# first: the namespaces they bring are drives the block layer and xfs steps tune (docs/architecture.md).
ORDER = ('gds', 'io_uring_engine', 'block_layer', 'xfs', 'deepspeed_config', 'nvmeof_rdma', 'thermal_validate',
         'verification')
APPLY_ORDER = ('nvmeof_rdma',) + tuple(step for step in ORDER if step != 'nvmeof_rdma')


def node_plan(facts, inputs, settings, host=None, made_at=None):
    """The plan of one node (see the module docstring). Never raises on what a node or an inventory holds: what
    stops a layer is in its ``errors``, what stops the node before anything changes in ``problems``."""
    facts = facts if isinstance(facts, dict) else {}
    inputs = inputs if isinstance(inputs, dict) else {}
    settings = settings if isinstance(settings, dict) else {}
    drives = layers.drives(facts, inputs, settings)
    directory = layers.checkpoint_dir(inputs, settings)
    block = settings.get('deepspeed_config_block_size', '1M')
    try:
        block = parse_size(block, 'deepspeed_config_block_size')
    except (TypeError, ValueError):
        block = None
    depth = depth_policy(facts, inputs.get('checkpoint_io_queue_depth'), directory, block,
                         inputs.get('checkpoint_io_ranks'), settings.get('deepspeed_config_sweep_depths'))
    gds = layers.gds(facts, inputs, settings, depth, directory)
    engine = layers.io_uring_engine(facts, inputs, settings, depth, drives['selected'])
    plan = {
        'schema_version': SCHEMA_VERSION, 'host': host, 'made_at': made_at, 'order': list(APPLY_ORDER),
        'problems': list(drives['problems']), 'drives': drives, 'checkpoint_dir': directory, 'queue_depth': depth,
        'gds': gds,
        'io_uring_engine': engine,
        'block_layer': layers.block_layer(facts, settings, drives['selected']),
        'xfs': layers.xfs(facts, inputs, settings, drives['selected']),
        'deepspeed_config': layers.deepspeed_config(facts, inputs, settings, depth, directory, drives['selected'],
                                                    engine),
        'nvmeof_rdma': layers.nvmeof_rdma(facts, settings),
        'thermal_validate': layers.thermal_validate(inputs, settings, depth, directory),
        'verification': layers.verification(inputs, depth, directory),
    }
    return plan


def _section_line(name, part):
    if 'skip' in part:
        return '%s: skipped (%s)' % (name, part['skip'])
    errors = part.get('errors') or []
    tail = (' - STOPS: %s' % '; '.join(errors)) if errors else ''
    if name == 'gds':
        text = 'mode %s (%s); cufile.json %s: %s; proof: %s' % (
            part.get('mode'), part.get('reason'), part.get('cufile_path') or '(not managed)',
            ', '.join('%s=%s' % item for item in sorted((part.get('cufile_set') or {}).items())) or 'kept',
            part.get('proof'))
    elif name == 'io_uring_engine':
        text = 'io_uring for %s, memlock %s%s' % (
            part.get('training_user'), part.get('memlock'),
            (' = %d MiB (%s)' % (part['memlock_bound_bytes'] // 1048576, part.get('memlock_reason')))
            if part.get('memlock_bound_bytes') else '')
    elif name == 'block_layer':
        text = '; '.join('%s %s' % (drive, ', '.join('%s=%s' % item for item in sorted(value['after'].items())))
                         for drive, value in sorted((part.get('drives') or {}).items())) or 'no drive'
    elif name == 'xfs':
        md = part.get('md') or {}
        text = '%s: %s%s, mounted on %s, checkpoint directory %s' % (
            part.get('action'), ('md RAID0 of %s, chunk %s KiB' % (', '.join(md.get('members') or []), md.get('chunk'))
                                 if md else part.get('target')),
            ', %s AGs' % part['agcount'] if part.get('agcount') else '', part.get('mount_point'),
            part.get('checkpoint_dir'))
    elif name == 'deepspeed_config':
        aio = part.get('aio') or {}
        writer = part.get('writer') or {}
        text = '%s: aio block_size %s, queue_depth %s (%s), use_gds %s; checkpoint.writer %s' % (
            ', '.join(part.get('files') or []), aio.get('block_size'),
            aio.get('queue_depth') if aio.get('queue_depth') is not None else 'measured in this run',
            part.get('queue_depth_reason'), aio.get('use_gds'),
            ', '.join('%s=%s' % item for item in (writer.get('section') or {}).items()) + ' (' + str(writer.get('reason'))
            + ')' if writer.get('manage') else (writer.get('reason') or 'not planned'))
    elif name == 'nvmeof_rdma':
        text = '; '.join('%s over %s at %s (%s), queue size %s' % (
            t['nqn'], t['transport'], t['address'], 'connected' if t['connected'] else 'to connect',
            t['queue_size']) for t in part.get('targets') or []) or 'no usable target'
    elif name == 'thermal_validate':
        text = '%d s on %s, %s ranks at depth %s' % (
            part.get('duration_s') or 0, ', '.join(part.get('dirs') or []), part.get('ranks'),
            part.get('queue_depth') if part.get('queue_depth') is not None else 'the measured one')
    else:
        text = '%s on %s, %s ranks, %s repeats' % (part.get('total_size'), ', '.join(part.get('dirs') or []),
                                                   part.get('ranks'), part.get('repeats'))
    return '%s: %s%s' % (name, text, tail)


def plan_lines(plan):
    """The plan as lines a person reads, in the order the run applies it."""
    drives = plan.get('drives') or {}
    lines = ['drives: %s' % (', '.join('%s (%s)' % (d.get('device'), d.get('serial')) for d in drives.get('selected')
                                       or []) or 'none')]
    lines += ['STOPS the node before anything changes: %s' % problem for problem in plan.get('problems') or []]
    lines += ['note: %s' % warning for warning in drives.get('warnings') or []]
    lines.append('queue depth per rank: %s' % (plan.get('queue_depth') or {}).get('reason'))
    for name in plan.get('order') or APPLY_ORDER:
        if isinstance(plan.get(name), dict):
            lines.append(_section_line(name, plan[name]))
    return lines
