# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the fleet report may be written (issue 31, finding 5): the directory and every ancestor checked."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.ai_storage.checkpoint_io.plugins.modules import fleet_report as module


def test_a_private_directory_and_a_new_one_below_it_are_accepted(tmp_path):
    (tmp_path / 'r').mkdir(mode=0o755)
    os.chmod(str(tmp_path), 0o755)
    assert module.out_dir_problem(str(tmp_path / 'r')) is None
    assert module.out_dir_problem(str(tmp_path / 'r' / 'new' / 'deeper')) is None


def test_a_directory_its_group_or_others_can_write_is_refused_even_sticky(tmp_path):
    out = tmp_path / 'r'
    out.mkdir()
    for mode in (0o775, 0o757, 0o1777):
        os.chmod(str(out), mode)
        problem = module.out_dir_problem(str(out))
        assert 'is writable by its group or every user (mode %o)' % mode in problem, problem


def test_an_ancestor_others_can_write_is_refused_unless_sticky(tmp_path):
    shared = tmp_path / 'shared'
    shared.mkdir()
    (shared / 'r').mkdir(mode=0o755)
    os.chmod(str(shared), 0o777)
    problem = module.out_dir_problem(str(shared / 'r'))
    assert problem == "out_dir: its ancestor %r is writable by its group or every user (mode 777) without the " \
                      "sticky bit" % str(shared)
    assert 'its ancestor %r' % str(shared) in module.out_dir_problem(str(shared / 'new'))  # one yet to be made
    os.chmod(str(shared), 0o1777)  # as /tmp: others cannot rename or remove what is not theirs
    assert module.out_dir_problem(str(shared / 'r')) is None


def test_a_link_as_the_directory_is_refused_and_an_ancestor_link_is_judged_where_it_leads(tmp_path):
    real = tmp_path / 'real'
    (real / 'r').mkdir(parents=True)
    os.symlink(str(real / 'r'), str(tmp_path / 'link'))
    assert 'is a symlink' in module.out_dir_problem(str(tmp_path / 'link'))
    os.symlink(str(real), str(tmp_path / 'via'))
    assert module.out_dir_problem(str(tmp_path / 'via' / 'r')) is None
    os.chmod(str(real), 0o777)
    assert 'its ancestor %r' % str(real) in module.out_dir_problem(str(tmp_path / 'via' / 'r'))


def _info(uid, mode):
    return os.stat_result((stat.S_IFDIR | mode, 0, 0, 2, uid, 0, 0, 0, 0, 0))


def test_a_directory_another_user_owns_is_refused():
    me = os.geteuid()
    other = 4242 if me != 4242 else 4343
    assert module._owner_problem('/x', _info(me, 0o755), 'the directory') is None
    assert module._owner_problem('/x', _info(0, 0o755), 'its ancestor') is None
    assert module._owner_problem('/x', _info(other, 0o700), 'its ancestor') == \
        "out_dir: its ancestor '/x' belongs to uid %d, not to this user (uid %d) or root" % (other, me)
