# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/deepspeed/writer.py: the checkpoint.writer plan, merge and revert, and what DeepSpeed's own config
parser (get_checkpoint_config) reads from the merged file. The parser tests need DeepSpeed as
test_deepspeed_parser.py does (CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 in the test command: fail, never skip)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import writer as w

MIB = 1024 * 1024
AIO = {'block_size': MIB, 'queue_depth': 8, 'intra_op_parallelism': 1}
AUTO = {'manage': 'auto', 'io_buffer_size': 'auto', 'io_buffer_double': True, 'data_parallel': 'auto',
        'block_size': 'auto'}
REQUIRE_DEEPSPEED = os.environ.get('CHECKPOINT_IO_REQUIRE_DEEPSPEED') == '1'


def test_fastpersist_is_read_from_the_version():
    assert [w.has_fastpersist(v) for v in ('0.19.8', '0.17.1+cu121', '0.17.0', '0.16.9rc1', None, 'garbage')] == [
        True, True, False, False, None, None]


def test_an_old_or_unknown_deepspeed_leaves_the_section_alone_and_says_why():
    plan = w.writer_plan(AUTO, AIO, 2, [0, 0], '0.16.4')
    assert (plan['manage'], plan['section']) == (False, None)
    assert 'is 0.16.4' in plan['reason'] and 'needs 0.17.1 or later' in plan['reason']
    assert 'was not found' in w.writer_plan(AUTO, AIO, 2, [0], None)['reason']
    assert w.writer_plan(dict(AUTO, manage='leave'), AIO, 2, [0], '0.19.8')['manage'] is False
    plan = w.writer_plan(dict(AUTO, manage='manage'), AIO, 2, [0], None)
    assert plan['manage'] is True and plan['reason'].endswith("the training environment's DeepSpeed is not known")


# the lab's knee16 pair in RAID0 as its sweep recorded it: 165 ms a 1 MiB request at depth 1, 125 MiB/s at best
SWEEP = {'curve': [{'depth': 1, 'mean_ns': 165e6}, {'depth': 32, 'mean_ns': 260e6}],
         'knee': {'best_bw_bytes': 125 * MIB}}


def moved(block, latency, ceiling):
    """What one request at a time moves: B / (latency + B / ceiling)."""
    return block / (latency + block / ceiling)


def test_without_a_sweep_one_request_fills_a_half_of_deepspeeds_buffer():
    plan = w.writer_plan(AUTO, AIO, 2, [0, 0], '0.19.8')
    assert plan['section'] == {'type': 'FAST', 'io_buffer_size': 64 * MIB, 'io_buffer_double': True,
                               'data_parallel': 'REPLICA'}
    assert plan['block_size'] == 32 * MIB and 'no depth sweep measured' in plan['block_size_reason']
    plan = w.writer_plan(AUTO, dict(AIO, queue_depth=100), 2, [0, 0], '0.19.8')
    assert (plan['block_size'], plan['queue_depth']) == (32 * MIB, 4)  # 100 MiB in flight: four 32 MiB requests
    # two threads: each takes its part of a drain, one request each
    plan = w.writer_plan(AUTO, dict(AIO, intra_op_parallelism=2), 2, [0, 0], '0.19.8')
    assert (plan['block_size'], plan['section']['io_buffer_size']) == (16 * MIB, 64 * MIB)
    assert plan['reasons']['io_buffer_size'].startswith('64 MiB, the larger of')
    assert plan['pinned_bytes_per_writer'] == 64 * MIB and plan['errors'] == []


@pytest.mark.parametrize('ranks, numa, block', [
    (1, [0], 256 * MIB),     # one writer: 9 x 125 MiB/s x 165 ms = 186 MiB -> 256 MiB
    (8, [0, 0], 32 * MIB),   # eight writers share the ceiling: 23 MiB -> 32 MiB
    (8, [0, 1], 128 * MIB),  # two (SOCKET): 93 MiB -> 128 MiB
])
def test_the_request_reaches_nine_tenths_of_the_writers_share_of_the_ceiling(ranks, numa, block):
    plan = w.writer_plan(dict(AUTO, sweep=SWEEP), AIO, ranks, numa, '0.19.8')
    assert plan['block_size'] == block and plan['section']['io_buffer_size'] == 2 * block
    assert plan['queue_depth'] == 1  # depth 8 x 1 MiB in flight: one request of 32 MiB or more
    share = 125 * MIB / plan['writers_per_node']
    assert moved(block, 0.165, share) >= 0.9 * share > moved(block // 2, 0.165, share)
    assert '165.0 ms' in plan['block_size_reason'] and 'a save grows its file' in plan['block_size_reason']
    assert w.plan_lines(plan)[1].startswith('aio.block_size = %d: ' % block)


def test_by_default_the_aio_block_size_stays_and_the_request_size_is_said():
    plan = w.writer_plan(dict(AUTO, block_size='aio', sweep=SWEEP), AIO, 1, [0], '0.19.8')
    assert (plan['block_size'], plan['queue_depth'], plan['request_size']) == (MIB, 8, 256 * MIB)
    assert plan['section']['io_buffer_size'] == 64 * MIB
    assert plan['block_size_reason'].startswith("the aio section's (deepspeed_config_writer_block_size aio)")
    assert plan['notes'][0].startswith('a save goes one request at a time: with 256 MiB requests it would reach')


def test_the_sweep_without_a_latency_or_a_ceiling_is_no_sweep():
    assert w.sweep_physics(SWEEP) == (0.165, 125.0 * MIB)
    for sweep in (None, {}, {'curve': [{'depth': 2, 'mean_ns': 1e6}], 'knee': {'best_bw_bytes': 1}},
                  {'curve': [{'depth': 1, 'mean_ns': 1e6}], 'knee': {'best_bw_bytes': None}},
                  {'curve': [{'depth': 1, 'mean_ns': True}], 'knee': {'best_bw_bytes': 1}}):
        assert w.sweep_physics(sweep) is None


def test_the_locked_memory_limit_lowers_the_request_then_the_buffer_then_refuses():
    plan = w.writer_plan(dict(AUTO, sweep=SWEEP), AIO, 1, [0], '0.19.8', 300 * MIB)
    assert (plan['block_size'], plan['section']['io_buffer_size']) == (128 * MIB, 256 * MIB)
    assert plan['block_size_reason'].endswith('; lowered to 128 MiB, 2 drain(s) within 300 MiB')
    plan = w.writer_plan(AUTO, AIO, 2, [0], '0.19.8', 3 * MIB // 2)  # 1 MiB requests, one drain fits
    assert (plan['block_size'], plan['section']['io_buffer_size'], plan['section']['io_buffer_double']) == (
        MIB, MIB, False)
    assert plan['reasons']['io_buffer_double'].startswith('the locked-memory limit 1572864 B')
    plan = w.writer_plan(AUTO, AIO, 2, [0], '0.19.8', MIB // 2)
    assert plan['errors'] == [
        "the training user's locked-memory limit 524288 B is below one drain 1 MiB (1 thread(s) x block 1 MiB): "
        "FastPersist's buffer cannot be pinned. Raise the limit (io_uring_engine_memlock) or lower the block size"]
    assert 'not known here (unlimited)' in w.writer_plan(AUTO, AIO, 2, [0], '0.19.8', 'unlimited')['notes'][0]


def test_a_buffer_or_request_asked_for_is_checked_against_the_unit_and_the_limit():
    plan = w.writer_plan(dict(AUTO, io_buffer_size=8 * MIB), AIO, 1, [0], '0.19.8', 4 * MIB)
    assert plan['block_size'] == 4 * MIB  # the asked buffer bounds the request: two drains of 4 MiB
    assert plan['errors'] == ["deepspeed_config_writer_io_buffer_size: 8 MiB is above the training user's "
                              "locked-memory limit 4 MiB"]
    plan = w.writer_plan(dict(AUTO, io_buffer_size=8 * MIB, block_size='8M'), AIO, 1, [0], '0.19.8')
    assert plan['block_size_reason'] == 'asked (deepspeed_config_writer_block_size)'
    assert 'a drain cannot hold one request per thread' in plan['notes'][0]
    plan = w.writer_plan(dict(AUTO, io_buffer_size=3 * MIB), AIO, 1, [0], '0.19.8')
    assert 'is not a multiple of 2097152' in plan['errors'][0]
    plan = w.writer_plan(dict(AUTO, io_buffer_size='lots'), AIO, 1, [0], '0.19.8')
    assert plan['errors'] == ["deepspeed_config_writer_io_buffer_size: 'lots' is not a whole number"]
    with pytest.raises(ValueError, match='deepspeed_config_writer_block_size: 1000 is not a multiple of 4096'):
        w.writer_plan(dict(AUTO, block_size=1000), AIO, 1, [0], '0.19.8')


@pytest.mark.parametrize('ranks, numa, unit, writers, why', [
    (1, [0, 1], 'MACHINE', 1, 'one rank per node'),
    (8, [0, 0, 1, 1], 'SOCKET', 2, 'behind 2 NUMA nodes (0, 1)'),
    (8, [0, 0], 'REPLICA', 8, 'all sit behind NUMA node 0'),
    (8, [None, None], 'REPLICA', 8, 'NUMA nodes are not known'),
])
def test_data_parallel_follows_where_the_drives_sit(ranks, numa, unit, writers, why):
    plan = w.writer_plan(AUTO, AIO, ranks, numa, '0.19.8')
    assert (plan['section']['data_parallel'], plan['writers_per_node']) == (unit, writers)
    assert why in plan['reasons']['data_parallel']
    assert bool(plan['notes'] and 'writer(s) per node of' in plan['notes'][-1]) == (writers < ranks)


def test_the_node_plan_reads_the_version_the_numa_nodes_behind_the_array_and_the_engine_limit():
    facts = {
        'nvme': {'controllers': [{'name': 'nvme1', 'numa_node': 0}, {'name': 'nvme2', 'numa_node': 1}],
                 'namespaces': [{'name': 'nvme1n1', 'controllers': ['nvme1']},
                                {'name': 'nvme2n1', 'controllers': ['nvme2']}]},
        'xfs': {'filesystems': [{'kernel_name': 'md127', 'md': {'members': ['nvme1n1', 'nvme2n1']}}]},
        'deepspeed': {'installed': {'version': '0.19.8', 'error': None}},
    }
    plan = w.node_writer_plan(facts, dict(AUTO, memlock='auto'), dict(AIO, queue_depth=32), 8, ['md127'], '48M')
    # no sweep: a 32 MiB request (a half of 64 MiB), two drains of it do not fit in 48 MiB: 16 MiB requests
    assert plan['section'] == {'type': 'FAST', 'io_buffer_size': 32 * MIB, 'io_buffer_double': True,
                               'data_parallel': 'SOCKET'}
    assert plan['block_size'] == 16 * MIB
    assert plan['lines'][0] == 'managed: DeepSpeed 0.19.8 has FastPersist'
    assert plan['lines'][1].startswith('aio.block_size = 16777216: no depth sweep')
    assert plan['lines'][1].endswith("default 64 MiB buffer, 32 MiB; lowered to 16 MiB, 2 drain(s) within 48 MiB")
    assert plan['lines'][2] == ('aio.queue_depth = 2: the planned depth 32 x block 1 MiB in flight, in requests of '
                                '16 MiB (the restore read queues them; a save does not)')
    assert plan['lines'][3] == 'type = FAST: the aio handle drains pinned buffers (FastFileWriter)'
    assert any(line.startswith('data_parallel = SOCKET: the data drives sit behind 2 NUMA nodes (0, 1)')
               for line in plan['lines'])
    assert plan['lines'][-1] == '2 writer(s) per node of 8 ranks: 32 MiB in flight (one 16 MiB request per thread each)'
    assert w.node_writer_plan(facts, dict(AUTO, memlock='unlimited'), AIO, 8, ['md127'])['errors'] == []
    with pytest.raises(ValueError, match='deepspeed_config_writer_memlock'):
        w.node_writer_plan(facts, dict(AUTO, memlock='lots'), AIO, 8, ['md127'])


def test_merge_keeps_every_other_key_and_a_second_merge_changes_nothing():
    config = {'train_batch_size': 8, 'checkpoint': {'tag_validation': 'Warn', 'writer': {'show_statistics': True}}}
    new, changed, removed = w.merge_writer(config, {'type': 'fast', 'io_buffer_size': 64 * MIB,
                                                    'io_buffer_double': 'yes', 'data_parallel': 'replica'})
    assert new['checkpoint'] == {'tag_validation': 'Warn', 'writer': {
        'show_statistics': True, 'type': 'FAST', 'io_buffer_size': 64 * MIB, 'io_buffer_double': True,
        'data_parallel': 'REPLICA'}}
    assert config['checkpoint']['writer'] == {'show_statistics': True}  # not mutated
    assert changed == ['writer.type', 'writer.io_buffer_size', 'writer.io_buffer_double', 'writer.data_parallel']
    assert removed == [] and w.merge_writer(new, new['checkpoint']['writer'])[1] == []


def test_merge_refuses_values_deepspeed_would_not_take_naming_key_and_limit():
    for bad, message in [({'type': 'turbo'}, "writer.type: 'turbo' is not one of FAST, PYTHON, MOCK"),
                         ({'io_buffer_size': 1000}, 'writer.io_buffer_size: 1000 is out of range'),
                         ({'io_buffer_size': 1536}, 'is not a multiple of 1024'),
                         ({'io_multiplier': 0}, 'writer.io_multiplier: 0 is out of range [1..64]'),
                         ({'io_buffer_double': 'maybe'}, "writer.io_buffer_double: 'maybe' is not a boolean"),
                         ({'num_writers': 2}, 'writer.num_writers is not a DeepSpeed checkpoint.writer key')]:
        with pytest.raises(ValueError, match=message.replace('[', r'\[').replace(']', r'\]')):
            w.merge_writer({}, bad)
    with pytest.raises(ValueError, match='checkpoint must be a JSON object, got list'):
        w.merge_writer({'checkpoint': []}, {'type': 'FAST'})


@pytest.mark.parametrize('config', [
    {'train_batch_size': 8},
    {'checkpoint': {'tag_validation': 'Fail'}},
    {'checkpoint': {'writer': {'type': 'PYTHON', 'decoupled': True}}},
])
def test_restore_puts_back_what_the_record_holds(config):
    entry = w.writer_record_fields(config)
    new = w.merge_writer(config, {'type': 'FAST', 'io_buffer_size': 64 * MIB})[0]
    new['zero_optimization'] = {'stage': 2}  # a key the user added since is kept
    assert w.restore_writer(new, entry) == dict(config, zero_optimization={'stage': 2})
    # an entry recorded before the writer was managed leaves the writer alone
    assert w.restore_writer(new, {'aio_present': False}) == new


def test_effective_writer_names_string_booleans_and_unknown_keys():
    got = w.effective_writer({'type': 'fast', 'io_buffer_double': 'false', 'num_writers': 2})
    assert got['writer']['type'] == 'FAST' and got['writer']['io_buffer_size'] == 64 * MIB
    assert got['warnings'] == ["checkpoint.writer.io_buffer_double is the string 'false', which DeepSpeed takes as "
                               "True", 'checkpoint.writer.num_writers is not read by DeepSpeed 0.19.8']
    assert w.effective_writer(None) == {'writer': None, 'warnings': []}


# --- against DeepSpeed's own parser ------------------------------------------------------------------------------
try:
    from deepspeed.runtime.model_checkpointing import config as ds_checkpoint_config
    from deepspeed.runtime.model_checkpointing import constants as ds_constants
    DS_ERROR = None
except ImportError as exc:
    ds_checkpoint_config = ds_constants = None
    DS_ERROR = '%s: %s' % (type(exc).__name__, exc)


def _deepspeed():
    if ds_checkpoint_config is None:
        if REQUIRE_DEEPSPEED:
            pytest.fail('CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 but DeepSpeed cannot be imported (%s)' % DS_ERROR)
        pytest.skip('DeepSpeed is not importable (%s)' % DS_ERROR)


def test_the_defaults_and_keys_are_deepspeeds():
    _deepspeed()
    parsed = ds_checkpoint_config.get_checkpoint_config(json.loads('{"checkpoint": {"writer": {}}}'))
    assert parsed['writer'] == dict(w.WRITER_DEFAULTS)
    assert w.effective_writer({})['writer'] == parsed['writer']
    assert sorted(ds_constants.CHECKPOINT_WRITER_TYPES) == sorted(w.TYPES)
    assert sorted(ds_constants.CHECKPOINT_DATA_PARALLEL_UNITS) == sorted(w.UNITS)


@pytest.mark.parametrize('ranks, numa', [(1, [0]), (8, [0, 1]), (8, [0, 0])])
def test_deepspeed_reads_the_planned_section_as_planned(ranks, numa):
    _deepspeed()
    plan = w.writer_plan(AUTO, dict(AIO, queue_depth=32), ranks, numa, '0.19.8')
    new = w.merge_writer({'train_batch_size': 8, 'aio': {'queue_depth': 32}}, plan['section'])[0]
    parsed = ds_checkpoint_config.get_checkpoint_config(json.loads(json.dumps(new)))['writer']
    assert dict((key, parsed[key]) for key in plan['section']) == plan['section']
    assert parsed == w.effective_writer(new['checkpoint']['writer'])['writer']
