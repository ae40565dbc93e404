# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""queue_depth_sweep end to end with the real fio of the test host (depths 1, 2, 4; 1 s or 8 MiB a point)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import queue_depth_sweep

from helpers import fio_capabilities, run_fio_module

MIB = 1024 * 1024


STATE = {}


@pytest.fixture(scope='module')
def host(tmp_path_factory):
    return fio_capabilities(tmp_path_factory.mktemp('probe'))


@pytest.fixture(autouse=True)
def state_dir(tmp_path_factory):
    """Each test's own state store, outside the directory the sweep writes in; no run directory stays recorded."""
    STATE['dir'] = str(tmp_path_factory.mktemp('state'))
    yield STATE['dir']
    assert state_store.read_record(STATE['dir'], 'scratch') is None


def run(capsys, **params):
    params.setdefault('state_dir', STATE['dir'])
    return run_fio_module(capsys, queue_depth_sweep.main, params)


def test_sweep_real_fio(tmp_path, host, capsys):
    rc, out = run(capsys, directory=str(tmp_path), depths=[4, 1, 2], runtime_per_point=1, size_per_point='8M',
                  scratch_size='8M', exhaustive=True, ranks_per_drive=2, nr_requests=64, **host)
    assert rc == 0, out
    assert out['changed'] is False
    assert [p['depth'] for p in out['curve']] == [1, 2, 4]
    for point in out['curve']:
        assert point['bw_bytes'] > 0 and point['io_bytes'] > 0 and point['seconds'] > 0
        assert point['p99_ns'] > 0 and point['mean_ns'] > 0
    assert out['points'] == 3 and out['stopped_early'] is False and out['exhaustive'] is True
    for point in out['curve']:
        assert len(point['repeats']) == 3 and point['bw_min'] <= point['bw_bytes'] <= point['bw_max']
        assert point['aggregate_depth'] == point['depth']
    assert out['knee']['knee'] in (1, 2, 4) and out['knee']['fraction'] == 0.95
    assert out['knee']['noise'] >= 0.05 and out['repeats'] == 3 and out['ranks'] == 1
    assert out['per_rank_depth'] == max(1, -(-out['knee']['knee'] // 2))
    assert out['bytes_written'] == 8 * MIB + sum(p['io_bytes'] for p in out['curve'])
    assert out['seconds'] > 0 and out['block_size'] == MIB
    assert len(out['commands']) == 1 + 3 * 3 and '--name=layout' in out['commands'][0]
    assert '--rw=write' in out['commands'][1] and '--iodepth=1' in out['commands'][1]
    assert os.listdir(str(tmp_path)) == []  # scratch files and their run directory removed
    assert all(a.startswith('--filename=/proc/self/fd/') for argv in out['commands'] for a in argv
               if a.startswith('--filename='))
    assert out['safety']['run_dirs'][0].startswith(str(tmp_path) + '/.checkpoint_io.sweep.')
    assert all(p['ramp_bytes'] == 0 for p in out['curve'])


def test_sweep_real_fio_with_a_ramp(tmp_path, host, capsys):
    """A 1 s ramp group before each measured group, in one fio run: both reported, the ramp's bytes in the total."""
    rc, out = run(capsys, directory=str(tmp_path), depths=[1, 2], runtime_per_point=1, ramp_per_point=1,
                  size_per_point='4G', scratch_size='8M', exhaustive=True, repeats=1, ranks=2, **host)
    assert rc == 0, out.get('msg')
    assert all('--name=ramp%d_rank1' % d in argv and '--stonewall' in argv
               for d, argv in zip([1, 2], out['commands'][1:]))
    for point in out['curve']:
        assert point['io_bytes'] > 0 and point['ramp_bytes'] > 0 and point['bw_bytes'] > 0
    assert out['bytes_written'] == 8 * MIB + sum(p['io_bytes'] + p['ramp_bytes'] for p in out['curve'])
    assert os.listdir(str(tmp_path)) == []


def fake_fio(bandwidth, default, calls):
    """A run_fio stand-in: the MB/s of ``bandwidth`` per depth (``default`` for the others), argv kept in ``calls``."""
    def fake_run(argv, timeout, **kwargs):
        calls.append(argv)
        name = [a for a in argv if a.startswith('--name=')][0][7:]
        depth = 8 if name == 'layout' else int(name[2:])
        bw = bandwidth.get(depth, default) * 1000000
        doc = {'fio version': 'fio-3.33', 'jobs': [{'jobname': name, 'error': 0, 'job_runtime': 1000, 'write': {
            'io_bytes': bw, 'bw_bytes': bw, 'runtime': 1000, 'iops': 1.0,
            'clat_ns': {'percentile': {'99.000000': 2000000}}, 'lat_ns': {'mean': 1000000.0 * depth}}}]}
        return 0, json.dumps(doc), '', 1.0, False
    return fake_run


def test_sweep_stops_early_on_a_plateau(tmp_path, capsys, monkeypatch):
    """Bandwidth 100, 200, 204, 206, 207 MB/s: three depths without a 5% gain end the sweep before 32..256."""
    bandwidth = {1: 100, 2: 200, 4: 204, 8: 206, 16: 207}
    calls = []
    fake_run = fake_fio(bandwidth, 999, calls)
    monkeypatch.setattr(queue_depth_sweep, 'run_fio', fake_run)
    rc, out = run(capsys, directory=str(tmp_path), scratch_size='8M', search='walk')
    assert rc == 0, out
    assert out['search'] == {'method': 'walk', 'reason': 'asked for', 'predicted_depth': None,
                             'measured_depths': [1, 2, 4, 8, 16], 'runs': 15}
    assert [p['depth'] for p in out['curve']] == [1, 2, 4, 8, 16]
    assert out['points'] == 5 and out['stopped_early'] is True
    assert out['knee']['knee'] == 2 and out['knee']['best_depth'] == 16
    assert out['per_rank_depth'] == 2  # one stream: the chosen depth itself
    assert len(calls) == 1 + 5 * 3  # the layout, then three runs per depth


def test_the_checkpoint_shape_two_ranks_at_once_with_real_fio(tmp_path, host, capsys):
    rc, out = run(capsys, directory=str(tmp_path), depths=[1, 2], runtime_per_point=1, size_per_point='8M',
                  scratch_size='8M', exhaustive=True, ranks=2, repeats=2, nr_requests=1, **host)
    assert rc == 0, out
    assert [(p['depth'], p['aggregate_depth']) for p in out['curve']] == [(1, 2), (2, 4)]
    assert all(len(p['repeats']) == 2 for p in out['curve'])
    assert out['knee']['knee'] == 2 * out['knee']['per_rank']
    assert out['per_rank_depth'] == 1  # clamped to nr_requests
    point = out['commands'][1]
    assert '--group_reporting' in point and '--size=%d' % (4 * MIB) in point
    assert len([a for a in point if a.startswith('--name=')]) == 2
    assert len([a for a in point if a.startswith('--filename=')]) == 2
    assert os.listdir(str(tmp_path)) == []  # every scratch file removed


def varying_fio(series, calls):
    """A run_fio stand-in: each depth's runs return the MB/s of ``series[depth]`` in turn."""
    counters = {}

    def fake_run(argv, timeout, **kwargs):
        calls.append(argv)
        name = [a for a in argv if a.startswith('--name=')][0][7:]
        depth = 8 if name == 'layout' else int(name[2:])
        index = counters.get(depth, 0)
        counters[depth] = index + 1
        bw = (series[depth][index % len(series[depth])] if name != 'layout' else 100) * 1000000
        doc = {'fio version': 'fio-3.33', 'jobs': [{'jobname': name, 'error': 0, 'job_runtime': 1000, 'write': {
            'io_bytes': bw, 'bw_bytes': bw, 'runtime': 1000, 'iops': 1.0,
            'clat_ns': {'percentile': {'99.000000': 2000000 * depth}}, 'lat_ns': {'mean': 1000000.0 * depth}}}]}
        return 0, json.dumps(doc), '', 1.0, False
    return fake_run


def littles_fio(ceiling, latency_ms, calls):
    """A run_fio stand-in for a volume that follows Little's Law: min(ceiling, depth x 1 MiB / latency) bytes/s,
    its mean latency growing once the queue is past the knee."""
    def fake_run(argv, timeout, **kwargs):
        calls.append(argv)
        name = [a for a in argv if a.startswith('--name=')][0][7:]
        depth = 8 if name == 'layout' else int(name[2:])
        bw = int(min(ceiling, depth * MIB / (latency_ms / 1e3)))
        lat = max(latency_ms * 1e6, depth * MIB / float(ceiling) * 1e9)
        doc = {'fio version': 'fio-3.33', 'jobs': [{'jobname': name, 'error': 0, 'job_runtime': 1000, 'write': {
            'io_bytes': bw, 'bw_bytes': bw, 'runtime': 1000, 'iops': 1.0,
            'clat_ns': {'percentile': {'99.000000': 2 * lat}}, 'lat_ns': {'mean': lat}}}]}
        return 0, json.dumps(doc), '', 1.0, False
    return fake_run


def test_the_physics_search_measures_around_littles_law(tmp_path, capsys, monkeypatch):
    """120 MiB/s at 160 ms a 1 MiB request: 19.2 in flight, depth 20 predicted; 1, 256, 32, 16 measured once each
    (the grid: 27 runs) and 32 chosen, as the walk chooses."""
    calls = []
    monkeypatch.setattr(queue_depth_sweep, 'run_fio', littles_fio(120 * MIB, 160.0, calls))
    rc, out = run(capsys, directory=str(tmp_path), scratch_size='8M', block_size='1M')
    assert rc == 0, out
    assert out['search'] == {'method': 'physics', 'reason': None, 'predicted_depth': 20,
                             'measured_depths': [1, 16, 32, 256], 'runs': 4}
    assert len(calls) == 1 + 4 and out['stopped_early'] is True and out['points'] == 4
    assert out['knee']['per_rank'] == 32 and out['per_rank_depth'] == 32
    assert out['knee']['best_bw_bytes'] == 120 * MIB
    walked = []
    monkeypatch.setattr(queue_depth_sweep, 'run_fio', littles_fio(120 * MIB, 160.0, walked))
    rc, grid = run(capsys, directory=str(tmp_path), scratch_size='8M', block_size='1M', exhaustive=True)
    assert rc == 0 and grid['knee']['per_rank'] == 32 and len(walked) == 1 + 27
    assert out['bytes_written'] < 0.2 * grid['bytes_written']


def test_one_fast_run_does_not_decide(tmp_path, capsys, monkeypatch):
    """Depth 16 has one lucky run (400); its median (300) is what counts, and 8 is as good within noise."""
    series = {1: [40, 41, 39], 2: [80, 81, 79], 4: [160, 158, 161], 8: [290, 300, 295], 16: [300, 400, 296],
              32: [301, 299, 300], 64: [300, 302, 301]}
    monkeypatch.setattr(queue_depth_sweep, 'run_fio', varying_fio(series, []))
    rc, out = run(capsys, directory=str(tmp_path), scratch_size='8M', depths=[1, 2, 4, 8, 16, 32, 64],
                  exhaustive=True)
    assert rc == 0, out
    by_depth = dict((p['depth'], p) for p in out['curve'])
    assert by_depth[16]['bw_bytes'] == 300000000 and by_depth[16]['bw_max'] == 400000000
    assert out['knee']['knee'] == 8 and out['knee']['noise'] == 0.05  # by the maximum, 16 would have won


def test_a_steady_plateau_keeps_the_floor_of_noise(tmp_path, capsys, monkeypatch):
    """Repeats within 1%: a depth 10% below the best is not chosen (the 5% floor decides)."""
    series = {1: [100, 100, 101], 2: [200, 201, 200], 4: [270, 271, 270], 8: [300, 301, 300]}
    monkeypatch.setattr(queue_depth_sweep, 'run_fio', varying_fio(series, []))
    rc, out = run(capsys, directory=str(tmp_path), scratch_size='8M', depths=[1, 2, 4, 8], exhaustive=True)
    assert rc == 0, out
    assert out['knee']['knee'] == 8 and out['knee']['noise'] == 0.05


def test_one_noisy_dip_does_not_end_the_sweep(tmp_path, capsys, monkeypatch):
    """100, 200, 150 (dip), 190, 400: the default rides over one dip and finds the rise at depth 16."""
    bandwidth = {1: 100, 2: 200, 4: 150, 8: 190, 16: 400, 32: 404, 64: 405, 128: 406}
    fake_run = fake_fio(bandwidth, 407, [])
    monkeypatch.setattr(queue_depth_sweep, 'run_fio', fake_run)
    rc, out = run(capsys, directory=str(tmp_path), scratch_size='8M', search='walk')
    assert rc == 0, out
    assert out['knee']['knee'] == 16 and out['stopped_early'] is True


@pytest.mark.parametrize('params, message', [
    (dict(depths=[1, 0]), 'depths[1]: 0 is below the minimum 1'),
    (dict(depths=[2, 2]), 'depths[1]: depth 2 is listed twice'),
    (dict(block_size='3K'), "block_size: '3K' (3072 bytes) is not a multiple of 4096"),
    (dict(fraction=1.5), 'fraction: 1.5 is out of range: it must be above 0.0 and at most 1.0'),
    (dict(runtime_per_point=0), 'runtime_per_point: 0 is below the minimum 1'),
    (dict(ranks_per_drive=2), 'ranks_per_drive and nr_requests go together'),
    (dict(ranks=2, ranks_per_drive=2, nr_requests=8), 'ranks_per_drive: goes with ranks 1 only'),
    (dict(ranks=0), 'ranks: 0 is below the minimum 1'),
    (dict(repeats=21), 'repeats: 21 is above the maximum 20'),
    (dict(ranks=16, scratch_size='8M'), "scratch_size: '8M' leaves less than one block_size per rank for 16 ranks"),
    (dict(scratch_size='512K'), "scratch_size: '512K' (524288 bytes) is below block_size 1048576 bytes"),
    (dict(scratch_size='64T'), 'scratch_size: %s'),
    (dict(fraction=True), 'fraction: True is not a number'),
    (dict(plateau_gain='nan'), "plateau_gain: 'nan' is not a finite number"),
    (dict(free_space_margin=float('nan')), 'free_space_margin: nan is not a finite number'),
    (dict(size_per_point='9999999999T'),
     "size_per_point: '9999999999T' (10995116276660488372224 bytes) is above the maximum 1152921504606846976 bytes"),
    (dict(background=True, job_store='relative/x'), "job_store: 'relative/x' is not an absolute directory path"),
])
def test_refused_before_anything_is_written(tmp_path, capsys, params, message):
    rc, out = run(capsys, directory=str(tmp_path), **params)
    message = message.replace('%s', str(tmp_path))
    assert rc == 1 and message in out['msg'], out
    assert out['commands'] == []
    assert os.listdir(str(tmp_path)) == []


def test_scratch_removed_when_fio_fails(tmp_path, capsys):
    fake = tmp_path / 'bin'
    fake.mkdir()
    fio = fake / 'fio'
    work = tmp_path / 'work'
    work.mkdir()
    fio.write_text(u'#!/bin/sh\nfor a in "$@"; do case "$a" in --filename=*) touch "${a#--filename=}";; esac; done\n'
                   u'echo "fio: io_u error: No space left on device" >&2\nexit 1\n')
    fio.chmod(0o755)
    rc, out = run(capsys, directory=str(work), fio_path=str(fio), scratch_size='8M')
    assert rc == 1
    assert out['msg'] == 'scratch layout: fio exited with 1: fio: io_u error: No space left on device'
    assert os.listdir(str(work)) == []


def test_noise_above_the_best_itself_still_answers(tmp_path, capsys, monkeypatch):
    """Repeats spreading more than 100% (measured on plain TCG drives): every depth is within noise; no crash."""
    series = {1: [65, 98, 115], 2: [196, 202, 578], 4: [108, 165, 177]}
    monkeypatch.setattr(queue_depth_sweep, 'run_fio', varying_fio(series, []))
    rc, out = run(capsys, directory=str(tmp_path), scratch_size='8M', depths=[1, 2, 4], exhaustive=True)
    assert rc == 0, out
    assert out['knee']['noise'] > 1 and out['knee']['knee'] == 1
