# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import identity

from loop_devices import loop_devices


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
    assert 'Expected serial DATA0001, wwid eui.0001, 4294967296 bytes, found serial DATA0002' in str(err.value)
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


# ---------------------------------------------------------------- open, check, act, close (real block devices)
@pytest.fixture
def loop(tmp_path):
    """A real block device (a 1 MiB loop device of the test host) named nvme1n1 in a fake sysfs (by its device
    number), as DATA0001."""
    with loop_devices(tmp_path, 1, 1024 * 1024) as devices:
        rdev = os.stat(devices[0]).st_rdev
        sysfs = tmp_path / 'sys'
        disk = _disk(sysfs, 'nvme1n1', dev='%d:%d' % (os.major(rdev), os.minor(rdev)))
        yield devices[0], sysfs, disk


EXPECTED = {'name': 'nvme1n1', 'serial': 'DATA0001', 'wwid': 'eui.0001', 'size_bytes': 4 * 1024 ** 3}


def held(device):
    return [fd for fd in os.listdir('/proc/self/fd') if os.path.realpath('/proc/self/fd/' + fd) == device]


def test_pinned_holds_the_checked_device_open_while_the_command_runs(loop):
    device, sysfs, disk = loop
    with identity.pinned([(device, EXPECTED, '/dev/nvme1n1')], str(sysfs)) as found:
        assert found[0]['serial'] == 'DATA0001' and found[0]['name'] == 'nvme1n1'
        assert len(held(device)) == 1
    assert held(device) == []


def test_pinned_refuses_another_drive_under_the_name_and_closes_everything(loop):
    device, sysfs, disk = loop
    (disk / 'wwid').write_text('eui.0002\n')
    with pytest.raises(identity.IdentityError) as err:
        with identity.pinned([(device, EXPECTED, '/dev/nvme1n1')], str(sysfs)):
            raise AssertionError('the block must not run')
    message = str(err.value)
    assert message.startswith("/dev/nvme1n1 is not the drive that was selected: wwid 'eui.0002', "
                              "expected 'eui.0001'. Expected serial DATA0001, wwid eui.0001, 4294967296 bytes, found "
                              "serial DATA0001, wwid eui.0002")
    assert message.endswith('Nothing was changed: run again (the facts are gathered anew and the drives found by '
                            'serial)')
    assert held(device) == []


def test_pinned_refuses_what_is_not_a_block_device(tmp_path):
    plain = tmp_path / 'file'
    plain.write_text('')
    with pytest.raises(identity.IdentityError, match='is not a block device'):
        with identity.pinned([(str(plain), EXPECTED)], str(tmp_path)):
            pass
    with pytest.raises(identity.IdentityError, match='cannot be opened to check which drive it is'):
        with identity.pinned([(str(tmp_path / 'gone'), EXPECTED)], str(tmp_path)):
            pass


def test_an_md_array_is_its_uuid_and_exactly_its_members(tmp_path):
    sysfs = tmp_path / 'sys'
    _disk(sysfs, 'nvme1n1', serial='DATA0001', wwid='eui.0001', dev='259:1')
    _disk(sysfs / 'o', 'nvme2n1', serial='DATA0002', wwid='eui.0002', dev='259:2')
    os.symlink(str(sysfs / 'o' / 'devices' / 'nvme0' / 'nvme2n1'), str(sysfs / 'class' / 'block' / 'nvme2n1'))
    md = sysfs / 'devices' / 'virtual' / 'block' / 'md127'
    (md / 'md').mkdir(parents=True)
    (md / 'md' / 'uuid').write_text('e78a7203-e730-df8e-32ae-8ffcb4fc9ee8\n')
    (md / 'slaves').mkdir()
    for name in ('nvme1n1', 'nvme2n1'):
        (md / 'slaves' / name).symlink_to(sysfs / 'class' / 'block' / name)
    (sysfs / 'class' / 'block' / 'md127').symlink_to(md)
    members = [{'serial': 'DATA0002'}, {'wwid': 'EUI.0001'}]
    assert identity.md_problem('md127', 'e78a7203:e730df8e:32ae8ffc:b4fc9ee8', members, str(sysfs)) is None
    other = identity.md_problem('md127', '00000000:e730df8e:32ae8ffc:b4fc9ee8', members, str(sysfs))
    assert other.startswith('md127 is not the array that was made: its md UUID is e78a7203-e730-df8e-32ae-8ffcb4fc9ee8, '
                            'expected 00000000:e730df8e:32ae8ffc:b4fc9ee8')
    short = identity.md_problem('md127', 'e78a7203e730df8e32ae8ffcb4fc9ee8', [{'serial': 'DATA0001'}], str(sysfs))
    assert 'not recorded nvme2n1 (serial DATA0002, wwid eui.0002' in short
    swapped = identity.md_problem('md127', 'e78a7203e730df8e32ae8ffcb4fc9ee8', [{'serial': 'DATA0001'},
                                                                                {'serial': 'DATA0009'}], str(sysfs))
    # a recorded member that no drive of the node is now: it left (the fault suite's hot-remove mid-build)
    assert swapped.startswith('md127: serial DATA0009, a member of the array, left the node after the array was '
                              'made') and swapped.endswith('then run again: the next run assembles the array again, '
                                                           'without force')
    # a recorded member that is on the node but not in the array
    _disk(sysfs / 'p', 'nvme3n1', serial='DATA0009', wwid='eui.0009', dev='259:3')
    os.symlink(str(sysfs / 'p' / 'devices' / 'nvme0' / 'nvme3n1'), str(sysfs / 'class' / 'block' / 'nvme3n1'))
    swapped = identity.md_problem('md127', 'e78a7203e730df8e32ae8ffcb4fc9ee8', [{'serial': 'DATA0001'},
                                                                                {'serial': 'DATA0009'}], str(sysfs))
    assert 'missing serial DATA0009' in swapped
    assert identity.md_problem('nvme1n1', 'x', [], str(sysfs)) == 'nvme1n1 is not an md array'
    # md stopped the array when its member left (nothing to open): the member is named, not the missing device
    with pytest.raises(identity.IdentityError) as exc:
        identity.pin_md(str(tmp_path / 'md127-stopped'), 'e78a7203e730df8e32ae8ffcb4fc9ee8',
                        [{'serial': 'DATA0001'}, {'serial': 'DATA0077'}], str(sysfs), label='device /dev/md127')
    assert str(exc.value).startswith('device /dev/md127: serial DATA0077, a member of the array, left the node')


def test_a_partition_carries_its_disks_identity(tmp_path):
    disk = _disk(tmp_path, 'nvme1n1', serial='DATA0001', wwid='eui.0001')
    part = disk / 'nvme1n1p2'
    part.mkdir()
    (part / 'partition').write_text('2\n')
    (part / 'size').write_text('2048\n')
    (tmp_path / 'class' / 'block' / 'nvme1n1p2').symlink_to(part)
    found = identity.read_identity('nvme1n1p2', str(tmp_path))
    assert found['serial'] == 'DATA0001' and found['wwid'] == 'eui.0001' and found['nsid'] == 1
    assert found['partition'] == 2 and found['disk'] == 'nvme1n1' and found['size_bytes'] == 2048 * 512
    assert identity.read_identity('../x', str(tmp_path)) is None


def test_force_names_and_named_by():
    assert identity.force_names(None) == [] and identity.force_names(False) == [] and identity.force_names('no') == []
    assert identity.force_names(' DATA0001 ,DATA0001, eui.02') == ['DATA0001', 'eui.02']
    for value in (True, 'True', 'yes', 'on', '1'):
        with pytest.raises(ValueError, match='is no longer accepted: name the drives'):
            identity.force_names(value, 'xfs_force')
    with pytest.raises(ValueError, match='must be a list'):
        identity.force_names(3)
    drive = {'name': 'nvme1n1', 'serial': 'DATA0001', 'wwid': 'eui.0025388b01a2c3d4', 'nguid': None,
             'eui': '0025388b01a2c3d4'}
    assert identity.named_by(drive, ['x', 'DATA0001']) == 'DATA0001'
    assert identity.named_by(drive, ['EUI.0025388B01A2C3D4']) == 'EUI.0025388B01A2C3D4'
    assert identity.named_by(drive, ['00 25 38 8b 01 a2 c3 d4']) == '00 25 38 8b 01 a2 c3 d4'
    assert identity.named_by(drive, ['nvme1n1', 'data0001']) is None  # kernel names never, serials exactly
    assert identity.unnamed(['DATA0001', 'DATA0009'], [drive]) == ['DATA0009']
