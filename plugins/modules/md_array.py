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
  - Otherwise the array is created (C(mdadm --create --run), with O(uuid) when given, so a caller can record the
    array's UUID before it exists). Before that, every member is probed with C(wipefs --no-act); a member that
    carries any signature (a filesystem, an md or LVM superblock, a partition table) is refused unless O(force)
    names it by serial or WWID, which erases its signatures (C(wipefs --all)) first. Members that are in another
    active array or have holders (md, dm) are always refused.
  - "Every member is re-identified in this process immediately before C(mdadm --create), C(--assemble),
    C(--zero-superblock) and C(wipefs) write it: it is opened (read-only, so the kernel cannot give its name to
    another drive until the command is over) and its WWID, serial and size are read from sysfs and compared with
    O(identities). A member that is not the expected drive (the kernel renumbered the drives after a controller
    reset or a hot-plug) fails the module before anything is written, naming the device, the expected and the
    found identity."
  - With O(persist=true), the array's C(ARRAY) line is kept in O(conf_file) (replaced in place when an earlier line
    names the same device or UUID), so the array is assembled under the same name at boot. O(update_initramfs=true)
    rebuilds the initramfs after the file changed (only needed when the initramfs assembles arrays).
  - O(state=absent) stops the array (the kernel refuses while it is mounted) and removes its C(ARRAY) line; with
    O(force) it also erases the md superblocks of the members it names that carry this array's UUID
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
  - module: ai_storage.checkpoint_io.xfs_format
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
      - Required with O(state=present) (at least two). With O(state=absent) and O(force), the members whose
        superblocks may be erased.
    type: list
    elements: path
  identities:
    description:
      - What each member must be, in the order of O(members) - C(wwid), C(serial) and C(size_bytes) as the facts
        showed them (the xfs role passes C(identity.expected_from) of each selected drive; keys left out are not
        compared, at least one is needed).
      - Required to create or assemble the array (O(state=present)) and to erase superblocks (O(state=absent) with
        O(force)) - the module writes no member it has not re-identified.
    type: list
    elements: dict
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
      - UUID the array must have (any of mdadm's or blkid's spellings). A new array is created with it
        (C(mdadm --create --uuid)), so a caller can record the UUID before the array exists and know the array as
        its own if the run is interrupted. An existing or assemblable array with another UUID fails the module;
        with O(state=absent) only an array with this UUID is stopped and only superblocks with this UUID are
        erased.
    type: str
  force:
    description:
      - The members that may be overwritten, by serial or WWID (never by kernel name, which renumbering changes).
        A bare V(true) is refused (it would cover every member); V(false) or V([]) names none.
      - With O(state=present), erase the signatures found on the named members (C(wipefs --all)) before creating
        the array; a member with signatures that is not named is refused. Destroys what the members held.
      - With O(state=absent), erase this array's md superblocks from the named members after stopping it.
    type: raw
    default: []
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
    identities: [{serial: DATA0001, size_bytes: 4294967296}, {serial: DATA0002, size_bytes: 4294967296}]
    chunk: 1M
  become: true
  register: md

- name: Show what would run (nothing is run in check mode)
  ai_storage.checkpoint_io.md_array:
    name: ckpt
    members: [/dev/nvme1n1, /dev/nvme2n1]
    identities: [{serial: DATA0001}, {serial: DATA0002}]
    chunk: 1M
  check_mode: true
  register: plan
  # plan.commands: [[mdadm, --create, /dev/md/ckpt, --run, --metadata=1.2, --level=raid0, --raid-devices=2,
  #                  --chunk=1024K, --name=ckpt, /dev/nvme1n1, /dev/nvme2n1]]

- name: Re-create over a drive that carried another filesystem (destroys it), with a UUID chosen beforehand
  ai_storage.checkpoint_io.md_array:
    name: ckpt
    members: [/dev/nvme1n1, /dev/nvme2n1]
    identities:
      - {wwid: nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001, serial: DATA0001, size_bytes: 4294967296}
      - {wwid: nvme.1b36-4441544130303032-51454d55204e564d65204374726c-00000001, serial: DATA0002, size_bytes: 4294967296}
    chunk: 1M
    uuid: 3f9c1a52:77e04b1d:9d0f6a2e:c41b8e07
    force: [DATA0002]

- name: Stop the array and erase its superblocks (only this UUID, only the named members)
  ai_storage.checkpoint_io.md_array:
    name: ckpt
    state: absent
    uuid: "{{ md.uuid }}"
    members: [/dev/nvme1n1, /dev/nvme2n1]
    identities: "{{ md.identities }}"
    force: [DATA0001, DATA0002]
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
identities:
  description: The members' identities as re-read from sysfs immediately before the command (create or assemble).
  returned: when the array was created or assembled (or would be in check mode)
  type: list
  elements: dict
  sample: [{name: nvme1n1, dev: '259:1', wwid: 'nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001',
            nguid: null, eui: null, uuid: null, serial: DATA0001, model: QEMU NVMe Ctrl, nsid: 1,
            size_bytes: 4294967296, partition: null, disk: null}]
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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.md_array import MdArray


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            members=dict(type='list', elements='path'),
            identities=dict(type='list', elements='dict'),
            level=dict(type='str', choices=['raid0'], default='raid0'),
            chunk=dict(type='raw', default='512K'),
            metadata=dict(type='str', choices=['1.0', '1.1', '1.2'], default='1.2'),
            uuid=dict(type='str'),
            force=dict(type='raw', default=[]),
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
