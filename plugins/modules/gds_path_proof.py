#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: gds_path_proof
short_description: Prove whether cuFile writes go through GPUDirect DMA, with the nvidia-fs counters
version_added: 0.3.0
description:
  - Writes a checkpoint-sized file from GPU memory with cuFile (NVIDIA's C(gdsio), GPUDirect transfer type) into
    a root-only run directory under O(directory), and reads C(/proc/driver/nvidia-fs/stats) before and after.
  - A cuFile write succeeds in compatibility mode too (POSIX I/O through a CPU bounce buffer), so "it ran" proves
    nothing. RV(proven) is V(dma) when the nvidia-fs write counters moved, V(compat) when the write succeeded and
    they did not, V(null) when nothing could be proven (no GPU, no C(gdsio), IO stats disabled, P2PDMA mode where
    nvidia-fs is not on the path), with the reason in RV(detail).
  - The file is made C(O_EXCL) in a run directory only root can write (the collection's scratch runs, recorded in
    the state store first) and removed afterwards; nothing a user plants under O(directory) redirects the write.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - C(gdsio) from NVIDIA's gds-tools (searched in PATH and C(/usr/local/cuda*/gds/tools)), an NVIDIA GPU.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.state_store
attributes:
  check_mode:
    support: full
    details: Writes nothing; returns what it would run and V(null) for RV(proven).
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  directory:
    description:
      - The directory on the checkpoint filesystem to write in (a run directory is made under it).
    type: path
    required: true
  mode:
    description:
      - The GDS mode the role decided (V(nvidia-fs), V(p2pdma) or V(unavailable)).
    type: str
    choices: [nvidia-fs, p2pdma, unavailable]
    required: true
  size:
    description:
      - Bytes written (a checkpoint shard's size), a whole number from 1 MiB to 64 GiB.
    type: raw
    default: 1073741824
  block_size:
    description:
      - Bytes per cuFile request (the checkpoint block size), a whole number from 4 KiB to 64 MiB, a multiple of
        4096.
    type: raw
    default: 1048576
  gpu:
    description:
      - The GPU index to write from, 0 to 1023.
    type: raw
    default: 0
  timeout:
    description:
      - Seconds before C(gdsio) is ended, 1 to 86400.
    type: raw
    default: 300
'''

EXAMPLES = r'''
- name: Prove the DMA path with a 1 GiB cuFile write
  ai_storage.checkpoint_io.gds_path_proof:
    directory: /mnt/checkpoints
    mode: nvidia-fs
'''

RETURN = r'''
proven:
  description: V(dma), V(compat), or V(null) when nothing could be proven.
  returned: always
  type: str
  sample: dma
detail:
  description: What was read and why it proves what RV(proven) says.
  returned: always
  type: str
  sample: nvidia-fs counted 1024 writes (1024 MiB) for a 1024 MiB cuFile write
cmd:
  description: The C(gdsio) command run (V([]) when none was).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/cuda/gds/tools/gdsio, -f, /proc/self/fd/5, -d, '0', -w, '1', -s, '1073741824']
stats_before:
  description: The nvidia-fs write counters before (V(null) without nvidia-fs).
  returned: always
  type: dict
  sample: {n: 10, ok: 10, err: 0, mib: 10}
stats_after:
  description: The nvidia-fs write counters after.
  returned: always
  type: dict
  sample: {n: 1034, ok: 1034, err: 0, mib: 1034}
output:
  description: The last lines of C(gdsio)'s output.
  returned: always
  type: str
  sample: "IoType: WRITE XferType: GPUD Threads: 1 DataSetSize: 1048576/1048576(KiB) ..."
'''

import glob

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import (
    Terminated,
    run_fio,
    terminate_on_signals,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import parse_nvidia_fs_stats
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds_plan import proof_verdict
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import listdir, read_text
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    check_path_limits,
    whole_number_errors,
)

STATS = '/proc/driver/nvidia-fs/stats'
MIB = 2 ** 20
LIMITS = {'size': (MIB, 64 * 1024 * MIB), 'block_size': (4096, 64 * MIB), 'gpu': (0, 1023), 'timeout': (1, 86400)}


def read_stats():
    text = read_text(STATS)
    return None if text is None else parse_nvidia_fs_stats(text)


def input_errors(params):
    """Messages naming each bad number and its limit; the numbers are made ints in ``params``."""
    errors = whole_number_errors(params, LIMITS)
    if params['block_size'] is not None and params['block_size'] % 4096:
        errors.append('block_size: %d is not a multiple of 4096' % params['block_size'])
    if not isinstance(params['directory'], str) or not params['directory'].startswith('/'):
        errors.append('directory: %r is not an absolute path' % (params['directory'],))
    else:
        try:
            check_path_limits(params['directory'], 'directory')
        except ValueError as exc:
            errors.append(str(exc))
    return errors


def gdsio_path(module):
    dirs = sorted(glob.glob('/usr/local/cuda*/gds/tools'))
    return module.get_bin_path('gdsio', required=False, opt_dirs=dirs)


def write_once(params, gdsio, result):
    """Run gdsio into a fresh run directory; (error or None)."""
    params_size = params['size']
    target = scratch.open_dir(params['directory'], 'directory')
    run = None
    try:
        run = scratch.create(target, 'gds_path_proof', [('proof', params_size)], params['state_dir'],
                             writer='gds_path_proof')
        result['cmd'] = [gdsio, '-f', run.fio_file('proof'), '-d', str(params['gpu']), '-w', '1',
                         '-s', str(params_size), '-i', str(params['block_size']), '-x', '0', '-I', '1']
        rc, stdout, stderr, _wall, timed_out = run_fio(result['cmd'], params['timeout'], pass_fds=run.fds())
        result['output'] = (stdout + stderr).strip()[-2000:]
        if timed_out:
            return 'gdsio ran past %d s and was ended' % params['timeout']
        if rc != 0 or 'error' in stdout.lower():
            return 'gdsio exited with %s: %s' % (rc, result['output'][-500:])
        return None
    finally:
        if run is not None:
            run.cleanup()
        target.close()


def main():
    module = AnsibleModule(argument_spec=dict(
        directory=dict(type='path', required=True),
        mode=dict(type='str', required=True, choices=['nvidia-fs', 'p2pdma', 'unavailable']),
        size=dict(type='raw', default=1024 * MIB),
        block_size=dict(type='raw', default=MIB),
        gpu=dict(type='raw', default=0),
        timeout=dict(type='raw', default=300),
        state_dir=dict(type='path', default=STATE_DIR),
    ), supports_check_mode=True)
    params = module.params
    result = dict(changed=False, proven=None, detail=None, cmd=[], stats_before=None, stats_after=None, output='')
    errors = input_errors(params)
    try:
        scratch.check_state_dir(params['state_dir'])
    except (ValueError, scratch.ScratchError) as exc:
        errors.append(str(exc))
    if errors:
        module.fail_json(msg='gds_path_proof: %s; nothing was written' % '; '.join(errors), **result)
    try:  # the directory before anything else: a wrong one is refused on a node without a GPU too
        scratch.open_dir(params['directory'], 'directory').close()
    except scratch.ScratchError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    if not listdir('/proc/driver/nvidia/gpus'):
        result['detail'] = 'no NVIDIA GPU (/proc/driver/nvidia/gpus is empty or missing): no cuFile write possible'
        module.exit_json(**result)
    if params['mode'] == 'unavailable':
        result['detail'] = 'the GDS mode is unavailable on this node: no cuFile write proves anything'
        module.exit_json(**result)
    gdsio = gdsio_path(module)
    if not gdsio:
        result['detail'] = 'gdsio not found (gds-tools; PATH and /usr/local/cuda*/gds/tools): path not proven'
        module.exit_json(**result)
    if module.check_mode:
        result['detail'] = 'check mode: a %d MiB cuFile write with gdsio would prove the path' % (params['size'] // MIB)
        module.exit_json(**result)
    before = read_stats()
    try:
        with terminate_on_signals():
            error = write_once(params, gdsio, result)
    except scratch.ScratchError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    except Terminated as exc:
        module.fail_json(msg='the cuFile write %s: gdsio was ended and its file removed' % exc, **result)
    after = read_stats()
    result['stats_before'] = (before or {}).get('writes')
    result['stats_after'] = (after or {}).get('writes')
    result.update(proof_verdict(params['mode'], before, after, params['size'], error))
    result['changed'] = error is None
    module.exit_json(**result)


if __name__ == '__main__':
    main()
