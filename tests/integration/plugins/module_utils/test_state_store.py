# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state store: one layout, refusals, the lock between real processes, the run lease."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import multiprocessing
import os
import time

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import records, state_store as st
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_atomic


@pytest.fixture
def sdir(tmp_path):
    return str(tmp_path / 'state')


def test_a_record_has_the_layout_and_reads_back(sdir):
    changed, before, after = st.write_record(sdir, 'xfs', {'state': 'present'}, 'xfs role', now=0)
    assert changed and before is None and after == {'state': 'present'}
    with open(os.path.join(sdir, 'xfs.json')) as handle:
        doc = json.load(handle)
    assert doc == {'checkpoint_io_record': 1, 'name': 'xfs', 'written_at': '1970-01-01T00:00:00Z',
                   'writer': 'xfs role', 'data': {'state': 'present'}}
    assert st.read_record(sdir, 'xfs') == {'state': 'present'}
    assert oct(os.stat(sdir).st_mode & 0o777) == oct(0o755)
    assert oct(os.stat(os.path.join(sdir, 'xfs.json')).st_mode & 0o777) == oct(0o644)


def test_unchanged_data_is_not_rewritten_and_keep_keeps_the_first(sdir):
    st.write_record(sdir, 'baseline', {'a': 1}, 'w', now=0)
    assert st.write_record(sdir, 'baseline', {'a': 1}, 'w', now=100)[0] is False
    assert st.read_record(sdir, 'baseline', with_meta=True)[1]['written_at'] == '1970-01-01T00:00:00Z'
    changed, before, after = st.write_record(sdir, 'baseline', {'a': 2}, 'w', keep=True)
    assert changed is False and after == {'a': 1}
    assert st.remove_record(sdir, 'baseline')[0] is True
    assert st.read_record(sdir, 'baseline') is None


def test_a_legacy_record_is_read_as_its_data_and_gets_the_layout_on_its_next_write(sdir):
    os.makedirs(sdir)
    with open(os.path.join(sdir, 'depth_sweep.json'), 'w') as handle:
        json.dump({'/mnt/c|1048576|1': {'per_rank_depth': 16}}, handle)
    data, meta = st.read_record(sdir, 'depth_sweep', with_meta=True)
    assert data == {'/mnt/c|1048576|1': {'per_rank_depth': 16}} and meta['schema'] == 0
    st.update(sdir, 'depth_sweep', lambda old: dict(old, x={}), 'w')
    with open(os.path.join(sdir, 'depth_sweep.json')) as handle:
        assert json.load(handle)['checkpoint_io_record'] == 1


@pytest.mark.parametrize('doc, message', [
    ({'checkpoint_io_record': 2, 'name': 'xfs', 'data': {}}, 'newer version of the collection'),
    ({'checkpoint_io_record': 'x', 'name': 'xfs', 'data': {}}, 'not a schema version'),
    ({'checkpoint_io_record': 1, 'name': 'xfs'}, 'has no data'),
])
def test_records_the_store_cannot_trust_are_refused_and_never_rewritten(sdir, doc, message):
    os.makedirs(sdir)
    path = os.path.join(sdir, 'xfs.json')
    with open(path, 'w') as handle:
        json.dump(doc, handle)
    with pytest.raises(st.StateError, match=message):
        st.read_record(sdir, 'xfs')
    with pytest.raises(st.StateError):
        st.write_record(sdir, 'xfs', {'state': 'present'}, 'w')
    with open(path) as handle:
        assert json.load(handle) == doc


def test_bad_json_is_refused_naming_the_file(sdir):
    os.makedirs(sdir)
    with open(os.path.join(sdir, 'xfs.json'), 'w') as handle:
        handle.write('{not json')
    with pytest.raises(st.StateError, match='xfs.json is not valid JSON'):
        st.read_record(sdir, 'xfs')


def test_a_symlinked_record_is_never_read_or_written_through(sdir, tmp_path):
    os.makedirs(sdir)
    target = tmp_path / 'elsewhere'
    target.write_text('{"checkpoint_io_record": 1, "name": "xfs", "writer": "x", "data": {}}')
    os.symlink(str(target), os.path.join(sdir, 'xfs.json'))
    with pytest.raises(st.StateError, match='symlink'):
        st.read_record(sdir, 'xfs')
    with pytest.raises(st.StateError, match='symlink'):
        st.write_record(sdir, 'xfs', {'a': 1}, 'w')
    assert 'checkpoint_io_record' in target.read_text()  # the link's target is untouched


def test_a_state_dir_others_can_write_or_a_symlink_is_refused(tmp_path):
    open_dir = tmp_path / 'open'
    open_dir.mkdir()
    os.chmod(str(open_dir), 0o777)
    with pytest.raises(st.StateError, match='writable by no one else'):
        st.write_record(str(open_dir), 'xfs', {}, 'w')
    link = tmp_path / 'link'
    os.symlink(str(tmp_path), str(link))
    with pytest.raises(st.StateError, match='symlink'):
        st.write_record(str(link), 'xfs', {}, 'w')
    assert 'symlink' in st.read_all(str(link))['errors'][0]
    with pytest.raises(st.StateError, match='absolute'):
        st.ensure_dir('relative/dir')


@pytest.mark.parametrize('name', ['', 'Xfs', '../etc/passwd', 'a/b', 'x' * 65, 1])
def test_record_names_are_checked(sdir, name):
    with pytest.raises(st.StateError, match='record name'):
        st.record_path(sdir, name)


def test_read_all_lists_every_record_and_the_errors(sdir):
    st.write_record(sdir, 'xfs', {'state': 'present'}, 'w')
    st.write_record(sdir, 'baseline', {'where': 'none'}, 'w')
    with open(os.path.join(sdir, 'broken.json'), 'w') as handle:
        handle.write('[')
    with open(os.path.join(sdir, 'notes.txt'), 'w') as handle:
        handle.write('ignored')
    out = st.read_all(sdir)
    assert out['exists'] and sorted(out['records']) == ['baseline', 'xfs']
    assert len(out['errors']) == 1 and 'broken.json' in out['errors'][0]
    assert st.read_all(sdir + '-missing') == {'dir': sdir + '-missing', 'exists': False, 'schema_version': 1,
                                              'records': {}, 'meta': {}, 'errors': []}


def _add_keys(sdir, prefix, count):
    for index in range(count):
        st.update(sdir, 'counter', lambda old, key='%s%d' % (prefix, index): dict(old or {}, **{key: 1}), 'w')


def test_two_processes_writing_one_record_lose_nothing(sdir):
    """Read-modify-write under the flock: 2 real processes x 40 keys, every key survives."""
    st.ensure_dir(sdir)
    procs = [multiprocessing.Process(target=_add_keys, args=(sdir, prefix, 40)) for prefix in 'ab']
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert len(st.read_record(sdir, 'counter')) == 80
    assert sorted(os.listdir(sdir)) == ['.lock', 'counter.json']  # no temporary file left behind


def _hold_lock(sdir, seconds, ready):
    with st.locked(sdir):
        ready.set()
        time.sleep(seconds)


def test_a_stuck_writer_is_reported_not_waited_for_forever(sdir):
    st.ensure_dir(sdir)
    ready = multiprocessing.Event()
    proc = multiprocessing.Process(target=_hold_lock, args=(sdir, 3, ready))
    proc.start()
    try:
        assert ready.wait(20)
        with pytest.raises(st.StateError, match='stayed locked by another writer'):
            with st.locked(sdir, timeout=0.5):
                pass
    finally:
        proc.join(20)


OWNER_A = {'run_id': 'ctl:1:100', 'user': 'alice', 'controller': 'ctl', 'controller_pid': 1, 'playbook': 'tune'}
OWNER_B = {'run_id': 'ctl2:7:200', 'user': 'bob', 'controller': 'ctl2', 'controller_pid': 7, 'playbook': 'verify'}


def test_a_second_run_is_refused_naming_the_first(sdir):
    changed, lease, holder = st.acquire_run(sdir, OWNER_A, ttl=600)
    assert changed and lease['run_id'] == 'ctl:1:100' and holder is None
    with pytest.raises(st.StateError) as err:
        st.acquire_run(sdir, OWNER_B, ttl=600)
    message = str(err.value)
    for part in ('another checkpoint_io run holds this node', 'ctl:1:100', 'alice', 'controller ctl', 'tune',
                 'checkpoint_io_lock_wait', 'checkpoint_io_lock_take_over=ctl:1:100'):
        assert part in message, message
    # the same run renews its lease (every play of a playbook takes it again)
    again = st.acquire_run(sdir, OWNER_A, ttl=600)[1]
    assert again['acquired'] == lease['acquired'] and again['expires'] >= lease['expires']
    assert st.release_run(sdir, 'ctl2:7:200')[0] is False  # not B's to give back
    assert st.release_run(sdir, 'ctl:1:100')[0] is True
    assert st.acquire_run(sdir, OWNER_B, ttl=600)[1]['run_id'] == 'ctl2:7:200'


def test_an_expired_lease_is_taken_and_take_over_takes_a_live_one(sdir):
    clock = [1000.0]
    st.acquire_run(sdir, OWNER_A, ttl=60, now=lambda: clock[0])
    clock[0] += 61
    changed, lease, holder = st.acquire_run(sdir, OWNER_B, ttl=60, now=lambda: clock[0])
    assert lease['run_id'] == OWNER_B['run_id'] and holder['run_id'] == OWNER_A['run_id']
    changed, lease, holder = st.acquire_run(sdir, OWNER_A, ttl=60, take_over=OWNER_B['run_id'],
                                            now=lambda: clock[0])
    assert lease['run_id'] == OWNER_A['run_id'] and holder['run_id'] == OWNER_B['run_id']


def _release_later(sdir, run_id, seconds):
    time.sleep(seconds)
    st.release_run(sdir, run_id)


def test_a_second_run_with_a_wait_goes_on_once_the_first_gives_the_node_back(sdir):
    st.acquire_run(sdir, OWNER_A, ttl=600)
    proc = multiprocessing.Process(target=_release_later, args=(sdir, OWNER_A['run_id'], 1.0))
    proc.start()
    try:
        changed, lease, holder = st.acquire_run(sdir, OWNER_B, ttl=600, wait=30)
        assert lease['run_id'] == OWNER_B['run_id'] and holder['run_id'] == OWNER_A['run_id']  # it waited for A
    finally:
        proc.join(20)


def test_the_atomic_writer_replaces_a_planted_symlink_instead_of_following_it(tmp_path):
    victim = tmp_path / 'victim'
    victim.write_text('precious')
    dest = tmp_path / 'conf'
    os.symlink(str(victim), str(dest))
    write_atomic(str(dest), 'new\n')
    assert victim.read_text() == 'precious' and not os.path.islink(str(dest)) and dest.read_text() == 'new\n'


# --- what the records mean (module_utils/common/records.py) ----------------------------------------------------------
FACTS = {'state': {'records': {'depth_sweep': {
    '/mnt/c|1048576|1': {'directory': '/mnt/c', 'knee': {'best_bw_bytes': 100.0}, 'per_rank_depth': 16},
    '/mnt/c|262144|2': {'knee': {'best_bw_bytes': 150.0}},  # a legacy entry without its directory
    '/mnt/other|1048576|1': {'directory': '/mnt/other', 'knee': {'best_bw_bytes': 900.0}},
}}}}


def test_sweep_key_and_the_recorded_sweep():
    assert records.sweep_key('/mnt/c/', '1M', 1) == '/mnt/c|1048576|1'
    assert records.recorded_sweep(FACTS, '/mnt/c', 1048576, '1')['per_rank_depth'] == 16
    assert records.recorded_sweep(FACTS, '/mnt/c', '2M', 1) == {}
    assert records.recorded_sweep({}, '/mnt/c', '1M', 1) == {}
    with pytest.raises(ValueError, match='absolute'):
        records.sweep_key('mnt', '1M', 1)
    with pytest.raises(ValueError, match='expected the whole ansible_facts.checkpoint_io'):
        records.records(['not', 'facts'])


def test_the_ceiling_is_the_best_sweep_of_that_directory_only():
    assert records.sweep_ceiling_bytes(FACTS, '/mnt/c') == 150.0
    assert records.sweep_ceiling_bytes(FACTS, '/mnt/none') is None


def test_the_state_section_names_the_volume_and_its_md_array_by_uuid(tmp_path):
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import node_facts
    sdir, dev = str(tmp_path / 'state'), tmp_path / 'dev'
    (dev / 'disk' / 'by-id').mkdir(parents=True)
    (dev / 'md127').write_text('')
    os.symlink('../../md127', str(dev / 'disk' / 'by-id' / 'md-uuid-e78a7203:e730df8e'))
    st.write_record(sdir, 'xfs', {'state': 'present', 'mount_point': '/mnt/c', 'checkpoint_dir': '/mnt/c/ckpt',
                                  'md': {'name': 'ckpt', 'uuid': 'e78a7203:e730df8e'}}, 'xfs role')
    st.acquire_run(sdir, OWNER_A, ttl=600)
    section = node_facts.state_facts(sdir, str(dev))
    assert section['volume'] == {'exists': True, 'holders': ['md127'], 'mount_point': '/mnt/c',
                                 'checkpoint_dir': '/mnt/c/ckpt', 'md_uuid': 'e78a7203:e730df8e'}
    assert section['lease']['run_id'] == OWNER_A['run_id'] and 'run_lease' not in section['records']
    assert records.own_holders({'state': section}) == ['md127']
    assert node_facts.state_facts(sdir + '-none', str(dev))['volume']['exists'] is False
