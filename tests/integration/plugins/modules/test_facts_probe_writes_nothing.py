# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The io_uring facts' fio probe writes nothing, ever, check mode included (issue 12): the real facts module with
the host's real fio, the temporary directory it would have used watched before and after."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import tempfile
import uuid

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import boot_cache
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_io_facts

from helpers import module_args, require_tool


@pytest.fixture
def probe_cache(monkeypatch):
    """The probe's per-boot cache in a directory of /run of this test's own (removed after it)."""
    name = 'checkpoint_io_test_%s' % uuid.uuid4().hex
    monkeypatch.setattr(boot_cache, 'DIRECTORY', name)
    yield os.path.join('/run', name)
    shutil.rmtree(os.path.join('/run', name), ignore_errors=True)


def gather(capsys, check_mode):
    with module_args(dict(gather_subset=['io_uring'], fio_probe=True, _ansible_check_mode=check_mode)):
        with pytest.raises(SystemExit) as exc:
            checkpoint_io_facts.main()
    out = json.loads(capsys.readouterr().out)
    assert exc.value.code == 0, out
    return out['ansible_facts']['checkpoint_io']['io_uring']


def watched(path):
    info = os.stat(path)
    return sorted(os.listdir(path)), info.st_mtime_ns, info.st_ctime_ns


@pytest.mark.parametrize('check_mode', [True, False])
def test_the_fio_probe_proves_io_uring_and_writes_nothing(tmp_path, monkeypatch, capsys, check_mode, probe_cache):
    require_tool('fio')
    tmp = tmp_path / 'tmp'
    tmp.mkdir()
    cwd = tmp_path / 'cwd'
    cwd.mkdir()
    monkeypatch.setenv('TMPDIR', str(tmp))
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp))
    monkeypatch.chdir(str(cwd))
    before = watched(str(tmp)), watched(str(cwd))
    section = gather(capsys, check_mode)
    # The result keys stay; on this host io_uring works (the probe's reads went through it).
    assert section['fio_io_uring_works'] is True and section['fio_probe_error'] is None, section
    assert section['fio_probe_cached'] is False
    assert (watched(str(tmp)), watched(str(cwd))) == before, 'the probe wrote a file'


def test_the_probe_runs_once_a_boot(probe_cache, capsys):
    """Check mode keeps nothing; a real gather keeps the probe in /run (root's, 0700/0600), the next reads it."""
    require_tool('fio')
    assert gather(capsys, True)['fio_probe_cached'] is False and not os.path.exists(probe_cache)
    first = gather(capsys, False)
    assert first['fio_probe_cached'] is False
    assert oct(os.stat(probe_cache).st_mode & 0o777) == '0o700'
    assert oct(os.stat(os.path.join(probe_cache, 'io_uring_probe.json')).st_mode & 0o777) == '0o600'
    again = gather(capsys, True)
    assert again['fio_probe_cached'] is True
    assert [again[k] for k in ('fio_version', 'fio_io_uring_works', 'fio_probe_error')] == [
        first[k] for k in ('fio_version', 'fio_io_uring_works', 'fio_probe_error')]
