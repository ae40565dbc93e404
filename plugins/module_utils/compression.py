# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compression readiness of a checkpoint: what its tensors are, how far they would shrink, what that does to the
tuned write. Read-only and pickle-free.

Formats: safetensors (dtype and offsets from the JSON header), PyTorch zip checkpoints (``*/data/<n>`` entries are
the storages; their dtypes come from scanning ``data.pkl``'s opcodes with ``pickletools.genops``, never executing
them), DeepSpeed ZeRO directories (``global_step*/`` of torch zip files), anything else opaque bytes.
Streams: BF16 and FP16 split into an exponent stream and a sign+mantissa stream, FP32 into its 4 byte planes, any other
dtype one opaque stream. Per stream: the order-0 empirical entropy (the bound of an entropy coder, ratio 8/H) and
the ratio and throughput of real codecs (zlib, lzma, zstd where ``zstandard`` imports) over fixed-size chunks, in a
thread pool over the node's cores (the codecs release the GIL).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import math
import os
import pickletools
import stat
import struct
import time
import zipfile
import zlib
import lzma
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils import scratch

try:
    import zstandard
except ImportError:  # optional: reported as unavailable
    zstandard = None

MIB = 2 ** 20
CHUNK = MIB                      # codec input per job: the ratio is the chunked one (as ZipNN compresses)
WINDOW = 64 * 1024               # sampled bytes are read in windows spread over each tensor
MAX_SAFETENSORS_HEADER = 100 * MIB
MAX_PICKLE = 256 * MIB
LEVELS = {'zlib': 6, 'huffman': 9, 'lzma': 1, 'zstd': 3}
CODECS = ['zlib', 'huffman', 'lzma', 'zstd']   # huffman: zlib's Huffman-only strategy, an order-0 entropy coder

# safetensors dtype -> (bytes per element, tensor class)
SAFETENSORS_DTYPES = {
    'BF16': (2, 'bf16'), 'F16': (2, 'fp16'), 'F32': (4, 'fp32'), 'F64': (8, 'opaque'), 'I64': (8, 'opaque'),
    'I32': (4, 'opaque'), 'I16': (2, 'opaque'), 'I8': (1, 'opaque'), 'U8': (1, 'opaque'), 'U16': (2, 'opaque'),
    'U32': (4, 'opaque'), 'U64': (8, 'opaque'), 'BOOL': (1, 'opaque'), 'F8_E4M3': (1, 'opaque'),
    'F8_E5M2': (1, 'opaque'),
}
# torch storage class names in data.pkl -> (dtype, tensor class)
TORCH_STORAGES = {
    'BFloat16Storage': ('bfloat16', 'bf16'), 'HalfStorage': ('float16', 'fp16'), 'FloatStorage': ('float32', 'fp32'),
    'DoubleStorage': ('float64', 'opaque'), 'LongStorage': ('int64', 'opaque'), 'IntStorage': ('int32', 'opaque'),
    'ShortStorage': ('int16', 'opaque'), 'CharStorage': ('int8', 'opaque'), 'ByteStorage': ('uint8', 'opaque'),
    'BoolStorage': ('bool', 'opaque'),
}
CLASS_ITEMSIZE = {'bf16': 2, 'fp16': 2, 'fp32': 4, 'opaque': 1}
STREAMS = {'bf16': ['exponent', 'sign_mantissa'], 'fp16': ['exponent', 'sign_mantissa'],
           'fp32': ['byte0', 'byte1', 'byte2', 'byte3'], 'opaque': ['bytes']}


class CheckpointError(Exception):
    """A file or path that cannot be read as asked; the message names it and the limit."""


# --- paths ----------------------------------------------------------------------------------------------------------
def _inside(path, roots):
    return any(path == root or path.startswith(root.rstrip('/') + '/') for root in roots)


def open_regular(path):
    """(fd, size) of a regular file, opened read-only with no symlink followed at any component (the path is a real
    path: a directory on the way swapped for a link after it was resolved is refused, not followed out of the
    roots); CheckpointError for anything else."""
    try:
        fd = scratch.open_real(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        if os.path.islink(path):
            raise CheckpointError('%s is a symlink: not followed (name the file it points to)' % path)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise CheckpointError('%s: a component on its way is now a symlink or not a directory (changed while '
                                  'it was read): not followed' % path)
        raise CheckpointError('%s cannot be opened: %s' % (path, exc.strerror))
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise CheckpointError('%s is not a regular file (%s): only checkpoint files and directories are read'
                              % (path, _kind(st.st_mode)))
    return fd, st.st_size


def _kind(mode):
    for test, name in ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'), (stat.S_ISCHR, 'a character device'),
                       (stat.S_ISBLK, 'a block device'), (stat.S_ISSOCK, 'a socket'), (stat.S_ISLNK, 'a symlink')):
        if test(mode):
            return name
    return 'not a regular file'


def find_files(path, roots):
    """(layout, [(relative name, real path)], [refused: {path, reason}]) of one asked path: a regular file or a
    directory walked without following symlinks out of ``roots`` (real paths). CheckpointError when the path
    itself is a symlink, missing, outside the roots or neither a file nor a directory."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise CheckpointError('%s cannot be read: %s' % (path, exc.strerror))
    if stat.S_ISLNK(st.st_mode):
        raise CheckpointError('%s is a symlink: not followed (name the file it points to)' % path)
    real = os.path.realpath(path)
    if not _inside(real, roots):
        raise CheckpointError('%s is outside the roots asked (%s)' % (path, ', '.join(roots)))
    if stat.S_ISREG(st.st_mode):
        return 'file', [('', real)], []
    if not stat.S_ISDIR(st.st_mode):
        raise CheckpointError('%s is %s: only checkpoint files and directories are read' % (path, _kind(st.st_mode)))
    files, refused = [], []
    for base, dirs, names in os.walk(real, followlinks=False):
        dirs.sort()
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            full = os.path.join(base, name)
            rel = os.path.relpath(full, real)
            try:
                lst = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISLNK(lst.st_mode):
                target = os.path.realpath(full)
                if not _inside(target, roots):
                    refused.append({'path': full, 'reason': 'symlink to %s, outside the roots asked' % target})
                    continue
                try:
                    lst = os.stat(target)
                except OSError as exc:
                    refused.append({'path': full, 'reason': 'symlink to %s: %s' % (target, exc.strerror)})
                    continue
                full = target
            if not stat.S_ISREG(lst.st_mode):
                if not stat.S_ISDIR(lst.st_mode):
                    refused.append({'path': full, 'reason': '%s, not a regular file' % _kind(lst.st_mode)})
                continue
            files.append((rel, full))
    return _layout(os.path.basename(real), files), files, refused


def _layout(top, files):
    """'deepspeed_zero' for a directory of global_step*/ with *_model_states.pt or *_optim_states.pt, else
    'directory'."""
    for rel, _real in files:
        parts = [top] + rel.split('/')
        if (len(parts) >= 2 and parts[-2].startswith('global_step')
                and parts[-1].endswith(('_model_states.pt', '_optim_states.pt'))):
            return 'deepspeed_zero'
    return 'directory'


# --- formats --------------------------------------------------------------------------------------------------------
def _pread(fd, size, offset):
    out = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        out.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b''.join(out)


def parse_safetensors(fd, size, name='file'):
    """[tensor] of a safetensors file: {name, dtype, cls, itemsize, offset (in the file), length}; CheckpointError
    when the header length or an offset does not fit the file."""
    if size < 8:
        raise CheckpointError('%s: %d bytes, too short for the 8-byte safetensors header length' % (name, size))
    (hlen,) = struct.unpack('<Q', _pread(fd, 8, 0))
    if hlen < 2 or hlen > size - 8 or hlen > MAX_SAFETENSORS_HEADER:
        raise CheckpointError('%s: safetensors header length %d does not fit: the file holds %d bytes after the '
                              'length, the limit is %d' % (name, hlen, size - 8, min(size - 8, MAX_SAFETENSORS_HEADER)))
    try:
        header = json.loads(_pread(fd, hlen, 8).decode('utf-8'))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError('%s: the safetensors header is not UTF-8 JSON: %s' % (name, exc))
    if not isinstance(header, dict):
        raise CheckpointError('%s: the safetensors header is not a JSON object' % name)
    base, data_len = 8 + hlen, size - 8 - hlen
    tensors = []
    for key in sorted(header):
        if key == '__metadata__':
            continue
        entry = header[key]
        offsets = entry.get('data_offsets') if isinstance(entry, dict) else None
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(o, int) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= data_len):
            raise CheckpointError('%s: tensor %r has data_offsets %r outside the %d data bytes'
                                  % (name, key, offsets, data_len))
        dtype = entry.get('dtype')
        itemsize, cls = SAFETENSORS_DTYPES.get(dtype, (1, 'opaque'))
        tensors.append({'name': key, 'dtype': dtype if isinstance(dtype, str) else repr(dtype), 'cls': cls,
                        'itemsize': itemsize, 'known': dtype in SAFETENSORS_DTYPES,
                        'offset': base + offsets[0], 'length': offsets[1] - offsets[0]})
    return tensors


def pickle_storage_types(data):
    """{storage key: torch storage class name} found by scanning a torch data.pkl's opcodes (nothing is executed):
    each persistent id is the tuple ('storage', torch.<X>Storage, key, location, numel). Raises ValueError for a
    pickle that is not well formed."""
    memo, pushed, found = {}, [], {}
    for opcode, arg, _pos in pickletools.genops(data):
        name = opcode.name
        value = None
        if name in ('GLOBAL', 'INST'):
            value = ('global', arg.replace(' ', '.'))
        elif name == 'STACK_GLOBAL':
            if len(pushed) >= 2 and all(isinstance(v, str) for v in pushed[-2:]):
                value = ('global', '%s.%s' % (pushed[-2], pushed[-1]))
        elif name in ('BINUNICODE', 'SHORT_BINUNICODE', 'UNICODE', 'BINUNICODE8', 'SHORT_BINSTRING', 'BINSTRING',
                      'STRING'):
            value = arg
        elif name in ('BINPUT', 'LONG_BINPUT', 'PUT'):
            memo[arg] = pushed[-1] if pushed else None
            continue
        elif name == 'MEMOIZE':
            memo[len(memo)] = pushed[-1] if pushed else None
            continue
        elif name in ('BINGET', 'LONG_BINGET', 'GET'):
            value = memo.get(arg)
        if value is None:
            pushed.append(object())
        else:
            pushed.append(value)
        if len(pushed) >= 3 and pushed[-3] == 'storage' and isinstance(pushed[-2], tuple) \
                and isinstance(pushed[-1], str):
            found[pushed[-1]] = pushed[-2][1].rsplit('.', 1)[-1]
        del pushed[:-8]
    return found


def parse_torch_zip(fd, name='file'):
    """[tensor] of a PyTorch zip checkpoint: one per ``*/data/<key>`` storage, its dtype from data.pkl's opcodes
    (opaque when not found); CheckpointError when it is not a zip with data.pkl."""
    handle = os.fdopen(os.dup(fd), 'rb')
    try:
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise CheckpointError('%s: not a readable zip archive: %s' % (name, exc))
        infos = archive.infolist()
        pkl = [i for i in infos if i.filename.endswith('/data.pkl') or i.filename == 'data.pkl']
        if not pkl:
            raise CheckpointError('%s: a zip archive without data.pkl, not a PyTorch checkpoint' % name)
        types, note = {}, None
        if pkl[0].file_size > MAX_PICKLE:
            note = 'data.pkl is %d bytes, over the %d scanned: dtypes unknown' % (pkl[0].file_size, MAX_PICKLE)
        else:
            try:
                types = pickle_storage_types(archive.read(pkl[0]))
            except Exception as exc:  # a malformed pickle only loses the dtypes  # pylint: disable=broad-except
                note = 'data.pkl could not be scanned (%s): dtypes unknown' % exc
        prefix = pkl[0].filename[:-len('data.pkl')]
        tensors = []
        for info in infos:
            rest = info.filename[len(prefix):] if info.filename.startswith(prefix) else None
            if rest is None or not rest.startswith('data/') or '/' in rest[5:] or not rest[5:]:
                continue
            key = rest[5:]
            storage = types.get(key)
            dtype, cls = TORCH_STORAGES.get(storage, (storage, 'opaque'))
            offset = None
            if info.compress_type == zipfile.ZIP_STORED:
                local = _pread(fd, 30, info.header_offset)
                if len(local) == 30 and local[:4] == b'PK\x03\x04':
                    nlen, xlen = struct.unpack('<HH', local[26:30])
                    offset = info.header_offset + 30 + nlen + xlen
            if offset is None:
                raise CheckpointError('%s: storage %s is compressed in the archive (not a torch.save file)'
                                      % (name, info.filename))
            tensors.append({'name': 'data/' + key, 'dtype': dtype, 'cls': cls, 'itemsize': CLASS_ITEMSIZE[cls],
                            'known': storage in TORCH_STORAGES, 'offset': offset, 'length': info.file_size})
        missing = sum(1 for t in tensors if t['dtype'] is None)
        if missing and note is None:
            note = ('data.pkl names no storage class for %d of %d storages: measured as opaque bytes'
                    % (missing, len(tensors)))
        return tensors, note
    finally:
        handle.close()


def recognise(fd, size, name='file'):
    """(format, [tensor], note) of one open file: safetensors, torch_zip, empty or opaque (one tensor, the file)."""
    if size == 0:
        return 'empty', [], None
    head = _pread(fd, 8, 0)
    if head[:4] == b'PK\x03\x04':
        tensors, note = parse_torch_zip(fd, name)
        return 'torch_zip', tensors, note
    if name.endswith('.safetensors') or (len(head) == 8 and 2 <= struct.unpack('<Q', head)[0] <= size - 8
                                         and _pread(fd, 1, 8) == b'{'):
        return 'safetensors', parse_safetensors(fd, size, name), None
    return 'opaque', [{'name': '', 'dtype': None, 'cls': 'opaque', 'itemsize': 1, 'known': False, 'offset': 0,
                       'length': size}], None


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
