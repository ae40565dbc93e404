# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The md_array module against a fake node: fake /dev, /proc/mdstat and /sys trees and a fake mdadm/wipefs that
behave like mdadm 4.2 and util-linux 2.38 on the lab (outputs in the formats measured there). The members are
real block devices (loop devices of the test host: root, losetup) behind the fake /dev names, so the module's
re-identification opens them for real and reads their identity from the fake sysfs through their device numbers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil

import pytest

from ansible.module_utils import basic

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import md
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import md_array

from helpers import module_args
from loop_devices import loop_devices

MIB = 1024 * 1024
GIB = 1024 * MIB
NAMES = ('nvme1n1', 'nvme2n1', 'nvme3n1')
UUID = 'e78a7203:e730df8e:32ae8ffc:b4fc9ee8'
CONF = """# mdadm.conf
HOMEHOST <system>

MAILADDR root
"""
CREATE = ['/usr/sbin/mdadm', '--create', '/dev/md/ckpt', '--run', '--metadata=1.2', '--level=raid0',
          '--raid-devices=2', '--chunk=1024K', '--name=ckpt', '/dev/nvme1n1', '/dev/nvme2n1']


def write(path, text):
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write(text)


@pytest.fixture(scope='module')
def loops(tmp_path_factory):
    """Three real block devices (1 MiB loop devices), detached afterwards."""
    with loop_devices(tmp_path_factory.mktemp('loops'), 3, MIB) as devices:
        yield devices


class FakeNode(object):
    """A node with three 4 GiB data drives (DATA0001..3; real loop devices behind /dev/nvmeXn1), md and the
    commands the module runs."""

    def __init__(self, base, loops):
        self.base = str(base)
        self.dev = os.path.join(self.base, 'dev')
        self.proc = os.path.join(self.base, 'proc')
        self.sys = os.path.join(self.base, 'sys')
        self.conf = os.path.join(self.base, 'etc', 'mdadm', 'mdadm.conf')
        write(self.conf, CONF)
        self.log = []
        self.arrays = {}          # kernel -> {name, uuid, md_name, members, chunk, level, metadata, mounted}
        self.superblocks = {}     # member kernel -> {uuid, md_name, level, devices}
        self.signatures = {}      # member kernel -> [wipefs signature dicts]
        self.fail = {}            # argv[1] -> (rc, stderr)
        self.open_during = []     # the block devices the module held open at each command
        self.loop_names = {}
        self.identities = {}
        for index, (name, loop) in enumerate(zip(NAMES, loops), start=1):
            os.makedirs(self.dev, exist_ok=True)
            os.symlink(loop, os.path.join(self.dev, name))
            self.loop_names[os.path.basename(loop)] = name
            block = os.path.join(self.sys, 'class', 'block', name)
            os.makedirs(os.path.join(block, 'holders'))
            rdev = os.stat(loop).st_rdev
            majmin = os.path.join(self.sys, 'dev', 'block', '%d:%d' % (os.major(rdev), os.minor(rdev)))
            os.makedirs(os.path.dirname(majmin), exist_ok=True)
            os.symlink('../../class/block/' + name, majmin)
            self.set_identity(name, 'DATA%04d' % index, 'eui.000000000000000%d' % index)
            self.identities[name] = {'name': name, 'serial': 'DATA%04d' % index,
                                     'wwid': 'eui.000000000000000%d' % index, 'size_bytes': 4 * GIB}
        os.makedirs(os.path.join(self.dev, 'disk', 'by-id'))
        os.symlink('../../nvme2n1', os.path.join(self.dev, 'disk', 'by-id', 'nvme-DATA0002'))
        self.write_mdstat()

    # ---- the kernel's view
    def set_identity(self, name, serial, wwid, sectors=8388608):
        """What sysfs says the drive ``name`` is (a drive swapped in under the same name after a reset)."""
        block = os.path.join(self.sys, 'class', 'block', name)
        write(os.path.join(block, 'wwid'), wwid + '\n')
        write(os.path.join(block, 'size'), '%d\n' % sectors)
        write(os.path.join(block, 'device', 'serial'), serial.ljust(20) + '\n')

    def write_mdstat(self):
        lines = ['Personalities : [raid0] ']
        for kernel, array in sorted(self.arrays.items()):
            members = ' '.join('%s[%d]' % (m, i) for i, m in reversed(list(enumerate(array['members']))))
            lines.append('%s : active raid0 %s' % (kernel, members))
            lines.append('      8378368 blocks super %s %dk chunks' % (array['metadata'], array['chunk'] // 1024))
            lines.append('      ')
        lines.append('unused devices: <none>')
        write(os.path.join(self.proc, 'mdstat'), '\n'.join(lines) + '\n')

    def activate(self, kernel, array):
        self.arrays[kernel] = array
        write(os.path.join(self.dev, kernel), '')
        os.makedirs(os.path.join(self.dev, 'md'), exist_ok=True)
        os.symlink('../' + kernel, os.path.join(self.dev, 'md', array['name']))
        write(os.path.join(self.sys, 'class', 'block', kernel, 'size'), '16756736\n')
        raw = array['uuid'].replace(':', '')
        write(os.path.join(self.sys, 'class', 'block', kernel, 'md', 'uuid'),
              '%s-%s-%s-%s-%s\n' % (raw[:8], raw[8:12], raw[12:16], raw[16:20], raw[20:]))
        for member in array['members']:
            os.makedirs(os.path.join(self.sys, 'class', 'block', member, 'holders', kernel))
        self.write_mdstat()

    def deactivate(self, kernel):
        array = self.arrays.pop(kernel)
        os.remove(os.path.join(self.dev, kernel))
        for link in os.listdir(os.path.join(self.dev, 'md')):
            if os.readlink(os.path.join(self.dev, 'md', link)) == '../' + kernel:
                os.remove(os.path.join(self.dev, 'md', link))
        shutil.rmtree(os.path.join(self.sys, 'class', 'block', kernel))
        for member in array['members']:
            os.rmdir(os.path.join(self.sys, 'class', 'block', member, 'holders', kernel))
        self.write_mdstat()

    def kernel(self, path):
        real = os.path.basename(os.path.realpath(os.path.join(self.dev, path[len('/dev/'):])))
        return self.loop_names.get(real, real)

    def add_array(self, uuid=UUID, chunk=MIB, members=('nvme1n1', 'nvme2n1'), name='ckpt'):
        """An array made earlier (superblocks written, running)."""
        for member in members:
            self.superblocks[member] = {'uuid': uuid, 'md_name': 'lab-node:' + name, 'level': 'raid0',
                                        'devices': len(members)}
            self.signatures[member] = [self.raid_signature(member, uuid, name)]
        self.activate('md127', {'name': name, 'uuid': uuid, 'md_name': 'lab-node:' + name,
                                'members': list(members), 'chunk': chunk, 'level': 'raid0', 'metadata': '1.2',
                                'mounted': False})

    @staticmethod
    def raid_signature(member, uuid, name):
        dashed = uuid.replace(':', '')
        dashed = '%s-%s-%s-%s-%s' % (dashed[:8], dashed[8:12], dashed[12:16], dashed[16:20], dashed[20:])
        return {'device': member, 'offset': '0x1000', 'type': 'linux_raid_member', 'uuid': dashed,
                'label': 'lab-node:' + name, 'usage': 'raid'}

    # ---- commands
    def __call__(self, module, args, **kwargs):
        argv = list(args)
        self.log.append(argv)
        tool = os.path.basename(argv[0])
        if argv[1] in self.fail:
            rc, err = self.fail[argv[1]]
            return rc, '', err
        return getattr(self, 'run_' + tool.replace('-', '_'))(argv)

    def run_udevadm(self, argv):
        return 0, '', ''

    def run_update_initramfs(self, argv):
        return 0, 'update-initramfs: Generating /boot/initrd.img-6.1.0-50-amd64\n', ''

    def run_wipefs(self, argv):
        if argv[1] == '--all':
            self.signatures.pop(self.kernel(argv[2]), None)
            self.superblocks.pop(self.kernel(argv[2]), None)
            return 0, '', ''
        devices = argv[argv.index('--output') + 2:]
        found = []
        for device in devices:
            for sig in self.signatures.get(self.kernel(device), []):
                found.append(dict(sig, device=os.path.basename(device)))
        return 0, json.dumps({'signatures': found}, indent=3), ''

    def run_mdadm(self, argv):
        mode = argv[1]
        if mode == '--detail':
            kernel = self.kernel(argv[3])
            if kernel not in self.arrays:
                return 1, '', 'mdadm: cannot open %s: No such file or directory\n' % argv[3]
            array = self.arrays[kernel]
            lines = ['MD_LEVEL=raid0', 'MD_DEVICES=%d' % len(array['members']), 'MD_METADATA=1.2',
                     'MD_UUID=' + array['uuid'], 'MD_DEVNAME=' + array['name'], 'MD_NAME=' + array['md_name']]
            return 0, '\n'.join(lines) + '\n', ''
        if mode == '--examine':
            sb = self.superblocks.get(self.kernel(argv[3]))
            if not sb:
                return 1, '', 'mdadm: No md superblock detected on %s.\n' % argv[3]
            lines = ['MD_LEVEL=' + sb['level'], 'MD_DEVICES=%d' % sb['devices'], 'MD_NAME=' + sb['md_name'],
                     'MD_UUID=' + sb['uuid'], 'MD_EVENTS=0']
            return 0, '\n'.join(lines) + '\n', ''
        if mode == '--create':
            options = dict(arg[2:].split('=', 1) for arg in argv if arg.startswith('--') and '=' in arg)
            members = [self.kernel(a) for a in argv if a.startswith('/dev/') and not a.startswith('/dev/md/')]
            for member in members:
                self.superblocks[member] = {'uuid': UUID, 'md_name': 'lab-node:' + options['name'],
                                            'level': options['level'], 'devices': len(members)}
                self.signatures[member] = [self.raid_signature(member, UUID, options['name'])]
            self.activate('md127', {'name': options['name'], 'uuid': UUID, 'md_name': 'lab-node:' + options['name'],
                                    'members': members, 'chunk': int(options['chunk'][:-1]) * 1024,
                                    'level': options['level'], 'metadata': options['metadata'], 'mounted': False})
            return 0, '', 'mdadm: array %s started.\n' % argv[2]
        if mode == '--assemble':
            members = [self.kernel(a) for a in argv[4:]]
            sb = self.superblocks[members[0]]
            self.activate('md127', {'name': argv[2].split('/')[-1], 'uuid': sb['uuid'], 'md_name': sb['md_name'],
                                    'members': members, 'chunk': self.assemble_chunk, 'level': 'raid0',
                                    'metadata': '1.2', 'mounted': False})
            return 0, '', 'mdadm: %s has been started with %d drives.\n' % (argv[2], len(members))
        if mode == '--stop':
            kernel = self.kernel(argv[2])
            if self.arrays[kernel]['mounted']:
                return 1, '', 'mdadm: Cannot get exclusive access to %s:Perhaps a running process, mounted ' \
                              'filesystem or active volume group?\n' % argv[2]
            self.deactivate(kernel)
            return 0, '', 'mdadm: stopped %s\n' % argv[2]
        if mode == '--zero-superblock':
            kernel = self.kernel(argv[2])
            self.superblocks.pop(kernel, None)
            self.signatures[kernel] = [s for s in self.signatures.get(kernel, []) if s['type'] != 'linux_raid_member']
            return 0, '', ''
        raise AssertionError('unexpected mdadm call %r' % argv)

    assemble_chunk = MIB

    def commands(self, *modes):
        return [argv for argv in self.log if argv[1] in modes]

    def read_conf(self):
        with open(self.conf) as handle:
            return handle.read()


@pytest.fixture
def node(tmp_path, monkeypatch, loops):
    fake = FakeNode(tmp_path, loops)

    def run_command(self, args, **kwargs):
        fake.open_during.append(sorted(open_block_devices()))
        return fake(self, args, **kwargs)

    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path',
                        lambda self, name, required=False, opt_dirs=None: '/usr/sbin/' + name)
    return fake


def open_block_devices():
    """The block devices this process holds open (what the module pinned while a command runs)."""
    found = []
    for fd in os.listdir('/proc/self/fd'):
        try:
            target = os.readlink('/proc/self/fd/' + fd)
        except OSError:
            continue
        if target.startswith('/dev/loop'):
            found.append(target)
    return found


def run(capsys, node, check=False, diff=True, **params):
    args = dict(params, devfs_root=node.dev, procfs_root=node.proc, sysfs_root=node.sys,
                _ansible_check_mode=check, _ansible_diff=diff)
    args.setdefault('conf_file', node.conf)
    args.setdefault('name', 'ckpt')
    if args.get('state', 'present') == 'present':
        args.setdefault('members', ['/dev/nvme1n1', '/dev/nvme2n1'])
        args.setdefault('chunk', '1M')
    if args.get('members') and 'identities' not in args:
        args['identities'] = [dict(node.identities.get(node.kernel(member), {'serial': 'NONE'}), name=None)
                              for member in args['members']]
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            md_array.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


# ------------------------------------------------------------------ check mode
def test_check_mode_returns_the_planned_mdadm_argv_and_runs_nothing(node, capsys):
    rc, out = run(capsys, node, check=True)
    assert rc == 0, out
    assert out['changed'] is True and out['action'] == 'created'
    assert out['commands'] == [CREATE]
    assert node.commands('--create', '--stop', '--zero-superblock') == []
    assert node.arrays == {} and node.read_conf() == CONF
    assert out['conf_changed'] is True and 'UUID=<assigned by mdadm --create>' in out['conf_line']
    assert out['diff'][0]['before'] == 'absent\n'
    assert out['diff'][0]['after'] == 'raid0, chunk 1024K, members nvme1n1, nvme2n1 (created)\n'
    assert out['diff'][1]['before'] == CONF and 'ARRAY /dev/md/ckpt' in out['diff'][1]['after']
    assert out['kernel_name'] is None and out['uuid'] is None


# ------------------------------------------------------------------ create, persist, idempotence
def test_create_persists_the_array_line_and_is_idempotent(node, capsys):
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['changed'] is True and out['action'] == 'created'
    assert out['commands'] == [CREATE]
    assert out['kernel_name'] == 'md127' and out['uuid'] == UUID and out['md_name'] == 'lab-node:ckpt'
    assert out['members'] == ['nvme1n1', 'nvme2n1'] and out['chunk_bytes'] == MIB
    assert out['size_bytes'] == 16756736 * 512 and out['level'] == 'raid0' and out['metadata'] == '1.2'
    line = 'ARRAY /dev/md/ckpt metadata=1.2 UUID=%s name=lab-node:ckpt' % UUID
    assert out['conf_line'] == line and out['initramfs_updated'] is False
    assert node.read_conf() == CONF + md.MARKER % 'ckpt' + '\n' + line + '\n'
    assert out['signatures'] == []

    rc, again = run(capsys, node, uuid=UUID)
    assert rc == 0 and again['changed'] is False and again['action'] == 'none', again
    assert again['commands'] == [] and again['conf_changed'] is False
    assert len(node.commands('--create')) == 1


def test_update_initramfs_only_when_asked_and_the_conf_changed(node, capsys):
    rc, out = run(capsys, node, update_initramfs=True)
    assert rc == 0 and out['initramfs_updated'] is True
    assert out['commands'][-1] == ['/usr/sbin/update-initramfs', '-u']
    rc, again = run(capsys, node, update_initramfs=True)
    assert again['initramfs_updated'] is False and again['commands'] == []


def test_persist_false_leaves_the_conf_alone(node, capsys):
    rc, out = run(capsys, node, persist=False)
    assert rc == 0 and out['conf_line'] is None and node.read_conf() == CONF


def test_the_array_line_is_replaced_in_place(node, capsys):
    write(node.conf, CONF + 'ARRAY /dev/md/ckpt metadata=1.2 UUID=00000000:00000000:00000000:00000000\n'
                            'ARRAY /dev/md/other metadata=1.2 UUID=11111111:11111111:11111111:11111111\n')
    rc, out = run(capsys, node)
    assert rc == 0
    lines = node.read_conf().splitlines()
    assert lines[-3:] == [md.MARKER % 'ckpt', out['conf_line'],
                          'ARRAY /dev/md/other metadata=1.2 UUID=11111111:11111111:11111111:11111111']
    rc, again = run(capsys, node)
    assert again['changed'] is False


def test_existing_array_without_its_line_gets_it(node, capsys):
    node.add_array()
    rc, out = run(capsys, node)
    assert rc == 0 and out['action'] == 'none' and out['changed'] is True and out['conf_changed'] is True
    assert out['commands'] == []


# ------------------------------------------------------------------ refusals (nothing changed)
def test_members_with_signatures_are_refused_without_force(node, capsys):
    node.signatures['nvme1n1'] = [{'device': 'nvme1n1', 'offset': '0x438', 'type': 'ext4',
                                   'uuid': '68efbee8-e2fc-4726-b513-4e32e0991b1b', 'label': None,
                                   'usage': 'filesystem'}]
    rc, out = run(capsys, node)
    assert rc == 1
    assert out['msg'] == ('refusing to create /dev/md/ckpt: /dev/nvme1n1 (serial DATA0001, wwid '
                          'eui.0000000000000001, 4294967296 bytes) carries ext4 signature (UUID '
                          '68efbee8-e2fc-4726-b513-4e32e0991b1b, offset 0x438). Nothing was changed; force: '
                          '[DATA0001] (the serials or WWIDs of these drives) erases these signatures (wipefs --all) '
                          'and what they hold.')
    assert node.commands('--create', '--stop', '--zero-superblock') == [] and node.read_conf() == CONF
    assert [argv for argv in node.log if argv[1] == '--all'] == []


def test_force_erases_the_signatures_of_the_named_drives_first(node, capsys):
    node.signatures['nvme2n1'] = [{'device': 'nvme2n1', 'offset': '0x200', 'type': 'gpt', 'uuid': None,
                                   'label': None, 'usage': 'partition table'}]
    rc, out = run(capsys, node, force=['DATA0002'], check=True)
    assert out['commands'] == [['/usr/sbin/wipefs', '--all', '/dev/nvme2n1'], CREATE]
    assert node.signatures['nvme2n1'] and node.arrays == {}
    rc, out = run(capsys, node, force='eui.0000000000000002')  # by WWID, any case, a string is a list of one
    assert rc == 0 and out['action'] == 'created'
    assert out['commands'] == [['/usr/sbin/wipefs', '--all', '/dev/nvme2n1'], CREATE]


def test_force_that_names_another_drive_does_not_cover_a_member(node, capsys):
    """Named drives only: a force naming DATA0001 does not let DATA0002's data be erased; a kernel name or a
    drive that is no member names nothing and is refused before anything is read."""
    node.signatures['nvme2n1'] = [{'device': 'nvme2n1', 'offset': '0x438', 'type': 'ext4', 'uuid': 'u'}]
    rc, out = run(capsys, node, force=['DATA0001'])
    assert rc == 1 and '/dev/nvme2n1 (serial DATA0002' in out['msg'] and 'force: [DATA0002]' in out['msg']
    assert node.commands('--create', '--all') == [] and node.signatures['nvme2n1']
    ran = len(node.log)
    rc, out = run(capsys, node, force=['DATA0001', 'nvme2n1', 'DATA0009'])
    assert rc == 1 and out['msg'] == ('force names nvme2n1, DATA0009, which are none of the members (by their serial '
                                      'or WWID in identities). Nothing was changed.')
    assert node.log[ran:] == []


@pytest.mark.parametrize('force', [True, 'true', 'yes'])
def test_a_bare_true_force_is_refused_saying_what_to_write(node, capsys, force):
    rc, out = run(capsys, node, force=force)
    assert rc == 1
    assert out['msg'].startswith('force: %r is no longer accepted: name the drives that may be overwritten, by '
                                 'serial or WWID, for example force: [DATA0001, DATA0002]' % (force,))
    assert node.log == []


def test_by_id_links_are_members_too(node, capsys):
    node.signatures['nvme2n1'] = [{'device': 'nvme2n1', 'offset': '0x0', 'type': 'xfs', 'uuid': 'x'}]
    rc, out = run(capsys, node, members=['/dev/nvme1n1', '/dev/disk/by-id/nvme-DATA0002'])
    assert rc == 1 and '/dev/disk/by-id/nvme-DATA0002 (serial DATA0002' in out['msg']
    assert 'carries xfs signature' in out['msg']


# ------------------------------------------------------------------ re-identification
def test_a_renumbered_member_is_refused_before_anything_is_written(node, capsys):
    """After a controller reset the name nvme2n1 belongs to another drive: nothing is written, the message names
    the device, the expected and the found identity, and what to do."""
    node.set_identity('nvme2n1', 'DATA0009', 'eui.0000000000000009')
    rc, out = run(capsys, node)
    assert rc == 1
    assert out['msg'].startswith("member /dev/nvme2n1 (identities[1]) is not the drive that was selected: wwid "
                                 "'eui.0000000000000009', expected 'eui.0000000000000002', serial 'DATA0009', "
                                 "expected 'DATA0002'. Expected serial DATA0002, wwid eui.0000000000000002")
    assert 'found serial DATA0009' in out['msg'] and 'run again' in out['msg']
    assert node.commands('--create', '--assemble', '--examine') == [] and node.read_conf() == CONF
    assert open_block_devices() == []  # nothing stays open


def test_the_members_are_held_open_while_mdadm_writes_them(node, capsys, loops):
    rc, out = run(capsys, node)
    assert rc == 0 and out['action'] == 'created'
    create = [i for i, argv in enumerate(node.log) if argv[1] == '--create'][0]
    assert node.open_during[create] == sorted(loops[:2])
    assert [ident['serial'] for ident in out['identities']] == ['DATA0001', 'DATA0002']
    assert open_block_devices() == []


def test_a_renumbered_member_is_not_assembled(node, capsys):
    node.add_array()
    node.deactivate('md127')
    node.set_identity('nvme1n1', 'DATA0003', 'eui.0000000000000003')
    rc, out = run(capsys, node, uuid=UUID)
    assert rc == 1 and 'member /dev/nvme1n1 (identities[0]) is not the drive that was selected' in out['msg']
    assert node.commands('--assemble', '--create') == [] and node.arrays == {}


def test_identities_are_required_to_write_a_member(node, capsys):
    rc, out = run(capsys, node, identities=None)
    assert rc == 1 and out['msg'] == ('identities are required to write /dev/nvme1n1, /dev/nvme2n1: the module '
                                      're-identifies every member before mdadm or wipefs writes it. Nothing was '
                                      'changed.')
    rc, out = run(capsys, node, identities=[{'serial': 'DATA0001'}])
    assert rc == 1 and "identities: [{'serial': 'DATA0001'}] gives 1 identities for 2 members" in out['msg']
    rc, out = run(capsys, node, identities=[{'serial': 'DATA0001'}, {'model': 'x'}])
    assert rc == 1 and "identities[1]: {'model': 'x'} identifies nothing" in out['msg']
    rc, out = run(capsys, node, identities=[{'serail': 'DATA0001'}, {'serial': 'DATA0002'}])
    assert rc == 1 and "identities[0]: {'serail': 'DATA0001'} has unknown keys serail" in out['msg']
    assert node.log == []


def test_a_new_array_gets_the_uuid_chosen_beforehand(node, capsys):
    chosen = '3f9c1a52-77e0-4b1d-9d0f-6a2ec41b8e07'
    rc, out = run(capsys, node, uuid=chosen, check=True)
    assert out['commands'] == [CREATE[:-2] + ['--uuid=3f9c1a52:77e04b1d:9d0f6a2e:c41b8e07'] + CREATE[-2:]]


@pytest.mark.parametrize('params, fragment', [
    ({'chunk': '1X'}, "chunk: '1X' is not a size"),
    ({'chunk': '3M'}, 'not a power of two'),
    ({'chunk': '2K'}, 'below the minimum'),
    ({'members': ['/dev/nvme1n1']}, 'at least two members, got 1'),
    ({'members': ['/dev/nvme1n1', '/dev/nvme9n1']}, 'members: /dev/nvme9n1 does not exist'),
    ({'members': ['/dev/nvme2n1', '/dev/disk/by-id/nvme-DATA0002']}, 'nvme2n1 is given twice'),
    ({'name': 'a/b'}, "name: 'a/b' must be 1 to 32 ASCII letters, digits"),
    ({'name': 'host:ckpt'}, "name: 'host:ckpt' must be 1 to 32"),
    ({'uuid': 'not-a-uuid'}, "uuid: 'not-a-uuid' is not a UUID"),
    ({'members': ['/dev/nvme1n1', '/dev/nvme1n1']}, 'members: /dev/nvme1n1 is given twice'),
    ({'members': ['/dev/nvme1n1', 'nvme2n1']}, "members: 'nvme2n1' is not an absolute device path"),
    ({'conf_file': 'relative/x'}, "conf_file: 'relative/x' is not an absolute path"),
    ({'conf_file': '/nonexistent-dir/mdadm.conf'}, 'conf_file: the directory of /nonexistent-dir/mdadm.conf does not '
                                                   'exist'),
    ({'level': 'raid1'}, 'value of level must be one of: raid0, got: raid1'),
])
def test_bad_parameters_are_refused(node, capsys, params, fragment):
    rc, out = run(capsys, node, **params)
    assert rc == 1 and fragment in out['msg'], out
    assert node.commands('--create', '--assemble') == []


def test_an_existing_array_with_another_chunk_is_never_touched(node, capsys):
    node.add_array(chunk=512 * 1024)
    rc, out = run(capsys, node)
    assert rc == 1
    assert out['msg'].startswith('/dev/md/ckpt (md127) already exists with chunk 524288 bytes (asked 1048576)')
    assert node.commands('--stop', '--create') == [] and 'md127' in node.arrays


def test_an_existing_array_with_another_uuid_is_refused(node, capsys):
    node.add_array()
    rc, out = run(capsys, node, uuid='00000000-0000-0000-0000-000000000000')
    assert rc == 1 and 'UUID %s (asked 00000000-0000-0000-0000-000000000000)' % UUID in out['msg']


def test_members_of_another_running_array_are_refused(node, capsys):
    node.add_array(name='other', members=('nvme2n1', 'nvme3n1'))
    rc, out = run(capsys, node)
    assert rc == 1 and out['msg'] == 'nvme2n1: already a member of the running array md127; nothing was changed'


def test_members_with_holders_are_refused(node, capsys):
    os.makedirs(os.path.join(node.sys, 'class', 'block', 'nvme1n1', 'holders', 'dm-0'))
    rc, out = run(capsys, node)
    assert rc == 1 and out['msg'] == 'nvme1n1 has holders (dm-0): it is in use; nothing was changed'


def test_an_array_the_initramfs_named_otherwise_is_found_by_uuid_or_members(node, capsys):
    """Debian's initramfs assembles arrays with its own (older) mdadm.conf: /dev/md/<host>:<name>, no ckpt link."""
    node.add_array()
    os.rename(os.path.join(node.dev, 'md', 'ckpt'), os.path.join(node.dev, 'md', 'lab-node:ckpt'))
    rc, out = run(capsys, node, uuid=UUID)
    assert rc == 0 and out['action'] == 'none' and out['kernel_name'] == 'md127' and out['path'] == '/dev/md127'
    assert node.commands('--create', '--assemble') == []
    rc, out = run(capsys, node)  # no uuid: the running array of exactly these members named ckpt
    assert rc == 0 and out['action'] == 'none' and out['uuid'] == UUID
    rc, out = run(capsys, node, state='absent', uuid=UUID)
    assert rc == 0 and out['commands'] == [['/usr/sbin/mdadm', '--stop', '/dev/md127']] and node.arrays == {}


def test_a_failing_mdadm_is_reported(node, capsys):
    node.fail['--create'] = (1, 'mdadm: cannot open /dev/nvme1n1: Device or resource busy\n')
    rc, out = run(capsys, node)
    assert rc == 1 and 'Device or resource busy' in out['msg'] and out['commands'] == [CREATE]


# ------------------------------------------------------------------ assemble
def test_a_stopped_array_of_ours_is_assembled_not_created(node, capsys):
    node.add_array()
    node.deactivate('md127')
    rc, out = run(capsys, node, check=True, uuid=UUID)
    assert out['action'] == 'assembled'
    assert out['commands'] == [['/usr/sbin/mdadm', '--assemble', '/dev/md/ckpt', '--uuid=' + UUID,
                                '/dev/nvme1n1', '/dev/nvme2n1']]
    rc, out = run(capsys, node, uuid=UUID)
    assert rc == 0 and out['action'] == 'assembled' and out['kernel_name'] == 'md127'
    assert node.commands('--create') == []


def test_superblocks_of_another_array_are_signatures(node, capsys):
    node.add_array()
    node.deactivate('md127')
    rc, out = run(capsys, node, uuid='00000000-0000-0000-0000-000000000000')
    assert rc == 1 and 'carries linux_raid_member signature' in out['msg']


def test_an_assembled_array_with_another_chunk_is_stopped_again(node, capsys):
    node.add_array()
    node.deactivate('md127')
    node.assemble_chunk = 512 * 1024
    rc, out = run(capsys, node)
    assert rc == 1 and 'assembled with chunk 524288 bytes (asked 1048576) (stopped again)' in out['msg']
    assert node.arrays == {}


# ------------------------------------------------------------------ absent
def test_absent_stops_the_array_and_removes_its_line(node, capsys):
    run(capsys, node)
    rc, out = run(capsys, node, state='absent', uuid=UUID, check=True)
    assert out['changed'] is True and out['commands'] == [['/usr/sbin/mdadm', '--stop', '/dev/md127']]
    assert 'md127' in node.arrays
    rc, out = run(capsys, node, state='absent', uuid=UUID)
    assert rc == 0 and out['action'] == 'stopped' and out['changed'] is True
    assert node.arrays == {} and node.read_conf() == CONF
    assert node.superblocks  # without force the superblocks stay
    rc, again = run(capsys, node, state='absent', uuid=UUID)
    assert again['changed'] is False and again['commands'] == []


def test_absent_with_force_erases_only_this_arrays_superblocks(node, capsys):
    run(capsys, node)
    node.superblocks['nvme3n1'] = {'uuid': '11111111:11111111:11111111:11111111', 'md_name': 'x:other',
                                   'level': 'raid0', 'devices': 2}
    rc, out = run(capsys, node, state='absent', uuid=UUID, force=['DATA0001', 'DATA0002', 'DATA0003'],
                  members=['/dev/nvme1n1', '/dev/nvme2n1', '/dev/nvme3n1'])
    assert rc == 0
    assert out['commands'] == [['/usr/sbin/mdadm', '--stop', '/dev/md127'],
                               ['/usr/sbin/mdadm', '--zero-superblock', '/dev/nvme1n1'],
                               ['/usr/sbin/mdadm', '--zero-superblock', '/dev/nvme2n1']]
    assert sorted(node.superblocks) == ['nvme3n1']


def test_absent_with_force_on_a_stopped_array(node, capsys):
    run(capsys, node)
    run(capsys, node, state='absent', uuid=UUID)
    rc, out = run(capsys, node, state='absent', uuid=UUID, force=['DATA0001'], members=['/dev/nvme1n1', '/dev/nvme2n1'])
    assert rc == 0 and out['action'] == 'absent' and out['changed'] is True
    assert sorted(node.superblocks) == ['nvme2n1']  # only the named member's superblock
    node.set_identity('nvme2n1', 'DATA0009', 'eui.0000000000000009')
    rc, out = run(capsys, node, state='absent', uuid=UUID, force=['DATA0002'], members=['/dev/nvme1n1', '/dev/nvme2n1'])
    assert rc == 1 and 'member /dev/nvme2n1 (identities[1]) is not the drive that was selected' in out['msg']
    assert sorted(node.superblocks) == ['nvme2n1']


def test_absent_refuses_another_arrays_uuid_and_a_mounted_array(node, capsys):
    node.add_array()
    rc, out = run(capsys, node, state='absent', uuid='00000000000000000000000000000000')
    assert rc == 1 and "not stopping someone else's array" in out['msg']
    node.arrays['md127']['mounted'] = True
    rc, out = run(capsys, node, state='absent', uuid=UUID)
    assert rc == 1 and 'Cannot get exclusive access' in out['msg'] and 'md127' in node.arrays


def test_nothing_to_stop(node, capsys):
    rc, out = run(capsys, node, state='absent')
    assert rc == 0 and out['changed'] is False and out['action'] == 'none'


def test_helpers():
    assert md.parse_export("MD_LEVEL=raid0\nMD_NAME='x:y'\nnoise\n") == {'MD_LEVEL': 'raid0', 'MD_NAME': 'x:y'}
    assert md.name_matches('lab-node:ckpt', 'ckpt') and md.name_matches('ckpt', 'ckpt')
    assert not md.name_matches('lab-node:ckpt2', 'ckpt') and not md.name_matches(None, 'ckpt')
    assert md.colon_uuid('e78a7203-e730-df8e-32ae-8ffcb4fc9ee8') == UUID
    assert md.colon_uuid('short') == 'short'
    assert md.update_conf('', '/dev/md/x', None, None, 'x') == ''
