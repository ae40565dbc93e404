# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files of a checkpoint and their tensors, read without loading them: the checkpoint's regular files under a
root (no link followed), the format of each (a safetensors header, a PyTorch zip's storages with their dtypes from
``data.pkl``'s opcodes through ``pickletools.genops`` - no pickle is loaded -, DeepSpeed ZeRO ``global_step*/``),
each tensor's class, offset and length. Parsers for :mod:`compression`, which samples and measures them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import pickletools
import stat
import struct
import zipfile

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch


MIB = 2 ** 20
MAX_SAFETENSORS_HEADER = 100 * MIB
MAX_PICKLE = 256 * MIB
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
