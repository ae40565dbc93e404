# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The facts' NVMe admin commands through the passthrough ioctl (issue 13): the ioctl first (Context.nvme_admin,
an injected reader here), nvme-cli only where the ioctl is refused, a drive's NVMe status reported as an error,
the nvme-cli note only where neither answered; Get Features 07h (Number of Queues) sent with the ioctl."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import struct

import pytest

from checkpoint_io_fake_node import ID_CTRL, build_node, make_context, num_queues, smart_log, standard_runner

from ansible.module_utils import basic

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import nvme_cli, nvme_ioctl
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import (
    node_facts,
    nvme_facts,
    thermal_facts,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_io_facts

from helpers import module_args

CONTROLLERS = ('nvme0', 'nvme1', 'nvme2', 'nvme3', 'nvme4')
LOGS = ('id-ctrl', 'num-queues', 'smart-log')


@pytest.fixture
def node(tmp_path):
    return build_node(tmp_path)


def _by_name(items):
    return dict((item['name'], item) for item in items)


class FakeAdmin(object):
    """Context's admin_reader: answers as the ioctl would (mdts 5 and 3 queue pairs, unlike the fake nvme-cli's
    mdts 7 and 8, so the facts tell who answered), or raises what ``fail`` maps (log, controller) to."""

    def __init__(self, fail=None):
        self.fail = dict(fail or {})
        self.calls = []

    def __call__(self, log, dev_path):
        ctrl = os.path.basename(dev_path)
        self.calls.append((log, dev_path))
        for key in ((log, ctrl), (log, None), (None, ctrl), (None, None)):
            if key in self.fail:
                raise self.fail[key]
        if log == 'id-ctrl':
            return nvme_cli.parse_id_ctrl(json.dumps(dict(ID_CTRL, sn=ctrl.upper(), mdts=5)))
        if log == 'smart-log':
            return nvme_cli.parse_smart_log(smart_log(temperature=330, thm1=2, warning_time=4))
        if log == 'num-queues':
            return nvme_cli.parse_get_feature_num_queues(nvme_ioctl.num_queues_text(0x00020002))
        raise AssertionError(log)


def refusal(code=errno.EACCES):
    return nvme_ioctl.NvmeIoctlError('/dev/nvme0: %s' % os.strerror(code), errno_value=code)


def drive_status(status=0x4002):
    return nvme_ioctl.NvmeIoctlError('admin command 0x02: the controller answered status 0x%x' % status,
                                     status=status)


def _inventory(node, admin, runner=None, use_nvme_cli=True, logs=LOGS):
    runner = runner or standard_runner(node)
    ctx = make_context(node, runner, admin_reader=admin)
    inv = nvme_facts.NvmeInventory(ctx, use_nvme_cli=use_nvme_cli)
    inv.prefetch(list(logs))
    return ctx, inv, runner


def _admin_cli_calls(runner):
    return [c for c in runner.calls if c[0] == '/usr/sbin/nvme' and c[1] != 'version']


# ----------------------------------------------------------------------------- ioctl first
def test_the_ioctl_answers_and_nvme_cli_is_never_spawned_for_those_logs(node):
    admin = FakeAdmin()
    ctx, inv, runner = _inventory(node, admin)
    assert _admin_cli_calls(runner) == []
    assert sorted(admin.calls) == sorted((log, os.path.join(node.dev, ctrl)) for log in LOGS for ctrl in CONTROLLERS)
    section = nvme_facts.collect(ctx, inv)
    assert section['errors'] == []
    c1 = _by_name(section['controllers'])['nvme1']
    assert c1['mdts_bytes'] == 32 * 4096 and c1['io_queues_feature'] == 3
    assert c1['admin_source'] == {'id_ctrl': 'ioctl', 'num_queues': 'ioctl'}
    assert section['nvme_cli'] == {'path': '/usr/sbin/nvme', 'version': '2.3'}  # still reported when installed
    thermal = thermal_facts.collect(ctx, inv)
    assert thermal['errors'] == []
    t1 = _by_name(thermal['controllers'])['nvme1']
    assert t1['smart_log_temp_c'] == 57 and t1['warning_temp_time_min'] == 4 and t1['throttle_history'] is True
    assert t1['wctemp_c'] == 70


def test_a_whole_gather_sends_each_command_once_and_spawns_only_nvme_version(node):
    admin = FakeAdmin()
    runner = standard_runner(node)
    ctx = make_context(node, runner, admin_reader=admin)
    node_facts.gather_facts(ctx, {'gather_subset': ['nvme', 'block', 'thermal'], 'use_nvme_cli': True})
    assert len(admin.calls) == len(set(admin.calls)) == len(LOGS) * len(CONTROLLERS)
    assert [c[1:] for c in runner.calls if c[0] == '/usr/sbin/nvme'] == [['version']]


def test_refused_ioctl_falls_back_to_nvme_cli(node):
    admin = FakeAdmin(fail={(None, None): refusal()})
    ctx, inv, runner = _inventory(node, admin)
    for sub in ('id-ctrl', 'smart-log', 'get-feature'):
        for ctrl in CONTROLLERS:
            assert runner.count(sub, os.path.join(node.dev, ctrl)) == 1, (sub, ctrl)
    section = nvme_facts.collect(ctx, inv)
    assert section['errors'] == []
    c1 = _by_name(section['controllers'])['nvme1']
    assert c1['mdts_bytes'] == 524288 and c1['io_queues_feature'] == 8  # nvme-cli's answers
    assert c1['admin_source'] == {'id_ctrl': 'nvme-cli', 'num_queues': 'nvme-cli'}


@pytest.mark.parametrize('code', [errno.EPERM, errno.EACCES, errno.ENOTTY, errno.EINVAL, errno.EOPNOTSUPP])
def test_every_refusal_errno_falls_back(node, code):
    admin = FakeAdmin(fail={('num-queues', 'nvme2'): refusal(code)})
    ctx, inv, runner = _inventory(node, admin)
    assert _admin_cli_calls(runner) == [['/usr/sbin/nvme', 'get-feature', os.path.join(node.dev, 'nvme2'), '-f', '7']]
    c2 = _by_name(nvme_facts.collect(ctx, inv)['controllers'])['nvme2']
    assert c2['admin_source'] == {'id_ctrl': 'ioctl', 'num_queues': 'nvme-cli'} and c2['io_queues_feature'] == 8


def test_a_reader_that_breaks_counts_as_refused(node):
    admin = FakeAdmin(fail={('id-ctrl', 'nvme0'): RuntimeError('no fcntl here')})
    ctx, inv, runner = _inventory(node, admin)
    assert runner.count('id-ctrl', os.path.join(node.dev, 'nvme0')) == 1
    assert inv.source('nvme0', 'id-ctrl') == 'nvme-cli'


def test_a_drive_status_is_an_error_and_nvme_cli_is_not_asked(node):
    admin = FakeAdmin(fail={('smart-log', 'nvme1'): drive_status()})
    ctx, inv, runner = _inventory(node, admin)
    assert runner.count('smart-log', os.path.join(node.dev, 'nvme1')) == 0
    thermal = thermal_facts.collect(ctx, inv)
    assert thermal['errors'] == ['nvme1: smart-log (ioctl): admin command 0x02: the controller answered status 0x4002']
    ctrls = _by_name(thermal['controllers'])
    assert ctrls['nvme1']['critical_warning'] is None and ctrls['nvme1']['wctemp_c'] == 70
    assert ctrls['nvme0']['smart_log_temp_c'] == 57
    assert inv.source('nvme1', 'smart-log') is None


def test_a_gone_controller_is_an_error_not_a_fallback(node):
    gone = nvme_ioctl.NvmeIoctlError('/dev/nvme3: No such file or directory', errno_value=errno.ENOENT)
    admin = FakeAdmin(fail={(None, 'nvme3'): gone})
    ctx, inv, runner = _inventory(node, admin)
    assert runner.count(os.path.join(node.dev, 'nvme3')) == 0
    section = nvme_facts.collect(ctx, inv)
    assert 'nvme3: id-ctrl (ioctl): /dev/nvme3: No such file or directory' in section['errors']
    assert _by_name(section['controllers'])['nvme3']['admin_source'] == {'id_ctrl': None, 'num_queues': None}


def test_parser_errors_of_an_ioctl_answer_are_reported(node):
    def admin(log, dev_path):
        return nvme_cli.parse_get_feature_num_queues('') if log == 'num-queues' else FakeAdmin()(log, dev_path)
    ctx, inv, _runner = _inventory(node, admin)
    errors = nvme_facts.collect(ctx, inv)['errors']
    assert 'nvme0: num-queues (ioctl): _input: empty input' in errors


# ----------------------------------------------------------------------------- without nvme-cli
def test_no_nvme_cli_but_the_ioctl_works_gives_full_facts_and_no_note(node):
    runner = standard_runner(node, bins={'nvme': None})
    ctx, inv, runner = _inventory(node, FakeAdmin(), runner=runner)
    assert inv.cli_note() is None
    section = nvme_facts.collect(ctx, inv)
    assert section['errors'] == [] and section['nvme_cli'] == {'path': None, 'version': None}
    c0 = _by_name(section['controllers'])['nvme0']
    assert c0['mdts_bytes'] == 131072 and c0['io_queues_feature'] == 3
    assert thermal_facts.collect(ctx, inv)['errors'] == []
    assert runner.calls == []


def test_no_nvme_cli_and_the_ioctl_refused_gives_the_note_with_the_reason(node):
    runner = standard_runner(node, bins={'nvme': None})
    ctx, inv, runner = _inventory(node, FakeAdmin(fail={(None, None): refusal()}), runner=runner)
    section = nvme_facts.collect(ctx, inv)
    assert section['errors'] == [
        'nvme-cli (nvme) not found in PATH and the NVMe admin ioctl refused (/dev/nvme0: Permission denied): '
        'id-ctrl and get-feature facts are None']
    assert _by_name(section['controllers'])['nvme0']['mdts_bytes'] is None
    assert thermal_facts.collect(ctx, inv)['errors'] == [
        'nvme-cli (nvme) not found in PATH and the NVMe admin ioctl refused (/dev/nvme0: Permission denied): '
        'id-ctrl and smart-log facts are None']
    assert runner.calls == []


def test_no_nvme_cli_and_only_get_feature_refused_names_only_it(node):
    runner = standard_runner(node, bins={'nvme': None})
    admin = FakeAdmin(fail={('num-queues', None): refusal(errno.EINVAL)})
    ctx, inv, runner = _inventory(node, admin, runner=runner)
    section = nvme_facts.collect(ctx, inv)
    assert section['errors'] == ['nvme-cli (nvme) not found in PATH and the NVMe admin ioctl refused '
                                 '(/dev/nvme0: Invalid argument): get-feature facts are None']
    c0 = _by_name(section['controllers'])['nvme0']
    assert c0['mdts_bytes'] == 131072 and c0['io_queues_feature'] is None
    assert thermal_facts.collect(ctx, inv)['errors'] == []  # the thermal facts need no get-feature


def test_use_nvme_cli_false_sends_no_admin_command_at_all(node):
    admin = FakeAdmin()
    ctx, inv, runner = _inventory(node, admin, use_nvme_cli=False)
    section = nvme_facts.collect(ctx, inv)
    thermal = thermal_facts.collect(ctx, inv)
    assert admin.calls == [] and _admin_cli_calls(runner) == []
    assert section['errors'] == [] and thermal['errors'] == []
    c0 = _by_name(section['controllers'])['nvme0']
    assert c0['mdts_bytes'] is None and c0['admin_source'] == {'id_ctrl': None, 'num_queues': None}


# ----------------------------------------------------------------------------- Context.nvme_admin
def test_context_sends_the_ioctl_only_under_the_real_dev(node, monkeypatch):
    seen = []
    monkeypatch.setitem(context.NVME_ADMIN_READERS, 'smart-log', lambda path: seen.append(path) or {'ok': 1})
    fixture = context.Context(devfs_root=node.dev)
    with pytest.raises(nvme_ioctl.NvmeIoctlError) as exc:
        fixture.nvme_admin('smart-log', os.path.join(node.dev, 'nvme0'))
    assert nvme_ioctl.refused(exc.value) and 'is not /dev' in str(exc.value)
    real = context.Context(devfs_root='/dev/')
    assert real.nvme_admin('smart-log', '/dev/nvme0') == {'ok': 1} and seen == ['/dev/nvme0']
    with pytest.raises(nvme_ioctl.NvmeIoctlError) as exc:
        real.nvme_admin('sanitize-log', '/dev/nvme0')
    assert nvme_ioctl.refused(exc.value)
    injected = context.Context(devfs_root=node.dev, admin_reader=lambda log, path: (log, path))
    assert injected.nvme_admin('id-ctrl', 'x') == ('id-ctrl', 'x')


def test_context_readers_are_nvme_ioctls():
    assert context.NVME_ADMIN_READERS == {'smart-log': nvme_ioctl.read_smart_log,
                                          'id-ctrl': nvme_ioctl.read_id_ctrl,
                                          'num-queues': nvme_ioctl.read_num_queues}


# ----------------------------------------------------------------------------- Get Features 07h
def _fake_ioctl(result=0, status=0, seen=None):
    def ioctl(fd, request, cmd, mutate):
        assert request == nvme_ioctl.NVME_IOCTL_ADMIN_CMD and mutate is True
        fields = nvme_ioctl.PASSTHRU.unpack(bytes(cmd))
        if seen is not None:
            seen.append(fields)
        struct.pack_into('<I', cmd, nvme_ioctl.PASSTHRU.size - 4, result)  # the kernel writes the completion dword 0
        return status
    return ioctl


def test_number_of_queues_is_get_features_07h_without_data(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(nvme_ioctl.fcntl, 'ioctl', _fake_ioctl(result=0x00070003, seen=seen))
    dev = tmp_path / 'nvme0'
    dev.write_bytes(b'')
    parsed = nvme_ioctl.read_num_queues(str(dev))
    assert parsed == {'submission_queues': 4, 'completion_queues': 8, 'raw': 0x00070003, 'errors': {}}
    (fields,) = seen
    assert fields[0] == 0x0A and fields[3] == 0            # opcode Get Features, no namespace
    assert fields[7] == 0 and fields[9] == 0               # no data buffer
    assert fields[10] == 0x07                              # CDW10: FID 07h, SEL 0 (current)
    # the same value as nvme-cli prints it parses the same
    assert nvme_cli.parse_get_feature_num_queues(num_queues('0x00070003')) == parsed


def test_number_of_queues_status_is_a_drive_error_not_a_refusal(tmp_path, monkeypatch):
    monkeypatch.setattr(nvme_ioctl.fcntl, 'ioctl', _fake_ioctl(status=0x2))
    dev = tmp_path / 'nvme0'
    dev.write_bytes(b'')
    with pytest.raises(nvme_ioctl.NvmeIoctlError) as exc:
        nvme_ioctl.read_num_queues(str(dev))
    assert exc.value.status == 2 and not nvme_ioctl.refused(exc.value)
    assert str(exc.value) == 'admin command 0x0a: the controller answered status 0x2'


def test_number_of_queues_on_a_device_that_is_no_nvme_controller_says_to_fall_back():
    with pytest.raises(nvme_ioctl.NvmeIoctlError) as exc:
        nvme_ioctl.read_num_queues('/dev/null')
    assert nvme_ioctl.refused(exc.value)


def test_the_data_commands_still_return_their_buffer(tmp_path, monkeypatch):
    monkeypatch.setattr(nvme_ioctl.fcntl, 'ioctl', _fake_ioctl(result=0xDEAD))
    dev = tmp_path / 'nvme0'
    dev.write_bytes(b'')
    fd = os.open(str(dev), os.O_RDONLY)
    try:
        assert nvme_ioctl.admin(fd, nvme_ioctl.OPC_IDENTIFY, 0, nvme_ioctl.CNS_CONTROLLER, 4096) == bytes(4096)
        assert nvme_ioctl.admin_result(fd, nvme_ioctl.OPC_GET_FEATURES, 0, 7) == 0xDEAD
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------- the module's warning
@pytest.fixture
def module_commands(node, monkeypatch):
    runner = standard_runner(node, bins={'nvme': None})
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path',
                        lambda self, arg, required=False, opt_dirs=None: runner.which(arg, opt_dirs))
    monkeypatch.setattr(basic.AnsibleModule, 'run_command',
                        lambda self, args, check_rc=False, cwd=None, environ_update=None, **kw: runner.run(args, cwd))
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, 'warn', lambda self, msg: warnings.append(msg))
    runner.warnings = warnings
    return runner


def _run_module(node, capsys):
    args = {'sysfs_root': node.sys, 'procfs_root': node.proc, 'devfs_root': node.dev, 'etc_root': node.etc,
            'gather_subset': ['nvme', 'thermal']}
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            checkpoint_io_facts.main()
    assert exc.value.code == 0
    return json.loads(capsys.readouterr().out)['ansible_facts']['checkpoint_io']


def test_module_warns_of_no_nvme_cli_only_when_the_ioctl_is_refused_too(node, module_commands, capsys, monkeypatch):
    facts = _run_module(node, capsys)  # fixture devfs_root: no ioctl, no nvme-cli
    assert [w for w in module_commands.warnings if w.startswith('nvme-cli (nvme) is not installed')]
    assert facts['nvme']['errors'][0].startswith(nvme_facts.CLI_NOTE_PREFIX)
    del module_commands.warnings[:]
    monkeypatch.setattr(context.Context, 'nvme_admin', lambda self, log, dev_path: FakeAdmin()(log, dev_path))
    facts = _run_module(node, capsys)
    assert module_commands.warnings == []
    assert facts['nvme']['errors'] == [] and facts['thermal']['errors'] == []
    assert _by_name(facts['nvme']['controllers'])['nvme0']['admin_source'] == {'id_ctrl': 'ioctl',
                                                                               'num_queues': 'ioctl'}
