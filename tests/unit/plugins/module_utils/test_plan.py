# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/plan: a node's plan from facts, inputs and role settings; the queue depth's one default."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.action import checkpoint_io_plan as plan_action
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring import engine_access
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import inputs
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan import depth as depth_mod
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan.node import node_plan, plan_lines
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.records import sweep_key

GIB = 1024 ** 3


def _ns(name, ctrl, **kwargs):
    entry = {'name': name, 'device': '/dev/' + name, 'controllers': [ctrl], 'paths': [], 'wwid': 'wwid-' + name,
             'partitions': [], 'holders': [], 'mounted': False, 'mount_points': [], 'swap': False, 'nsid': 1,
             'is_os_drive': False, 'os_roles': [], 'in_use_reason': None, 'size_bytes': 64 * GIB}
    entry.update(kwargs)
    return entry


def _queue(name, scheduler='mq-deadline', read_ahead_kb=128):
    return {'name': name, 'device': '/dev/' + name, 'scheduler': scheduler, 'nr_requests': 64,
            'schedulers_available': ['none', 'mq-deadline'], 'read_ahead_kb': read_ahead_kb, 'max_sectors_kb': 512,
            'max_hw_sectors_kb': 2048, 'nomerges': 0, 'rq_affinity': 1, 'hw_contexts': 2, 'hw_tag_depth': 1023}


FACTS = {
    'nvme': {'controllers': [{'name': 'nvme0', 'serial': 'OS0001', 'model': 'QEMU NVMe Ctrl', 'io_queues': 2},
                             {'name': 'nvme1', 'serial': 'DATA0001', 'model': 'QEMU NVMe Ctrl', 'io_queues': 2},
                             {'name': 'nvme2', 'serial': 'DATA0002', 'model': 'QEMU NVMe Ctrl', 'io_queues': 2}],
             'namespaces': [_ns('nvme0n1', 'nvme0', is_os_drive=True, os_roles=['/'], in_use_reason='holds /'),
                            _ns('nvme1n1', 'nvme1'), _ns('nvme2n1', 'nvme2')],
             'errors': []},
    'block': {'devices': [_queue('nvme0n1'), _queue('nvme1n1'), _queue('nvme2n1', scheduler='none')], 'errors': []},
    'gds': {'gpus': [], 'path': 'unavailable'},
    'io_uring': {'disabled': 0},
    'state': {'records': {}},
}
INPUTS = dict(inputs.check_inputs({'checkpoint_io_data_drives': {'serials': ['DATA0001', 'DATA0002']},
                                   'checkpoint_io_ranks': 4})['values'])


def _plan(facts=None, given=None, settings=None):
    values = dict(INPUTS, **(given or {}))
    merged = plan_action.role_defaults()
    merged.update(settings or {})
    return node_plan(facts or FACTS, values, merged, host='node1', made_at='2026-12-04T00:00:00Z')


def test_the_queue_depth_default_lives_in_one_place():
    assert inputs.SPEC['checkpoint_io_queue_depth'][1] == depth_mod.DEFAULT_QUEUE_DEPTH
    assert engine_access.AUTO_RANK_DEPTH == depth_mod.sizing_depth('auto')
    defaults = plan_action.role_defaults()
    for name in ('gds_queue_depth', 'deepspeed_config_queue_depth', 'io_uring_engine_rank_queue_depth',
                 'thermal_validate_queue_depth'):
        assert defaults.get(name) is None, name
    roots = [os.path.join(plan_action.ROLES_DIR, '..', 'playbooks'), plan_action.ROLES_DIR]
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            for name in files:
                if name.endswith('.yml'):
                    with open(os.path.join(folder, name)) as handle:
                        text = handle.read()
                    assert 'queue_depth | default(8)' not in text and ' else 256' not in text, os.path.join(folder, name)
                    assert 'next run' not in text, os.path.join(folder, name)  # one run converges


def test_fixed_depth_plan_selects_once_and_plans_each_layer():
    plan = _plan()
    assert plan['problems'] == []
    assert [d['name'] for d in plan['drives']['selected']] == ['nvme1n1', 'nvme2n1']
    assert plan['queue_depth']['policy'] == 'fixed' and plan['queue_depth']['per_rank'] == 8
    assert plan['order'][0] == 'nvmeof_rdma'
    # block layer: none + 1M read-ahead on both data drives; the OS drive is never in the plan
    drives = plan['block_layer']['drives']
    assert sorted(drives) == ['nvme1n1', 'nvme2n1']
    assert drives['nvme1n1']['after'] == {'scheduler': 'none', 'read_ahead_kb': 1024}
    assert [w['attribute'] for w in drives['nvme2n1']['writes']] == ['read_ahead_kb']
    assert plan['gds']['mode'] == 'unavailable'
    # NVIDIA's default max_io_queue_depth (128) already covers depth 8: kept, and said
    assert 'execution.max_io_queue_depth' not in plan['gds']['cufile_set']
    assert any(note.startswith('execution.max_io_queue_depth: 128 kept') for note in plan['gds']['cufile_notes'])
    assert plan['xfs'] == {'skip': 'checkpoint_io_xfs is false'}
    assert plan['io_uring_engine']['rank_queue_depth'] == 8
    assert plan['io_uring_engine']['memlock_bound_bytes'] > 4 * 8 * 1024 * 1024
    lines = plan_lines(plan)
    assert lines[0] == 'drives: /dev/nvme1n1 (DATA0001), /dev/nvme2n1 (DATA0002)'
    assert any(line.startswith('block_layer: nvme1n1 read_ahead_kb=1024, scheduler=none') for line in lines)


def test_auto_depth_sizes_for_the_deepest_sweep_point_and_takes_the_recorded_knee():
    given = {'checkpoint_io_queue_depth': 'auto', 'checkpoint_io_xfs': True}
    settings = {'deepspeed_config_sweep_depths': [1, 4, 16], 'xfs_force': ['DATA0001', 'DATA0002']}
    first = _plan(given=given, settings=settings)
    assert first['queue_depth']['per_rank'] is None and first['queue_depth']['sizing'] == 16
    assert 'in this run' in first['queue_depth']['reason']
    assert first['checkpoint_dir'] == '/mnt/checkpoints'
    assert first['xfs']['md']['members'] == ['/dev/nvme1n1', '/dev/nvme2n1']
    facts = copy.deepcopy(FACTS)
    key = sweep_key('/mnt/checkpoints', 1024 * 1024, 4)
    facts['state']['records'] = {'depth_sweep': {key: {'per_rank_depth': 4}},
                                 'thermal': {'backoff': {'apply': True, 'per_rank_depth': 2, 'reason': 'hot'}}}
    second = _plan(facts, given=given, settings=settings)
    depth = second['queue_depth']
    # the sizing does not move between runs (memlock and cufile.json stay put); the writers get the back-off
    assert (depth['measured'], depth['per_rank'], depth['sizing']) == (4, 2, 16)
    assert second['deepspeed_config']['skip'] and second['thermal_validate']['queue_depth'] == 2


def test_the_plan_names_the_checkpoint_writer_it_will_write_or_why_not():
    given = {'checkpoint_io_deepspeed_configs': ['/etc/deepspeed/ds_config.json']}
    plan = _plan(given=given)
    writer = plan['deepspeed_config']['writer']
    assert writer['manage'] is False and 'was not found' in writer['reason']
    assert any('checkpoint.writer not managed' in line for line in plan_lines(plan))
    facts = copy.deepcopy(FACTS)
    facts['deepspeed'] = {'installed': {'version': '0.19.8', 'error': None}}
    plan = _plan(facts, given=given)
    writer = plan['deepspeed_config']['writer']
    assert writer['section']['type'] == 'FAST' and writer['section']['io_buffer_size'] >= 64 * 1024 * 1024
    assert any('checkpoint.writer type=FAST' in line for line in plan_lines(plan))
    bad = _plan(facts, given=given, settings={'deepspeed_config_writer_memlock': 'lots'})
    assert 'deepspeed_config_writer_memlock' in bad['deepspeed_config']['errors'][0]


def test_problems_stop_the_node_and_a_bad_setting_is_an_error_not_a_traceback():
    plan = _plan(given={'checkpoint_io_data_drives': {'serials': ['DATA0009']}})
    assert plan['problems'] and 'DATA0009' in plan['problems'][0]
    plan = _plan(settings={'block_layer_read_ahead': 'lots'})
    assert plan['block_layer']['errors'] and 'block_layer_read_ahead' in plan['block_layer']['errors'][0]
    assert plan_lines(plan)  # still printable


@pytest.mark.parametrize('host', ['../x', 'a/b', '', '..'])
def test_a_host_name_that_is_not_a_file_name_is_refused(host):
    with pytest.raises(ValueError, match='inventory_hostname'):
        plan_action.plan_file('reports', host)


def test_the_plan_file_is_below_the_report_dir():
    assert plan_action.plan_file('reports', 'node1', cwd='/srv') == '/srv/reports/plan/node1.json'
    assert plan_action.plan_file('/r', 'node1') == '/r/plan/node1.json'
