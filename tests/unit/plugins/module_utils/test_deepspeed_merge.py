# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""merge_aio, normalize_aio_values and restore_aio: the pure logic of the deepspeed_aio module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import (
    aio_record_entry,
    dump_config,
    effective_aio,
    merge_aio,
    normalize_aio_values,
    restore_aio,
    same_json,
    section_changes,
)

# What ds_nvme_tune writes: string booleans and num_threads, which DeepSpeed ignores.
NVME_TUNE = {
    'train_batch_size': 64,
    'zero_optimization': {
        'stage': 3,
        'offload_optimizer': {'device': 'nvme', 'nvme_path': '/local_nvme', 'buffer_count': 4},
        'offload_param': {'device': 'nvme', 'nvme_path': '/local_nvme', 'pin_memory': True},
    },
    'aio': {
        'block_size': 1048576,
        'queue_depth': 8,
        'thread_count': 1,
        'single_submit': 'false',
        'overlap_events': 'true',
        'num_threads': 8,
    },
    'fp16': {'enabled': True, 'loss_scale': 0},
}


# --- normalize_aio_values ------------------------------------------------------------------------
@pytest.mark.parametrize('given, expected', [
    ({'block_size': '1M'}, {'block_size': 1048576}),
    ({'block_size': '512K'}, {'block_size': 524288}),
    ({'block_size': 8388608}, {'block_size': 8388608}),
    ({'block_size': '4KiB'}, {'block_size': 4096}),
    ({'queue_depth': '32'}, {'queue_depth': 32}),
    ({'queue_depth': 65535}, {'queue_depth': 65535}),
    ({'intra_op_parallelism': 1024}, {'intra_op_parallelism': 1024}),
    ({'single_submit': 'false', 'overlap_events': 'yes', 'use_gds': 'no'},
     {'single_submit': False, 'overlap_events': True, 'use_gds': False}),
    ({'single_submit': 'True', 'overlap_events': 'off', 'use_gds': 0},
     {'single_submit': True, 'overlap_events': False, 'use_gds': False}),
    ({'single_submit': None, 'queue_depth': 8}, {'queue_depth': 8}),
    (None, {}),
])
def test_normalize_converts_to_real_json_types(given, expected):
    result = normalize_aio_values(given)
    assert same_json(result, expected)
    for key in ('single_submit', 'overlap_events', 'use_gds'):
        if key in result:
            assert result[key] is True or result[key] is False


def test_normalize_orders_keys_like_deepspeeds_defaults():
    result = normalize_aio_values({'use_gds': False, 'queue_depth': 4, 'block_size': 4096})
    assert list(result) == ['block_size', 'queue_depth', 'use_gds']


@pytest.mark.parametrize('given, fragments', [
    ({'block_size': 1000}, ['aio.block_size', '1000', 'multiple of 4096']),
    ({'block_size': '10K'}, ['aio.block_size', "'10K'", '10240 bytes', 'multiple of 4096', 'use e.g. 8192']),
    ({'block_size': '1MB'}, ['aio.block_size', 'ambiguous']),
    ({'block_size': 0}, ['aio.block_size', '0']),
    ({'block_size': True}, ['aio.block_size', 'True']),
    ({'queue_depth': 70000}, ['aio.queue_depth', '70000', 'above the limit 65535']),
    ({'queue_depth': 0}, ['aio.queue_depth', '0', 'below the minimum 1']),
    ({'queue_depth': -3}, ['aio.queue_depth', '-3', 'below the minimum 1']),
    ({'queue_depth': 'deep'}, ['aio.queue_depth', "'deep'", 'not an integer']),
    ({'queue_depth': 8.5}, ['aio.queue_depth', '8.5', 'not an integer']),
    ({'queue_depth': True}, ['aio.queue_depth', 'True', 'not an integer']),
    ({'intra_op_parallelism': 2048}, ['aio.intra_op_parallelism', '2048', 'above the limit 1024']),
    ({'single_submit': 'maybe'}, ['aio.single_submit', "'maybe'", 'not a boolean']),
    ({'use_gds': 2}, ['aio.use_gds', '2', 'not a boolean']),
    ({'num_threads': 8}, ['aio.num_threads', 'ignored by DeepSpeed']),
    ({'thread_count': 8}, ['aio.thread_count', 'thread_key']),
    ({'blocksize': 8}, ['aio.blocksize', 'not a DeepSpeed aio key', 'block_size']),
])
def test_normalize_rejects_bad_values_naming_value_and_limit(given, fragments):
    with pytest.raises(ValueError) as exc:
        normalize_aio_values(given)
    for fragment in fragments:
        assert fragment in str(exc.value)


def test_normalize_reports_every_bad_value_at_once():
    with pytest.raises(ValueError) as exc:
        normalize_aio_values({'queue_depth': 0, 'block_size': 100, 'use_gds': 'x'})
    message = str(exc.value)
    assert 'aio.queue_depth' in message and 'aio.block_size' in message and 'aio.use_gds' in message


def test_normalize_refuses_a_non_mapping():
    with pytest.raises(ValueError) as exc:
        normalize_aio_values(['queue_depth'])
    assert 'list' in str(exc.value)


# --- merge_aio -----------------------------------------------------------------------------------
def test_merge_keeps_foreign_keys_nested_and_order_and_does_not_mutate():
    config = copy.deepcopy(NVME_TUNE)
    new, changed, removed = merge_aio(config, {'queue_depth': 32, 'intra_op_parallelism': 4})
    assert config == NVME_TUNE  # input untouched
    assert list(new) == list(NVME_TUNE)
    for key in ('train_batch_size', 'zero_optimization', 'fp16'):
        assert same_json(new[key], NVME_TUNE[key])
    assert list(new['zero_optimization']) == list(NVME_TUNE['zero_optimization'])
    assert list(new['zero_optimization']['offload_param']) == ['device', 'nvme_path', 'pin_memory']
    assert new['zero_optimization'] is not config['zero_optimization']  # a copy, not shared
    assert new['aio'] == {'block_size': 1048576, 'queue_depth': 32, 'single_submit': False, 'overlap_events': True,
                          'intra_op_parallelism': 4}
    # existing keys keep their place, new ones come last
    assert list(new['aio']) == ['block_size', 'queue_depth', 'single_submit', 'overlap_events', 'intra_op_parallelism']
    assert changed == ['queue_depth', 'single_submit', 'overlap_events', 'intra_op_parallelism']
    assert removed == ['thread_count', 'num_threads']


def test_merge_fixes_string_booleans_of_managed_and_unmanaged_keys():
    config = {'aio': {'single_submit': 'false', 'overlap_events': 'true', 'use_gds': 'False'}}
    new, changed, removed = merge_aio(config, {'single_submit': 'no'})
    assert new['aio']['single_submit'] is False
    assert new['aio']['overlap_events'] is True
    assert new['aio']['use_gds'] is False
    assert changed == ['single_submit', 'overlap_events', 'use_gds']
    assert removed == []
    eff = effective_aio(new['aio'])
    assert eff['string_booleans'] == [] and eff['warnings'] == [
        w for w in eff['warnings'] if 'intra_op_parallelism' in w]


def test_merge_refuses_an_unmanaged_string_that_is_no_boolean():
    with pytest.raises(ValueError) as exc:
        merge_aio({'aio': {'overlap_events': 'sometimes'}}, {'queue_depth': 8})
    message = str(exc.value)
    assert 'aio.overlap_events' in message and "'sometimes'" in message and 'truthy' in message
    # managing the key replaces it, no complaint
    new, _changed, _removed = merge_aio({'aio': {'overlap_events': 'sometimes'}}, {'overlap_events': False})
    assert new['aio']['overlap_events'] is False


def test_merge_removes_only_the_keys_deepspeed_is_known_to_ignore():
    # mystery could be a key a later DeepSpeed reads (use_io_uring, say): kept, and reported by effective_aio
    config = {'aio': {'num_threads': 8, 'queue_depth': 8, 'mystery': 1, 'thread_count': 2}}
    new, changed, removed = merge_aio(config, {})
    assert new['aio'] == {'queue_depth': 8, 'mystery': 1, 'thread_count': 2}
    assert removed == ['num_threads'] and changed == []
    assert any('aio.mystery is not a DeepSpeed aio key (DeepSpeed 0.19.8 does not read it' in w and 'kept' in w
               for w in effective_aio(new['aio'])['warnings'])
    new, changed, removed = merge_aio(config, {}, remove_ignored=False)
    assert same_json(new, config) and changed == [] and removed == []


@pytest.mark.parametrize('thread_key, expected, removed', [
    ('intra_op_parallelism', {'intra_op_parallelism': 4}, ['thread_count']),
    ('thread_count', {'thread_count': 4}, []),
    ('both', {'thread_count': 4, 'intra_op_parallelism': 4}, []),
])
def test_merge_thread_key_variants(thread_key, expected, removed):
    config = {'aio': {'thread_count': 2, 'queue_depth': 8}}
    new, _changed, got_removed = merge_aio(config, {'intra_op_parallelism': 4}, thread_key=thread_key)
    expected = dict(expected, queue_depth=8)
    assert new['aio'] == expected
    assert got_removed == removed


def test_merge_thread_count_removes_the_new_name():
    config = {'aio': {'intra_op_parallelism': 2}}
    new, changed, removed = merge_aio(config, {'intra_op_parallelism': 4}, thread_key='thread_count')
    assert new['aio'] == {'thread_count': 4}
    assert changed == ['thread_count'] and removed == ['intra_op_parallelism']


def test_merge_thread_key_has_no_effect_without_the_value():
    config = {'aio': {'thread_count': 2}}
    new, changed, removed = merge_aio(config, {'queue_depth': 8}, thread_key='intra_op_parallelism')
    assert new['aio'] == {'thread_count': 2, 'queue_depth': 8}
    assert removed == []


def test_merge_is_idempotent_and_strict_about_types():
    first, changed, _removed = merge_aio(NVME_TUNE, {'queue_depth': 32, 'single_submit': False})
    assert changed
    second, changed, removed = merge_aio(first, {'queue_depth': 32, 'single_submit': False})
    assert changed == [] and removed == []
    assert same_json(first, second)
    # 1 is not true, "32" is not 32 as far as the file is concerned
    _new, changed, _removed = merge_aio({'aio': {'overlap_events': 1, 'queue_depth': '32'}},
                                        {'overlap_events': True, 'queue_depth': 32})
    assert changed == ['overlap_events', 'queue_depth']


def test_merge_adds_a_missing_or_null_section_at_the_end():
    new, changed, removed = merge_aio({'train_batch_size': 8}, {'queue_depth': '16', 'use_gds': 'false'})
    assert list(new) == ['train_batch_size', 'aio']
    assert new['aio'] == {'queue_depth': 16, 'use_gds': False}
    assert changed == ['queue_depth', 'use_gds'] and removed == []
    new, changed, _removed = merge_aio({'aio': None, 'x': 1}, {'queue_depth': 16})
    assert list(new) == ['aio', 'x'] and new['aio'] == {'queue_depth': 16}
    # nothing to write: no section appears
    new, changed, removed = merge_aio({'train_batch_size': 8}, {})
    assert new == {'train_batch_size': 8} and changed == [] and removed == []


@pytest.mark.parametrize('config, fragment', [
    ([1, 2], 'top level must be a JSON object, got list'),
    ('text', 'top level must be a JSON object, got str'),
    ({'aio': [1]}, 'aio must be a JSON object, got list'),
    ({'aio': 'fast'}, 'aio must be a JSON object, got str'),
])
def test_merge_refuses_malformed_configs(config, fragment):
    with pytest.raises(ValueError) as exc:
        merge_aio(config, {'queue_depth': 8})
    assert fragment in str(exc.value)


def test_merge_refuses_bad_thread_key_and_bad_values():
    with pytest.raises(ValueError) as exc:
        merge_aio({}, {'queue_depth': 8}, thread_key='threads')
    assert 'threads' in str(exc.value)
    with pytest.raises(ValueError) as exc:
        merge_aio({}, {'queue_depth': 99999})
    assert '99999' in str(exc.value) and '65535' in str(exc.value)


def test_section_changes():
    assert section_changes(None, {'a': 1}) == (['a'], [])
    assert section_changes({'a': 1, 'b': True}, {'a': 1, 'b': 1}) == (['b'], [])
    assert section_changes({'a': 1, 'b': 2}, None) == ([], ['a', 'b'])


def test_dump_config_is_indented_json_with_a_trailing_newline():
    text = dump_config({'aio': {'single_submit': False}, 'name': u'caf\u00e9'})
    assert text.endswith('}\n')
    assert '\n  "aio": {\n    "single_submit": false\n  },' in text
    assert json.loads(text)['name'] == u'caf\u00e9'


# --- the record and restore_aio ------------------------------------------------------------------
def test_restore_puts_the_recorded_section_back_and_keeps_other_keys():
    entry = aio_record_entry(NVME_TUNE, True, '/etc/ds.json', 'now')
    assert entry['aio'] == NVME_TUNE['aio'] and entry['aio'] is not NVME_TUNE['aio']
    merged, _c, _r = merge_aio(NVME_TUNE, {'queue_depth': 64})
    merged['train_batch_size'] = 128  # changed by someone else since: kept
    restored, remove_file = restore_aio(merged, entry)
    assert remove_file is False
    assert restored['aio'] == NVME_TUNE['aio']
    assert restored['train_batch_size'] == 128
    assert list(restored) == list(NVME_TUNE)


def test_restore_removes_a_section_that_was_not_there():
    config = {'train_batch_size': 8}
    entry = aio_record_entry(config, True, '/etc/ds.json', 'now')
    assert entry['aio_present'] is False and entry['aio'] is None
    merged, _c, _r = merge_aio(config, {'queue_depth': 64})
    restored, remove_file = restore_aio(merged, entry)
    assert restored == config and remove_file is False


def test_restore_of_a_created_file():
    entry = aio_record_entry(None, False, '/etc/ds.json', 'now')
    assert entry == {'path': '/etc/ds.json', 'existed': False, 'aio_present': False, 'aio': None,
                     'recorded_at': 'now'}
    assert restore_aio({'aio': {'queue_depth': 8}}, entry) == ({}, True)
    # someone added keys since: only the section goes
    assert restore_aio({'aio': {'queue_depth': 8}, 'fp16': {}}, entry) == ({'fp16': {}}, False)


def test_restore_keeps_a_recorded_null_section():
    entry = aio_record_entry({'aio': None}, True, '/etc/ds.json', 'now')
    restored, _remove = restore_aio({'aio': {'queue_depth': 8}}, entry)
    assert restored == {'aio': None}
