# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The io_uring facts' fio probe writes nothing, ever, check mode included (issue 12): the real facts module with
the host's real fio, the temporary directory it would have used watched before and after."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_io_facts

from helpers import module_args, require_tool


def watched(path):
    info = os.stat(path)
    return sorted(os.listdir(path)), info.st_mtime_ns, info.st_ctime_ns


@pytest.mark.parametrize('check_mode', [True, False])
def test_the_fio_probe_proves_io_uring_and_writes_nothing(tmp_path, monkeypatch, capsys, check_mode):
    require_tool('fio')
    tmp = tmp_path / 'tmp'
    tmp.mkdir()
    cwd = tmp_path / 'cwd'
    cwd.mkdir()
    monkeypatch.setenv('TMPDIR', str(tmp))
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp))
    monkeypatch.chdir(str(cwd))
    before = watched(str(tmp)), watched(str(cwd))
    with module_args(dict(gather_subset=['io_uring'], fio_probe=True, _ansible_check_mode=check_mode)):
        with pytest.raises(SystemExit) as exc:
            checkpoint_io_facts.main()
    out = json.loads(capsys.readouterr().out)
    assert exc.value.code == 0, out
    section = out['ansible_facts']['checkpoint_io']['io_uring']
    # The result keys stay; on this host io_uring works (the probe's reads went through it).
    assert section['fio_io_uring_works'] is True and section['fio_probe_error'] is None, section
    assert (watched(str(tmp)), watched(str(cwd))) == before, 'the probe wrote a file'
