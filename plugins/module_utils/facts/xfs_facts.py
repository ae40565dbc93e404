# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""XFS facts for the mounts holding the checkpoint paths: mount options,
geometry from xfs_info and the md array underneath."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.blockdev import (
    BlockTopology,
    mount_for_path,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    listdir,
    read_int,
    read_str,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs import (
    mount_stripe_bytes,
    parse_mount_options,
    parse_xfs_info,
)

GEOMETRY_KEYS = ('agcount', 'agsize_bytes', 'block_size', 'sector_size', 'size_bytes', 'sunit_bytes',
                 'swidth_bytes', 'isize')


def md_facts(ctx, name):
    """Level, chunk and members of an md array from /sys/block/<md>/md (None when not md)."""
    base = ctx.sys('block', name, 'md')
    level = read_str(os.path.join(base, 'level'))
    if level is None:
        return None
    return {
        'name': name,
        'level': level or None,
        'chunk_bytes': read_int(os.path.join(base, 'chunk_size')) or None,
        'raid_disks': read_int(os.path.join(base, 'raid_disks')),
        'array_state': read_str(os.path.join(base, 'array_state')) or None,
        'degraded': None if read_int(os.path.join(base, 'degraded')) is None
        else read_int(os.path.join(base, 'degraded')) > 0,
        'members': listdir(ctx.sys('block', name, 'slaves')),
    }


def _find_md(ctx, topo, name):
    """The md array ``name`` is, or sits on (dm over md); None otherwise."""
    for dev in [name] + sorted(topo.lower_devices(name) - set([name])):
        if dev.startswith('md'):
            md = md_facts(ctx, dev)
            if md:
                return md
    return None


def xfs_info(ctx, path, mount_point):
    geometry = dict((key, None) for key in GEOMETRY_KEYS)
    geometry['log'] = None
    if not path:
        return geometry, None
    res = ctx.run([path, mount_point])
    if res['error']:
        return geometry, res['error']
    parsed = parse_xfs_info(res['stdout'])
    for key in GEOMETRY_KEYS:
        geometry[key] = parsed.get(key)
    log = parsed.get('log')
    if isinstance(log, dict):
        geometry['log'] = {'internal': log.get('internal'), 'device': log.get('device'),
                           'bytes': log.get('bytes')}
    errors = parsed.get('errors') or {}
    problems = ['%s: %s' % (k, errors[k]) for k in sorted(errors)]
    if res['stderr'].strip():
        problems.append('stderr (rc=0): %s' % res['stderr'].strip()[:300])
    error = 'xfs_info %s: %s' % (mount_point, '; '.join(problems)) if problems else None
    return geometry, error


def filesystem_facts(ctx, topo, entry, tool, wanted_by):
    options = parse_mount_options(entry['options'])
    stripes = mount_stripe_bytes(options)
    name = topo.resolve_source(entry['source'], entry['mount_point'])
    geometry, error = xfs_info(ctx, tool, entry['mount_point'])
    facts = {
        'device': entry['source'],
        'kernel_name': name,
        'mount_point': entry['mount_point'],
        'checkpoint_paths': wanted_by,
        'options': options,
        'mount_sunit_bytes': stripes.get('sunit_bytes'),
        'mount_swidth_bytes': stripes.get('swidth_bytes'),
        'md': _find_md(ctx, topo, name) if name else None,
    }
    facts.update(geometry)
    return facts, error


def collect(ctx, checkpoint_paths=None):
    """The ``xfs`` section."""
    errors = []
    topo = BlockTopology(ctx)
    mounts = topo.mounts()
    paths = []
    selected = []
    for path in checkpoint_paths or []:
        entry = mount_for_path(mounts, path)
        paths.append({
            'path': path,
            'mount_point': entry['mount_point'] if entry else None,
            'fstype': entry['fstype'] if entry else None,
            'is_xfs': bool(entry and entry['fstype'] == 'xfs'),
        })
        if entry and entry['fstype'] == 'xfs' and entry not in selected:
            selected.append(entry)
    if not checkpoint_paths:
        selected = [entry for entry in mounts if entry['fstype'] == 'xfs']

    tool = ctx.which('xfs_info', ['/sbin', '/usr/sbin']) if selected else None
    if selected and not tool:
        errors.append('xfs_info not found in PATH: geometry facts are None')
    filesystems = []
    for entry in selected:
        wanted_by = [p['path'] for p in paths if p['mount_point'] == entry['mount_point']]
        facts, error = filesystem_facts(ctx, topo, entry, tool, wanted_by)
        filesystems.append(facts)
        if error:
            errors.append(error)
    return {'filesystems': filesystems, 'checkpoint_paths': paths, 'errors': errors}
