# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""checkpoint_io_record: write, keep, merge, remove; check mode writes nothing; refusals name the file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_io_lock, checkpoint_io_record

from helpers import module_args


def run(capsys, sdir, main=checkpoint_io_record.main, check=False, diff=False, **params):
    args = dict(params, state_dir=sdir, _ansible_check_mode=check, _ansible_diff=diff)
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            main()
    return exc.value.code, json.loads(capsys.readouterr().out)


@pytest.fixture
def sdir(tmp_path):
    return str(tmp_path / 'state')


def test_check_mode_reports_the_record_and_writes_nothing(capsys, sdir):
    rc, out = run(capsys, sdir, check=True, diff=True, name='baseline', data={'where': 'none'})
    assert rc == 0 and out['changed'] is True and out['record'] == {'where': 'none'}
    assert out['diff']['after'] == {'where': 'none'} and out['diff']['before'] == {}
    assert not os.path.exists(sdir)


def test_write_keep_merge_and_remove(capsys, sdir):
    rc, out = run(capsys, sdir, name='settings_before', data={'queue_depth': 8}, keep=True, writer='tune')
    assert rc == 0 and out['changed'] and out['kept'] is False
    rc, out = run(capsys, sdir, name='settings_before', data={'queue_depth': 32}, keep=True)
    assert rc == 0 and out['changed'] is False and out['kept'] is True and out['record'] == {'queue_depth': 8}
    run(capsys, sdir, name='depth_sweep', data={'a': 1}, merge=True)
    rc, out = run(capsys, sdir, name='depth_sweep', data={'b': 2}, merge=True)
    assert out['changed'] and out['record'] == {'a': 1, 'b': 2} and out['previous'] == {'a': 1}
    rc, out = run(capsys, sdir, name='depth_sweep', data={'b': 2}, merge=True)
    assert out['changed'] is False  # nothing new: not rewritten
    assert state_store.read_record(sdir, 'settings_before', with_meta=True)[1]['writer'] == 'tune'
    rc, out = run(capsys, sdir, check=True, name='depth_sweep', state='absent')
    assert out['changed'] is True and os.path.exists(os.path.join(sdir, 'depth_sweep.json'))
    rc, out = run(capsys, sdir, name='depth_sweep', state='absent')
    assert out['changed'] is True and not os.path.exists(os.path.join(sdir, 'depth_sweep.json'))
    rc, out = run(capsys, sdir, name='depth_sweep', state='absent')
    assert rc == 0 and out['changed'] is False


@pytest.mark.parametrize('params, message', [
    ({'name': '../passwd', 'data': {}}, "record name '../passwd' is not valid"),
    ({'name': 'xfs'}, 'state is present but all of the following are missing: data'),
    ({'name': 'xfs', 'data': {}, 'keep': True, 'merge': True}, 'mutually exclusive'),
])
def test_bad_input_is_refused_naming_it(capsys, sdir, params, message):
    rc, out = run(capsys, sdir, **params)
    assert rc == 1 and message in out['msg'], out['msg']
    assert not os.path.exists(sdir)


def test_a_damaged_record_is_refused_and_kept(capsys, sdir):
    os.makedirs(sdir)
    with open(os.path.join(sdir, 'xfs.json'), 'w') as handle:
        handle.write('{')
    rc, out = run(capsys, sdir, name='xfs', data={'state': 'present'})
    assert rc == 1 and 'xfs.json is not valid JSON' in out['msg']
    with open(os.path.join(sdir, 'xfs.json')) as handle:
        assert handle.read() == '{'


def test_lock_module_limits_and_release_of_another_run(capsys, sdir):
    rc, out = run(capsys, sdir, main=checkpoint_io_lock.main, run_id='a', ttl=10)
    assert rc == 1 and 'ttl: 10 is out of range (60 to 604800 seconds)' in out['msg']
    rc, out = run(capsys, sdir, main=checkpoint_io_lock.main, run_id='a', owner={'user': 'alice'})
    assert rc == 0 and out['changed'] is False and out['lease']['user'] == 'alice'
    rc, out = run(capsys, sdir, main=checkpoint_io_lock.main, run_id='b', state='released')
    assert rc == 0 and out['holder']['run_id'] == 'a'  # b cannot give a's lease back
    assert state_store.lease_holder(sdir)['run_id'] == 'a'
