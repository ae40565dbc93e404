# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""facts/deepspeed_facts.py installed(): the training environment's DeepSpeed read from its packages' metadata, run
as a real process (this test's own Python, which has DeepSpeed in the test environment) and refused where the
path is not a Python."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess
import sys

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import deepspeed_facts


def _runner(argv, cwd):
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def _ctx():
    return Context(runner=_runner, which=lambda *a: None)


def test_the_versions_come_from_the_packages_metadata_without_importing_them():
    found = deepspeed_facts.installed(_ctx(), sys.executable)
    try:
        from importlib.metadata import version
        expected = version('deepspeed')
    except Exception:
        expected = None
    assert found['version'] == expected and found['python'] == sys.executable
    assert found['fastpersist'] is (None if expected is None else True)
    assert (found['error'] is None) == (expected is not None)


def test_no_python_or_a_path_that_is_no_python_says_why():
    assert deepspeed_facts.installed(_ctx(), None)['error'] == 'no training Python given (checkpoint_io_deepspeed_python)'
    assert 'is not an executable file' in deepspeed_facts.installed(_ctx(), '/proc/version')['error']
    found = deepspeed_facts.installed(_ctx(), '/bin/false')
    assert found['version'] is None and found['error'].startswith('/bin/false could not read its packages')
