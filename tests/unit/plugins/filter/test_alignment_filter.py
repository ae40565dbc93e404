# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The queue_alignment, knee_depth and per_rank_depth filters and their documentation sidecars."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import os

import jinja2
import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.filter import alignment
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block.alignment import FINDING_IDS

HERE = os.path.dirname(os.path.abspath(alignment.__file__))
MS = 1000 * 1000


def _device(name, **overrides):
    entry = {'name': name, 'device': '/dev/' + name, 'scheduler': 'none', 'nr_requests': 1023, 'hw_tag_depth': 1023,
             'hw_contexts': 2, 'read_ahead_kb': 1024, 'max_sectors_kb': 512}
    entry.update(overrides)
    return entry


FACTS = {'block': {'devices': [_device('nvme0n1'), _device('nvme1n1'), _device('nvme2n1')], 'errors': []}}
PLAN = {'ranks': 8, 'drives': ['/dev/nvme1n1', '/dev/nvme2n1'], 'rank_drives': 'round_robin', 'queue_depth': 8,
        'block_size': '1M'}
CURVE = [
    {'depth': 1, 'bw_bytes': 309000000, 'p99_ns': 8 * MS},
    {'depth': 4, 'bw_bytes': 1500000000, 'p99_ns': 10 * MS},
    {'depth': 8, 'bw_bytes': 1820000000, 'p99_ns': 14 * MS},
    {'depth': 32, 'bw_bytes': 2497000000, 'p99_ns': 36 * MS},
    {'depth': 128, 'bw_bytes': 2550000000, 'p99_ns': 110 * MS},
]


def _env():
    env = jinja2.Environment()
    env.filters.update(alignment.FilterModule().filters())
    return env


def test_filters_are_registered_under_their_documented_names():
    filters = alignment.FilterModule().filters()
    assert sorted(filters) == ['finding_line', 'knee_depth', 'per_rank_depth', 'queue_alignment']
    assert filters['queue_alignment'] is alignment.queue_alignment
    assert filters['knee_depth'] is alignment.knee_depth
    assert filters['per_rank_depth'] is alignment.per_rank_depth


def test_queue_alignment_in_a_template():
    out = _env().from_string(
        "{% set r = facts | queue_alignment(plan) %}"
        "{{ r.errors }}|{{ r.warnings }}|{{ r.per_drive.nvme1n1.aggregate_depth }}|"
        "{{ r.per_drive.nvme2n1.requests_in_flight }}|{{ r.per_drive | list | join(',') }}").render(
            facts=FACTS, plan=PLAN)
    assert out == '0|0|32|64|nvme1n1,nvme2n1'


def test_queue_alignment_findings_in_a_template():
    facts = {'block': {'devices': [_device('nvme1n1', scheduler='mq-deadline', nr_requests=16)]}}
    out = _env().from_string(
        "{{ (facts | queue_alignment(plan)).findings | map(attribute='id') | join(',') }}").render(
            facts=facts, plan={'ranks': 1, 'drives': ['nvme1n1'], 'queue_depth': 32})
    assert out == 'depth_above_nr_requests,scheduler_not_none'


def test_knee_and_per_rank_depth_chain_in_a_template():
    out = _env().from_string(
        "{% set k = curve | knee_depth(0.95, '1M') %}{{ k.knee }}|{{ k.littles_law_depth }}|"
        "{{ k | per_rank_depth(4, 1023) }}|{{ 2048 | per_rank_depth(1, 1023) }}").render(curve=CURVE)
    assert out == '32|88|8|1023'


def test_knee_depth_defaults():
    assert alignment.knee_depth(CURVE)['knee'] == 32
    assert alignment.knee_depth(CURVE)['littles_law_depth'] is None


@pytest.mark.parametrize('call, prefix, fragment', [
    (lambda: alignment.queue_alignment(FACTS, dict(PLAN, ranks=0)), 'queue_alignment: ',
     'ranks: 0 is out of range 1..1024'),
    (lambda: alignment.queue_alignment(FACTS, dict(PLAN, ranks=3, rank_drives=['nvme1n1', 'nvme1n1', 'nvme0n1'])),
     'queue_alignment: ', 'rank 2 writes to nvme0n1, which is not among the selected drives (nvme1n1, nvme2n1)'),
    (lambda: alignment.queue_alignment(FACTS, dict(PLAN, block_size='1X')), 'queue_alignment: ',
     "block_size: '1X' is not a size"),
    (lambda: alignment.queue_alignment(FACTS, dict(PLAN, queue_depth=65536)), 'queue_alignment: ',
     'queue_depth: 65536 is out of range 1..65535'),
    (lambda: alignment.queue_alignment({}, PLAN), 'queue_alignment: ', 'gather_subset including block'),
    (lambda: alignment.queue_alignment(FACTS, 'ranks=8'), 'queue_alignment: ', 'plan: expected a dict, got str'),
    (lambda: alignment.knee_depth([]), 'knee_depth: ', 'curve: [] is not a non-empty list'),
    (lambda: alignment.knee_depth(CURVE, 2), 'knee_depth: ', 'fraction: 2 is out of range'),
    (lambda: alignment.per_rank_depth(32, 0, 1023), 'per_rank_depth: ', 'ranks_per_drive: 0 is out of range'),
])
def test_bad_input_is_an_ansible_filter_error(call, prefix, fragment):
    with pytest.raises(AnsibleFilterError) as exc:
        call()
    assert str(exc.value).startswith(prefix)
    assert fragment in str(exc.value)


def _sidecar(name):
    with open(os.path.join(HERE, name + '.yml')) as f:
        doc = yaml.safe_load(f)
    assert set(doc) == {'DOCUMENTATION', 'EXAMPLES', 'RETURN'}
    assert doc['DOCUMENTATION']['name'] == name
    assert 'ai_storage.checkpoint_io.%s' % name in doc['EXAMPLES']
    yaml.safe_load(doc['EXAMPLES'])
    return doc


@pytest.mark.parametrize('name, params', [
    ('queue_alignment', ['facts', 'plan']),
    ('knee_depth', ['curve', 'fraction', 'block_size']),
    ('per_rank_depth', ['knee', 'ranks_per_drive', 'nr_requests']),
])
def test_sidecars_document_the_filters(name, params):
    doc = _sidecar(name)
    function = alignment.FilterModule().filters()[name]
    assert list(inspect.signature(function).parameters) == params
    options = doc['DOCUMENTATION']['options']
    assert set(options) == set(['_input'] + params[1:])
    assert doc['DOCUMENTATION']['positional'] == ', '.join(['_input'] + params[1:])


def test_queue_alignment_sidecar_lists_plan_keys_finding_ids_and_return_keys():
    doc = _sidecar('queue_alignment')
    plan_keys = set(doc['DOCUMENTATION']['options']['plan']['suboptions'])
    result = alignment.queue_alignment(FACTS, PLAN)
    assert plan_keys == set(k for k in result['plan'] if k != 'rank_depth')
    assert set(doc['RETURN']['_value']['contains']) == set(result)
    description = ' '.join(doc['DOCUMENTATION']['description'])
    for fid in FINDING_IDS:
        assert 'C(%s)' % fid in description
    per_drive_doc = ' '.join(doc['RETURN']['_value']['contains']['per_drive']['description'])
    for key in result['per_drive']['nvme1n1']:
        assert 'C(%s)' % key in per_drive_doc


def test_knee_depth_sidecar_return_keys():
    doc = _sidecar('knee_depth')
    assert set(doc['RETURN']['_value']['contains']) == set(alignment.knee_depth(CURVE))


def test_finding_line_formats_severity_device_message_and_fix():
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.alignment import finding_line
    line = finding_line({'id': 'scheduler_not_none', 'severity': 'warning', 'device': 'nvme1n1',
                         'message': 'scheduler is mq-deadline', 'fix': 'set it to none'})
    assert line == 'warning nvme1n1: scheduler is mq-deadline (fix: set it to none)'
    assert finding_line({'severity': 'info', 'device': None, 'message': 'm', 'fix': None}) == 'info: m'


def test_finding_line_refuses_what_is_not_a_finding():
    import pytest
    from ansible.errors import AnsibleFilterError
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.alignment import finding_line
    with pytest.raises(AnsibleFilterError, match='is not a finding'):
        finding_line('scheduler')


def test_finding_line_does_not_repeat_the_device_the_message_names():
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.alignment import finding_line
    line = finding_line({'severity': 'info', 'device': 'nvme1n1', 'message': 'nvme1n1: read_ahead_kb 128', 'fix': 'x'})
    assert line == 'info: nvme1n1: read_ahead_kb 128 (fix: x)'
