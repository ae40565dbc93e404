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
import gzip
import json
import os
import pwd
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import find_library
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import (
    CUFILE_DEFAULTS,
    parse_cufile_json,
    parse_gdscheck,
    parse_nvidia_fs_stats,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds_plan import (
    nvme_unregistered,
    p2pdma_blocker,
    parse_driver_version,
    version_tuple,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.pci import acs_control, chain, relation
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    exists,
    isdir,
    listdir,
    read_int,
    read_str,
    read_text,
    realpath,
)

ENV_OVERRIDE = 'CUFILE_ENV_PATH_JSON'
LOCAL_CUFILE = 'local_cufile.json'
LOCAL_SEARCH_DEPTH = 2
SONAME_VERSION_RE = re.compile(r'\.so\.(\d+(?:\.\d+)*)$')
GDSCHECK_TIMEOUT_S = 120
# Where a training user's environment can name CUFILE_ENV_PATH_JSON (read, never written or executed).
ENV_FILES = ('environment', 'profile', 'bash.bashrc')
ENV_GLOBS = ('profile.d/*.sh', 'systemd/system/*.service', 'systemd/system/*.service.d/*.conf')
HOME_FILES = ('.bashrc', '.profile', '.bash_profile', '.zshrc', '.zprofile', '.pam_environment')
# VAR=value (shell, /etc/environment, systemd Environment=) and VAR DEFAULT=value (pam_env's .pam_environment)
ENV_RE = re.compile(r'(?<![A-Za-z0-9_])CUFILE_ENV_PATH_JSON(?:\s*=|\s+(?:DEFAULT|OVERRIDE)=)\s*["\']?([^"\'\s;]+)')
COMMENT_PREFIXES = ('#', ';', '//')
MAX_ENV_FILE = 1 << 20
MAX_PROCS = 4096
CONFIG_SPACE = 4096


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
        return 'unavailable', 'libcufile not found (the ld.so.conf directories, the library dirs, /usr/local/cuda*): no cuFile'
    reasons = []
    p2pdma = bool(_prop(effective, 'properties.use_pci_p2pdma')) and not p2pdma_blocker(facts)
    if not facts['nvidia_fs_loaded'] and not p2pdma:
        reasons.append('nvidia_fs kernel module not loaded')
    elif not p2pdma and nvme_unregistered(facts):
        reasons.append('nvme is not registered with nvidia-fs (/proc/driver/nvidia-fs/modules lists %s)'
                       % nvme_unregistered(facts))
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
    if p2pdma and not facts['nvidia_fs_loaded']:
        detail = 'PCI P2PDMA (use_pci_p2pdma in %s; kernel, CUDA and open driver support it), libcufile %s' % (
            source, facts['libcufile_version'] or '(version unknown)')
    else:
        detail = 'nvidia_fs %s loaded, libcufile %s' % (facts['nvidia_fs_version'] or '(version unknown)',
                                                        facts['libcufile_version'] or '(version unknown)')
    if gdscheck and gdscheck.get('nvme_supported'):
        return 'dma', detail + ', gdscheck -p reports NVMe supported'
    return 'dma', detail + ' (gdscheck -p not run: NVMe support not verified by NVIDIA\'s tool)'


def _read_nofollow(path, limit=MAX_ENV_FILE):
    """A file's text read without following a symlink at its name (a user's home), None when not readable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, limit).decode('utf-8', 'replace')
    except OSError:
        return None
    finally:
        os.close(fd)


def _home(user):
    try:
        return pwd.getpwnam(user).pw_dir if user else None
    except KeyError:
        return None


def _expand_home(value, home):
    """$HOME, ${HOME} and a leading ~/ as the training user's shell would expand them (nothing else is)."""
    if not home:
        return value
    if value.startswith('~/'):
        value = home + value[1:]
    return value.replace('${HOME}', home).replace('$HOME', home)


def _owner(path):
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def _training_uid(user):
    try:
        return pwd.getpwnam(user).pw_uid if user else None
    except KeyError:
        return None


def env_sources(ctx, training_user=None):
    """Where CUFILE_ENV_PATH_JSON is set for the training user's processes: /etc/environment, profile scripts,
    systemd service units, the user's shell start-up files, and the environments of live processes of root and the
    training user (another user's processes run nothing of the training job, and any user can start one naming a
    root file). Each entry says whether root alone controls its source (``trusted``: a root-owned file, a root
    process) and who owns the file it names (``target_uid``): gds_plan.override_files edits a file a user could
    have named only when it is that user's own."""
    paths = [ctx.etc(name) for name in ENV_FILES]
    for pattern in ENV_GLOBS:
        paths.extend(sorted(glob.glob(ctx.etc(pattern))))
    home = _home(training_user)
    training_uid = _training_uid(training_user)
    if home:
        paths.extend(os.path.join(home, name) for name in HOME_FILES)
    found = []
    for path in paths:
        owner = _owner(path)
        for line in (_read_nofollow(path) or '').splitlines():
            if not line.strip().startswith(COMMENT_PREFIXES):
                for value in ENV_RE.findall(line):
                    value = _expand_home(value, home)
                    found.append({'source': 'file', 'path': path, 'value': value, 'uid': owner,
                                  'trusted': owner == 0, 'target_uid': _owner(value)})
    for pid in sorted((p for p in listdir(ctx.proc()) if p.isdigit()), key=int)[:MAX_PROCS]:
        uid = _owner(ctx.proc(pid))
        if uid != 0 and (training_uid is None or uid != training_uid):
            continue
        text = _read_nofollow(ctx.proc(pid, 'environ'))
        for item in (text or '').split('\0'):
            if item.startswith(ENV_OVERRIDE + '='):
                value = item.split('=', 1)[1]
                found.append({'source': 'process', 'path': ctx.proc(pid, 'environ'), 'value': value,
                              'comm': read_str(ctx.proc(pid, 'comm')), 'uid': uid, 'trusted': uid == 0,
                              'target_uid': _owner(value)})
    return found


def kernel_facts(ctx):
    """{release, p2pdma}: CONFIG_PCI_P2PDMA from /boot/config-<release> or /proc/config.gz (None: not found)."""
    release = read_str(ctx.proc('sys', 'kernel', 'osrelease'))
    text = read_text(os.path.join(ctx.boot_root, 'config-%s' % release)) if release else None
    if text is None:
        try:
            with gzip.open(ctx.proc('config.gz'), 'rt') as handle:
                text = handle.read()
        except (OSError, EOFError):
            text = None
    p2pdma = None
    if text is not None:
        p2pdma = bool(re.search(r'^CONFIG_PCI_P2PDMA=y', text, re.M))
    return {'release': release, 'p2pdma': p2pdma}


def _cuda_order(directory):
    """/usr/local/cuda (the toolkit in use) first, then the newest version (cuda-12.8 before cuda-9.2)."""
    return (os.path.basename(directory) != 'cuda', [-n for n in (version_tuple(os.path.basename(directory)) or ())])


def cuda_version(ctx):
    """The CUDA toolkit's version from version.json (CUDA 11.1+) or version.txt under the CUDA directories."""
    found = set()
    for pattern in ctx.cuda_globs:
        found.update(glob.glob(pattern))
    for directory in sorted(found, key=_cuda_order):
        text = read_text(os.path.join(directory, 'version.json'))
        try:
            return json.loads(text)['cuda']['version']
        except (TypeError, ValueError, KeyError):
            pass
        match = re.search(r'CUDA Version\s+(\S+)', read_text(os.path.join(directory, 'version.txt')) or '')
        if match:
            return match.group(1)
    return None


def iommu_facts(ctx):
    """{mode: off | passthrough | translated | None, evidence}: the IOMMU's default domain types in sysfs, else
    the kernel command line."""
    units = listdir(ctx.sys('class', 'iommu'))
    types = set(read_str(ctx.sys('kernel', 'iommu_groups', g, 'type')) for g in listdir(ctx.sys('kernel', 'iommu_groups')))
    types.discard(None)
    cmdline = (read_str(ctx.proc('cmdline')) or '').split()
    words = [w for w in cmdline if w.split('=')[0] in ('iommu', 'intel_iommu', 'amd_iommu')]
    evidence = 'iommu units: %s; group types: %s; cmdline: %s' % (
        ', '.join(units) or 'none', ', '.join(sorted(types)) or 'none', ' '.join(words) or 'no iommu option')
    if types and types <= set(['identity']):
        mode = 'passthrough'
    elif types & set(['DMA', 'DMA-FQ']):
        mode = 'translated'
    elif not units and not types:
        mode = 'off'
    elif 'iommu=pt' in words:
        mode = 'passthrough'
    else:
        mode = None
    return {'mode': mode, 'evidence': evidence}


def _pci_device(ctx, bdf):
    return chain(realpath(ctx.sys('bus', 'pci', 'devices', bdf)))


def _acs(ctx, bdf):
    try:
        with open(ctx.sys('bus', 'pci', 'devices', bdf, 'config'), 'rb') as handle:
            data = handle.read(CONFIG_SPACE)
    except (IOError, OSError):
        data = b''
    decoded = acs_control(data)
    return {'pci': bdf, 'acs': decoded.get('present'),
            'acs_p2p_redirect': bool(decoded.get('p2p_request_redirect') or decoded.get('p2p_completion_redirect'))}


def topology_facts(ctx, gpus):
    """GPU and NVMe controller pairs on PCI: where they meet, and the ACS state of the bridges between them."""
    nvme = {}
    for ctrl in listdir(ctx.sys('class', 'nvme')):
        root, path = chain(realpath(ctx.sys('class', 'nvme', ctrl, 'device')))
        if path:
            nvme[ctrl] = (root, path)
    pairs, bridges = [], {}
    for gpu in gpus:
        located = _pci_device(ctx, gpu)
        for ctrl in sorted(nvme):
            met = relation(located, nvme[ctrl])
            pairs.append({'gpu': gpu, 'nvme': ctrl, 'relation': met['relation'], 'bridges': met['bridges']})
            for bdf in met['bridges']:
                if bdf not in bridges:
                    bridges[bdf] = _acs(ctx, bdf)
    return {'pairs': pairs, 'bridges': [bridges[b] for b in sorted(bridges)]}


def platform_facts(ctx):
    """The driver, kernel, CUDA, the drivers registered with nvidia-fs, the IOMMU and the PCIe topology."""
    gpus = sorted(listdir(ctx.proc('driver', 'nvidia', 'gpus')))
    modules = read_text(ctx.proc('driver', 'nvidia-fs', 'modules'))
    return {
        'gpu_pci': gpus,
        'driver': parse_driver_version(read_text(ctx.proc('driver', 'nvidia', 'version'))),
        'kernel': kernel_facts(ctx),
        'cuda_version': cuda_version(ctx),
        'nvidia_fs_modules': None if modules is None else [line.split()[0].rstrip(':').lower()
                                                           for line in modules.splitlines() if line.split()],
        'iommu': iommu_facts(ctx),
        'topology': topology_facts(ctx, gpus) if gpus else {'pairs': [], 'bridges': []},
    }


def collect(ctx, job_dirs=None, training_user=None):
    """The ``gds`` section."""
    errors = []
    facts = {'gpus': len(listdir(ctx.proc('driver', 'nvidia', 'gpus')))}
    facts.update(nvidia_fs(ctx))
    facts.update(platform_facts(ctx))
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
    sources = env_sources(ctx, training_user)
    for item in sources:
        who = ('a running process (%s) reads' % item.get('comm') if item['source'] == 'process'
               else 'processes started with this environment read')
        notes.append('%s=%s in %s: %s that file instead of /etc/cufile.json'
                     % (ENV_OVERRIDE, item['value'], item['path'], who))
    facts['overrides'] = {'env_path_json': env_path, 'env_file': env_file, 'local_cufile_json': locals_,
                          'env_sources': sources, 'notes': notes, 'training_uid': _training_uid(training_user)}

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
