# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The xfs_format module on real block devices: loop devices of the test host (root, losetup) stand for the
drives, the array and the log device; a fake sysfs tree says who they are (found through their real device
numbers); the host's real wipefs probes and erases; mkfs.ext4 plants foreign filesystems. mkfs.xfs is not on the
test host: a stand-in writes a version 4 XFS superblock (with the asked UUID and label) that the real wipefs
recognizes, and, like mkfs.xfs without -f, refuses a device that carries a signature. The half-made filesystem a
killed mkfs.xfs leaves is made by the real mkfs.xfs (xfsprogs), slowed down by strace and killed mid-way."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import struct
import subprocess
import time
import uuid as uuidlib

import pytest

from ansible.module_utils import basic

from ansible_collections.ai_storage.checkpoint_io.plugins.modules import xfs_format

from helpers import module_args, require_tool
from loop_devices import loop_devices

MIB = 1024 * 1024
GIB = 1024 * MIB
FS_UUID = '0b7e6c1e-3c55-4d7a-a0f1-6a4c2d9e8b13'
MD_UUID = 'e78a7203:e730df8e:32ae8ffc:b4fc9ee8'
OPTIONS = ['-L', 'checkpoints', '-d', 'su=1048576,sw=2,agsize=2146435072']
DRIVE = {'serial': 'DATA0001', 'wwid': 'eui.0000000000000001', 'size_bytes': 4 * GIB}
MEMBERS = [{'serial': 'DATA0002', 'wwid': 'eui.0000000000000002', 'size_bytes': 4 * GIB},
           {'serial': 'DATA0003', 'wwid': 'eui.0000000000000003', 'size_bytes': 4 * GIB}]
LOG = {'serial': 'LOG0001', 'wwid': 'eui.00000000000000aa', 'size_bytes': GIB}


def xfs_superblock(fs_uuid, label):
    """A version 4 XFS superblock libblkid accepts: 4 KiB blocks, 4 AGs of 64 blocks, 256-byte inodes."""
    head = struct.pack('>4sIQQQ16sQQQQIIIIIHHHH12sBBBBBBBB', b'XFSB', 4096, 256, 0, 0, uuidlib.UUID(fs_uuid).bytes,
                       0, 128, 129, 130, 1, 64, 4, 0, 64, 4, 512, 256, 16, label.encode().ljust(12, b'\0'),
                       12, 9, 8, 4, 6, 0, 0, 25)
    return head.ljust(512, b'\0')


class Node(object):
    """Three real block devices: nvme1n1 (a drive, DATA0001), md127 (an array of DATA0002 and DATA0003) and
    nvme4n1 (a log device, LOG0001), named and identified in a fake sysfs."""

    def __init__(self, base, loops):
        self.sys = os.path.join(str(base), 'sys')
        self.loops = dict(zip(('nvme1n1', 'md127', 'nvme4n1'), loops))
        self.log = []
        self.open_during = []
        for name, loop in self.loops.items():
            block = os.path.join(self.sys, 'class', 'block', name)
            os.makedirs(block)
            rdev = os.stat(loop).st_rdev
            majmin = os.path.join(self.sys, 'dev', 'block', '%d:%d' % (os.major(rdev), os.minor(rdev)))
            os.makedirs(os.path.dirname(majmin), exist_ok=True)
            os.symlink('../../class/block/' + name, majmin)
        self.identify('nvme1n1', DRIVE)
        self.identify('nvme4n1', LOG)
        for member in MEMBERS:
            name = 'nvme%sn1' % member['serial'][-1]
            os.makedirs(os.path.join(self.sys, 'class', 'block', name))
            self.identify(name, member)
        md = os.path.join(self.sys, 'class', 'block', 'md127')
        os.makedirs(os.path.join(md, 'md'))
        os.makedirs(os.path.join(md, 'slaves'))
        self.write(os.path.join(md, 'md', 'uuid'), 'e78a7203-e730-df8e-32ae-8ffcb4fc9ee8')
        for name in ('nvme2n1', 'nvme3n1'):
            os.symlink('../../' + name, os.path.join(md, 'slaves', name))

    @staticmethod
    def write(path, text):
        with open(path, 'w') as handle:
            handle.write(text + '\n')

    def identify(self, name, ident):
        block = os.path.join(self.sys, 'class', 'block', name)
        self.write(os.path.join(block, 'wwid'), ident['wwid'])
        self.write(os.path.join(block, 'size'), str(ident['size_bytes'] // 512))
        os.makedirs(os.path.join(block, 'device'), exist_ok=True)
        self.write(os.path.join(block, 'device', 'serial'), ident['serial'].ljust(20))

    def signatures(self, name):
        out = subprocess.check_output([require_tool('wipefs'), '--no-act', '--json', '--output',
                                       'DEVICE,OFFSET,TYPE,UUID,LABEL', self.loops[name]], universal_newlines=True)
        return [(sig['type'], sig.get('uuid')) for sig in json.loads(out or '{"signatures": []}')['signatures']]

    def mkfs_ext4(self, name):
        subprocess.check_call([require_tool('mkfs.ext4'), '-q', '-F', self.loops[name]])

    def open_now(self):
        found = []
        for fd in os.listdir('/proc/self/fd'):
            target = os.path.realpath('/proc/self/fd/' + fd)
            if target in self.loops.values():
                found.append(target)
        return sorted(found)

    def mkfs_xfs(self, argv):
        device = argv[-1]
        existing = subprocess.check_output([require_tool('wipefs'), '--no-act', '--json', device],
                                           universal_newlines=True)
        if '-f' not in argv and existing.strip() and json.loads(existing)['signatures']:
            return 1, '', ('mkfs.xfs: %s appears to contain an existing filesystem.\nmkfs.xfs: Use the -f option to '
                           'force overwrite.\n' % device)
        fs_uuid = argv[argv.index('-m') + 1].split('=', 1)[1]
        label = argv[argv.index('-L') + 1] if '-L' in argv else ''
        with open(device, 'r+b') as handle:
            handle.write(xfs_superblock(fs_uuid, label))
        return 0, 'meta-data=%s isize=256 agcount=4\n' % device, ''


@pytest.fixture
def node(tmp_path, monkeypatch):
    with loop_devices(tmp_path, 3, 8 * MIB) as loops:
        fake = Node(tmp_path, loops)
        real_run = basic.AnsibleModule.run_command

        def run_command(self, args, **kwargs):
            fake.log.append(list(args))
            fake.open_during.append(fake.open_now())
            if os.path.basename(args[0]) == 'mkfs.xfs':
                return fake.mkfs_xfs(list(args))
            return real_run(self, args, **kwargs)

        monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path',
                            lambda self, name, required=False, opt_dirs=None: shutil.which(name) or '/sbin/' + name)
        yield fake


def run(capsys, node, check=False, target='drive', **params):
    args = dict(uuid=FS_UUID, options=OPTIONS, sysfs_root=node.sys, _ansible_check_mode=check, _ansible_diff=True)
    if target == 'drive':
        args.update(device=node.loops['nvme1n1'], drive=DRIVE)
    else:
        args.update(device=node.loops['md127'], md_uuid=MD_UUID, members=MEMBERS)
    args.update(params)
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            xfs_format.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def mkfs_runs(node):
    return [argv for argv in node.log if os.path.basename(argv[0]) == 'mkfs.xfs']


def test_a_blank_drive_gets_the_xfs_with_the_chosen_uuid_and_a_rerun_keeps_it(node, capsys):
    rc, out = run(capsys, node, check=True)
    assert rc == 0 and out['changed'] is True and out['action'] == 'created' and out['uuid'] is None
    assert out['commands'] == [[out['commands'][0][0]] + OPTIONS + ['-m', 'uuid=' + FS_UUID, node.loops['nvme1n1']]]
    assert node.signatures('nvme1n1') == [] and mkfs_runs(node) == []  # check mode wrote nothing
    assert out['diff']['after'] == 'xfs (UUID %s)\n' % FS_UUID
    rc, out = run(capsys, node)
    assert rc == 0 and out['action'] == 'created' and out['uuid'] == FS_UUID
    assert node.signatures('nvme1n1') == [('xfs', FS_UUID)]
    # the next run (or a run after one killed before it recorded anything) finds its own filesystem
    rc, again = run(capsys, node)
    assert rc == 0 and again['changed'] is False and again['action'] == 'none' and again['commands'] == []
    assert again['uuid'] == FS_UUID and len(mkfs_runs(node)) == 1


def test_the_device_is_held_open_while_mkfs_writes_it(node, capsys):
    rc, out = run(capsys, node)
    assert rc == 0
    index = [i for i, argv in enumerate(node.log) if os.path.basename(argv[0]) == 'mkfs.xfs'][0]
    assert node.open_during[index] == [node.loops['nvme1n1']]
    assert node.open_now() == []


def test_a_renumbered_drive_is_refused_before_anything_is_written(node, capsys):
    """The name points at another drive (DATA0009) after a reset: nothing is written (before issue 12 the role's
    community.general.filesystem formatted whatever the name pointed at)."""
    node.identify('nvme1n1', dict(DRIVE, serial='DATA0009', wwid='eui.0000000000000009'))
    rc, out = run(capsys, node)
    assert rc == 1
    assert ("is not the drive that was selected: wwid 'eui.0000000000000009', expected 'eui.0000000000000001', "
            "serial 'DATA0009', expected 'DATA0001'") in out['msg']
    assert 'run again' in out['msg'] and node.log == [] and node.signatures('nvme1n1') == []


def test_a_foreign_filesystem_is_refused_unless_force_names_the_drive(node, capsys):
    node.mkfs_ext4('nvme1n1')
    rc, out = run(capsys, node, force=['DATA0002', 'nvme1n1'])  # another drive, a kernel name: no drive of it
    assert rc == 1 and out['msg'] == ('force names DATA0002, nvme1n1, which are none of the drives this device is '
                                      'made of (drive, members, log_identity). Nothing was changed.')
    rc, out = run(capsys, node)
    assert rc == 1
    assert out['msg'].startswith('refusing to format %s: %s (serial DATA0001, wwid eui.0000000000000001, 4294967296 '
                                 'bytes) carries ext4 signature' % (node.loops['nvme1n1'], node.loops['nvme1n1']))
    assert 'Not formatted, nothing was changed' in out['msg']
    assert [kind for kind, dummy in node.signatures('nvme1n1')] == ['ext4'] and mkfs_runs(node) == []
    rc, out = run(capsys, node, force=['DATA0001'])
    assert rc == 0 and out['action'] == 'created'
    assert [argv[1] for argv in out['commands']] == ['--all', OPTIONS[0]]
    assert node.signatures('nvme1n1') == [('xfs', FS_UUID)]


@pytest.mark.parametrize('params, fragment', [
    ({'force': True}, "force: True is no longer accepted: name the drives that may be overwritten"),
    ({'uuid': 'not-a-uuid'}, "uuid: 'not-a-uuid' is not a UUID"),
    ({'drive': {'model': 'x'}}, "drive: {'model': 'x'} identifies nothing"),
    ({'drive': {'serial': ['DATA0001']}}, "drive: serial ['DATA0001'] in {'serial': ['DATA0001']} is not a string"),
    ({'drive': None}, 'drive or md_uuid: give what the device must be'),
    ({'target': 'md', 'md_uuid': 'not-a-uuid'}, "md_uuid: 'not-a-uuid' is not a UUID"),
    ({'target': 'md', 'members': []}, 'members: [] names no member'),
    ({'log_device': '/dev/nvme4n1'}, 'parameters are required together: log_device, log_identity'),
    ({'options': ['-f']}, "options[0]: '-f' would let mkfs.xfs overwrite what it finds"),
    ({'options': ['-m', 'uuid=11111111-2222-3333-4444-555555555555']},
     "options[1]: 'uuid=11111111-2222-3333-4444-555555555555' sets the filesystem UUID"),
    ({'options': ['-L', 'a b']}, "options[1]: 'a b' is not one mkfs.xfs argument"),
    ({'device': 'relative/x'}, "device: 'relative/x' is not an absolute path"),
])
def test_bad_parameters_are_refused(node, capsys, params, fragment):
    rc, out = run(capsys, node, **params)
    assert rc == 1 and fragment in out['msg'], out
    assert mkfs_runs(node) == []


def test_an_md_target_must_be_the_array_with_the_recorded_uuid_and_members(node, capsys):
    rc, out = run(capsys, node, target='md', md_uuid='00000000:e730df8e:32ae8ffc:b4fc9ee8')
    assert rc == 1 and 'md127 is not the array that was made: its md UUID is e78a7203-e730-df8e-32ae-8ffcb4fc9ee8' \
        in out['msg']
    rc, out = run(capsys, node, target='md', members=MEMBERS[:1])
    assert rc == 1 and 'is not made of the recorded members: not recorded nvme3n1 (serial DATA0003' in out['msg']
    assert node.log == []
    rc, out = run(capsys, node, target='md')
    assert rc == 0 and out['action'] == 'created' and node.signatures('md127') == [('xfs', FS_UUID)]


def test_an_md_target_is_overwritten_only_when_every_member_is_named(node, capsys):
    node.mkfs_ext4('md127')  # what the members held before shows through the new array
    rc, out = run(capsys, node, target='md', force=['DATA0002'])
    assert rc == 1 and 'md UUID %s over serial DATA0002' % MD_UUID in out['msg']
    rc, out = run(capsys, node, target='md', force=['DATA0002', 'eui.0000000000000003'])
    assert rc == 0 and out['action'] == 'created' and node.signatures('md127') == [('xfs', FS_UUID)]


def test_the_log_device_is_re_identified_and_probed_like_the_target(node, capsys):
    log = dict(log_device=node.loops['nvme4n1'], log_identity=LOG)
    node.mkfs_ext4('nvme4n1')
    rc, out = run(capsys, node, **log)
    assert rc == 1 and 'the log device %s (serial LOG0001' % node.loops['nvme4n1'] in out['msg']
    node.identify('nvme4n1', dict(LOG, serial='LOG0009'))
    ran = len(node.log)
    rc, out = run(capsys, node, force=['LOG0001'], **log)
    assert rc == 1 and "serial 'LOG0009', expected 'LOG0001'" in out['msg'] and node.log[ran:] == []
    node.identify('nvme4n1', LOG)
    rc, out = run(capsys, node, force=['LOG0001'], **log)
    assert rc == 0 and out['commands'][0][1:] == ['--all', node.loops['nvme4n1']]
    assert node.signatures('nvme4n1') == []


def test_absent_erases_only_the_xfs_with_the_uuid(node, capsys):
    run(capsys, node)
    rc, out = run(capsys, node, state='absent', uuid='11111111-2222-3333-4444-555555555555')
    assert rc == 0 and out['changed'] is False and node.signatures('nvme1n1') == [('xfs', FS_UUID)]
    rc, out = run(capsys, node, state='absent', check=True)
    assert out['changed'] is True and node.signatures('nvme1n1') == [('xfs', FS_UUID)]
    rc, out = run(capsys, node, state='absent')
    assert rc == 0 and out['action'] == 'erased' and out['commands'][0][1:] == ['--offset', '0x0',
                                                                                node.loops['nvme1n1']]
    assert node.signatures('nvme1n1') == []
    node.mkfs_ext4('nvme1n1')
    rc, out = run(capsys, node, state='absent')
    assert rc == 0 and out['changed'] is False and [k for k, d in node.signatures('nvme1n1')] == ['ext4']


def test_a_half_made_xfs_of_ours_is_made_again_not_kept(node, capsys):
    """Issue 31, finding 10: a run killed inside mkfs.xfs left an XFS with the role's UUID whose mkfs never
    finished; wipefs calls it xfs with that UUID, so the next run kept it (test failed before the fix: action none,
    the half-made filesystem kept, which the kernel refuses to mount)."""
    half = bytearray(xfs_superblock(FS_UUID, 'checkpoints'))
    half[126] = 1  # sb_inprogress: mkfs.xfs sets it first and clears it last
    with open(node.loops['nvme1n1'], 'r+b') as handle:
        handle.write(bytes(half))
    assert node.signatures('nvme1n1') == [('xfs', FS_UUID)]
    rc, out = run(capsys, node, check=True)
    assert rc == 0 and out['action'] == 'created' and out['half_made'] is True and mkfs_runs(node) == []
    assert 'half made: mkfs.xfs was stopped before it finished' in out['diff']['before']
    rc, out = run(capsys, node)
    assert rc == 0 and out['action'] == 'created' and out['half_made'] is True and out['uuid'] == FS_UUID
    assert mkfs_runs(node)[-1][1:] == ['-f'] + OPTIONS + ['-m', 'uuid=' + FS_UUID, node.loops['nvme1n1']]
    rc, out = run(capsys, node)  # made whole: kept from now on
    assert rc == 0 and out['action'] == 'none' and out['half_made'] is False and len(mkfs_runs(node)) == 1
    # a foreign XFS (another UUID) with the flag set is still foreign: refused, not made again
    other = bytearray(xfs_superblock('11111111-2222-3333-4444-555555555555', ''))
    other[126] = 1
    with open(node.loops['nvme1n1'], 'r+b') as handle:
        handle.write(bytes(other))
    rc, out = run(capsys, node)
    assert rc == 1 and 'carries xfs' in out['msg'] and len(mkfs_runs(node)) == 1


def test_the_real_mkfs_xfs_killed_mid_way_leaves_the_in_progress_flag(tmp_path):
    """What the check above rests on, with the real mkfs.xfs on a loop device: each write delayed 20 ms (strace),
    SIGKILL a third of the way in; the primary superblock is there with the chosen UUID and its in-progress flag
    set (wipefs: xfs); a whole mkfs.xfs -f clears it."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import xfs
    mkfs, strace = require_tool('mkfs.xfs'), require_tool('strace')
    with loop_devices(tmp_path, 1, 512 * MIB) as loops:  # mkfs.xfs 6.x: at least 300 MB
        device = loops[0]
        argv = [strace, '-f', '-qq', '-o', os.devnull, '-e', 'trace=pwrite64,pwritev,pwritev2',
                '-e', 'inject=pwrite64,pwritev,pwritev2:delay_enter=20000',
                mkfs, '-q', '-K', '-m', 'uuid=' + FS_UUID, device]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        started = time.time()
        while time.time() - started < 30 and not xfs.superblock_in_progress(xfs.read_start(device)):
            time.sleep(0.02)
        time.sleep(0.2)  # a few AG headers written, not the root inode nor the last superblock
        subprocess.call(['pkill', '-KILL', '-x', 'mkfs.xfs'])
        proc.wait(timeout=30)
        start = xfs.read_start(device)
        assert start[:4] == b'XFSB' and uuidlib.UUID(bytes=start[32:48]) == uuidlib.UUID(FS_UUID)
        assert xfs.superblock_in_progress(start), 'mkfs.xfs finished before it was killed'
        found = subprocess.check_output([require_tool('wipefs'), '--no-act', '--json', device], universal_newlines=True)
        assert [sig['type'] for sig in json.loads(found)['signatures']] == ['xfs']
        subprocess.check_call([mkfs, '-q', '-f', '-K', '-m', 'uuid=' + FS_UUID, device])
        assert not xfs.superblock_in_progress(xfs.read_start(device))
