# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""checkpoint_write on raw block devices (the measurement before a volume exists): real loop devices of the
test host (root, losetup), the host's real fio and wipefs; the background path polled with checkpoint_job."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import time

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_job, checkpoint_write

from helpers import module_args, require_tool, run_fio_module

MIB = 1024 * 1024
STATE = {}


@pytest.fixture(autouse=True)
def state_dir(tmp_path_factory):
    STATE['dir'] = str(tmp_path_factory.mktemp('state'))
    return STATE['dir']


@pytest.fixture
def loops(tmp_path):
    """Two 64 MiB loop devices over sparse files (blank: all zeros), detached afterwards."""
    devices = []
    try:
        for index in range(2):
            image = tmp_path / ('disk%d.img' % index)
            with open(str(image), 'wb') as handle:
                handle.truncate(64 * MIB)
            devices.append(subprocess.check_output([require_tool("losetup"), "--find", "--show", "--direct-io=on",
                                                    str(image)],
                                                   universal_newlines=True).strip())
        yield devices
    finally:
        for device in devices:
            subprocess.call(['losetup', '--detach', device])


def identity_of(device):
    """What the facts say of a loop device: its size (a loop device has no serial or wwid)."""
    with open('/sys/class/block/%s/size' % os.path.basename(os.path.realpath(device))) as handle:
        return {'device': device, 'size_bytes': int(handle.read()) * 512}


def run(capsys, **params):
    params.setdefault('ioengine', 'io_uring')
    params.setdefault('state_dir', STATE['dir'])
    if params.get('devices') and 'expect' not in params:
        params['expect'] = [identity_of(device) for device in set(os.path.realpath(d) for d in params['devices'])
                            if device.startswith('/dev/')]
    return run_fio_module(capsys, checkpoint_write.main, params)


def names(devices):
    return [os.path.basename(device) for device in devices]


def region(device, offset, length=4096):
    with open(device, 'rb') as handle:
        handle.seek(offset)
        return handle.read(length)


def test_ranks_write_their_own_regions_of_the_raw_devices(loops, capsys):
    rc, out = run(capsys, devices=loops, force_devices=names(loops), ranks=3, shard_size='8M', queue_depth=4)
    assert rc == 0, out
    assert out['devices'] == names(loops) and out['directories'] is None
    assert [(r['filename'], r['bytes']) for r in out['per_rank']] == [
        (loops[0], 8 * MIB), (loops[1], 8 * MIB), (loops[0], 8 * MIB)]
    assert '--fallocate=none' in out['command'] and '--thread' in out['command']
    # fio wrote the devices the module opened O_EXCL and re-identified, through their descriptors
    assert all(a.startswith('--filename=/proc/self/fd/') for a in out['command'] if a.startswith('--filename='))
    assert out['safety']['made_safe_by'].startswith('each device is opened O_WRONLY|O_EXCL')
    assert out['command'].count('--offset=0') == 2 and '--offset=%d' % (8 * MIB) in out['command']
    assert out['p99_ns'] > 0 and out['p99_ns'] == max(r['p99_ns'] for r in out['per_rank'])
    # rank 2 wrote the second 8 MiB of the first device; nothing was written past the ranks' regions
    assert region(loops[0], 8 * MIB) != b'\0' * 4096
    assert region(loops[0], 16 * MIB) == b'\0' * 4096 and region(loops[1], 8 * MIB) == b'\0' * 4096
    assert out['files_kept'] == []


def test_a_device_not_named_in_force_devices_is_refused_untouched(loops, capsys):
    rc, out = run(capsys, devices=loops, force_devices=[loops[0]], ranks=2, shard_size='8M')
    assert rc == 1
    assert '%s (%s): writing it raw destroys what it holds; name it in force_devices' % (
        loops[1], names(loops)[1]) in out['msg']
    assert out['msg'].startswith('devices refused, nothing was written: ')
    assert region(loops[0], 0) == b'\0' * 4096 and 'command' not in out


def test_a_device_with_a_signature_is_refused(loops, capsys):
    subprocess.check_call([require_tool('mkswap'), '-q', loops[1]])
    rc, out = run(capsys, devices=loops, force_devices=loops, ranks=2, shard_size='8M')
    assert rc == 1 and '/dev/%s is not blank: it carries swap signature' % names(loops)[1] in out['msg'], out
    assert region(loops[0], 0) == b'\0' * 4096


def test_two_paths_to_one_device_a_file_and_a_small_device_are_refused(loops, tmp_path, capsys):
    link = tmp_path / 'alias'
    link.symlink_to(loops[0])
    rc, out = run(capsys, devices=[loops[0], str(link)], force_devices=loops, ranks=2, shard_size='8M')
    assert rc == 1 and '%s is %s a second time (two paths to one device)' % (link, names(loops)[0]) in out['msg']
    afile = tmp_path / 'disk0.img'
    rc, out = run(capsys, devices=[str(afile)], force_devices=[str(afile)], ranks=1, shard_size='8M')
    assert rc == 1 and '%s is not under /dev' % afile in out['msg']
    rc, out = run(capsys, devices=[loops[0]], force_devices=loops, ranks=9, shard_size='8M')
    assert rc == 1 and '%s holds %d bytes, below the %d bytes its ranks write' % (
        names(loops)[0], 64 * MIB, 72 * MIB) in out['msg']
    rc, out = run(capsys, devices=[loops[0]], directories=[str(tmp_path)], ranks=1, shard_size='8M')
    assert rc == 1 and 'mutually exclusive' in out['msg']


def test_a_mounted_device_is_refused(loops, tmp_path, capsys):
    subprocess.check_call([require_tool('mkfs.ext4'), '-q', '-F', loops[0]])
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    subprocess.check_call([require_tool('mount'), loops[0], str(mnt)])
    try:
        rc, out = run(capsys, devices=[loops[0]], force_devices=loops, ranks=1, shard_size='8M')
    finally:
        subprocess.call(['umount', str(mnt)])
    assert rc == 1 and '%s is in use: mounted at %s' % (names(loops)[0], mnt) in out['msg'], out


def test_background_write_of_raw_devices_reports_progress_from_the_sectors_written(loops, tmp_path, capsys):
    import json
    store = str(tmp_path / 'jobs')
    rc, out = run(capsys, devices=loops, force_devices=loops, ranks=2, shard_size='32M', queue_depth=2,
                  background=True, job_store=store, block_size='64K')
    assert rc == 0 and out['started'], out
    deadline = time.time() + 60
    while True:
        params = dict(job_id=out['job_id'], job_store=store, wait=0.2, state_dir=STATE['dir'])
        with module_args(params):
            with pytest.raises(SystemExit) as exc:
                checkpoint_job.main()
        polled = json.loads(capsys.readouterr().out)
        assert exc.value.code == 0, polled
        if polled['finished']:
            break
        assert 0 <= polled['progress']['bytes_written'] <= 64 * MIB
        assert time.time() < deadline
    assert polled['result']['total_bytes'] == 64 * MIB and polled['result']['devices'] == names(loops)
    assert polled['progress']['bytes_written'] == 64 * MIB


def test_fewer_ranks_than_devices_leaves_the_others_unwritten(loops, capsys):
    rc, out = run(capsys, devices=loops, force_devices=loops, ranks=1, shard_size='8M')
    assert rc == 0, out
    assert [r['filename'] for r in out['per_rank']] == [loops[0]]
    assert region(loops[1], 0) == b'\0' * 4096


def test_a_device_that_is_not_the_expected_one_is_refused_unwritten(loops, capsys):
    """The drive the facts selected was 64 MiB with serial X; the device at that name now is another: refused
    from its open descriptor, nothing written (a renumbered drive is never overwritten)."""
    with open(loops[0], 'rb') as handle:
        before = handle.read()
    for expect, why in (
            ([{'device': loops[0], 'size_bytes': 128 * MIB}], "size_bytes %d, expected %d" % (64 * MIB, 128 * MIB)),
            ([{'device': names(loops)[0], 'size_bytes': 64 * MIB, 'serial': 'DATA0001'}],
             "serial None, expected 'DATA0001'"),
            ([{'device': loops[0]}], 'nothing identifies it')):
        rc, out = run(capsys, devices=[loops[0]], force_devices=loops, ranks=1, shard_size='8M', expect=expect)
        assert rc == 1 and why in out['msg'] and 'nothing was written' in out['msg'], out
        assert '%s is not the drive that was selected' % names(loops)[0] in out['msg'] or why == \
            'nothing identifies it'
    with open(loops[0], 'rb') as handle:
        assert handle.read() == before


def test_devices_without_expect_are_refused(loops, capsys):
    rc, out = run(capsys, devices=loops, force_devices=loops, ranks=2, shard_size='8M',
                  expect=[identity_of(loops[0])])
    assert rc == 1 and ('%s (%s) has no entry in expect' % (loops[1], names(loops)[1])) in out['msg'], out
    rc, out = run(capsys, devices=[loops[0]], force_devices=loops, ranks=1, shard_size='8M',
                  expect=[identity_of(loops[0]), identity_of(loops[1])])
    assert rc == 1 and 'expect[1]: %s is not one of devices' % loops[1] in out['msg'], out
    assert region(loops[0], 0) == b'\0' * 4096


def test_a_device_held_open_exclusively_is_refused(loops, capsys):
    """O_EXCL: a device another program holds exclusively (md, a mount, mkfs) is refused by the kernel."""
    holder = os.open(loops[0], os.O_RDONLY | os.O_EXCL)
    try:
        rc, out = run(capsys, devices=[loops[0]], force_devices=loops, ranks=1, shard_size='8M')
    finally:
        os.close(holder)
    assert rc == 1 and '/dev/%s cannot be opened exclusively: Device or resource busy' % names(loops)[0] \
        in out['msg'], out
    assert region(loops[0], 0) == b'\0' * 4096
