# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drive sampler (module_utils/nvme/drive_sampler.py) on a fake sysfs tree: block counters, hwmon temperatures,
the SMART log read anew each sample through the facts' reader (an injected admin reader here), Identify
Controller once, namespaces that are not there refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import drive_sampler
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.nvme_ioctl import NvmeIoctlError


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write(text)


@pytest.fixture
def tree(tmp_path):
    sys_root = str(tmp_path / 'sys')
    ctrl = os.path.join(sys_root, 'devices', 'pci0000:00', '0000:00:04.0', 'nvme', 'nvme1')
    write(os.path.join(ctrl, 'serial'), 'DATA0001  \n')
    write(os.path.join(ctrl, 'hwmon3', 'temp1_input'), '49850\n')
    write(os.path.join(ctrl, 'hwmon3', 'temp1_label'), 'Composite\n')
    write(os.path.join(ctrl, 'hwmon3', 'temp2_input'), '51000\n')
    os.makedirs(os.path.join(sys_root, 'class', 'nvme'))
    os.symlink(ctrl, os.path.join(sys_root, 'class', 'nvme', 'nvme1'))
    ns = os.path.join(ctrl, 'nvme1n1')
    write(os.path.join(ns, 'stat'), '0 0 0 0 224 0 313816 16048 8 1000 16048 0 0 0 0 0 0\n')
    write(os.path.join(ns, 'inflight'), '       0        8\n')
    os.symlink(ctrl, os.path.join(ns, 'device'))
    os.makedirs(os.path.join(sys_root, 'class', 'block'))
    os.symlink(ns, os.path.join(sys_root, 'class', 'block', 'nvme1n1'))
    return sys_root


class Reader(object):
    """An NVMe admin reader: the SMART log's warning raised from the second read on."""

    def __init__(self):
        self.calls = []

    def __call__(self, log, dev):
        self.calls.append((log, dev))
        if log == 'id-ctrl':
            return {'wctemp_c': 70, 'cctemp_c': 100, 'hctma': 0, 'mntmt_c': None, 'mxtmt_c': None}
        reads = len([c for c in self.calls if c[0] == 'smart-log'])
        return {'critical_warning': 2 if reads > 1 else 0,
                'critical_warning_bits': {'temperature_threshold': reads > 1},
                'temperature_c': 50, 'sensors_c': [51], 'warning_temp_time_min': 0, 'critical_comp_time_min': 0,
                'thm_temp1_trans_count': reads - 1, 'thm_temp2_trans_count': 0, 'thm_temp1_total_time_s': 0,
                'thm_temp2_total_time_s': 0, 'available_spare_pct': 100, 'percentage_used': 0, 'media_errors': 0}


def sampler(tree, reader, clock=None):
    ctx = Context(sysfs_root=tree, devfs_root='/nonexistent', admin_reader=reader, which=lambda *a: None)
    times = iter(clock or [100.0, 101.0, 102.5])
    return drive_sampler.DriveSampler(ctx, ['nvme1n1'], clock=lambda: next(times))


def test_each_sample_reads_counters_hwmon_and_a_fresh_smart_log(tree):
    reader = Reader()
    s = sampler(tree, reader)
    assert s.missing() == [] and s.controllers == {'nvme1n1': 'nvme1'}
    info = s.info()
    assert info == {'nvme1n1': {'controller': 'nvme1', 'serial': 'DATA0001', 'wctemp_c': 70, 'cctemp_c': 100,
                                'mntmt_c': None, 'mxtmt_c': None, 'hctma': 0}}
    first = s.sample()['drives']['nvme1n1']
    second = s.sample()
    assert second['t'] == 1.0
    drive = second['drives']['nvme1n1']
    assert first['sectors_written'] == 313816 and first['write_ios'] == 224 and first['write_ticks_ms'] == 16048
    assert first['inflight_writes'] == 8
    assert drive['temp_c'] == 49.85 and drive['temp_source'] == 'hwmon' and drive['sensors_c'] == [49.85, 51.0]
    assert first['critical_warning'] == 0 and drive['critical_warning'] == 2
    assert drive['critical_warning_bits'] == {'temperature_threshold': True} and drive['thm_temp1_trans_count'] == 1
    assert drive['error'] is None
    # Identify Controller once, the SMART log at every sample, on the controller's device node
    assert [c[0] for c in reader.calls] == ['id-ctrl', 'smart-log', 'smart-log']
    assert reader.calls[1][1] == '/nonexistent/nvme1'


def test_a_reader_error_is_kept_in_the_sample(tree):
    def broken(log, dev):
        raise NvmeIoctlError('admin command 0x02: the controller answered status 0x4002', status=0x4002)
    drive = sampler(tree, broken).sample()['drives']['nvme1n1']
    assert 'status 0x4002' in drive['error'] and drive['critical_warning'] is None
    assert drive['temp_c'] == 49.85  # hwmon still answers


def test_names_are_checked_before_anything(tree):
    assert drive_sampler.check_names(['/dev/nvme1n1', 'nvme2n1']) == ['nvme1n1', 'nvme2n1']
    for bad, text in ((['sda'], "'sda' is not an NVMe namespace"), (['nvme1n1', '/dev/nvme1n1'], 'named twice'),
                      ('nvme1n1', 'is not a list'), ([None], 'None is not an NVMe namespace'),
                      (['nvme%dn1' % i for i in range(300)], 'above the 256')):
        with pytest.raises(ValueError) as exc:
            drive_sampler.check_names(bad)
        assert text in str(exc.value)
    ctx = Context(sysfs_root=tree, devfs_root='/nonexistent', admin_reader=Reader(), which=lambda *a: None)
    assert drive_sampler.DriveSampler(ctx, ['nvme9n9']).missing() == ['nvme9n9: no such block device']
