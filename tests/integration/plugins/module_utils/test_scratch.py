# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/common/scratch.py on the real filesystem of the test host: resolving a directory without following a
symlink another user could plant, the run directory and its files, removing only what the run made, the reaper."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import pwd
import stat
import subprocess
import sys

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch, state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch_reap

NOBODY = pwd.getpwnam('nobody')
MIB = 1024 * 1024


@pytest.fixture
def tree(tmp_path):
    """root/ (root, 0755) holding user/ (nobody's) and data/ (root's), and a root symlink link -> data."""
    base = tmp_path / 'root'
    base.mkdir()
    (base / 'user').mkdir()
    os.chown(str(base / 'user'), NOBODY.pw_uid, NOBODY.pw_gid)
    (base / 'data').mkdir()
    (base / 'link').symlink_to('data')
    return base


@pytest.fixture
def state(tmp_path):
    return str(tmp_path / 'state')


def test_a_symlink_made_by_root_in_a_root_directory_is_followed(tree):
    target = scratch.open_dir(str(tree / 'link'))
    try:
        assert target.real == str(tree / 'data') and target.path == str(tree / 'link')
        assert (target.dev, target.ino) == (os.stat(str(tree / 'data')).st_dev, os.stat(str(tree / 'data')).st_ino)
    finally:
        target.close()
    target = scratch.open_dir(str(tree / 'user' / '..' / 'data'))
    assert target.real == str(tree / 'data')
    target.close()


def test_a_symlink_in_a_directory_a_user_can_write_is_refused(tree):
    (tree / 'user' / 'bench').symlink_to('/etc')
    with pytest.raises(scratch.ScratchError) as exc:
        scratch.open_dir(str(tree / 'user' / 'bench'), 'directories')
    assert str(exc.value) == (
        'directories: %s: %s is a symlink in %s, which its owner uid %d can write: the collection never writes '
        'through a path another user can redirect; give the real directory' % (
            tree / 'user' / 'bench', tree / 'user' / 'bench', tree / 'user', NOBODY.pw_uid))


def test_writable_components_are_reported(tree):
    os.chmod(str(tree / 'data'), 0o777)
    target = scratch.open_dir(str(tree / 'data'))
    try:
        found = dict((c['path'], c['writable_by']) for c in target.writable)
        assert found[str(tree / 'data')] == ['everyone']
    finally:
        target.close()
    target = scratch.open_dir(str(tree / 'user'))
    assert [c for c in target.writable if c['path'] == str(tree / 'user')][0]['writable_by'] == [
        'its owner uid %d' % NOBODY.pw_uid]
    target.close()


@pytest.mark.parametrize('path, message', [
    ('relative/dir', "directories: 'relative/dir' is not an absolute path"),
    ('{tree}/nope', 'directories: {tree}/nope does not exist'),
    ('{tree}/nope/deeper', 'directories: {tree}/nope/deeper does not exist (at {tree}/nope)'),
    ('{tree}/file', 'directories: {tree}/file is not a directory'),
])
def test_bad_directories_name_the_path(tree, path, message):
    (tree / 'file').write_text(u'x')
    with pytest.raises(scratch.ScratchError) as exc:
        scratch.open_dir(path.format(tree=tree), 'directories')
    assert str(exc.value) == message.format(tree=tree)


def test_the_run_directory_is_root_only_its_files_sized_and_recorded_first(tree, state):
    target = scratch.open_dir(str(tree / 'user'))
    run = scratch.create(target, 'after 1/3', [('rank_0.ckpt', 8 * MIB), ('rank_1.ckpt', 4 * MIB)], state,
                         run_id='run-1', writer='test')
    try:
        assert os.path.basename(run.path).startswith('.checkpoint_io.after_1_3.')
        info = os.lstat(run.path)
        assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.geteuid()
        sizes = [os.stat(run.file_path(name)) for name in ('rank_0.ckpt', 'rank_1.ckpt')]
        assert [s.st_size for s in sizes] == [8 * MIB, 4 * MIB] and all(s.st_blocks == 0 for s in sizes)
        assert all(stat.S_IMODE(s.st_mode) == 0o600 for s in sizes)
        assert run.fio_file('rank_0.ckpt') == '/proc/self/fd/%d' % run.files['rank_0.ckpt']['fd']
        entry = state_store.read_record(state, 'scratch')[run.path]
        assert entry['parent'] == str(tree / 'user') and entry['run_id'] == 'run-1'
        assert entry['ino'] == info.st_ino and entry['owner']['pid'] == os.getpid()
        assert entry['files']['rank_0.ckpt'] == {'dev': sizes[0].st_dev, 'ino': sizes[0].st_ino}
        # Written through its descriptor's /proc name, the file grows: what the progress reads.
        with open(run.fio_file('rank_1.ckpt'), 'r+b') as handle:
            handle.write(b'x' * MIB)
        assert run.allocated() >= MIB
    finally:
        assert run.cleanup() == []
    assert os.listdir(str(tree / 'user')) == [] and state_store.read_record(state, 'scratch') is None
    assert run.cleanup() == []  # once only


def test_cleanup_finds_a_renamed_run_directory_and_removes_only_its_own_files(tree, state):
    target = scratch.open_dir(str(tree / 'user'))
    run = scratch.create(target, 'x', [('rank_0.ckpt', MIB)], state)
    moved = str(tree / 'user' / 'renamed')
    os.rename(run.path, moved)
    os.symlink('/etc', run.path)  # a trap under the old name
    # A file that is not the run's own under one of its names (a root process swapped it: nobody else can).
    os.unlink(os.path.join(moved, 'rank_0.ckpt'))
    with open(os.path.join(moved, 'rank_0.ckpt'), 'w') as handle:
        handle.write('not the run\'s')
    left = run.cleanup()
    assert left == [run.file_path('rank_0.ckpt'), run.path]
    assert os.path.exists(os.path.join(moved, 'rank_0.ckpt')) and os.path.islink(run.path)
    assert state_store.read_record(state, 'scratch') is None


def test_keep_leaves_the_files_and_forgets_the_record(tree, state):
    target = scratch.open_dir(str(tree / 'data'))
    run = scratch.create(target, 'kept', [('rank_0.ckpt', MIB)], state)
    assert run.cleanup(keep=True) == [run.file_path('rank_0.ckpt')]
    assert os.path.exists(run.file_path('rank_0.ckpt')) and state_store.read_record(state, 'scratch') is None


def dead_owner():
    proc = subprocess.Popen([sys.executable, '-c', 'pass'])
    owner = scratch.process_owner(proc.pid)
    proc.wait()
    return owner


def test_the_reaper_removes_runs_whose_owner_is_gone_and_keeps_live_ones(tree, state):
    dead = scratch.create(scratch.open_dir(str(tree / 'user')), 'dead', [('a', MIB), ('b', MIB)], state,
                          owner=dead_owner())
    dead.release()
    alive = scratch.create(scratch.open_dir(str(tree / 'data')), 'alive', [('a', MIB)], state)
    alive_key = alive.path
    try:
        checked = scratch_reap.reap(state, check_mode=True)
        assert [r['run_dir'] for r in checked['reaped']] == [dead.path] and os.path.isdir(dead.path)
        out = scratch_reap.reap(state)
        assert out['errors'] == [] and [r['run_dir'] for r in out['reaped']] == [dead.path]
        assert sorted(out['reaped'][0]['removed']) == sorted([dead.file_path('a'), dead.file_path('b'), dead.path])
        assert out['kept'] == [{'run_dir': alive_key, 'reason': 'its owner still runs (pid %d)' % os.getpid()}]
        assert not os.path.exists(dead.path)
        assert list(state_store.read_record(state, 'scratch')) == [alive_key]
        # A new run holds the lease: a live run of another run is stopped first; here that would be this test
        # process, so only the decision is checked (check mode).
        checked = scratch_reap.reap(state, current='run-2', check_mode=True)
        assert 'not to run run-2 that holds the node now' in checked['reaped'][0]['reason']
    finally:
        alive.cleanup()


def test_the_reaper_kills_what_still_writes_a_dead_runs_files(tree, state):
    run = scratch.create(scratch.open_dir(str(tree / 'data')), 'dead', [('a', MIB)], state, owner=dead_owner())
    holder = subprocess.Popen(['sleep', '60'], pass_fds=run.fds())
    run.release()
    try:
        out = scratch_reap.reap(state)
        assert out['errors'] == [] and out['reaped'][0]['removed']
        holder.wait(timeout=10)
        assert holder.returncode == -9
    finally:
        if holder.poll() is None:
            holder.kill()
    assert os.listdir(str(tree / 'data')) == []


def test_the_reaper_leaves_alone_what_is_not_the_runs_own(tree, state):
    """Killed between the record and mkdir, or the name taken by someone else since: only a directory owned by
    the recorded uid with mode 0700 (and the recorded inode when there is one) is touched."""
    name = '.checkpoint_io.x.000000000000'
    owner = dead_owner()
    entry = {'parent': str(tree / 'user'), 'name': name, 'dev': None, 'ino': None, 'uid': 0,
             'files': {'rank_0.ckpt': None}, 'owner': owner, 'run_id': None}
    state_store.update(state, 'scratch', lambda old: {entry['parent'] + '/' + name: entry}, writer='test')
    os.mkdir(str(tree / 'user' / name), 0o755)
    os.chown(str(tree / 'user' / name), NOBODY.pw_uid, NOBODY.pw_gid)
    out = scratch_reap.reap(state)
    assert out['reaped'][0]['left'] == [
        "%s/%s: not the run's directory (owner uid %d, mode 0755), left alone" % (tree / 'user', name, NOBODY.pw_uid)]
    assert os.path.isdir(str(tree / 'user' / name)) and state_store.read_record(state, 'scratch') is None
    # The same record with the directory really made (root, 0700) and its file: removed.
    state_store.update(state, 'scratch', lambda old: {entry['parent'] + '/' + name: entry}, writer='test')
    os.rmdir(str(tree / 'user' / name))
    os.mkdir(str(tree / 'user' / name), 0o700)
    open(str(tree / 'user' / name / 'rank_0.ckpt'), 'w').close()
    out = scratch_reap.reap(state)
    assert out['reaped'][0]['left'] == [] and os.listdir(str(tree / 'user')) == []


def test_owner_alive_follows_pid_start_time_and_boot(tmp_path):
    me = scratch.process_owner()
    assert scratch.owner_alive(me)
    assert not scratch.owner_alive(dict(me, start='1'))
    assert not scratch.owner_alive(dict(me, boot_id='another boot'))
    assert not scratch.owner_alive(dead_owner())
    assert not scratch.owner_alive({'session': 999999999, 'boot_id': scratch.boot_id()})


def test_a_run_directory_renamed_away_before_it_is_opened_is_replaced_by_a_new_one(tree, state, monkeypatch):
    """The user's rename in the moment between mkdir and open (planting a symlink to /etc under the name): the
    run makes another directory, reports the swapped one and never writes through the name."""
    real_mkdir = os.mkdir
    swaps = []

    def mkdir_then_swap(name, mode=0o777, dir_fd=None):
        real_mkdir(name, mode, dir_fd=dir_fd)
        if not swaps and dir_fd is not None:  # the run directory (the state store's is made by path)
            os.rename(name, 'moved', src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            os.symlink('/etc', name, dir_fd=dir_fd)
            swaps.append(name)
    monkeypatch.setattr(scratch.os, 'mkdir', mkdir_then_swap)
    run = scratch.create(scratch.open_dir(str(tree / 'user')), 'x', [('rank_0.ckpt', MIB)], state)
    try:
        assert run.swapped == [str(tree / 'user' / swaps[0])] and run.safety()['swapped_run_dirs'] == run.swapped
        assert os.path.basename(run.path) != swaps[0] and os.path.isfile(run.file_path('rank_0.ckpt'))
        assert list(state_store.read_record(state, 'scratch')) == [run.path]
    finally:
        run.cleanup()
    left = sorted(os.listdir(str(tree / 'user')))
    assert left == sorted(['moved', swaps[0]]) and os.listdir(str(tree / 'user' / 'moved')) == []
    assert os.readlink(str(tree / 'user' / swaps[0])) == '/etc'


def test_a_removal_that_may_not_be_on_disk_keeps_the_record_for_the_reaper(tree, state, monkeypatch):
    """The fault suite's case: the checkpoint volume failed under the run (a drive left its RAID0); XFS took the
    removal in memory and lost it at the next mount. The record goes only once the parent's fsync succeeds, so a
    later run's reaper finds the directory again."""
    run = scratch.create(scratch.open_dir(str(tree / 'data')), 'before 1/1', [('rank_0.ckpt', MIB)], state,
                         owner=dead_owner())
    key = run.path

    def eio(_fd):
        raise OSError(5, os.strerror(5))
    monkeypatch.setattr(scratch, 'durable', eio)
    assert run.cleanup() == ['%s: %s; kept in the record, a later run removes it' % (key, os.strerror(5))]
    assert list(state_store.read_record(state, 'scratch')) == [key]
    # As after the reboot: the directory is back (the lost removal), the volume healthy again.
    os.mkdir(key, 0o700)
    with open(os.path.join(key, 'rank_0.ckpt'), 'w') as handle:
        handle.write('x')
    monkeypatch.undo()
    entry = state_store.read_record(state, 'scratch')[key]
    state_store.write_record(state, 'scratch', {key: dict(entry, ino=os.stat(key).st_ino,
                                                          files={'rank_0.ckpt': None})}, writer='test')
    out = scratch_reap.reap(state)
    assert out['errors'] == [] and [r['run_dir'] for r in out['reaped']] == [key], out
    assert not os.path.exists(key) and state_store.read_record(state, 'scratch') is None


def test_a_run_on_a_filesystem_not_mounted_now_is_kept_for_a_later_run(tree, state):
    run = scratch.create(scratch.open_dir(str(tree / 'data')), 'x', [('a', MIB)], state, owner=dead_owner())
    key = run.path
    run.release()
    os.rename(str(tree / 'data'), str(tree / 'data.unmounted'))  # the parent is not there: as before the mount
    out = scratch_reap.reap(state)
    assert out['errors'] == [] and out['reaped'] == [] and out['kept'][0]['run_dir'] == key
    assert 'kept for a later run' in out['kept'][0]['reason']
    assert list(state_store.read_record(state, 'scratch')) == [key]


def test_a_run_whose_filesystem_failed_or_is_not_mounted_now_keeps_its_record(tree, state, monkeypatch):
    """The fault suite's case again: a drive left the checkpoint volume's RAID0 while the write ran, XFS shut down,
    the worker's removal failed (record kept); the poll's reaper then meets EIO opening the parent, and after the
    reboot the mount point may still show the root filesystem's directory. Neither drops the record: a later run
    (the preflight reaper, the volume mounted again) removes the directory."""
    run = scratch.create(scratch.open_dir(str(tree / 'data')), 'after 1/1', [('rank_0.ckpt', MIB)], state,
                         owner=dead_owner())
    key = run.path
    run.release()

    def eio(_parts):
        raise OSError(5, os.strerror(5))
    monkeypatch.setattr(scratch, '_reopen', eio)
    out = scratch_reap.reap(state)
    assert out['reaped'] == [] and out['kept'][0]['run_dir'] == key and 'kept for a later run' in out['kept'][0]['reason']
    monkeypatch.undo()
    entry = state_store.read_record(state, 'scratch')[key]
    state_store.write_record(state, 'scratch', {key: dict(entry, parent_dev=entry['parent_dev'] + 1)}, writer='test')
    out = scratch_reap.reap(state)
    assert out['reaped'] == [] and 'another filesystem' in out['kept'][0]['reason'], out
    assert os.path.isdir(key)
    state_store.write_record(state, 'scratch', {key: entry}, writer='test')  # the volume mounted again
    out = scratch_reap.reap(state)
    assert [r['run_dir'] for r in out['reaped']] == [key] and not os.path.exists(key)
    assert state_store.read_record(state, 'scratch') is None
