# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The xfs role's filters: selection + plan, signature verdicts, read-back lookup."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.filter import xfs_volume

GIB = 1024 ** 3


def namespace(name, ctrl, **kwargs):
    entry = {'name': name, 'device': '/dev/' + name, 'controllers': [ctrl], 'wwid': 'wwid-' + name,
             'size_bytes': 4 * GIB, 'optimal_io_size': 512, 'holders': [], 'mount_points': [], 'swap': False,
             'is_os_drive': False, 'os_roles': [], 'partitions': []}
    entry.update(kwargs)
    return entry


NVME = {
    'controllers': [{'name': 'nvme0', 'serial': 'OS0001', 'io_queues': 2},
                    {'name': 'nvme1', 'serial': 'DATA0001', 'io_queues': 2},
                    {'name': 'nvme2', 'serial': 'DATA0002', 'io_queues': 2}],
    'namespaces': [namespace('nvme0n1', 'nvme0', is_os_drive=True, os_roles=['/']),
                   namespace('nvme1n1', 'nvme1', holders=['md127']),
                   namespace('nvme2n1', 'nvme2', holders=['md127'])],
}
FACTS = {'nvme': NVME}  # the whole ansible_facts.checkpoint_io
SELECTION = {'serials': ['DATA0001', 'DATA0002']}
SETTINGS = {'chunk': '1M', 'mount_point': '/mnt/checkpoints', 'mount_options': ['noatime'], 'md_name': 'ckpt'}


def test_members_held_by_the_roles_own_array_are_selected_only_when_named():
    refused = xfs_volume.xfs_volume_plan(FACTS, SELECTION, SETTINGS)
    assert refused['selection']['selected'] == [] and len(refused['selection']['refused']) == 2
    assert refused['errors'] == ['no data drive selected: nothing to build the volume on']
    plan = xfs_volume.xfs_volume_plan(FACTS, SELECTION, SETTINGS, '8579448832', ['md127'])
    assert [m['device'] for m in plan['selection']['selected']] == ['/dev/nvme1n1', '/dev/nvme2n1']
    assert plan['errors'] == [] and plan['size_estimated'] is False and plan['agcount'] == 4


def test_a_single_drive_mounted_at_the_volumes_mount_point_is_selected():
    nvme = {'controllers': NVME['controllers'],
            'namespaces': [namespace('nvme1n1', 'nvme1', mount_points=['/mnt/checkpoints'])]}
    plan = xfs_volume.xfs_volume_plan({'nvme': nvme}, {'serials': ['DATA0001']}, SETTINGS, '')
    assert plan['errors'] == [] and plan['target'] == '/dev/nvme1n1'
    other = xfs_volume.xfs_volume_plan({'nvme': nvme}, {'serials': ['DATA0001']}, dict(SETTINGS, mount_point='/srv/x'))
    assert 'mounted by someone else at /mnt/checkpoints' in other['selection']['refused'][0]['reason']


@pytest.mark.parametrize('args, fragment', [
    ((FACTS, None, SETTINGS), 'checkpoint_io_data_drives is not set'),
    ((FACTS, SELECTION, 'x'), 'expected a dict of settings'),
    ((FACTS, SELECTION, SETTINGS, 'big'), 'target_size_bytes must be an integer'),
])
def test_unusable_input_raises(args, fragment):
    with pytest.raises(AnsibleFilterError, match=fragment):
        xfs_volume.xfs_volume_plan(*args)


def test_signature_verdicts_and_verify_wrappers():
    out = xfs_volume.xfs_signature_verdicts('{"signatures": []}', ['/dev/nvme1n1'])
    assert out['devices'][0]['verdict'] == 'clean' and out['refused'] == []
    with pytest.raises(AnsibleFilterError, match='xfs_signature_verdicts'):
        xfs_volume.xfs_signature_verdicts('garbage', ['/dev/nvme1n1'])
    plan = xfs_volume.xfs_volume_plan(FACTS, SELECTION, SETTINGS, 8579448832, ['md127'])
    assert xfs_volume.xfs_verify_volume({'xfs': {'filesystems': []}}, plan) == [
        'nothing is mounted at /mnt/checkpoints']
    fs = {'mount_point': '/mnt/checkpoints', 'agcount': 3}
    assert 'agcount is 3 (xfs_info), asked 4' in xfs_volume.xfs_verify_volume({'xfs': {'filesystems': [fs]}}, plan)
    with pytest.raises(AnsibleFilterError):
        xfs_volume.xfs_verify_volume({}, 'plan')
    names = sorted(xfs_volume.FilterModule().filters())
    assert names == ['xfs_revert_plan', 'xfs_settings_errors', 'xfs_signature_verdicts', 'xfs_verify_volume',
                     'xfs_volume_plan']
    assert xfs_volume.xfs_settings_errors(dict(SETTINGS, mount_point='mnt/ckpt')) == [
        "xfs_mount_point: 'mnt/ckpt' is not an absolute path (it must start with /)"]
    with pytest.raises(AnsibleFilterError, match='xfs_settings_errors: expected a dict of settings'):
        xfs_volume.xfs_settings_errors('x')


def test_the_log_device_is_checked_like_a_member():
    """Before issue 12 the OS drive was accepted as xfs_log_device (test failed: no error)."""
    settings = dict(SETTINGS, log_device='/dev/nvme0n1')
    plan = xfs_volume.xfs_volume_plan(FACTS, SELECTION, settings, 8579448832, ['md127'])
    assert plan['errors'] == ['xfs_log_device: /dev/nvme0n1 refused: /dev/nvme0n1 is the OS drive (holds /)']
    free = {'controllers': NVME['controllers'] + [{'name': 'nvme3', 'serial': 'LOG0001'}],
            'namespaces': NVME['namespaces'] + [namespace('nvme3n1', 'nvme3', size_bytes=GIB)]}
    plan = xfs_volume.xfs_volume_plan({'nvme': free}, SELECTION, dict(SETTINGS, log_device='/dev/nvme3n1',
                                                                      force=['LOG0001']),
                                      8579448832, ['md127'])
    assert plan['errors'] == [] and plan['force'] == ['LOG0001']
    assert plan['log']['identity'] == {'name': 'nvme3n1', 'serial': 'LOG0001', 'wwid': 'wwid-nvme3n1',
                                       'size_bytes': GIB}


def test_signature_verdicts_with_a_force_by_name():
    probe = '{"signatures": [{"device": "nvme1n1", "offset": "0x438", "type": "ext4", "uuid": "u"}]}'
    devices = [{'path': '/dev/nvme1n1', 'serial': 'DATA0001', 'wwid': 'w1'}]
    assert xfs_volume.xfs_signature_verdicts(probe, devices, {}, ['DATA0002'])['refused'] == [
        '/dev/nvme1n1 (DATA0001) carries ext4 signature (UUID u, offset 0x438)']
    forced = xfs_volume.xfs_signature_verdicts(probe, devices, {}, 'W1')
    assert forced['refused'] == [] and forced['devices'][0]['forced'] == 'W1'
    with pytest.raises(AnsibleFilterError, match='xfs_force: True is no longer accepted'):
        xfs_volume.xfs_signature_verdicts(probe, devices, {}, True)


def test_revert_plan_wrapper():
    record = {'members': [{'serial': 'DATA0001', 'wwid': 'wwid-nvme1n1'}]}
    out = xfs_volume.xfs_revert_plan(FACTS, record, ['DATA0001'])
    assert out['erase'] is True and out['members'][0]['device'] == '/dev/nvme1n1'
    with pytest.raises(AnsibleFilterError, match='xfs_revert_plan'):
        xfs_volume.xfs_revert_plan({}, record)
