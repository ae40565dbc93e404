#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_compression
short_description: Measure how far a real checkpoint would shrink and what that does to the tuned write
version_added: 0.4.0
description:
  - Reads checkpoint files or directories on the node, read-only, and reports per tensor class (V(bf16), V(fp16),
    V(fp32), V(opaque)) how far lossless compression shrinks them, and the effective checkpoint bandwidth the tuned
    write would reach with it.
  - Recognises safetensors files (dtype and offsets from the JSON header, its length checked against the file size),
    PyTorch zip checkpoints (C(torch.save); the C(*/data/<n>) storages, their dtypes found by scanning C(data.pkl)'s
    opcodes with C(pickletools.genops), no pickle is ever loaded), DeepSpeed ZeRO directories (C(global_step*/)
    with C(*_model_states.pt) and C(*_optim_states.pt)); anything else, or a storage whose dtype is not known, is
    measured as opaque bytes.
  - Samples at most O(sample_bytes) per tensor class, in windows spread over every tensor, and stops reading and
    measuring at O(time_budget); both are reported in RV(sampling) and each class's C(stopped_by).
  - Splits BF16 and FP16 into an exponent stream and a sign+mantissa stream (BF16 exponent = bits 7..14), FP32 into
    its 4 byte planes. Per stream it measures the empirical order-0 entropy (the bound of an entropy coder, ratio
    8/H) and the ratio of real codecs, V(zlib), V(huffman) (zlib's Huffman-only strategy, an entropy coder like
    ZipNN's), V(lzma) from the standard library, V(zstd) where the C(zstandard) Python module is installed. The codecs
    run over 1 MiB chunks in a thread pool over O(cores) of the cores this process may use (sched_getaffinity);
    a stream a codec does not shrink counts stored raw.
  - With O(previous) (the same job's checkpoint before), the same for the XOR of each tensor with the same tensor
    before (RV(delta)).
  - Projects the effective bandwidth for each codec, min(O(write_bandwidth) x ratio, per-core compression speed x
    cores), and names the bound that binds (V(write) or V(compress)).
  - Every file is opened C(O_NOFOLLOW) and checked to be a regular file; a symlink given as a path, a FIFO, a device
    or a path outside O(roots) is refused; a symlink inside a directory is followed only when it stays inside
    O(roots).
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Python 3.6 or later on the node; C(zstandard) optional (V(zstd) is reported unavailable without it).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads only; the same measurement in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  paths:
    description:
      - Checkpoint files or directories (a DeepSpeed C(global_step*) directory, or its parent) to measure.
    type: list
    elements: path
    required: true
  previous:
    description:
      - The same job's previous checkpoint, one path for each of O(paths) in the same order and layout; tensors are
        paired by their file's name relative to the path and their name in it.
    type: list
    elements: path
    default: []
  roots:
    description:
      - Directories every file read must resolve into (a symlink out of them is refused). Default the O(paths) and
        O(previous) themselves.
    type: list
    elements: path
  sample_bytes:
    description:
      - Bytes sampled per tensor class (each class of O(previous) too), a whole number from 65536 (64 KiB) to
        1073741824 (1 GiB).
    type: raw
    default: 8388608
  time_budget:
    description:
      - Seconds after which no more is read or compressed, a whole number from 1 to 3600; what was measured by then
        is reported.
    type: raw
    default: 120
  codecs:
    description:
      - The codecs measured. V(zstd) is left out where C(zstandard) does not import (RV(codecs) says so; none of
        those asked available is an error).
    type: list
    elements: str
    choices: [zlib, huffman, lzma, zstd]
    default: [zlib, huffman, lzma, zstd]
  cores:
    description:
      - Cores the compression may use (and the projection counts), a whole number from 0 to 4096; V(0) for every core
        this process may run on. More than there are means all there are.
    type: raw
    default: 0
  write_bandwidth:
    description:
      - The tuned write bandwidth in MiB/s, a number above 0 and up to 10000000 (the verification's after-tuning
        median, C(checkpoint_io_verify.after.throughput_gib_s.median * 1024)). Without it the projection gives only
        the compression bound.
    type: raw
'''

EXAMPLES = r'''
- name: How far would the last checkpoint shrink, and what does that make of the tuned write?
  ai_storage.checkpoint_io.checkpoint_compression:
    paths: [/mnt/checkpoints/run7/global_step2000]
    previous: [/mnt/checkpoints/run7/global_step1000]
    roots: [/mnt/checkpoints/run7]
    write_bandwidth: "{{ (checkpoint_io_verify.after.throughput_gib_s.median * 1024) | round(1) }}"
  register: compression

- name: Show the projection
  ansible.builtin.debug:
    msg: >-
      {{ compression.projection.codec }} x{{ compression.projection.ratio }}:
      {{ compression.projection.effective_mib_s }} MiB/s ({{ compression.projection.bound }} bound)
'''

RETURN = r'''
classes:
  description:
    - Per tensor class (V(bf16), V(fp16), V(fp32), V(opaque)) what was found and measured.
    - C(dtypes), C(tensors), C(tensors_sampled), C(total_bytes) (all of the class), C(sampled_bytes), C(stopped_by)
      (V(null), V(bytes) for a sample smaller than the class, V(time) when the time budget ended it).
    - C(streams) by stream name, each with C(bytes), C(entropy_bits) (bits per byte), C(bound_ratio) (8/H, null for a
      constant stream) and C(codecs) (by codec, C(ratio) and C(compressed) bytes); streams V(exponent),
      V(sign_mantissa) (BF16, FP16), V(byte0) to V(byte3) (FP32), V(bytes) (opaque).
    - C(bound_ratio) the class's entropy-coder bound (the streams coded independently), C(codecs) by codec with
      C(ratio) (each stream coded independently, stored raw where that is smaller), C(per_core_mib_s) (class bytes
      per CPU second, the split included) and C(pool_mib_s) (over the pool's wall time).
  returned: always
  type: dict
  sample:
    bf16:
      dtypes: [bfloat16]
      tensors: 4
      tensors_sampled: 4
      total_bytes: 525824
      sampled_bytes: 525824
      stopped_by: null
      bound_ratio: 1.5677
      streams:
        exponent: {bytes: 262912, entropy_bits: 2.2289, bound_ratio: 3.5892,
                   codecs: {huffman: {ratio: 3.52, compressed: 74690}}}
        sign_mantissa: {bytes: 262912, entropy_bits: 7.9772, bound_ratio: 1.0029,
                        codecs: {huffman: {ratio: 0.998, compressed: 263400}}}
      codecs: {huffman: {ratio: 1.5498, per_core_mib_s: 80.1, pool_mib_s: 120.4}}
projection:
  description:
    - The codec with the highest effective bandwidth (the highest ratio without O(write_bandwidth)) over the whole
      checkpoint (each class at its measured ratio and speed).
    - C(ratio), C(per_core_mib_s), C(write_mib_s) (the O(write_bandwidth) given), C(write_bound_mib_s) (write x
      ratio), C(compress_bound_mib_s) (per core x cores), C(effective_mib_s) (the smaller; null without a write
      bandwidth), C(bound) (V(write) or V(compress); null without a write bandwidth), C(codec).
    - V(null) when no codec could be measured.
  returned: always
  type: dict
  sample: {codec: huffman, ratio: 1.2473, per_core_mib_s: 60.2, write_mib_s: 2000.0, write_bound_mib_s: 2494.6,
           compress_bound_mib_s: 120.4, effective_mib_s: 120.4, bound: compress}
projections:
  description: The same as RV(projection) for every codec measured, by codec (without C(codec) and C(write_mib_s)).
  returned: always
  type: dict
delta:
  description:
    - With O(previous), the XOR of each tensor with the same tensor of the previous checkpoint, measured the same
      way. C(classes), C(projections), C(projection) as above, C(matched_tensors), C(unmatched_tensors) (no tensor of
      the same name, class and length before), C(paths), C(files), C(refused) of the previous checkpoint.
    - V(null) without O(previous).
  returned: always
  type: dict
files:
  description: Every file read, with its C(format) (V(safetensors), V(torch_zip), V(opaque), V(empty); V(null) when it
    could not be read), C(size), C(tensors) found, C(error) (why it was skipped) and C(note) (dtypes not found).
  returned: always
  type: list
  elements: dict
  sample: [{path: /mnt/ckpt/step3.pt, format: torch_zip, size: 2633991, tensors: 16, error: null, note: null}]
paths:
  description: Each asked path with its C(layout) (V(file), V(directory), V(deepspeed_zero)) and how many files it has.
  returned: always
  type: list
  elements: dict
  sample: [{path: /mnt/ckpt/global_step2000, layout: deepspeed_zero, files: 3}]
refused:
  description: Entries inside the directories not read, with the reason (a symlink out of the roots, a FIFO...).
  returned: always
  type: list
  elements: dict
  sample: [{path: /mnt/ckpt/run/link, reason: 'symlink to /etc/shadow, outside the roots asked'}]
unknown_dtypes:
  description: The dtypes found that the module does not split (measured as opaque bytes).
  returned: always
  type: list
  elements: str
  sample: [F8_E8M0]
codecs:
  description: Every codec and its library version on the node (V(null) for V(zstd) without C(zstandard)).
  returned: always
  type: dict
  sample: {zlib: 1.2.13, huffman: 1.2.13, lzma: liblzma, zstd: null}
codecs_measured:
  description: The codecs asked for that the node has, in the order measured.
  returned: always
  type: list
  elements: str
  sample: [zlib, huffman, lzma]
cores:
  description: The cores this process may run on (C(available)) and the threads the codecs ran on (C(used)).
  returned: always
  type: dict
  sample: {available: 16, used: 16}
sampling:
  description: The bounds (C(sample_bytes), C(time_budget_s)), the codec input C(chunk_bytes), the sampling
    C(window_bytes), the codec C(levels), the bytes sampled in all, the seconds it took (C(elapsed_s)) and whether the
    time budget stopped anything (C(stopped_by_time)).
  returned: always
  type: dict
  sample: {sample_bytes: 8388608, time_budget_s: 120, chunk_bytes: 1048576, window_bytes: 65536,
           levels: {zlib: 6, huffman: 9, lzma: 1}, sampled_bytes: 2629136, elapsed_s: 0.57, stopped_by_time: false}
'''

import math
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import compression
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import checkpoint_formats
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    check_path_limits,
    whole_number_errors,
)

LIMITS = {'sample_bytes': (64 * 1024, 2 ** 30), 'time_budget': (1, 3600), 'cores': (0, 4096)}
MAX_WRITE_MIB_S = 10000000


def _bandwidth(value):
    """A finite float above 0 from a number or a numeric string; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and 0 < number <= MAX_WRITE_MIB_S else None


def _path_errors(option, paths):
    errors = []
    for path in paths:
        if not isinstance(path, str) or not path.startswith('/'):
            errors.append('%s: %r is not an absolute path' % (option, path))
            continue
        try:
            check_path_limits(path, option)
        except ValueError as exc:
            errors.append(str(exc))
    return errors


def input_errors(params):
    """Messages naming each bad value and its limit; the numbers are made ints (a float) in ``params``."""
    errors = whole_number_errors(params, LIMITS)
    if params['write_bandwidth'] is not None:
        value = _bandwidth(params['write_bandwidth'])
        if value is None:
            errors.append('write_bandwidth: %r must be a number of MiB/s above 0 and up to %d'
                          % (params['write_bandwidth'], MAX_WRITE_MIB_S))
        params['write_bandwidth'] = value
    if not params['paths']:
        errors.append('paths: %r names no checkpoint file or directory' % (params['paths'],))
    if not params['codecs']:
        errors.append('codecs: %r names no codec (choose from %s)' % (params['codecs'], ', '.join(compression.CODECS)))
    if params['previous'] and len(params['previous']) != len(params['paths'] or []):
        errors.append('previous: %d paths for %d in paths: give one previous checkpoint per path, in the same order'
                      % (len(params['previous']), len(params['paths'] or [])))
    if params['roots'] is not None and not params['roots']:
        errors.append('roots: %r names no directory (omit it for the paths themselves)' % (params['roots'],))
    for option in ('paths', 'previous', 'roots'):
        errors.extend(_path_errors(option, params[option] or []))
    return errors


def main():
    module = AnsibleModule(argument_spec=dict(
        paths=dict(type='list', elements='path', required=True),
        previous=dict(type='list', elements='path', default=[]),
        roots=dict(type='list', elements='path'),
        sample_bytes=dict(type='raw', default=8 * 2 ** 20),
        time_budget=dict(type='raw', default=120),
        codecs=dict(type='list', elements='str', choices=compression.CODECS, default=list(compression.CODECS)),
        cores=dict(type='raw', default=0),
        write_bandwidth=dict(type='raw'),
    ), supports_check_mode=True)
    params = module.params
    errors = input_errors(params)
    if errors:
        module.fail_json(msg='checkpoint_compression: %s; nothing was read' % '; '.join(errors))
    roots = params['roots'] or [os.path.normpath(p) for p in params['paths'] + params['previous']]
    have = compression.available_codecs()
    if not any(have.get(codec) for codec in params['codecs']):
        module.fail_json(msg='codecs: %s: none is available on this node (zstd needs the Python module zstandard); '
                             'nothing was read' % ', '.join(params['codecs']))
    try:
        result = compression.measure(params['paths'], roots, params['sample_bytes'], params['time_budget'],
                                     params['codecs'], params['cores'], params['write_bandwidth'],
                                     params['previous'] or None)
    except checkpoint_formats.CheckpointError as exc:
        module.fail_json(msg='checkpoint_compression: %s' % exc)
    except (OSError, MemoryError) as exc:
        module.fail_json(msg='checkpoint_compression: reading %s failed: %s' % (', '.join(params['paths']), exc))
    if result['sampling']['stopped_by_time']:
        module.warn('the time budget (%d s) ended the measurement before every class and codec was measured: '
                    'raise time_budget or lower sample_bytes' % params['time_budget'])
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
