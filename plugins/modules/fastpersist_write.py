#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fastpersist_write
short_description: Write a checkpoint with DeepSpeed's own FastPersist writer, one process per rank, and read it back
version_added: 1.1.0
description:
  - Runs DeepSpeed itself, with the training environment's Python (O(python)) - every rank saves a state dict of
    its share of O(total_size) with C(torch.save) through DeepSpeed's C(FastFileWriter) (its aio handle with the
    O(aio) section's block size and queue depth, its pinned buffer of O(writer)'s C(io_buffer_size), halved when
    C(io_buffer_double)), all ranks at once, each file fsynced before its time stops; then, with O(read_back),
    every rank reads its file back with the aio handle (O_DIRECT) and, after the first run, checks the bytes
    and the tensors (the later O(repeats) save the same state dict).
  - The sections are completed by DeepSpeed's own parsers (C(get_aio_config), C(get_checkpoint_config)) exactly as
    a ds_config's are, so RV(deepspeed.aio) and RV(deepspeed.writer) are what a training job with those sections
    would use.
  - Results are the checkpoint_write module's, measured by DeepSpeed's writer instead of fio (GiB = 1024^3 bytes,
    MLPerf Storage's rule - the checkpoint is saved when its slowest rank is).
  - The files are made in a directory made for the run in each of O(directories) (C(.checkpoint_io.<label>.<random>),
    owned by root, mode 0700; recorded in the state store first, removed at the end or by the preflight role's reaper
    after a killed run), the directories opened from C(/) without following a symlink another user could plant;
    DeepSpeed's processes reach them through the module's own descriptors (C(/proc/<pid>/fd/<N>)), so a training
    user who owns the checkpoint directory cannot redirect the write. The script DeepSpeed's processes run
    (module_utils/deepspeed/fastpersist.py) is written into the run directory too, never to a shared path.
  - DeepSpeed's processes run with O(python)'s directory first on C(PATH), as in an activated venv (DeepSpeed
    builds its ops with the C(ninja) it finds there), in the module's process group, and end with it (O(timeout), a signal to the module,
    a kill of the module). Each rank's page-cache pages of its file are dropped after its write (C(posix_fadvise)
    on that file only), so the read comes from the drives.
  - O(python) and O(torch_extensions_dir) are what root runs and loads - the interpreter, its directory, its venv's
    C(site-packages), the built ops - so each must be changeable by root only (owner root, no group or other write
    on it or a directory on its way); a training environment another user owns is refused, naming the component.
  - Refused before anything is written, naming the value and the limit - O(python) that is not an executable
    absolute path, O(ranks) outside 1..1024, a share per rank below one block, sizes that are not sizes, a
    directory reached through a symlink another user can write, shards that need more than the free space less
    O(free_space_margin). DeepSpeed that does not import or whose async_io op cannot load (it is built on first use with
    C(libaio-dev), a C++ compiler and ninja, in minutes) fails the task saying so, nothing measured.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - On the managed node, a Python with torch and DeepSpeed 0.17.1 or later (FastPersist), and DeepSpeed's async_io
    op built or buildable (C(libaio-dev), a C++ compiler, ninja).
  - A filesystem that takes O_DIRECT writes in each directory.
notes:
  - The result is a measurement, not a change, so C(changed) is always V(false).
  - Check mode is not supported. Ansible skips the task in check mode (a dry run cannot measure anything).
  - On a host without an accelerator DeepSpeed 0.19.8's ds_config path (C(CheckpointWriterFactory)) cannot pin its
    buffer, so the writer is given a buffer locked by the aio handle (RV(deepspeed.path) C(fast_file_writer));
    with an accelerator the factory path runs (C(checkpoint_writer_factory)). docs/deepspeed-fastpersist.md says why.
seealso:
  - module: ai_storage.checkpoint_io.checkpoint_write
  - module: ai_storage.checkpoint_io.deepspeed_aio
  - name: DeepSpeed FastPersist
    description: DeepSpeed's fast checkpoint writer (deepspeed/io/fast_file_writer.py).
    link: https://github.com/deepspeedai/DeepSpeed
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  python:
    description:
      - The training environment's Python (an absolute path to an executable), which imports torch and DeepSpeed.
    type: path
    required: true
  directories:
    description:
      - Checkpoint directories; rank N writes in directory N modulo their number.
    type: list
    elements: path
    required: true
  ranks:
    description:
      - Writing processes, 1 to 1024.
    type: int
    default: 1
  total_size:
    description:
      - The whole checkpoint (a size such as V(256M) or bytes), split over O(ranks), each share rounded down to a
        multiple of the aio block size.
    type: raw
    required: true
  aio:
    description:
      - DeepSpeed's C(aio) section, any of C(block_size) (bytes per request, a size, a multiple of 4096),
        C(queue_depth) (requests in flight per thread, 1 to 65535), C(intra_op_parallelism) (aio threads per rank,
        1 to 256), C(single_submit) and C(overlap_events) (booleans); missing keys get DeepSpeed's defaults.
    type: dict
    default: {}
  writer:
    description:
      - DeepSpeed's C(checkpoint.writer) section, any of C(io_buffer_size) (the pinned buffer per writing process,
        a size; DeepSpeed requires a multiple of 512 x intra_op_parallelism, twice that when double-buffered) and
        C(io_buffer_double) (a boolean - split the buffer in two halves, one filled while the other drains);
        missing keys get DeepSpeed's defaults.
    type: dict
    default: {}
  read_back:
    description:
      - After every rank has written, each reads its file back with the aio handle (O_DIRECT); RV(restore).
    type: bool
    default: true
  repeats:
    description:
      - Checkpoints written one after the other by the same processes (each run truncates the ranks' files and
        saves them again, read back after each), 1 to 20 - start-up (the interpreter, torch, DeepSpeed, the ops)
        is paid once; RV(runs) holds each, the top-level figures are the last run's.
    type: int
    default: 1
  writer_path:
    description:
      - V(fast_file_writer) (a buffer locked by the aio handle; works without an accelerator) or
        V(checkpoint_writer_factory) (DeepSpeed's ds_config path; needs an accelerator to pin its buffer).
        Default - the factory where DeepSpeed finds an accelerator, else the writer.
    type: str
    choices: [fast_file_writer, checkpoint_writer_factory]
  sample_drives:
    description:
      - NVMe namespaces (V(nvme1n1) or V(/dev/nvme1n1)) sampled as DeepSpeed starts, every O(sample_interval)
        seconds while it runs and once after - what the checkpoint_write module's O(sample_drives) samples (the
        block counters, temperatures, the SMART log's critical-warning bits and media errors), so that a drive that
        left, warned or failed during the write voids it. A namespace that is not there is refused before anything
        is written.
    type: list
    elements: str
    default: []
  sample_interval:
    description:
      - Seconds between two samples of O(sample_drives), a number from 0.2 to 3600.
    type: raw
    default: 1
  torch_extensions_dir:
    description:
      - Where DeepSpeed keeps its built ops (C(TORCH_EXTENSIONS_DIR)); default DeepSpeed's
        (C(~/.cache/torch_extensions)). A first use builds async_io there (minutes).
    type: path
  free_space_margin:
    description:
      - Fraction of each filesystem's free space that must stay free, from 0 to below 1.
    type: raw
    default: 0.1
  timeout:
    description:
      - Seconds the whole run may take, the op's build included; DeepSpeed's processes are ended past it.
    type: int
    default: 3600
  label:
    description:
      - A name for this run (the run directories' names, the report).
    type: str
  state_dir:
    description:
      - The state store, where the run directories are recorded before they are made.
    type: path
    default: /var/lib/ai_storage_checkpoint_io
'''

EXAMPLES = r'''
- name: Write a 4 GiB checkpoint with DeepSpeed's FastPersist writer, 8 ranks, and read it back
  ai_storage.checkpoint_io.fastpersist_write:
    python: /opt/train/venv/bin/python
    directories: [/mnt/checkpoints]
    ranks: 8
    total_size: 4G
    aio: {block_size: 1M, queue_depth: 32}
    writer: {io_buffer_size: 64M, io_buffer_double: true}
  register: fastpersist

- name: Show what DeepSpeed wrote and read
  ansible.builtin.debug:
    msg: >-
      write {{ fastpersist.throughput_gib_s | round(2) }} GiB/s, restore
      {{ fastpersist.restore.throughput_gib_s | round(2) }} GiB/s (DeepSpeed {{ fastpersist.deepspeed.version }})
'''

RETURN = r'''
label:
  description: O(label).
  returned: always
  type: str
  sample: after
ranks:
  description: Writing processes.
  returned: always
  type: int
  sample: 8
directories:
  description: O(directories).
  returned: always
  type: list
  elements: str
  sample: [/mnt/checkpoints]
shard_bytes:
  description: The state dict each rank saves (the files are a little larger - torch.save's zip framing).
  returned: always
  type: int
  sample: 536870912
total_bytes:
  description: Bytes of the files written by all ranks.
  returned: when the write succeeded
  type: int
  sample: 4294982656
total_gib:
  description: RV(total_bytes) in GiB.
  returned: when the write succeeded
  type: float
  sample: 4.0
duration_s:
  description: The slowest rank's write, from the writer's opening to its file's fsync.
  returned: when the write succeeded
  type: float
  sample: 1.9
throughput_gib_s:
  description: RV(total_bytes) over RV(duration_s), in GiB/s.
  returned: when the write succeeded
  type: float
  sample: 2.1
throughput_bytes_s:
  description: The same in bytes per second.
  returned: when the write succeeded
  type: int
  sample: 2254857830
min_rank_bw_bytes:
  description: The slowest rank's write bandwidth, bytes per second.
  returned: when the write succeeded
  type: int
  sample: 282606976
per_rank:
  description: Each rank's C(rank), C(bytes), C(seconds), C(bw_bytes), C(payload_bytes) and the writer's own
    counters (C(writer_stats) - C(aio_bytes), C(slow_bytes) (the unaligned tail written buffered), times).
  returned: when DeepSpeed ran
  type: list
  elements: dict
  sample: [{rank: 0, bytes: 536872960, seconds: 1.9, bw_bytes: 282606976, payload_bytes: 536870912}]
runs:
  description: Each of the O(repeats) runs in order - C(throughput_gib_s), C(throughput_bytes_s), C(duration_s),
    C(total_bytes), C(total_gib), C(min_rank_bw_bytes) and C(restore) (as RV(restore)) of that run.
  returned: when the write succeeded
  type: list
  elements: dict
  sample: [{throughput_gib_s: 2.1, duration_s: 1.9, total_bytes: 4294982656, min_rank_bw_bytes: 282606976}]
restore:
  description: The read back (O(read_back)), in the write's units - the slowest rank's read time, RV(total_bytes)
    over it, each rank's C(rank), C(bytes), C(seconds), C(bw_bytes).
  returned: when O(read_back=true) and the write succeeded
  type: dict
  sample: {throughput_gib_s: 3.4, throughput_bytes_s: 3650722201, duration_s: 1.17, total_bytes: 4294982656,
           min_rank_bw_bytes: 458752000, per_rank: [{rank: 0, bytes: 536872960, seconds: 1.17, bw_bytes: 458865778}]}
devices:
  description: The block device under each of O(directories), in their order (the kernel's name).
  returned: always
  type: list
  elements: str
  sample: [md127]
samples:
  description: With O(sample_drives), one entry per sample, as the checkpoint_write module's RV(samples) - the
    first as DeepSpeed starts, the last after its processes ended.
  returned: when O(sample_drives) is set and DeepSpeed ran
  type: list
  elements: dict
  sample: [{t: 0.0, drives: {nvme1n1: {sectors_written: 1024, critical_warning: 0, media_errors: 0}}}]
sampled_drives:
  description: With O(sample_drives), per namespace - C(controller), C(serial) and the Identify Controller
    thresholds, as the checkpoint_write module's RV(sampled_drives).
  returned: when O(sample_drives) is set
  type: dict
  sample: {nvme1n1: {controller: nvme1, serial: DATA0001, wctemp_c: 70, cctemp_c: 100, hctma: 0}}
deepspeed:
  description: What ran - DeepSpeed's and torch's C(version)/C(torch_version), the C(accelerator), the writer
    C(path), the C(aio) and C(writer) sections as DeepSpeed's parsers completed them, the ops' load times
    (C(op_load), a first build included), C(notes).
  returned: when DeepSpeed imported
  type: dict
  contains:
    version:
      description: DeepSpeed's version.
      type: str
    torch_version:
      description: torch's version.
      type: str
    accelerator:
      description: The accelerator DeepSpeed found (C(cpu) without one).
      type: str
    path:
      description: The writer path that ran, C(fast_file_writer) or C(checkpoint_writer_factory).
      type: str
    aio:
      description: The C(aio) section as DeepSpeed's C(get_aio_config) completed it.
      type: dict
    writer:
      description: The C(checkpoint.writer) section as DeepSpeed's C(get_checkpoint_config) completed it.
      type: dict
    op_load:
      description: Seconds to load (on a first use, build) the async_io and utils ops.
      type: dict
    notes:
      description: What the run noticed about the sections (a ds_config without a writer, use_gds ignored).
      type: list
      elements: str
  sample: {version: 0.19.8, torch_version: 2.13.0+cpu, accelerator: cpu, path: fast_file_writer,
           aio: {block_size: 1048576, queue_depth: 32, intra_op_parallelism: 1, single_submit: false,
                 overlap_events: true, use_gds: false},
           writer: {type: FAST, io_buffer_size: 67108864, io_buffer_double: true},
           op_load: {async_io_s: 2.1, utils_s: 0.4}, notes: []}
wall_s:
  description: Wall time of DeepSpeed's processes, their start-up and the op's load included.
  returned: when DeepSpeed ran
  type: float
  sample: 14.2
command:
  description: The argv run (the training Python, the script in the run directory, its input there).
  returned: when DeepSpeed ran
  type: list
  elements: str
  sample: [/opt/train/venv/bin/python, /proc/4242/fd/5/fastpersist_worker.py, /proc/4242/fd/5/job.json]
safety:
  description: The path components of O(directories) other users can write, and how the run is made safe despite
    them (as the checkpoint_write module's).
  returned: always
  type: dict
  sample: {writable_components: [], run_dirs: [/mnt/checkpoints/.checkpoint_io.after.3f2a], made_safe_by: ...}
stderr:
  description: The last 4000 characters DeepSpeed's processes printed (its logs, a build's output).
  returned: when DeepSpeed ran
  type: str
  sample: ""
'''

import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import name_of_dev
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size, to_bool, to_int
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import fastpersist
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.drive_sampler import check_names, start_sampling
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import (
    GIB,
    MAX_QUEUE_DEPTH,
    by_target,
    fraction_in_range,
    int_in_range,
    number,
    rank_layout,
    shard_plan,
    space_errors,
    space_needs,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import (
    Terminated,
    run_fio,
    terminate_on_signals,
)

WORKER = 'fastpersist_worker.py'
JOB = 'job.json'
DEFAULT_BLOCK = 1 << 20


def argument_spec():
    return dict(
        python=dict(type='path', required=True),
        directories=dict(type='list', elements='path', required=True),
        ranks=dict(type='int', default=1),
        total_size=dict(type='raw', required=True),
        aio=dict(type='dict', default={}),
        writer=dict(type='dict', default={}),
        read_back=dict(type='bool', default=True),
        repeats=dict(type='int', default=1),
        writer_path=dict(type='str', choices=list(fastpersist.PATHS)),
        sample_drives=dict(type='list', elements='str', default=[]),
        sample_interval=dict(type='raw', default=1),
        torch_extensions_dir=dict(type='path'),
        free_space_margin=dict(type='raw', default=0.1),
        timeout=dict(type='int', default=3600),
        label=dict(type='str'),
        state_dir=dict(type='path', default=STATE_DIR),
    )


AIO_KEYS = {'block_size': 'size', 'queue_depth': 'int', 'intra_op_parallelism': 'int', 'single_submit': 'bool',
            'overlap_events': 'bool'}
WRITER_KEYS = {'io_buffer_size': 'size', 'io_buffer_double': 'bool'}


def _section(name, given, keys):
    """One section's keys, typed (unset and null keys left to DeepSpeed); ValueError naming the key and the value."""
    out = {}
    for key, value in sorted((given or {}).items()):
        if key not in keys:
            raise ValueError('%s: %r is not one of its keys (%s)' % (name, key, ', '.join(sorted(keys))))
        if value is None:
            continue
        if keys[key] == 'bool':
            out[key] = to_bool(value, '%s.%s' % (name, key))
        elif keys[key] == 'int':
            out[key] = to_int(value, '%s.%s' % (name, key))
        else:
            out[key] = value
    return out


def sections(params):
    """The aio and writer sections given (unset keys left to DeepSpeed), sizes in bytes; ValueError naming the value
    and the limit."""
    aio = _section('aio', params['aio'], AIO_KEYS)
    if 'block_size' in aio:
        aio['block_size'] = parse_size(aio['block_size'], 'aio.block_size')
        if aio['block_size'] < 4096 or aio['block_size'] % 4096:
            raise ValueError('aio.block_size: %d bytes is not a multiple of 4096' % aio['block_size'])
    if 'queue_depth' in aio:
        int_in_range(aio['queue_depth'], 'aio.queue_depth', 1, MAX_QUEUE_DEPTH)
    if 'intra_op_parallelism' in aio:
        int_in_range(aio['intra_op_parallelism'], 'aio.intra_op_parallelism', 1, 256)
    writer = _section('writer', params['writer'], WRITER_KEYS)
    if 'io_buffer_size' in writer:
        writer['io_buffer_size'] = parse_size(writer['io_buffer_size'], 'writer.io_buffer_size')
        if writer['io_buffer_size'] < 4096:
            raise ValueError('writer.io_buffer_size: %d bytes is below the minimum 4096' % writer['io_buffer_size'])
    return aio, writer


def _others_can_change(directory, what):
    """Who but root can change entries of ``directory`` or a directory on its way ([] when nobody)."""
    try:
        target = scratch.open_dir(directory, what)
    except scratch.ScratchError as exc:
        raise ValueError(str(exc))
    target.close()
    # A sticky directory owned by root (/tmp): nobody but root can rename or remove the root-owned entry below it
    # (a non-root entry on the way is reported itself).
    return ['%s (%s)' % (c['path'], ', '.join(c['writable_by'])) for c in target.writable
            if not (c['uid'] == 0 and int(c['mode'], 8) & 0o1000)]


def _refuse_foreign(option, path, found):
    if found:
        raise ValueError('%s: %s: %s can be changed by another user than root: this module runs DeepSpeed as root, '
                         'which would run code that user controls; give a training environment only root can change'
                         % (option, path, '; '.join(found)))


def check_python(path):
    """The training Python, and what it loads first (its directory, its venv's site-packages), changeable by root
    only: the module runs it as root."""
    if not path.startswith('/'):
        raise ValueError('python: %r is not an absolute path' % path)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise ValueError('python: %s is not an executable file on this node' % path)
    real = os.path.realpath(path)
    info = os.stat(real)
    found = _others_can_change(os.path.dirname(path), 'python')
    found += _others_can_change(os.path.dirname(real), 'python')
    if info.st_uid != 0 or info.st_mode & 0o022:
        found.append('%s (owner uid %d, mode %04o)' % (real, info.st_uid, info.st_mode & 0o7777))
    prefix = os.path.dirname(os.path.dirname(path))
    for lib in ('lib', 'lib64'):
        top = os.path.join(prefix, lib)
        if os.path.isdir(top) and os.path.isfile(os.path.join(prefix, 'pyvenv.cfg')):
            found += _others_can_change(top, 'python')
            for name in sorted(os.listdir(top)):
                site = os.path.join(top, name, 'site-packages')
                if name.startswith('python') and os.path.isdir(site):
                    found += _others_can_change(site, 'python')
    _refuse_foreign('python', path, sorted(set(found)))


def check_extensions_dir(path):
    """Where DeepSpeed builds and loads its ops as root: changeable by root only (else a planted .so would run)."""
    if path is None:
        return
    if not path.startswith('/'):
        raise ValueError('torch_extensions_dir: %r is not an absolute path' % path)
    long_names = [part for part in path.split('/') if len(part.encode('utf-8', 'surrogateescape')) > 255]
    if long_names:
        raise ValueError('torch_extensions_dir: %r has a name of %d bytes; at most 255'
                         % (path, len(long_names[0].encode('utf-8', 'surrogateescape'))))
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
        raise ValueError('torch_extensions_dir: %s is %s, not a directory; give the real directory (DeepSpeed makes '
                         'a missing one)' % (path, 'a symlink' if os.path.islink(path) else 'a file'))
    where = path if os.path.isdir(path) else os.path.dirname(path.rstrip('/'))
    _refuse_foreign('torch_extensions_dir', path, _others_can_change(where, 'torch_extensions_dir'))


def validate(module, params, result):
    """(plan, layout, aio, writer), everything checked before anything is made."""
    try:
        check_python(params['python'])
        check_extensions_dir(params['torch_extensions_dir'])
        if params['total_size'] is None:
            raise ValueError('total_size: None is not a size; give the whole checkpoint\'s size (e.g. 4G)')
        aio, writer = sections(params)
        int_in_range(params['timeout'], 'timeout', 1)
        int_in_range(params['repeats'], 'repeats', 1, fastpersist.MAX_REPEATS)
        params['free_space_margin'] = number(params['free_space_margin'], 'free_space_margin')
        fraction_in_range(params['free_space_margin'], 'free_space_margin')
        params['sample_interval'] = number(params['sample_interval'], 'sample_interval')
        fraction_in_range(params['sample_interval'], 'sample_interval', 0.2, 3600.0, high_open=False)
        params['sample_drives'] = check_names(params['sample_drives'])
        plan = shard_plan(params['ranks'], aio.get('block_size', DEFAULT_BLOCK), total_size=params['total_size'])
        layout = rank_layout(params['directories'], params['ranks'])
        scratch.check_state_dir(params['state_dir'])
    except (ValueError, scratch.ScratchError) as exc:
        module.fail_json(msg=str(exc), **result)
    return plan, layout, aio, writer


def worker_source():
    """The script DeepSpeed's processes run: fastpersist.py's own source, wherever Ansible put the module."""
    loader = getattr(fastpersist, '__loader__', None)
    if loader is not None and hasattr(loader, 'get_source'):
        source = loader.get_source(fastpersist.__name__)
        if source:
            return source
    with open(fastpersist.__file__.replace('.pyc', '.py')) as handle:
        return handle.read()


def make_runs(targets, layout, params, job_files):
    """One run directory per target directory with the ranks' files (empty: DeepSpeed's writer creates them as a
    training job does, on the same inodes), the first also with the script and its input."""
    runs = []
    try:
        for index, (target, entries) in enumerate(by_target(targets, layout)):
            files = [('rank_%d.pt' % entry['rank'], 0) for entry in entries]
            if index == 0:
                files += [(name, 0) for name in job_files]
            run = scratch.create(target, params['label'] or 'fastpersist_write', files, params['state_dir'],
                                 run_id=scratch.current_run(params['state_dir']), writer='fastpersist_write')
            runs.append(run)
            for entry in entries:
                entry['filename'] = run.file_path('rank_%d.pt' % entry['rank'])
                entry['ds_file'] = '/proc/%d/fd/%d/rank_%d.pt' % (os.getpid(), run.fd, entry['rank'])
    except BaseException:
        for run in runs:
            run.cleanup()
        raise
    return runs


def write_file(run, name, text):
    fd = run.files[name]['fd']
    data = text.encode('utf-8')
    while data:
        data = data[os.write(fd, data):]


def _reduce_run(total, write_s, ranks, read_s=None):
    """One run's figures (MLPerf Storage's rule: the slowest rank): ``ranks`` [(bytes, write_s, read_s)]."""
    def bw(nbytes, seconds):
        return int(nbytes / seconds) if nbytes and seconds else None
    out = dict(total_bytes=total, total_gib=total / float(GIB), duration_s=round(write_s, 6),
               throughput_bytes_s=int(total / write_s), throughput_gib_s=total / float(GIB) / write_s,
               min_rank_bw_bytes=min(bw(nbytes, seconds) for nbytes, seconds, _read in ranks))
    if read_s:
        out['restore'] = {'throughput_gib_s': total / float(GIB) / read_s, 'throughput_bytes_s': int(total / read_s),
                          'duration_s': round(read_s, 6), 'total_bytes': total,
                          'min_rank_bw_bytes': min(bw(nbytes, read) for nbytes, _write, read in ranks)}
    return out


def reduce_worker(doc, layout, read_back):
    """The module's result from the script's document: each run's figures, the last at the top level."""
    per_rank = []
    for entry, rank in zip(layout, doc.get('per_rank') or []):
        item = {'rank': rank['rank'], 'directory': entry['directory'], 'filename': entry['filename'],
                'bytes': rank.get('bytes'), 'payload_bytes': rank.get('payload_bytes'),
                'seconds': rank.get('write_s'), 'writer_stats': rank.get('writer_stats')}
        item['bw_bytes'] = int(item['bytes'] / item['seconds']) if item['bytes'] and item['seconds'] else None
        per_rank.append(item)
    out = {'per_rank': per_rank}
    runs = doc.get('runs') or []
    ranks = doc.get('per_rank') or []
    if not runs or not all(len(r.get('runs') or []) == len(runs) for r in ranks):
        return out
    out['runs'] = []
    for index, run in enumerate(runs):
        figures = [(r['runs'][index].get('bytes'), r['runs'][index].get('write_s'), r['runs'][index].get('read_s'))
                   for r in ranks]
        out['runs'].append(_reduce_run(run['total_bytes'], run['write_s'], figures,
                                       run.get('read_s') if read_back else None))
    out.update(out['runs'][-1])
    if 'restore' in out:
        out['restore'] = dict(out['restore'], per_rank=[
            {'rank': r['rank'], 'bytes': r.get('bytes'), 'seconds': r.get('read_s'),
             'bw_bytes': int(r['bytes'] / r['read_s']) if r.get('read_s') and r.get('bytes') else None}
            for r in ranks])
    return out


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=False)
    params = module.params
    result = dict(changed=False, label=params['label'], ranks=params['ranks'], directories=params['directories'])
    plan, layout, aio, writer = validate(module, params, result)
    result['shard_bytes'] = plan['shard_bytes']
    targets = {}
    runs = []
    try:
        for path in params['directories']:
            if path not in targets:
                targets[path] = scratch.open_dir(path, 'directories')
        # torch.save's framing adds a few KiB per tensor; a block more per rank covers it
        result['devices'] = [name_of_dev(targets[path].dev) for path in params['directories']]
        errors = space_errors(space_needs(layout, plan['shard_bytes'] + plan['block_size'], targets),
                              params['free_space_margin'])
        if errors:
            module.fail_json(msg='not enough free space: %s' % '; '.join(errors), errors=errors, **result)
        sampler = start_sampling(module, Context(module), params['sample_drives'], result)
        with terminate_on_signals():
            runs = make_runs(targets, layout, params, [WORKER, JOB])
            result['safety'] = scratch.safety(list(targets.values()), runs)
            first = runs[0]
            job = {'files': [entry['ds_file'] for entry in layout], 'bytes_per_rank': plan['shard_bytes'],
                   'aio': aio, 'writer': writer, 'read_back': params['read_back'], 'path': params['writer_path'],
                   'repeats': params['repeats'],
                   'torch_extensions_dir': params['torch_extensions_dir']}
            write_file(first, WORKER, worker_source())
            write_file(first, JOB, json.dumps(job))
            # The training environment's own tools first (DeepSpeed builds its ops with the ninja it finds on
            # PATH), as an activated venv would have them.
            os.environ['PATH'] = os.pathsep.join([os.path.dirname(params['python']), os.environ.get('PATH', '')])
            where = '/proc/%d/fd/%d/' % (os.getpid(), first.fd)
            argv = result['command'] = [params['python'], where + WORKER, where + JOB]
            if sampler:
                sampler.sample()  # as DeepSpeed starts
            rc, stdout, stderr, wall, timed_out = run_fio(
                argv, params['timeout'], tick=sampler and (lambda _elapsed: sampler.sample()),
                interval=params['sample_interval'], pass_fds=[run.fd for run in runs])
            if sampler:
                sampler.sample()  # once its processes ended
                result['samples'] = sampler.samples
            result.update(wall_s=round(wall, 3), stderr=stderr[-4000:])
            if timed_out:
                module.fail_json(msg='DeepSpeed\'s write ran past timeout %d s and was ended' % params['timeout'],
                                 **result)
            try:
                doc = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else {}
            except ValueError:
                doc = {}
            if doc.get('deepspeed_version'):
                result['deepspeed'] = dict(
                    (key, doc.get(src)) for key, src in (('version', 'deepspeed_version'),
                                                         ('torch_version', 'torch_version'),
                                                         ('accelerator', 'accelerator'), ('path', 'path'),
                                                         ('aio', 'aio'), ('writer', 'writer'),
                                                         ('op_load', 'op_load'), ('notes', 'notes')))
            result.update(reduce_worker(doc, layout, params['read_back']))
            problems = doc.get('errors') or ([] if rc == 0 else ['no result (exit status %s): %s' % (
                rc, stderr.strip()[-1000:] or 'nothing printed')])
            if rc != 0 or problems:
                what = {fastpersist.EXIT_DEEPSPEED: 'DeepSpeed cannot write here',
                        fastpersist.EXIT_INPUT: 'DeepSpeed refused the settings'}.get(rc, 'DeepSpeed\'s write failed')
                module.fail_json(msg='%s: %s' % (what, '; '.join(problems)), errors=problems, **result)
            module.exit_json(**result)
    except scratch.ScratchError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    except Terminated as exc:
        module.fail_json(msg='the FastPersist write %s: DeepSpeed\'s processes were ended and the run\'s files '
                             'removed' % exc, **result)
    except (IOError, OSError) as exc:
        module.fail_json(msg='the FastPersist write failed: %s' % exc, **result)
    finally:
        for run in runs:
            run.cleanup()
        for target in targets.values():
            target.close()


if __name__ == '__main__':
    main()
