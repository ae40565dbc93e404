# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from testenv import REAL_WORLD

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.md import MDSTAT_ARRAY_KEYS, parse_mdstat
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs import (
    LOG_KEYS,
    XFS_INFO_KEYS,
    mount_stripe_bytes,
    parse_mount_options,
    parse_xfs_info,
)
from helpers import fixture as _fixture, subset


def fixture(name):
    return _fixture('xfs', name)


KIB = 1024
MIB = 1024 * KIB


XFS_CASES = [
    ("xfs_info_md_raid0_8x_512k.txt", {
        "device": "/dev/md0", "isize": 512, "agcount": 64, "agsize_blocks": 60030976,
        "agsize_bytes": 60030976 * 4096, "block_size": 4096, "sector_size": 4096,
        "data_blocks": 3841982464, "size_bytes": 3841982464 * 4096,
        "sunit_blocks": 128, "swidth_blocks": 1024, "sunit_bytes": 512 * KIB, "swidth_bytes": 4 * MIB,
        "log": {"internal": True, "device": None, "blocks": 521728, "bytes": 521728 * 4096,
                "version": 2, "sunit_bytes": 256 * KIB},
        "realtime": None, "errors": {},
    }),
    ("mkfs_xfs_md_raid10_warning_preamble.txt", {
        "device": "/dev/md1", "sector_size": 512, "sunit_bytes": MIB, "swidth_bytes": 4 * MIB,
        "log": {"internal": True, "device": None, "blocks": 238418, "bytes": 238418 * 4096,
                "version": 2, "sunit_bytes": 32 * KIB},
        "errors": {},
    }),
    ("xfs_info_external_log_realtime_newest.txt", {
        "device": "/dev/nvme4n1", "sunit_bytes": 0, "swidth_bytes": 0,
        "log": {"internal": False, "device": "/dev/nvme5n1p1", "blocks": 524288, "bytes": 2 * 1024 * MIB,
                "version": 2, "sunit_bytes": 4096},
        "realtime": {"device": "/dev/nvme6n1", "extent_size_bytes": MIB, "blocks": 1875366486,
                     "extents": 7325650},
        "errors": {},
    }),
    ("xfs_info_v4_old_unaligned.txt", {
        "device": "/dev/md2", "isize": 256, "agsize_blocks": 268435455, "sunit_blocks": 0,
        "sunit_bytes": 0, "swidth_bytes": 0,
        "log": {"internal": True, "device": None, "blocks": 521728, "bytes": 521728 * 4096,
                "version": 2, "sunit_bytes": 0},
        "errors": {},
    }),
]


@pytest.mark.parametrize("name, expected", XFS_CASES)
def test_parse_xfs_info(name, expected):
    result = parse_xfs_info(fixture(name))
    assert sorted(result) == sorted(XFS_INFO_KEYS + ("errors",))
    subset(result, expected)
    if result["log"] is not None:
        assert sorted(result["log"]) == sorted(LOG_KEYS)


@pytest.mark.parametrize("name, expected", [
    ("xfs_info_md_raid0_8x_512k.txt", {
        "crc": True, "finobt": True, "sparse": True, "rmapbt": True, "reflink": True, "bigtime": True,
        "inobtcount": True, "nrext64": True, "ftype": True, "ascii_ci": False, "projid32bit": True,
        "attr": 2, "lazy_count": True}),
    ("xfs_info_external_log_realtime_newest.txt", {
        "reflink": False, "nrext64": True, "exchange": True, "metadir": True, "parent": True}),
    ("xfs_info_v4_old_unaligned.txt", {
        "crc": False, "finobt": False, "spinodes": False, "projid32bit": False, "ftype": True}),
])
def test_parse_xfs_info_features(name, expected):
    features = parse_xfs_info(fixture(name))["features"]
    subset(features, expected)
    assert "isize" not in features and "sunit" not in features and "bsize" not in features


def test_parse_xfs_info_old_mkfs_without_sector_size():
    text = (
        "meta-data=/dev/sdb isize=256    agcount=4, agsize=65536 blks\n"
        "data     =                       bsize=4096   blocks=262144, imaxpct=25\n"
        "         =                       sunit=0      swidth=0 blks, unwritten=0\n"
        "naming   =version 2              bsize=4096\n"
        "log      =internal log           bsize=4096   blocks=1200, version=1\n"
        "         =                       sunit=0 blks\n"
        "realtime =none                   extsz=65536  blocks=0, rtextents=0\n")
    result = parse_xfs_info(text)
    subset(result, {"device": "/dev/sdb", "sector_size": None, "sunit_bytes": 0, "errors": {}})
    assert result["log"]["version"] == 1
    assert result["features"] == {"unwritten": False}


def test_parse_xfs_info_truncated():
    result = parse_xfs_info(fixture("xfs_info_truncated.txt"))
    subset(result, {"device": "/dev/md0", "block_size": 4096, "sunit_blocks": 32,
                    "sunit_bytes": 128 * KIB, "swidth_blocks": None, "swidth_bytes": None,
                    "log": None, "realtime": None})
    assert set(result["errors"]) == {"swidth_blocks", "naming", "log", "realtime"}


def test_parse_xfs_info_two_filesystems_parses_first():
    text = fixture("xfs_info_md_raid0_8x_512k.txt") + fixture("xfs_info_v4_old_unaligned.txt")
    result = parse_xfs_info(text)
    assert result["device"] == "/dev/md0"
    assert "_input" in result["errors"]


@pytest.mark.parametrize("text", [None, "", "\n", "not xfs", 17, "data     =    bsize=4096\n"])
def test_parse_xfs_info_bad_input(text):
    result = parse_xfs_info(text)
    assert all(result[key] is None for key in XFS_INFO_KEYS)
    assert result["errors"]["_input"]


def test_parse_xfs_info_wrong_type_in_one_field():
    text = fixture("xfs_info_md_raid0_8x_512k.txt").replace("agcount=64", "agcount=lots")
    result = parse_xfs_info(text)
    assert result["agcount"] is None and result["sunit_bytes"] == 512 * KIB
    assert set(result["errors"]) == {"agcount"}


# ---------------------------------------------------------------- mount options
@pytest.mark.parametrize("text, expected", [
    ("rw,noatime,attr2,inode64,logbufs=8,logbsize=256k,sunit=128,swidth=512,noquota", {
        "rw": True, "noatime": True, "attr2": True, "inode64": True, "logbufs": 8,
        "logbsize": "256k", "sunit": 128, "swidth": 512, "noquota": True}),
    ("(rw,relatime,allocsize=65536k)", {"rw": True, "relatime": True, "allocsize": "65536k"}),
    ("", {}),
    (None, {}),
    ("rw,,noatime,", {"rw": True, "noatime": True}),
    ("context=system_u:object_r:tmp_t:s0,rw", {"context": "system_u:object_r:tmp_t:s0", "rw": True}),
])
def test_parse_mount_options(text, expected):
    assert parse_mount_options(text) == expected


@pytest.mark.parametrize("options, expected", [
    ("rw,sunit=128,swidth=512", {"sunit_bytes": 64 * KIB, "swidth_bytes": 256 * KIB}),
    ({"sunit": 1024, "swidth": 8192}, {"sunit_bytes": 512 * KIB, "swidth_bytes": 4 * MIB}),
    ("rw,noatime", {"sunit_bytes": None, "swidth_bytes": None}),
    ({"sunit": "x", "swidth": True}, {"sunit_bytes": None, "swidth_bytes": None}),
])
def test_mount_stripe_bytes(options, expected):
    assert mount_stripe_bytes(options) == expected


def test_mount_and_xfs_info_agree_in_bytes():
    """xfs_info counts fs blocks, /proc/mounts 512-byte sectors: equal in bytes."""
    info = parse_xfs_info(fixture("xfs_info_md_raid0_8x_512k.txt"))
    mount = mount_stripe_bytes("rw,noatime,sunit=1024,swidth=8192")
    assert (info["sunit_bytes"], info["swidth_bytes"]) == (mount["sunit_bytes"], mount["swidth_bytes"])


# ---------------------------------------------------------------- mdstat
def test_parse_mdstat_raid0_raid10():
    arrays = parse_mdstat(fixture("mdstat_raid0_raid10.txt"))
    assert sorted(arrays) == ["md0", "md1"]
    for array in arrays.values():
        assert sorted(array) == sorted(MDSTAT_ARRAY_KEYS)
    subset(arrays["md0"], {
        "level": "raid0", "state": "active", "read_only": False,
        "members": ["nvme%dn1" % i for i in range(8)], "failed": [], "spares": [],
        "chunk_bytes": 512 * KIB, "size_bytes": 30011859968 * KIB,
        "raid_disks": None, "active_disks": None, "degraded": None,
    })
    subset(arrays["md1"], {
        "level": "raid10", "members": ["nvme8n1", "nvme9n1", "nvme10n1", "nvme11n1"],
        "chunk_bytes": MIB, "raid_disks": 4, "active_disks": 4, "degraded": False,
    })


def test_parse_mdstat_degraded_spare_resync_inactive():
    arrays = parse_mdstat(fixture("mdstat_degraded_spare_resync.txt"))
    subset(arrays["md126"], {
        "level": "raid5", "members": ["nvme0n1", "nvme2n1", "nvme3n1"], "failed": ["nvme1n1"],
        "spares": ["nvme9n1"], "chunk_bytes": 512 * KIB, "raid_disks": 4, "active_disks": 3,
        "degraded": True, "size_bytes": 11251817472 * KIB,
    })
    subset(arrays["md127"], {"level": "raid1", "read_only": True, "chunk_bytes": None,
                             "members": ["sda1", "sdb1"], "degraded": False})
    subset(arrays["md125"], {"level": None, "state": "inactive", "members": [],
                             "spares": ["nvme12n1"]})


@pytest.mark.parametrize("text", [fixture("mdstat_empty.txt"), "", None, 5, "garbage\nmore"])
def test_parse_mdstat_nothing(text):
    assert parse_mdstat(text) == {}


# ---------------------------------------------------------------- real-world samples
def real_world(name):
    if not os.path.isdir(REAL_WORLD):
        pytest.skip("real-world outputs folder absent: %s" % REAL_WORLD)
    with open(os.path.join(REAL_WORLD, name)) as handle:
        return handle.read()


def real_world_tables():
    """Each xfs_info/mkfs table of xfs_info_real_outputs.txt, with its sample's mount lines."""
    text = real_world("xfs_info_real_outputs.txt")
    tables = []
    for block in re.split(r"^#{6,}.*$", text, flags=re.M)[1:]:
        mounts = dict(re.findall(r"^(/dev/\S+) on \S+ type xfs \((.*)\)$", block, flags=re.M))
        for table in re.split(r"(?=^meta-data=)", block, flags=re.M)[1:]:
            tables.append((table, mounts))
    return tables


def test_real_world_xfs_info_geometry_in_bytes():
    results = [(parse_xfs_info(table), mounts) for table, mounts in real_world_tables()]
    got = [(r["device"], r["block_size"], r["sunit_bytes"], r["swidth_bytes"]) for r, _m in results]
    assert got == [
        ("/dev/md0", 4096, 64 * KIB, 256 * KIB),      # (A) RAID10 md0: sunit=16 swidth=64 blks
        ("/dev/md1", 4096, 256 * KIB, MIB),           # (A) md1: sunit=64 swidth=256 blks
        ("/dev/md127", 4096, 512 * KIB, 2560 * KIB),  # (B) 512K chunk x 5 data disks
        ("/dev/md0", 4096, 0, 0),                     # (C) RAID0 left unaligned
        ("/dev/nvme1n1", 4096, 0, 0),                 # (D) external log
        ("/dev/md0", 4096, 512 * KIB, 1536 * KIB),    # (E) mkfs after warning preamble
        ("/dev/nvme1n1", 4096, 0, 0),                 # (F) single instance-store NVMe
    ]
    # /proc/mounts sunit/swidth (512-byte sectors) agree with xfs_info (fs blocks) in bytes
    checked = 0
    for result, mounts in results:
        if result["device"] in mounts:
            stripe = mount_stripe_bytes(mounts[result["device"]])
            assert (stripe["sunit_bytes"], stripe["swidth_bytes"]) == (result["sunit_bytes"], result["swidth_bytes"])
            checked += 1
    assert checked == 2


def test_real_world_xfs_info_details():
    results = [parse_xfs_info(table) for table, _mounts in real_world_tables()]
    a_md0, _a_md1, b_md127, c_md0, d_ext, e_mkfs, f_nvme = results
    assert a_md0["log"] == {"internal": True, "device": None, "blocks": 25583, "bytes": 25583 * 4096,
                            "version": 2, "sunit_bytes": 4096}
    assert a_md0["features"]["nrext64"] is False and a_md0["features"]["reflink"] is True
    assert b_md127["log"]["sunit_bytes"] == 32 * KIB and b_md127["features"]["rmapbt"] is False
    assert c_md0["isize"] == 256 and c_md0["features"]["crc"] is False
    assert c_md0["features"]["spinodes"] is False and c_md0["log"]["internal"] is True
    assert d_ext["log"]["internal"] is False and d_ext["log"]["device"] == "/dev/nvme0n1"
    assert d_ext["log"]["bytes"] == 1024 * MIB
    subset(d_ext["features"], {"nrext64": True, "exchange": False, "metadir": False, "parent": False})
    assert set(d_ext["errors"]) == {"realtime"}  # excerpt truncated before the realtime line
    assert e_mkfs["errors"] == {} and e_mkfs["log"]["sunit_bytes"] == 32 * KIB
    assert f_nvme["realtime"] is None and f_nvme["features"]["exchange"] is False
    for result in (a_md0, b_md127, c_md0, e_mkfs, f_nvme):
        assert result["errors"] == {}


def test_real_world_mkfs_xfs_old():
    result = parse_xfs_info(real_world("ocpautoval_mkfs_xfs_output.txt"))
    subset(result, {"device": "/dev/sda", "isize": 256, "agcount": 18, "agsize_blocks": 1048576,
                    "agsize_bytes": 4 * 1024 * MIB, "block_size": 4096, "sector_size": None,
                    "sunit_bytes": 0, "swidth_bytes": 0, "realtime": None, "errors": {}})
    assert result["log"] == {"internal": True, "device": None, "blocks": 2187, "bytes": 2187 * 4096,
                             "version": 1, "sunit_bytes": 0}
    assert result["features"] == {"unwritten": False}


def test_a_superblock_whose_mkfs_never_finished_is_told_apart():
    """Issue 31, finding 10: byte 126 of the primary superblock (sb_inprogress)."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs import superblock_in_progress
    whole = b'XFSB' + b'\0' * 508
    half = whole[:126] + b'\x01' + whole[127:]
    assert not superblock_in_progress(whole) and superblock_in_progress(half)
    assert not superblock_in_progress(b'\0' * 126 + b'\x01' + b'\0' * 385)  # not an XFS
    assert not superblock_in_progress(b'XFSB')  # too short to say
