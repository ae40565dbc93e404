# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils import identity


def _disk(root, name, serial='DATA0001', wwid='eui.0001', sectors=8388608, dev='259:1', multipath_head=False):
    """A fake /sys with /sys/class/block/<name> (and its controller or subsystem)."""
    parent = root / 'devices' / ('nvme-subsys0' if multipath_head else 'nvme0')
    disk = parent / name
    disk.mkdir(parents=True)
    (disk / 'wwid').write_text(wwid + '\n')
    (disk / 'size').write_text('%d\n' % sectors)
    (disk / 'dev').write_text(dev + '\n')
    (disk / 'nsid').write_text('1\n')
    (parent / 'serial').write_text(serial + '   \n')
    (parent / 'model').write_text('QEMU NVMe Ctrl\n')
    if not multipath_head:
        (disk / 'device').symlink_to(parent)
    cls = root / 'class' / 'block'
    cls.mkdir(parents=True, exist_ok=True)
    (cls / name).symlink_to(disk)
    majmin = root / 'dev' / 'block'
    majmin.mkdir(parents=True, exist_ok=True)
    (majmin / dev).symlink_to(disk)
    return disk


def test_read_identity_controller_and_multipath_head(tmp_path):
    _disk(tmp_path, 'nvme1n1', serial='DATA0001', wwid='eui.0001')
    found = identity.read_identity('nvme1n1', str(tmp_path))
    assert found['serial'] == 'DATA0001' and found['wwid'] == 'eui.0001' and found['size_bytes'] == 4 * 1024 ** 3
    assert found['dev'] == '259:1' and found['nsid'] == 1
    other = tmp_path / 'other'
    _disk(other, 'nvme2n1', serial='SUBSYS1', multipath_head=True)
    assert identity.read_identity('nvme2n1', str(other))['serial'] == 'SUBSYS1'
    assert identity.read_identity('nvme9n1', str(tmp_path)) is None


def test_duplicate_groups_by_wwid_and_null_ids():
    entries = [{'name': 'nvme2n1', 'wwid': 'eui.AB'}, {'name': 'nvme1n1', 'wwid': 'EUI.ab'},
               {'name': 'nvme3n1', 'wwid': 'eui.cd'},
               {'name': 'nvme4n1', 'wwid': None, 'nguid': '0' * 32}, {'name': 'nvme5n1', 'nguid': '0' * 32}]
    assert identity.duplicate_groups(entries) == [{'key': 'wwid:eui.ab', 'names': ['nvme1n1', 'nvme2n1']}]


def test_verify_refuses_renumbered_and_unidentified(tmp_path):
    _disk(tmp_path, 'nvme1n1', serial='DATA0002', wwid='eui.0002')
    expected = identity.expected_from({'name': 'nvme1n1', 'serial': 'DATA0001', 'wwid': 'eui.0001',
                                       'size_bytes': 4 * 1024 ** 3})
    with pytest.raises(identity.IdentityError) as err:
        identity.verify(expected, str(tmp_path))
    assert 'nvme1n1 is not the drive that was selected' in str(err.value)
    assert "serial 'DATA0002', expected 'DATA0001'" in str(err.value)
    with pytest.raises(identity.IdentityError) as err:
        identity.verify({'name': 'nvme1n1'}, str(tmp_path))
    assert 'nothing identifies it' in str(err.value)
    with pytest.raises(identity.IdentityError) as err:
        identity.verify({'name': 'nvme7n1', 'serial': 'X'}, str(tmp_path))
    assert 'no such block device' in str(err.value)
    with pytest.raises(identity.IdentityError):
        identity.verify({'name': '../nvme1n1', 'serial': 'X'}, str(tmp_path))
    ok = identity.expected_from({'device': '/dev/nvme1n1', 'serial': 'DATA0002', 'wwid': 'EUI.0002'})
    assert identity.verify(ok, str(tmp_path))['name'] == 'nvme1n1'


def test_name_of_dev(tmp_path):
    _disk(tmp_path, 'nvme1n1', dev='259:7')
    assert identity.name_of_dev(os.makedev(259, 7), str(tmp_path)) == 'nvme1n1'
    assert identity.name_of_dev(os.makedev(259, 8), str(tmp_path)) is None
