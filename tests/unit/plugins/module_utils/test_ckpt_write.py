# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure helpers of checkpoint_write and queue_depth_sweep.

Fixtures are real fio 3.33 runs made for this collection on a scratch directory (ext4):

* fio-3.33_ckpt_write_2ranks_8m_qd8_iouring_fsync.json: the exact argv of :func:`write_argv` for 2 ranks of
  8 MiB, 1 MiB blocks, io_uring, iodepth 8, O_DIRECT, end_fsync, fallocate=truncate (one job per rank; recorded
  before the module made and sized the files itself and fio ran with --thread and fallocate=none).
* fio-3.33_sweep_point_qd4_iouring.json: one sweep point, iodepth 4, 16 MiB scratch file, io_size 32 MiB.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import ckpt_write as cw
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio import parse_fio_json
from helpers import fixture

WRITE_RUN = 'fio-3.33_ckpt_write_2ranks_8m_qd8_iouring_fsync.json'
SWEEP_RUN = 'fio-3.33_sweep_point_qd4_iouring.json'
MIB = 1024 * 1024


# ------------------------------------------------------------------ shard sizing
def test_shard_size_per_rank():
    assert cw.shard_plan(8, '1M', shard_size='1G') == {
        'shard_bytes': 1024 ** 3, 'total_bytes': 8 * 1024 ** 3, 'block_size': MIB, 'ranks': 8,
        'requested_total_bytes': None}


def test_total_size_is_split_and_rounded_down_to_block_size():
    plan = cw.shard_plan(3, '1M', total_size='100M')
    # 100 MiB / 3 = 34952533.33 bytes -> 33 MiB per rank
    assert plan['shard_bytes'] == 33 * MIB
    assert plan['total_bytes'] == 99 * MIB
    assert plan['requested_total_bytes'] == 100 * MIB
    assert cw.shard_plan(8, 4096, total_size='64G')['shard_bytes'] == 8 * 1024 ** 3


@pytest.mark.parametrize('kwargs, message', [
    (dict(ranks=8, block_size='1M', total_size='4M'),
     "total_size: '4M' (4194304 bytes) over 8 ranks is 524288 bytes per rank, below block_size 1048576 bytes; "
     "the minimum total_size is 8388608 bytes"),
    (dict(ranks=2, block_size='1M', shard_size='512K'), "shard_size: '512K' (524288 bytes) is below block_size 1048576"),
    (dict(ranks=2, block_size='1M', shard_size='1536K'),
     "shard_size: '1536K' (1572864 bytes) is not a multiple of block_size 1048576 bytes; use 1048576 or 2097152"),
    (dict(ranks=2, block_size='6K', shard_size='1M'), "block_size: '6K' (6144 bytes) is not a multiple of 4096"),
    (dict(ranks=0, block_size='1M', shard_size='1M'), 'ranks: 0 is below the minimum 1'),
    (dict(ranks=1025, block_size='1M', shard_size='1M'), 'ranks: 1025 is above the maximum 1024'),
    (dict(ranks=2, block_size='1M'), 'give exactly one of shard_size (per rank) and total_size (whole checkpoint), '
     'got neither'),
    (dict(ranks=2, block_size='1M', shard_size='1M', total_size='2M'), 'got both'),
    (dict(ranks=2, block_size='1M', shard_size='1MB'), "shard_size: '1MB' is ambiguous"),
])
def test_shard_plan_refusals_name_value_and_limit(kwargs, message):
    with pytest.raises(ValueError) as exc:
        cw.shard_plan(**kwargs)
    assert message in str(exc.value)


# ------------------------------------------------------------------ layout and argv
def test_ranks_round_robin_over_directories():
    layout = cw.rank_layout(['/mnt/ckpt0/b', '/mnt/ckpt1/b/'], 3)
    assert layout == [
        {'rank': 0, 'directory': '/mnt/ckpt0/b', 'name': 'rank_0.ckpt', 'filename': '/mnt/ckpt0/b/rank_0.ckpt'},
        {'rank': 1, 'directory': '/mnt/ckpt1/b/', 'name': 'rank_1.ckpt', 'filename': '/mnt/ckpt1/b/rank_1.ckpt'},
        {'rank': 2, 'directory': '/mnt/ckpt0/b', 'name': 'rank_2.ckpt', 'filename': '/mnt/ckpt0/b/rank_2.ckpt'},
    ]


@pytest.mark.parametrize('directories, message', [
    ([], 'directories: [] is not a non-empty list'),
    (['relative/dir'], "directories[0]: 'relative/dir' is not an absolute path"),
])
def test_bad_directories(directories, message):
    with pytest.raises(ValueError) as exc:
        cw.rank_layout(directories, 2)
    assert message in str(exc.value)


def test_write_argv_exact():
    layout = cw.rank_layout(['/mnt/ckpt0', '/mnt/a:b'], 2)
    argv = cw.write_argv('/usr/bin/fio', layout, 8 * MIB, MIB, 16, 'io_uring', True, True)
    assert argv == [
        '/usr/bin/fio', '--output-format=json', '--thread', '--rw=write', '--bs=1048576', '--size=8388608',
        '--iodepth=16', '--ioengine=io_uring', '--direct=1', '--end_fsync=1', '--fallocate=none',
        '--name=rank_0', '--filename=/mnt/ckpt0/rank_0.ckpt',
        '--name=rank_1', '--filename=/mnt/a\\:b/rank_1.ckpt',
    ]
    # What the module hands fio: the descriptor of the file it made (module_utils/common/scratch.py).
    layout[0]['fio_file'] = '/proc/self/fd/7'
    assert cw.write_argv('fio', layout, MIB, MIB, 1, 'psync', True, True)[-3] == '--filename=/proc/self/fd/7'
    assert 'group_reporting' not in ' '.join(argv)
    buffered = cw.write_argv('fio', layout[:1], MIB, MIB, 1, 'psync', False, False)
    assert '--direct=0' in buffered and '--end_fsync=0' in buffered and '--ioengine=psync' in buffered
    # A sustained write bounded in time as well as bytes: --runtime without time_based.
    timed = cw.write_argv('fio', layout[:1], MIB, MIB, 1, 'psync', True, True, runtime=20)
    assert timed[timed.index('--fallocate=none') + 1] == '--runtime=20' and '--time_based' not in timed
    with pytest.raises(ValueError, match='runtime: 0 is below the minimum 1'):
        cw.write_argv('fio', layout[:1], MIB, MIB, 1, 'psync', True, True, runtime=0)


@pytest.mark.parametrize('depth, engine, message', [
    (0, 'io_uring', 'queue_depth: 0 is below the minimum 1'),
    (65536, 'io_uring', 'queue_depth: 65536 is above the maximum 65535'),
    (8, 'posixaio', "ioengine: 'posixaio' is not one of io_uring, libaio, psync"),
])
def test_write_argv_refusals(depth, engine, message):
    with pytest.raises(ValueError) as exc:
        cw.write_argv('fio', cw.rank_layout(['/d'], 1), MIB, MIB, depth, engine, True, True)
    assert message in str(exc.value)


def test_sweep_and_layout_argv_exact():
    assert cw.sweep_argv('fio', '/mnt/c/s', 4, 16 * MIB, 32 * MIB, MIB, 'io_uring', 3, True) == [
        'fio', '--output-format=json', '--thread', '--name=qd4', '--filename=/mnt/c/s', '--rw=write',
        '--bs=1048576', '--size=16777216', '--fallocate=none', '--io_size=33554432', '--runtime=3', '--iodepth=4',
        '--ioengine=io_uring', '--direct=1']
    assert cw.layout_argv('fio', '/mnt/c/s', 16 * MIB, MIB, 'libaio', True) == [
        'fio', '--output-format=json', '--thread', '--name=layout', '--filename=/mnt/c/s', '--rw=write',
        '--bs=1048576', '--size=16777216', '--iodepth=8', '--ioengine=libaio', '--direct=1', '--end_fsync=1',
        '--fallocate=none']


# ------------------------------------------------------------------ free space
def test_space_errors_name_needed_and_free():
    needs = [{'directory': '/mnt/a', 'device': 'md127', 'needed': 950, 'free': 1000},
             {'directory': '/mnt/b', 'device': None, 'needed': 900, 'free': 1000}]
    errors = cw.space_errors(needs, 0.1)
    assert errors == ['/mnt/a (device md127): needs 950 bytes, free space is 1000 bytes, of which 900 may be used '
                      '(free_space_margin 0.1)']
    assert cw.space_errors(needs, 0.0) == []
    with pytest.raises(ValueError) as exc:
        cw.space_errors(needs, 1.0)
    assert 'free_space_margin: 1.0 is out of range: it must be at least 0.0 and below 1.0' in str(exc.value)


# ------------------------------------------------------------------ MLPerf reduction
def test_reduce_write_on_a_real_run():
    layout = cw.rank_layout(['/tmp/fx/d0', '/tmp/fx/d1'], 2)
    result = cw.reduce_write(parse_fio_json(fixture('fio', WRITE_RUN)), layout, wall_s=0.2)
    ranks = result['per_rank']
    assert [(r['rank'], r['bytes'], r['seconds']) for r in ranks] == [(0, 8 * MIB, 0.013), (1, 8 * MIB, 0.011)]
    # bytes / runtime equals fio's own bw_bytes (fio's runtime includes end_fsync)
    assert [r['bw_bytes'] for r in ranks] == [645277538, 762600727]
    assert result['total_bytes'] == 16 * MIB
    assert result['total_gib'] == pytest.approx(16 / 1024.0)
    assert result['duration_s'] == 0.013  # the slowest rank
    assert result['throughput_bytes_s'] == int(16 * MIB / 0.013)
    assert result['throughput_gib_s'] == pytest.approx(16 * MIB / 0.013 / 1024 ** 3)
    assert result['min_rank_bw_bytes'] == 645277538
    assert result['mean_rank_bw_bytes'] == (645277538 + 762600727) // 2
    assert result['iodepth_max_achieved'] == ['8', '8']
    assert result['wall_s'] == 0.2 and result['fio_version'] == 'fio-3.33'


def test_reduce_write_refuses_job_errors_and_missing_jobs():
    doc = json.loads(fixture('fio', WRITE_RUN))
    doc['jobs'][1]['error'] = 28
    layout = cw.rank_layout(['/d'], 2)
    with pytest.raises(ValueError) as exc:
        cw.reduce_write(parse_fio_json(json.dumps(doc)), layout)
    assert 'fio job rank_1: error 28' in str(exc.value)
    with pytest.raises(ValueError) as exc:
        cw.reduce_write(parse_fio_json(fixture('fio', WRITE_RUN)), cw.rank_layout(['/d'], 3))
    assert 'fio reported 2 jobs, 3 expected' in str(exc.value)
    with pytest.raises(ValueError) as exc:
        cw.reduce_write(parse_fio_json('fio: engine io_uring not loadable\n'), layout)
    assert 'fio output is not usable' in str(exc.value)


def test_sweep_point_on_a_real_run():
    point = cw.sweep_point(parse_fio_json(fixture('fio', SWEEP_RUN)), 4)
    assert point == {'depth': 4, 'bw_bytes': 1525201454, 'p99_ns': 4423680, 'mean_ns': pytest.approx(2549775.125),
                     'io_bytes': 32 * MIB, 'ramp_bytes': 0, 'seconds': 0.022}


def test_sweep_point_of_a_ramped_run_reads_the_measured_group():
    parsed = parse_fio_json(fixture('fio', SWEEP_RUN))
    ramp_write = dict(parsed['jobs'][0]['write'], io_bytes=5 * MIB, bw_bytes=1)
    ramp = dict(parsed['jobs'][0], jobname='ramp4_rank0', write=ramp_write)
    two = dict(parsed, jobs=[ramp, parsed['jobs'][0]])
    point = cw.sweep_point(two, 4, 1)
    assert point['bw_bytes'] == 1525201454 and point['io_bytes'] == 32 * MIB and point['ramp_bytes'] == 5 * MIB
    with pytest.raises(ValueError) as exc:
        cw.sweep_point(parsed, 4, 1)
    assert 'fio reported 1 jobs, 2 expected' in str(exc.value)


def test_sweep_argv_with_a_ramp_group_then_the_measured_group():
    argv = cw.sweep_argv('fio', ['/mnt/c/a', '/mnt/c/b'], 4, 16 * MIB, 32 * MIB, MIB, 'io_uring', 3, True, 2)
    assert argv == [
        'fio', '--output-format=json', '--thread', '--rw=write', '--bs=1048576', '--size=16777216',
        '--fallocate=none', '--iodepth=4', '--ioengine=io_uring', '--direct=1', '--group_reporting',
        '--name=ramp4_rank0', '--filename=/mnt/c/a', '--io_size=33554432', '--runtime=2',
        '--name=ramp4_rank1', '--filename=/mnt/c/b', '--io_size=33554432', '--runtime=2',
        '--name=qd4_rank0', '--stonewall', '--new_group', '--filename=/mnt/c/a', '--io_size=33554432',
        '--runtime=3',
        '--name=qd4_rank1', '--filename=/mnt/c/b', '--io_size=33554432', '--runtime=3']
    assert not [a for a in cw.sweep_argv('fio', '/s', 4, MIB, MIB, MIB, 'io_uring', 3, True, 0) if 'ramp' in a]


# ------------------------------------------------------------------ plateau / early stop
@pytest.mark.parametrize('curve, stop', [
    ([100], False),
    ([100, 200, 400], False),
    ([100, 200, 204], False),            # one flat point is not a plateau yet
    ([100, 200, 204, 208], True),        # two in a row within 5% of 200
    ([100, 200, 190, 180], True),        # falling counts as flat
    ([100, 200, 208, 216], False),       # 4% + 4% = 8% over the reference 200: still growing
    ([100, 200, 204, 300, 305], False),  # the gain at 300 resets the count
    ([100, 200, 204, 300, 305, 310], True),
])
def test_plateau_reached(curve, stop):
    assert cw.plateau_reached(curve, 0.05, 2) is stop


def test_plateau_parameters():
    assert cw.plateau_reached([100, 150, 160], 0.10, 1) is True
    assert cw.plateau_reached([100, 109, 118], 0.10, 2) is False  # 118 > 100 x 1.1
    with pytest.raises(ValueError) as exc:
        cw.plateau_reached([1], 0.05, 0)
    assert 'plateau_points: 0 is below the minimum 1' in str(exc.value)
    with pytest.raises(ValueError) as exc:
        cw.plateau_reached([1], -0.1, 2)
    assert 'plateau_gain: -0.1 is out of range' in str(exc.value)


@pytest.mark.parametrize('depths, message', [
    ([], 'depths: [] is not a non-empty list'),
    ([1, 0], 'depths[1]: 0 is below the minimum 1'),
    ([1, 70000], 'depths[1]: 70000 is above the maximum 65535'),
    ([4, 2, 4], 'depths[2]: depth 4 is listed twice'),
    ([1, True], 'depths[1]: True is not an integer'),
])
def test_check_depths(depths, message):
    with pytest.raises(ValueError) as exc:
        cw.check_depths(depths)
    assert message in str(exc.value)
    assert cw.check_depths([16, 1, 4]) == [1, 4, 16]


def _as_read(doc):
    """A real write run's output with each job's sides swapped: what fio prints for the same jobs reading."""
    for job in doc['jobs']:
        job['read'], job['write'] = job['write'], dict(job['read'], io_bytes=0)
    return doc


def test_read_argv_is_the_write_reading_back():
    layout = cw.rank_layout(['/mnt/ckpt0', '/mnt/ckpt1'], 2)
    layout[0]['fio_file'] = '/proc/self/fd/7'
    argv = cw.read_argv('/usr/bin/fio', layout, 8 * MIB, MIB, 16, 'io_uring', True)
    assert argv == [
        '/usr/bin/fio', '--output-format=json', '--thread', '--rw=read', '--bs=1048576', '--size=8388608',
        '--iodepth=16', '--ioengine=io_uring', '--direct=1', '--fallocate=none',
        '--name=rank_0', '--filename=/proc/self/fd/7',
        '--name=rank_1', '--filename=/mnt/ckpt1/rank_1.ckpt',
    ]
    # the same files or device ranges as the write, option for option but the direction and the fsync
    write = cw.write_argv('/usr/bin/fio', layout, 8 * MIB, MIB, 16, 'io_uring', True, True)
    assert [a for a in write if a not in ('--rw=write', '--end_fsync=1')] == [a for a in argv if a != '--rw=read']
    raw = cw.device_layout(['/dev/nvme1n1'], 2, 8 * MIB)
    assert '--offset=8388608' in cw.read_argv('fio', raw, 8 * MIB, MIB, 4, 'libaio', True)


def test_the_restore_read_is_reduced_like_the_write():
    layout = cw.rank_layout(['/tmp/fx/d0', '/tmp/fx/d1'], 2)
    doc = _as_read(json.loads(fixture('fio', WRITE_RUN)))
    reduced = cw.reduce_write(parse_fio_json(json.dumps(doc)), layout, wall_s=0.2, direction='read')
    written = cw.reduce_write(parse_fio_json(fixture('fio', WRITE_RUN)), layout, wall_s=0.2)
    assert reduced['per_rank'] == written['per_rank'] and reduced['duration_s'] == 0.013
    restore = cw.restore_result(reduced)
    assert restore['throughput_gib_s'] == pytest.approx(16 * MIB / 0.013 / 1024 ** 3)
    assert restore['duration_s'] == 0.013 and restore['total_bytes'] == 16 * MIB and restore['wall_s'] == 0.2
    assert restore['per_rank'] == [{'rank': 0, 'bytes': 8 * MIB, 'seconds': 0.013, 'bw_bytes': 645277538},
                                   {'rank': 1, 'bytes': 8 * MIB, 'seconds': 0.011, 'bw_bytes': 762600727}]
    # a write run read as a restore read nothing: refused, naming the job
    with pytest.raises(ValueError, match='fio job rank_0 read nothing'):
        cw.reduce_write(parse_fio_json(fixture('fio', WRITE_RUN)), layout, direction='read')
