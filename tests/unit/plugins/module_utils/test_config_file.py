# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/common/config_file.py: a user's config file that root rewrites, on real files, links and directories.

The tests run as root (as the modules do on a node) and play the training user with a numeric uid that owns
directories and files (chown needs no passwd entry), so every refusal and every swap is the real kernel's answer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.config_file import (
    ConfigFileError,
    open_config,
)

USER = 4242      # the training user (no passwd entry needed)
OTHER = 4343     # another user

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='plays root and other users with chown')


@pytest.fixture
def tree(tmp_path):
    """<tmp>/root-only/ (root, 0755), <tmp>/home/ (root) and <tmp>/home/train (the training user's, 0755)."""
    base = tmp_path / 'tree'
    (base / 'root-only').mkdir(parents=True)
    (base / 'home' / 'train').mkdir(parents=True)
    os.chown(str(base / 'home' / 'train'), USER, USER)
    for path in (base, base / 'root-only', base / 'home', base / 'home' / 'train'):
        os.chmod(str(path), 0o755)
    return base


def _file(path, text, uid=0, mode=0o644):
    path.write_text(text)
    os.chown(str(path), uid, uid)
    os.chmod(str(path), mode)
    return str(path)


def _refused(path, fragments, **kwargs):
    with pytest.raises(ConfigFileError) as exc:
        open_config(str(path), what='ds_config', **kwargs).close()
    for fragment in fragments:
        assert fragment in str(exc.value), str(exc.value)
    return str(exc.value)


def test_a_users_file_in_the_users_directory_is_read_and_replaced_by_rename(tree):
    path = _file(tree / 'home' / 'train' / 'ds.json', '{"a": 1}\n', uid=USER, mode=0o640)
    before = os.stat(path)
    config = open_config(path, what='ds_config')
    try:
        assert config.exists and config.text == '{"a": 1}\n' and config.owner == USER
        # the training user's own directory (and /tmp, sticky, above the test's tree) is reported, with how the
        # write is made safe against it
        assert str(tree / 'home' / 'train') in [c['path'] for c in config.safety()['writable_components']]
        assert 'never written through it' in config.safety()['made_safe_by']
        config.write('{"a": 2}\n')
        assert config.read_back() == '{"a": 2}\n'
    finally:
        config.close()
    after = os.stat(path)
    assert after.st_ino != before.st_ino  # a new file renamed over the name
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (USER, USER, 0o640)


def test_a_link_planted_at_the_name_after_the_open_is_replaced_not_written_through(tree):
    victim = _file(tree / 'root-only' / 'shadow', 'root secrets\n', mode=0o600)
    path = _file(tree / 'home' / 'train' / 'ds.json', '{}\n', uid=USER)
    config = open_config(path)
    try:
        # the training user swaps the name for a link to a root file between the read and the write
        os.unlink(path)
        os.symlink(victim, path)
        config.write('{"aio": {}}\n')
    finally:
        config.close()
    with open(victim) as handle:
        assert handle.read() == 'root secrets\n'
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o600 and os.stat(victim).st_uid == 0
    assert not os.path.islink(path)
    with open(path) as handle:
        assert handle.read() == '{"aio": {}}\n'


def test_a_directory_swapped_after_the_open_does_not_redirect_the_write(tree):
    job = tree / 'home' / 'train' / 'job'
    job.mkdir()
    os.chown(str(job), USER, USER)
    path = _file(job / 'ds.json', '{}\n', uid=USER)
    config = open_config(path)
    try:
        # the user moves the job directory away and points its name at a root-only directory
        os.rename(str(job), str(tree / 'home' / 'train' / 'moved'))
        os.symlink(str(tree / 'root-only'), str(job))
        config.write('{"b": 1}\n')
    finally:
        config.close()
    assert os.listdir(str(tree / 'root-only')) == []
    with open(str(tree / 'home' / 'train' / 'moved' / 'ds.json')) as handle:
        assert handle.read() == '{"b": 1}\n'


def test_a_symlink_is_refused_unless_followed_naming_the_link_and_its_target(tree):
    real = _file(tree / 'root-only' / 'ds.json', '{}\n')
    link = tree / 'root-only' / 'link.json'
    os.symlink('ds.json', str(link))
    message = _refused(link, ['ds_config %s is a symlink to ds.json (%s)' % (link, real),
                              'set follow_symlinks: true'])
    assert 'never writes through a link' in message
    config = open_config(str(link), follow_symlinks=True)
    try:
        assert config.real == real and config.link == {'path': str(link), 'target': 'ds.json'}
    finally:
        config.close()


def test_a_link_a_user_planted_is_followed_only_to_that_users_files(tree):
    victim = _file(tree / 'root-only' / 'ds.json', '{"root": true}\n')
    link = tree / 'home' / 'train' / 'ds.json'
    os.symlink(victim, str(link))
    os.lchown(str(link), USER, USER)
    _refused(link, ['its owner', 'who owns %s' % victim], follow_symlinks=True)
    own = _file(tree / 'home' / 'train' / 'mine.json', '{}\n', uid=USER)
    os.unlink(str(link))
    os.symlink('mine.json', str(link))
    config = open_config(str(link), follow_symlinks=True)
    try:
        assert config.real == own
    finally:
        config.close()


@pytest.mark.parametrize('mode, who', [(0o777, 'everyone'), (0o1777, 'everyone'), (0o775, 'group gid 4343')])
def test_a_directory_others_can_write_is_refused(tree, mode, who):
    shared = tree / 'home' / 'shared'
    shared.mkdir()
    os.chown(str(shared), USER, OTHER)
    os.chmod(str(shared), mode)
    path = _file(shared / 'ds.json', '{}\n', uid=USER)
    message = _refused(path, ['%s (owner uid %d, mode %04o) can be written by ' % (shared, USER, mode),
                              'another user could swap the config'])
    assert who in message.split(' can be written by ', 1)[1]


def test_two_users_on_the_path_is_refused(tree):
    # a file of one user in another user's directory: both can swap it
    path = _file(tree / 'home' / 'train' / 'ds.json', '{}\n', uid=OTHER)
    _refused(path, ['%s (owner uid %d' % (tree / 'home' / 'train', USER), 'its owner uid %d' % USER])


def test_a_sticky_directory_above_the_files_directory_is_fine(tree):
    tmp = tree / 'tmp'
    tmp.mkdir()
    os.chmod(str(tmp), 0o1777)
    job = tmp / 'job'
    job.mkdir()
    os.chown(str(job), USER, USER)
    path = _file(job / 'ds.json', '{}\n', uid=USER)
    open_config(path).close()


@pytest.mark.parametrize('make, what', [
    (os.mkdir, 'a directory'),
    (os.mkfifo, 'a FIFO'),
])
def test_not_a_regular_file_is_refused(tree, make, what):
    path = str(tree / 'root-only' / 'ds.json')
    make(path)
    _refused(path, ['ds_config %s is %s, not a regular file' % (path, what)])


def test_a_hard_linked_or_non_utf8_file_is_refused(tree):
    path = _file(tree / 'root-only' / 'ds.json', '{}\n')
    os.link(path, str(tree / 'root-only' / 'other-name'))
    _refused(path, ['%s has 2 hard links' % path])
    os.unlink(str(tree / 'root-only' / 'other-name'))
    with open(path, 'wb') as handle:
        handle.write(b'{"a": "\xff"}')
    _refused(path, ['%s is not UTF-8 text (byte 7)' % path])


def test_missing_files_and_directories(tree):
    path = tree / 'root-only' / 'ds.json'
    _refused(path, ['ds_config %s does not exist: check the path (a mistyped name is not created); set create: true'
                    % path])
    deep = tree / 'root-only' / 'a' / 'b' / 'ds.json'
    _refused(deep, ['nor its directory %s' % deep.parent, 'set create: true'])
    config = open_config(str(deep), create=True)
    try:
        assert not config.exists and config.missing_dirs == ['a', 'b'] and config.real == str(deep)
        assert not os.path.exists(str(deep.parent.parent))  # nothing made before the write
        config.write('{}\n')
    finally:
        config.close()
    assert deep.read_text() == '{}\n' and stat.S_IMODE(os.stat(str(deep.parent)).st_mode) == 0o755
    # under a directory the training user can write, missing directories are not made
    _refused(tree / 'home' / 'train' / 'x' / 'ds.json', ['does not exist', 'create the directory first'],
             create=True)
    assert not os.path.exists(str(tree / 'home' / 'train' / 'x'))


def test_remove_takes_only_the_file_it_read(tree):
    path = _file(tree / 'root-only' / 'ds.json', '{}\n')
    config = open_config(path)
    keep = os.open(path, os.O_RDONLY)  # the old inode stays allocated, so the new file cannot reuse its number
    try:
        os.unlink(path)
        _file(tree / 'root-only' / 'ds.json', '{"someone": "else"}\n')
        with pytest.raises(ConfigFileError) as exc:
            config.remove()
        assert 'changed since it was read' in str(exc.value)
    finally:
        os.close(keep)
        config.close()
    assert os.path.exists(path)
    config = open_config(path)
    try:
        assert config.remove() is True
    finally:
        config.close()
    assert not os.path.exists(path)


def test_the_atomic_writer_sets_the_mode_by_descriptor(tree, monkeypatch):
    """In a directory the training user can write, the writer's temporary file can be swapped for a link between
    its creation and the chmod: the mode must be set on the descriptor, never by name."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import atomic_file
    victim = _file(tree / 'root-only' / 'shadow', 'secret\n', mode=0o600)
    home = str(tree / 'home' / 'train')
    real_fsync = os.fsync

    def swap_then_fsync(fd):
        for name in os.listdir(home):
            if name.startswith('.ds.json.'):
                os.rename(os.path.join(home, name), os.path.join(home, 'kept-by-the-user'))
                os.symlink(victim, os.path.join(home, name))
        return real_fsync(fd)
    monkeypatch.setattr(atomic_file.os, 'fsync', swap_then_fsync)
    atomic_file.write_atomic(os.path.join(home, 'ds.json'), '{}\n', mode=0o644)
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o600


def test_the_owner_is_set_by_descriptor_so_a_hard_link_swapped_in_takes_nothing(tree, monkeypatch):
    """Issue 31, finding 4: the user's ds_config is rewritten as the user's. Where fs.protected_hardlinks=0 the user
    can replace the writer's temporary name with a hard link to /etc/shadow before the chown: a chown by name then
    hands the root file to the user. The owner must be set on the descriptor, before the name can be swapped."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import atomic_file
    victim = _file(tree / 'home' / 'shadow', 'secret\n', mode=0o600)  # same filesystem: a hard link can be made
    path = _file(tree / 'home' / 'train' / 'ds.json', '{"a": 1}\n', uid=USER, mode=0o640)
    home = str(tree / 'home' / 'train')
    real_fsync = os.fsync

    def swap_then_fsync(fd):
        for name in os.listdir(home):
            if name.startswith('.ds.json.'):
                os.unlink(os.path.join(home, name))
                os.link(victim, os.path.join(home, name))
        return real_fsync(fd)
    config = open_config(path, what='ds_config')
    try:
        monkeypatch.setattr(atomic_file.os, 'fsync', swap_then_fsync)
        config.write('{"a": 2}\n')
    finally:
        monkeypatch.undo()
        config.close()
    info = os.stat(victim)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o600)
