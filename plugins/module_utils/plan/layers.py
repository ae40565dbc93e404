# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One section of a node's plan per layer, in the seed's order (pure functions over the facts and settings).

Each function takes the node's facts (``ansible_facts.checkpoint_io``), the checked ``checkpoint_io_*`` inputs, the
role settings (each role's defaults with the inventory's values over them) and what the earlier sections decided,
and returns its section: the target it will set and why, or ``skip`` with the reason. Each calls the same pure
function its role applies with (gds_plan.role_plan, engine_access.memlock_need, block_queue.plan,
xfs_plan.plan_volume, fabric_plan.target_errors); a section never raises: what stops it is in its ``errors``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import block_queue
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import writer as ds_writer
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring import engine_access
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fabric import fabric_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds import gds_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import xfs_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.records import own_holders
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import (
    drive_verdict,
    select_drives,
    selection_problems,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

DRIVE_KEYS = ('name', 'device', 'serial', 'model', 'nsid', 'wwid', 'size_bytes', 'matched_by')


def _bytes(value, name):
    try:
        return parse_size(value, name)
    except (TypeError, ValueError):
        return None


def drives(facts, inputs, settings):
    """The one drive selection of the run: {selected: [...], errors, warnings, problems}. ``problems`` are what
    stops the node before anything changes (the first play's check): the selection against this node and, where
    the xfs role builds the volume, ``xfs_force`` against its namespaces."""
    nvme = section(facts, 'nvme')
    force = settings.get('xfs_force') if inputs.get('checkpoint_io_xfs') else None
    held = own_holders(facts) or None
    problems = selection_problems(nvme, inputs.get('checkpoint_io_data_drives'), allow_held_by=held, force=force)
    try:
        chosen = select_drives(nvme, inputs.get('checkpoint_io_data_drives'), allow_held_by=held)
        verdict = drive_verdict(chosen)
    except ValueError as exc:
        return {'selected': [], 'errors': [str(exc)], 'warnings': [], 'problems': problems or [str(exc)]}
    selected = [dict((key, drive.get(key)) for key in DRIVE_KEYS) for drive in chosen['selected']]
    return {'selected': selected, 'errors': verdict['errors'], 'warnings': verdict['warnings'],
            'problems': problems, 'refused': [entry.get('reason') for entry in chosen['refused']]}


def checkpoint_dir(inputs, settings):
    """Where the checkpoint goes: the verification's first directory, else checkpoint_io_checkpoint_dir, else the
    xfs role's checkpoint directory where the run builds the volume (None: none)."""
    dirs = inputs.get('checkpoint_io_verify_dirs') or []
    if dirs:
        return dirs[0]
    if inputs.get('checkpoint_io_checkpoint_dir'):
        return inputs['checkpoint_io_checkpoint_dir']
    if inputs.get('checkpoint_io_xfs'):
        return settings.get('xfs_checkpoint_dir') or settings.get('xfs_mount_point')
    return None


def gds(facts, inputs, settings, depth, directory):
    """Step 1: the GDS mode, the cufile.json keys, and when the path is proven."""
    if not inputs.get('checkpoint_io_gds', True):
        return {'skip': 'checkpoint_io_gds is false'}
    block = _bytes(settings.get('gds_block_size', '1M'), 'gds_block_size')
    ranks = int(inputs.get('checkpoint_io_ranks') or 8)
    fstype = 'xfs' if inputs.get('checkpoint_io_xfs') else None
    try:
        decided = gds_plan.role_plan(section(facts, 'gds'), fstype, settings.get('gds_mode', 'auto'),
                                     inputs.get('checkpoint_io_gds_policy', 'preferred'), block, ranks,
                                     depth['sizing'], settings.get('gds_poll_mode'),
                                     settings.get('gds_allow_compat_mode'))
    except (ValueError, TypeError, KeyError) as exc:
        return {'errors': ['gds: %s' % exc]}
    proof = ('not asked (gds_verify false)' if not settings.get('gds_verify', True) else
             'no checkpoint directory' if not directory else
             'a cuFile write in %s once it exists (after the xfs step, in this run)' % directory)
    return {'mode': decided['mode'], 'reason': decided['reason'], 'policy': decided['policy'],
            'policy_failure': decided['policy_failure'], 'queue_depth': depth['sizing'],
            'cufile_path': settings.get('gds_cufile_path', '/etc/cufile.json')
            if settings.get('gds_manage_cufile', True) else None,
            'cufile_set': decided['cufile']['set'], 'cufile_notes': decided['cufile']['notes'],
            'checkpoint_dir': directory, 'proof': proof,
            'errors': [decided['policy_failure']] if decided['policy_failure'] else []}


def io_uring_engine(facts, inputs, settings, depth, selected):
    """Step 2: the training user's io_uring access and memlock bound (ranks x sized depth x block + the engine's
    rings)."""
    user = inputs.get('checkpoint_io_training_user') or 'root'
    ranks = int(inputs.get('checkpoint_io_ranks') or 8)
    block = _bytes(settings.get('io_uring_engine_block_size', '1M'), 'io_uring_engine_block_size')
    target = settings.get('io_uring_engine_target_depth', 32)
    memlock = settings.get('io_uring_engine_memlock', 'auto')
    out = {'training_user': user, 'ranks': ranks, 'rank_queue_depth': depth['sizing'], 'memlock': memlock,
           'io_uring_disabled': (section(facts, 'io_uring') or {}).get('disabled'), 'errors': []}
    if memlock == 'auto' and block:
        try:
            need = engine_access.memlock_need(ranks, depth['sizing'], block, len(selected), int(target))
            out.update(memlock_bound_bytes=need['bound_bytes'], memlock_reason=need['formula'])
        except (ValueError, TypeError) as exc:
            out['errors'].append('io_uring_engine memlock: %s' % exc)
    return out


def _wanted_queue(settings):
    wanted = {'scheduler': settings.get('block_layer_scheduler'),
              'nr_requests': settings.get('block_layer_nr_requests'),
              'max_sectors_kb': settings.get('block_layer_max_sectors_kb'),
              'nomerges': settings.get('block_layer_nomerges'),
              'rq_affinity': settings.get('block_layer_rq_affinity')}
    given = {}
    read_ahead = settings.get('block_layer_read_ahead')
    if read_ahead is not None:
        try:
            wanted['read_ahead_kb'] = block_queue.resolve_read_ahead(read_ahead)
            given['read_ahead_kb'] = read_ahead
        except (TypeError, ValueError) as exc:
            return None, given, ['block_layer_read_ahead: %s' % exc]
    return dict((k, v) for k, v in wanted.items() if v is not None), given, []


def block_layer(facts, settings, selected):
    """Step 3: per selected drive, the queue values it gets, the writes that take it there and why."""
    wanted, given, errors = _wanted_queue(settings)
    if errors:
        return {'errors': errors, 'drives': {}}
    devices = dict((dev.get('name'), dev) for dev in (section(facts, 'block').get('devices') or [])
                   if isinstance(dev, dict))
    out = {'wanted': wanted, 'drives': {}, 'errors': [], 'persist': bool(settings.get('block_layer_persist', True))}
    for drive in selected:
        current = devices.get(drive['name'])
        if current is None:
            out['errors'].append('%s: no block queue facts' % drive['name'])
            continue
        planned = block_queue.plan(current, wanted, current, drive['name'], given)
        out['errors'].extend(planned['errors'])
        out['drives'][drive['name']] = {'after': planned['after'], 'before': planned['before'],
                                        'writes': planned['writes'], 'warnings': planned['warnings']}
    return out


XFS_SETTINGS = ('force', 'raid_level', 'md_name', 'md_metadata', 'chunk', 'agcount', 'log_device', 'log_size',
                'label', 'mount_point', 'mount_options', 'fstab_options', 'checkpoint_dir', 'training_user',
                'training_group', 'checkpoint_dir_mode')


def xfs(facts, inputs, settings, selected):
    """Step 4: the volume (md RAID0 where there are several drives, the XFS geometry, the mount), or skip."""
    if not inputs.get('checkpoint_io_xfs'):
        return {'skip': 'checkpoint_io_xfs is false'}
    volume = section(facts, 'state').get('volume') or {}
    wanted = dict((key, settings.get('xfs_' + key)) for key in XFS_SETTINGS)
    try:
        made = xfs_plan.plan_volume(selected, section(facts, 'nvme').get('controllers'), wanted)
    except (ValueError, TypeError, KeyError) as exc:
        return {'errors': ['xfs: %s' % exc]}
    keep = ('target', 'md', 'stripe', 'agcount', 'mount_point', 'checkpoint_dir', 'label', 'mount_options',
            'warnings', 'errors', 'target_size_bytes', 'agcount_rule')
    out = dict((key, made.get(key)) for key in keep if key in made)
    out['exists'] = bool(volume.get('exists'))
    out['action'] = ('keep the volume the collection made (%s)' % (volume.get('mount_point') or '?')
                     if volume.get('exists') else 'build it on %s' % ', '.join(d['device'] for d in selected))
    return out


def _writer(facts, inputs, settings, depth, selected, engine):
    """DeepSpeed's checkpoint writer (module_utils/deepspeed/writer.py) as the role will plan it: the aio depth the
    run writes (the sizing depth where the sweep decides), the selected drives' NUMA nodes, the memlock bound the
    io_uring_engine step plans."""
    options = {'manage': inputs.get('checkpoint_io_deepspeed_writer') or settings.get('deepspeed_config_writer', 'auto'),
               'memlock': settings.get('deepspeed_config_writer_memlock', 'auto')}
    for key in ('io_buffer_size', 'io_buffer_double', 'data_parallel'):
        options[key] = settings.get('deepspeed_config_writer_' + key, True if key == 'io_buffer_double' else 'auto')
    aio = {'block_size': _bytes(settings.get('deepspeed_config_block_size', '1M'), 'deepspeed_config_block_size'),
           'queue_depth': depth['per_rank'] or depth['sizing'],
           'intra_op_parallelism': settings.get('deepspeed_config_intra_op_parallelism', 1)}
    options['block_size'] = settings.get('deepspeed_config_writer_block_size', 'aio')
    options['sweep'] = depth.get('sweep')  # the recorded sweep (none before the first)
    memlock = engine.get('memlock_bound_bytes') if engine.get('memlock') == 'auto' else engine.get('memlock')
    try:
        return ds_writer.node_writer_plan(facts, options, aio, int(inputs.get('checkpoint_io_ranks') or 8),
                                          [drive.get('name') for drive in selected], memlock)
    except (ValueError, TypeError) as exc:
        return {'manage': None, 'errors': ['deepspeed_config writer: %s' % exc], 'lines': [str(exc)]}


def deepspeed_config(facts, inputs, settings, depth, directory, selected=(), engine=None):
    """Step 5: the aio section merged into each ds_config file, and DeepSpeed's checkpoint writer beside it."""
    files = inputs.get('checkpoint_io_deepspeed_configs') or []
    if not files:
        return {'skip': 'no checkpoint_io_deepspeed_configs'}
    path = (section(facts, 'gds') or {}).get('path')
    asked = str(settings.get('deepspeed_config_use_gds', 'auto')).lower()
    use_gds = (path == 'dma') if asked == 'auto' else asked == 'true'
    writer = _writer(facts, inputs, settings, depth, list(selected or []), engine or {})
    return {'files': files, 'checkpoint_dir': directory, 'writer': writer, 'errors': list(writer.get('errors') or []),
            'aio': {'block_size': writer.get('block_size') if writer.get('manage') and writer.get('block_size')
                    else _bytes(settings.get('deepspeed_config_block_size', '1M'), 'deepspeed_config_block_size'),
                    'queue_depth': writer.get('queue_depth') if writer.get('manage') and writer.get('queue_depth')
                    and depth['per_rank'] is not None else depth['per_rank'],
                    'intra_op_parallelism': settings.get('deepspeed_config_intra_op_parallelism', 1),
                    'single_submit': bool(settings.get('deepspeed_config_single_submit', False)),
                    'overlap_events': bool(settings.get('deepspeed_config_overlap_events', True)),
                    'use_gds': use_gds},
            'queue_depth_reason': depth['reason'],
            'use_gds_reason': ('asked: %s' % asked) if asked != 'auto' else
                              ('the GDS DMA path works' if use_gds else 'the GDS path is %s' % (path or 'unknown')),
            'thermal': 'a back-off the thermal validation records in this run is written here in this run'}


def nvmeof_rdma(facts, settings):
    """Step 6 (connected first, before the layers that use the namespaces): each fabric target, whether it is
    connected now, and how its queue size is chosen."""
    targets = settings.get('nvmeof_rdma_targets') or []
    if not targets:
        return {'skip': 'no nvmeof_rdma_targets'}
    subsystems = set()
    for ctrl in section(facts, 'nvme').get('controllers') or []:
        if isinstance(ctrl, dict) and ctrl.get('subsysnqn') and ctrl.get('transport') in ('tcp', 'rdma'):
            subsystems.add(ctrl['subsysnqn'])
    out = {'targets': [], 'errors': []}
    for index, target in enumerate(targets):
        errors = fabric_plan.target_errors(target, index) if isinstance(target, dict) else ['not a dict']
        out['errors'].extend(errors)
        if errors:
            continue
        size = target.get('queue_size')
        out['targets'].append({
            'nqn': target.get('nqn'), 'transport': target.get('transport'), 'address': target.get('address'),
            'connected': target.get('nqn') in subsystems,
            'queue_size': size if size is not None else
            "Little's Law with the round trip measured at connect (power of two, %d..%d)"
            % (fabric_plan.QUEUE_SIZE_MIN, fabric_plan.QUEUE_SIZE_MAX)})
    return out


def thermal_validate(inputs, settings, depth, directory):
    """Step 7: the sustained write and its shape."""
    if not inputs.get('checkpoint_io_thermal_validate', True):
        return {'skip': 'checkpoint_io_thermal_validate is false'}
    dirs = inputs.get('checkpoint_io_verify_dirs') or ([directory] if inputs.get('checkpoint_io_xfs') else [])
    if not dirs:
        return {'skip': 'no checkpoint directory (checkpoint_io_xfs or checkpoint_io_verify_dirs)'}
    return {'dirs': dirs, 'duration_s': inputs.get('checkpoint_io_thermal_duration'),
            'ranks': inputs.get('checkpoint_io_verify_ranks') or inputs.get('checkpoint_io_ranks'),
            'queue_depth': depth['per_rank'], 'backoff': bool(settings.get('thermal_validate_backoff', True)),
            'then': 'a back-off it finds lowers the ds_config depth in this run'}


def verification(inputs, depth, directory):
    """Step 8: the checkpoint write after tuning, compared with the one before."""
    dirs = inputs.get('checkpoint_io_verify_dirs') or ([directory] if directory else [])
    if not dirs:
        return {'skip': 'no directory to write (checkpoint_io_verify_dirs, or the xfs role\'s volume)'}
    return {'dirs': dirs, 'ranks': inputs.get('checkpoint_io_verify_ranks') or inputs.get('checkpoint_io_ranks'),
            'total_size': inputs.get('checkpoint_io_verify_total_size'),
            'repeats': inputs.get('checkpoint_io_verify_repeats'), 'queue_depth': depth['per_rank'],
            'baseline': 'measured before tuning' if inputs.get('checkpoint_io_baseline_measure', True) else 'off'}
