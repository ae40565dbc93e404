# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End-to-end tests of the cufile_config module on cufile.json files in a temporary directory (run as root)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import stat

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import config_file, jsonc
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.cufile_edit import HEADER
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import CUFILE_DEFAULTS, parse_cufile_json
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import cufile_config

from helpers import run_module

# Written for these tests in the style of NVIDIA's stock /etc/cufile.json: // and /* */ comments (one over two
# lines, some after a value on its line), a commented-out key, irregular spacing around the colons.
STOCK = '''// NVIDIA cufile.json (stock-like, written for this test)
{
    // logging
    "logging": {
        // "dir": "/home/<xxxx>", // log directory
        "level": "ERROR" // NOTICE|ERROR|WARN|INFO|DEBUG|TRACE
    },
    /* execution: how cuFile splits and queues a request */
    "execution" : {
        "max_io_queue_depth": 128,
        "max_io_threads": 4,
        "parallel_io" : true,
        "min_io_threshold_size_kb" : 8192, /* 8 MiB */
        "max_request_parallelism" : 4
    },
    "properties": {
        /* the largest request cuFile hands the filesystem,
           in KiB */
        "max_direct_io_size_kb" : 16384,
        "max_device_cache_size_kb" : 131072,
        // "max_device_pinned_mem_size_kb" : 33554432,
        "use_poll_mode" : false,
        "poll_mode_max_size_kb": 4,
        "allow_compat_mode": true,
        "rdma_dev_addr_list": [ ]
    },
    "fs": {
        "generic": {
            "posix_unaligned_writes" : false
        }
    }
}
'''
TUNED = {
    'execution.max_io_queue_depth': 32,
    'properties.max_direct_io_size_kb': 8192,
    'properties.max_device_pinned_mem_size_kb': 2097152,
    'properties.allow_compat_mode': False,
}
# STOCK with TUNED set: three values replaced in place, the missing key added as the last member of "properties".
STOCK_TUNED = (STOCK
               .replace('"max_io_queue_depth": 128,', '"max_io_queue_depth": 32,')
               .replace('"max_direct_io_size_kb" : 16384,', '"max_direct_io_size_kb" : 8192,')
               .replace('"allow_compat_mode": true,', '"allow_compat_mode": false,')
               .replace('        "rdma_dev_addr_list": [ ]\n',
                        '        "rdma_dev_addr_list": [ ],\n        "max_device_pinned_mem_size_kb": 2097152\n'))
BACKUP_RE = r'^cufile\.json\.%d\.\d{4}-\d{2}-\d{2}@\d{2}:\d{2}:\d{2}(\.\d+)?~$'


class Node(object):
    """A cufile.json under <tmp>/etc and a root-owned 0700 state directory under <tmp>/state."""

    def __init__(self, base):
        self.base = str(base)
        self.dir = os.path.join(self.base, 'etc')
        os.makedirs(self.dir)
        self.path = os.path.join(self.dir, 'cufile.json')
        self.state_dir = os.path.join(self.base, 'state')
        os.mkdir(self.state_dir, 0o700)
        os.chmod(self.state_dir, 0o700)
        self.record = os.path.join(self.state_dir, 'cufile_config.json')

    def write(self, text, mode=0o644):
        with open(self.path, 'w') as f:
            f.write(text)
        os.chmod(self.path, mode)

    def text(self):
        with open(self.path) as f:
            return f.read()

    def record_files(self):
        with open(self.record) as f:
            return json.load(f)['data']['files']

    def entry(self):
        return self.record_files()[os.path.realpath(self.path)]

    def snapshot(self):
        """Every file and symlink under the temporary tree, with its bytes (proves that nothing was written)."""
        result = {}
        for top, dirs, files in os.walk(self.base):
            for name in files + dirs:
                path = os.path.join(top, name)
                if os.path.islink(path):
                    result[path] = ('link', os.readlink(path))
                elif os.path.isfile(path):
                    with open(path, 'rb') as f:
                        result[path] = f.read()
                else:
                    result[path] = 'dir'
        return result

    def backups(self):
        return sorted(name for name in os.listdir(self.dir) if name != 'cufile.json')


@pytest.fixture
def node(tmp_path):
    return Node(tmp_path)


def run(capsys, node, check=False, diff=False, **params):
    args = dict(params, _ansible_check_mode=check, _ansible_diff=diff)
    args.setdefault('state_dir', node.state_dir)
    args.setdefault('path', node.path)
    return run_module(capsys, cufile_config.main, args)


# --- a missing file -----------------------------------------------------------------------------------------------
def test_a_missing_file_is_created_from_the_documented_defaults(capsys, node):
    settings = {'execution.max_io_queue_depth': 32, 'properties.allow_compat_mode': False}
    rc, out = run(capsys, node, settings=settings)
    assert rc == 0, out
    assert out['changed'] is True and out['created'] is True and out['recorded'] is True
    assert out['backup_file'] is None and out['real_path'] == os.path.realpath(node.path)
    # "before" is the value of the defaults text the new file starts from (NVIDIA's default)
    assert out['changed_keys'] == {'execution.max_io_queue_depth': {'before': 128, 'after': 32},
                                   'properties.allow_compat_mode': {'before': True, 'after': False}}
    text = node.text()
    assert text.startswith(HEADER)
    parsed = parse_cufile_json(text)
    assert parsed['errors'] == {}
    assert parsed['properties'] == dict(CUFILE_DEFAULTS, **settings)
    # every documented key is in the file itself, not only filled in by the parser
    assert sorted(parsed['set']) == sorted(CUFILE_DEFAULTS)
    assert out['properties'] == parsed['properties']
    assert stat.S_IMODE(os.stat(node.path).st_mode) == 0o644
    assert node.backups() == []
    entry = node.entry()
    assert entry['existed'] is False and entry['original'] is None and entry['written'] == text
    assert list(node.record_files()) == [os.path.realpath(node.path)]


def test_the_second_run_changes_nothing_and_leaves_the_record(capsys, node):
    settings = {'execution.max_io_queue_depth': 32}
    run(capsys, node, settings=settings)
    before = node.snapshot()
    record_stat = os.stat(node.record)
    rc, out = run(capsys, node, settings=settings)
    assert rc == 0, out
    assert out['changed'] is False and out['created'] is False and out['recorded'] is False
    assert out['changed_keys'] == {} and out['backup_file'] is None
    assert out['properties']['execution.max_io_queue_depth'] == 32
    assert node.snapshot() == before
    assert os.stat(node.record).st_mtime_ns == record_stat.st_mtime_ns


def test_restored_removes_a_created_file_and_the_record(capsys, node):
    run(capsys, node, settings={'execution.max_io_queue_depth': 32})
    rc, out = run(capsys, node, state='restored')
    assert rc == 0, out
    assert out['changed'] is True and out['restored'] is True and out['removed_file'] is True
    assert out['properties'] is None
    assert not os.path.lexists(node.path)
    assert node.backups() == []
    assert not os.path.exists(node.record)  # its only entry dropped: the record file is gone
    # nothing left to restore
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['changed'] is False and out['restored'] is False
    assert 'nothing to restore' in out['msg']


def test_restored_keeps_only_the_other_entries(capsys, node):
    other = os.path.join(node.dir, 'other.json')
    run(capsys, node, settings={'execution.max_io_queue_depth': 32})
    run(capsys, node, path=other, settings={'execution.max_io_queue_depth': 16})
    assert sorted(node.record_files()) == sorted([os.path.realpath(node.path), os.path.realpath(other)])
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['removed_file'] is True
    assert list(node.record_files()) == [os.path.realpath(other)]
    assert os.path.exists(other)


# --- a stock-like file with comments ------------------------------------------------------------------------------
def test_a_commented_file_keeps_every_comment_and_other_byte(capsys, node):
    node.write(STOCK, mode=0o640)
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 0, out
    assert out['changed'] is True and out['created'] is False and out['recorded'] is True
    text = node.text()
    assert text == STOCK_TUNED
    for line in STOCK.splitlines():
        if line.strip().startswith(('//', '/*')) or '//' in line or '/*' in line or line.strip().startswith('in KiB'):
            assert line in text.splitlines(), line
    assert out['changed_keys'] == {
        'execution.max_io_queue_depth': {'before': 128, 'after': 32},
        'properties.max_direct_io_size_kb': {'before': 16384, 'after': 8192},
        'properties.max_device_pinned_mem_size_kb': {'before': None, 'after': 2097152},
        'properties.allow_compat_mode': {'before': True, 'after': False},
    }
    # the mode is kept; a backup with the old bytes is made beside the file, named as Ansible's backup_local does
    assert stat.S_IMODE(os.stat(node.path).st_mode) == 0o640
    assert out['backup_file'] == os.path.join(os.path.realpath(node.dir), node.backups()[0])
    assert len(node.backups()) == 1 and re.match(BACKUP_RE % os.getpid(), node.backups()[0]), node.backups()
    with open(out['backup_file'], 'rb') as f:
        assert f.read() == STOCK.encode('utf-8')
    # the record holds the text as found and the text written
    entry = node.entry()
    assert entry['existed'] is True and entry['original'] == STOCK and entry['written'] == text
    assert out['properties'] == parse_cufile_json(text)['properties']
    assert out['properties']['execution.max_io_queue_depth'] == 32
    assert out['properties']['properties.max_device_pinned_mem_size_kb'] == 2097152
    assert out['properties']['logging.level'] == 'ERROR'
    # read back from disk, then restored to the very bytes found
    rc, out = run(capsys, node, state='restored')
    assert rc == 0, out
    assert out['changed'] is True and out['restored'] is True and out['removed_file'] is False
    with open(node.path, 'rb') as f:
        assert f.read() == STOCK.encode('utf-8')
    assert stat.S_IMODE(os.stat(node.path).st_mode) == 0o640
    assert out['properties'] == parse_cufile_json(STOCK)['properties']
    assert not os.path.exists(node.record)


def test_properties_are_read_back_from_disk(capsys, node, monkeypatch):
    node.write(STOCK)
    monkeypatch.setattr(config_file.ConfigFile, 'read_back', lambda self: STOCK)
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 1
    assert out['msg'] == '%s reads back differently from what was written' % node.path


def test_a_second_change_keeps_the_recorded_original(capsys, node):
    node.write(STOCK)
    run(capsys, node, settings=TUNED)
    rc, out = run(capsys, node, settings={'execution.max_io_queue_depth': 64})
    assert rc == 0 and out['changed'] is True and out['recorded'] is False
    assert out['changed_keys'] == {'execution.max_io_queue_depth': {'before': 32, 'after': 64}}
    entry = node.entry()
    assert entry['original'] == STOCK and entry['written'] == node.text()
    rc, out = run(capsys, node, state='restored')
    assert rc == 0
    assert node.text() == STOCK


def test_restored_after_an_edit_sets_back_only_the_modules_keys(capsys, node, warned):
    node.write(STOCK)
    run(capsys, node, settings=TUNED)
    # someone edits the file since: another key and a comment
    edited = node.text().replace('"max_io_threads": 4,', '"max_io_threads": 12, // raised by hand')
    edited = edited.replace('// logging\n', '// logging (edited by hand)\n')
    node.write(edited)
    rc, out = run(capsys, node, state='restored')
    assert rc == 0, out
    assert out['changed'] is True and out['restored'] is True and out['removed_file'] is False
    text = node.text()
    # the module's keys are back to their values found, and the one the file did not have is gone again (issue 31,
    # finding 3: it was left, set to NVIDIA's default) ...
    expected = (edited
                .replace('"max_io_queue_depth": 32,', '"max_io_queue_depth": 128,')
                .replace('"max_direct_io_size_kb" : 8192,', '"max_direct_io_size_kb" : 16384,')
                .replace('"allow_compat_mode": false,', '"allow_compat_mode": true,')
                .replace('        "rdma_dev_addr_list": [ ],\n        "max_device_pinned_mem_size_kb": 2097152\n',
                         '        "rdma_dev_addr_list": [ ]\n'))
    assert text == expected
    # ... and the other edits are kept
    assert '"max_io_threads": 12, // raised by hand' in text and '// logging (edited by hand)' in text
    assert len(warned) == 1 and node.path in warned[0] and 'changed since the collection wrote it' in warned[0]
    for key in TUNED:
        assert key in warned[0]
    assert not os.path.exists(node.record)


def test_restored_keeps_a_created_file_changed_since(capsys, node, warned):
    run(capsys, node, settings={'execution.max_io_queue_depth': 32})
    edited = node.text().replace('"max_io_threads": 4', '"max_io_threads": 12')
    node.write(edited)
    rc, out = run(capsys, node, state='restored')
    assert rc == 0, out
    assert out['removed_file'] is False and node.text() == edited
    assert any(node.path in w and 'changed since the collection created it' in w for w in warned), warned
    assert not os.path.exists(node.record)


def test_restored_of_a_deleted_file_drops_the_entry(capsys, node, warned):
    node.write(STOCK)
    run(capsys, node, settings=TUNED)
    os.unlink(node.path)
    rc, out = run(capsys, node, state='restored')
    assert rc == 0, out
    assert any('no longer exists' in w and node.path in w for w in warned), warned
    assert not os.path.lexists(node.path) and not os.path.exists(node.record)


def test_restored_warning_lists_none_when_no_key_could_be_put_back(capsys, node, warned):
    """A key the original did not have and NVIDIA documents no default for cannot be put back (jsonc cannot remove
    a member). cufile_edit.restore_text builds the warning as ``'... (%s) ...' % ', '.join(...) or 'none'``: the
    ``or 'none'`` applies to the whole formatted string, so the message says "the keys it set ()"."""
    node.write(STOCK)
    run(capsys, node, settings={'logging.dir': '/var/log/gds'})
    edited = node.text().replace('"max_io_threads": 4', '"max_io_threads": 12')
    node.write(edited)
    rc, out = run(capsys, node, state='restored')
    assert rc == 0, out
    assert len(warned) == 1 and 'changed since the collection wrote it' in warned[0]
    assert '()' not in warned[0], warned[0]


# --- check mode and diff ------------------------------------------------------------------------------------------
def test_check_mode_reports_the_change_and_the_diff_but_writes_nothing(capsys, node):
    node.write(STOCK)
    before = node.snapshot()
    rc, out = run(capsys, node, check=True, diff=True, settings=TUNED)
    assert rc == 0, out
    assert out['changed'] is True and out['recorded'] is False and out['backup_file'] is None
    assert out['changed_keys']['execution.max_io_queue_depth'] == {'before': 128, 'after': 32}
    assert out['diff']['before'] == STOCK and out['diff']['after'] == STOCK_TUNED
    assert out['diff']['before_header'] == out['diff']['after_header'] == node.path
    assert out['properties'] == parse_cufile_json(STOCK_TUNED)['properties']
    assert node.snapshot() == before
    assert node.backups() == [] and not os.path.exists(node.record)


def test_check_mode_of_a_missing_file_creates_nothing(capsys, node):
    before = node.snapshot()
    rc, out = run(capsys, node, check=True, diff=True, settings={'execution.max_io_queue_depth': 32})
    assert rc == 0 and out['changed'] is True and out['created'] is True
    assert out['diff']['before'] == '' and out['diff']['after'].startswith(HEADER)
    assert out['properties']['execution.max_io_queue_depth'] == 32
    assert not os.path.lexists(node.path) and node.snapshot() == before


def test_diff_of_a_real_run_is_what_was_written(capsys, node):
    node.write(STOCK)
    rc, out = run(capsys, node, diff=True, settings=TUNED)
    assert rc == 0 and out['diff']['before'] == STOCK and out['diff']['after'] == node.text()


def test_check_mode_of_restored_writes_nothing(capsys, node):
    node.write(STOCK)
    run(capsys, node, settings=TUNED)
    before = node.snapshot()
    rc, out = run(capsys, node, state='restored', check=True, diff=True)
    assert rc == 0, out
    assert out['changed'] is True and out['restored'] is True
    assert out['diff']['before'] == STOCK_TUNED and out['diff']['after'] == STOCK
    assert node.snapshot() == before
    # and a created file is not removed in check mode either
    os.unlink(node.path)
    for name in node.backups():
        os.unlink(os.path.join(node.dir, name))
    os.unlink(node.record)
    run(capsys, node, settings=TUNED)
    before = node.snapshot()
    rc, out = run(capsys, node, state='restored', check=True)
    assert rc == 0 and out['changed'] is True and out['removed_file'] is False
    assert node.snapshot() == before


# --- refusals: nothing written, the message names the path or value -----------------------------------------------
def test_a_symlink_is_refused_unless_followed(capsys, node):
    target = os.path.join(node.dir, 'real.json')
    with open(target, 'w') as f:
        f.write(STOCK)
    os.symlink(target, node.path)
    before = node.snapshot()
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 1
    assert node.path in out['msg'] and 'symlink' in out['msg'] and 'follow_symlinks' in out['msg']
    assert 'nothing was written' in out['msg']
    assert node.snapshot() == before and not os.path.exists(node.record)
    # followed, the link stays and its target is changed; the record is keyed by the target
    rc, out = run(capsys, node, settings=TUNED, follow_symlinks=True)
    assert rc == 0 and out['changed'] is True, out
    assert os.path.islink(node.path) and out['real_path'] == os.path.realpath(target)
    with open(target) as f:
        assert f.read() == STOCK_TUNED
    assert list(node.record_files()) == [os.path.realpath(target)]


def test_a_file_with_two_hard_links_is_refused(capsys, node):
    node.write(STOCK)
    os.link(node.path, os.path.join(node.dir, 'second_name.json'))
    before = node.snapshot()
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 1
    assert node.path in out['msg'] and '2 hard links' in out['msg'] and 'nothing was written' in out['msg']
    assert node.snapshot() == before and not os.path.exists(node.record)


@pytest.mark.parametrize('text, fragments', [
    # not JSON even with the comments removed: the line and column of the fault
    ('// header\n{\n    "execution": {\n        "max_io_queue_depth": 128\n        "max_io_threads": 4\n    }\n}\n',
     ['line 5 column 9', "expected ',' or '}'"]),
    ('{\n  /* unclosed comment\n  "a": 1\n}\n', ['line 2 column 3', "'*/'"]),
    ('{"execution": {"max_io_queue_depth": NaN}}\n', ['line 1 column 38']),
    ('', ['line 1 column 1']),
    # the top level is not an object
    ('// an array\n[{"execution": {"max_io_queue_depth": 128}}]\n', ['top level is not a JSON object']),
])
def test_a_file_that_is_not_a_jsonc_object_is_refused(capsys, node, text, fragments):
    node.write(text)
    before = node.snapshot()
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 1
    assert out['msg'].startswith(node.path + ': ') and out['msg'].endswith('; nothing was written'), out['msg']
    for fragment in fragments:
        assert fragment in out['msg'], out['msg']
    assert node.snapshot() == before and node.backups() == [] and not os.path.exists(node.record)


def test_a_key_through_a_value_that_is_not_an_object_is_refused(capsys, node):
    node.write(STOCK)
    before = node.snapshot()
    rc, out = run(capsys, node, settings={'logging.level.x': 1})
    assert rc == 1
    assert node.path in out['msg'] and "'logging.level' is not an object" in out['msg']
    assert "'logging.level.x'" in out['msg'] and out['msg'].endswith('nothing was written')
    assert node.snapshot() == before and not os.path.exists(node.record)


def test_a_key_that_names_an_object_is_refused(capsys, node):
    """A scalar for a key that holds an object in the file (fs.generic) would drop every key under it, which the
    module promises to keep ("every other key ... stay as they were"); changed_keys would say before: null."""
    node.write(STOCK)
    before = node.snapshot()
    rc, out = run(capsys, node, settings={'fs.generic': 5})
    assert rc == 1, 'fs.generic was replaced: %r, file now %r' % (out, node.text())
    assert node.path in out['msg'] and 'fs.generic' in out['msg']
    assert node.snapshot() == before and not os.path.exists(node.record)


@pytest.mark.parametrize('settings, fragments', [
    ({'nodots': 1}, ["'nodots' is not a dotted cufile.json key"]),
    ({'execution.': 1}, ["'execution.' is not a dotted cufile.json key"]),
    ({'properties.rdma_dev_addr_list': ['192.0.2.1']}, ['properties.rdma_dev_addr_list', "['192.0.2.1']",
                                                        'not a JSON scalar']),
    ({'logging.dir': {'a': 1}}, ['logging.dir', 'not a JSON scalar']),
    ({'logging.dir': None}, ['logging.dir', 'None', 'not a JSON scalar']),
    ({'execution.max_io_queue_depth': True}, ['execution.max_io_queue_depth', 'True', 'whole number from 0 to 2147483647']),
    ({'execution.max_io_queue_depth': -1}, ['execution.max_io_queue_depth', '-1', 'whole number from 0 to 2147483647']),
    ({'execution.max_io_queue_depth': 1.5}, ['execution.max_io_queue_depth', '1.5', 'whole number from 0 to 2147483647']),
    ({'execution.max_io_queue_depth': '32'}, ['execution.max_io_queue_depth', "'32'", 'whole number from 0 to 2147483647']),
    ({'properties.allow_compat_mode': 0}, ['properties.allow_compat_mode', '0', 'must be true or false']),
    ({'properties.allow_compat_mode': 'false'}, ['properties.allow_compat_mode', "'false'",
                                                 'must be true or false']),
    ({'logging.level_factor': float('nan')}, ['logging.level_factor', 'nan', 'not a JSON number']),
    ({'logging.level_factor': float('inf')}, ['logging.level_factor', 'inf', 'not a JSON number']),
])
def test_bad_settings_are_refused(capsys, node, settings, fragments):
    node.write(STOCK)
    before = node.snapshot()
    rc, out = run(capsys, node, settings=settings)
    assert rc == 1
    assert out['msg'].startswith('settings: ') and out['msg'].endswith('; nothing was written'), out['msg']
    for fragment in fragments:
        assert fragment in out['msg'], out['msg']
    assert node.snapshot() == before and not os.path.exists(node.record)


def test_every_bad_setting_is_named_at_once(capsys, node):
    node.write(STOCK)
    rc, out = run(capsys, node, settings={'nodots': 1, 'execution.max_io_queue_depth': -1,
                                          'properties.max_direct_io_size_kb': 8192})
    assert rc == 1
    assert "'nodots'" in out['msg'] and 'execution.max_io_queue_depth: -1' in out['msg']
    assert 'max_direct_io_size_kb:' not in out['msg'] and '8192' not in out['msg']
    assert node.text() == STOCK


def test_settings_are_required_with_present(capsys, node):
    node.write(STOCK)
    rc, out = run(capsys, node)
    assert rc == 1 and out['msg'].startswith('settings: must be a mapping') and node.text() == STOCK


def test_restored_takes_no_settings(capsys, node):
    node.write(STOCK)
    run(capsys, node, settings=TUNED)
    before = node.snapshot()
    rc, out = run(capsys, node, state='restored', settings={'execution.max_io_queue_depth': 16})
    assert rc == 1
    assert out['msg'] == 'state=restored takes no settings (the record is used); remove settings'
    assert node.snapshot() == before


def test_create_false_refuses_a_missing_file(capsys, node):
    before = node.snapshot()
    rc, out = run(capsys, node, settings=TUNED, create=False)
    assert rc == 1
    assert out['msg'] == ('cuFile config %s does not exist: check the path (a mistyped name is not created); set '
                          'create: true to create it; nothing was written' % node.path)
    assert node.snapshot() == before


@pytest.mark.parametrize('state_dir', ['relative/state', 'state', ''])
def test_a_bad_state_dir_is_refused(capsys, node, state_dir):
    node.write(STOCK)
    before = node.snapshot()
    cwd = os.getcwd()
    os.chdir(node.base)
    try:
        rc, out = run(capsys, node, settings=TUNED, state_dir=state_dir)
    finally:
        os.chdir(cwd)
    assert rc == 1
    assert out['msg'].startswith('state_dir: ') and repr(state_dir) in out['msg'], out['msg']
    assert node.snapshot() == before


def test_a_state_dir_others_can_write_is_refused(capsys, node):
    node.write(STOCK)
    os.chmod(node.state_dir, 0o777)
    before = node.snapshot()
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 1 and node.state_dir in out['msg'] and '0777' in out['msg']
    assert node.snapshot() == before


def test_a_damaged_record_is_refused_before_writing(capsys, node):
    node.write(STOCK)
    with open(node.record, 'w') as f:
        f.write('{not json')
    before = node.snapshot()
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 1 and node.record in out['msg']
    assert node.snapshot() == before


def test_a_directory_at_the_path_is_refused(capsys, node):
    os.mkdir(node.path)
    rc, out = run(capsys, node, settings=TUNED)
    assert rc == 1
    assert out['msg'] == 'cuFile config %s is a directory, not a regular file; nothing was written' % node.path


def test_jsonc_error_names_line_and_column():
    """The line/column in the module's message comes from jsonc (a ValueError subclass with lineno/colno)."""
    with pytest.raises(jsonc.JsoncError) as exc:
        jsonc.parse('{\n  "a": 1\n  "b": 2\n}')
    assert (exc.value.lineno, exc.value.colno) == (3, 3)
