# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect Storage facts: nvidia_fs, libcufile, cufile.json (and the
per-process overrides that bypass it), gdscheck -p, and the derived I/O path
(dma / compat / unavailable) with its reason.

A cuFile call succeeds in compatibility mode too, so the path is reported
explicitly instead of being inferred from "it ran"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.context import find_library
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds import (
    CUFILE_DEFAULTS,
    parse_cufile_json,
    parse_gdscheck,
    parse_nvidia_fs_stats,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.sysfs import (
    exists,
    isdir,
    listdir,
    read_int,
    read_str,
    read_text,
)

ENV_OVERRIDE = 'CUFILE_ENV_PATH_JSON'
LOCAL_CUFILE = 'local_cufile.json'
LOCAL_SEARCH_DEPTH = 2
SONAME_VERSION_RE = re.compile(r'\.so\.(\d+(?:\.\d+)*)$')
GDSCHECK_TIMEOUT_S = 120


def _errors_list(prefix, errors):
    if not errors:
        return []
    return ['%s: %s' % (prefix, errors[key]) for key in sorted(errors)]


def _version_key(path):
    match = SONAME_VERSION_RE.search(path)
    return [int(p) for p in match.group(1).split('.')] if match else []


def libcufile(ctx):
    """(path, version) of the libcufile shared object, resolved to its real file."""
    extra = []
    for pattern in ctx.cuda_globs:
        extra.append(os.path.join(pattern, 'targets', '*', 'lib', 'libcufile.so*'))
        extra.append(os.path.join(pattern, 'lib64', 'libcufile.so*'))
    found = find_library(ctx, 'libcufile', extra)
    if not found:
        return None, None
    real = []
    for path in found:
        target = os.path.realpath(path)
        if os.path.exists(target) and target not in real:
            real.append(target)
    if not real:
        return found[0], None
    best = sorted(real, key=_version_key)[-1]
    match = SONAME_VERSION_RE.search(os.path.basename(best))
    return best, (match.group(1) if match else None)


def nvidia_fs(ctx):
    """nvidia_fs module state from /proc/driver/nvidia-fs and /sys/module/nvidia_fs."""
    proc_dir = ctx.proc('driver', 'nvidia-fs')
    mod_dir = ctx.sys('module', 'nvidia_fs')
    loaded = exists(os.path.join(proc_dir, 'version')) or isdir(mod_dir)
    version = read_str(os.path.join(mod_dir, 'version')) or None
    if version is None:
        text = read_str(os.path.join(proc_dir, 'version'))
        if text:
            version = text.split(':', 1)[1].strip() if ':' in text else text
    rw_stats = read_int(os.path.join(mod_dir, 'parameters', 'rw_stats_enabled'))
    stats = None
    stats_text = read_text(os.path.join(proc_dir, 'stats'))
    if stats_text:
        parsed = parse_nvidia_fs_stats(stats_text)
        stats = {
            'io_stats_enabled': parsed.get('io_stats_enabled'),
            'reads': parsed.get('reads'),
            'writes': parsed.get('writes'),
        }
        version = version or parsed.get('nvfs_version')
    return {
        'nvidia_fs_loaded': bool(loaded),
        'nvidia_fs_version': version or None,
        'rw_stats_enabled': None if rw_stats is None else bool(rw_stats),
        'nvidia_fs_stats': stats,
    }


def cufile_file(path):
    """{path, exists, properties, set, errors} of one cufile.json-format file."""
    facts = {'path': path, 'exists': os.path.isfile(path), 'properties': None, 'set': [], 'errors': []}
    if not facts['exists']:
        return facts
    text = read_text(path)
    if text is None:
        facts['errors'].append('%s: not readable' % path)
        return facts
    parsed = parse_cufile_json(text)
    facts['properties'] = parsed.get('properties')
    facts['set'] = parsed.get('set') or []
    facts['errors'] = _errors_list(path, parsed.get('errors'))
    return facts


def local_cufile_files(job_dirs):
    """local_cufile.json files DeepSpeed's GDS handle wrote under the job dirs (bounded depth)."""
    found = []
    for top in job_dirs:
        top = os.path.normpath(top)
        base_depth = top.count(os.sep)
        for root, dirs, files in os.walk(top):
            if root.count(os.sep) - base_depth >= LOCAL_SEARCH_DEPTH:
                dirs[:] = []
            dirs.sort()
            if LOCAL_CUFILE in files:
                found.append(os.path.join(root, LOCAL_CUFILE))
    return found


def _prop(props, key, legacy=None):
    if props is None:
        return CUFILE_DEFAULTS.get(key)
    if key in props and props[key] is not None:
        return props[key]
    if legacy and props.get(legacy) is not None:
        return props[legacy]
    return CUFILE_DEFAULTS.get(key)


def run_gdscheck(ctx):
    dirs = []
    for pattern in ctx.cuda_globs:
        for directory in sorted(glob.glob(os.path.join(pattern, 'gds', 'tools'))):
            if directory not in dirs:
                dirs.append(directory)
    path = ctx.which('gdscheck', dirs)
    if not path:
        return None, None, None
    res = ctx.run([path, '-p'], timeout_s=GDSCHECK_TIMEOUT_S)
    if res['error']:
        return path, None, res['error']
    parsed = parse_gdscheck(res['stdout'])
    summary = dict((key, parsed.get(key)) for key in (
        'gds_version', 'nvidia_fs_version', 'libcufile_version', 'nvme_supported', 'nvme_modes',
        'use_compat_mode', 'iommu_enabled'))
    summary['nvme_driver'] = (parsed.get('drivers') or {}).get('NVMe')
    summary['gpus'] = parsed.get('gpus') or []
    problems = _errors_list('gdscheck -p', parsed.get('errors'))
    if res['stderr'].strip():
        problems.append('gdscheck -p stderr (rc=0): %s' % res['stderr'].strip()[:300])
    return path, summary, '; '.join(problems) or None


def derive_path(facts, effective, source):
    """(path, reason) from the gathered facts and the effective cuFile properties."""
    if not facts['gpus']:
        return 'unavailable', 'no NVIDIA GPU: /proc/driver/nvidia/gpus is empty'
    if not facts['libcufile']:
        return 'unavailable', 'libcufile not found (ldconfig -p, library dirs, /usr/local/cuda*): no cuFile'
    reasons = []
    if not facts['nvidia_fs_loaded']:
        reasons.append('nvidia_fs kernel module not loaded')
    if _prop(effective, 'properties.force_compat_mode'):
        reasons.append('properties.force_compat_mode is true in %s' % source)
    gdscheck = facts.get('gdscheck')
    if gdscheck and gdscheck.get('nvme_supported') is False:
        raw = (gdscheck.get('nvme_driver') or {}).get('raw')
        reasons.append('gdscheck -p reports NVMe: %s' % (raw or 'Unsupported'))
    if reasons:
        allow = _prop(effective, 'properties.allow_compat_mode', legacy='properties.use_compat_mode')
        if allow:
            return 'compat', '%s; cuFile falls back to POSIX I/O through the CPU (allow_compat_mode true)' % (
                '; '.join(reasons))
        return 'unavailable', '%s; allow_compat_mode is false in %s, so cuFile I/O fails' % (
            '; '.join(reasons), source)
    detail = 'nvidia_fs %s loaded, libcufile %s' % (facts['nvidia_fs_version'] or '(version unknown)',
                                                    facts['libcufile_version'] or '(version unknown)')
    if gdscheck and gdscheck.get('nvme_supported'):
        return 'dma', detail + ', gdscheck -p reports NVMe supported'
    return 'dma', detail + ' (gdscheck -p not run: NVMe support not verified by NVIDIA\'s tool)'


def collect(ctx, job_dirs=None):
    """The ``gds`` section."""
    errors = []
    facts = {'gpus': len(listdir(ctx.proc('driver', 'nvidia', 'gpus')))}
    facts.update(nvidia_fs(ctx))
    path, version = libcufile(ctx)
    facts['libcufile'] = bool(path)
    facts['libcufile_path'] = path
    facts['libcufile_version'] = version

    system = cufile_file(ctx.etc('cufile.json'))
    errors.extend(system['errors'])
    facts['cufile_json'] = system

    env_path = ctx.environ.get(ENV_OVERRIDE) or None
    env_file = cufile_file(env_path) if env_path else None
    if env_file:
        errors.extend(env_file['errors'])
    locals_ = [cufile_file(p) for p in local_cufile_files(job_dirs or [])]
    for item in locals_:
        errors.extend(item['errors'])
    notes = []
    if env_path:
        notes.append('%s=%s replaces /etc/cufile.json for processes started with this environment'
                     % (ENV_OVERRIDE, env_path))
    for item in locals_:
        notes.append('%s: DeepSpeed\'s GDS handle points %s at this file, so /etc/cufile.json is bypassed '
                     'for that job' % (item['path'], ENV_OVERRIDE))
    facts['overrides'] = {'env_path_json': env_path, 'env_file': env_file, 'local_cufile_json': locals_,
                          'notes': notes}

    if env_file and env_file['properties'] is not None:
        effective, source = env_file['properties'], env_path
    elif system['properties'] is not None:
        effective, source = system['properties'], '/etc/cufile.json'
    else:
        effective, source = None, 'cuFile defaults (no cufile.json)'
    facts['effective_config_source'] = source
    facts['allow_compat_mode'] = bool(_prop(effective, 'properties.allow_compat_mode',
                                            legacy='properties.use_compat_mode'))
    facts['force_compat_mode'] = bool(_prop(effective, 'properties.force_compat_mode'))

    facts['gdscheck_path'], facts['gdscheck'] = None, None
    if facts['gpus'] and facts['libcufile']:
        facts['gdscheck_path'], facts['gdscheck'], error = run_gdscheck(ctx)
        if error:
            errors.append(error)
    facts['path'], facts['path_reason'] = derive_path(facts, effective, source)
    facts['errors'] = errors
    return facts
