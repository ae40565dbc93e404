# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""render_aio, effective_aio and merge_aio against DeepSpeed's own aio parser (get_aio_config).

Skipped unless DeepSpeed is importable; with CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 in the environment (CI sets it)
a missing DeepSpeed FAILS every test here instead. Set up (CPU only, about 2 minutes):
    python3 -m venv /tmp/dsvenv
    /tmp/dsvenv/bin/pip install torch==2.13.0   # FIRST: a CPU build; else pip pulls a multi-GB CUDA torch
    /tmp/dsvenv/bin/pip install deepspeed pytest
    /tmp/dsvenv/bin/python -m pytest tests/unit/plugins/module_utils/test_deepspeed_parser.py
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import (
    AIO_DEFAULTS_DICT,
    IGNORED_KEYS,
    IGNORED_KEYS_READ_FROM,
    LEGACY_KEYS,
    aio_defaults,
    dump_config,
    effective_aio,
    merge_aio,
    render_aio,
)

REQUIRE_DEEPSPEED = os.environ.get('CHECKPOINT_IO_REQUIRE_DEEPSPEED') == '1'

try:
    from deepspeed.runtime.swap_tensor import aio_config
    IMPORT_ERROR = None
except ImportError as exc:
    aio_config = None
    IMPORT_ERROR = '%s: %s' % (type(exc).__name__, exc)
    if not REQUIRE_DEEPSPEED:
        pytest.skip('DeepSpeed is not importable (%s); set CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 to fail instead'
                    % IMPORT_ERROR, allow_module_level=True)


@pytest.fixture(autouse=True)
def _deepspeed_required():
    if aio_config is None:
        pytest.fail('CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 but DeepSpeed cannot be imported (%s)' % IMPORT_ERROR)


def _cuda():
    from deepspeed.accelerator import get_accelerator
    return get_accelerator().device_name() == 'cuda'


def _parse(section):
    """What DeepSpeed reads from a ds_config holding ``section`` (through a JSON round trip, as from a file)."""
    config = json.loads(json.dumps({'aio': section}))
    return aio_config.get_aio_config(config)


@pytest.mark.parametrize('kwargs', [
    {},
    {'queue_depth': 8, 'block_size': 1048576},
    {'queue_depth': 32, 'block_size': 8 * 1048576, 'intra_op_parallelism': 4, 'single_submit': True,
     'overlap_events': False},
    {'queue_depth': 128, 'block_size': 1048576, 'intra_op_parallelism': 8, 'use_gds': False},
])
def test_rendered_section_is_read_back_by_deepspeed_as_rendered(kwargs):
    section = render_aio(**kwargs)
    parsed = _parse(section)
    assert parsed == section
    # same JSON types too (true is not 1, 8 is not "8")
    assert json.dumps(parsed, sort_keys=True) == json.dumps(section, sort_keys=True)
    assert parsed == effective_aio(section)['aio']


def test_legacy_thread_count_is_not_read_by_this_deepspeed():
    section = render_aio(intra_op_parallelism=4, legacy_thread_count=True)
    parsed = _parse(section)
    assert 'thread_count' not in parsed
    assert parsed['intra_op_parallelism'] == 4


def test_effective_aio_models_deepspeeds_parser_on_a_ds_nvme_tune_section():
    # ds_nvme_tune writes booleans as strings and a num_threads key DeepSpeed ignores.
    section = {'single_submit': 'false', 'overlap_events': 'true', 'num_threads': 4, 'queue_depth': 32,
               'block_size': 1048576}
    parsed = _parse(section)
    ours = effective_aio(section)
    assert parsed == ours['aio']
    assert parsed['single_submit'] == 'false'  # kept as a string, and truthy
    assert bool(parsed['single_submit']) is ours['truthiness']['single_submit'] is True
    assert 'num_threads' not in parsed
    assert 'num_threads' in ours['unknown_keys']


def test_defaults_match_deepspeeds():
    assert aio_config.get_aio_config({}) == aio_defaults()
    assert _parse({}) == aio_defaults()


def test_use_gds_needs_a_cuda_accelerator():
    section = render_aio(use_gds=True)
    if _cuda():
        assert _parse(section)['use_gds'] is True
        return
    with pytest.raises(AssertionError) as exc:
        _parse(section)
    assert 'CUDA' in str(exc.value)


# --- merge_aio (the deepspeed_aio module) against DeepSpeed's parser --------------------------------
NVME_TUNE = {
    'train_batch_size': 64,
    'zero_optimization': {'stage': 3, 'offload_optimizer': {'device': 'nvme', 'nvme_path': '/local_nvme'}},
    'aio': {'block_size': 1048576, 'queue_depth': 8, 'thread_count': 1, 'single_submit': 'false',
            'overlap_events': 'true', 'num_threads': 8},
}


def _read_merged(tmp_path, config, desired, **kwargs):
    """Merge, write the file as the module does, read it back as DeepSpeed does (json.load, get_aio_config)."""
    new, _changed, _removed = merge_aio(config, desired, **kwargs)
    path = tmp_path / 'ds_config.json'
    path.write_text(dump_config(new))
    with open(str(path)) as f:
        loaded = json.load(f)
    return loaded, aio_config.get_aio_config(loaded)


@pytest.mark.parametrize('desired, expected', [
    ({'block_size': '1M', 'queue_depth': 32, 'intra_op_parallelism': 4, 'single_submit': 'no',
      'overlap_events': 'yes'},
     {'block_size': 1048576, 'queue_depth': 32, 'intra_op_parallelism': 4, 'single_submit': False,
      'overlap_events': True, 'use_gds': False}),
    ({'block_size': '8M', 'queue_depth': '128', 'intra_op_parallelism': '8', 'single_submit': 'true',
      'overlap_events': 'false', 'use_gds': 'false'},
     {'block_size': 8388608, 'queue_depth': 128, 'intra_op_parallelism': 8, 'single_submit': True,
      'overlap_events': False, 'use_gds': False}),
    # only queue_depth given: the string booleans of the file are fixed all the same
    ({'queue_depth': 16},
     {'block_size': 1048576, 'queue_depth': 16, 'intra_op_parallelism': 1, 'single_submit': False,
      'overlap_events': True, 'use_gds': False}),
])
def test_merged_file_is_read_by_deepspeed_with_the_intended_values(tmp_path, desired, expected):
    loaded, parsed = _read_merged(tmp_path, NVME_TUNE, desired)
    assert parsed == expected
    # real booleans and ints, not "false" or "8"
    assert json.dumps(parsed, sort_keys=True) == json.dumps(expected, sort_keys=True)
    for key in ('single_submit', 'overlap_events', 'use_gds'):
        assert parsed[key] is expected[key]
    assert parsed == effective_aio(loaded['aio'])['aio']
    assert loaded['zero_optimization'] == NVME_TUNE['zero_optimization']
    assert 'num_threads' not in loaded['aio']


def test_unmerged_ds_nvme_tune_file_turns_single_submit_on():
    # the defect merge_aio fixes: DeepSpeed reads "false" as a truthy string
    parsed = aio_config.get_aio_config(json.loads(json.dumps(NVME_TUNE)))
    assert parsed['single_submit'] == 'false' and bool(parsed['single_submit']) is True


def test_thread_key_variants_as_this_deepspeed_reads_them(tmp_path):
    # DeepSpeed after PR #7056 (the version installed here) reads intra_op_parallelism only.
    _loaded, parsed = _read_merged(tmp_path, NVME_TUNE, {'intra_op_parallelism': 4})
    assert parsed['intra_op_parallelism'] == 4
    _loaded, parsed = _read_merged(tmp_path, NVME_TUNE, {'intra_op_parallelism': 4}, thread_key='both')
    assert parsed['intra_op_parallelism'] == 4
    # thread_key=thread_count is for DeepSpeed before PR #7056: this one ignores it and uses its default 1.
    loaded, parsed = _read_merged(tmp_path, NVME_TUNE, {'intra_op_parallelism': 4}, thread_key='thread_count')
    assert loaded['aio']['thread_count'] == 4
    assert parsed['intra_op_parallelism'] == 1


def _deepspeed_reads(key):
    """Whether DeepSpeed's own parser (deepspeed.runtime.swap_tensor.aio_config.get_aio_config) uses aio.<key>: a
    value no default can equal shows up in what it returns."""
    probe = 0 if key == 'use_gds' else object()  # a truthy use_gds asserts a CUDA accelerator
    parsed = aio_config.get_aio_config({'aio': {key: probe}})
    return any(value is probe for value in parsed.values())


def test_the_ignored_keys_are_the_ones_the_installed_deepspeed_ignores():
    import deepspeed
    from deepspeed.nvme import perf_generate_param as generate
    # What get_aio_config reads is what this collection models (AIO_DEFAULTS), names and defaults alike ...
    assert aio_config.get_aio_config({'aio': {}}) == AIO_DEFAULTS_DICT
    assert sorted(aio_config.AIO_DEFAULT_DICT) == sorted(AIO_DEFAULTS_DICT)
    for key in AIO_DEFAULTS_DICT:
        assert _deepspeed_reads(key), key
    # ... every key removed as ignored is one it does not read, in the installed version and in the one the list
    # was read from (a DeepSpeed that starts reading num_threads fails this test: take it off the list) ...
    for key in IGNORED_KEYS:
        assert not _deepspeed_reads(key), ('DeepSpeed %s reads aio.%s: the list was read from %s'
                                           % (deepspeed.__version__, key, IGNORED_KEYS_READ_FROM))
    assert not set(IGNORED_KEYS) & set(AIO_DEFAULTS_DICT)
    # ... and thread_count, which this version ignores, stays off the list: versions before PR #7056 read it.
    assert 'thread_count' not in IGNORED_KEYS and 'thread_count' in LEGACY_KEYS
    # ds_nvme_tune (deepspeed/nvme/perf_generate_param.py) writes num_threads: the key the list exists for.
    emitted = generate.convert_to_param(('single', 'overlap', 'x', 32, 1048576, 8))
    assert set(emitted) - set(AIO_DEFAULTS_DICT) == set(IGNORED_KEYS)
