# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training user's checkpoint directory, made as root through no link (issue 31, finding 1)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import owned_dir

ME, MY_GROUP = os.geteuid(), os.getegid()


@pytest.fixture
def base(tmp_path):
    os.chmod(str(tmp_path), 0o755)
    mount = tmp_path / 'mnt'
    mount.mkdir(mode=0o755)
    return mount


def _mode(path):
    return stat.S_IMODE(os.lstat(str(path)).st_mode)


def test_two_levels_below_the_base_the_parent_is_root_s_and_the_last_the_user_s(base):
    path = base / 'team' / 'job'
    result = owned_dir.ensure(str(base), str(path), ME, MY_GROUP, 0o750)
    assert result['changed'] and result['created'] == [str(base / 'team'), str(path)] and result['before'] is None
    assert os.lstat(str(base / 'team')).st_uid == 0 and _mode(base / 'team') == 0o755
    assert _mode(path) == 0o750 and os.lstat(str(path)).st_uid == ME
    again = owned_dir.ensure(str(base), str(path), ME, MY_GROUP, 0o750)
    assert not again['changed'] and again['before'] == again['after']


def test_a_link_planted_as_the_checkpoint_directory_is_refused_and_its_target_untouched(base, tmp_path):
    """The attack of finding 1: the user owns team/ (made by an older run) or the directory, swaps job for a link."""
    etc = tmp_path / 'etc'
    etc.mkdir(mode=0o755)
    (base / 'team').mkdir(mode=0o755)
    os.symlink(str(etc), str(base / 'team' / 'job'))
    before = os.lstat(str(etc))
    with pytest.raises(owned_dir.OwnedDirError, match=r'team/job is a symlink'):
        owned_dir.ensure(str(base), str(base / 'team' / 'job'), ME, MY_GROUP, 0o700)
    after = os.lstat(str(etc))
    assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)


def test_a_link_on_the_way_is_refused(base, tmp_path):
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    os.symlink(str(elsewhere), str(base / 'team'))
    with pytest.raises(owned_dir.OwnedDirError, match=r'mnt/team is a symlink'):
        owned_dir.ensure(str(base), str(base / 'team' / 'job'), ME, MY_GROUP, 0o750)
    assert os.listdir(str(elsewhere)) == []


def test_a_parent_others_can_write_is_refused(base):
    (base / 'team').mkdir()
    os.chmod(str(base / 'team'), 0o777)
    with pytest.raises(owned_dir.OwnedDirError, match=r'team is writable by its group or every user \(mode 0777\)'):
        owned_dir.ensure(str(base), str(base / 'team' / 'job'), ME, MY_GROUP, 0o750)
    assert os.listdir(str(base / 'team')) == []


def test_a_parent_another_user_owns_is_refused_naming_it():
    info = os.stat_result((stat.S_IFDIR | 0o755, 0, 0, 2, 1000, 1000, 0, 0, 0, 0))
    assert 'belongs to uid 1000' in owned_dir._parent_problem('/mnt/checkpoints/team', info)
    assert owned_dir._parent_problem('/x', os.stat_result((stat.S_IFDIR | 0o1777, 0, 0, 2, 0, 0, 0, 0, 0, 0))) is None


def test_check_mode_changes_nothing_and_says_what_it_would_make(base):
    path = base / 'team' / 'job'
    result = owned_dir.ensure(str(base), str(path), ME, MY_GROUP, 0o750, check_mode=True)
    assert result['changed'] and result['created'] == [str(base / 'team'), str(path)]
    assert os.listdir(str(base)) == []
    path.parent.mkdir()
    path.mkdir(mode=0o700)
    result = owned_dir.ensure(str(base), str(path), ME, MY_GROUP, 0o750, check_mode=True)
    assert result['changed'] and result['before']['mode'] == '0700' and _mode(path) == 0o700


def test_an_existing_directory_gets_its_mode_by_descriptor(base):
    (base / 'job').mkdir(mode=0o777)
    os.chmod(str(base / 'job'), 0o777)
    result = owned_dir.ensure(str(base), str(base / 'job'), ME, MY_GROUP, 0o750)
    assert result['changed'] and result['before']['mode'] == '0777' and _mode(base / 'job') == 0o750


@pytest.mark.parametrize('path, message', [
    ('/other/job', 'is neither'), ('/mn', 'is neither'), ('/mnt/../etc', 'holds . or ..'),
    ('relative', 'is not an absolute path')])
def test_a_path_not_below_the_base_is_refused(path, message):
    with pytest.raises(owned_dir.OwnedDirError, match=message):
        owned_dir.components('/mnt', path)


def test_a_file_in_the_way_is_refused(base):
    (base / 'team').write_text('x')
    with pytest.raises(owned_dir.OwnedDirError, match='exists and is not a directory'):
        owned_dir.ensure(str(base), str(base / 'team' / 'job'), ME, MY_GROUP, 0o750)


def test_the_base_itself_gets_its_owner_and_mode_by_descriptor(base):
    os.chmod(str(base), 0o755)
    result = owned_dir.ensure(str(base), str(base), ME, MY_GROUP, 0o750)
    assert result['changed'] and result['created'] == [] and result['before']['mode'] == '0755'
    assert _mode(base) == 0o750
    assert not owned_dir.ensure(str(base), str(base) + '/', ME, MY_GROUP, 0o750)['changed']
