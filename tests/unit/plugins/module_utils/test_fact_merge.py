# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""merge_facts: a subset gather refreshes its sections and keeps the others."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.fact_merge import merge_facts


def gather(*sections, **stamps):
    facts = {'schema_version': 1, 'gather_subset': list(sections), 'gathered_at': {}}
    for name in sections:
        facts[name] = {'from': stamps.get(name, 't0')}
        facts['gathered_at'][name] = stamps.get(name, 't0')
    return facts


def test_a_second_subset_keeps_the_first():
    merged = merge_facts(gather('nvme', 'block'), gather('xfs', xfs='t1'))
    assert merged['gather_subset'] == ['nvme', 'block', 'xfs']
    assert merged['last_gather_subset'] == ['xfs']
    assert merged['nvme'] == {'from': 't0'} and merged['xfs'] == {'from': 't1'}
    assert merged['gathered_at'] == {'nvme': 't0', 'block': 't0', 'xfs': 't1'}


def test_a_regathered_section_is_replaced_whole():
    merged = merge_facts(gather('nvme', 'xfs'), gather('xfs', xfs='t2'))
    assert merged['xfs'] == {'from': 't2'} and merged['gathered_at']['xfs'] == 't2'
    assert merged['gather_subset'] == ['nvme', 'xfs']


@pytest.mark.parametrize('current', [None, {}, 'junk', {'schema_version': 0, 'nvme': {'from': 'old'}}])
def test_nothing_or_another_schema_is_not_merged(current):
    merged = merge_facts(current, gather('block'))
    assert merged['gather_subset'] == ['block'] and 'nvme' not in merged


def test_the_inputs_are_not_changed():
    current, new = gather('nvme'), gather('xfs')
    merge_facts(current, new)
    assert 'xfs' not in current and 'nvme' not in new


def test_a_non_dict_gather_is_refused():
    with pytest.raises(ValueError) as exc:
        merge_facts(gather('nvme'), None)
    assert 'new: None is not a checkpoint_io fact dict' in str(exc.value)
