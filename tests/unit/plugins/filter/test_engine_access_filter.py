# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine_access filters (memlock plan, shared io_uring group, the role's record) and their sidecars."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import os

import jinja2
import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.filter import engine_access

FILTER_DIR = os.path.dirname(os.path.abspath(engine_access.__file__))
NAMES = ['engine_memlock_plan', 'engine_shared_group', 'engine_access_record']


def test_filters_are_registered_under_their_documented_names():
    filters = engine_access.FilterModule().filters()
    assert sorted(filters) == sorted(NAMES)
    for name in NAMES:
        assert filters[name] is getattr(engine_access, name)


def test_each_filter_has_a_sidecar_naming_its_arguments():
    from test_engine import descriptions_are_text  # the same rules as the engine_* sidecars
    for name in NAMES:
        with open(os.path.join(FILTER_DIR, name + '.yml')) as handle:
            doc = yaml.safe_load(handle)
        arguments = ['_input'] + list(inspect.signature(getattr(engine_access, name)).parameters)[1:]
        assert sorted(doc) == ['DOCUMENTATION', 'EXAMPLES', 'RETURN'] and doc['DOCUMENTATION']['name'] == name
        assert sorted(doc['DOCUMENTATION']['options']) == sorted(arguments)
        assert doc['DOCUMENTATION']['positional'] == ', '.join(arguments)
        assert 'ai_storage.checkpoint_io.%s' % name in doc['EXAMPLES'] and yaml.safe_load(doc['EXAMPLES'])
        assert '_value' in doc['RETURN'] and descriptions_are_text(doc), name


def test_the_examples_give_what_they_say():
    environment = jinja2.Environment()
    environment.filters.update(dict(('ai_storage.checkpoint_io.%s' % name, function) for name, function
                                    in engine_access.FilterModule().filters().items()))
    plan = environment.from_string(
        "{{ ('auto' | ai_storage.checkpoint_io.engine_memlock_plan({'ranks': 8, 'rank_queue_depth': 8, "
        "'block_size': '1M', 'drives': 4, 'target_depth': 32})).limits_soft }}").render()
    assert plan == '458752'
    others = environment.from_string(
        "{{ ({'name': 'users', 'gid': 100, 'members': ['alice', 'trainer']} "
        "| ai_storage.checkpoint_io.engine_shared_group({}, 'trainer', -1)).others }}").render()
    assert others == "['alice']"


def test_wrong_inputs_fail_naming_the_filter():
    with pytest.raises(AnsibleFilterError, match='engine_memlock_plan: expected a dict of options, got list'):
        engine_access.engine_memlock_plan('auto', [])
    with pytest.raises(AnsibleFilterError, match='engine_access_record: expected the record'):
        engine_access.engine_access_record('x')
