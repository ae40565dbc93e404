# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin with the real module and ansible-playbook, on this machine (connection local, read-only).

Two gathers with different subsets in a row: both sections are there after the second, each with its time;
``merge: false`` replaces the fact.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from helpers import run_playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ai_storage.checkpoint_io.checkpoint_io_facts:
        gather_subset: [io_uring]
        fio_probe: false
    - ai_storage.checkpoint_io.checkpoint_io_facts:
        gather_subset: [deepspeed]
        deepspeed_configs: [{config}]
    - ansible.builtin.copy:
        dest: {out}/merged.json
        content: "{{{{ ansible_facts.checkpoint_io | to_json }}}}"
    - ai_storage.checkpoint_io.checkpoint_io_facts:
        gather_subset: [deepspeed]
        deepspeed_configs: [{config}]
        merge: false
    - ansible.builtin.copy:
        dest: {out}/replaced.json
        content: "{{{{ ansible_facts.checkpoint_io | to_json }}}}"
"""


def test_two_subsets_in_a_row_keep_both_sections(tmp_path):
    config = tmp_path / 'ds_config.json'
    config.write_text('{"aio": {"queue_depth": 16}}')
    play = tmp_path / 'play.yml'
    play.write_text(PLAY.format(config=config, out=tmp_path))
    rc, out = run_playbook(play)
    assert rc == 0, out[-3000:]
    merged = json.loads((tmp_path / 'merged.json').read_text())
    assert merged['gather_subset'] == ['io_uring', 'deepspeed']
    assert merged['last_gather_subset'] == ['deepspeed']
    assert 'allowed_for_user' in merged['io_uring'] or 'errors' in merged['io_uring']
    assert merged['deepspeed']['configs'][0]['path'] == str(config)
    assert sorted(merged['gathered_at']) == ['deepspeed', 'io_uring']
    assert merged['gathered_at']['io_uring'] <= merged['gathered_at']['deepspeed']
    replaced = json.loads((tmp_path / 'replaced.json').read_text())
    assert replaced['gather_subset'] == ['deepspeed'] and 'io_uring' not in replaced
