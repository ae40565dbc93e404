# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""checkpoint_compression end to end on real checkpoints (tests/unit/checkpoints.py) and handmade edge cases: empty
file, truncated safetensors header, a dtype it does not know, symlinks, a FIFO, a path outside the roots, and a torch
zip whose data.pkl would run a command or fail if it were loaded (the module must report its storages anyway)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import pickle
import pickletools
import struct
import zipfile

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_compression

from checkpoints import import_torch, make_checkpoints
from helpers import run_module


@pytest.fixture(scope='module')
def ckpts(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp('ckpt'), hidden=256)


def run(capsys, **args):
    args.setdefault('codecs', ['zlib', 'huffman'])
    return run_module(capsys, checkpoint_compression.main, args)


def _digest(path):
    with open(path, 'rb') as handle:
        return hashlib.sha256(handle.read()).hexdigest(), os.stat(path).st_mtime_ns


def test_projection_uses_the_write_bandwidth_given(capsys, ckpts):
    path = ckpts[4]['torch']
    before = _digest(path)
    rc, out = run(capsys, paths=[path], previous=[ckpts[3]['torch']], roots=[os.path.dirname(os.path.dirname(path))],
                  write_bandwidth='1536.5', _ansible_check_mode=True)
    assert rc == 0 and out['changed'] is False
    assert _digest(path) == before
    projection = out['projection']
    assert projection['write_mib_s'] == 1536.5
    assert projection['codec'] in ('zlib', 'huffman')
    assert projection['write_bound_mib_s'] == pytest.approx(1536.5 * projection['ratio'], abs=0.1)
    assert projection['compress_bound_mib_s'] == pytest.approx(projection['per_core_mib_s'] * out['cores']['used'],
                                                               abs=0.2)
    assert projection['effective_mib_s'] == min(projection['write_bound_mib_s'], projection['compress_bound_mib_s'])
    assert projection['bound'] == ('write' if projection['write_bound_mib_s'] <= projection['compress_bound_mib_s']
                                   else 'compress')
    assert out['cores']['used'] == len(os.sched_getaffinity(0))
    assert out['delta']['matched_tensors'] > 0 and out['delta']['projection']['ratio'] > 1
    assert set(out['classes']) == {'bf16', 'fp32'} and out['unknown_dtypes'] == []


def test_no_bandwidth_gives_the_compression_bound_only(capsys, ckpts):
    rc, out = run(capsys, paths=[ckpts[3]['weights']], cores=1)
    assert rc == 0 and out['cores']['used'] == 1
    assert out['projection']['effective_mib_s'] is None and out['projection']['bound'] is None
    assert out['projection']['compress_bound_mib_s'] == out['projection']['per_core_mib_s']


def _hostile_zip(path, marker, torch):
    """A torch-shaped zip: data.pkl references storage 0 (BF16) through a persistent id, and holds an object whose
    __reduce__ runs `touch marker` and a persistent id no default unpickler resolves."""
    weights = torch.arange(4096, dtype=torch.float32).div(1000).to(torch.bfloat16)
    sentinel = object()

    class Evil(object):
        def __reduce__(self):
            return (os.system, ('touch %s' % marker,))

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            if obj is sentinel:
                return ('storage', torch.BFloat16Storage, '0', 'cpu', weights.numel())
            return None

    buffer = __import__('io').BytesIO()
    Pickler(buffer, protocol=2).dump({'weights': sentinel, 'payload': Evil()})
    data = buffer.getvalue()
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as archive:
        archive.writestr('archive/data.pkl', data)
        archive.writestr('archive/data/0', weights.view(torch.uint8).numpy().tobytes())
        archive.writestr('archive/version', '3\n')
    return data


def test_a_pickle_that_would_run_a_command_is_never_loaded(capsys, tmp_path):
    torch = import_torch()
    marker = tmp_path / 'marker'
    path = tmp_path / 'hostile.pt'
    data = _hostile_zip(str(path), str(marker), torch)
    globals_ = [arg for op, arg, _pos in pickletools.genops(data) if op.name == 'GLOBAL']
    assert any(g.endswith(' system') for g in globals_), globals_   # loading it would run the command
    with pytest.raises(pickle.UnpicklingError):  # a plain load would fail on the persistent id
        pickle.loads(data.replace(b'system', b'getpid'))
    rc, out = run(capsys, paths=[str(path)])
    assert rc == 0, out
    assert not marker.exists()
    assert out['files'][0]['format'] == 'torch_zip' and out['files'][0]['tensors'] == 1
    assert out['classes']['bf16']['total_bytes'] == 8192 and out['classes']['bf16']['dtypes'] == ['bfloat16']


def _safetensors(path, header, data=b''):
    text = json.dumps(header).encode()
    with open(path, 'wb') as handle:
        handle.write(struct.pack('<Q', len(text)) + text + data)


def test_unknown_dtype_is_measured_opaque(capsys, tmp_path):
    path = tmp_path / 'odd.safetensors'
    _safetensors(str(path), {'scale': {'dtype': 'F8_E8M0', 'shape': [4096], 'data_offsets': [0, 4096]},
                             '__metadata__': {'format': 'pt'}}, bytes(range(256)) * 16)
    rc, out = run(capsys, paths=[str(path)])
    assert rc == 0 and out['unknown_dtypes'] == ['F8_E8M0']
    assert list(out['classes']) == ['opaque']
    assert out['classes']['opaque']['streams']['bytes']['entropy_bits'] == pytest.approx(8.0)


def test_truncated_header_is_one_files_error(capsys, tmp_path, ckpts):
    directory = tmp_path / 'mixed'
    directory.mkdir()
    with open(str(directory / 'bad.safetensors'), 'wb') as handle:
        handle.write(struct.pack('<Q', 10 ** 6) + b'{"a": {')
    os.link(ckpts[3]['weights'], str(directory / 'good.safetensors'))
    rc, out = run(capsys, paths=[str(directory)])
    assert rc == 0
    errors = dict((os.path.basename(f['path']), f['error']) for f in out['files'])
    assert errors['good.safetensors'] is None
    assert 'header length 1000000' in errors['bad.safetensors'] and '7 bytes' in errors['bad.safetensors']
    rc, out = run(capsys, paths=[str(directory / 'bad.safetensors')])
    assert rc == 1 and 'header length 1000000 does not fit' in out['msg'] and 'the limit is 7' in out['msg']


def test_empty_file_says_nothing_to_measure(capsys, tmp_path):
    path = tmp_path / 'empty.pt'
    path.write_bytes(b'')
    rc, out = run(capsys, paths=[str(path)])
    assert rc == 1 and 'empty (0 bytes)' in out['msg'] and str(path) in out['msg']


def test_symlink_fifo_and_paths_outside_the_roots_are_refused(capsys, tmp_path, ckpts):
    link = tmp_path / 'link.pt'
    link.symlink_to(ckpts[3]['torch'])
    rc, out = run(capsys, paths=[str(link)])
    assert rc == 1 and 'is a symlink' in out['msg']
    fifo = tmp_path / 'fifo'
    os.mkfifo(str(fifo))
    rc, out = run(capsys, paths=[str(fifo)])
    assert rc == 1 and 'a FIFO' in out['msg']
    rc, out = run(capsys, paths=[ckpts[3]['torch']], roots=[str(tmp_path)])
    assert rc == 1 and 'outside the roots' in out['msg'] and ckpts[3]['torch'] in out['msg']
    directory = tmp_path / 'run'
    directory.mkdir()
    os.link(ckpts[3]['weights'], str(directory / 'model.safetensors'))
    (directory / 'escape').symlink_to('/etc/passwd')
    (directory / 'inside').symlink_to('model.safetensors')
    os.mkfifo(str(directory / 'pipe'))
    rc, out = run(capsys, paths=[str(directory)])
    assert rc == 0
    reasons = dict((os.path.basename(r['path']), r['reason']) for r in out['refused'])
    assert 'outside the roots' in reasons['escape'] and 'FIFO' in reasons['pipe']
    assert sorted(os.path.basename(f['path']) for f in out['files']) == ['model.safetensors', 'model.safetensors']


@pytest.mark.parametrize('args, words', [
    ({'sample_bytes': 1024}, ['sample_bytes', '1024', '65536']),
    ({'sample_bytes': True}, ['sample_bytes', 'True']),
    ({'time_budget': 3601}, ['time_budget', '3601', '3600']),
    ({'cores': -1}, ['cores', '-1', '4096']),
    ({'write_bandwidth': 'nan'}, ['write_bandwidth', 'nan', 'above 0']),
    ({'write_bandwidth': 0}, ['write_bandwidth', '0', '10000000']),
    ({'paths': ['relative.pt']}, ['paths', 'relative.pt', 'absolute']),
    ({'previous': ['/a', '/b']}, ['previous', '2 paths for 1']),
    ({'codecs': []}, ['codecs', 'no codec']),
])
def test_bad_input_names_the_value_and_the_limit(capsys, args, words):
    params = dict({'paths': ['/nonexistent/x.pt']}, **args)
    rc, out = run(capsys, **params)
    assert rc == 1
    for word in words:
        assert word in out['msg'], (word, out['msg'])


def test_zstd_alone_without_zstandard_is_refused(capsys, monkeypatch, ckpts):
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import compression
    monkeypatch.setattr(compression, 'zstandard', None)
    rc, out = run(capsys, paths=[ckpts[3]['weights']], codecs=['zstd'])
    assert rc == 1 and 'codecs: zstd' in out['msg'] and 'zstandard' in out['msg']
    rc, out = run(capsys, paths=[ckpts[3]['weights']], codecs=['zstd', 'huffman'])
    assert rc == 0 and out['codecs']['zstd'] is None and out['codecs_measured'] == ['huffman']


def test_storages_without_a_class_in_the_pickle_are_opaque_and_said(capsys, tmp_path):
    path = tmp_path / 'bare.pt'
    with zipfile.ZipFile(str(path), 'w', zipfile.ZIP_STORED) as archive:
        archive.writestr('archive/data.pkl', pickle.dumps({'a': 1}, protocol=2))
        archive.writestr('archive/data/0', bytes(range(256)) * 64)
    rc, out = run(capsys, paths=[str(path)])
    assert rc == 0 and list(out['classes']) == ['opaque']
    assert 'no storage class for 1 of 1 storages' in out['files'][0]['note']
