# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import sysfs


def _write(path, text):
    with open(str(path), 'w') as f:
        f.write(text)


def test_read_str_strips_and_defaults(tmp_path):
    _write(tmp_path / 'model', 'QEMU NVMe Ctrl                          \n')
    assert sysfs.read_str(str(tmp_path / 'model')) == 'QEMU NVMe Ctrl'
    assert sysfs.read_str(str(tmp_path / 'missing')) is None
    assert sysfs.read_str(str(tmp_path / 'missing'), default='x') == 'x'
    # a directory is not readable as a file: default, no exception
    assert sysfs.read_str(str(tmp_path)) is None
    assert sysfs.read_str(None) is None


@pytest.mark.parametrize('text, expected', [
    ('1023\n', 1023),
    ('-1\n', -1),
    ('0x1f\n', 31),
    ('007\n', 7),
    ('', None),
    ('Y\n', None),
    ('write back\n', None),
])
def test_read_int(tmp_path, text, expected):
    _write(tmp_path / 'value', text)
    assert sysfs.read_int(str(tmp_path / 'value')) == expected


def test_read_int_missing_file(tmp_path):
    assert sysfs.read_int(str(tmp_path / 'nope')) is None
    assert sysfs.read_int(str(tmp_path / 'nope'), default=0) == 0


def test_read_list_and_lines(tmp_path):
    _write(tmp_path / 'l', 'a b  c\n')
    assert sysfs.read_list(str(tmp_path / 'l')) == ['a', 'b', 'c']
    assert sysfs.read_list(str(tmp_path / 'missing')) == []
    _write(tmp_path / 'm', 'x\ny\n')
    assert sysfs.read_lines(str(tmp_path / 'm')) == ['x', 'y']
    assert sysfs.read_lines(str(tmp_path / 'none')) == []


def test_listdir_natural_order_and_missing(tmp_path):
    for name in ('nvme10', 'nvme2', 'nvme1'):
        (tmp_path / name).mkdir()
    assert sysfs.listdir(str(tmp_path)) == ['nvme1', 'nvme2', 'nvme10']
    assert sysfs.listdir(str(tmp_path / 'missing')) == []


def test_readlink_basename(tmp_path):
    target = tmp_path / 'devices' / '0000:01:00.0'
    target.mkdir(parents=True)
    os.symlink('devices/0000:01:00.0', str(tmp_path / 'device'))
    assert sysfs.readlink_basename(str(tmp_path / 'device')) == '0000:01:00.0'
    assert sysfs.readlink_basename(str(target)) is None  # not a link
    assert sysfs.readlink_basename(str(tmp_path / 'missing')) is None


@pytest.mark.parametrize('text, active, available', [
    ('[none] mq-deadline ', 'none', ['none', 'mq-deadline']),
    ('none [mq-deadline] kyber bfq', 'mq-deadline', ['none', 'mq-deadline', 'kyber', 'bfq']),
    ('none', 'none', ['none']),
    ('', None, []),
    (None, None, []),
])
def test_parse_scheduler(text, active, available):
    assert sysfs.parse_scheduler(text) == {'active': active, 'available': available}


@pytest.mark.parametrize('text, expected', [
    ('0-3', [0, 1, 2, 3]),
    ('0-1,8,10-11', [0, 1, 8, 10, 11]),
    ('0-7:2', [0, 2, 4, 6]),
    ('', []),
    ('3-1', None),
    ('a-b', None),
    (None, None),
])
def test_expand_cpulist(text, expected):
    assert sysfs.expand_cpulist(text) == expected


def test_unescape_mount_field():
    assert sysfs.unescape_mount_field('/mnt/my\\040ckpt') == '/mnt/my ckpt'
    assert sysfs.unescape_mount_field('/plain') == '/plain'


def test_join_root():
    assert sysfs.join_root('/', '/etc/cufile.json') == '/etc/cufile.json'
    assert sysfs.join_root('/tmp/x', '/etc/cufile.json') == '/tmp/x/etc/cufile.json'


def test_natural_key_sorts_numbers_numerically():
    names = ['nvme1n1', 'nvme10n1', 'nvme2n1', 'nvme1n10', 'nvme1n2']
    assert sorted(names, key=sysfs.natural_key) == ['nvme1n1', 'nvme1n2', 'nvme1n10', 'nvme2n1', 'nvme10n1']
