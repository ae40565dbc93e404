# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/compression/compression.py on real checkpoints made here (tests/unit/checkpoints.py: a small MLP trained a few
Adam steps with torch, BF16 weights, FP32 Adam state, two consecutive steps, torch.save and safetensors): the streams
against numpy's bit arithmetic, the entropies against numpy's byte counts, the codec ratios against the codecs run
here on the test's own streams, the projection's arithmetic."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import zlib

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import compression
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import checkpoint_formats

from checkpoints import import_numpy, make_checkpoints

numpy = import_numpy()

BIG = 1 << 30   # a sample bound above the test checkpoints: every byte is sampled


@pytest.fixture(scope='module')
def ckpts(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp('ckpt'))


def _u16(tensors):
    """The 16-bit patterns of the tensors, in name order (the safetensors writer's order)."""
    return numpy.concatenate([tensors[n].ravel() for n in sorted(tensors)])


def _entropy(array):
    counts = numpy.bincount(numpy.asarray(array, dtype=numpy.uint8).ravel(), minlength=256)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * numpy.log2(p)).sum())


def _chunked_ratio(data, chunk, compress):
    return len(data) / sum(len(compress(data[i:i + chunk])) for i in range(0, len(data), chunk))


def _bf16_streams(u16):
    exponent = ((u16 >> 7) & 0xFF).astype(numpy.uint8)
    sign_mantissa = (((u16 >> 8) & 0x80) | (u16 & 0x7F)).astype(numpy.uint8)
    return exponent, sign_mantissa


def test_bf16_split_is_numpys_bit_arithmetic(ckpts):
    u16 = _u16(ckpts[3]['tensors']['bf16'])
    streams = compression.split_streams('bf16', u16.astype('<u2').tobytes())
    exponent, sign_mantissa = _bf16_streams(u16)
    assert streams['exponent'] == exponent.tobytes()
    assert streams['sign_mantissa'] == sign_mantissa.tobytes()
    # nothing lost: the two streams give back every bit
    back = ((sign_mantissa.astype(numpy.uint16) & 0x80) << 8) | (exponent.astype(numpy.uint16) << 7) \
        | (sign_mantissa.astype(numpy.uint16) & 0x7F)
    assert (back == u16).all()


def test_fp16_and_fp32_splits():
    values = numpy.random.default_rng(1).standard_normal(4099).astype(numpy.float16)
    u16 = values.view(numpy.uint16)
    streams = compression.split_streams('fp16', values.astype('<f2').tobytes())
    assert streams['exponent'] == ((u16 >> 10) & 0x1F).astype(numpy.uint8).tobytes()
    assert streams['sign_mantissa'] == (u16 & 0x83FF).astype('<u2').tobytes()
    planes = numpy.random.default_rng(2).standard_normal(1001).astype('<f4')
    streams = compression.split_streams('fp32', planes.tobytes())
    as_bytes = planes.view(numpy.uint8).reshape(-1, 4)
    for index in range(4):
        assert streams['byte%d' % index] == as_bytes[:, index].tobytes()
    assert compression.split_streams('opaque', b'abc') == {'bytes': b'abc'}


def test_safetensors_weights_entropy_and_ratios_computed_independently(ckpts):
    weights = ckpts[3]['tensors']['bf16']
    result = compression.measure([ckpts[3]['weights']], [ckpts[3]['weights']], BIG, 600, ['zlib', 'huffman'])
    assert list(result['classes']) == ['bf16']
    bf16 = result['classes']['bf16']
    assert bf16['total_bytes'] == sum(t.size * 2 for t in weights.values()) == bf16['sampled_bytes']
    assert bf16['stopped_by'] is None and result['files'][0]['format'] == 'safetensors'
    exponent, sign_mantissa = _bf16_streams(_u16(weights))
    chunk = result['sampling']['chunk_bytes']
    stored = dict((codec, 0) for codec in ('zlib', 'huffman'))
    bound_bytes = 0.0
    for name, ours in (('exponent', exponent.tobytes()), ('sign_mantissa', sign_mantissa.tobytes())):
        stream = bf16['streams'][name]
        h = _entropy(exponent if name == 'exponent' else sign_mantissa)
        assert stream['entropy_bits'] == pytest.approx(h, abs=1e-4)
        assert stream['bound_ratio'] == pytest.approx(8 / h, rel=1e-3)
        bound_bytes += len(ours) * h / 8
        for codec, compress in (('zlib', lambda d: zlib.compress(d, 6)), ('huffman', compression.huffman)):
            ratio = _chunked_ratio(ours, chunk, compress)
            assert stream['codecs'][codec]['ratio'] == pytest.approx(ratio, rel=1e-3)
            stored[codec] += min(len(ours), len(ours) / ratio)
    total = exponent.size * 2
    assert bf16['bound_ratio'] == pytest.approx(total / bound_bytes, rel=1e-3)
    for codec in stored:
        assert bf16['codecs'][codec]['ratio'] == pytest.approx(total / stored[codec], rel=1e-3)
        assert bf16['codecs'][codec]['per_core_mib_s'] > 0
    # trained BF16 weights: the exponents cluster (an entropy coder shrinks them), the mantissas hardly shrink
    assert bf16['streams']['exponent']['entropy_bits'] < 4 and bf16['streams']['sign_mantissa']['entropy_bits'] > 7
    # an order-0 Huffman code is within 1 bit per symbol of the entropy on the exponents
    h = bf16['streams']['exponent']['entropy_bits']
    assert 8 / (h + 1) <= bf16['streams']['exponent']['codecs']['huffman']['ratio']


def test_torch_zip_storages_and_dtypes_without_unpickling(ckpts):
    result = compression.measure([ckpts[3]['torch']], [ckpts[3]['torch']], BIG, 600, ['zlib'])
    assert result['files'][0]['format'] == 'torch_zip' and result['files'][0]['note'] is None
    expected = ckpts[3]['torch_bytes']   # what torch.load sees (in the child that made the files)
    assert dict((c, e['total_bytes']) for c, e in result['classes'].items()) == expected
    assert result['classes']['bf16']['dtypes'] == ['bfloat16'] and result['classes']['fp32']['dtypes'] == ['float32']
    # the BF16 storages are the weights: their exponent entropy is numpy's of the same values
    exponent, _sm = _bf16_streams(_u16(ckpts[3]['tensors']['bf16']))
    assert result['classes']['bf16']['streams']['exponent']['entropy_bits'] == pytest.approx(_entropy(exponent),
                                                                                             abs=1e-4)


def test_delta_is_the_xor_of_consecutive_steps(ckpts):
    result = compression.measure([ckpts[4]['weights']], [ckpts[4]['weights'], ckpts[3]['weights']], BIG, 600,
                                 ['zlib'], previous=[ckpts[3]['weights']])
    delta = result['delta']
    assert delta['matched_tensors'] == len(ckpts[4]['tensors']['bf16']) and delta['unmatched_tensors'] == 0
    xored = _u16(ckpts[4]['tensors']['bf16']) ^ _u16(ckpts[3]['tensors']['bf16'])
    exponent, sign_mantissa = _bf16_streams(xored)
    streams = delta['classes']['bf16']['streams']
    assert streams['exponent']['entropy_bits'] == pytest.approx(_entropy(exponent), abs=1e-4)
    assert streams['sign_mantissa']['entropy_bits'] == pytest.approx(_entropy(sign_mantissa), abs=1e-4)
    ratio = _chunked_ratio(exponent.tobytes(), result['sampling']['chunk_bytes'], lambda d: zlib.compress(d, 6))
    assert streams['exponent']['codecs']['zlib']['ratio'] == pytest.approx(ratio, rel=1e-3)
    # one Adam step moves few exponents: the delta's exponents are far more predictable than the weights'
    assert streams['exponent']['entropy_bits'] < result['classes']['bf16']['streams']['exponent']['entropy_bits']


def test_deepspeed_directory_and_adam_state(ckpts):
    ds = ckpts[3]['deepspeed']
    result = compression.measure([ds], [ds], BIG, 600, ['zlib'])
    assert result['paths'] == [{'path': ds, 'layout': 'deepspeed_zero', 'files': 2}]
    assert set(result['classes']) == {'bf16', 'fp32'}
    state = ckpts[3]['tensors']['fp32']
    assert result['classes']['fp32']['total_bytes'] == sum(t.size * 4 for t in state.values())
    planes = numpy.frombuffer(b''.join(state[n].astype('<f4').tobytes() for n in sorted(state)), dtype=numpy.uint8).reshape(-1, 4)
    for index in range(4):
        assert result['classes']['fp32']['streams']['byte%d' % index]['entropy_bits'] == pytest.approx(
            _entropy(planes[:, index]), abs=1e-4)


def test_sampling_is_bounded_by_bytes_and_reported(ckpts):
    result = compression.measure([ckpts[3]['torch']], [ckpts[3]['torch']], 65536, 600, ['zlib'])
    for entry in result['classes'].values():
        assert entry['sampled_bytes'] <= 65536
        assert entry['stopped_by'] == ('bytes' if entry['total_bytes'] > 65536 else None)
    assert result['sampling']['sample_bytes'] == 65536
    assert result['sampling']['sampled_bytes'] == sum(e['sampled_bytes'] for e in result['classes'].values())


def test_sample_windows_spread_and_whole_elements():
    assert compression.sample_windows(1000, 5000, 2) == [(0, 1000)]
    windows = compression.sample_windows(10 * 2 ** 20, 4 * 65536, 4)
    assert len(windows) == 4 and windows[0][0] == 0 and windows[-1][0] + windows[-1][1] == 10 * 2 ** 20
    assert all(offset % 4 == 0 and size % 4 == 0 for offset, size in windows)
    assert compression.sample_windows(100, 1, 2) == []


def test_time_budget_stops_and_says_so(ckpts, monkeypatch):
    clock = iter(range(0, 10 ** 6, 1000))
    monkeypatch.setattr(compression.time, 'monotonic', lambda: next(clock))
    result = compression.measure([ckpts[3]['torch']], [ckpts[3]['torch']], BIG, 1, ['zlib'])
    assert result['sampling']['stopped_by_time'] is True


def test_entropy_and_bound():
    assert compression.entropy_bits(b'') == 0.0
    assert compression.entropy_bits(b'aaaa') == 0.0
    assert compression.entropy_bits(bytes(range(256)) * 4) == pytest.approx(8.0)
    assert compression.entropy_bits(b'ab' * 10) == pytest.approx(1.0)
    assert compression.bound_ratio(0.0) is None and compression.bound_ratio(2.0) == 4.0


def test_projection_names_the_bound():
    write = compression.project(1000.0, 1.5, 200.0, 16)
    assert write == {'effective_mib_s': 1500.0, 'bound': 'write', 'write_bound_mib_s': 1500.0,
                     'compress_bound_mib_s': 3200.0}
    squeeze = compression.project(1000.0, 1.5, 50.0, 4)
    assert squeeze['bound'] == 'compress' and squeeze['effective_mib_s'] == 200.0
    assert compression.project(None, 1.5, 50.0, 4) == {'effective_mib_s': None, 'bound': None,
                                                       'write_bound_mib_s': None, 'compress_bound_mib_s': 200.0}
    ratio, per_core = compression.overall({'bf16': {'codecs': {'zlib': {'ratio': 2.0, 'per_core_mib_s': 100.0}}},
                                           'fp32': {'codecs': {'zlib': {'ratio': 1.0, 'per_core_mib_s': 50.0}}}},
                                          {'bf16': 2 * 2 ** 20, 'fp32': 2 ** 20}, 'zlib')
    assert ratio == pytest.approx(1.5) and per_core == pytest.approx(3 / (2 / 100.0 + 1 / 50.0), rel=1e-3)
    assert math.isclose(compression.project(10.0, ratio, per_core, 1)['write_bound_mib_s'], 15.0)


def test_pickle_scan_on_real_and_hostile_pickles():
    assert checkpoint_formats.pickle_storage_types(b'\x80\x02}q\x00.') == {}
    with pytest.raises(ValueError):
        checkpoint_formats.pickle_storage_types(b'\x80\x02\xff')


def test_summary_line_by_class_delta_and_bound(ckpts):
    result = compression.measure([ckpts[4]['torch']], [os.path.dirname(os.path.dirname(ckpts[4]['torch']))], BIG,
                                 600, ['huffman'], 1, 100.0, previous=[ckpts[3]['torch']])
    line = compression.summary_line(result)
    p = result['projection']
    assert line.startswith('huffman: bf16 x%.2f, fp32 x%.2f; delta bf16 x' % (
        result['classes']['bf16']['codecs']['huffman']['ratio'], result['classes']['fp32']['codecs']['huffman']['ratio']))
    assert ('effective %.1f MiB/s (%s-bound: write 100.0 MiB/s' % (p['effective_mib_s'], p['bound'])) in line
    assert line.endswith('on 1 cores)')
    result = compression.measure([ckpts[4]['torch']], [ckpts[4]['torch']], BIG, 600, ['huffman'], 1)
    assert '(no write bandwidth given)' in compression.summary_line(result)
    with pytest.raises(ValueError):
        compression.summary_line({'msg': 'failed'})


def test_files_are_reopened_within_the_descriptor_bound_and_checked(ckpts, tmp_path, monkeypatch):
    monkeypatch.setattr(compression.Reader, 'OPEN_FILES', 1)
    ds = os.path.dirname(ckpts[3]['deepspeed'])
    result = compression.measure([ds], [ds], BIG, 600, ['zlib'])
    assert result['paths'][0]['files'] == 3 and set(result['classes']) == {'bf16', 'fp32', 'opaque'}
    path = tmp_path / 'moving.safetensors'
    path.write_bytes(open(ckpts[3]['weights'], 'rb').read())
    reader = compression.Reader([str(path)], [str(tmp_path)])
    with open(str(path), 'ab') as handle:
        handle.write(b'more')
    with pytest.raises(checkpoint_formats.CheckpointError, match='changed while it was measured'):
        reader.read(reader.tensors[0], [(0, 2)])
