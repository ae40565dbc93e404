# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fake GPUDirect Storage nodes for the gds tests: the driver, kernel, CUDA, nvidia-fs, IOMMU and PCIe trees that
``gds_facts.platform_facts`` reads, under a tmp dir, plus PCIe config space bytes for ``pci.acs_control``.

The GPU, libcufile and nvidia_fs pieces are test_node_facts' helpers (GPU 0000:18:00.0). The PCIe tree:

  pci0000:00/0000:00:01.0 root port
               /0000:01:00.0 switch upstream port
                   /0000:02:00.0 downstream port /0000:18:00.0 GPU
                   /0000:02:01.0 downstream port /0000:04:00.0 nvme0   ('switch')
  pci0000:00/0000:00:03.0 root port /0000:05:00.0 nvme1                ('root complex')
  pci0000:80/0000:80:01.0 root port /0000:81:00.0 nvme2                ('far')
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gzip
import os

from checkpoint_io_fake_node import FakeNode, FakeRunner, link, make_context, mkdir, write
from test_node_facts import _gds_runner, _gpu, _libcufile, _nvidia_fs

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds import gds_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import gds_facts

OPEN_565 = ('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  '
            '(dvs-builder@U16-I3-B03-4-3)  Tue Oct 15 17:49:44 UTC 2024\n'
            'GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n')
OPEN_570 = ('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build  '
            '(dvs-builder@U16-I3-D08-1-2)  Wed Feb 26 01:33:16 UTC 2025\n')
PROPRIETARY_535 = ('NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n'
                   'GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n')
GPU = '0000:18:00.0'
ACS_REDIRECT = 0x001D  # SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+ (lspci -vvv "ACSCtl")
ACS_PLAIN = 0x0000
AER, ACS = 0x0001, 0x000D
PCI_TREE = {
    GPU: ('pci0000:00', '0000:00:01.0', '0000:01:00.0', '0000:02:00.0', GPU),
    'switch': ('pci0000:00', '0000:00:01.0', '0000:01:00.0', '0000:02:01.0', '0000:04:00.0'),
    'root complex': ('pci0000:00', '0000:00:03.0', '0000:05:00.0'),
    'far': ('pci0000:80', '0000:80:01.0', '0000:81:00.0'),
}
NVME_NAMES = {'switch': 'nvme0', 'root complex': 'nvme1', 'far': 'nvme2'}
SWITCH_BRIDGES = ['0000:01:00.0', '0000:02:00.0', '0000:02:01.0']
gdscheck_runner = _gds_runner  # (node, nvme='Supported'): gdscheck -p found, its "NVMe :" line saying ``nvme``


# ----------------------------------------------------------------------------- config space bytes
def config_space(caps, size=4096):
    """``size`` bytes of config space with the extended capabilities ``caps``: [(offset, id, next, control)]."""
    data = bytearray(4096)
    data[0:4] = (0x10B5 | 0x8796 << 16).to_bytes(4, 'little')  # a Broadcom/PLX switch port
    for offset, cap_id, nxt, control in caps:
        data[offset:offset + 4] = (cap_id | 1 << 16 | nxt << 20).to_bytes(4, 'little')
        data[offset + 6:offset + 8] = control.to_bytes(2, 'little')
    return bytes(data[:size])


def acs_config(control, size=4096):
    """AER at 0x100 -> ACS at 0x148 with ``control`` in its control register."""
    return config_space([(0x100, AER, 0x148, 0), (0x148, ACS, 0, control)], size)


# ----------------------------------------------------------------------------- the node
def node_at(tmp_path):
    node = FakeNode(tmp_path)
    node.boot = os.path.join(node.base, 'boot')
    mkdir(node.boot)
    return node


def context(node, runner=None, **kwargs):
    return make_context(node, runner or FakeRunner(), boot_root=node.boot, **kwargs)


def driver(node, text):
    write(os.path.join(node.proc, 'driver', 'nvidia', 'version'), text)


def kernel(node, release, p2pdma=None, where='boot'):
    """The release, and CONFIG_PCI_P2PDMA (None: no config) in /boot/config-<release> or /proc/config.gz."""
    write(os.path.join(node.proc, 'sys', 'kernel', 'osrelease'), release)
    if p2pdma is None:
        return
    text = 'CONFIG_PCI=y\n%s\n' % ('CONFIG_PCI_P2PDMA=y' if p2pdma else '# CONFIG_PCI_P2PDMA is not set')
    if where == 'boot':
        write(os.path.join(node.boot, 'config-%s' % release), text)
    else:
        with gzip.open(os.path.join(node.proc, 'config.gz'), 'wt') as handle:
            handle.write(text)


def cuda(node, version, name='cuda-12.8', fmt='json'):
    directory = os.path.join(node.base, 'usr', 'local', name)
    if fmt == 'json':
        write(os.path.join(directory, 'version.json'),
              '{"cuda": {"name": "CUDA SDK", "version": "%s"}, "libcufile": {"version": "1.13.0"}}' % version)
    else:
        write(os.path.join(directory, 'version.txt'), 'CUDA Version %s' % version)


def nvidia_fs(node, version, modules=('nvme',)):
    """nvidia_fs loaded (test_node_facts' helper), its sysfs version, and the drivers registered with it."""
    _nvidia_fs(node, version)
    write(os.path.join(node.sys, 'module', 'nvidia_fs', 'version'), version)
    write(os.path.join(node.proc, 'driver', 'nvidia-fs', 'modules'), ''.join('%s: v1\n' % m for m in modules))


def iommu(node, group_types=(), units=(), cmdline='BOOT_IMAGE=/vmlinuz root=/dev/nvme0n1p1 ro quiet'):
    for unit in units:
        mkdir(os.path.join(node.sys, 'class', 'iommu', unit))
    for index, kind in enumerate(group_types):
        write(os.path.join(node.sys, 'kernel', 'iommu_groups', str(index), 'type'), kind)
    write(os.path.join(node.proc, 'cmdline'), cmdline)


def _function(node, parts, control):
    """The function dir of a PCI path; each bridge on it gets a config file with the ACS control ``control``."""
    path = os.path.join(node.sys, 'devices', parts[0])
    for bdf in parts[1:]:
        path = os.path.join(path, bdf)
        mkdir(path)
        with open(os.path.join(path, 'config'), 'wb') as handle:
            handle.write(acs_config(control.get(bdf, ACS_PLAIN), control.get('size', 4096)))
        link(os.path.join(node.sys, 'bus', 'pci', 'devices', bdf), path)
    return path


def pci_tree(node, nvme=('switch',), control=None):
    """The GPU and the NVMe controllers ``nvme`` (keys of PCI_TREE) in sysfs, with real symlinks.

    ``control``: {bridge BDF: ACS control word, 'size': bytes of config space readable}."""
    control = control or {}
    _function(node, PCI_TREE[GPU], control)
    for where in nvme:
        function = _function(node, PCI_TREE[where], control)
        ctrl = os.path.join(function, 'nvme', NVME_NAMES[where])
        mkdir(ctrl)
        link(os.path.join(ctrl, 'device'), function)
        link(os.path.join(node.sys, 'class', 'nvme', NVME_NAMES[where]), ctrl)


# ----------------------------------------------------------------------------- whole nodes
def gpu_node(tmp_path, driver_text=OPEN_565, release='6.1.0-28-amd64', p2pdma=False, nvme=('switch',)):
    """A node with one GPU (in /proc and on PCI beside the controllers ``nvme``), libcufile, a driver and a
    kernel."""
    node = node_at(tmp_path)
    _gpu(node)
    _libcufile(node)
    driver(node, driver_text)
    kernel(node, release, p2pdma)
    pci_tree(node, nvme)
    return node


def trainer_home(node, monkeypatch, user='trainer'):
    """A home dir for ``user`` under the tmp dir: gds_facts._home answers it instead of the real passwd."""
    home = os.path.join(node.base, 'home', user)
    mkdir(home)
    monkeypatch.setattr(gds_facts, '_home', lambda name: home if name == user else None)
    return home


def process_env(node, pid, comm, value):
    """/proc/<pid>/environ with CUFILE_ENV_PATH_JSON=value (NUL-separated, as the kernel gives it)."""
    write(os.path.join(node.proc, str(pid), 'comm'), comm)
    with open(os.path.join(node.proc, str(pid), 'environ'), 'w') as handle:
        handle.write('HOME=/home/trainer\0CUFILE_ENV_PATH_JSON=%s\0LANG=C.UTF-8\0' % value)


def plan(section, policy='preferred', want='auto', fstype='xfs'):
    """The gds role's plan for a collected section (1 MiB blocks, 8 ranks, depth 32)."""
    return gds_plan.role_plan(section, fstype, want, policy, 2 ** 20, 8, 32)


def collect(node, runner=None, job_dirs=None, training_user=None, **kwargs):
    return gds_facts.collect(context(node, runner, **kwargs), job_dirs=job_dirs, training_user=training_user)
