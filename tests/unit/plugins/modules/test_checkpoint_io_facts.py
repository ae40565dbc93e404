# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End-to-end tests of the checkpoint_io_facts module on a fake node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from checkpoint_io_fake_node import build_node, standard_runner

from ansible.module_utils import basic

from ansible_collections.ai_storage.checkpoint_io.plugins.doc_fragments.state_store import (
    ModuleDocFragment as StateStoreFragment,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_io_facts

from helpers import module_args


@pytest.fixture
def node(tmp_path):
    return build_node(tmp_path)


@pytest.fixture
def fake_commands(node, monkeypatch):
    """Route the module's get_bin_path / run_command to the table-driven fake."""
    runner = standard_runner(node)
    seen_env = []

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        return runner.which(arg, opt_dirs)

    def run_command(self, args, check_rc=False, cwd=None, environ_update=None, **kwargs):
        seen_env.append(environ_update)
        return runner.run(args, cwd)

    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', get_bin_path)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    monkeypatch.delenv('CUFILE_ENV_PATH_JSON', raising=False)
    runner.seen_env = seen_env
    return runner


def run_module(capsys, args):
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            checkpoint_io_facts.main()
    out = json.loads(capsys.readouterr().out)
    return exc.value.code, out


def roots(node):
    return {'sysfs_root': node.sys, 'procfs_root': node.proc, 'devfs_root': node.dev, 'etc_root': node.etc}


def test_main_end_to_end_check_mode(node, fake_commands, capsys):
    args = dict(roots(node), _ansible_check_mode=True, training_user='trainer',
                checkpoint_paths=['/mnt/ckpt/run1'], state_dir=os.path.join(node.etc, 'no-state'))
    code, out = run_module(capsys, args)
    assert code == 0
    assert out['changed'] is False and not out.get('failed')
    facts = out['ansible_facts']['checkpoint_io']
    assert facts['gather_subset'] == ['nvme', 'block', 'thermal', 'io_uring', 'xfs', 'gds', 'deepspeed', 'state']
    assert facts['state']['exists'] is False and facts['state']['records'] == {}
    assert not os.path.exists(args['state_dir'])  # reading the state store makes nothing
    ns = dict((n['name'], n) for n in facts['nvme']['namespaces'])
    assert ns['nvme0n1']['is_os_drive'] is True
    assert [n for n in ns if not ns[n]['in_use_reason']] == ['nvme1n1', 'nvme2n1', 'nvme4n1']
    assert facts['thermal']['throttled_controllers'] == ['nvme2']
    assert facts['io_uring']['allowed_for_user'] is True
    assert facts['io_uring']['fio_io_uring_works'] is True
    assert facts['xfs']['filesystems'][0]['md']['members'] == ['nvme3n1']
    assert facts['gds']['path'] == 'unavailable'
    assert facts['gds']['path_reason'] == 'no NVIDIA GPU: /proc/driver/nvidia/gpus is empty'
    assert facts['deepspeed']['configs'] == []
    for section in ('nvme', 'block', 'thermal', 'io_uring', 'xfs', 'gds', 'deepspeed'):
        assert facts[section]['errors'] == [], (section, facts[section]['errors'])
    # every command ran with the C locale
    assert fake_commands.seen_env and all(env['LANG'] == 'C' and env['LC_ALL'] == 'C'
                                          for env in fake_commands.seen_env)


def test_main_subset_and_no_nvme_cli(node, fake_commands, capsys, monkeypatch):
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, 'warn', lambda self, msg: warnings.append(msg))
    args = dict(roots(node), gather_subset=['nvme', 'thermal'], use_nvme_cli=False)
    code, out = run_module(capsys, args)
    assert code == 0
    facts = out['ansible_facts']['checkpoint_io']
    assert sorted(facts) == ['gather_subset', 'gathered_at', 'nvme', 'schema_version', 'thermal']
    assert sorted(facts['gathered_at']) == ['nvme', 'thermal']
    assert fake_commands.calls == []
    assert warnings == []  # nvme-cli not asked for: nothing to warn about


def test_main_missing_tools_never_fail(node, fake_commands, capsys, monkeypatch):
    fake_commands.bins.clear()
    # the module's warnings as it gives them (how ansible-core carries them to the play depends on what else the
    # test process imported: a filter plugin's import routes them to the controller's display)
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, 'warn', lambda self, msg: warnings.append(msg))
    code, out = run_module(capsys, dict(roots(node)))
    assert code == 0 and out['changed'] is False
    facts = out['ansible_facts']['checkpoint_io']
    assert facts['nvme']['errors'] and 'not found' in facts['nvme']['errors'][0]
    # the play shows it: the facts fall back to sysfs, the tuning goes on, and what to install
    assert [w for w in warnings if w.startswith('nvme-cli (nvme) is not installed: the NVMe facts come from sysfs '
                                                'alone') and w.endswith('(apt-get install nvme-cli) for them.')], warnings
    assert facts['io_uring']['fio_probe_error'] == 'fio not found in PATH'
    assert facts['xfs']['errors'] == ['xfs_info not found in PATH: geometry facts are None']


def test_main_invalid_subset_fails(node, fake_commands, capsys):
    code, out = run_module(capsys, dict(roots(node), gather_subset=['nvme', 'disks']))
    assert code == 1 and out['failed'] is True
    assert 'gather_subset' in out['msg']


# ----------------------------------------------------------------------------- documentation
def _doc(name):
    return yaml.safe_load(getattr(checkpoint_io_facts, name))


def test_documentation_matches_argument_spec():
    options = dict(_doc('DOCUMENTATION')['options'])
    options.update(yaml.safe_load(StateStoreFragment.DOCUMENTATION)['options'])  # the state_dir doc fragment
    spec = checkpoint_io_facts.argument_spec()
    assert sorted(options) == sorted(spec)
    for name, arg in spec.items():
        doc = options[name]
        assert doc['type'] == arg['type'], name
        assert doc.get('default') == arg.get('default'), name
        assert doc.get('choices') == arg.get('choices'), name
        assert doc.get('elements') == arg.get('elements'), name


def test_documentation_attributes():
    doc = _doc('DOCUMENTATION')
    assert doc['version_added'] == '1.0.0'
    assert doc['attributes']['check_mode']['support'] == 'full'
    assert doc['attributes']['diff_mode']['support'] == 'none'
    assert doc['attributes']['facts']['support'] == 'full'
    assert doc['attributes']['platform']['platforms'] == 'linux'
    for key in ('author', 'short_description', 'description', 'notes', 'requirements'):
        assert doc[key], key
    assert _doc('EXAMPLES')


def _documented_paths(contains, prefix=''):
    paths = set()
    for key, spec in contains.items():
        path = prefix + key
        paths.add(path)
        if 'contains' in spec:
            paths |= _documented_paths(spec['contains'], path + '.')
    return paths


def _returned_paths(value, prefix=''):
    paths = set()
    if isinstance(value, dict):
        for key, sub in value.items():
            path = prefix + key
            paths.add(path)
            paths |= _returned_paths(sub, path + '.')
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                paths |= _returned_paths(item, prefix)
    return paths


# dicts whose keys are data (not schema): their inner keys are not documented one by one
FREE_FORM = ('.options.', '.critical_warning_bits.', '.properties.', '.aio.', '.aio_truthiness.',
             '.aio_defaults.', '.reads.', '.writes.', '.nvme_driver.', '.gdscheck.gpus.', '.gathered_at.')


def test_return_documents_every_key(node, fake_commands, capsys, tmp_path):
    ds = tmp_path / 'ds.json'
    ds.write_text('{"aio": {"num_threads": 4}}')
    _code, out = run_module(capsys, dict(roots(node), deepspeed_configs=[str(ds)],
                                         checkpoint_paths=['/mnt/ckpt']))
    returned = _returned_paths(out['ansible_facts'], 'ansible_facts.')
    ret = _doc('RETURN')
    documented = _documented_paths(ret)
    assert len(returned) > 150
    missing = sorted(p for p in returned - documented
                     if not any(marker in p + '.' for marker in FREE_FORM))
    assert missing == []
