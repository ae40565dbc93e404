# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the ``gds`` role decides, from the ``gds`` facts section: pure functions, standard library only.

* :func:`decide_mode` - the GPUDirect Storage mode a node can run (``nvidia-fs``, ``p2pdma`` or ``unavailable``),
  each refusal with its reason, from the NVIDIA driver (open kernel module or proprietary, version), nvidia_fs and
  the drivers registered with it, the kernel (version, CONFIG_PCI_P2PDMA), CUDA's version and the checkpoint
  filesystem.
* :func:`platform_checks` - the conditions NVIDIA's GDS documentation lists (IOMMU off or pass-through, PCIe ACS
  not redirecting peer-to-peer requests between a GPU and a drive, GPU and drive under one root complex), each
  ``ok``, ``warn``, ``fail`` or ``n/a`` with what was read.
* :func:`cufile_targets` - the cufile.json keys to set for checkpoint writes (minimums that are raised, never
  lowered; the compatibility mode and poll mode by policy).
* :func:`proof_verdict` - what a cuFile write with the nvidia-fs counters read before and after proves.
* :func:`gds_errors` - the role's inputs checked, each message naming the value and the limit.

Sources: NVIDIA GPUDirect Storage Installation and Troubleshooting Guide (nvidia-fs 2.17.5 and later need the open
kernel modules; IOMMU; ACS), the Release Notes (PCI P2PDMA mode: CUDA 12.8, Linux 6.2 with P2PDMA, open driver
R565 or later), the Configuration Guide (cufile.json keys and defaults, see ``gds.CUFILE_DEFAULTS``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import CUFILE_DEFAULTS

WANTED_MODES = ('auto', 'nvidia-fs', 'p2pdma')
POLICIES = ('required', 'preferred')
NVFS_OPEN_ONLY_FROM = (2, 17, 5)
P2PDMA_MIN_CUDA = (12, 8)
P2PDMA_MIN_KERNEL = (6, 2)
P2PDMA_MIN_DRIVER = (565,)
GDS_FILESYSTEMS = ('xfs', 'ext4')
KIB = 1024
MAX_BLOCK = 2 ** 31
MAX_RANKS = 1024
MAX_DEPTH = 65535
_VERSION_RE = re.compile(r'(\d+(?:\.\d+)*)')
_DRIVER_RE = re.compile(r'Kernel Module\s+(?:for\s+\S+\s+)?(\d+(?:\.\d+)+)')


def version_tuple(text):
    """'6.1.0-28-amd64' -> (6, 1, 0); '12.8' -> (12, 8); None or no digits -> None."""
    if text is None:
        return None
    match = _VERSION_RE.search(str(text))
    return tuple(int(part) for part in match.group(1).split('.')) if match else None


def _at_least(text, minimum):
    found = version_tuple(text)
    return None if found is None else found >= minimum


def _dotted(numbers):
    return '.'.join(str(n) for n in numbers)


def parse_driver_version(text):
    """/proc/driver/nvidia/version -> {version, open_kernel_module} (None each when not printed).

    The open modules print "NVIDIA UNIX Open Kernel Module for x86_64  565.57.01 ..."; the proprietary ones
    "NVIDIA UNIX x86_64 Kernel Module  535.129.03 ..."."""
    if not text or 'NVRM' not in text:
        return {'version': None, 'open_kernel_module': None}
    line = [ln for ln in text.splitlines() if 'NVRM' in ln][0]
    match = _DRIVER_RE.search(line)
    return {'version': match.group(1) if match else None, 'open_kernel_module': 'Open Kernel Module' in line}


# ---------------------------------------------------------------- the mode
def _driver_blocks(driver, need_open_for):
    if driver.get('version') is None:
        return 'the NVIDIA driver version is unknown (/proc/driver/nvidia/version not readable)'
    if driver.get('open_kernel_module') is False:
        return ('NVIDIA\'s proprietary kernel module is loaded (driver %s; /proc/driver/nvidia/version does not say '
                '"Open Kernel Module"): %s needs NVIDIA\'s open kernel modules' % (driver['version'], need_open_for))
    return None


def nvme_unregistered(gds):
    """What /proc/driver/nvidia-fs/modules lists ('nothing' when empty) when nvidia_fs is loaded without nvme there
    (every cuFile call to local NVMe then runs in compatibility mode); None otherwise or when it is not readable."""
    modules = gds.get('nvidia_fs_modules')
    if not gds.get('nvidia_fs_loaded') or modules is None or 'nvme' in modules:
        return None
    return ', '.join(modules) or 'nothing'


def nvidia_fs_blocker(gds):
    """Why the nvidia-fs mode cannot work on this node, or None."""
    driver = gds.get('driver') or {}
    nvfs = gds.get('nvidia_fs_version')
    old_nvfs = nvfs is not None and version_tuple(nvfs) is not None and version_tuple(nvfs) < NVFS_OPEN_ONLY_FROM
    if not old_nvfs:
        blocked = _driver_blocks(driver, 'nvidia-fs %s and later' % _dotted(NVFS_OPEN_ONLY_FROM))
        if blocked:
            return blocked
    unregistered = nvme_unregistered(gds)
    if unregistered:
        return ('nvidia_fs is loaded but the nvme driver is not registered with it (/proc/driver/nvidia-fs/modules '
                'lists %s): every cuFile call runs in compatibility mode. The nvme driver in use does not export the '
                'registration symbol this nvidia-fs binds (a DOCA/MLNX nvme built for a newer nvidia-fs, or the '
                'inbox nvme without the GDS patches): install the nvme driver that matches nvidia-fs' % unregistered)
    return None


def p2pdma_blocker(gds):
    """Why the PCI P2PDMA mode cannot work on this node, or None."""
    problems = []
    kernel = gds.get('kernel') or {}
    if not _at_least(kernel.get('release'), P2PDMA_MIN_KERNEL):
        problems.append('kernel %s is older than %s' % (kernel.get('release') or '(unknown)',
                                                        _dotted(P2PDMA_MIN_KERNEL)))
    elif kernel.get('p2pdma') is not True:
        problems.append('kernel %s %s' % (kernel.get('release'), 'is built without CONFIG_PCI_P2PDMA'
                                          if kernel.get('p2pdma') is False else 'CONFIG_PCI_P2PDMA not known (no '
                                          '/boot/config-<release> or /proc/config.gz)'))
    if not _at_least(gds.get('cuda_version'), P2PDMA_MIN_CUDA):
        problems.append('CUDA %s is older than %s' % (gds.get('cuda_version') or '(not found)',
                                                      _dotted(P2PDMA_MIN_CUDA)))
    driver = gds.get('driver') or {}
    blocked = _driver_blocks(driver, 'P2PDMA')
    if blocked:
        problems.append(blocked)
    elif not _at_least(driver.get('version'), P2PDMA_MIN_DRIVER):
        problems.append('the NVIDIA driver %s is older than R%s' % (driver.get('version'), P2PDMA_MIN_DRIVER[0]))
    return '; '.join(problems) or None


def decide_mode(gds, fstype=None, want='auto'):
    """{mode, reason, blockers: {nvidia-fs: reason or None, p2pdma: reason or None}} for one node.

    ``want`` ``auto`` keeps a working nvidia-fs (loaded, nvme registered), else P2PDMA where the kernel, CUDA and the
    open driver allow it (no out-of-tree module), else nvidia-fs where it can be installed (the open modules)."""
    gds = gds or {}
    if not gds.get('gpus'):
        return {'mode': 'unavailable', 'reason': 'no NVIDIA GPU: /proc/driver/nvidia/gpus is empty or missing',
                'blockers': {}}
    if fstype and fstype not in GDS_FILESYSTEMS:
        return {'mode': 'unavailable', 'blockers': {},
                'reason': 'the checkpoint directory is on %s: GPUDirect Storage to local NVMe supports %s'
                          % (fstype, ' and '.join(GDS_FILESYSTEMS))}
    blockers = {'nvidia-fs': nvidia_fs_blocker(gds), 'p2pdma': p2pdma_blocker(gds)}
    if want != 'auto':
        if blockers[want]:
            return {'mode': 'unavailable', 'reason': '%s asked: %s' % (want, blockers[want]), 'blockers': blockers}
        return {'mode': want, 'reason': '%s asked and possible' % want, 'blockers': blockers}
    if gds.get('nvidia_fs_loaded') and not blockers['nvidia-fs']:
        return {'mode': 'nvidia-fs', 'blockers': blockers,
                'reason': 'nvidia_fs %s is loaded with nvme registered' % (gds.get('nvidia_fs_version') or '')}
    if not blockers['p2pdma']:
        return {'mode': 'p2pdma', 'blockers': blockers,
                'reason': 'kernel, CUDA and the open driver support PCI P2PDMA (no out-of-tree module needed)'}
    if not blockers['nvidia-fs']:
        return {'mode': 'nvidia-fs', 'blockers': blockers,
                'reason': 'the open kernel modules are loaded; P2PDMA is not possible (%s)' % blockers['p2pdma']}
    return {'mode': 'unavailable', 'blockers': blockers,
            'reason': 'nvidia-fs: %s. P2PDMA: %s' % (blockers['nvidia-fs'], blockers['p2pdma'])}


# ---------------------------------------------------------------- platform checks
def _check(name, status, detail):
    return {'name': name, 'status': status, 'detail': detail}


def iommu_check(iommu):
    iommu = iommu or {}
    mode = iommu.get('mode')
    if mode in ('off', 'passthrough'):
        return _check('iommu', 'ok', 'IOMMU %s (%s)' % (mode, iommu.get('evidence') or 'sysfs'))
    if mode == 'translated':
        return _check('iommu', 'fail', 'IOMMU translates device DMA (%s): GPUDirect Storage needs the IOMMU off or '
                      'in pass-through (iommu=pt on the kernel command line)' % (iommu.get('evidence') or 'sysfs'))
    return _check('iommu', 'warn', 'IOMMU mode not known: %s' % (iommu.get('evidence') or 'nothing readable'))


def acs_check(topology):
    bridges = (topology or {}).get('bridges', [])
    redirecting = [b for b in bridges if b.get('acs_p2p_redirect')]
    unread = [b['pci'] for b in bridges if b.get('acs') is None]
    if not (topology or {}).get('pairs'):
        return _check('acs', 'n/a', 'no GPU and NVMe controller pair on PCI')
    if not redirecting and unread:
        return _check('acs', 'warn', 'the ACS control of %s could not be read (PCI config space beyond 256 bytes '
                      'needs root)' % ', '.join(unread))
    if redirecting:
        return _check('acs', 'fail', 'ACS redirects peer-to-peer requests on the path of a GPU and a drive at %s: '
                      'disable ACS on those switch ports (BIOS or setpci)'
                      % ', '.join(b['pci'] for b in redirecting))
    return _check('acs', 'ok', 'no bridge between a GPU and a drive redirects peer-to-peer requests')


def affinity_check(topology):
    pairs = (topology or {}).get('pairs') or []
    if not pairs:
        return _check('peer_affinity', 'n/a', 'no GPU and NVMe controller pair on PCI')
    far = [p for p in pairs if p.get('relation') == 'different root complexes']
    if len(far) == len(pairs):
        return _check('peer_affinity', 'warn', 'every GPU and drive pair crosses root complexes (%s): P2P DMA goes '
                      'through the CPU interconnect' % ', '.join('%s-%s' % (p['gpu'], p['nvme']) for p in far[:4]))
    near = [p for p in pairs if p.get('relation') == 'same switch']
    return _check('peer_affinity', 'ok', '%d of %d GPU and drive pairs share a PCIe switch, %d cross root complexes'
                  % (len(near), len(pairs), len(far)))


def platform_checks(gds):
    """The platform conditions of the GDS documentation, for a node with a GPU (else each ``n/a``)."""
    gds = gds or {}
    if not gds.get('gpus'):
        return [_check(name, 'n/a', 'no NVIDIA GPU') for name in ('iommu', 'acs', 'peer_affinity')]
    topology = gds.get('topology')
    return [iommu_check(gds.get('iommu')), acs_check(topology), affinity_check(topology)]


# ---------------------------------------------------------------- cufile.json
def _kib(size):
    return -(-int(size) // KIB)


def cufile_targets(properties, block_size, ranks, depth, mode, policy, poll_mode=None, allow_compat=None):
    """{set: {dotted key: value}, notes: [str]}: the cufile.json keys to write so the file fits the checkpoint.

    ``properties`` are the file's values (NVIDIA's defaults fill what it leaves out). Sizes are minimums: a value
    already large enough is kept (and said). ``allow_compat`` None follows the policy (required: false, so a
    missing DMA path fails loudly instead of silently running through the CPU; preferred: true)."""
    props = dict(CUFILE_DEFAULTS, **dict((k, v) for k, v in (properties or {}).items() if v is not None))
    wanted, notes = {}, []
    minimums = (
        ('properties.max_direct_io_size_kb', _kib(block_size), 'the checkpoint block size'),
        ('properties.max_device_pinned_mem_size_kb', ranks * depth * _kib(block_size),
         'ranks x per-rank depth x block size (%d x %d x %d KiB)' % (ranks, depth, _kib(block_size))),
        ('execution.max_io_queue_depth', depth, 'the framework\'s per-rank queue depth'),
    )
    for key, need, why in minimums:
        have = props.get(key)
        if not isinstance(have, int) or isinstance(have, bool) or have < need:
            wanted[key] = need
            notes.append('%s: %s -> %d (%s)' % (key, have, need, why))
        else:
            notes.append('%s: %d kept (>= %d, %s)' % (key, have, need, why))
    compat = (policy != 'required') if allow_compat is None else bool(allow_compat)
    wanted['properties.allow_compat_mode'] = compat
    if poll_mode is not None:
        wanted['properties.use_poll_mode'] = bool(poll_mode)
    if mode == 'p2pdma':
        wanted['properties.use_pci_p2pdma'] = True
    elif mode == 'nvidia-fs' and props.get('properties.use_pci_p2pdma') is True:
        wanted['properties.use_pci_p2pdma'] = False
    return {'set': wanted, 'notes': notes}


# ---------------------------------------------------------------- the proof
def _counter(stats, key):
    writes = (stats or {}).get('writes') or {}
    value = writes.get(key)
    return value if isinstance(value, int) else None


def proof_verdict(mode, before, after, written_bytes, tool_error=None):
    """{proven: 'dma' | 'compat' | None, detail}: what a cuFile write of ``written_bytes`` shows.

    ``before``/``after`` are parsed /proc/driver/nvidia-fs/stats (``gds.parse_nvidia_fs_stats``). With IO stats
    disabled the counters are hidden, so nothing is proven. In P2PDMA mode nvidia-fs is not on the path: its
    counters prove nothing either way."""
    if tool_error:
        return {'proven': None, 'detail': 'the cuFile write failed: %s' % tool_error}
    if mode == 'p2pdma':
        return {'proven': None, 'detail': 'P2PDMA mode: nvidia-fs is not on the path, its counters prove nothing; '
                                          'the write succeeded with allow_compat_mode as configured'}
    if not (after or {}).get('io_stats_enabled'):
        return {'proven': None, 'detail': 'nvidia-fs IO stats are disabled (rw_stats_enabled=0): the write counters '
                                          'are hidden, set rw_stats_enabled=1 to prove the path'}
    n_before, n_after = _counter(before, 'n'), _counter(after, 'n')
    if n_before is None or n_after is None:
        return {'proven': None, 'detail': 'the nvidia-fs write counters were not readable before and after'}
    mib = (_counter(after, 'mib') or 0) - (_counter(before, 'mib') or 0)
    if n_after > n_before:
        return {'proven': 'dma', 'detail': 'nvidia-fs counted %d writes (%d MiB) for a %d MiB cuFile write: the DMA '
                                           'path is used' % (n_after - n_before, mib, written_bytes // 2 ** 20)}
    return {'proven': 'compat', 'detail': 'the %d MiB cuFile write succeeded but nvidia-fs counted no write: it ran '
                                          'in compatibility mode (POSIX I/O through the CPU)' % (written_bytes // 2 ** 20)}


# ---------------------------------------------------------------- inputs
def gds_errors(policy, want, block_size, ranks, depth, poll_mode):
    """Messages naming each bad value and its limit (empty when every input is usable)."""
    errors = []
    if policy not in POLICIES:
        errors.append('gds_policy: %r must be one of %s' % (policy, ', '.join(POLICIES)))
    if want not in WANTED_MODES:
        errors.append('gds_mode: %r must be one of %s' % (want, ', '.join(WANTED_MODES)))
    for name, value, low, high in (('gds_block_size', block_size, 4096, MAX_BLOCK),
                                   ('gds_ranks', ranks, 1, MAX_RANKS), ('gds_queue_depth', depth, 1, MAX_DEPTH)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            errors.append('%s: %r must be a whole number from %d to %d' % (name, value, low, high))
    if isinstance(block_size, int) and not isinstance(block_size, bool) and block_size % 4096:
        errors.append('gds_block_size: %d is not a multiple of 4096' % block_size)
    if poll_mode not in (None, True, False):
        errors.append('gds_poll_mode: %r must be true, false or null (keep the file\'s)' % (poll_mode,))
    return errors


# ---------------------------------------------------------------- the role's plan
def override_files(gds):
    """[{path, source}]: the cuFile files that replace /etc/cufile.json for some process (CUFILE_ENV_PATH_JSON in
    an environment, DeepSpeed's local_cufile.json under the job directories), each once."""
    overrides = (gds or {}).get('overrides') or {}
    found = []
    for item in overrides.get('env_sources') or []:
        if not override_trusted(item, overrides.get('training_uid')):
            continue  # ignored_overrides() names it
        found.append({'path': item['value'],
                      'source': 'CUFILE_ENV_PATH_JSON=%s in %s' % (item['value'], item['path'])})
    if overrides.get('env_path_json'):
        found.append({'path': overrides['env_path_json'], 'source': 'CUFILE_ENV_PATH_JSON of the facts process'})
    for item in overrides.get('local_cufile_json') or []:
        found.append({'path': item['path'], 'source': 'DeepSpeed local_cufile.json under a job directory'})
    seen, unique = set(), []
    for item in found:
        if item['path'] not in seen:
            seen.add(item['path'])
            unique.append(item)
    return unique


def override_trusted(item, training_uid):
    """Whether root may edit the file an environment names: a root-owned file or a root process named it, or the file
    is the training user's own. A user's dotfile or process naming a file of root (/etc/docker/daemon.json) is not
    followed: any local user could pick a root file for root to edit."""
    if item.get('trusted') is True:
        return True
    return training_uid is not None and item.get('target_uid') == training_uid


def ignored_overrides(gds):
    """[{path, source, reason}]: the CUFILE_ENV_PATH_JSON files named from a source a user controls, which the role
    does not edit (the role warns with each)."""
    overrides = (gds or {}).get('overrides') or {}
    out = []
    for item in overrides.get('env_sources') or []:
        if override_trusted(item, overrides.get('training_uid')):
            continue
        out.append({'path': item['value'], 'source': 'CUFILE_ENV_PATH_JSON=%s in %s' % (item['value'], item['path']),
                    'reason': '%s names it and the file is not the training user\'s (owner uid %s): the role does '
                              'not edit a file a user picked; align it by hand or name it in the inventory'
                              % (item['path'], item.get('target_uid'))})
    return out


def role_plan(gds, fstype, want, policy, block_size, ranks, depth, poll_mode=None, allow_compat=None):
    """Everything the gds role decides for one node: the mode and why, the platform checks, the cufile.json keys,
    the override files, and ``policy_failure`` (the message that fails the node under ``required``, or None)."""
    decided = decide_mode(gds, fstype, want)
    props = (((gds or {}).get('cufile_json') or {}).get('properties')) or {}
    targets = cufile_targets(props, block_size, ranks, depth, decided['mode'], policy, poll_mode, allow_compat)
    failure = None
    if policy == 'required' and decided['mode'] == 'unavailable':
        failure = ('gds_policy is required but GPUDirect Storage is not possible on this node: %s. Fix that, or set '
                   'gds_policy: preferred to continue without it (DeepSpeed keeps use_gds false)' % decided['reason'])
    return dict(decided, checks=platform_checks(gds), cufile=targets, overrides=override_files(gds),
                ignored_overrides=ignored_overrides(gds), policy=policy, policy_failure=failure)
