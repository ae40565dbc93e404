# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""render_aio and effective_aio against DeepSpeed's own aio parser (get_aio_config).

Skipped unless DeepSpeed is importable. Set up (CPU only, about 2 minutes):
    python3 -m venv /tmp/dsvenv
    /tmp/dsvenv/bin/pip install torch==2.13.0   # FIRST: a CPU build; else pip pulls a multi-GB CUDA torch
    /tmp/dsvenv/bin/pip install deepspeed pytest
    /tmp/dsvenv/bin/python -m pytest tests/unit/plugins/module_utils/test_deepspeed_parser.py
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import (
    aio_defaults,
    effective_aio,
    render_aio,
)

pytest.importorskip('deepspeed')

aio_config = pytest.importorskip('deepspeed.runtime.swap_tensor.aio_config')


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
