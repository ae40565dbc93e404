# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verification's arithmetic (module_utils/verify/verification.py) and the generated argument specs of the preflight
and verify_checkpoint_write roles."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import verification as v
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import SPEC, argument_spec_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
MIB = 1024 * 1024


def test_aio_settings_take_the_first_parsed_config_else_deepspeed_defaults():
    facts = {'deepspeed': {'configs': [
        {'path': '/a.json', 'exists': False, 'parse_error': None, 'aio': {}},
        {'path': '/b.json', 'exists': True, 'parse_error': 'bad json', 'aio': {}},
        {'path': '/c.json', 'exists': True, 'parse_error': None, 'aio': {'queue_depth': 32, 'block_size': '1M'}},
    ]}}
    assert v.aio_settings(facts) == {'queue_depth': 32, 'block_size': 1048576, 'intra_op_parallelism': 1,
                                     'source': 'the aio section of /c.json'}
    assert v.aio_settings({}) == {'queue_depth': 8, 'block_size': 1048576, 'intra_op_parallelism': 1,
                                  'source': 'DeepSpeed defaults (no ds_config found)'}
    with pytest.raises(ValueError, match='expected the whole ansible_facts.checkpoint_io'):
        v.aio_settings(None)


def _ds_facts(installed, writer=None):
    config = {'path': '/etc/ds.json', 'exists': True, 'parse_error': None, 'aio': {}, 'writer': writer}
    return {'deepspeed': {'configs': [config], 'installed': installed}}


HAS_FASTPERSIST = {'python': '/opt/venv/bin/python', 'version': '0.19.8', 'torch_version': '2.13.0+cpu',
                   'fastpersist': True, 'error': None}


def test_the_engine_is_deepspeed_where_the_training_python_has_fastpersist_else_fio_saying_why():
    chosen = v.verify_engine(_ds_facts(HAS_FASTPERSIST), 'auto')
    assert chosen['engine'] == 'deepspeed' and chosen['python'] == '/opt/venv/bin/python'
    assert "DeepSpeed 0.19.8's FastPersist writer, run by /opt/venv/bin/python" == chosen['reason']
    assert v.verify_engine(_ds_facts(HAS_FASTPERSIST), 'fio')['engine'] == 'fio'
    old = dict(HAS_FASTPERSIST, version='0.16.9', fastpersist=False)
    assert v.verify_engine(_ds_facts(old), 'auto') == {
        'engine': 'fio', 'python': '/opt/venv/bin/python', 'deepspeed_version': '0.16.9',
        'reason': 'fio: DeepSpeed 0.16.9 in /opt/venv/bin/python has no FastPersist writer (0.17.1 and later)'}
    none = {'python': None, 'version': None, 'fastpersist': None,
            'error': 'no training Python given (checkpoint_io_deepspeed_python)'}
    assert v.verify_engine(_ds_facts(none))['reason'] == 'fio: no training Python given (checkpoint_io_deepspeed_python)'
    assert v.verify_engine({})['reason'] == 'fio: the deepspeed facts were not gathered'
    # asked for and not there: refused, naming why and what to do
    with pytest.raises(ValueError, match='checkpoint_io_verify_engine deepspeed: DeepSpeed 0.16.9 in .* has no '
                                         'FastPersist.*Set checkpoint_io_deepspeed_python'):
        v.verify_engine(_ds_facts(old), 'deepspeed')
    with pytest.raises(ValueError, match="checkpoint_io_verify_engine: 'gpu' is not one of auto, fio, deepspeed"):
        v.verify_engine({}, 'gpu')


def test_writer_settings_are_the_keys_fastfilewriter_reads_of_the_first_parsed_config():
    writer = {'type': 'FAST', 'io_buffer_size': 134217728, 'io_buffer_double': False, 'data_parallel': 'SOCKET'}
    assert v.writer_settings(_ds_facts(None, writer)) == {'io_buffer_size': 134217728, 'io_buffer_double': False}
    assert v.writer_settings(_ds_facts(None, None)) == {}
    assert v.writer_settings({}) == {}


def test_checkpoint_shape_scales_to_the_free_space_in_whole_blocks_per_rank():
    assert v.checkpoint_shape(400 * 1024 ** 3, 8, 105 * 1024 ** 3, 0.25) == {'ranks': 8, 'total_bytes': 100 * 1024 ** 3}
    assert v.checkpoint_shape(10 ** 12, 8, 105 * 1024 ** 3, 0.25)['total_bytes'] == 105 * 1024 ** 3
    shape = v.checkpoint_shape(1000 * MIB + 12345, 3, 10 ** 12, 1.0)
    assert shape['total_bytes'] == 999 * MIB and shape['total_bytes'] % (3 * MIB) == 0
    with pytest.raises(ValueError, match='less than one 1 MiB block for each of the 4 ranks'):
        v.checkpoint_shape(3 * MIB, 4, 10 ** 12, 1.0)
    with pytest.raises(ValueError, match='below the minimum 1'):
        v.checkpoint_shape(10 ** 9, 0, 10 ** 12, 1.0)


def test_queue_settings_of_the_named_devices():
    facts = {'block': {'devices': [
        {'name': 'nvme1n1', 'scheduler': 'none', 'nr_requests': 1023, 'read_ahead_kb': 128, 'rotational': False},
        {'name': 'nvme2n1', 'scheduler': 'mq-deadline', 'nr_requests': 64}]}}
    assert v.queue_settings(facts, ['nvme1n1']) == {'nvme1n1': {'scheduler': 'none', 'nr_requests': 1023,
                                                                'read_ahead_kb': 128}}
    assert v.queue_settings({}, ['nvme1n1']) == {}


SETTINGS = {'queue_depth': 8, 'block_size': 1048576, 'intra_op_parallelism': 1, 'source': 'x'}
SIDE = {'median': 1.0, 'min': 0.9, 'max': 1.1, 'n': 3, 'spread': 0.2}
P99 = {'median': 50000000.0, 'min': 1, 'max': 2, 'n': 3, 'spread': 0.1}


def test_before_is_the_baseline_or_the_replay():
    baseline = {'where': 'drives', 'target': ['nvme1n1'], 'reason': 'the blank data drives', 'settings': SETTINGS,
                'ranks': 2, 'total_bytes': 4 * MIB, 'devices': ['nvme1n1'], 'runs': [{}], 'block': {},
                'throughput_gib_s': SIDE, 'p99_ns': P99, 'measured_at': '2026-12-02T00:00:00Z'}
    side = v.before_side(baseline, SETTINGS, ['/mnt/c'])
    assert side['source'] == 'baseline' and side['target'] == ['nvme1n1']
    assert side['what'] == 'the blank data drives, measured 2026-12-02T00:00:00Z before any role ran'
    replayed = {'runs': [{}], 'throughput_gib_s': SIDE, 'p99_ns': None,
                'last': {'ranks': 2, 'total_bytes': 4 * MIB, 'devices': ['md127']}}
    side = v.before_side(None, SETTINGS, ['/mnt/c'], replayed)
    assert side['source'] == 'replayed' and side['target'] == ['/mnt/c'] and side['devices'] == ['md127']
    assert 'not in this ratio' in side['what']
    with pytest.raises(ValueError, match='nothing to compare with'):
        v.before_side(None, SETTINGS, ['/mnt/c'])


def _parts(**over):
    parts = {'node': 'node1', 'directories': ['/mnt/c'], 'ranks': '2',
             'before': {'settings': SETTINGS, 'what': 'baseline', 'throughput_gib_s': SIDE, 'p99_ns': P99},
             'after_settings': dict(SETTINGS, queue_depth=32),
             'after': {'runs': [{}, {}, {}], 'throughput_gib_s': dict(SIDE, median=2.5), 'p99_ns': dict(P99, median=2.5e7),
                       'last': {'devices': ['md127'], 'total_gib': 0.25, 'total_bytes': 268435456,
                                'iodepth_max_achieved': 64}},
             'block_now': {}, 'same_settings': False,
             'verdict': {'verdict': 'faster', 'ratio': 2.5, 'ratio_low': 2.1, 'ratio_high': 3.0, 'noise': 0.2},
             'ceiling_bytes': 3 * 1024 ** 3, 'min_fraction': '0.5', 'findings': [], 'settings_before_source': 'x'}
    parts.update(over)
    return parts


def test_the_report_computes_the_ratios_and_the_ceiling():
    report = v.report(_parts())
    assert report['ranks'] == 2 and report['repeats'] == 3 and report['devices'] == ['md127']
    assert report['p99_ratio'] == 0.5 and report['ceiling_gib_s'] == 3.0 and report['after_ceiling'] == 0.833
    assert report['min_fraction'] == 0.5 and report['after']['iodepth_max_achieved'] == 64
    none = v.report(_parts(ceiling_bytes=None, before=dict(_parts()['before'], p99_ns=None)))
    assert none['ceiling_gib_s'] is None and none['after_ceiling'] is None and none['p99_ratio'] is None


def test_the_line_says_each_side_the_verdict_and_the_ceiling():
    line = v.report_line(v.report(_parts()))
    assert line.startswith('node1: 0.25 GiB in 2 ranks; before 1.0 GiB/s (median of 3, 0.9..1.1, spread 20.0%), '
                           'p99 50.0 ms (queue_depth 8, block_size 1048576; baseline)')
    assert "faster: after/before 2.5 (2.1..3.0 from the runs' extremes, noise 20.0%), p99 after/before 0.5" in line
    assert line.endswith("ceiling 3.0 GiB/s (the depth sweep's best), after/ceiling 0.833")
    same = v.report_line(v.report(_parts(verdict={'verdict': 'no change'}, ceiling_bytes=None, ranks=1)))
    assert 'in 1 rank;' in same and 'no change (the same settings before and after)' in same
    assert same.endswith('ceiling not measured')
    # fio's report (no engine part: a report of an earlier release) and DeepSpeed's
    assert v.report(_parts())['engine'] == {'engine': 'fio', 'reason': 'fio'}
    ds = v.report_line(v.report(_parts(engine={'engine': 'deepspeed', 'deepspeed_version': '0.19.8',
                                               'reason': 'r', 'python': '/p'})))
    assert ds.startswith("node1: 0.25 GiB in 2 ranks, written by DeepSpeed 0.19.8's FastPersist writer; before ")


def test_the_restore_reads_before_and_after():
    restore = dict(SIDE, median=2.0, min=1.8, max=2.2, spread=0.2)
    parts = _parts(before=dict(_parts()['before'], restore_gib_s=SIDE),
                   after=dict(_parts()['after'], restore_gib_s=restore))
    report = v.report(parts)
    assert report['restore'] == {'before': SIDE, 'after': restore, 'ratio': 2.0}
    line = v.report_line(report)
    assert line.endswith('; restore read before 1.0 GiB/s (median of 3, 0.9..1.1, spread 20.0%), '
                         'after 2.0 GiB/s (median of 3, 1.8..2.2, spread 20.0%), after/before 2.0')
    # a baseline recorded before restore reads were measured: said, no ratio
    older = v.report(_parts(after=dict(_parts()['after'], restore_gib_s=restore)))
    assert older['restore'] == {'before': None, 'after': restore, 'ratio': None}
    assert v.report_line(older).endswith('; restore read before not measured, after 2.0 GiB/s (median of 3, '
                                         '1.8..2.2, spread 20.0%)')
    # none asked (checkpoint_io_verify_restore false): nothing in the line
    assert 'restore' not in v.report_line(v.report(_parts()))
    # the baseline record and the replay carry it to the before side
    baseline = {'where': 'drives', 'reason': 'r', 'measured_at': 't', 'restore_gib_s': SIDE}
    assert v.before_side(baseline, SETTINGS, ['/mnt/c'])['restore_gib_s'] == SIDE
    replayed = {'runs': [{}], 'throughput_gib_s': SIDE, 'restore_gib_s': restore, 'last': {}}
    assert v.before_side(None, SETTINGS, ['/mnt/c'], replayed)['restore_gib_s'] == restore


@pytest.mark.parametrize('role', ['preflight', 'verify_checkpoint_write'])
def test_the_roles_argument_specs_are_the_inputs_table(role):
    with open(os.path.join(ROOT, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        specs = yaml.safe_load(handle)['argument_specs']
    for entry, spec in specs.items():
        for name, option in spec['options'].items():
            assert option == argument_spec_options([name])[name], (entry, name)
    if role == 'preflight':
        assert sorted(specs['main']['options']) == sorted(SPEC)


def test_a_size_the_user_asked_for_is_kept_or_refused_never_scaled_down():
    """Issue 31, finding 13: a checkpoint far beyond the volume (1024T) was scaled to the space without a word."""
    gib = 1 << 30
    assert v.checkpoint_shape(400 * gib, 8, 105 * gib, 0.25) == {'ranks': 8, 'total_bytes': 100 * gib}  # default: scaled
    assert v.checkpoint_shape(400 * gib, 8, 64 * gib, 0.25, asked=True) == {'ranks': 8, 'total_bytes': 64 * gib}
    with pytest.raises(ValueError) as err:
        v.checkpoint_shape(400 * gib, 8, 1024 << 40, 0.25, asked=True)
    assert 'checkpoint_io_verify_total_size: %d bytes does not fit: at most %d bytes' % (1024 << 40, 100 * gib) \
        in str(err.value)


# ---------------------------------------------------------------- issue 31, findings 7 and 12
def _nvme(*drives):
    """nvme facts of drives (kernel name, serial, wwid)."""
    return {'nvme': {
        'controllers': [{'name': 'nvme%d' % i, 'serial': serial} for i, (_n, serial, _w) in enumerate(drives)],
        'namespaces': [{'name': name, 'controllers': ['nvme%d' % i], 'nsid': 1, 'wwid': wwid,
                        'is_os_drive': serial.startswith('OS'), 'mount_points': ['/boot'] if serial.startswith('OS')
                        else []} for i, (name, serial, wwid) in enumerate(drives)]}}


FACTS = _nvme(('nvme0n1', 'OS0001', 'eui.os'), ('nvme1n1', 'DATA0001', 'eui.d1'), ('nvme2n1', 'DATA0002', None))
SELECTED = [{'name': 'nvme1n1', 'serial': 'DATA0001', 'wwid': 'eui.d1', 'size_bytes': 4 << 30, 'nsid': 1},
            {'name': 'nvme2n1', 'serial': 'DATA0002', 'wwid': None, 'size_bytes': 4 << 30, 'nsid': 1}]


def test_the_raw_baseline_writes_only_drives_the_force_list_names():
    """Finding 7: the raw write filled force_devices itself; a blank data drive xfs_force does not name was written
    (test failed before the fix: there was no force at all)."""
    unnamed = v.baseline_target([], SELECTED, [], None)
    assert unnamed['where'] == 'none' and unnamed['target'] == []
    assert 'not named: DATA0001 (nvme1n1), DATA0002 (nvme2n1)' in unnamed['reason']
    assert 'xfs_force: [DATA0001, DATA0002]' in unnamed['reason']
    half = v.baseline_target([], SELECTED, [], ['DATA0001'])
    assert half['where'] == 'none' and 'not named: DATA0002 (nvme2n1)' in half['reason']
    both = v.baseline_target([], SELECTED, [], 'DATA0001,DATA0002')
    assert both['where'] == 'drives' and both['target'] == ['nvme1n1', 'nvme2n1']
    assert both['expect'] == [{'name': 'nvme1n1', 'serial': 'DATA0001', 'wwid': 'eui.d1', 'size_bytes': 4 << 30},
                              {'name': 'nvme2n1', 'serial': 'DATA0002', 'size_bytes': 4 << 30}]
    assert v.baseline_target([], SELECTED, [], ['eui.d1', 'DATA0002/1'])['where'] == 'drives'  # WWID, SERIAL/NSID
    signed = v.baseline_target([], SELECTED, ['nvme2n1'], ['DATA0001', 'DATA0002'])
    assert signed['where'] == 'none' and 'carry signatures (nvme2n1)' in signed['reason']
    with pytest.raises(ValueError, match="xfs_force: True is no longer accepted"):
        v.baseline_target([], SELECTED, [], True)
    found = v.baseline_target(['/mnt/c'], SELECTED, [], None)
    assert found['where'] == 'directory' and found['target'] == ['/mnt/c']
    assert v.baseline_target([], [], [], None)['where'] == 'none'


DF = ('Filesystem      Mounted on            Avail\n'
      '/dev/md127      /mnt/check points  4000000000\n'
      '/dev/vda1       /                  9000000000\n'
      '/dev/nvme0n1    /boot               100000000\n')


def test_a_verification_directory_on_the_os_drive_is_refused():
    """Finding 12: /var/tmp was accepted, 3 GiB written there and compared with the data drives' baseline (test
    failed before the fix: no check)."""
    ok = v.write_places('\n'.join(DF.splitlines()[:2]), ['/mnt/check points/runs'], FACTS)
    assert ok == {'avail': 4000000000, 'errors': []}
    places = v.write_places(DF, ['/mnt/check points/runs', '/var/tmp', '/boot/x'], FACTS)
    assert places['avail'] == 4000000000
    assert places['errors'][0].startswith('/var/tmp is on the OS drive (/dev/vda1 mounted at /)')
    assert places['errors'][1].startswith('/boot/x is on the OS drive (/dev/nvme0n1 mounted at /boot)')
    part = 'Filesystem Mounted on Avail\n/dev/nvme0n1p3 /data 5\n'
    assert v.write_places(part, ['/data/x'], FACTS)['errors'][0].startswith('/data/x is on the OS drive')
    with pytest.raises(ValueError, match='df printed 1 filesystems for 2 directories'):
        v.write_places(part, ['/a', '/b'], FACTS)


BASELINE = {'where': 'drives', 'target': ['nvme1n1', 'nvme2n1'], 'ranks': 4, 'total_bytes': 1 << 30,
            'drive_ids': ['DATA0002/1', 'eui.d1'], 'reason': 'the blank data drives written raw',
            'measured_at': '2026-12-04T10:00:00Z', 'throughput_gib_s': {'median': 1.0}}


def test_drive_ids_are_wwids_else_serial_and_nsid():
    assert v.drive_ids(FACTS, ['nvme2n1', 'nvme1n1', 'nvme1n1', 'nvme9n1']) == ['DATA0002/1', 'eui.d1']


def test_the_baseline_is_compared_only_like_with_like():
    """Finding 12: a baseline taken on one drive by a failed run stayed the before of every later verification, and
    a size the user set was replaced by the baseline's (tests failed before the fix: the baseline was always used,
    at its own size)."""
    same = v.before_plan(BASELINE, ['eui.d1', 'DATA0002/1'], 40 << 30, 4, 1 << 30, 0.25)
    assert same['baseline'] is BASELINE and same['shape'] == {'ranks': 4, 'total_bytes': 1 << 30}
    assert same['reason'] is None
    one_drive = v.before_plan(dict(BASELINE, drive_ids=['eui.d1']), ['eui.d1', 'DATA0002/1'], 40 << 30, 4, 1 << 30,
                              0.25)
    assert one_drive['baseline']['where'] == 'none'
    assert 'it ran on eui.d1, this write goes to eui.d1, DATA0002/1' in one_drive['reason']
    assert 'replayed here instead' in one_drive['reason']
    asked = v.before_plan(BASELINE, ['eui.d1', 'DATA0002/1'], 40 << 30, 4, 3 << 30, 0.25, asked=True)
    assert asked['shape'] == {'ranks': 4, 'total_bytes': 3 << 30}  # the user's size kept
    assert 'checkpoint_io_verify_total_size asks 3221225472' in asked['reason']
    ranks = v.before_plan(BASELINE, ['eui.d1', 'DATA0002/1'], 40 << 30, 8, 1 << 30, 0.25)
    assert 'it wrote 4 ranks, checkpoint_io_verify_ranks is 8' in ranks['reason'] and ranks['shape']['ranks'] == 8
    old = v.before_plan(dict(BASELINE, drive_ids=None), ['eui.d1'], 40 << 30, 4, 1 << 30, 0.25)
    assert 'it does not say which drives it ran on' in old['reason']
    small = v.before_plan(BASELINE, ['eui.d1', 'DATA0002/1'], 2 << 30, 4, 1 << 30, 0.25)
    assert 'do not fit in 0.25' in small['reason'] and small['shape']['total_bytes'] == 512 << 20
    none = v.before_plan(None, [], 40 << 30, 4, 1 << 30, 0.25)
    assert none['baseline']['where'] == 'none' and none['reason'] is None


def test_each_fastpersist_run_is_kept_as_a_checkpoint_write_run():
    result = {'wall_s': 30.0, 'runs': [
        {'throughput_gib_s': 1.0, 'duration_s': 2.0, 'min_rank_bw_bytes': 5, 'total_bytes': 7,
         'restore': {'throughput_gib_s': 3.0}},
        {'throughput_gib_s': 1.5, 'duration_s': 1.5, 'min_rank_bw_bytes': 6, 'total_bytes': 7}]}
    runs = v.fastpersist_runs(result)
    assert [sorted(run) for run in runs] == [sorted(v.RUN_KEYS)] * 2
    assert runs[0]['restore_gib_s'] == 3.0 and runs[1]['restore_gib_s'] is None and runs[0]['wall_s'] == 15.0
    assert runs[0]['p99_ns'] is None and runs[1]['throughput_gib_s'] == 1.5
    with pytest.raises(ValueError, match='expected a fastpersist_write result with its runs'):
        v.fastpersist_runs({'msg': 'failed'})
