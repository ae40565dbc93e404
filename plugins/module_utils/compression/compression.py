# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compression readiness of a checkpoint: what its tensors are, how far they would shrink, what that does to the
tuned write. Read-only and pickle-free.

Formats: safetensors (dtype and offsets from the JSON header), PyTorch zip checkpoints (``*/data/<n>`` entries are
the storages; their dtypes come from scanning ``data.pkl``'s opcodes with ``pickletools.genops``, never executing
them), DeepSpeed ZeRO directories (``global_step*/`` of torch zip files), anything else opaque bytes: read by
:mod:`checkpoint_formats`.
Streams: BF16 and FP16 split into an exponent stream and a sign+mantissa stream, FP32 into its 4 byte planes, any other
dtype one opaque stream. Per stream: the order-0 empirical entropy (the bound of an entropy coder, ratio 8/H) and
the ratio and throughput of real codecs (zlib, lzma, zstd where ``zstandard`` imports) over fixed-size chunks, in a
thread pool over the node's cores (the codecs release the GIL).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import struct
import time
import zlib
import lzma
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression.checkpoint_formats import (
    CheckpointError,
    MIB,
    _inside,
    _pread,
    find_files,
    open_regular,
    recognise,
)

try:
    import zstandard
except ImportError:  # optional: reported as unavailable
    zstandard = None

CHUNK = MIB                      # codec input per job: the ratio is the chunked one (as ZipNN compresses)
WINDOW = 64 * 1024               # sampled bytes are read in windows spread over each tensor
LEVELS = {'zlib': 6, 'huffman': 9, 'lzma': 1, 'zstd': 3}
CODECS = ['zlib', 'huffman', 'lzma', 'zstd']   # huffman: zlib's Huffman-only strategy, an order-0 entropy coder

STREAMS = {'bf16': ['exponent', 'sign_mantissa'], 'fp16': ['exponent', 'sign_mantissa'],
           'fp32': ['byte0', 'byte1', 'byte2', 'byte3'], 'opaque': ['bytes']}


# --- sampling and streams -------------------------------------------------------------------------------------------
def sample_windows(length, quota, itemsize, window=WINDOW):
    """[(offset, size)] inside a tensor of ``length`` bytes: ``quota`` bytes (whole elements) in windows spread
    evenly from its start to its end; the whole tensor when the quota covers it."""
    quota = min(quota, length) // itemsize * itemsize
    if quota <= 0:
        return []
    if quota >= length:
        return [(0, length)]
    window = max(itemsize, window // itemsize * itemsize)
    count = int(math.ceil(quota / window))
    size = quota // count // itemsize * itemsize
    if size <= 0:
        return []
    span = length - size
    return [((span * i // max(1, count - 1)) // itemsize * itemsize, size) for i in range(count)]


def plan_sample(tensors, budget):
    """{tensor id: [(offset, size)]} taking at most ``budget`` bytes of the tensors given (one class), each tensor's
    share proportional to its size."""
    total = sum(t['length'] for t in tensors)
    plan = {}
    for index, tensor in enumerate(tensors):
        quota = tensor['length'] if total <= budget else budget * tensor['length'] // max(1, total)
        plan[index] = sample_windows(tensor['length'], quota, tensor['itemsize'])
    return plan


def _masks(size, value):
    return int.from_bytes(bytes([value]) * size, 'little')


def split_streams(cls, data):
    """{stream: bytes} of little-endian ``data`` of class ``cls``. BF16: exponent = bits 7..14, sign_mantissa = the
    sign bit and the 7 mantissa bits in one byte. FP16: exponent = bits 10..14 (one byte), sign_mantissa = the two
    bytes with the exponent bits cleared. FP32: byte planes. Anything else: the bytes."""
    if cls in ('bf16', 'fp16'):
        data = data[:len(data) // 2 * 2]
        lo, hi = data[0::2], data[1::2]
        n = len(lo)
        lo_i, hi_i = int.from_bytes(lo, 'little'), int.from_bytes(hi, 'little')
        if cls == 'bf16':
            exponent = ((hi_i & _masks(n, 0x7F)) << 1) | ((lo_i & _masks(n, 0x80)) >> 7)
            sign_mantissa = (hi_i & _masks(n, 0x80)) | (lo_i & _masks(n, 0x7F))
            return {'exponent': exponent.to_bytes(n, 'little'), 'sign_mantissa': sign_mantissa.to_bytes(n, 'little')}
        exponent = (hi_i & _masks(n, 0x7C)) >> 2
        mixed = bytearray(2 * n)
        mixed[0::2] = lo
        mixed[1::2] = (hi_i & _masks(n, 0x83)).to_bytes(n, 'little')
        return {'exponent': exponent.to_bytes(n, 'little'), 'sign_mantissa': bytes(mixed)}
    if cls == 'fp32':
        data = data[:len(data) // 4 * 4]
        return dict(('byte%d' % i, data[i::4]) for i in range(4))
    return {'bytes': bytes(data)}


def xor(a, b):
    """The bytes of a XOR b (equal lengths)."""
    return (int.from_bytes(a, 'little') ^ int.from_bytes(b, 'little')).to_bytes(len(a), 'little')


def entropy_bits(data=None, counts=None):
    """Order-0 empirical Shannon entropy in bits per byte (0.0 for nothing)."""
    counts = counts if counts is not None else Counter(data)
    total = sum(counts.values())
    if not total:
        return 0.0
    return -sum(c / total * math.log2(c / total) for c in counts.values() if c)


def bound_ratio(bits):
    """The ratio an ideal order-0 entropy coder reaches at ``bits`` per byte (8/H; None for a constant stream)."""
    return round(8.0 / bits, 4) if bits > 0 else None


# --- codecs ---------------------------------------------------------------------------------------------------------
def available_codecs():
    """{codec: version or None, ...} with a 'missing' note for zstd when ``zstandard`` does not import."""
    out = {'zlib': zlib.ZLIB_RUNTIME_VERSION, 'huffman': zlib.ZLIB_RUNTIME_VERSION, 'lzma': 'liblzma'}
    out['zstd'] = getattr(zstandard, '__version__', 'zstandard') if zstandard is not None else None
    return out


def compressor(codec):
    if codec == 'zlib':
        return lambda data: zlib.compress(data, LEVELS['zlib'])
    if codec == 'huffman':
        return huffman
    if codec == 'lzma':
        return lambda data: lzma.compress(data, preset=LEVELS['lzma'])
    if codec == 'zstd' and zstandard is not None:
        return zstandard.ZstdCompressor(level=LEVELS['zstd']).compress
    raise ValueError('codec %r is not available on this node' % codec)


def huffman(data):
    """zlib with the Huffman-only strategy: no string matching, an order-0 entropy coder (what ZipNN applies to
    the exponent stream)."""
    coder = zlib.compressobj(LEVELS['huffman'], zlib.DEFLATED, 15, 9, zlib.Z_HUFFMAN_ONLY)
    return coder.compress(data) + coder.flush()


def _job(codec, data):
    compress = compressor(codec)
    start = time.thread_time()
    size = len(compress(data))
    return size, time.thread_time() - start


def chunks(data, size=CHUNK):
    return [data[i:i + size] for i in range(0, len(data), size)] or [b'']


def measure_codecs(streams, codecs, workers, deadline=None):
    """{stream: {codec: {compressed, ratio, cpu_s}}} and {codec: wall seconds of the pool} compressing every stream
    in CHUNK pieces with ``workers`` threads; a codec not started before ``deadline`` is left out."""
    out = dict((name, {}) for name in streams)
    walls = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for codec in codecs:
            if deadline is not None and time.monotonic() > deadline:
                break
            start = time.monotonic()
            futures = dict((name, [pool.submit(_job, codec, piece) for piece in chunks(data)])
                           for name, data in streams.items())
            for name, jobs in futures.items():
                sizes = [job.result() for job in jobs]
                compressed = sum(s for s, _c in sizes)
                out[name][codec] = {'compressed': compressed, 'cpu_s': sum(c for _s, c in sizes),
                                    'ratio': round(len(streams[name]) / compressed, 4) if compressed else None}
            walls[codec] = time.monotonic() - start
    return out, walls


def _mib_s(nbytes, seconds):
    return round(nbytes / MIB / seconds, 1) if seconds > 0 else None


def class_report(cls, data, codecs, workers, deadline=None):
    """The measurements of one tensor class's sample ``data``: streams (bytes, entropy, bound ratio, per codec
    ratio), the class's bound ratio and per codec its ratio (the streams coded independently, each stored raw where
    the codec does not shrink it, as ZipNN does), per-core and pool throughput."""
    start = time.thread_time()
    streams = split_streams(cls, data)
    split_cpu = time.thread_time() - start
    measured, walls = measure_codecs(streams, codecs, workers, deadline)
    total = sum(len(s) for s in streams.values())
    report = {'sampled_bytes': total, 'streams': {}, 'codecs': {}}
    bound_bytes = 0.0
    for name, stream in streams.items():
        bits = entropy_bits(stream)
        bound_bytes += len(stream) * bits / 8.0
        report['streams'][name] = {'bytes': len(stream), 'entropy_bits': round(bits, 4),
                                   'bound_ratio': bound_ratio(bits),
                                   'codecs': dict((c, {'ratio': m['ratio'], 'compressed': m['compressed']})
                                                  for c, m in measured[name].items())}
    report['bound_ratio'] = round(total / bound_bytes, 4) if bound_bytes > 0 else None
    for codec in walls:
        stored = sum(min(len(streams[n]), measured[n][codec]['compressed']) for n in streams)
        cpu = sum(measured[n][codec]['cpu_s'] for n in streams) + split_cpu
        report['codecs'][codec] = {'ratio': round(total / stored, 4) if stored else None,
                                   'per_core_mib_s': _mib_s(total, cpu),
                                   'pool_mib_s': _mib_s(total, walls[codec] + split_cpu)}
    return report


# --- whole-checkpoint arithmetic ------------------------------------------------------------------------------------
def overall(classes, totals, codec):
    """(ratio, per-core MiB/s) of a whole checkpoint of ``totals`` {class: bytes} at each class's measured ratio and
    speed for ``codec``; None where a class was not measured with it."""
    stored, cpu = 0.0, 0.0
    for cls, nbytes in totals.items():
        entry = (classes.get(cls) or {}).get('codecs', {}).get(codec)
        if not nbytes:
            continue
        if not entry or not entry['ratio'] or not entry['per_core_mib_s']:
            return None, None
        stored += nbytes / entry['ratio']
        cpu += nbytes / MIB / entry['per_core_mib_s']
    total = sum(totals.values())
    if not total or not stored:
        return None, None
    return round(total / stored, 4), round(total / MIB / cpu, 1)


def project(write_mib_s, ratio, per_core_mib_s, cores):
    """The effective checkpoint bandwidth (MiB/s of checkpoint bytes): min(write x ratio, compression across the
    cores), with the bound that binds ('write' or 'compress'); None values where an input is missing."""
    if ratio is None or per_core_mib_s is None:
        return {'effective_mib_s': None, 'bound': None, 'write_bound_mib_s': None, 'compress_bound_mib_s': None}
    compress = round(per_core_mib_s * cores, 1)
    if write_mib_s is None:
        return {'effective_mib_s': None, 'bound': None, 'write_bound_mib_s': None, 'compress_bound_mib_s': compress}
    write = round(write_mib_s * ratio, 1)
    return {'effective_mib_s': min(write, compress), 'bound': 'write' if write <= compress else 'compress',
            'write_bound_mib_s': write, 'compress_bound_mib_s': compress}


def usable_cores(asked=0):
    """(cores available to this process, cores used): sched_getaffinity where the platform has it."""
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = os.cpu_count() or 1
    return available, min(asked, available) if asked else available


# --- one run --------------------------------------------------------------------------------------------------------
class Reader(object):
    """The checkpoint files of one asked path set, opened O_NOFOLLOW read-only; tensors keyed (relative file name,
    tensor name). A file is closed once parsed and opened again to be sampled (at most OPEN_FILES at a time: a ZeRO
    directory of a thousand ranks stays under the descriptor limit), refused if it is no longer the same file."""

    OPEN_FILES = 64

    def __init__(self, paths, roots):
        self.fds, self.files, self.refused, self.layouts, self.tensors = {}, [], [], [], []
        self.identity = {}
        for index, path in enumerate(paths):
            layout, found, refused = find_files(path, roots)
            self.layouts.append({'path': path, 'layout': layout, 'files': len(found)})
            self.refused.extend(refused)
            for rel, real in found:
                self._add(index, rel, real)

    @staticmethod
    def _identity(fd):
        st = os.fstat(fd)
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _add(self, index, rel, real):
        entry = {'path': real, 'format': None, 'size': None, 'tensors': 0, 'error': None, 'note': None}
        self.files.append(entry)
        try:
            fd, size = open_regular(real)
        except CheckpointError as exc:
            entry['error'] = str(exc)
            return
        entry['size'] = size
        try:
            self.identity[real] = self._identity(fd)
            entry['format'], tensors, entry['note'] = recognise(fd, size, real)
        except CheckpointError as exc:
            entry['error'] = str(exc)
            return
        except (OSError, ValueError, struct.error) as exc:
            entry['error'] = '%s could not be read: %s' % (real, exc)
            return
        finally:
            os.close(fd)
        entry['tensors'] = len(tensors)
        for tensor in tensors:
            tensor.update(path=real, key=(index, rel, tensor['name']))
            self.tensors.append(tensor)

    def _fd(self, path):
        fd = self.fds.get(path)
        if fd is not None:
            return fd
        if len(self.fds) >= self.OPEN_FILES:
            os.close(self.fds.pop(next(iter(self.fds))))
        fd, _size = open_regular(path)
        if self._identity(fd) != self.identity[path]:
            os.close(fd)
            raise CheckpointError('%s changed while it was measured (another file, size or time now): measure it '
                                  'again once the checkpoint is complete' % path)
        self.fds[path] = fd
        return fd

    def read(self, tensor, windows):
        fd = self._fd(tensor['path'])
        return b''.join(_pread(fd, size, tensor['offset'] + offset) for offset, size in windows)

    def close(self):
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}


def _sample(reader, tensors, budget, deadline, other=None):
    """(bytes, tensors sampled, stopped) of one class: the plan's windows read in order until the deadline; with
    ``other`` (a Reader and {key: tensor}) each window XORed with the same window of the matching tensor."""
    plan = plan_sample(tensors, budget)
    parts, used, stopped = [], 0, None
    for index, tensor in enumerate(tensors):
        if time.monotonic() > deadline:
            stopped = 'time'
            break
        if not plan[index]:
            continue
        data = reader.read(tensor, plan[index])
        if other is not None:
            other_reader, matches = other
            data = xor(data, other_reader.read(matches[tensor['key']], plan[index]))
        parts.append(data)
        used += 1
    data = b''.join(parts)
    if stopped is None and sum(t['length'] for t in tensors) > budget:
        stopped = 'bytes'
    return data, used, stopped


def _classes(reader, budget, codecs, workers, deadline, previous=None):
    by_class = {}
    for tensor in reader.tensors:
        if previous is not None and tensor['key'] not in previous[1]:
            continue
        by_class.setdefault(tensor['cls'], []).append(tensor)
    out = {}
    for cls in sorted(by_class):
        tensors = by_class[cls]
        data, used, stopped = _sample(reader, tensors, budget, deadline, previous)
        dtypes = sorted(set(str(t['dtype']) for t in tensors))
        entry = {'dtypes': dtypes, 'tensors': len(tensors), 'tensors_sampled': used,
                 'total_bytes': sum(t['length'] for t in tensors), 'stopped_by': stopped}
        entry.update(class_report(cls, data, codecs, workers, deadline))
        if entry['stopped_by'] is None and len(entry['codecs']) < len(codecs):
            entry['stopped_by'] = 'time'
        out[cls] = entry
    return out


def _matches(current, previous):
    """{key: previous tensor} for the current tensors with a previous one of the same key, class and length."""
    old = dict(((t['key'][0], t['key'][1], t['name']), t) for t in previous.tensors)
    out = {}
    for tensor in current.tensors:
        match = old.get(tensor['key'])
        if match is not None and match['cls'] == tensor['cls'] and match['length'] == tensor['length']:
            out[tensor['key']] = match
    return out


def _projections(classes, codecs, write_mib_s, cores):
    totals = dict((cls, entry['total_bytes']) for cls, entry in classes.items())
    out = {}
    for codec in codecs:
        ratio, per_core = overall(classes, totals, codec)
        out[codec] = dict(project(write_mib_s, ratio, per_core, cores), ratio=ratio, per_core_mib_s=per_core)
    measured = [c for c in out if out[c]['ratio'] is not None]
    if not measured:
        return out, None
    key = 'effective_mib_s' if write_mib_s is not None else 'ratio'
    best = max(measured, key=lambda c: (out[c][key] or 0, out[c]['ratio']))
    return out, best


def measure(paths, roots, sample_bytes, time_budget, codecs, cores=0, write_mib_s=None, previous=None):
    """The whole result of the module (see its RETURN); CheckpointError when nothing could be measured."""
    start = time.monotonic()
    deadline = start + time_budget
    roots = [os.path.realpath(root) for root in roots]
    available, used = usable_cores(cores)
    have = available_codecs()
    codecs = [c for c in codecs if have.get(c)]
    for path in paths + (previous or []):
        if not _inside(os.path.realpath(path), roots):
            raise CheckpointError('%s is outside the roots asked (%s); nothing was read' % (path, ', '.join(roots)))
    current = Reader(paths, roots)
    old = None
    try:
        if not current.tensors or not any(t['length'] for t in current.tensors):
            problems = [f['error'] for f in current.files if f['error']]
            problems += ['%s is empty (0 bytes)' % f['path'] for f in current.files
                         if f['format'] == 'empty']
            problems += ['%s: refused (%s)' % (r['path'], r['reason']) for r in current.refused]
            raise CheckpointError('nothing to measure in %s: %s' % (', '.join(paths),
                                                                    '; '.join(problems) or 'no files found'))
        classes = _classes(current, sample_bytes, codecs, used, deadline)
        result = {'files': current.files, 'paths': current.layouts, 'refused': current.refused,
                  'unknown_dtypes': sorted(set(str(t['dtype']) for t in current.tensors if not t['known']
                                               and t['dtype'] is not None)),
                  'classes': classes, 'delta': None}
        if previous:
            old = Reader(previous, roots)
            matches = _matches(current, old)
            delta = _classes(current, sample_bytes, codecs, used, deadline, (old, matches)) if matches else {}
            projections, best = _projections(delta, codecs, write_mib_s, used)
            result['delta'] = {'paths': old.layouts, 'files': old.files, 'refused': old.refused,
                               'matched_tensors': len(matches), 'unmatched_tensors': len(current.tensors) - len(matches),
                               'classes': delta, 'projections': projections,
                               'projection': dict(projections[best], codec=best) if best else None}
        projections, best = _projections(classes, codecs, write_mib_s, used)
        result.update({
            'projections': projections,
            'projection': dict(projections[best], codec=best, write_mib_s=write_mib_s) if best else None,
            'codecs': have, 'codecs_measured': codecs,
            'cores': {'available': available, 'used': used},
            'sampling': {'sample_bytes': sample_bytes, 'time_budget_s': time_budget, 'chunk_bytes': CHUNK,
                         'window_bytes': WINDOW, 'levels': dict((c, LEVELS[c]) for c in codecs),
                         'sampled_bytes': sum(c['sampled_bytes'] for c in classes.values()),
                         'elapsed_s': round(time.monotonic() - start, 3),
                         'stopped_by_time': any(c['stopped_by'] == 'time' for c in classes.values())},
        })
        return result
    finally:
        current.close()
        if old is not None:
            old.close()


# --- the summary line -----------------------------------------------------------------------------------------------
def _class_ratios(classes, codec):
    parts = []
    for cls in sorted(classes or {}):
        entry = (classes[cls].get('codecs') or {}).get(codec) or {}
        if entry.get('ratio'):
            parts.append('%s x%.2f' % (cls, entry['ratio']))
    return ', '.join(parts) or 'nothing measured'


def summary_line(result):
    """One line of a checkpoint_compression result: the ratio by tensor class with the projection's codec, the delta's,
    the projected effective bandwidth and the bound that binds."""
    if not isinstance(result, dict) or 'classes' not in result:
        raise ValueError('%r is not a checkpoint_compression result' % (result,))
    projection = result.get('projection')
    if not projection:
        return 'no codec measured (asked: %s)' % (', '.join(result.get('codecs_measured') or []) or 'none available')
    codec = projection['codec']
    line = '%s: %s' % (codec, _class_ratios(result['classes'], codec))
    delta = result.get('delta') or {}
    if delta.get('classes'):
        line += '; delta %s' % _class_ratios(delta['classes'], codec)
    cores = (result.get('cores') or {}).get('used')
    if projection.get('effective_mib_s') is None:
        line += '; whole checkpoint x%.2f, compression %.1f MiB/s on %s cores (no write bandwidth given)' % (
            projection['ratio'], projection['compress_bound_mib_s'], cores)
        return line
    return line + ('; effective %.1f MiB/s (%s-bound: write %.1f MiB/s x%.2f = %.1f, compression %.1f MiB/s on %s '
                   'cores)' % (projection['effective_mib_s'], projection['bound'], projection['write_mib_s'],
                               projection['ratio'], projection['write_bound_mib_s'], projection['compress_bound_mib_s'],
                               cores))
