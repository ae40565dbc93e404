# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cufile.json edits of the cufile_config module: settings checked, a new file's text, keys set with comments
kept, and the revert (a created file removed or kept, an existing file's original or only its keys put back)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import jsonc
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.cufile_edit import (
    check_settings,
    default_text,
    nested,
    present_values,
    properties_of,
    restore_text,
    set_keys,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import CUFILE_DEFAULTS, parse_cufile_json

DIRECT = 'properties.max_direct_io_size_kb'
DEPTH = 'execution.max_io_queue_depth'
POLL = 'properties.use_poll_mode'
ORIGINAL = """{
    // site settings: do not remove this comment
    "properties": {
        "max_direct_io_size_kb": 4096,
        "use_poll_mode": false
    }
}
"""


def _written():
    """ORIGINAL after the module set a larger direct I/O size and a queue depth the file did not have."""
    return set_keys(ORIGINAL, {DIRECT: 65536, DEPTH: 256})[0]


# ----------------------------------------------------------------------------- check_settings
def test_check_settings_accepts_usable_settings():
    assert check_settings({DIRECT: 65536, POLL: True, 'properties.rdma_dev_addr_list_name': 'mlx5_0',
                           'properties.some_ratio': 0.5}) == []


@pytest.mark.parametrize('settings, expected', [
    ([DIRECT], 'must be a mapping of dotted keys'),
    ({'max_direct_io_size_kb': 1}, "'max_direct_io_size_kb' is not a dotted cufile.json key"),
    ({'properties..x': 1}, 'is not a dotted cufile.json key'),
    ({5: 1}, '5 is not a dotted cufile.json key'),
    ({'properties.x': float('nan')}, 'properties.x: nan is not a JSON number'),
    ({'properties.x': [1]}, 'is not a JSON scalar'),
    ({POLL: 1}, '%s: 1 must be true or false' % POLL),
    ({DIRECT: True}, '%s: True must be a whole number from 0 to 2147483647' % DIRECT),
    ({DIRECT: -1}, 'must be a whole number from 0 to 2147483647'),
    ({DIRECT: '65536'}, 'must be a whole number from 0 to 2147483647'),
    ({DEPTH: 1.5}, 'must be a whole number from 0 to 2147483647'),
])
def test_check_settings_names_each_problem(settings, expected):
    problems = check_settings(settings)
    assert len(problems) == 1 and expected in problems[0], problems


# ----------------------------------------------------------------------------- default_text
def test_default_text_is_nvidia_defaults():
    text = default_text()
    assert text.startswith('// cuFile configuration made by ai_storage.checkpoint_io')
    parsed = parse_cufile_json(text)
    assert parsed['errors'] == {} and parsed['properties'] == CUFILE_DEFAULTS
    assert parsed['set'] == sorted(CUFILE_DEFAULTS)
    assert present_values(text) == CUFILE_DEFAULTS and properties_of(text) == CUFILE_DEFAULTS


def test_nested():
    assert nested({'a.b': 1, 'a.c.d': 2, 'e.f': 3}) == {'a': {'b': 1, 'c': {'d': 2}}, 'e': {'f': 3}}


# ----------------------------------------------------------------------------- set_keys
def test_set_keys_changes_and_inserts_keeping_comments():
    text, changed = set_keys(ORIGINAL, {DIRECT: 65536, DEPTH: 256, POLL: False})
    assert changed == {DIRECT: {'before': 4096, 'after': 65536}, DEPTH: {'before': None, 'after': 256}}
    assert '// site settings: do not remove this comment' in text
    assert present_values(text) == {DIRECT: 65536, POLL: False, DEPTH: 256}


def test_set_keys_unchanged_is_the_same_text():
    text, changed = set_keys(ORIGINAL, {DIRECT: 4096, POLL: False})
    assert text is ORIGINAL and changed == {}


def test_set_keys_true_is_not_one():
    text, changed = set_keys('{"properties": {"use_poll_mode": 1}}', {POLL: True})
    assert changed == {POLL: {'before': 1, 'after': True}} and jsonc.get(text, POLL) is True


def test_set_keys_reports_only_what_it_writes():
    """jsonc keeps 128.0 for 128 (equal JSON numbers): set_keys must then not report the key as changed."""
    text = '{"execution": {"max_io_queue_depth": 128.0}}'
    new, changed = set_keys(text, {DEPTH: 128})
    assert (new is text) == (changed == {}), (new, changed)


def test_set_keys_refuses_a_top_level_that_is_not_an_object():
    with pytest.raises(jsonc.JsoncError):
        set_keys('[1, 2]', {POLL: True})


def test_set_keys_refuses_to_replace_an_object():
    with pytest.raises(jsonc.JsoncError, match='properties.rdma is an object in the file .holding properties.rdma.x'):
        set_keys('{"properties": {"rdma": {"x": 1}}}', {'properties.rdma': 1})


# ----------------------------------------------------------------------------- restore_text
@pytest.mark.parametrize('text', [None, 'WRITTEN'])
def test_restore_created_file_unchanged_is_removed(text):
    assert restore_text({'existed': False, 'original': None, 'written': 'WRITTEN'}, text) == (None, None)


def test_restore_created_file_changed_is_kept_with_a_warning():
    edited = default_text().replace('"use_poll_mode": false', '"use_poll_mode": true')
    kept, warning = restore_text({'existed': False, 'original': None, 'written': default_text()}, edited)
    assert kept == edited and 'changed since the collection created it: kept' in warning


@pytest.mark.parametrize('unchanged', [True, False], ids=['as-written', 'removed-since'])
def test_restore_existing_file_unchanged_is_the_original(unchanged):
    written = _written()
    entry = {'existed': True, 'original': ORIGINAL, 'written': written}
    assert restore_text(entry, written if unchanged else None) == (ORIGINAL, None)


def test_restore_existing_file_changed_puts_back_only_the_modules_keys():
    edited = _written().replace('"use_poll_mode": false', '"use_poll_mode": true')
    restored, warning = restore_text({'existed': True, 'original': ORIGINAL, 'written': _written()}, edited)
    # issue 31, finding 3: the key the original did not have is removed (it was set to NVIDIA's default before), and
    # the object the module made for it too
    assert present_values(restored) == {DIRECT: 4096, POLL: True}
    assert jsonc.get(restored, 'execution') is None
    assert '// site settings: do not remove this comment' in restored
    assert 'only the keys it set were put back (%s to their values found; %s, which the file did not have, ' \
           'removed)' % (DIRECT, DEPTH) in warning


def test_restore_changed_file_names_none_when_no_key_can_be_put_back():
    """The module added a key NVIDIA documents no default for: nothing can be put back, and the warning must not
    read "the keys it set () were put back" (cufile_edit meant 'none' there)."""
    written = set_keys(ORIGINAL, {'properties.gds_rdma_write_support': True})[0]
    edited = written.replace('"use_poll_mode": false', '"use_poll_mode": true')
    restored, warning = restore_text({'existed': True, 'original': ORIGINAL, 'written': written}, edited)
    assert jsonc.get(restored, POLL) is True  # the user's change stays
    assert jsonc.get(restored, 'properties.gds_rdma_write_support') is None  # the module's key goes again
    assert '(none to their values found; properties.gds_rdma_write_support, which the file did not have, removed)' \
        in warning, warning
