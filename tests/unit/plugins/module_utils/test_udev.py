# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strings a drive, a target or a node controls, on their way into a udev rule (issue 31, finding 2)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import jinja2
import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.filter import udev as udev_filter
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import udev

from testenv import ROOT

HOSTILE = ['QEMU NVMe Ctrl\nACTION=="add", RUN+="/bin/sh -c id>/tmp/pwned"', 'S1"x', 'S1\\', 'S*', 'S?', 'S[0]',
           'a|b', 'tab\there', 'S\r', 'nul\x00', 'caf\u00e9', ' lead', 'trail ', '', None, ['S1'], 'x' * 513]


@pytest.mark.parametrize('value', HOSTILE)
def test_a_value_a_rule_cannot_carry_is_refused_naming_it(value):
    with pytest.raises(ValueError) as err:
        udev.match_value(value, 'serial')
    assert str(err.value).startswith('serial ')
    with pytest.raises(AnsibleFilterError, match='udev_match: serial'):
        udev_filter.udev_match(value, 'serial')


@pytest.mark.parametrize('value', ['S3EWNX0M123456', 'nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001',
                                   'eui.0025388b91c0d5a4', 'nqn.2026-12.io.checkpoint-io.lab:node1-data',
                                   'nqn.2014-08.org.nvmexpress:uuid:0f8fa2d6-6e4c-4e0b-9c6c-6a0c1e0a7f44', 1,
                                   'mq-deadline', 'WD Blue SN570 1TB'])
def test_real_identities_pass_unchanged(value):
    assert udev.match_value(value) == str(value)


def test_a_comment_holds_printable_ascii_only():
    assert udev.comment(HOSTILE[0]) == 'QEMU NVMe Ctrl?ACTION=="add", RUN+="/bin/sh -c id>/tmp/pwned"'
    assert udev.comment(None) == '' and udev.comment('caf\u00e9\r\n') == 'caf???'


def _render(drive, wanted):
    env = jinja2.Environment()
    env.filters['ai_storage.checkpoint_io.udev_match'] = udev_filter.udev_match
    env.filters['ai_storage.checkpoint_io.udev_comment'] = udev_filter.udev_comment
    path = os.path.join(ROOT, 'roles', 'block_layer', 'templates', '99-ai-storage-checkpoint-io-block.rules.j2')
    with open(path) as handle:
        template = env.from_string(handle.read())
    result = {'item': drive, 'order': ['scheduler', 'nr_requests'], 'wanted': wanted}
    return template.render(__block_layer_validation={'results': [result]})


def test_the_block_rule_template_writes_a_hostile_model_as_a_comment_and_refuses_a_hostile_match():
    drive = {'serial': 'DATA0001', 'model': HOSTILE[0], 'nsid': 1, 'wwid': 'eui.0025388b91c0d5a4'}
    text = _render(drive, {'scheduler': 'none', 'nr_requests': 256})
    rules = [line for line in text.splitlines() if line and not line.startswith('#')]
    assert rules == ['ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", '
                     'ATTR{wwid}=="eui.0025388b91c0d5a4", ATTR{queue/scheduler}="none", ATTR{queue/nr_requests}="256"']
    assert 'RUN+=' not in ''.join(rules)
    for key, value in (('wwid', 'eui.1"\nRUN+="x'), ('serial', 'S1\nRUN+="x"')):
        bad = dict(drive, **{key: value}) if key == 'wwid' else dict(drive, wwid=None, serial=value)
        with pytest.raises(AnsibleFilterError, match='udev_match: %s' % key):
            _render(bad, {'scheduler': 'none'})
