# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/compression_readiness.yml on this machine (connection local) with a generated checkpoint: the write
bandwidth comes from the verification's report on the controller (<report_dir>/verify/<node>.json, its
after-tuning median), the result is written to <report_dir>/compression/<node>.json and shown as one line; an
explicit bandwidth wins over the report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from checkpoints import make_checkpoints
from testenv import ROOT
from helpers import run_playbook

PLAYBOOK = os.path.join(ROOT, 'playbooks', 'compression_readiness.yml')
SUMMARY = os.path.join(ROOT, 'playbooks', 'templates', 'summary.j2')


@pytest.fixture(scope='module')
def ckpts(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp('ckpt'), hidden=128)


def _run(tmp_path, ckpts, **more):
    reports = tmp_path / 'reports'
    (reports / 'verify').mkdir(parents=True, exist_ok=True)
    (reports / 'verify' / 'localhost.json').write_text(json.dumps({'after': {'throughput_gib_s': {'median': 1.5}}}))
    extra = dict({'checkpoint_io_hosts': 'localhost', 'checkpoint_io_report_dir': str(reports),
                  'checkpoint_io_compression_paths': [ckpts[4]['torch']],
                  'checkpoint_io_compression_previous': [ckpts[3]['torch']],
                  'checkpoint_io_compression_roots': [os.path.dirname(os.path.dirname(ckpts[4]['torch']))]}, **more)
    rc, out = run_playbook(PLAYBOOK, '-e', json.dumps(extra))
    assert rc == 0, out[-3000:]
    with open(str(reports / 'compression' / 'localhost.json')) as handle:
        return json.load(handle), out


def test_bandwidth_from_the_verification_report(tmp_path, ckpts):
    result, out = _run(tmp_path, ckpts)
    projection = result['projection']
    assert projection['write_mib_s'] == 1536.0
    assert result['write_source'].endswith('verify/localhost.json')
    assert projection['write_bound_mib_s'] == pytest.approx(1536.0 * projection['ratio'], abs=0.1)
    assert result['delta']['matched_tensors'] > 0
    assert '-bound: write 1536.0 MiB/s' in out and 'delta bf16 x' in out


def test_an_explicit_bandwidth_wins(tmp_path, ckpts):
    result, _out = _run(tmp_path, ckpts, checkpoint_io_compression_write_bandwidth=800)
    assert result['projection']['write_mib_s'] == 800.0
    assert result['write_source'] == 'checkpoint_io_compression_write_bandwidth'


def summary_playbook(tmp_path, variables, first=None):
    """A playbook that renders the tune playbook's summary on localhost with ``variables`` (after ``first``)."""
    playbook = tmp_path / 'summary.yml'
    playbook.write_text(
        ('- ansible.builtin.import_playbook: %s\n' % first if first else '') +
        '- hosts: localhost\n'
        '  gather_facts: false\n'
        '  tasks:\n'
        '    - ansible.builtin.debug:\n'
        '        msg: "{{ lookup(\'ansible.builtin.template\', \'%s\') | from_yaml }}"\n'
        '      vars: %s\n' % (SUMMARY, json.dumps(variables)))
    return playbook


def test_the_summary_shows_the_line(tmp_path, ckpts):
    playbook = summary_playbook(tmp_path, {'ansible_facts': {'checkpoint_io': {}}}, PLAYBOOK)
    extra = {'checkpoint_io_hosts': 'localhost', 'checkpoint_io_report_dir': str(tmp_path / 'reports'),
             'checkpoint_io_compression_paths': [ckpts[4]['weights']], 'checkpoint_io_compression_write_bandwidth': 10}
    rc, out = run_playbook(str(playbook), '-e', json.dumps(extra))
    assert rc == 0, out[-3000:]
    assert "compression: 'huffman: bf16 x" in out, out[-3000:]
    assert 'write-bound: write 10.0 MiB/s' in out


def test_check_mode_writes_nothing_on_the_controller(tmp_path, ckpts):
    """Issue 31, finding 10: --check measured and then wrote <report_dir>/compression/<node>.json (the two tasks
    forced check_mode: false); now the report directory is as it was."""
    reports = tmp_path / 'reports'
    (reports / 'verify').mkdir(parents=True)
    (reports / 'verify' / 'localhost.json').write_text(json.dumps({'after': {'throughput_gib_s': {'median': 1.5}}}))
    before = sorted(str(p.relative_to(reports)) for p in reports.rglob('*'))
    extra = {'checkpoint_io_hosts': 'localhost', 'checkpoint_io_report_dir': str(reports),
             'checkpoint_io_compression_paths': [ckpts[4]['torch']],
             'checkpoint_io_compression_roots': [os.path.dirname(os.path.dirname(ckpts[4]['torch']))]}
    rc, out = run_playbook(PLAYBOOK, '--check', '-e', json.dumps(extra))
    assert rc == 0, out[-3000:]
    assert sorted(str(p.relative_to(reports)) for p in reports.rglob('*')) == before


def test_the_summary_shows_what_the_run_wrote_to_each_drive(tmp_path):
    """The summary's run_writes: the change of each drive's sectors written since the first play's facts, its
    share of the drive's rated endurance (checkpoint_io_drive_endurance) and the life SMART counts."""
    def facts(sectors):
        return {'nvme': {'controllers': [{'name': 'nvme1', 'serial': 'DATA0001', 'namespaces': ['nvme1n1'],
                                          'io_queues': 2}],
                         'namespaces': [{'name': 'nvme1n1', 'wwid': 'eui.1', 'controllers': ['nvme1'],
                                         'size_bytes': 3840 * 10 ** 9}]},
                'thermal': {'controllers': [{'name': 'nvme1', 'data_units_written': 40 * 10 ** 6,
                                             'percentage_used': 1}]},
                'block': {'devices': [{'name': 'nvme1n1', 'sectors_written': sectors, 'scheduler': 'none',
                                       'nr_requests': 1023, 'read_ahead_kb': 128}]}}
    playbook = summary_playbook(tmp_path, {'ansible_facts': {'checkpoint_io': facts(4096 + 3 * 2097152)},
                                           'checkpoint_io_before': facts(4096)})
    rc, out = run_playbook(str(playbook))
    assert rc == 0, out[-3000:]
    flat = ' '.join(out.split())  # the callback wraps long lines
    assert 'DATA0001 (nvme1n1) 3.00 GiB written; 20.5 TB written in its life (SMART); the drive counts 1%' in flat, \
        out[-3000:]
    # 1 DWPD over 5 years of the namespace's 3.84 TB: 7008 TB rated
    inputs = {'values': {'checkpoint_io_drive_endurance': {'default': {'dwpd': 1}}}}
    playbook = summary_playbook(tmp_path, {'ansible_facts': {'checkpoint_io': facts(4096 + 3 * 2097152)},
                                           'checkpoint_io_before': facts(4096), 'checkpoint_io_inputs': inputs})
    rc, out = run_playbook(str(playbook))
    assert rc == 0, out[-3000:]
    assert ('DATA0001 (nvme1n1) 3.00 GiB written; 4.6e-05% of its rated 7.01e+03 TB (dwpd default); 20.5 TB '
            'written in its life (SMART), 0.29% of the rating') in ' '.join(out.split()), out[-3000:]
