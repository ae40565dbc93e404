# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""alignment: the cross-layer queue-depth check, plan validation, knee and per-rank depth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import alignment as al
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import alignment_plan as alp
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import render_aio

MIB = 1024 * 1024


def device(name, **overrides):
    entry = {'name': name, 'device': '/dev/' + name, 'scheduler': 'none', 'schedulers_available': ['none',
                                                                                                   'mq-deadline'],
             'nr_requests': 1023, 'hw_tag_depth': 1023, 'hw_contexts': 2, 'read_ahead_kb': 1024,
             'max_sectors_kb': None}
    entry.update(overrides)
    return entry


def make_facts(devices=None, filesystems=None, gds=None, deepspeed=None):
    facts = {'block': {'devices': devices if devices is not None else [device('nvme1n1'), device('nvme2n1')],
                       'errors': []}}
    if filesystems is not None:
        facts['xfs'] = {'checkpoint_paths': [], 'filesystems': filesystems, 'errors': []}
    if gds is not None:
        facts['gds'] = gds
    if deepspeed is not None:
        facts['deepspeed'] = deepspeed
    return facts


def gds_facts(path='dma', etc_depth=128, env=None, env_depth=None, local=None):
    return {
        'path': path,
        'path_reason': ('nvidia_fs 2.25.7 loaded' if path == 'dma'
                        else 'nvidia_fs kernel module not loaded; cuFile falls back to POSIX I/O'),
        'cufile_json': {'path': '/etc/cufile.json', 'exists': True, 'set': [], 'errors': [],
                        'properties': {'execution.max_io_queue_depth': etc_depth,
                                       'properties.max_direct_io_size_kb': 16384}},
        'overrides': {
            'env_path_json': env,
            'env_file': None if env is None else {'path': env, 'exists': True, 'set': [], 'errors': [],
                                                  'properties': {'execution.max_io_queue_depth': env_depth}},
            'local_cufile_json': local or [],
            'notes': [],
        },
        'effective_config_source': env or '/etc/cufile.json',
    }


def xfs_fs(kernel_name, sunit, swidth, md=None):
    return {'device': '/dev/' + kernel_name, 'kernel_name': kernel_name, 'mount_point': '/mnt/ckpt',
            'sunit_bytes': sunit, 'swidth_bytes': swidth, 'md': md}


def ds_config(path='/opt/train/ds_config.json', **aio):
    values = {'block_size': MIB, 'queue_depth': 8, 'intra_op_parallelism': 1, 'single_submit': False,
              'overlap_events': True, 'use_gds': False}
    values.update(aio)
    return {'path': path, 'exists': True, 'parse_error': None, 'aio_present': True, 'aio': values,
            'aio_truthiness': {'single_submit': bool(values['single_submit']),
                               'overlap_events': bool(values['overlap_events']),
                               'use_gds': bool(values['use_gds'])},
            'warnings': [], 'unknown_aio_keys': [], 'nvme_offload_paths': []}


def plan(**overrides):
    base = {'ranks': 8, 'drives': ['nvme1n1', 'nvme2n1'], 'rank_drives': 'round_robin', 'queue_depth': 8,
            'block_size': '1M'}
    base.update(overrides)
    return base


def one_drive(**overrides):
    """All ranks on nvme1n1 (the only selected drive)."""
    return plan(drives=['nvme1n1'], **overrides)


def ids(result, severity=None):
    return [f['id'] for f in result['findings'] if severity is None or f['severity'] == severity]


def only(result, fid):
    found = [f for f in result['findings'] if f['id'] == fid]
    assert len(found) == 1, result['findings']
    return found[0]


# ---------------------------------------------------------------------------------------------------------
# the realistic lab case
# ---------------------------------------------------------------------------------------------------------

LAB_FACTS = make_facts(devices=[
    device('nvme0n1', read_ahead_kb=128, max_sectors_kb=512),  # the OS drive, never selected
    device('nvme1n1', read_ahead_kb=128, max_sectors_kb=512, hw_contexts=2),
    device('nvme2n1', read_ahead_kb=128, max_sectors_kb=512, hw_contexts=2),
])


def test_lab_two_drives_eight_ranks_round_robin_has_no_errors():
    result = al.check_alignment(LAB_FACTS, plan())
    assert result['errors'] == 0
    assert result['warnings'] == 0
    assert sorted(result['per_drive']) == ['nvme1n1', 'nvme2n1']
    first = result['per_drive']['nvme1n1']
    assert first['ranks'] == 4
    assert first['rank_indexes'] == [0, 2, 4, 6]
    assert result['per_drive']['nvme2n1']['rank_indexes'] == [1, 3, 5, 7]
    assert first['aggregate_depth'] == 32
    # 1 MiB I/Os split in two at max_sectors_kb 512: 64 requests, far below nr_requests 1023
    assert first['requests_in_flight'] == 64
    assert first['requests_per_io'] == 2
    assert (first['nr_requests'], first['hw_tag_depth'], first['scheduler']) == (1023, 1023, 'none')
    assert first['stripe_unit_bytes'] is None
    # read-ahead 128 KiB vs 1 MiB blocks: only an info (buffered restore reads)
    assert ids(result) == ['block_size_read_ahead_mismatch', 'block_size_read_ahead_mismatch']
    assert result['infos'] == 2
    assert result['plan']['rank_drives'] == ['nvme1n1', 'nvme2n1'] * 4
    assert result['plan']['block_size'] == MIB
    json.dumps(result)  # plain data for the play and the fleet report


def test_lab_case_with_matched_read_ahead_is_clean():
    facts = make_facts(devices=[device('nvme1n1'), device('nvme2n1')])
    result = al.check_alignment(facts, plan())
    assert result['findings'] == []
    assert (result['errors'], result['warnings'], result['infos']) == (0, 0, 0)


def test_defaults_are_deepspeeds():
    result = al.check_alignment(make_facts(), {'ranks': 2, 'drives': ['/dev/nvme1n1']})
    assert result['plan']['queue_depth'] == 8
    assert result['plan']['block_size'] == 1048576
    assert result['plan']['intra_op_parallelism'] == 1
    assert result['plan']['use_gds'] is False
    assert result['per_drive']['nvme1n1']['aggregate_depth'] == 16


# ---------------------------------------------------------------------------------------------------------
# one positive and one negative case per finding id
# ---------------------------------------------------------------------------------------------------------

def _facts_with(**dev_overrides):
    return make_facts(devices=[device('nvme1n1', **dev_overrides), device('nvme2n1')])


CASES = [
    # depth_above_nr_requests
    ('depth_above_nr_requests', 'error', one_drive(ranks=1, queue_depth=32), _facts_with(nr_requests=16),
     ['32 requests in flight', 'nr_requests is 16'], 'set nr_requests to 32'),
    ('depth_above_nr_requests', 'error', one_drive(ranks=1, queue_depth=16, intra_op_parallelism=2),
     _facts_with(nr_requests=16), ['queue_depth 16 x intra_op_parallelism 2', 'nr_requests is 16'],
     'set nr_requests to 32'),
    ('depth_above_nr_requests', 'error', one_drive(ranks=1, queue_depth=16),
     _facts_with(nr_requests=16, max_sectors_kb=512),
     ['32 requests in flight', '2 requests per I/O', 'max_sectors_kb 512'], 'set nr_requests to 32'),
    ('depth_above_nr_requests', 'error', one_drive(ranks=1, queue_depth=4096),
     _facts_with(nr_requests=1023, hw_tag_depth=1023), ['4096 requests', 'nr_requests is 1023'],
     'lower aio.queue_depth to 1023'),
    ('depth_above_nr_requests', None, one_drive(ranks=1, queue_depth=16), _facts_with(nr_requests=16), [], None),
    # aggregate_above_nr_requests
    ('aggregate_above_nr_requests', 'warning', one_drive(), _facts_with(nr_requests=32),
     ['8 ranks x 8 = 64 requests in flight; nr_requests is 32', '32 wait in the block layer',
      'per hardware queue'],
     'set nr_requests to 64'),
    ('aggregate_above_nr_requests', 'warning', one_drive(queue_depth=512),
     _facts_with(nr_requests=1023, hw_tag_depth=1023), ['4096 requests'], 'lower aio.queue_depth to 127'),
    ('aggregate_above_nr_requests', None, one_drive(), _facts_with(nr_requests=64), [], None),
    # aggregate_above_hw_tag_depth
    ('aggregate_above_hw_tag_depth', 'error', one_drive(), _facts_with(nr_requests=63, hw_tag_depth=63,
                                                                       hw_contexts=1),
     ['64 requests in flight', 'hardware tag depth 63', 'scheduler none'], 'lower aio.queue_depth to 7'),
    ('aggregate_above_hw_tag_depth', 'warning', one_drive(), _facts_with(nr_requests=63, hw_tag_depth=63,
                                                                         hw_contexts=8),
     ['above the hardware tag depth 63', 'not certain', '8 hardware queues'], 'io_queue_depth'),
    ('aggregate_above_hw_tag_depth', None, one_drive(), _facts_with(scheduler='mq-deadline', nr_requests=256,
                                                                    hw_tag_depth=63), [], None),
    ('aggregate_above_hw_tag_depth', None, one_drive(), _facts_with(hw_tag_depth=64, nr_requests=64), [], None),
    # aggregate_past_saturation
    ('aggregate_past_saturation', 'warning', one_drive(saturation_depth={'/dev/nvme1n1': 16}), _facts_with(),
     ['aggregate depth 64', '4.0x the saturation depth 16', 'latency without throughput'],
     'lower aio.queue_depth to 2'),
    ('aggregate_past_saturation', 'warning', one_drive(saturation_depth={'nvme1n1': 16}, saturation_factor=3),
     _facts_with(), ['limit 3x'], 'lower aio.queue_depth to 2'),
    ('aggregate_past_saturation', None, one_drive(saturation_depth={'nvme1n1': 32}), _facts_with(), [], None),
    ('aggregate_past_saturation', None, one_drive(queue_depth=512), _facts_with(), [], None),
    # scheduler_not_none
    ('scheduler_not_none', 'warning', one_drive(), _facts_with(scheduler='mq-deadline'),
     ['scheduler mq-deadline', 'reorders and merges'], 'set the scheduler of nvme1n1 to none, then nr_requests'),
    ('scheduler_not_none', None, one_drive(), _facts_with(scheduler='none'), [], None),
    # block_size_read_ahead_mismatch
    ('block_size_read_ahead_mismatch', 'info', one_drive(), _facts_with(read_ahead_kb=128),
     ['read_ahead_kb 128 (128 KiB)', 'block_size 1 MiB', 'buffered reads'], 'set read_ahead_kb to 1024'),
    ('block_size_read_ahead_mismatch', 'warning', one_drive(), _facts_with(read_ahead_kb=768),
     ['read_ahead_kb 768'], 'set read_ahead_kb to 1024'),
    ('block_size_read_ahead_mismatch', 'warning', one_drive(block_size='4M'), _facts_with(read_ahead_kb=0),
     ['read-ahead off', 'block_size 4 MiB'], 'set read_ahead_kb to 4096'),
    ('block_size_read_ahead_mismatch', 'info', one_drive(use_gds=True),
     dict(_facts_with(read_ahead_kb=768), gds=gds_facts()), ['GDS bypasses the page cache'],
     'set read_ahead_kb to 1024'),
    ('block_size_read_ahead_mismatch', None, one_drive(), _facts_with(read_ahead_kb=1024), [], None),
    # block_size_stripe_unit_mismatch
    ('block_size_stripe_unit_mismatch', 'warning', one_drive(),
     make_facts(filesystems=[xfs_fs('nvme1n1', 786432, 786432)]),
     ['block_size 1 MiB', 'stripe unit 768 KiB'], 'set aio.block_size to 1572864'),
    ('block_size_stripe_unit_mismatch', None, one_drive(),
     make_facts(filesystems=[xfs_fs('nvme1n1p1', 512 * 1024, MIB)]), [], None),
    # stripe_width_block_size_mismatch
    ('stripe_width_block_size_mismatch', 'warning', one_drive(),
     make_facts(filesystems=[xfs_fs('nvme1n1', 512 * 1024, 3 * 512 * 1024)]),
     ['stripe width 1536 KiB', 'block_size 1 MiB'], 'set aio.block_size to 1572864'),
    ('stripe_width_block_size_mismatch', None, one_drive(),
     make_facts(filesystems=[xfs_fs('nvme1n1', 512 * 1024, 2 * MIB)]), [], None),
    ('stripe_width_block_size_mismatch', None, one_drive(block_size='2M'),
     make_facts(filesystems=[xfs_fs('nvme1n1', 512 * 1024, MIB)]), [], None),
    # cufile_queue_depth_below_rank_depth
    ('cufile_queue_depth_below_rank_depth', 'warning', one_drive(use_gds=True, queue_depth=32),
     make_facts(gds=gds_facts(etc_depth=16)), ['max_io_queue_depth is 16 (/etc/cufile.json)', 'queue_depth is 32'],
     'set execution.max_io_queue_depth to 32 in /etc/cufile.json'),
    ('cufile_queue_depth_below_rank_depth', 'warning', one_drive(use_gds=True, queue_depth=32),
     make_facts(gds=gds_facts(etc_depth=128, env='/job/cufile.json', env_depth=8)),
     ['is 8 (/job/cufile.json)'], 'in /job/cufile.json'),
    ('cufile_queue_depth_below_rank_depth', 'warning', one_drive(use_gds=True, cufile_max_io_queue_depth=4),
     make_facts(gds=gds_facts()), ['is 4 (the plan)'], 'set execution.max_io_queue_depth to 8'),
    ('cufile_queue_depth_below_rank_depth', None, one_drive(use_gds=True, queue_depth=128),
     make_facts(gds=gds_facts(etc_depth=128)), [], None),
    ('cufile_queue_depth_below_rank_depth', None, one_drive(queue_depth=32),
     make_facts(gds=gds_facts(etc_depth=16)), [], None),
    # cufile_json_overridden
    ('cufile_json_overridden', 'warning', one_drive(use_gds=True),
     make_facts(gds=gds_facts(local=[{'path': '/opt/train/local_cufile.json', 'exists': True, 'set': [],
                                      'errors': [], 'properties': {'execution.max_io_queue_depth': 8,
                                                                   'properties.max_direct_io_size_kb': 16384}}])),
     ['/opt/train/local_cufile.json overrides /etc/cufile.json', 'bypassed without any message',
      'execution.max_io_queue_depth 8 (/etc/cufile.json 128)'], 'execution.max_io_queue_depth = aio.queue_depth'),
    ('cufile_json_overridden', 'warning', one_drive(use_gds=True),
     make_facts(gds=gds_facts(env='/job/cufile.json', env_depth=128)),
     ['/job/cufile.json overrides /etc/cufile.json for the job (CUFILE_ENV_PATH_JSON is set to it)',
      'properties.max_direct_io_size_kb "unset" (/etc/cufile.json 16384)'],
     'put the tuned settings in /job/cufile.json too, or start the job without CUFILE_ENV_PATH_JSON'),
    ('cufile_json_overridden', None, one_drive(use_gds=True), make_facts(gds=gds_facts()), [], None),
    ('cufile_json_overridden', None, one_drive(use_gds=False),
     make_facts(gds=gds_facts(env='/job/cufile.json', env_depth=128)), [], None),
    # gds_path_not_dma
    ('gds_path_not_dma', 'error', one_drive(use_gds=True), make_facts(gds=gds_facts(path='compat')),
     ['GDS path is compat', 'nvidia_fs kernel module not loaded', 'compatibility mode'], 'set aio.use_gds false'),
    ('gds_path_not_dma', 'error', one_drive(use_gds='true'), make_facts(),
     ['gds facts were not gathered'], 'gather_subset including gds'),
    ('gds_path_not_dma', None, one_drive(use_gds=True), make_facts(gds=gds_facts(path='dma')), [], None),
    ('gds_path_not_dma', None, one_drive(use_gds=False), make_facts(gds=gds_facts(path='unavailable')), [], None),
    # deepspeed_config_differs
    ('deepspeed_config_differs', 'warning', one_drive(queue_depth=8),
     make_facts(deepspeed={'configs': [ds_config(queue_depth=32, use_gds='false')]}),
     ['/opt/train/ds_config.json', 'queue_depth 32 (plan 8)', "use_gds 'false' (plan False)"],
     json.dumps(render_aio(block_size=MIB, queue_depth=8, intra_op_parallelism=1, use_gds=False),
                sort_keys=True)),
    ('deepspeed_config_differs', None, one_drive(), make_facts(deepspeed={'configs': [ds_config()]}), [], None),
    ('deepspeed_config_differs', None, one_drive(),
     make_facts(deepspeed={'configs': [dict(ds_config(queue_depth=2), parse_error='invalid JSON')]}), [], None),
    # drive_without_ranks
    ('drive_without_ranks', 'info', plan(ranks=1), make_facts(), ['nvme2n1: selected but no rank writes to it (1 rank over 2 drives)'],
     'map a rank to nvme2n1'),
    ('drive_without_ranks', None, plan(ranks=2), make_facts(), [], None),
]


@pytest.mark.parametrize('fid, severity, the_plan, facts, fragments, fix', CASES,
                         ids=['%s-%s-%d' % (c[0], c[1] or 'absent', i) for i, c in enumerate(CASES)])
def test_finding(fid, severity, the_plan, facts, fragments, fix):
    before = copy.deepcopy((the_plan, facts))
    result = al.check_alignment(facts, the_plan)
    assert (the_plan, facts) == before  # inputs are not modified
    if severity is None:
        assert fid not in ids(result)
        return
    finding = only(result, fid)
    assert finding['severity'] == severity
    for fragment in fragments:
        assert fragment in finding['message']
    assert fix in finding['fix']
    assert result['errors'] == len(ids(result, 'error'))
    assert result['warnings'] == len(ids(result, 'warning'))


def test_every_finding_id_has_a_positive_and_a_negative_case():
    positive = set(c[0] for c in CASES if c[1])
    negative = set(c[0] for c in CASES if not c[1])
    assert positive == set(al.FINDING_IDS)
    assert negative == set(al.FINDING_IDS)


def test_findings_have_the_documented_shape():
    facts = make_facts(devices=[device('nvme1n1', scheduler='mq-deadline', nr_requests=4, read_ahead_kb=768)],
                       gds=gds_facts(path='compat'))
    result = al.check_alignment(facts, one_drive(use_gds=True))
    assert set(result) == {'findings', 'per_drive', 'errors', 'warnings', 'infos', 'plan'}
    for finding in result['findings']:
        assert set(finding) == {'id', 'severity', 'device', 'message', 'fix'}
        assert finding['id'] in al.FINDING_IDS
        assert finding['severity'] in ('error', 'warning', 'info')
    assert only(result, 'gds_path_not_dma')['device'] is None
    assert only(result, 'scheduler_not_none')['device'] == 'nvme1n1'
    assert result['errors'] == 2  # depth_above_nr_requests + gds_path_not_dma


def test_md_raid0_spreads_ranks_over_members():
    md = {'name': 'md0', 'level': 'raid0', 'chunk_bytes': 512 * 1024, 'raid_disks': 2, 'members':
          ['nvme1n1', 'nvme2n1']}
    facts = make_facts(devices=[device('nvme1n1', max_sectors_kb=512), device('nvme2n1', max_sectors_kb=512)],
                       filesystems=[xfs_fs('md0', 512 * 1024, MIB, md=md)])
    result = al.check_alignment(facts, plan(drives=['md0'], rank_drives='round_robin'))
    for member in ('nvme1n1', 'nvme2n1'):
        info = result['per_drive'][member]
        assert info['via'] == 'md0'
        assert info['ranks'] == 8
        # every 1 MiB I/O puts one 512 KiB chunk on each member: 8 ranks x 8 on both
        assert info['aggregate_depth'] == 64
        assert info['requests_in_flight'] == 64
        assert info['filesystem'] == 'md0'
        assert info['stripe_unit_bytes'] == 512 * 1024
    assert result['errors'] == 0
    # md0 splits 4 MiB I/Os at its chunk: requests, not I/Os, count against nr_requests
    facts['block']['devices'][0]['nr_requests'] = 6
    result = al.check_alignment(facts, plan(drives=['md0'], block_size='4M', queue_depth=2, ranks=2))
    finding = only(result, 'depth_above_nr_requests')
    assert finding['device'] == 'nvme1n1'
    assert 'one rank keeps 8 requests in flight (queue_depth 2' in finding['message']
    assert '4 requests per I/O: the block layer splits I/Os at md md0 at its chunk' in finding['message']
    assert 'nr_requests is 6' in finding['message']
    facts['block']['devices'][0]['nr_requests'] = 1023
    # 4 MiB I/Os: 8 chunks, 4 per member per I/O
    result = al.check_alignment(facts, plan(drives=['md0'], block_size='4M', queue_depth=2))
    assert result['per_drive']['nvme1n1']['aggregate_depth'] == 16
    assert result['per_drive']['nvme1n1']['requests_in_flight'] == 64
    # 512 KiB I/Os: each touches one member
    result = al.check_alignment(facts, plan(drives=['md0'], block_size='512K', queue_depth=8))
    assert result['per_drive']['nvme1n1']['aggregate_depth'] == 32


def test_stripe_findings_are_reported_once_per_filesystem():
    md = {'name': 'md0', 'level': 'raid0', 'chunk_bytes': 768 * 1024, 'members': ['nvme1n1', 'nvme2n1']}
    facts = make_facts(filesystems=[xfs_fs('md0', 768 * 1024, 1536 * 1024, md=md)])
    result = al.check_alignment(facts, plan(drives=['md0']))
    assert ids(result, 'warning') == ['block_size_stripe_unit_mismatch', 'stripe_width_block_size_mismatch']
    assert only(result, 'block_size_stripe_unit_mismatch')['device'] == 'md0'


def test_unknown_facts_values_skip_their_checks():
    facts = make_facts(devices=[device('nvme1n1', nr_requests=None, hw_tag_depth=None, scheduler=None,
                                       read_ahead_kb=None)])
    result = al.check_alignment(facts, one_drive(queue_depth=4096))
    assert result['findings'] == []


# ---------------------------------------------------------------------------------------------------------
# bad plans: clear messages, before any check
# ---------------------------------------------------------------------------------------------------------

BAD_PLANS = [
    (plan(ranks=0), 'ranks: 0 is out of range 1..1024'),
    (plan(ranks=-2), 'ranks: -2 is out of range 1..1024'),
    (plan(ranks=5000), 'ranks: 5000 is out of range 1..1024'),
    (plan(ranks='eight'), "ranks: 'eight' is not a positive integer"),
    (plan(ranks=True), 'ranks: True is not a positive integer'),
    (plan(ranks=2.5), 'ranks: 2.5 is not a positive integer'),
    (plan(ranks=None), 'ranks: not set'),
    (plan(ranks=4, rank_drives=['nvme1n1', 'nvme1n1', 'nvme2n1', 'nvme9n1']),
     'rank 3 writes to nvme9n1, which is not among the selected drives (nvme1n1, nvme2n1)'),
    (plan(ranks=2, drives=None, rank_drives=['nvme1n1', 'nvme9n1']),
     'rank 1 writes to nvme9n1, which is not among the known drives (nvme1n1, nvme2n1)'),
    (plan(ranks=2, drives=['nvme1n1'], rank_drives=['nvme1n1', 'nvme2n1']),
     'rank 1 writes to nvme2n1, which is not among the selected drives (nvme1n1)'),
    (plan(ranks=2, rank_drives={0: 'nvme1n1', 8: 'nvme2n1'}), 'rank_drives: rank 8 is out of range 0..1 (ranks is 2)'),
    (plan(ranks=2, rank_drives={'-1': 'nvme1n1', '1': 'nvme2n1'}), 'rank_drives: rank \'-1\' is out of range 0..1'),
    (plan(ranks=4, rank_drives={0: 'nvme1n1', 2: 'nvme2n1'}), 'rank_drives: ranks 1, 3 have no drive (ranks is 4'),
    (plan(ranks=2, rank_drives={'first': 'nvme1n1', 1: 'nvme2n1'}), "rank_drives: key 'first' is not a rank index"),
    (plan(ranks=2, rank_drives={0: 'nvme1n1', '0': 'nvme1n1', 1: 'nvme2n1'}), 'rank_drives: rank 0 is given twice'),
    (plan(ranks=4, rank_drives=['nvme1n1', 'nvme2n1', 'nvme1n1']),
     'rank_drives: the list has 3 entries but ranks is 4'),
    (plan(rank_drives='random'), "rank_drives: 'random' is not a mapping; use 'round_robin'"),
    (plan(rank_drives=7), "rank_drives: 7 is not a mapping"),
    (plan(ranks=1, rank_drives=[None]), 'rank_drives: rank 0: None is not a device name'),
    (plan(queue_depth=0), 'queue_depth: 0 is out of range 1..65535'),
    (plan(queue_depth=70000), 'queue_depth: 70000 is out of range 1..65535'),
    (plan(queue_depth='deep'), "queue_depth: 'deep' is not an integer"),
    (plan(queue_depth=True), 'queue_depth: True is not an integer'),
    (plan(block_size='1X'), "block_size: '1X' is not a size"),
    (plan(block_size='1MB'), "block_size: '1MB' is ambiguous"),
    (plan(block_size=0), 'block_size: 0 is not a size'),
    (plan(block_size=1000), 'block_size: 1000 bytes is not a multiple of 4096'),
    (plan(intra_op_parallelism=0), 'intra_op_parallelism: 0 is out of range 1..1024'),
    (plan(saturation_depth={'nvme1n1': 0}), 'saturation_depth[nvme1n1]: 0 is out of range 1..65535'),
    (plan(saturation_depth=[32]), 'saturation_depth: expected a dict'),
    (plan(saturation_depth={'nvme8n1': 32}), 'saturation_depth: nvme8n1 is not among the known devices (nvme1n1, nvme2n1)'),
    (plan(saturation_factor=0.5), 'saturation_factor: 0.5 is not a number >= 1'),
    (plan(saturation_factor=float('nan')), 'saturation_factor: nan is not a number >= 1'),
    (plan(use_gds='maybe'), "use_gds: 'maybe' is not a boolean"),
    (plan(cufile_max_io_queue_depth=0), 'cufile_max_io_queue_depth: 0 is out of range 1..65535'),
    (plan(**{'queue-depth': 8}), 'plan: unknown keys queue-depth (known: ranks, rank_drives'),
    (plan(drives=['nvme1n1', 'nvme7n1']), 'drives: nvme7n1 is not among the known devices (nvme1n1, nvme2n1)'),
    (plan(drives=['nvme1n1', '/dev/nvme1n1']), 'drives: nvme1n1 is listed twice'),
    (plan(drives=[]), 'drives: [] is not a non-empty list of device names'),
    (plan(drives={'devices': ['nvme1n1']}), 'drives: a dict must be the select_drives result'),
    ([8, 'nvme1n1'], 'plan: expected a dict, got list'),
]


@pytest.mark.parametrize('bad, message', BAD_PLANS, ids=[case[1][:40] for case in BAD_PLANS])
def test_bad_plans_are_refused_with_a_clear_message(bad, message):
    with pytest.raises(ValueError) as exc:
        al.check_alignment(make_facts(), bad)
    assert message in str(exc.value)


def test_round_robin_needs_the_selected_drives():
    with pytest.raises(ValueError) as exc:
        al.check_alignment(LAB_FACTS, {'ranks': 8})
    assert 'round_robin needs drives' in str(exc.value)
    assert 'OS drive' in str(exc.value)


def test_facts_without_a_block_section_are_refused():
    with pytest.raises(ValueError) as exc:
        al.check_alignment({'nvme': {}}, plan())
    assert 'gather_subset including block' in str(exc.value)
    with pytest.raises(ValueError) as exc:
        al.check_alignment(None, plan())
    assert 'expected the whole ansible_facts.checkpoint_io' in str(exc.value)


def test_a_known_drive_without_block_facts_is_named():
    md = {'name': 'md0', 'level': 'raid0', 'chunk_bytes': 512 * 1024, 'members': ['nvme1n1', 'nvme5n1']}
    facts = make_facts(filesystems=[xfs_fs('md0', 512 * 1024, MIB, md=md)])
    with pytest.raises(ValueError) as exc:
        al.check_alignment(facts, plan(drives=['md0']))
    assert 'nvme5n1: no block facts for this drive' in str(exc.value)


def test_validate_plan_normalizes():
    result = alp.validate_plan({'ranks': '4', 'rank_drives': {'0': '/dev/nvme1n1', 1: 'nvme2n1', '2': 'nvme1n1',
                                                              3: 'nvme2n1'},
                                'queue_depth': '16', 'block_size': '2MiB', 'intra_op_parallelism': 2,
                                'use_gds': 'yes', 'saturation_depth': {'/dev/nvme1n1': 32}},
                               ['/dev/nvme1n1', 'nvme2n1', 'nvme0n1'])
    assert result == {
        'ranks': 4,
        'drives': ['nvme1n1', 'nvme2n1', 'nvme0n1'],
        'rank_drives': ['nvme1n1', 'nvme2n1', 'nvme1n1', 'nvme2n1'],
        'queue_depth': 16,
        'block_size': 2 * MIB,
        'intra_op_parallelism': 2,
        'rank_depth': 32,
        'saturation_depth': {'nvme1n1': 32},
        'saturation_factor': 2,
        'use_gds': True,
        'cufile_max_io_queue_depth': None,
    }


def test_validate_plan_accepts_the_select_drives_result():
    selection = {'selected': [{'name': 'nvme2n1', 'device': '/dev/nvme2n1'},
                              {'name': 'nvme1n1', 'device': '/dev/nvme1n1'}], 'refused': [], 'unmatched': []}
    result = alp.validate_plan({'ranks': 3, 'drives': selection}, ['nvme1n1', 'nvme2n1'])
    assert result['rank_drives'] == ['nvme2n1', 'nvme1n1', 'nvme2n1']


def test_validate_plan_refuses_bad_devices_lists():
    with pytest.raises(ValueError) as exc:
        alp.validate_plan({'ranks': 1}, 'nvme1n1')
    assert 'devices: expected a list of device names' in str(exc.value)
    with pytest.raises(ValueError) as exc:
        alp.validate_plan({'ranks': 1}, [])
    assert 'no devices to map ranks to' in str(exc.value)


# ---------------------------------------------------------------------------------------------------------
# queue_depth: auto (knee and per-rank depth) on the curve measured on the lab
# ---------------------------------------------------------------------------------------------------------

MS = 1000 * 1000
LAB_CURVE = [
    {'depth': 1, 'bw_bytes': 309000000, 'p99_ns': 8 * MS},
    {'depth': 4, 'bw_bytes': 1500000000, 'p99_ns': 10 * MS},
    {'depth': 8, 'bw_bytes': 1820000000, 'p99_ns': 14 * MS},
    {'depth': 32, 'bw_bytes': 2497000000, 'p99_ns': 36 * MS},
    {'depth': 128, 'bw_bytes': 2550000000, 'p99_ns': 110 * MS},
]


def test_knee_of_the_lab_curve():
    result = alp.knee_depth(LAB_CURVE)
    assert result['knee'] == 32  # 2497 MB/s >= 95% of 2550 (2422.5); 1820 at depth 8 is not
    assert result['best_depth'] == 128
    assert result['best_bw_bytes'] == 2550000000
    assert result['knee_bw_bytes'] == 2497000000
    assert result['threshold_bw_bytes'] == pytest.approx(2422500000)
    assert result['p99_ns_at_knee'] == 36 * MS
    assert result['littles_law_depth'] is None  # no block size given


def test_knee_littles_law_with_block_size():
    result = alp.knee_depth(list(reversed(LAB_CURVE)), 0.95, '1M')
    assert result['knee'] == 32
    assert result['latency_source'] == 'p99_ns'
    # ceil(2550e6 B/s x 0.036 s / 1 MiB) = ceil(87.55)
    assert result['littles_law_depth'] == 88
    with_mean = [dict(p, mean_ns=p['depth'] * MIB * 1e9 / p['bw_bytes']) for p in LAB_CURVE]
    result = alp.knee_depth(with_mean, block_size=MIB)
    assert result['latency_source'] == 'mean_ns'
    # with the mean latency Little's Law lands back near the knee: ceil(32 x 2550 / 2497)
    assert result['littles_law_depth'] == 33


@pytest.mark.parametrize('fraction, knee', [(0.95, 32), (0.7, 8), (0.5, 4), (1.0, 128), (0.1, 1)])
def test_knee_fraction(fraction, knee):
    assert alp.knee_depth(LAB_CURVE, fraction)['knee'] == knee


@pytest.mark.parametrize('knee, ranks, nr_requests, depth', [
    (32, 4, 1023, 8),  # the lab: 8 ranks round robin over 2 drives
    (32, 3, 1023, 11),
    (32, 64, 1023, 1),
    (2048, 1, 1023, 1023),
    (32, 1, 16, 16),
    ('32', '4', '1023', 8),
])
def test_per_rank_depth(knee, ranks, nr_requests, depth):
    assert alp.per_rank_depth(knee, ranks, nr_requests) == depth


def test_knee_to_per_rank_depth_to_a_clean_plan():
    knee = alp.knee_depth(LAB_CURVE, 0.95, '1M')
    depth = alp.per_rank_depth(knee, 4, 1023)
    assert depth == 8
    saturation = {'nvme1n1': knee['knee'], 'nvme2n1': knee['knee']}
    result = al.check_alignment(make_facts(), plan(queue_depth=depth, saturation_depth=saturation))
    assert result['findings'] == []
    assert result['per_drive']['nvme1n1']['aggregate_depth'] == knee['knee']


@pytest.mark.parametrize('curve, message', [
    ([], 'curve: [] is not a non-empty list'),
    (None, 'curve: None is not a non-empty list'),
    ({'depth': 1}, 'is not a non-empty list'),
    ([{'depth': 1, 'bw_bytes': 1}, 'x'], "curve[1]: 'x' is not a point"),
    ([{'bw_bytes': 1}], 'curve[0]: depth is missing'),
    ([{'depth': 1}], 'curve[0]: bw_bytes is missing'),
    ([{'depth': 0, 'bw_bytes': 1}], 'curve[0].depth: 0 is out of range: it must be >= 1'),
    ([{'depth': 1.5, 'bw_bytes': 1}], 'curve[0].depth: 1.5 is not a whole number'),
    ([{'depth': '8', 'bw_bytes': 1}], "curve[0].depth: '8' is not a number"),
    ([{'depth': 1, 'bw_bytes': 'fast'}], "curve[0].bw_bytes: 'fast' is not a number"),
    ([{'depth': 1, 'bw_bytes': -1}], 'curve[0].bw_bytes: -1 is negative'),
    ([{'depth': 1, 'bw_bytes': float('nan')}], 'curve[0].bw_bytes: nan is not a number'),
    ([{'depth': 1, 'bw_bytes': float('inf')}], 'curve[0].bw_bytes: inf is not a number'),
    ([{'depth': 1, 'bw_bytes': 1, 'p99_ns': True}], 'curve[0].p99_ns: True is not a number'),
    ([{'depth': 8, 'bw_bytes': 1}, {'depth': 8, 'bw_bytes': 2}], 'curve[1].depth: depth 8 is measured twice'),
    ([{'depth': 1, 'bw_bytes': 0}, {'depth': 2, 'bw_bytes': 0}], 'no point has a bandwidth above 0'),
])
def test_knee_refuses_garbled_curves(curve, message):
    with pytest.raises(ValueError) as exc:
        alp.knee_depth(curve)
    assert message in str(exc.value)


@pytest.mark.parametrize('fraction', [0, -0.5, 1.5, True, 'high'])
def test_knee_refuses_bad_fractions(fraction):
    with pytest.raises(ValueError) as exc:
        alp.knee_depth(LAB_CURVE, fraction)
    assert 'fraction: %r is out of range' % (fraction,) in str(exc.value)


def test_knee_refuses_a_bad_block_size():
    with pytest.raises(ValueError) as exc:
        alp.knee_depth(LAB_CURVE, 0.95, '1X')
    assert "block_size: '1X' is not a size" in str(exc.value)


@pytest.mark.parametrize('args, message', [
    ((0, 4, 1023), 'knee: 0 is out of range: it must be >= 1'),
    ((32, 0, 1023), 'ranks_per_drive: 0 is out of range: it must be >= 1'),
    ((32, 4, 0), 'nr_requests: 0 is out of range: it must be >= 1'),
    ((32, 4, None), 'nr_requests: None is not an integer'),
    (({'best': 32}, 4, 1023), 'knee: a dict must be the knee_depth result'),
    ((True, 4, 1023), 'knee: True is not an integer'),
])
def test_per_rank_depth_refuses_bad_input(args, message):
    with pytest.raises(ValueError) as exc:
        alp.per_rank_depth(*args)
    assert message in str(exc.value)
