# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""xfs_plan: the checkpoint volume plan (stripe, agcount/agsize, mkfs and mount options), signature verdicts
and the read-back comparison."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import wipefs as wf
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import mount_options as mo
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import xfs_layout as xl
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import xfs_plan as xp
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs import (
    parse_mount_options,
    parse_xfs_info,
)

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# The two data drives of a bookworm lab node (4 GiB, 2 I/O queues with 2 vCPUs, optimal_io_size 512).
SELECTED = [
    {'name': 'nvme1n1', 'device': '/dev/nvme1n1', 'controller': 'nvme1', 'serial': 'DATA0001',
     'wwid': 'nvme.1b36-DATA0001', 'size_bytes': 4 * GIB, 'optimal_io_size': 512},
    {'name': 'nvme2n1', 'device': '/dev/nvme2n1', 'controller': 'nvme2', 'serial': 'DATA0002',
     'wwid': 'nvme.1b36-DATA0002', 'size_bytes': 4 * GIB, 'optimal_io_size': 512},
]
CONTROLLERS = [{'name': 'nvme1', 'io_queues': 2}, {'name': 'nvme2', 'io_queues': 2}]
SETTINGS = {'raid_level': 'raid0', 'chunk': '1M', 'agcount': None, 'md_name': 'ckpt', 'md_metadata': '1.2',
            'log_device': None, 'log_size': None, 'label': 'checkpoints', 'mount_point': '/mnt/checkpoints',
            'checkpoint_dir': '/mnt/checkpoints', 'fstab_options': ['nofail'],
            'mount_options': ['noatime', 'inode64', 'logbufs=8', 'logbsize=256k', 'largeio', 'swalloc']}
# /sys/block/md127/size x 512 of the lab's RAID0 (mdadm 4.2, 1.2 superblock, 1 MiB chunk).
LAB_MD_BYTES = 16756736 * 512

# Measured with mkfs.xfs -N (xfsprogs 6.1.0, Debian bookworm) on sparse files of these sizes with
# -d su=,sw=,agsize= from choose_agsize: (size, su, sw, wanted agcount) -> (agcount, agsize blocks) it made.
MKFS_MEASURED = [
    ((8579448832, MIB, 2, 4), (4, 524032)),
    ((8579448832, MIB, 2, 8), (8, 261888)),
    ((4294967296, 0, 0, 4), (4, 262144)),
    ((4294967296, 0, 0, 2), (2, 524288)),
    ((107424747520, 512 * KIB, 8, 64), (64, 409856)),
    ((2199023284224, MIB, 4, 8), (8, 67109120)),
    ((5368709120, 128 * KIB, 1, 6), (6, 218464)),
    ((3221237760, 64 * KIB, 3, 12), (12, 65552)),
]

# xfs_info /mnt/checkpoints on the lab node after mkfs.xfs -d su=1048576,sw=2,agsize=2146435072 /dev/md/ckpt.
LAB_XFS_INFO = """\
meta-data=/dev/md127             isize=512    agcount=4, agsize=524032 blks
         =                       sectsz=512   attr=2, projid32bit=1
         =                       crc=1        finobt=1, sparse=1, rmapbt=0
         =                       reflink=1    bigtime=1 inobtcount=1 nrext64=0
data     =                       bsize=4096   blocks=2094592, imaxpct=25
         =                       sunit=256    swidth=512 blks
naming   =version 2              bsize=4096   ascii-ci=0, ftype=1
log      =internal log           bsize=4096   blocks=16384, version=2
         =                       sectsz=512   sunit=8 blks, lazy-count=1
realtime =none                   extsz=4096   blocks=0, rtextents=0
"""
LAB_MOUNT_OPTIONS = 'rw,noatime,swalloc,attr2,largeio,inode64,logbufs=8,logbsize=256k,sunit=2048,swidth=4096,noquota'

# wipefs --no-act --json --output DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE /dev/nvme1n1 /dev/nvme2n1 on the lab node
# after the array was stopped and mkfs.ext4 -F ran on nvme1n1 (it erased the md superblock there).
LAB_WIPEFS = json.dumps({'signatures': [
    {'device': 'nvme1n1', 'offset': '0x438', 'type': 'ext4', 'uuid': '68efbee8-e2fc-4726-b513-4e32e0991b1b',
     'label': None, 'usage': 'filesystem'},
    {'device': 'nvme2n1', 'offset': '0x1000', 'type': 'linux_raid_member',
     'uuid': 'e78a7203-e730-df8e-32ae-8ffcb4fc9ee8', 'label': 'lab-node:ckpt', 'usage': 'raid'},
]}, indent=3)
MD_UUID_MDADM = 'e78a7203:e730df8e:32ae8ffc:b4fc9ee8'


def plan(selected=None, controllers=None, target_size_bytes=None, log_identity=None, **settings):
    merged = dict(SETTINGS)
    merged.update(settings)
    return xp.plan_volume(SELECTED if selected is None else selected,
                          CONTROLLERS if controllers is None else controllers, merged,
                          target_size_bytes=target_size_bytes, log_identity=log_identity)


# ---------------------------------------------------------------- chunk
@pytest.mark.parametrize('value, expected', [
    ('1M', MIB), ('1m', MIB), ('1MiB', MIB), ('512K', 512 * KIB), (1048576, MIB), ('4K', 4 * KIB), ('4096', 4096),
    (1048576.0, MIB), ('64M', 64 * MIB),
])
def test_chunk_accepts_powers_of_two_from_4k(value, expected):
    assert xl.parse_chunk(value) == expected


@pytest.mark.parametrize('value, fragment', [
    ('1X', "xfs_chunk: '1X' is not a size"),
    ('1MB', 'ambiguous'),
    ('3M', 'not a power of two'),
    ('1536K', 'not a power of two'),
    ('2K', 'below the minimum 4 KiB (4096 bytes)'),
    (512, 'below the minimum'),
    (0, 'is not a size'),
    (-1, 'is not a size'),
    (True, 'is not a size'),
    ('', 'is not a size'),
    (None, 'is not a size'),
])
def test_bad_chunks_are_refused_naming_the_value_and_the_limit(value, fragment):
    with pytest.raises(ValueError) as exc:
        xl.parse_chunk(value)
    assert fragment in str(exc.value)
    assert 'xfs_chunk' in str(exc.value)


def test_md_chunk_argument_and_headroom():
    assert xl.md_kib(MIB) == '1024K'
    assert xl.md_headroom_bytes(4 * GIB) == 4 * MIB
    assert xl.md_headroom_bytes(8 * 1024 * GIB) == 128 * MIB
    assert xl.md_headroom_bytes(100 * MIB) == MIB
    # the estimate is what mdadm 4.2 made on the lab (8378368 KiB)
    assert xl.estimate_md_size([4 * GIB, 4 * GIB], MIB) == LAB_MD_BYTES


# ---------------------------------------------------------------- allocation groups
@pytest.mark.parametrize('case, made', MKFS_MEASURED)
def test_agsize_makes_exactly_the_planned_count_as_mkfs_measured(case, made):
    size, su, sw, count = case
    agsize = xl.choose_agsize(size // 4096, count, su // 4096, sw)
    assert (count, agsize) == made
    assert xl.mkfs_agcount(size // 4096, agsize) == count
    if su and sw > 1:
        assert agsize % (su // 4096 * sw) != 0, 'AG headers would all land on one member'
    if su:
        assert agsize % (su // 4096) == 0


def test_mkfs_agcount_drops_a_last_ag_under_16_mib_and_keeps_a_larger_one():
    assert xl.mkfs_agcount(4096 * 10 + 4095, 4096) == 10
    assert xl.mkfs_agcount(4096 * 10 + 4096, 4096) == 11
    assert xl.mkfs_agcount(4096 * 10, 4096) == 10


def test_agsize_that_would_be_a_multiple_of_the_stripe_width_is_moved_by_one_stripe_unit():
    # 4 AGs on the lab array: ceil(2094592 / 4) rounds up to 523776 = 1023 x 512 (a multiple of the 2 MiB
    # stripe width, the layout mkfs.xfs warns about); one stripe unit more is chosen.
    assert 523776 % 512 == 0
    assert xl.choose_agsize(LAB_MD_BYTES // 4096, 4, 256, 2) == 524032


def test_agsize_is_none_when_no_aligned_size_gives_the_count():
    assert xl.choose_agsize(215424901120 // 4096, 1024, 256, 8) is None
    assert xl.choose_agsize(0, 4) is None


def test_ag_bounds():
    assert xl.ag_bounds(LAB_MD_BYTES) == (2, 63)
    assert xl.ag_bounds(LAB_MD_BYTES, internal_log=False) == (2, 511)
    low, high = xl.ag_bounds(3 * 1024 ** 4)
    assert low == 4 and high == 3 * 1024 ** 4 // (128 * MIB)


@pytest.mark.parametrize('members, queues, low, high, expected', [
    (2, 2, 2, 63, 4),
    (8, 128, 2, 100000, 1024),
    (2, 64, 2, 63, 62),       # bounded, kept a multiple of the members
    (3, 64, 2, 64, 63),
    (1, 1, 2, 63, 2),         # at least two AGs
    (8, 1, 16, 1000, 16),
    (3, 1, 4, 5, 4),          # no multiple of 3 in range: the bound
])
def test_auto_agcount(members, queues, low, high, expected):
    assert xl.auto_agcount(members, queues, low, high) == expected


# ---------------------------------------------------------------- the plan
def test_lab_plan_raid0_two_drives_before_the_array_exists():
    result = plan()
    assert result['errors'] == [] and result['warnings'] == []
    assert result['md'] == {'name': 'ckpt', 'device': '/dev/md/ckpt', 'level': 'raid0', 'chunk_bytes': MIB,
                            'chunk': '1024K', 'metadata': '1.2', 'members': ['/dev/nvme1n1', '/dev/nvme2n1']}
    assert result['target'] == '/dev/md/ckpt'
    assert result['size_estimated'] is True and result['target_size_bytes'] == LAB_MD_BYTES
    assert result['stripe'] == {'su_bytes': MIB, 'sw': 2, 'swidth_bytes': 2 * MIB,
                                'source': 'md RAID0 chunk 1024K x 2 members'}
    assert result['agcount'] == 4 and result['agsize_bytes'] == 524032 * 4096
    assert '2 members x 2 I/O queues per drive = 4' in result['agcount_rule']
    assert result['mkfs']['opts'] == '-L checkpoints -d su=1048576,sw=2,agsize=%d' % (524032 * 4096)
    assert result['mkfs']['argv'][0] == 'mkfs.xfs' and result['mkfs']['argv'][-1] == '/dev/md/ckpt'
    assert result['mount']['opts'] == 'noatime,inode64,logbufs=8,logbsize=256k,largeio,swalloc'
    assert result['mount']['fstab_opts'] == result['mount']['opts'] + ',nofail'
    assert result['mount']['expect_present'] == {'noatime': True, 'inode64': True, 'logbufs': 8,
                                                 'logbsize': 256 * KIB, 'largeio': True, 'swalloc': True}
    assert result['log'] == {'internal': True, 'device': None, 'resolved': None, 'size_bytes': None,
                             'identity': None}
    assert result['record_members'] == [
        {'device': '/dev/nvme1n1', 'serial': 'DATA0001', 'wwid': 'nvme.1b36-DATA0001', 'size_bytes': 4 * GIB},
        {'device': '/dev/nvme2n1', 'serial': 'DATA0002', 'wwid': 'nvme.1b36-DATA0002', 'size_bytes': 4 * GIB}]
    # what md_array and xfs_format re-check before they write (kernel names change, these do not)
    assert result['identities'] == [
        {'name': 'nvme1n1', 'serial': 'DATA0001', 'wwid': 'nvme.1b36-data0001', 'size_bytes': 4 * GIB},
        {'name': 'nvme2n1', 'serial': 'DATA0002', 'wwid': 'nvme.1b36-data0002', 'size_bytes': 4 * GIB}]
    assert result['force'] == [] and result['mkfs']['options'] == result['mkfs']['opts'].split()


def test_the_real_array_size_replaces_the_estimate():
    result = plan(target_size_bytes=LAB_MD_BYTES - 64 * MIB)
    assert result['size_estimated'] is False and result['target_size_bytes'] == LAB_MD_BYTES - 64 * MIB
    assert result['agcount'] == 4


def test_one_drive_without_a_usable_optimal_io_size_has_no_stripe():
    result = plan(selected=SELECTED[:1])
    assert result['errors'] == [] and result['md'] is None and result['target'] == '/dev/nvme1n1'
    assert result['stripe']['su_bytes'] == 0 and result['stripe']['swidth_bytes'] == 0
    assert 'not a multiple of the 4096-byte block' in result['stripe']['source']
    assert 'noalign' in result['mkfs']['opts'] and 'su=' not in result['mkfs']['opts']
    assert result['agcount'] == 2 and result['size_estimated'] is False


def test_one_drive_with_an_optimal_io_size_stripes_to_it():
    drive = dict(SELECTED[0], optimal_io_size=128 * KIB)
    result = plan(selected=[drive], controllers=[{'name': 'nvme1', 'io_queues': 8}])
    assert result['stripe'] == {'su_bytes': 128 * KIB, 'sw': 1, 'swidth_bytes': 128 * KIB,
                                'source': 'optimal I/O size of /dev/nvme1n1 (128 KiB (131072 bytes))'}
    assert result['agcount'] == 8
    assert '-d su=131072,sw=1,agsize=' in result['mkfs']['opts']
    assert result['agsize_bytes'] % (128 * KIB) == 0


def test_one_drive_reporting_no_optimal_io_size():
    result = plan(selected=[dict(SELECTED[0], optimal_io_size=0)])
    assert result['stripe']['su_bytes'] == 0 and 'reports no optimal I/O size' in result['stripe']['source']


def test_unknown_queue_counts_fall_back_to_four_per_drive():
    result = plan(controllers=[])
    assert result['agcount'] == 8 and 'queue count unknown' in result['agcount_rule']


def test_explicit_agcount():
    result = plan(agcount=8)
    assert result['errors'] == [] and result['agcount'] == 8 and result['agsize_bytes'] == 261888 * 4096
    assert result['agcount_rule'] == 'xfs_agcount 8 (set explicitly)'
    assert plan(agcount='6')['agcount'] == 6


@pytest.mark.parametrize('agcount, fragment', [
    (0, 'xfs_agcount: 0 is below the minimum 2 (mkfs.xfs needs at least two superblocks)'),
    (1, 'xfs_agcount: 1 is below the minimum 2'),
    (-3, 'xfs_agcount: -3 is below the minimum 2'),
    (64, 'xfs_agcount: 64 is out of range for a 8182 MiB (8579448832 bytes) (estimated) volume: 2 to 63 '
         '(AG size from 128 MiB (134217728 bytes) with an internal log to 1 TiB, at least 2 AGs)'),
    ('many', "xfs_agcount: 'many' is not an integer"),
    (True, 'xfs_agcount: True is not an integer'),
])
def test_bad_agcount_is_refused_naming_the_value_and_the_limit(agcount, fragment):
    result = plan(agcount=agcount)
    assert any(fragment in error for error in result['errors']), result['errors']
    assert result['mkfs'] is None


@pytest.mark.parametrize('settings, fragment', [
    ({'chunk': '1X'}, "xfs_chunk: '1X' is not a size"),
    ({'chunk': '3M'}, "xfs_chunk: '3M' is 3 MiB (3145728 bytes), not a power of two"),
    ({'chunk': '2K'}, 'below the minimum 4 KiB (4096 bytes)'),
    ({'chunk': '2G'}, 'mkfs.xfs takes less than 2 GiB'),
    ({'raid_level': 'raid1'}, "xfs_raid_level: 'raid1' is not supported; only raid0"),
    ({'raid_level': 5}, "xfs_raid_level: 5 is not supported"),
    ({'mount_point': 'mnt/ckpt'}, "xfs_mount_point: 'mnt/ckpt' is not an absolute path"),
    ({'mount_point': '/'}, "xfs_mount_point: '/' is an operating system directory"),
    ({'mount_point': '/var/'}, "xfs_mount_point: '/var/' is an operating system directory"),
    ({'mount_point': '/mnt/../var'}, 'is an operating system directory'),
    ({'mount_point': '/mnt/x/../y'}, 'contains . or .. components'),
    ({'checkpoint_dir': '/srv/elsewhere'}, "xfs_checkpoint_dir: '/srv/elsewhere' is not on the volume"),
    ({'checkpoint_dir': 'relative'}, 'is not an absolute path'),
    ({'md_name': 'my array'}, "xfs_md_name: 'my array' must be 1 to 32 letters"),
    ({'label': 'checkpoints-volume'}, 'xfs_label'),
    ({'log_device': '/dev/nvme2n1'}, "xfs_log_device: /dev/nvme2n1 is one of the volume's members"),
    ({'log_device': '/dev/disk/by-id/nvme-x', 'log_device_resolved': '/dev/nvme1n1'}, 'is one of the volume'),
    ({'log_device': 'nvme3n1'}, 'must be a block device path under /dev'),
    ({'log_size': '1G'}, 'xfs_log_size: set only with xfs_log_device'),
    ({'log_device': '/dev/nvme3n1', 'log_size': '16M'}, 'XFS logs are 64 MiB'),
    ({'mount_options': ['nobarrier']}, "'nobarrier' is refused: removed in Linux 4.19"),
    ({'mount_options': ['attr2']}, "'attr2' is refused: deprecated"),
    ({'mount_options': ['sunit=512']}, "'sunit=512' is refused: the stripe is made by mkfs.xfs"),
    ({'mount_options': ['logdev=/dev/x']}, 'set by the role from xfs_log_device'),
    ({'mount_options': ['nofail']}, 'put it in xfs_fstab_options'),
    ({'mount_options': ['bogus']}, "'bogus' is not an XFS mount option this role accepts"),
    ({'mount_options': ['logbufs=9']}, 'logbufs=9: the kernel takes 2 to 8 log buffers'),
    ({'mount_options': ['logbsize=512k']}, 'logbsize=512k: the kernel takes a power of two from 16k to 256k'),
    ({'mount_options': ['logbsize=1X']}, "logbsize: '1X' is not a size"),
    ({'mount_options': ['allocsize=3m']}, 'allocsize=3m'),
    ({'mount_options': ['noatime,largeio']}, 'is not one mount option'),
    ({'mount_options': ['largeio', 'nolargeio']}, "'nolargeio' contradicts 'largeio'"),
    ({'mount_options': ['noatime', 'noatime']}, "'noatime' is given twice"),
    ({'mount_options': ['largeio=1']}, 'takes no value'),
    ({'mount_options': ['logbufs']}, 'needs a value'),
    ({'fstab_options': ['noatime']}, "xfs_fstab_options: 'noatime' is not an fstab-only option"),
])
def test_bad_settings_are_refused_naming_the_value_and_the_limit(settings, fragment):
    result = plan(**settings)
    assert any(fragment in error for error in result['errors']), result['errors']
    assert result['mkfs'] is None


def test_every_error_is_reported_at_once():
    result = plan(chunk='1X', agcount=0, mount_point='rel', raid_level='raid5')
    assert len(result['errors']) == 4


def test_no_drive_is_an_error():
    assert plan(selected=[])['errors'] == ['no data drive selected: nothing to build the volume on']


def test_a_drive_without_a_size_is_an_error():
    result = plan(selected=[dict(SELECTED[0], size_bytes=None)])
    assert result['errors'] == ['/dev/nvme1n1: size unknown in the facts; cannot plan the volume']


def test_members_of_different_sizes_are_a_warning():
    result = plan(selected=[SELECTED[0], dict(SELECTED[1], size_bytes=8 * GIB)])
    assert result['errors'] == [] and 'members differ in size' in result['warnings'][0]


def test_too_small_a_volume():
    tiny = [dict(SELECTED[0], size_bytes=200 * MIB)]
    assert 'too small for XFS' in plan(selected=tiny)['errors'][0]


def test_external_log():
    log = {'name': 'nvme3n1', 'device': '/dev/disk/by-id/nvme-LOG0001', 'serial': 'LOG0001', 'wwid': 'eui.03',
           'size_bytes': GIB}
    result = plan(log_device='/dev/disk/by-id/nvme-LOG0001', log_device_resolved='/dev/nvme3n1', log_size='256M',
                  log_identity=log)
    assert result['errors'] == []
    assert result['log'] == {'internal': False, 'device': '/dev/disk/by-id/nvme-LOG0001',
                             'resolved': '/dev/nvme3n1', 'size_bytes': 256 * MIB,
                             'identity': {'name': 'nvme3n1', 'serial': 'LOG0001', 'wwid': 'eui.03', 'size_bytes': GIB}}
    # the log device may be named in xfs_force like a member (md_array gets only the members' names)
    named = plan(log_device='/dev/nvme3n1', log_identity=log, force=['LOG0001', 'DATA0002'])
    assert named['force'] == ['LOG0001', 'DATA0002'] and named['member_force'] == ['DATA0002']
    assert result['mkfs']['opts'].endswith('-l logdev=/dev/disk/by-id/nvme-LOG0001,size=268435456')
    assert result['mount']['opts'].endswith(',logdev=/dev/disk/by-id/nvme-LOG0001')
    # without an internal log, AGs may be as small as XFS allows
    assert xl.ag_bounds(LAB_MD_BYTES, internal_log=False)[1] > xl.ag_bounds(LAB_MD_BYTES)[1]


def test_default_options_and_opposites():
    options, errors = mo.check_mount_options(['nolargeio', 'nodiscard', 'allocsize=64m', 'relatime'])
    assert errors == [] and options == ['nolargeio', 'nodiscard', 'allocsize=64m', 'relatime']
    present, absent = mo.expected_mount_options(options)
    assert present == {'allocsize': 64 * MIB, 'relatime': True} and absent == ['largeio', 'discard']
    assert mo.check_mount_options('noatime,largeio') == (['noatime', 'largeio'], [])
    assert mo.check_mount_options(None) == ([], [])
    assert mo.check_mount_options(5)[1]


def test_fstab_only_options():
    assert mo.check_fstab_options(['nofail', 'x-systemd.device-timeout=30s', 'nofail']) == (
        ['nofail', 'x-systemd.device-timeout=30s'], [])
    assert mo.check_fstab_options(None) == ([], [])
    assert mo.check_fstab_options('nofail')[1]


def test_the_plan_does_not_modify_its_inputs():
    selected = copy.deepcopy(SELECTED)
    plan(selected=selected)
    assert selected == SELECTED


# ---------------------------------------------------------------- signatures
def test_parse_wipefs_json():
    sigs = wf.parse_wipefs_json(LAB_WIPEFS)
    assert [s['device'] for s in sigs] == ['nvme1n1', 'nvme2n1']
    assert sigs[0] == {'device': 'nvme1n1', 'offset': '0x438', 'type': 'ext4',
                       'uuid': '68efbee8-e2fc-4726-b513-4e32e0991b1b', 'label': None, 'usage': 'filesystem'}
    assert wf.parse_wipefs_json('{\n   "signatures": [\n\n   ]\n}\n') == []
    assert wf.parse_wipefs_json('') == []
    assert wf.parse_wipefs_json({'signatures': []}) == []


@pytest.mark.parametrize('text', ['not json', '[1, 2]', '{"signatures": 3}', 5])
def test_parse_wipefs_json_refuses_other_output(text):
    with pytest.raises(ValueError):
        wf.parse_wipefs_json(text)


def test_foreign_signatures_are_refused_naming_device_serial_and_signature():
    verdicts = wf.signature_verdicts(LAB_WIPEFS, SELECTED, {'md_uuids': [MD_UUID_MDADM]})
    by_path = dict((d['path'], d) for d in verdicts['devices'])
    assert by_path['/dev/nvme1n1']['verdict'] == 'foreign'
    assert by_path['/dev/nvme2n1']['verdict'] == 'ours'
    assert verdicts['refused'] == [
        '/dev/nvme1n1 (DATA0001) carries ext4 signature (UUID 68efbee8-e2fc-4726-b513-4e32e0991b1b, offset 0x438)']


def test_without_a_record_every_signature_is_foreign():
    verdicts = wf.signature_verdicts(LAB_WIPEFS, ['/dev/nvme1n1', '/dev/nvme2n1'])
    assert [d['verdict'] for d in verdicts['devices']] == ['foreign', 'foreign']
    assert 'linux_raid_member signature (UUID e78a7203-e730-df8e-32ae-8ffcb4fc9ee8, label lab-node:ckpt, ' \
           'offset 0x1000)' in verdicts['refused'][1]


def test_clean_devices_and_partition_tables_and_symlinks():
    sigs = [{'device': 'nvme-LOG', 'offset': '0x200', 'type': 'gpt', 'uuid': None, 'label': None,
             'usage': 'partition table'},
            {'device': 'md127', 'offset': '0x0', 'type': 'xfs', 'uuid': 'ABC-1', 'label': 'checkpoints',
             'usage': 'filesystem'}]
    verdicts = wf.signature_verdicts(sigs, [
        {'path': '/dev/disk/by-id/nvme-LOG'}, {'path': '/dev/md/ckpt', 'kernel_name': 'md127'}, '/dev/nvme9n1'],
        {'fs_uuids': ['ABC1']})
    assert [d['verdict'] for d in verdicts['devices']] == ['foreign', 'ours', 'clean']
    assert verdicts['refused'] == ['/dev/disk/by-id/nvme-LOG carries gpt partition table (offset 0x200)']


def test_an_xfs_of_someone_else_is_foreign_and_our_log_is_ours():
    sigs = [{'device': 'md127', 'offset': '0x0', 'type': 'xfs', 'uuid': 'other'},
            {'device': 'nvme3n1', 'offset': '0x0', 'type': 'xfs_external_log', 'uuid': None}]
    verdicts = wf.signature_verdicts(sigs, [{'path': '/dev/md/ckpt', 'kernel_name': 'md127'}, '/dev/nvme3n1'],
                                     {'fs_uuids': ['mine'], 'log_devices': ['/dev/nvme3n1']})
    assert [d['verdict'] for d in verdicts['devices']] == ['foreign', 'ours']


def test_norm_uuid():
    assert wf.norm_uuid(MD_UUID_MDADM) == wf.norm_uuid('e78a7203-e730-df8e-32ae-8ffcb4fc9ee8')
    assert wf.norm_uuid('') is None and wf.norm_uuid(None) is None


# ---------------------------------------------------------------- read back
def lab_fs(**changes):
    geometry = parse_xfs_info(LAB_XFS_INFO)
    fs = {'device': '/dev/md127', 'kernel_name': 'md127', 'mount_point': '/mnt/checkpoints',
          'options': parse_mount_options(LAB_MOUNT_OPTIONS),
          'md': {'name': 'md127', 'level': 'raid0', 'chunk_bytes': MIB, 'members': ['nvme1n1', 'nvme2n1']}}
    for key in ('agcount', 'agsize_bytes', 'sunit_bytes', 'swidth_bytes'):
        fs[key] = geometry[key]
    fs['log'] = {'internal': geometry['log']['internal'], 'device': geometry['log']['device'],
                 'bytes': geometry['log']['bytes']}
    fs.update(changes)
    return fs


def test_the_lab_volume_is_what_was_asked():
    assert xp.verify_volume(plan(target_size_bytes=LAB_MD_BYTES), lab_fs()) == []


@pytest.mark.parametrize('changes, fragment', [
    ({'agcount': 8}, 'agcount is 8 (xfs_info), asked 4'),
    ({'agsize_bytes': 261888 * 4096}, 'agsize_bytes is 1072693248 (xfs_info), asked 2146435072'),
    ({'sunit_bytes': 0}, 'sunit_bytes is 0 (xfs_info), asked 1048576'),
    ({'swidth_bytes': 4 * MIB}, 'swidth_bytes is 4194304 (xfs_info), asked 2097152'),
    ({'log': {'internal': False, 'device': '/dev/nvme3n1'}}, 'log is external (/dev/nvme3n1) (xfs_info), asked internal'),
    ({'options': parse_mount_options('rw,relatime,inode64,logbufs=8,logbsize=32k,sunit=2048,swidth=4096')},
     'mount option logbsize is 32k in /proc/mounts, asked 262144'),
    ({'options': parse_mount_options('rw,noatime,inode64,logbufs=8,logbsize=256k,largeio,swalloc')},
     '/proc/mounts stripe is sunit None / swidth None bytes, asked 1048576 / 2097152'),
    ({'md': {'name': 'md127', 'level': 'raid0', 'chunk_bytes': 512 * KIB, 'members': ['nvme1n1', 'nvme2n1']}},
     'md chunk is 524288 bytes, asked 1048576'),
    ({'md': {'name': 'md127', 'level': 'raid0', 'chunk_bytes': MIB, 'members': ['nvme1n1']}},
     'md members are nvme1n1, asked nvme1n1, nvme2n1'),
    ({'md': None}, 'not on an md array, asked /dev/md/ckpt'),
    ({'mount_point': '/mnt/other'}, 'mounted at /mnt/other, asked /mnt/checkpoints'),
])
def test_read_back_mismatches_name_both_values(changes, fragment):
    problems = xp.verify_volume(plan(target_size_bytes=LAB_MD_BYTES), lab_fs(**changes))
    assert any(fragment in problem for problem in problems), problems


def test_nothing_mounted():
    assert xp.verify_volume(plan(), None) == ['nothing is mounted at /mnt/checkpoints']


def test_agsize_is_not_compared_while_the_size_is_an_estimate():
    assert xp.verify_volume(plan(), lab_fs(agsize_bytes=1)) == []


def test_default_options_are_checked_by_absence():
    wanted = plan(target_size_bytes=LAB_MD_BYTES, mount_options=['noatime', 'nolargeio'])
    problems = xp.verify_volume(wanted, lab_fs())
    assert problems == ['mount option largeio is in /proc/mounts, asked without it']


def test_single_drive_volume_on_md_is_a_mismatch():
    wanted = plan(selected=SELECTED[:1])
    fs = lab_fs(agcount=wanted['agcount'], agsize_bytes=wanted['agsize_bytes'], sunit_bytes=0, swidth_bytes=0,
                options=parse_mount_options('rw,noatime,inode64,logbufs=8,logbsize=256k,largeio,swalloc'))
    assert xp.verify_volume(wanted, fs) == ['the filesystem is on md array md127, asked a single drive']
    assert xp.verify_volume(wanted, dict(fs, md=None)) == []


def test_external_log_read_back():
    wanted = plan(target_size_bytes=LAB_MD_BYTES, log_device='/dev/disk/by-id/nvme-LOG',
                  log_device_resolved='/dev/nvme3n1')
    fs = lab_fs(agcount=wanted['agcount'], agsize_bytes=wanted['agsize_bytes'],
                log={'internal': False, 'device': '/dev/nvme3n1'})
    assert xp.verify_volume(wanted, fs) == []
    elsewhere = dict(fs, log={'internal': False, 'device': '/dev/nvme4n1'})
    assert 'external log is on /dev/nvme4n1' in xp.verify_volume(wanted, elsewhere)[0]
    assert 'log is internal' in xp.verify_volume(wanted, dict(fs, log={'internal': True, 'device': None}))[0]


def test_human_bytes():
    assert xl.human_bytes(MIB) == '1 MiB (1048576 bytes)'
    assert xl.human_bytes(1000) == '1000 bytes'
    assert xl.human_bytes('x') == "'x'"


# ---------------------------------------------------------------- force names the drives (issue 12)
@pytest.mark.parametrize('force, fragment', [
    (True, "xfs_force: True is no longer accepted: name the drives that may be overwritten, by serial or WWID, for "
           "example xfs_force: [DATA0001, DATA0002]"),
    ('yes', "xfs_force: 'yes' is no longer accepted"),
    ({'DATA0001': True}, 'xfs_force must be a list of drive serials or WWIDs, got dict'),
    ([12], 'must hold drive serials or WWIDs as non-empty strings, got 12 (quote serials'),
    (['DATA0009'], 'xfs_force names DATA0009, which is none of the drives of this volume (/dev/nvme1n1: serial '
                   'DATA0001, wwid nvme.1b36-DATA0001, 4294967296 bytes; /dev/nvme2n1: serial DATA0002'),
    (['nvme1n1'], 'xfs_force names nvme1n1, which is none of the drives'),  # kernel names never count
])
def test_a_force_that_does_not_name_drives_of_the_volume_is_refused(force, fragment):
    """Before issue 12 xfs_force was one bool: true let every signed drive through (test failed: no error)."""
    errors = plan(force=force)['errors']
    assert len(errors) == 1 and fragment in errors[0], errors


@pytest.mark.parametrize('force, names', [
    (None, []), (False, []), ('false', []), ([], []),
    (['DATA0001'], ['DATA0001']), ('DATA0001, NVME.1B36-DATA0002', ['DATA0001', 'NVME.1B36-DATA0002']),
])
def test_a_force_names_members_by_serial_or_wwid(force, names):
    result = plan(force=force)
    assert result['errors'] == [] and result['force'] == names


def test_forced_verdicts_refuse_every_foreign_drive_the_force_does_not_name():
    wipefs = {'signatures': [{'device': 'nvme1n1', 'offset': '0x438', 'type': 'ext4', 'uuid': 'u1'},
                             {'device': 'nvme2n1', 'offset': '0x0', 'type': 'gpt', 'usage': 'partition table'}]}
    verdicts = wf.signature_verdicts(wipefs, SELECTED)
    assert len(verdicts['refused']) == 2
    forced = xp.forced_verdicts(verdicts, SELECTED, ['DATA0002'])
    assert forced['refused'] == ['/dev/nvme1n1 (DATA0001) carries ext4 signature (UUID u1, offset 0x438)']
    assert forced['forced'] == ['/dev/nvme2n1 (DATA0002) carries gpt partition table (offset 0x0) (xfs_force names '
                                'it: DATA0002)']
    assert [d['forced'] for d in forced['devices']] == [None, 'DATA0002']


# ---------------------------------------------------------------- revert (xfs_state: absent)
RECORD = {'state': 'present', 'md': {'name': 'ckpt', 'uuid': 'e78a7203:e730df8e:32ae8ffc:b4fc9ee8'},
          'members': [{'device': '/dev/nvme1n1', 'serial': 'DATA0001', 'wwid': 'nvme.1b36-DATA0001',
                       'size_bytes': 4 * GIB},
                      {'device': '/dev/nvme2n1', 'serial': 'DATA0002', 'wwid': 'nvme.1b36-DATA0002'}]}
# after a reboot the kernel named the drives the other way round
NAMESPACES = [{'name': 'nvme2n1', 'wwid': 'nvme.1b36-DATA0001'}, {'name': 'nvme1n1', 'wwid': 'NVME.1b36-DATA0002'}]


def test_revert_finds_the_recorded_members_by_wwid_and_needs_every_member_named_to_erase():
    keep = xp.revert_plan(NAMESPACES, RECORD, None)
    assert keep['errors'] == [] and keep['erase'] is False
    assert [m['device'] for m in keep['members']] == ['/dev/nvme2n1', '/dev/nvme1n1']
    assert keep['members'][0]['identity'] == {'name': 'nvme2n1', 'serial': 'DATA0001', 'wwid': 'nvme.1b36-data0001',
                                              'size_bytes': 4 * GIB}
    erase = xp.revert_plan(NAMESPACES, RECORD, ['DATA0001', 'nvme.1b36-data0002'])
    assert erase['errors'] == [] and erase['erase'] is True
    assert erase['member_force'] == ['DATA0001', 'nvme.1b36-data0002']
    some = xp.revert_plan(NAMESPACES, RECORD, ['DATA0001'])
    assert some['erase'] is False and some['errors'] == [
        'xfs_force names only some members of the recorded volume (not serial DATA0002, wwid nvme.1b36-DATA0002): its '
        'signatures span every member, so name all of them to erase them, or none to keep the data']
    assert 'is none of the drives' in xp.revert_plan(NAMESPACES, RECORD, ['DATA0001', 'DATA0002', 'X'])['errors'][0]
    assert 'no longer accepted' in xp.revert_plan(NAMESPACES, RECORD, True)['errors'][0]
    gone = xp.revert_plan(NAMESPACES[:1], RECORD, None)
    assert gone['members'][1] == {'device': None, 'identity': None}


# ---------------------------------------------------------------- settings alone (found by the bad-input sweep)
@pytest.mark.parametrize('settings, fragment', [
    ({'label': u'\u00e9' * 7}, "xfs_label: '\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9' must be at most 12 bytes"),
    ({'checkpoint_dir_mode': '0777'}, "xfs_checkpoint_dir_mode: '0777' lets every user of the node write"),
    ({'checkpoint_dir_mode': '0999'}, "xfs_checkpoint_dir_mode: '0999' is not an octal mode"),
    ({'checkpoint_dir_mode': 'x' * 100}, 'is not an octal mode (3 or 4 digits 0-7'),
    ({'checkpoint_dir_mode': 0o777}, 'lets every user of the node write'),
    ({'mdadm_conf': 'relative/x'}, "xfs_mdadm_conf: 'relative/x' is not an absolute path"),
    ({'mount_point': '/' + 'x' * 300}, 'has a component of 300 bytes; the kernel takes at most 255 (NAME_MAX)'),
    ({'mount_point': '/x' * 2100}, 'is 4200 bytes long; the kernel takes paths of at most 4095 bytes (PATH_MAX)'),
    ({'checkpoint_dir': '/mnt/checkpoints/' + 'y' * 256}, 'xfs_checkpoint_dir: '),
    ({'agcount': 2 ** 64}, 'xfs_agcount: 18446744073709551616 is above the maximum 4294967295 of XFS'),
])
def test_settings_alone_are_refused_before_anything_is_read(settings, fragment):
    merged = dict(SETTINGS, checkpoint_dir_mode='0750', mdadm_conf='/etc/mdadm/mdadm.conf')
    merged.update(settings)
    errors = xp.settings_errors(merged)
    assert len(errors) == 1 and fragment in errors[0], errors


def test_usable_settings_have_no_errors_and_modes_may_be_numbers():
    assert xp.settings_errors(dict(SETTINGS, checkpoint_dir_mode=0o750, mdadm_conf='/etc/mdadm/mdadm.conf')) == []
    assert mo.check_dir_mode('2770') == 0o2770 and mo.check_dir_mode(0o750) == 0o750


def test_a_volume_on_nvme_of_namespaces_mounts_with_netdev_and_nofail():
    fabric = [dict(c, transport='tcp') for c in CONTROLLERS]
    result = plan(controllers=fabric, fstab_options=[])
    assert result['errors'] == []
    assert result['mount']['fstab_opts'] == result['mount']['opts'] + ',_netdev,nofail'
    assert result['warnings'] == ['/dev/nvme1n1, /dev/nvme2n1 reached over NVMe-oF: fstab gets _netdev,nofail']
    assert plan()['mount']['fstab_only'] == ['nofail']  # local drives: as before


@pytest.mark.parametrize('mount_point', ['/mnt/checkpoints', '/mnt/check points', '/mnt/a&b', '/mnt/back\\slash'])
def test_the_revert_finds_the_fstab_line_in_the_form_fstab_holds_it(mount_point):
    """Issue 31, finding 14: ansible.posix.mount writes a space as \\040; the revert looked for the raw path and left
    the line of a mount point with a space."""
    import re
    from ansible_collections.ansible.posix.plugins.modules.mount import _escape_fstab
    plan = xp.revert_plan([], {'mount_point': mount_point, 'members': []})
    assert plan['fstab_mount_point'] == _escape_fstab(mount_point)
    line = 'UUID=0b1c %s xfs defaults 0 0' % _escape_fstab(mount_point)
    pattern = r'^\s*UUID=' + re.escape('0b1c') + r'\s+' + re.escape(plan['fstab_mount_point']) + r'\s'
    assert re.match(pattern, line)
    assert xp.revert_plan([], {})['fstab_mount_point'] is None
