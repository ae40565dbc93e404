# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Root reads no ds_config through a link the training user planted (issue 31, finding 15)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import deepspeed_facts

USER = 4242
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='plays the training user with chown')


@pytest.fixture
def home(tmp_path):
    os.chmod(str(tmp_path), 0o755)
    (tmp_path / 'root-only').mkdir(mode=0o755)
    (tmp_path / 'train').mkdir(mode=0o755)
    os.chown(str(tmp_path / 'train'), USER, USER)
    return tmp_path


def test_a_link_the_user_planted_to_a_root_json_file_is_not_read(home):
    victim = home / 'root-only' / 'secret.json'
    victim.write_text(json.dumps({'aio': {'queue_depth': 4096}, 'token': 'root only'}))
    link = home / 'train' / 'ds_config.json'
    os.symlink(str(victim), str(link))
    os.lchown(str(link), USER, USER)
    facts = deepspeed_facts.config_facts(str(link))
    assert facts['parse_error'] and 'who owns %s' % victim in facts['parse_error'], facts['parse_error']
    assert facts['aio']['queue_depth'] != 4096  # the defaults, not the root file's keys


def test_the_users_own_file_and_a_root_link_to_a_root_file_are_read(home):
    own = home / 'train' / 'mine.json'
    own.write_text(json.dumps({'aio': {'queue_depth': 32}}))
    os.chown(str(own), USER, USER)
    assert deepspeed_facts.config_facts(str(own))['aio']['queue_depth'] == 32
    site = home / 'root-only' / 'site.json'
    site.write_text(json.dumps({'aio': {'queue_depth': 64}}))
    os.symlink('site.json', str(home / 'root-only' / 'current.json'))
    facts = deepspeed_facts.config_facts(str(home / 'root-only' / 'current.json'))
    assert facts['parse_error'] is None and facts['aio']['queue_depth'] == 64
