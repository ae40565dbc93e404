# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End-to-end tests of the deepspeed_aio module on config files in a temporary directory."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.modules import deepspeed_aio

from helpers import module_args

# ds_nvme_tune style: string booleans, num_threads, the pre-rename thread_count; compact formatting.
ORIGINAL_TEXT = (
    '{"train_batch_size": 64, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", '
    '"nvme_path": "/local_nvme"}}, "aio": {"block_size": 1048576, "queue_depth": 8, "thread_count": 1, '
    '"single_submit": "false", "overlap_events": "true", "num_threads": 8}, "fp16": {"enabled": true}}\n'
)
TUNED = {'block_size': '1M', 'queue_depth': 32, 'intra_op_parallelism': 4, 'single_submit': 'no'}


class Node(object):
    def __init__(self, base):
        self.dir = os.path.join(str(base), 'etc', 'deepspeed')
        os.makedirs(self.dir)
        self.path = os.path.join(self.dir, 'ds_config.json')
        self.record = os.path.join(str(base), 'var', 'lib', 'ai_storage_checkpoint_io', 'deepspeed_aio.json')

    def write(self, text, mode=0o640):
        with open(self.path, 'w') as f:
            f.write(text)
        os.chmod(self.path, mode)

    def text(self):
        with open(self.path) as f:
            return f.read()

    def config(self):
        return json.loads(self.text())

    def record_data(self):
        with open(self.record) as f:
            return json.load(f)['data']

    def snapshot(self):
        """Every file under the temporary tree (proves check mode and refusals write nothing)."""
        result = {}
        for top, _dirs, files in os.walk(os.path.dirname(os.path.dirname(self.dir))):
            for name in files:
                path = os.path.join(top, name)
                with open(path) as f:
                    result[path] = f.read()
        return result

    def backups(self):
        return sorted(name for name in os.listdir(self.dir) if name != 'ds_config.json')


@pytest.fixture
def node(tmp_path):
    return Node(tmp_path)


def run(capsys, node, check=False, diff=False, **params):
    args = dict(params, state_dir=os.path.dirname(node.record), _ansible_check_mode=check, _ansible_diff=diff)
    args.setdefault('path', node.path)
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            deepspeed_aio.main()
    out = json.loads(capsys.readouterr().out)
    return exc.value.code, out


def test_merge_into_a_ds_nvme_tune_file(capsys, node):
    node.write(ORIGINAL_TEXT)
    rc, out = run(capsys, node, aio=TUNED)
    assert rc == 0, out
    assert out['changed'] is True and out['created'] is False
    config = node.config()
    assert list(config) == ['train_batch_size', 'zero_optimization', 'aio', 'fp16']
    assert config['zero_optimization'] == {'stage': 3, 'offload_optimizer': {'device': 'nvme', 'nvme_path': '/local_nvme'}}
    assert config['fp16'] == {'enabled': True}
    assert config['aio'] == {'block_size': 1048576, 'queue_depth': 32, 'single_submit': False, 'overlap_events': True,
                             'intra_op_parallelism': 4}
    assert out['aio'] == config['aio']
    assert out['aio_before']['single_submit'] == 'false'
    assert out['changed_keys'] == ['queue_depth', 'single_submit', 'overlap_events', 'intra_op_parallelism']
    assert out['removed_keys'] == ['thread_count', 'num_threads']
    assert out['fixed_keys'] == ['overlap_events']
    assert out['effective'] == {'block_size': 1048576, 'queue_depth': 32, 'intra_op_parallelism': 4,
                                'single_submit': False, 'overlap_events': True, 'use_gds': False}
    assert any('num_threads' in w for w in out['warnings_found'])
    assert any("'false'" in w for w in out['warnings_found'])
    # written as indented JSON with real booleans and a trailing newline
    text = node.text()
    assert text.endswith('}\n') and '"single_submit": false' in text and '\n  "aio": {' in text
    # mode kept, backup made, original recorded
    assert stat.S_IMODE(os.stat(node.path).st_mode) == 0o640
    assert out['backup_file'] and os.path.exists(out['backup_file'])
    with open(out['backup_file']) as f:
        assert f.read() == ORIGINAL_TEXT
    assert out['recorded'] is True
    entry = node.record_data()['files'][os.path.realpath(node.path)]
    assert entry['existed'] is True and entry['aio_present'] is True
    assert entry['aio'] == json.loads(ORIGINAL_TEXT)['aio']


def test_second_run_is_idempotent(capsys, node):
    node.write(ORIGINAL_TEXT)
    run(capsys, node, aio=TUNED)
    before = node.snapshot()
    rc, out = run(capsys, node, aio=TUNED)
    assert rc == 0 and out['changed'] is False
    assert out['changed_keys'] == [] and out['removed_keys'] == [] and out['backup_file'] is None
    assert out['recorded'] is False
    assert node.snapshot() == before


def test_no_rewrite_for_formatting_alone(capsys, node):
    text = '{"aio": {"queue_depth": 32,   "single_submit": false},\n"x": [1, 2]}'
    node.write(text)
    rc, out = run(capsys, node, aio={'queue_depth': '32', 'single_submit': 'false'})
    assert rc == 0 and out['changed'] is False
    assert node.text() == text
    assert not os.path.exists(node.record)


def test_check_mode_writes_nothing_and_reports_the_diff(capsys, node):
    node.write(ORIGINAL_TEXT)
    before = node.snapshot()
    rc, out = run(capsys, node, check=True, diff=True, aio=TUNED)
    assert rc == 0 and out['changed'] is True
    assert node.snapshot() == before
    assert not os.path.exists(node.record)
    assert out['backup_file'] is None and out['recorded'] is False
    assert out['aio']['queue_depth'] == 32
    diff = out['diff']
    assert diff['before'] == ORIGINAL_TEXT
    assert json.loads(diff['after'])['aio']['single_submit'] is False
    assert diff['before_header'] == diff['after_header'] == node.path


def test_diff_of_a_real_run_is_what_was_written(capsys, node):
    node.write(ORIGINAL_TEXT)
    rc, out = run(capsys, node, diff=True, aio={'queue_depth': 16})
    assert rc == 0
    assert out['diff']['after'] == node.text()
    rc, out = run(capsys, node, diff=True, aio={'queue_depth': 16})
    assert out['changed'] is False and out['diff']['before'] == out['diff']['after']


def test_create_a_missing_file(capsys, node):
    rc, out = run(capsys, node, aio={'queue_depth': 16, 'overlap_events': 'true'}, create=True)
    assert rc == 0 and out['changed'] is True and out['created'] is True
    assert node.config() == {'aio': {'queue_depth': 16, 'overlap_events': True}}
    assert out['backup_file'] is None
    entry = node.record_data()['files'][os.path.realpath(node.path)]
    assert entry['existed'] is False and entry['aio_present'] is False


def test_create_in_check_mode_creates_nothing(capsys, node):
    rc, out = run(capsys, node, check=True, aio={'queue_depth': 16}, create=True)
    assert rc == 0 and out['changed'] is True and out['created'] is True
    assert not os.path.exists(node.path) and not os.path.exists(node.record)


def test_a_missing_file_is_not_created_unless_asked(capsys, node):
    # the default: a mistyped path fails, naming the path and the option, and nothing is made
    before = node.snapshot()
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 1, out
    assert out['msg'] == ('ds_config %s does not exist: check the path (a mistyped name is not created); set create: '
                          'true to create it; nothing was written' % node.path)
    missing = os.path.join(node.dir, 'nope', 'ds_config.json')
    rc, out = run(capsys, node, path=missing, aio={'queue_depth': 16})
    assert rc == 1 and missing in out['msg'] and 'nor its directory %s' % os.path.dirname(missing) in out['msg']
    assert 'set create: true' in out['msg']
    assert node.snapshot() == before and not os.path.exists(node.record)
    assert not os.path.exists(os.path.dirname(missing))


def test_create_makes_missing_directories_under_a_root_only_one(capsys, node):
    missing = os.path.join(node.dir, 'job', 'run1', 'ds_config.json')
    rc, out = run(capsys, node, path=missing, aio={'queue_depth': 16}, create=True, check=True)
    assert rc == 0 and out['created'] is True and not os.path.exists(os.path.dirname(missing))
    rc, out = run(capsys, node, path=missing, aio={'queue_depth': 16}, create=True)
    assert rc == 0 and out['created'] is True, out
    with open(missing) as f:
        assert json.load(f) == {'aio': {'queue_depth': 16}}
    assert stat.S_IMODE(os.stat(os.path.dirname(missing)).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(missing).st_mode) == 0o644


def test_missing_file_without_values_creates_nothing(capsys, node):
    rc, out = run(capsys, node, aio={}, create=True)
    assert rc == 0 and out['changed'] is False and not os.path.exists(node.path)


@pytest.mark.parametrize('text, fragment', [
    ('{"aio": {"queue_depth": 8,}}', 'is not valid JSON'),
    ('[1, 2]', 'top level must be a JSON object, got list'),
    ('{"aio": [8]}', 'aio must be a JSON object, got list'),
    ('', 'is not valid JSON'),
])
def test_malformed_files_fail_without_writing(capsys, node, text, fragment):
    node.write(text)
    before = node.snapshot()
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 1
    assert fragment in out['msg'] and node.path in out['msg']
    assert node.snapshot() == before and node.backups() == []


@pytest.mark.parametrize('aio, fragments', [
    ({'block_size': 1000}, ['aio.block_size', '1000', 'multiple of 4096']),
    ({'queue_depth': 100000}, ['aio.queue_depth', '100000', '65535']),
    ({'intra_op_parallelism': 0}, ['aio.intra_op_parallelism', '0', 'minimum 1']),
    ({'use_gds': 'perhaps'}, ['aio.use_gds', 'perhaps']),
])
def test_bad_values_fail_without_writing(capsys, node, aio, fragments):
    node.write(ORIGINAL_TEXT)
    before = node.snapshot()
    rc, out = run(capsys, node, aio=aio)
    assert rc == 1
    for fragment in fragments:
        assert fragment in out['msg']
    assert node.snapshot() == before


def test_unknown_aio_option_is_refused_by_the_argument_spec(capsys, node):
    node.write(ORIGINAL_TEXT)
    rc, out = run(capsys, node, aio={'num_threads': 8})
    assert rc == 1 and 'num_threads' in out['msg']


def test_thread_key_both_and_thread_count(capsys, node):
    node.write('{"aio": {"intra_op_parallelism": 2}}')
    rc, out = run(capsys, node, aio={'intra_op_parallelism': 8}, thread_key='both')
    assert rc == 0 and node.config()['aio'] == {'intra_op_parallelism': 8, 'thread_count': 8}
    rc, out = run(capsys, node, aio={'intra_op_parallelism': 8}, thread_key='thread_count')
    assert rc == 0 and node.config()['aio'] == {'thread_count': 8}
    assert out['removed_keys'] == ['intra_op_parallelism']
    assert out['effective']['intra_op_parallelism'] == 8


def test_remove_ignored_keys_false_keeps_them(capsys, node):
    node.write('{"aio": {"num_threads": 8, "queue_depth": 8}}')
    rc, out = run(capsys, node, aio={'queue_depth': 16}, remove_ignored_keys=False)
    assert rc == 0 and node.config()['aio'] == {'num_threads': 8, 'queue_depth': 16}
    assert out['removed_keys'] == []


def test_backup_false(capsys, node):
    node.write(ORIGINAL_TEXT)
    rc, out = run(capsys, node, aio={'queue_depth': 16}, backup=False)
    assert rc == 0 and out['changed'] is True and out['backup_file'] is None
    assert node.backups() == []


def test_the_file_keeps_its_owner_group_and_mode(capsys, node):
    node.write(ORIGINAL_TEXT, mode=0o600)
    os.chown(node.path, 4242, 4343)
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 0 and out['changed'] is True
    info = os.stat(node.path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4242, 4343, 0o600)
    backup = os.stat(out['backup_file'])
    assert (backup.st_uid, backup.st_gid, stat.S_IMODE(backup.st_mode)) == (4242, 4343, 0o600)
    # the owner's attribute options are gone: they set attributes by path, through a link a user could swap in
    rc, out = run(capsys, node, aio={'queue_depth': 16}, mode='0644')
    assert rc == 1 and 'mode' in out['msg']


def test_restore_puts_back_the_found_section_and_keeps_other_keys(capsys, node):
    node.write(ORIGINAL_TEXT)
    run(capsys, node, aio=TUNED)
    run(capsys, node, aio={'queue_depth': 64})  # a second change does not overwrite the record
    entry = node.record_data()['files'][os.path.realpath(node.path)]
    assert entry['aio'] == json.loads(ORIGINAL_TEXT)['aio']
    config = node.config()
    config['train_batch_size'] = 128  # changed by someone else since: kept by the restore
    node.write(json.dumps(config))
    rc, out = run(capsys, node, state='restored', diff=True)
    assert rc == 0 and out['changed'] is True and out['restored'] is True
    restored = node.config()
    assert restored['aio'] == json.loads(ORIGINAL_TEXT)['aio']
    assert restored['train_batch_size'] == 128
    assert restored['zero_optimization'] == json.loads(ORIGINAL_TEXT)['zero_optimization']
    assert list(restored) == ['train_batch_size', 'zero_optimization', 'aio', 'fp16']
    assert set(out['removed_keys']) == {'intra_op_parallelism'}
    assert 'num_threads' in out['changed_keys'] and 'thread_count' in out['changed_keys']
    assert not os.path.exists(node.record)  # its only entry dropped
    # nothing left to restore
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['changed'] is False and out['restored'] is False


def test_restore_removes_a_section_that_was_not_there(capsys, node):
    node.write('{"train_batch_size": 8}')
    run(capsys, node, aio={'queue_depth': 16})
    assert 'aio' in node.config()
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and node.config() == {'train_batch_size': 8}


def test_restore_removes_a_created_file(capsys, node):
    run(capsys, node, aio={'queue_depth': 16}, create=True)
    assert os.path.exists(node.path)
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['changed'] is True and out['removed_file'] is True
    assert not os.path.exists(node.path)
    assert not os.path.exists(node.record)


def test_restore_keeps_a_created_file_that_got_other_keys(capsys, node, warned):
    run(capsys, node, aio={'queue_depth': 16}, create=True)
    node.write('{"aio": {"queue_depth": 16}, "fp16": {"enabled": true}}')
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['removed_file'] is False
    assert node.config() == {'fp16': {'enabled': True}}
    assert any('now holds other keys (fp16)' in w for w in warned)


def test_restore_in_check_mode_writes_nothing(capsys, node):
    node.write(ORIGINAL_TEXT)
    run(capsys, node, aio=TUNED)
    before = node.snapshot()
    rc, out = run(capsys, node, state='restored', check=True)
    assert rc == 0 and out['changed'] is True
    assert node.snapshot() == before


def test_restore_takes_no_values(capsys, node):
    rc, out = run(capsys, node, state='restored', aio={'queue_depth': 8})
    assert rc == 1 and 'aio.queue_depth' in out['msg']


def test_restore_of_a_deleted_file_drops_the_entry(capsys, node, warned):
    node.write(ORIGINAL_TEXT)
    run(capsys, node, aio=TUNED)
    os.unlink(node.path)
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and any('no longer exists' in w for w in warned)
    assert not os.path.exists(node.path) and not os.path.exists(node.record)


def test_record_is_keyed_by_the_real_path(capsys, node):
    node.write(ORIGINAL_TEXT)
    link = os.path.join(node.dir, 'link.json')
    os.symlink(node.path, link)
    rc, out = run(capsys, node, path=link, aio={'queue_depth': 16}, follow_symlinks=True)
    assert rc == 0 and out['changed'] is True
    assert out['link'] == {'path': link, 'target': node.path} and out['real_path'] == os.path.realpath(node.path)
    assert os.path.islink(link) and node.config()['aio']['queue_depth'] == 16
    assert list(node.record_data()['files']) == [os.path.realpath(node.path)]
    rc, out = run(capsys, node, path=node.path, aio={'queue_depth': 16})
    assert rc == 0 and out['changed'] is False
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['restored'] is True
    assert node.config()['aio'] == json.loads(ORIGINAL_TEXT)['aio']


def test_damaged_record_fails_before_writing(capsys, node):
    node.write(ORIGINAL_TEXT)
    os.makedirs(os.path.dirname(node.record))
    with open(node.record, 'w') as f:
        f.write('[]')
    before = node.snapshot()
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 1 and node.record in out['msg']
    assert node.snapshot() == before


# --- issue 12: root never writes through a link, a mistyped path, or a path another user can swap -----------------
def test_a_symlinked_ds_config_is_refused_and_its_target_untouched(capsys, node):
    # the training user plants ds_config.json -> a root file; root must not rewrite it through the link
    victim = os.path.join(os.path.dirname(node.dir), 'shadow.json')
    with open(victim, 'w') as f:
        f.write('{"root": "secret"}\n')
    os.chmod(victim, 0o600)
    os.symlink(victim, node.path)
    before = node.snapshot()
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 1
    assert out['msg'] == ('ds_config %s is a symlink to %s (%s): the collection never writes through a link; set '
                          'follow_symlinks: true to tune the file it points to, or name that file; nothing was written'
                          % (node.path, victim, victim))
    assert node.snapshot() == before and os.path.islink(node.path) and not os.path.exists(node.record)
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o600


def test_a_ds_config_in_a_directory_others_can_write_is_refused(capsys, node):
    node.write(ORIGINAL_TEXT)
    os.chmod(node.dir, 0o777)
    before = node.snapshot()
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 1
    assert '%s (owner root, mode 0777) can be written by everyone' % node.dir in out['msg']
    assert 'nothing was written' in out['msg'] and node.snapshot() == before


def test_a_ds_config_that_is_a_directory_is_refused(capsys, node):
    os.mkdir(node.path)
    rc, out = run(capsys, node, aio={'queue_depth': 16}, create=True)
    assert rc == 1 and out['msg'] == 'ds_config %s is a directory, not a regular file; nothing was written' % node.path


def test_keys_deepspeed_may_read_later_are_kept(capsys, node):
    node.write('{"aio": {"queue_depth": 8, "num_threads": 8, "use_io_uring": true}}')
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 0 and out['removed_keys'] == ['num_threads']
    assert node.config()['aio'] == {'queue_depth': 16, 'use_io_uring': True}
    assert any('aio.use_io_uring is not a DeepSpeed aio key' in w for w in out['warnings_found'])


def test_the_results_report_the_safety_of_the_path(capsys, node):
    node.write(ORIGINAL_TEXT)
    os.chown(node.dir, 4242, 4242)
    os.chown(node.path, 4242, 4242)
    rc, out = run(capsys, node, aio={'queue_depth': 16})
    assert rc == 0 and out['changed'] is True
    assert node.dir in [c['path'] for c in out['safety']['writable_components']]
    assert 'renamed over its name, never written through it' in out['safety']['made_safe_by']
    assert os.stat(node.path).st_uid == 4242


# --- checkpoint.writer (FastPersist) beside aio --------------------------------------------------------------------
WRITER = {'type': 'fast', 'io_buffer_size': 67108864, 'io_buffer_double': 'yes', 'data_parallel': 'replica'}


def test_the_writer_section_is_merged_beside_aio_recorded_and_put_back(capsys, node):
    node.write(ORIGINAL_TEXT)
    before = node.config()
    rc, out = run(capsys, node, aio=TUNED, writer=WRITER)
    assert rc == 0 and out['changed'] is True
    assert node.config()['checkpoint'] == {'writer': {'type': 'FAST', 'io_buffer_size': 67108864,
                                                      'io_buffer_double': True, 'data_parallel': 'REPLICA'}}
    assert out['writer'] == node.config()['checkpoint']['writer'] and out['writer_before'] is None
    assert out['writer_effective'] == dict(out['writer'], show_statistics=False, decoupled=False, io_multiplier=1)
    assert 'writer.io_buffer_size' in out['changed_keys']
    entry = node.record_data()['files'][node.path]
    assert (entry['writer_present'], entry['checkpoint_present']) == (False, False)
    # a second run changes nothing
    rc, out = run(capsys, node, aio=TUNED, writer=WRITER)
    assert (rc, out['changed'], out['changed_keys']) == (0, False, [])
    # revert: aio and writer as found, every other key as it is now
    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['restored'] is True and 'writer' in out['changed_keys']
    assert node.config() == before and out['writer'] is None


def test_an_entry_recorded_before_the_writer_was_managed_gets_the_writer_found_once(capsys, node):
    node.write('{"checkpoint": {"tag_validation": "Warn", "writer": {"type": "PYTHON"}}}\n')
    assert run(capsys, node, aio={'queue_depth': 16})[0] == 0
    # the entry as a collection before the writer recorded it
    with open(node.record) as handle:
        document = json.load(handle)
    for key in ('writer_present', 'writer', 'checkpoint_present'):
        del document['data']['files'][node.path][key]
    with open(node.record, 'w') as handle:
        json.dump(document, handle)
    rc, out = run(capsys, node, aio={'queue_depth': 16}, writer=WRITER)
    assert rc == 0 and out['writer_before'] == {'type': 'PYTHON'}
    entry = node.record_data()['files'][node.path]
    assert (entry['writer_present'], entry['writer']) == (True, {'type': 'PYTHON'})
    assert run(capsys, node, state='restored')[0] == 0
    assert node.config() == {'checkpoint': {'tag_validation': 'Warn', 'writer': {'type': 'PYTHON'}}}


def test_check_mode_shows_the_writer_and_writes_nothing(capsys, node):
    node.write(ORIGINAL_TEXT)
    snapshot = node.snapshot()
    rc, out = run(capsys, node, check=True, diff=True, writer=WRITER)
    assert rc == 0 and out['changed'] is True and out['writer']['data_parallel'] == 'REPLICA'
    assert '"writer"' in out['diff']['after'] and node.snapshot() == snapshot


@pytest.mark.parametrize('writer, message', [
    ({'type': 'turbo'}, "writer.type: 'turbo' is not one of FAST, PYTHON, MOCK; nothing was written"),
    ({'io_buffer_size': 1536}, 'writer.io_buffer_size: 1536 is not a multiple of 1024'),
    ({'data_parallel': 'rack'}, "writer.data_parallel: 'rack' is not one of REPLICA, SOCKET, MACHINE"),
])
def test_bad_writer_values_are_refused_naming_key_and_limit(capsys, node, writer, message):
    node.write(ORIGINAL_TEXT)
    snapshot = node.snapshot()
    rc, out = run(capsys, node, writer=writer)
    assert rc == 1 and message in out['msg'] and node.snapshot() == snapshot


def test_a_checkpoint_that_is_no_object_is_refused(capsys, node):
    node.write('{"checkpoint": ["writer"]}\n')
    rc, out = run(capsys, node, writer=WRITER)
    assert rc == 1 and 'checkpoint must be a JSON object, got list; nothing was written' in out['msg']
