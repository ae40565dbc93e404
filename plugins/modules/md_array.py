#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: md_array
short_description: Create, assemble or stop an md RAID0 array of data drives, safely and idempotently
version_added: 0.2.0
description:
  - Makes sure the md RAID0 array C(/dev/md/<name>) exists with exactly the given O(members), the given O(chunk) and
    the given superblock O(metadata) version, or that it is stopped (O(state=absent)).
  - "The array is looked for in this order: a running array - C(/dev/md/<name>), else the md device whose UUID is
    O(uuid), else the running array made of exactly O(members) whose superblock name is O(name) (an initramfs that
    assembled it with an older mdadm.conf names it C(/dev/md/<host>:<name>) or C(/dev/md127)); nothing to do when
    it has the same members, level and chunk, while a difference fails the module and nothing is touched. Then md
    superblocks on the members (C(mdadm --examine)): when every member carries the superblock of one RAID0 array
    named O(name) with as many devices as O(members), it is assembled (C(mdadm --assemble)) instead of created."
  - Otherwise the array is created (C(mdadm --create --run)). Before that, every member is probed with
    C(wipefs --no-act); a member that carries any signature (a filesystem, an md or LVM superblock, a partition
    table) is refused unless O(force=true), which erases the signatures (C(wipefs --all)) first. Members that are in
    another active array or have holders (md, dm) are always refused.
  - With O(persist=true), the array's C(ARRAY) line is kept in O(conf_file) (replaced in place when an earlier line
    names the same device or UUID), so the array is assembled under the same name at boot. O(update_initramfs=true)
    rebuilds the initramfs after the file changed (only needed when the initramfs assembles arrays).
  - O(state=absent) stops the array (the kernel refuses while it is mounted) and removes its C(ARRAY) line; with
    O(force=true) it also erases the md superblocks of the members that carry this array's UUID
    (C(mdadm --zero-superblock)), and nothing else.
  - Why a module of its own. Neither C(ansible.posix) nor C(community.general) has an mdadm module, and a
    C(command) task cannot be idempotent here (create vs. assemble vs. already running), cannot refuse members that
    carry data before C(mdadm --create --run) overwrites them, cannot show the planned C(mdadm) command in check
    mode, and cannot keep C(mdadm.conf) in step with the array's UUID.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Linux with md, C(mdadm) and C(wipefs) (util-linux).
notes:
  - Only RAID0 is supported; it is meant for checkpoint scratch volumes that trade redundancy for bandwidth.
  - Every command runs with an argument list and C(LANG=C).
  - O(devfs_root), O(procfs_root) and O(sysfs_root) exist for tests that point the module at a fake tree; leave
    them at their defaults on real nodes.
seealso:
  - name: mdadm(8)
    description: The md management tool this module drives.
    link: https://man7.org/linux/man-pages/man8/mdadm.8.html
  - module: community.general.filesystem
  - module: ai_storage.checkpoint_io.checkpoint_io_facts
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Probes the members and returns the C(mdadm) (and C(wipefs)) commands it would run in RV(commands),
      without running them or writing O(conf_file).
  diff_mode:
    support: full
    details: Shows the array (level, chunk, members) and O(conf_file) before and after.
  platform:
    platforms: linux
options:
  name:
    description:
      - Array name. The array is C(/dev/md/<name>) and its superblock name C(<hostname>:<name>).
    type: str
    required: true
  state:
    description:
      - V(present) creates or assembles the array; V(absent) stops it.
    type: str
    choices: [present, absent]
    default: present
  members:
    description:
      - Whole block devices of the array, in role order (V(/dev/nvme1n1), or C(/dev/disk/by-id) links).
      - Required with O(state=present) (at least two). With O(state=absent) and O(force=true), the members whose
        superblocks are erased when the array is not running.
    type: list
    elements: path
  level:
    description:
      - RAID level. Only V(raid0).
    type: str
    choices: [raid0]
    default: raid0
  chunk:
    description:
      - Chunk size, bytes or with a binary suffix (V(512K), V(1M), V(1048576)). A power of two of at least 4 KiB.
    type: raw
    default: 512K
  metadata:
    description:
      - md superblock version.
    type: str
    choices: ['1.0', '1.1', '1.2']
    default: '1.2'
  uuid:
    description:
      - UUID the array must have (any of mdadm's or blkid's spellings). An existing or assemblable array with
        another UUID fails the module; with O(state=absent) only an array with this UUID is stopped and only
        superblocks with this UUID are erased.
    type: str
  force:
    description:
      - With O(state=present), erase the signatures found on the members (C(wipefs --all)) before creating the
        array. Destroys what the members held.
      - With O(state=absent), erase the md superblocks of this array from its members after stopping it.
    type: bool
    default: false
  persist:
    description:
      - Keep the array's C(ARRAY) line in O(conf_file) (removed with O(state=absent)).
    type: bool
    default: true
  conf_file:
    description:
      - The mdadm configuration file.
    type: path
    default: /etc/mdadm/mdadm.conf
  update_initramfs:
    description:
      - Run C(update-initramfs -u) after O(conf_file) changed.
    type: bool
    default: false
  devfs_root:
    description:
      - Root of the device directory. For tests only.
    type: path
    default: /dev
  procfs_root:
    description:
      - Root of procfs. For tests only.
    type: path
    default: /proc
  sysfs_root:
    description:
      - Root of sysfs. For tests only.
    type: path
    default: /sys
'''

EXAMPLES = r'''
- name: RAID0 of two data drives, 1 MiB chunk, kept in mdadm.conf
  ai_storage.checkpoint_io.md_array:
    name: ckpt
    members: [/dev/nvme1n1, /dev/nvme2n1]
    chunk: 1M
  become: true
  register: md

- name: Show what would run (nothing is run in check mode)
  ai_storage.checkpoint_io.md_array:
    name: ckpt
    members: [/dev/nvme1n1, /dev/nvme2n1]
    chunk: 1M
  check_mode: true
  register: plan
  # plan.commands: [[mdadm, --create, /dev/md/ckpt, --run, --metadata=1.2, --level=raid0, --raid-devices=2,
  #                  --chunk=1024K, --name=ckpt, /dev/nvme1n1, /dev/nvme2n1]]

- name: Re-create over drives that carried another filesystem (destroys it)
  ai_storage.checkpoint_io.md_array:
    name: ckpt
    members: [/dev/nvme1n1, /dev/nvme2n1]
    chunk: 1M
    force: true

- name: Stop the array and erase its superblocks (only this UUID)
  ai_storage.checkpoint_io.md_array:
    name: ckpt
    state: absent
    uuid: "{{ md.uuid }}"
    force: true
'''

RETURN = r'''
device:
  description: The array's device path.
  returned: always
  type: str
  sample: /dev/md/ckpt
kernel_name:
  description: Kernel name of the array; V(null) when it is not running (or not yet created in check mode).
  returned: always
  type: str
  sample: md127
path:
  description:
    - Kernel device path of the running array (V(null) when it is not running). Valid whatever name the array
      was assembled under (an initramfs with an older mdadm.conf makes C(/dev/md/<host>:<name>) or
      C(/dev/md127), and no C(/dev/md/<name>) link).
  returned: always
  type: str
  sample: /dev/md127
action:
  description: What was done (or would be done in check mode).
  returned: always
  type: str
  sample: created
  choices: [none, created, assembled, stopped, absent]
commands:
  description: The commands run, in order; in check mode, the commands that would run.
  returned: always
  type: list
  elements: list
  sample: [[mdadm, --create, /dev/md/ckpt, --run, --metadata=1.2, --level=raid0, --raid-devices=2, --chunk=1024K,
            --name=ckpt, /dev/nvme1n1, /dev/nvme2n1]]
uuid:
  description: Array UUID (mdadm's spelling); V(null) before creation in check mode or when absent.
  returned: always
  type: str
  sample: e78a7203:e730df8e:32ae8ffc:b4fc9ee8
md_name:
  description: Superblock name (C(<homehost>:<name>)).
  returned: always
  type: str
  sample: node1:ckpt
level:
  description: RAID level of the array.
  returned: always
  type: str
  sample: raid0
chunk_bytes:
  description: Chunk size in bytes.
  returned: always
  type: int
  sample: 1048576
members:
  description: Kernel names of the members in role order.
  returned: always
  type: list
  elements: str
  sample: [nvme1n1, nvme2n1]
size_bytes:
  description: Array size in bytes; V(null) when it is not running.
  returned: always
  type: int
  sample: 8579448832
metadata:
  description: Superblock version.
  returned: always
  type: str
  sample: '1.2'
signatures:
  description: Signatures C(wipefs --no-act) found on the members before a creation (empty otherwise).
  returned: always
  type: list
  elements: dict
  sample: [{device: nvme1n1, type: ext4, uuid: 68efbee8-e2fc-4726-b513-4e32e0991b1b, offset: '0x438',
            label: null, usage: filesystem}]
conf_line:
  description: The C(ARRAY) line kept in O(conf_file); V(null) with O(persist=false) or O(state=absent).
  returned: always
  type: str
  sample: ARRAY /dev/md/ckpt metadata=1.2 UUID=e78a7203:e730df8e:32ae8ffc:b4fc9ee8 name=node1:ckpt
conf_changed:
  description: Whether O(conf_file) changed (would change in check mode).
  returned: always
  type: bool
  sample: true
initramfs_updated:
  description: Whether C(update-initramfs -u) ran.
  returned: always
  type: bool
  sample: false
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.atomic_file import write_atomic
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import parse_mdstat
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs_plan import (
    describe_signature,
    md_kib,
    norm_uuid,
    parse_chunk,
    parse_wipefs_json,
)

MARKER = '# Managed by Ansible (ai_storage.checkpoint_io.md_array): %s'
WIPEFS_COLUMNS = 'DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE'


def parse_export(text):
    """``mdadm --detail/--examine --export`` KEY=value lines -> dict."""
    result = {}
    for line in (text or '').splitlines():
        key, sep, value = line.strip().partition('=')
        if sep and key.startswith('MD_'):
            result[key] = value.strip().strip("'")
    return result


def name_matches(md_name, name):
    """Superblock name ``host:ckpt`` (or ``ckpt``) against the array name ``ckpt``."""
    return bool(md_name) and (md_name == name or md_name.rsplit(':', 1)[-1] == name)


def colon_uuid(value):
    """Any UUID spelling -> mdadm's ``8:8:8:8`` form."""
    raw = norm_uuid(value)
    if not raw or len(raw) != 32:
        return value
    return ':'.join(raw[i:i + 8] for i in range(0, 32, 8))


def update_conf(text, device, uuid, line, name):
    """O(conf_file) text with ``line`` for ``device``/``uuid`` (None: removed), in place."""
    marker = MARKER % name
    wanted = norm_uuid(uuid)
    out = []
    placed = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped == marker:
            continue
        tokens = stripped.split()
        if tokens[:1] == ['ARRAY']:
            same_device = len(tokens) > 1 and tokens[1] == device
            same_uuid = wanted and any(tok.startswith('UUID=') and norm_uuid(tok[5:]) == wanted for tok in tokens)
            if same_device or same_uuid:
                if line and not placed:
                    out.extend([marker, line])
                    placed = True
                continue
        out.append(raw)
    if line and not placed:
        out.extend([marker, line])
    result = '\n'.join(out)
    return result + '\n' if result else result


class MdArray(object):
    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.name = self.params['name']
        self.device = '/dev/md/' + self.name
        self.commands = []
        self.mdadm = module.get_bin_path('mdadm', required=True)

    # --- environment -------------------------------------------------------
    def path(self, dev_path):
        """A /dev path under devfs_root (tests); unchanged on real nodes."""
        root = self.params['devfs_root']
        if root != '/dev' and dev_path.startswith('/dev/'):
            return os.path.join(root, dev_path[len('/dev/'):])
        return dev_path

    def kernel_name(self, dev_path):
        real = os.path.realpath(self.path(dev_path))
        return os.path.basename(real) if os.path.exists(real) else None

    def run(self, argv, check_rc=True):
        rc, out, err = self.module.run_command(argv, environ_update={'LANG': 'C', 'LC_ALL': 'C'})
        if check_rc and rc != 0:
            self.module.fail_json(msg='%s failed (rc=%d): %s' % (' '.join(argv), rc, (err or out).strip()),
                                  rc=rc, stdout=out, stderr=err, commands=self.commands)
        return rc, out, err

    def execute(self, argv):
        self.commands.append(argv)
        if not self.module.check_mode:
            self.run(argv)

    def mdstat(self):
        try:
            with open(os.path.join(self.params['procfs_root'], 'mdstat')) as handle:
                return parse_mdstat(handle.read())
        except (IOError, OSError):
            return {}

    def sys_block(self, name, *parts):
        return os.path.join(self.params['sysfs_root'], 'class', 'block', name, *parts)

    def holders(self, name):
        try:
            return sorted(os.listdir(self.sys_block(name, 'holders')))
        except (IOError, OSError):
            return []

    def size_bytes(self, kernel):
        try:
            with open(self.sys_block(kernel, 'size')) as handle:
                return int(handle.read().strip()) * 512
        except (IOError, OSError, ValueError):
            return None

    def detail(self, path):
        rc, out, dummy = self.run([self.mdadm, '--detail', '--export', path], check_rc=False)
        return parse_export(out) if rc == 0 else None

    def sys_uuid(self, kernel):
        try:
            with open(self.sys_block(kernel, 'md', 'uuid')) as handle:
                return handle.read().strip()
        except (IOError, OSError):
            return None

    def examine(self, member):
        rc, out, dummy = self.run([self.mdadm, '--examine', '--export', member], check_rc=False)
        info = parse_export(out) if rc == 0 else {}
        return info if info.get('MD_UUID') else None

    def signatures(self, members):
        wipefs = self.module.get_bin_path('wipefs', required=True)
        dummy, out, dummy_err = self.run([wipefs, '--no-act', '--json', '--output', WIPEFS_COLUMNS] + members)
        try:
            return parse_wipefs_json(out)
        except ValueError as exc:
            self.module.fail_json(msg=to_native(exc))

    def locate(self, arrays, kernel_members=None):
        """Kernel name of this array when it runs, or None.

        /dev/md/<name> first; else the md device whose UUID is O(uuid); else the running array made of exactly
        ``kernel_members`` whose superblock name is O(name). An initramfs that assembles arrays with an older
        copy of mdadm.conf names them /dev/md/<host>:<name> or /dev/md127, so the link alone is not enough.
        """
        running = sorted(name for name, array in arrays.items() if array.get('state') == 'active')
        kernel = self.kernel_name(self.device)
        if kernel in running:
            return kernel
        wanted = norm_uuid(self.params['uuid'])
        if wanted:
            for name in running:
                if norm_uuid(self.sys_uuid(name)) == wanted:
                    return name
        if kernel_members:
            for name in running:
                if sorted(arrays[name].get('members') or []) == sorted(kernel_members):
                    info = self.detail('/dev/' + name) or {}
                    if name_matches(info.get('MD_NAME'), self.name):
                        return name
        return None

    def active(self, kernel_members=None):
        """{kernel_name, path, level, chunk_bytes, members, uuid, md_name, metadata, size_bytes} of the running
        array, or None."""
        arrays = self.mdstat()
        kernel = self.locate(arrays, kernel_members)
        if not kernel:
            return None
        info = self.detail('/dev/' + kernel) or {}
        array = arrays[kernel]
        return {'kernel_name': kernel, 'path': '/dev/' + kernel, 'level': array.get('level'),
                'chunk_bytes': array.get('chunk_bytes'), 'members': array.get('members') or [],
                'uuid': info.get('MD_UUID'), 'md_name': info.get('MD_NAME'), 'metadata': info.get('MD_METADATA'),
                'size_bytes': self.size_bytes(kernel)}

    # --- present -----------------------------------------------------------
    def mismatches(self, current, kernel_members, chunk):
        problems = []
        if current['level'] != 'raid0':
            problems.append('level %s (asked raid0)' % current['level'])
        if current['chunk_bytes'] != chunk:
            problems.append('chunk %s bytes (asked %d)' % (current['chunk_bytes'], chunk))
        if sorted(current['members']) != sorted(kernel_members):
            problems.append('members %s (asked %s)' % (', '.join(current['members']), ', '.join(kernel_members)))
        wanted = self.params['uuid']
        if wanted and norm_uuid(current['uuid']) != norm_uuid(wanted):
            problems.append('UUID %s (asked %s)' % (current['uuid'], wanted))
        return problems

    def assemblable(self, members):
        """The common superblock of the members when they hold one RAID0 array named ``name``; else None."""
        infos = [self.examine(member) for member in members]
        if not all(infos):
            return None
        uuids = set(norm_uuid(info.get('MD_UUID')) for info in infos)
        first = infos[0]
        if len(uuids) != 1 or not name_matches(first.get('MD_NAME'), self.name):
            return None
        if first.get('MD_LEVEL') != 'raid0' or first.get('MD_DEVICES') != str(len(members)):
            return None
        if self.params['uuid'] and norm_uuid(self.params['uuid']) not in uuids:
            return None
        return first

    def present(self, result):
        members = self.params['members'] or []
        if len(members) < 2:
            self.module.fail_json(msg='members: a RAID0 array needs at least two members, got %d (%s)'
                                  % (len(members), ', '.join(members) or 'none'))
        try:
            chunk = parse_chunk(self.params['chunk'], 'chunk')
        except ValueError as exc:
            self.module.fail_json(msg=to_native(exc))
        kernel_members = []
        for member in members:
            kernel = self.kernel_name(member)
            if not kernel:
                self.module.fail_json(msg='members: %s does not exist' % member)
            if kernel in kernel_members:
                self.module.fail_json(msg='members: %s is given twice (%s)' % (kernel, ', '.join(members)))
            kernel_members.append(kernel)
        result.update(chunk_bytes=chunk, members=kernel_members, level='raid0', metadata=self.params['metadata'])

        current = self.active(kernel_members)
        before = self.describe(current)
        if current:
            problems = self.mismatches(current, kernel_members, chunk)
            if problems:
                self.module.fail_json(msg='%s (%s) already exists with %s; nothing was changed. Stop it first '
                                      '(state=absent) to make it again.'
                                      % (self.device, current['kernel_name'], '; '.join(problems)), **result)
            self.finish(result, current, 'none', before)
            return

        arrays = self.mdstat()
        for array_name, array in sorted(arrays.items()):
            taken = sorted(set(array.get('members') or []) & set(kernel_members))
            if taken:
                self.module.fail_json(msg='%s: already a member of the running array %s; nothing was changed'
                                      % (', '.join(taken), array_name), **result)
        for kernel in kernel_members:
            holders = self.holders(kernel)
            if holders:
                self.module.fail_json(msg='%s has holders (%s): it is in use; nothing was changed'
                                      % (kernel, ', '.join(holders)), **result)

        found = self.assemblable(members)
        if found:
            uuid = found.get('MD_UUID')
            self.execute([self.mdadm, '--assemble', self.device, '--uuid=' + colon_uuid(uuid)] + members)
            action = 'assembled'
        else:
            signatures = self.signatures(members)
            result['signatures'] = signatures
            carrying = []
            for member, kernel in zip(members, kernel_members):
                own = [sig for sig in signatures if sig.get('device') in (kernel, member, os.path.basename(member))]
                if own:
                    carrying.append((member, own))
            if carrying and not self.params['force']:
                found = '; '.join('%s carries %s' % (member, ', '.join(describe_signature(sig) for sig in sigs))
                                  for member, sigs in carrying)
                self.module.fail_json(msg='refusing to create %s: %s. Nothing was changed; force=true erases these '
                                          'signatures (wipefs --all) and what they hold.' % (self.device, found),
                                      **result)
            wipefs = self.module.get_bin_path('wipefs', required=True) if carrying else None
            for member, dummy in carrying:
                self.execute([wipefs, '--all', member])
            self.execute([self.mdadm, '--create', self.device, '--run', '--metadata=' + self.params['metadata'],
                          '--level=raid0', '--raid-devices=%d' % len(members), '--chunk=' + md_kib(chunk),
                          '--name=' + self.name] + members)
            action = 'created'

        if self.module.check_mode:
            result.update(action=action, changed=True)
            result['diff'] = [{'before_header': self.device, 'before': before,
                               'after_header': self.device,
                               'after': 'raid0, chunk %s, members %s (%s)\n'
                                        % (md_kib(chunk), ', '.join(kernel_members), action)}]
            self.persist(result, None)
            return
        self.settle()
        current = self.active(kernel_members)
        if not current:
            self.module.fail_json(msg='%s is not running after mdadm --%s' % (self.device, action[:-1]
                                  if action == 'created' else 'assemble'), **result)
        problems = self.mismatches(current, kernel_members, chunk)
        if problems:
            if action == 'assembled':
                self.run([self.mdadm, '--stop', current['path']], check_rc=False)
            again = ' (stopped again)' if action == 'assembled' else ''
            self.module.fail_json(msg='%s %s with %s%s' % (self.device, action, '; '.join(problems), again),
                                  **result)
        self.finish(result, current, action, before)

    def settle(self):
        udevadm = self.module.get_bin_path('udevadm')
        if udevadm:
            self.run([udevadm, 'settle', '--timeout=30'], check_rc=False)

    @staticmethod
    def describe(current):
        if not current:
            return 'absent\n'
        return '%s, chunk %s, members %s\n' % (current['level'], md_kib(current['chunk_bytes'] or 0),
                                               ', '.join(current['members']))

    def finish(self, result, current, action, before):
        result.update(kernel_name=current['kernel_name'], path=current['path'], uuid=current['uuid'],
                      md_name=current['md_name'],
                      metadata=current['metadata'] or self.params['metadata'], size_bytes=current['size_bytes'],
                      members=current['members'], chunk_bytes=current['chunk_bytes'], level=current['level'],
                      action=action)
        if action != 'none':
            result['changed'] = True
        result['diff'] = [{'before_header': self.device, 'before': before, 'after_header': self.device,
                           'after': self.describe(current)}]
        self.persist(result, current)

    # --- mdadm.conf --------------------------------------------------------
    def read_conf(self):
        try:
            with open(self.params['conf_file']) as handle:
                return handle.read()
        except (IOError, OSError):
            return ''

    def write_conf(self, text):
        path = self.params['conf_file']
        directory = os.path.dirname(path) or '.'
        if not os.path.isdir(directory):
            os.makedirs(directory)
        write_atomic(path, text, mode=0o644, keep_mode=True, mover=self.module.atomic_move)

    def persist(self, result, current):
        """Keep (or, with current=None in state absent, remove) the ARRAY line."""
        if not self.params['persist']:
            return
        state = self.params['state']
        if state == 'present':
            if current:
                line = 'ARRAY %s metadata=%s UUID=%s name=%s' % (
                    self.device, current['metadata'] or self.params['metadata'], colon_uuid(current['uuid']),
                    current['md_name'])
                uuid = current['uuid']
            else:  # check mode, array not made yet
                line = 'ARRAY %s metadata=%s UUID=<assigned by mdadm --create> name=<hostname>:%s' % (
                    self.device, self.params['metadata'], self.name)
                uuid = None
        else:
            line, uuid = None, result.get('uuid') or self.params['uuid']
        before = self.read_conf()
        after = update_conf(before, self.device, uuid, line, self.name)
        result['conf_line'] = line
        if after == before:
            return
        result['conf_changed'] = True
        result['changed'] = True
        result['diff'].append({'before_header': self.params['conf_file'], 'before': before,
                               'after_header': self.params['conf_file'], 'after': after})
        if self.module.check_mode or (state == 'present' and not current):
            return
        self.write_conf(after)
        if self.params['update_initramfs']:
            tool = self.module.get_bin_path('update-initramfs', required=True)
            self.commands.append([tool, '-u'])
            self.run([tool, '-u'])
            result['initramfs_updated'] = True

    # --- absent ------------------------------------------------------------
    def absent(self, result):
        given = [self.kernel_name(member) for member in self.params['members'] or []]
        current = self.active([name for name in given if name])
        before = self.describe(current)
        result['diff'] = [{'before_header': self.device, 'before': before, 'after_header': self.device,
                           'after': 'absent\n'}]
        wanted = self.params['uuid']
        members = []
        if current:
            if wanted and norm_uuid(current['uuid']) != norm_uuid(wanted):
                self.module.fail_json(msg='%s has UUID %s, not %s: not stopping someone else\'s array'
                                      % (self.device, current['uuid'], wanted), **result)
            result.update(uuid=current['uuid'], md_name=current['md_name'], kernel_name=current['kernel_name'],
                          path=current['path'], members=current['members'], chunk_bytes=current['chunk_bytes'],
                          level=current['level'])
            members = ['/dev/' + name for name in current['members']]
            self.execute([self.mdadm, '--stop', current['path']])
            result['action'] = 'stopped'
        elif self.params['force']:
            members = list(self.params['members'] or [])
        if self.params['force']:
            array_uuid = norm_uuid(current['uuid']) if current else norm_uuid(wanted)
            for member in members:
                if not current and not os.path.exists(self.path(member)):
                    continue
                info = self.examine(member)
                if not info:
                    continue
                same = norm_uuid(info.get('MD_UUID')) == array_uuid if array_uuid else \
                    name_matches(info.get('MD_NAME'), self.name)
                if same:
                    self.execute([self.mdadm, '--zero-superblock', member])
                    result['action'] = 'stopped' if current else 'absent'
                    result['uuid'] = result['uuid'] or info.get('MD_UUID')
        if self.commands:
            result['changed'] = True
        self.persist(result, None)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            members=dict(type='list', elements='path'),
            level=dict(type='str', choices=['raid0'], default='raid0'),
            chunk=dict(type='raw', default='512K'),
            metadata=dict(type='str', choices=['1.0', '1.1', '1.2'], default='1.2'),
            uuid=dict(type='str'),
            force=dict(type='bool', default=False),
            persist=dict(type='bool', default=True),
            conf_file=dict(type='path', default='/etc/mdadm/mdadm.conf'),
            update_initramfs=dict(type='bool', default=False),
            devfs_root=dict(type='path', default='/dev'),
            procfs_root=dict(type='path', default='/proc'),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        required_if=[('state', 'present', ['members'])],
        supports_check_mode=True,
    )
    name = module.params['name']
    if not name or '/' in name or name.startswith('.') or len(name) > 32:
        module.fail_json(msg='name: %r must be a plain name of 1 to 32 characters (the array becomes /dev/md/<name>)'
                         % name)
    array = MdArray(module)
    result = dict(changed=False, device=array.device, kernel_name=None, path=None, action='none',
                  commands=array.commands,
                  uuid=None, md_name=None, level=None, chunk_bytes=None, members=[], size_bytes=None,
                  metadata=module.params['metadata'], signatures=[], conf_line=None, conf_changed=False,
                  initramfs_updated=False, diff=[])
    if module.params['state'] == 'present':
        array.present(result)
    else:
        array.absent(result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
