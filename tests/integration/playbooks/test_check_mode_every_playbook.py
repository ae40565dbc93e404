# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every playbook of playbooks/ in check mode on this machine (localhost, connection local): each goes through
(rc 0, no host failed), prints no warning that the collection does not support this ansible-core, and leaves the
controller as it was. This machine has no NVMe drive: the tune playbook's check run goes through the facts, the
plan (written on the controller: what a check run is for), the baseline's, fabric's and gds's plays, and stops
where a real run on such a node stops, at the first layer that needs a data drive, with the message that says so
and nothing changed. A playbook added to playbooks/ without its entry in RUNS fails here.

The suite's own ansible-core runs this file in the integration tier; tests/core_matrix.sh runs it with each other
minor that meta/runtime.yml's requires_ansible claims, from that minor's venv (the ansible-playbook beside the
interpreter that runs pytest)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import struct
import subprocess
import sys

import pytest
from ansible.release import __version__ as CORE

from testenv import ROOT

sys.path.insert(0, os.path.join(ROOT, 'tests', 'bench'))
import fleet_cache  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOKS = os.path.join(ROOT, 'playbooks')
# ansible-core 2.16-2.18 render an unset (null) value as '' unless jinja2_native is on: the collection needs it there
# (roles/preflight/tasks/templating.yml refuses a node without it), and 2.19 has no such option (it warns when set)
OLD_CORE = tuple(int(part) for part in CORE.split('.')[:2]) < (2, 19)
NATIVE = {'ANSIBLE_JINJA2_NATIVE': 'True'} if OLD_CORE else {}


def _safetensors(path):
    """A one-tensor safetensors file (4 float32 values), written here: the compression playbook's input."""
    data = struct.pack('<4f', 0.5, -1.25, 3.0, 0.0)
    header = json.dumps({'w': {'dtype': 'F32', 'shape': [4], 'data_offsets': [0, len(data)]}}).encode()
    header += b' ' * (-len(header) % 8)
    with open(path, 'wb') as handle:
        handle.write(struct.pack('<Q', len(header)) + header + data)


def _tune(base):
    state = os.path.join(base, 'state')
    os.mkdir(state, 0o700)
    # a model pattern matching no drive here (a fleet's): the check run plans and changes nothing on this machine
    return {'checkpoint_io_state_dir': state, 'checkpoint_io_data_drives': {'models': ['^NONE$']}}


def _compression(base):
    path = os.path.join(base, 'ckpt', 'model.safetensors')
    os.mkdir(os.path.dirname(path))
    _safetensors(path)
    return {'checkpoint_io_compression_paths': [path], 'checkpoint_io_compression_write_bandwidth': 100}


def _fleet_report(base):
    cache = os.path.join(base, 'cache')
    fleet_cache.write_cache(cache, 2, lab=True)
    return {'fleet_report_source': 'cache', 'fleet_report_cache_dir': cache,
            'fleet_report_dir': os.path.join(base, 'work', 'fleet')}


# playbook: (its extra variables, made in a scratch directory; what its check run prints when it went through)
NO_DRIVE = 'checkpoint_io_data_drives selects no data drive (unmatched: model ^NONE$; refused: none). Nothing was changed.'
RUNS = {
    'tune_checkpoint_nodes.yml': (_tune, NO_DRIVE),
    'verify_checkpoint_write.yml': (lambda base: {}, 'Checkpoint-write verification'),
    'compression_readiness.yml': (_compression, 'Compression readiness'),
    'fleet_report.yml': (_fleet_report, 'check mode: not written'),
}


def _tree(path):
    return sorted(os.path.relpath(os.path.join(d, name), path) for d, dirs, files in os.walk(path)
                  for name in dirs + files)


def test_every_playbook_has_its_check_run():
    found = sorted(name for name in os.listdir(PLAYBOOKS) if name.endswith('.yml'))
    assert found == sorted(RUNS), 'a playbook without its check-mode run here (or one gone): %s' % found


def _check_run(tmp_path, playbook, native=True):
    """(rc, output, the PLAY RECAP's match, what the run added below tmp_path) of a check run."""
    make_extra, _expected = RUNS[playbook]
    base = str(tmp_path)
    work = os.path.join(base, 'work')
    os.mkdir(work)
    extra = dict(make_extra(base), checkpoint_io_hosts='localhost',
                 checkpoint_io_report_dir=os.path.join(work, 'reports'))
    before = _tree(base)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='linear',
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0', PWD=work)
    env.pop('ANSIBLE_JINJA2_NATIVE', None)
    env.update(NATIVE if native else {})
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    proc = subprocess.run([binary, '-i', 'localhost,', '-c', 'local', os.path.join(PLAYBOOKS, playbook), '--check',
                           '-e', json.dumps(extra)], env=env, cwd=work, capture_output=True, text=True, check=False,
                          timeout=600)
    out = proc.stdout + proc.stderr
    recap = re.search(r'^localhost\s+: ok=(\d+)\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)', out, re.M)
    return proc.returncode, out, recap, [path for path in _tree(base) if path not in before]


@pytest.mark.parametrize('playbook', sorted(RUNS))
def test_check_mode_on_localhost(tmp_path, playbook):
    expected = RUNS[playbook][1]
    version = 'ansible-core %s%s' % (CORE, ', jinja2_native' if OLD_CORE else '')
    rc, out, recap, after = _check_run(tmp_path, playbook)
    assert recap and recap.group(2) == '0' and int(recap.group(1)) > 0, out[-4000:]
    assert expected in ' '.join(out.split()), '%s (%s):\n%s' % (playbook, version, out[-4000:])
    if playbook == 'tune_checkpoint_nodes.yml':
        # no drive here: the plays before the layers went through, the io_uring engine's refused, nothing else failed
        plays = re.findall(r'^PLAY \[(.*?)\] \*', out, re.M)
        assert plays[:5] == ['Checkpoint I/O facts before tuning', 'Checkpoint write before tuning (first run on a '
                             'node only)', 'NVMe over Fabrics initiators (nvmeof_rdma)', 'GPUDirect Storage (gds)',
                             'Async I/O engine (io_uring)'], plays
        assert (rc, recap.group(3), out.count('fatal: [')) == (2, '1', 1), out[-4000:]
    else:
        assert (rc, recap.group(3)) == (0, '0'), '%s (%s): rc %d\n%s' % (playbook, version, rc, out[-4000:])
    # 2.16 printed this on every command while requires_ansible said >=2.17
    assert 'does not support Ansible version' not in out, out[-4000:]
    # the controller as it was, but for the plan the tune playbook writes for each node
    if playbook == 'tune_checkpoint_nodes.yml':
        assert 'work/reports/plan/localhost.json' in after, after
        after = [path for path in after if path not in ('work/reports', 'work/reports/plan',
                                                        'work/reports/plan/localhost.json')]
    assert after == [], '%s wrote on the controller in check mode: %s' % (playbook, after)


@pytest.mark.parametrize('playbook', sorted(RUNS))
def test_without_jinja2_native(tmp_path, playbook):
    """2.16-2.18 without jinja2_native: each playbook refuses the node at its first task, saying what to set, and
    nothing else runs. 2.19 has no such mode: the run is the one above."""
    rc, out, recap, after = _check_run(tmp_path, playbook, native=False)
    if not OLD_CORE:
        assert (rc, recap.group(3)) == ((2, '1') if playbook == 'tune_checkpoint_nodes.yml' else (0, '0')), out[-4000:]
        return
    assert rc == 2 and recap and recap.group(3) == '1', out[-4000:]
    flat = ' '.join(out.split())
    assert ("ansible-core %s renders an unset (null) value as an empty string unless jinja2_native is on" % CORE) in flat, flat[-3000:]
    assert 'set ANSIBLE_JINJA2_NATIVE=True' in flat and 'Nothing was changed.' in flat
    # refused first: before the check only argument-spec validations and the includes that lead to it ran
    tasks = re.findall(r'^TASK \[(.*?)\]', out[:out.index('fatal: [')], re.M)
    assert 'Refuse ansible-core 2.16-2.18 without jinja2_native' in tasks[-1], tasks
    assert all('Validating arguments' in task for task in tasks[:-1] if task.startswith('ai_storage.')), tasks
    assert after == [], after
