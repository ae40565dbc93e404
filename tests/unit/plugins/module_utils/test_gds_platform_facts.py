# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gds facts' platform part (driver, kernel, CUDA, nvidia-fs modules, IOMMU, PCIe, override sources) read
from fake /proc, /sys, /etc and /boot trees (gds_fake), then the gds role's plan (gds_plan.role_plan) on the
collected section: the node kinds of the issue end to end."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import pwd

import pytest

from checkpoint_io_fake_node import link, write
from gds_fake import (
    ACS_REDIRECT,
    GPU,
    OPEN_570,
    PROPRIETARY_535,
    SWITCH_BRIDGES,
    collect,
    context,
    cuda,
    gdscheck_runner,
    gpu_node,
    iommu,
    kernel,
    node_at,
    nvidia_fs,
    pci_tree,
    plan,
    process_env,
    trainer_home,
)

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import gds_facts

P2PDMA_RELEASE = '6.8.0-51-generic'


@pytest.fixture
def node(tmp_path):
    """One GPU beside nvme0 under a PCIe switch, libcufile, the open driver 565, kernel 6.1 without P2PDMA."""
    return gpu_node(tmp_path)


def _check(result, name):
    return [check for check in result['checks'] if check['name'] == name][0]


# ----------------------------------------------------------------------------- the node kinds, facts -> mode
def test_nvidia_fs_node_gets_nvidia_fs_mode(node):
    nvidia_fs(node, '2.26.6')
    section = collect(node)
    assert section['driver'] == {'version': '565.57.01', 'open_kernel_module': True}
    assert section['nvidia_fs_version'] == '2.26.6' and section['nvidia_fs_modules'] == ['nvme']
    assert section['libcufile'] is True and section['path'] == 'dma'
    result = plan(section, policy='required')
    assert result['mode'] == 'nvidia-fs' and result['blockers']['nvidia-fs'] is None
    assert result['reason'] == 'nvidia_fs 2.26.6 is loaded with nvme registered'
    assert result['policy_failure'] is None and 'properties.use_pci_p2pdma' not in result['cufile']['set']


def test_p2pdma_node_gets_p2pdma_mode(tmp_path):
    node = gpu_node(tmp_path, OPEN_570, P2PDMA_RELEASE, p2pdma=True)
    cuda(node, '12.8.1')
    section = collect(node)
    assert section['kernel'] == {'release': P2PDMA_RELEASE, 'p2pdma': True}
    assert section['cuda_version'] == '12.8.1' and section['nvidia_fs_loaded'] is False
    result = plan(section, policy='required')
    assert result['mode'] == 'p2pdma' and result['blockers']['p2pdma'] is None
    assert result['cufile']['set']['properties.use_pci_p2pdma'] is True and result['policy_failure'] is None


def test_p2pdma_node_configured_for_p2pdma_reports_dma_path(tmp_path):
    """cufile.json with use_pci_p2pdma true on a P2PDMA node: cuFile DMAs without nvidia_fs, so the facts' path
    must not say compat because nvidia_fs is not loaded."""
    node = gpu_node(tmp_path, OPEN_570, P2PDMA_RELEASE, p2pdma=True)
    cuda(node, '12.8.1')
    write(os.path.join(node.etc, 'cufile.json'), '{"properties": {"use_pci_p2pdma": true}}')
    section = collect(node)
    assert plan(section)['mode'] == 'p2pdma'
    assert section['path'] == 'dma', section['path_reason']


@pytest.mark.parametrize('gdscheck', [True, False], ids=['gdscheck-says-unsupported', 'modules-file-only'])
def test_compat_only_node_is_unavailable_naming_the_registration(node, gdscheck):
    nvidia_fs(node, '2.26.6', modules=('nvme_rdma',))
    section = collect(node, gdscheck_runner(node, nvme='Unsupported') if gdscheck else None)
    assert section['nvidia_fs_modules'] == ['nvme_rdma']
    result = plan(section)
    assert result['mode'] == 'unavailable'
    assert 'nvidia_fs is loaded but the nvme driver is not registered with it' in result['reason']
    assert '(/proc/driver/nvidia-fs/modules lists nvme_rdma)' in result['reason']
    assert section['path'] == 'compat', section['path_reason']


@pytest.mark.parametrize('version, mode', [('2.20.5', 'unavailable'), ('2.15.1', 'nvidia-fs')])
def test_proprietary_module_with_nvidia_fs(tmp_path, version, mode):
    node = gpu_node(tmp_path, PROPRIETARY_535)
    nvidia_fs(node, version)
    section = collect(node)
    assert section['driver'] == {'version': '535.129.03', 'open_kernel_module': False}
    result = plan(section)
    assert result['mode'] == mode
    if mode == 'unavailable':
        assert 'proprietary' in result['reason'] and 'open kernel modules' in result['reason']


def test_no_gpu_node_is_unavailable_and_fails_required(tmp_path):
    section = collect(node_at(tmp_path))
    assert section['gpus'] == 0 and section['gpu_pci'] == []
    assert section['topology'] == {'pairs': [], 'bridges': []}
    result = plan(section, policy='required')
    assert result['mode'] == 'unavailable' and result['reason'].startswith('no NVIDIA GPU')
    assert result['reason'] in result['policy_failure']
    assert [check['status'] for check in result['checks']] == ['n/a', 'n/a', 'n/a']
    assert plan(section, policy='preferred')['policy_failure'] is None


# ----------------------------------------------------------------------------- overrides
UNIT = """[Service]
Environment="CUFILE_ENV_PATH_JSON=/opt/svc/cufile.json" "OMP_NUM_THREADS=8"
ExecStart=/usr/bin/python3 /opt/svc/train.py
"""


def test_override_files_list_each_path_once_with_its_source(node, monkeypatch):
    home = trainer_home(node, monkeypatch)
    write(os.path.join(node.etc, 'environment'), 'PATH="/usr/bin"\nCUFILE_ENV_PATH_JSON="/etc/cufile-train.json"')
    write(os.path.join(node.etc, 'systemd', 'system', 'train.service'), UNIT)
    write(os.path.join(home, '.bashrc'), 'export CUFILE_ENV_PATH_JSON=/home/trainer/cufile.json')
    process_env(node, 4242, 'python3', '/opt/job/cufile.json')
    process_env(node, 4243, 'torchrun', '/home/trainer/cufile.json')  # the same file again
    local = os.path.join(node.base, 'job', 'rank0', 'local_cufile.json')
    write(local, '{}')
    section = collect(node, job_dirs=[os.path.join(node.base, 'job')], training_user='trainer')
    assert plan(section)['overrides'] == [
        {'path': '/etc/cufile-train.json', 'source': 'CUFILE_ENV_PATH_JSON=/etc/cufile-train.json in %s'
                                                     % os.path.join(node.etc, 'environment')},
        {'path': '/opt/svc/cufile.json', 'source': 'CUFILE_ENV_PATH_JSON=/opt/svc/cufile.json in %s'
                                                   % os.path.join(node.etc, 'systemd', 'system', 'train.service')},
        {'path': '/home/trainer/cufile.json', 'source': 'CUFILE_ENV_PATH_JSON=/home/trainer/cufile.json in %s'
                                                        % os.path.join(home, '.bashrc')},
        {'path': '/opt/job/cufile.json', 'source': 'CUFILE_ENV_PATH_JSON=/opt/job/cufile.json in %s'
                                                   % os.path.join(node.proc, '4242', 'environ')},
        {'path': local, 'source': 'DeepSpeed local_cufile.json under a job directory'},
    ]
    assert any('a running process (python3)' in note for note in section['overrides']['notes'])


@pytest.mark.parametrize('name, text', [
    ('profile.d/cuda.sh', 'export CUFILE_ENV_PATH_JSON=/opt/cufile.json'),
    ('bash.bashrc', "export CUFILE_ENV_PATH_JSON='/opt/cufile.json'; export X=1"),
    ('systemd/system/train.service.d/gds.conf', '[Service]\nEnvironment=CUFILE_ENV_PATH_JSON=/opt/cufile.json'),
])
def test_env_sources_in_etc(node, name, text):
    write(os.path.join(node.etc, name), text)
    found = gds_facts.env_sources(context(node))
    assert [dict((k, item[k]) for k in ('source', 'path', 'value', 'trusted')) for item in found] == [
        {'source': 'file', 'path': os.path.join(node.etc, name), 'value': '/opt/cufile.json', 'trusted': True}]


def test_env_sources_do_not_follow_a_symlinked_home_file(node, monkeypatch):
    home = trainer_home(node, monkeypatch)
    elsewhere = os.path.join(node.base, 'elsewhere', 'bashrc')
    write(elsewhere, 'export CUFILE_ENV_PATH_JSON=/opt/elsewhere.json')
    link(os.path.join(home, '.bashrc'), elsewhere)
    write(os.path.join(home, '.profile'), 'export CUFILE_ENV_PATH_JSON=/opt/profile.json')
    found = gds_facts.env_sources(context(node), 'trainer')
    assert [item['value'] for item in found] == ['/opt/profile.json']
    assert gds_facts.env_sources(context(node), 'someone-else') == []


def test_env_sources_skip_commented_out_lines(node, monkeypatch):
    """A commented-out export sets nothing: reporting it makes gds_align_overrides edit a file no process reads."""
    home = trainer_home(node, monkeypatch)
    write(os.path.join(home, '.bashrc'), '# export CUFILE_ENV_PATH_JSON=/old/cufile.json\nalias ll="ls -l"')
    assert gds_facts.env_sources(context(node), 'trainer') == []


def test_home_of_users():
    me = pwd.getpwuid(os.getuid())
    assert gds_facts._home(me.pw_name) == me.pw_dir
    assert gds_facts._home('no-such-user-for-gds-tests') is None and gds_facts._home(None) is None


# ----------------------------------------------------------------------------- kernel and CUDA
@pytest.mark.parametrize('p2pdma, where, expected', [
    (True, 'boot', True), (False, 'boot', False), (True, 'proc', True), (None, 'boot', None)])
def test_kernel_p2pdma_config(node, p2pdma, where, expected):
    kernel(node, P2PDMA_RELEASE, p2pdma, where)
    assert gds_facts.kernel_facts(context(node)) == {'release': P2PDMA_RELEASE, 'p2pdma': expected}


def test_kernel_p2pdma_unknown_is_said(node):
    kernel(node, P2PDMA_RELEASE)
    cuda(node, '12.8.0')
    blockers = plan(collect(node))['blockers']
    assert 'CONFIG_PCI_P2PDMA not known' in blockers['p2pdma']


@pytest.mark.parametrize('fmt, version', [('json', '12.8.1'), ('txt', '11.8.89')])
def test_cuda_version_files(node, fmt, version):
    cuda(node, version, name='cuda-%s' % version[:4], fmt=fmt)
    assert gds_facts.cuda_version(context(node)) == version


def test_cuda_version_missing(node):
    assert gds_facts.cuda_version(context(node)) is None


def test_nvidia_fs_modules_absent_when_not_loaded(node):
    assert gds_facts.platform_facts(context(node))['nvidia_fs_modules'] is None


# ----------------------------------------------------------------------------- IOMMU
@pytest.mark.parametrize('group_types, units, cmdline, mode, status', [
    (['DMA-FQ', 'DMA-FQ'], ['dmar0'], 'intel_iommu=on', 'translated', 'fail'),
    (['identity', 'identity'], ['dmar0'], 'intel_iommu=on iommu=pt', 'passthrough', 'ok'),
    ([], [], 'quiet', 'off', 'ok'),
    ([], ['ivhd0'], 'amd_iommu=on iommu=pt', 'passthrough', 'ok'),
    ([], ['ivhd0'], 'quiet', None, 'warn'),
])
def test_iommu_mode_and_check(node, group_types, units, cmdline, mode, status):
    iommu(node, group_types, units, cmdline)
    section = collect(node)
    assert section['iommu']['mode'] == mode
    assert _check(plan(section), 'iommu')['status'] == status


# ----------------------------------------------------------------------------- PCIe topology and ACS
def test_gpu_and_drive_under_one_switch(node):
    topology = collect(node)['topology']
    assert topology['pairs'] == [{'gpu': GPU, 'nvme': 'nvme0', 'relation': 'same switch', 'bridges': SWITCH_BRIDGES}]
    assert topology['bridges'] == [{'pci': bdf, 'acs': True, 'acs_p2p_redirect': False} for bdf in SWITCH_BRIDGES]


def test_acs_redirect_on_a_switch_port_fails_naming_it(node):
    pci_tree(node, control={'0000:02:01.0': ACS_REDIRECT})
    check = _check(plan(collect(node)), 'acs')
    assert check['status'] == 'fail'
    assert 'at 0000:02:01.0:' in check['detail'] and '0000:02:00.0' not in check['detail']


def test_acs_not_readable_is_not_ok(node):
    """256 bytes of config space (not root): the ACS state is unknown, which the check must not call ok."""
    pci_tree(node, control={'size': 256})
    section = collect(node)
    assert [b['acs'] for b in section['topology']['bridges']] == [None, None, None]
    assert _check(plan(section), 'acs')['status'] == 'warn'


def test_pairs_across_root_ports_and_root_complexes(tmp_path):
    pairs = collect(gpu_node(tmp_path, nvme=('switch', 'root complex', 'far')))['topology']['pairs']
    assert [(p['nvme'], p['relation']) for p in pairs] == [
        ('nvme0', 'same switch'), ('nvme1', 'same root complex'), ('nvme2', 'different root complexes')]
    assert pairs[1]['bridges'] == ['0000:00:01.0', '0000:01:00.0', '0000:02:00.0', '0000:00:03.0']
    assert pairs[2]['bridges'] == []


@pytest.mark.parametrize('nvme, status', [(('far',), 'warn'), (('switch', 'far'), 'ok')])
def test_peer_affinity(tmp_path, nvme, status):
    assert _check(plan(collect(gpu_node(tmp_path, nvme=nvme))), 'peer_affinity')['status'] == status


def test_env_sources_pam_environment_form_and_home_expansion(node, monkeypatch):
    """pam_env's `VAR DEFAULT=value` counts, $HOME / ~ are the user's home, a longer name is not the variable."""
    home = trainer_home(node, monkeypatch)
    write(os.path.join(home, '.pam_environment'), 'CUFILE_ENV_PATH_JSON DEFAULT=${HOME}/a.json\n')
    write(os.path.join(home, '.profile'), 'export CUFILE_ENV_PATH_JSON=~/b.json\nexport OLD_CUFILE_ENV_PATH_JSON=/c\n')
    values = [item['value'] for item in gds_facts.env_sources(context(node), 'trainer')]
    assert values == [home + '/b.json', home + '/a.json']


@pytest.mark.skipif(os.geteuid() != 0, reason='plays other users with chown')
def test_env_sources_trust_only_what_root_controls(node, monkeypatch):
    """Issue 31, finding 3: any local user can start a process (or write a dotfile) naming a root file in
    CUFILE_ENV_PATH_JSON. Another user's process is not read at all; the training user's dotfile and process are
    read but not trusted, and each entry says who owns the file it names."""
    home = trainer_home(node, monkeypatch)
    trainer = 4242
    monkeypatch.setattr(gds_facts, '_training_uid', lambda name: trainer if name == 'trainer' else None)
    write(os.path.join(home, '.profile'), 'export CUFILE_ENV_PATH_JSON=/etc/docker/daemon.json')
    os.chown(os.path.join(home, '.profile'), trainer, trainer)
    for pid, uid, value in (('7', 0, '/opt/root.json'), ('8', trainer, '/opt/trainer.json'),
                            ('9', trainer + 1, '/etc/shadow')):
        write(os.path.join(node.proc, pid, 'environ'), 'PATH=/bin\0CUFILE_ENV_PATH_JSON=%s\0' % value)
        write(os.path.join(node.proc, pid, 'comm'), 'python3')
        os.chown(os.path.join(node.proc, pid), uid, uid)
    found = dict((item['value'], item) for item in gds_facts.env_sources(context(node), 'trainer'))
    assert sorted(found) == ['/etc/docker/daemon.json', '/opt/root.json', '/opt/trainer.json']  # not uid+1's
    assert found['/opt/root.json']['trusted'] is True
    assert found['/opt/trainer.json']['trusted'] is False and found['/etc/docker/daemon.json']['trusted'] is False
    assert found['/etc/docker/daemon.json']['uid'] == trainer
