# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine_* filters of the io_uring_engine role and their documentation sidecars."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import json
import os

import jinja2
import pytest
import yaml

from ansible.errors import AnsibleFilterError

from helpers import fixture

from ansible_collections.ai_storage.checkpoint_io.plugins.filter import engine

FILTER_DIR = os.path.dirname(os.path.abspath(engine.__file__))
NAMES = ['engine_options_check', 'engine_memlock', 'engine_profile', 'engine_fio_argv', 'engine_fio_verify',
         'engine_profile_file']

FACTS = {
    'nvme': {'controllers': [{'name': 'nvme1', 'numa_node': None, 'local_cpus': [0, 1], 'local_cpulist': '0-1'}]},
    'io_uring': {'io_uring_disabled': 0, 'io_uring_group': -1, 'training_user': 'trainer', 'training_user_uid': 1000,
                 'training_user_groups': ['trainer'], 'allowed_for_user': True, 'memlock': {}},
}
SELECTION = {'selected': [{'name': 'nvme1n1', 'device': '/dev/nvme1n1', 'controller': 'nvme1', 'serial': 'DATA0001',
                           'logical_block_size': 512, 'size_bytes': 4 << 30}]}
OPTIONS = {'training_user': 'trainer', 'target_depth': 16, 'block_size': '1M', 'memlock': '1G',
           'verify_runtime': 5, 'verify_size': '256M'}


def env():
    environment = jinja2.Environment()
    environment.filters.update(engine.FilterModule().filters())
    return environment


def test_filters_are_registered_under_their_documented_names():
    filters = engine.FilterModule().filters()
    assert sorted(filters) == sorted(NAMES)
    for name in NAMES:
        assert filters[name] is getattr(engine, name)


@pytest.mark.parametrize('name', NAMES)
def test_each_filter_has_a_sidecar(name):
    with open(os.path.join(FILTER_DIR, name + '.yml')) as handle:
        doc = yaml.safe_load(handle)
    assert set(doc) == {'DOCUMENTATION', 'EXAMPLES', 'RETURN'}
    documentation = doc['DOCUMENTATION']
    assert documentation['name'] == name
    params = list(inspect.signature(getattr(engine, name)).parameters)
    assert set(documentation['options']) == set(['_input'] + params[1:])
    assert documentation['positional'].replace(' ', '').split(',') == ['_input'] + params[1:]
    assert 'ai_storage.checkpoint_io.%s' % name in doc['EXAMPLES']
    yaml.safe_load(doc['EXAMPLES'])
    assert '_value' in doc['RETURN']
    assert descriptions_are_text(doc), name


def descriptions_are_text(node):
    """Every description is a string or a list of strings (an unquoted ': ' makes YAML read a mapping)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == 'description':
                items = value if isinstance(value, list) else [value]
                if not all(isinstance(item, str) for item in items):
                    return False
            elif not descriptions_are_text(value):
                return False
    elif isinstance(node, list):
        return all(descriptions_are_text(item) for item in node)
    return True


def test_profile_argv_and_verification_in_templates():
    profile = env().from_string("{{ (facts | engine_profile(sel, opts)).drives[0].submit_cpulist }}").render(
        sel=SELECTION, facts=FACTS, opts=OPTIONS)
    assert profile == '0'
    built = engine.engine_profile(FACTS, SELECTION, OPTIONS)
    argv = engine.engine_fio_argv(built, OPTIONS, SELECTION['selected'], '/usr/bin/fio')
    assert argv[0] == '/usr/bin/fio' and '--readonly' in argv
    output = fixture('fio', 'fio-3.39_iouring_read_2drives_qd16_sqpoll_fixedbufs.json')
    document = engine.engine_fio_verify(built, output, OPTIONS, SELECTION['selected'])
    assert document['verify']['passed'] is True
    assert document['drives'][0]['verify']['achieved_depth'] == 16
    assert engine.engine_profile_file(document, json.dumps(document)) == document


@pytest.mark.parametrize('call, fragment', [
    (lambda: engine.engine_memlock('1X'), "engine_memlock: io_uring_engine_memlock: '1X' is not a size"),
    (lambda: engine.engine_profile(FACTS, SELECTION, dict(OPTIONS, target_depth=0)),
     'engine_profile: io_uring_engine_target_depth: 0 is outside 1..4096'),
    (lambda: engine.engine_profile(FACTS, SELECTION, 'nope'), 'expected a dict of options'),
    (lambda: engine.engine_options_check(None), 'expected a dict of options'),
    (lambda: engine.engine_fio_argv({'drives': []}, OPTIONS), 'engine_fio_argv: the profile has no drives'),
    (lambda: engine.engine_fio_verify(engine.engine_profile(FACTS, SELECTION, OPTIONS), '{}',
                                      dict(OPTIONS, verify_mode='x')), "engine_fio_verify: io_uring_engine_verify_mode"),
    (lambda: engine.engine_profile_file(None), 'expected the profile dict'),
])
def test_bad_input_is_an_ansible_filter_error(call, fragment):
    with pytest.raises(AnsibleFilterError) as exc:
        call()
    assert fragment in str(exc.value)


def test_options_check_returns_messages():
    problems = engine.engine_options_check({'state': 'present', 'training_user': 'trainer', 'user_found': True,
                                            'target_depth': 4097, 'block_size': '1M', 'memlock': 'unlimited',
                                            'verify': False})
    assert problems == ['io_uring_engine_target_depth: 4097 is outside 1..4096']
