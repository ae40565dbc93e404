#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: xfs_format
short_description: Make (or erase) an XFS with a given UUID on a device re-identified immediately before
version_added: 0.7.0
description:
  - Makes sure O(device) holds an XFS with the UUID O(uuid) (C(mkfs.xfs) with O(options) and C(-m uuid=)), or, with
    O(state=absent), erases that XFS signature and nothing else.
  - "The device is re-identified in this process immediately before anything is written, and held open while
    C(wipefs) and C(mkfs.xfs) run (a plain read-only open: the kernel cannot give its name to another drive until
    the command is over). A drive must have the WWID, serial and size of O(drive); an md array the md UUID
    O(md_uuid) (C(/sys/block/mdX/md/uuid)) and exactly the members O(members), matched by identity; the external
    log device the identity O(log_identity). A device that is not the expected one (the kernel renumbered the
    drives after a controller reset or a hot-plug) fails the module, naming the device and the expected and found
    identities, and nothing is written."
  - "Signatures are read with C(wipefs --no-act) (every one; C(blkid) reports none when a device carries two). An
    XFS with O(uuid) is the caller's own: nothing to do. Anything else - on the device or on the log device - is
    refused unless O(force) names the drive by serial or WWID (for an md array: every member), which erases it
    first (C(wipefs --all)). mkfs.xfs then runs without C(-f), so it refuses whatever it still finds."
  - The caller chooses O(uuid) and records it before the module runs; a run interrupted after mkfs.xfs (before the
    caller recorded anything else) then finds its own filesystem on the next run instead of calling it foreign.
  - "A run killed inside mkfs.xfs leaves an XFS with O(uuid) whose primary superblock still has its in-progress flag
    set (mkfs.xfs writes it first and clears it last): that one is made again (C(mkfs.xfs -f), over the caller's own
    signature only), never kept (RV(half_made))."
  - Why a module of its own and not C(community.general.filesystem). That module formats whatever device the name
    it is given points at when it runs - names chosen at fact time can point at another drive by then - and cannot
    check that an md target is the array that was made (its UUID and its members' identities); it detects existing
    data with C(blkid), which reports nothing for a device that carries two signatures; its C(force) is one
    boolean for the device, not the drives named by serial or WWID; and it cannot erase one XFS by UUID and leave
    every other signature in place.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Linux, C(mkfs.xfs) (xfsprogs 4.3 or later for C(-m uuid=)) and C(wipefs) (util-linux).
notes:
  - Every command runs with an argument list and C(LANG=C).
  - O(sysfs_root) exists for tests; leave it at its default on real nodes.
seealso:
  - module: ai_storage.checkpoint_io.md_array
  - module: community.general.filesystem
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Re-identifies and probes (read-only) and returns in RV(commands) the C(wipefs) and C(mkfs.xfs) commands
      it would run, without running them.
  diff_mode:
    support: full
    details: The signatures of the device (and log device) before and after.
  platform:
    platforms: linux
options:
  device:
    description: The device to format, a drive (V(/dev/nvme1n1)) or a running md array (V(/dev/md127)).
    type: path
    required: true
  state:
    description:
      - V(present) makes the XFS unless one with O(uuid) is there; V(absent) erases the XFS signature with O(uuid)
        (and, with O(log_device), the external log's signature), nothing else.
    type: str
    choices: [present, absent]
    default: present
  uuid:
    description: The filesystem UUID, chosen by the caller (C(mkfs.xfs -m uuid=)); the only XFS that counts as its own.
    type: str
    required: true
  drive:
    description:
      - What O(device) must be when it is a drive - C(wwid), C(serial) and C(size_bytes) as the facts showed them
        (keys left out are not compared; at least one is needed). Mutually exclusive with O(md_uuid).
    type: dict
  md_uuid:
    description: The md UUID O(device) must have when it is an md array (any spelling).
    type: str
  members:
    description: With O(md_uuid), the identities of exactly the array's members (as O(drive)), in any order.
    type: list
    elements: dict
  options:
    description: The mkfs.xfs options, without C(-m uuid=) and the device (the xfs role's plan C(mkfs.options)).
    type: list
    elements: str
    default: []
  log_device:
    description: The external log device the options name (C(-l logdev=)); checked and probed like O(device).
    type: path
  log_identity:
    description: What O(log_device) must be (as O(drive)). Required with O(log_device).
    type: dict
  force:
    description:
      - The drives whose signatures may be erased before mkfs.xfs, by serial or WWID. An md target is erased only
        when every member is named. A bare V(true) is refused; V(false) or V([]) names none.
    type: raw
    default: []
  sysfs_root:
    description: Root of sysfs. For tests only.
    type: path
    default: /sys
'''

EXAMPLES = r'''
- name: XFS on the checkpoint array, its UUID chosen (and recorded) beforehand
  ai_storage.checkpoint_io.xfs_format:
    device: /dev/md127
    md_uuid: 3f9c1a52:77e04b1d:9d0f6a2e:c41b8e07
    members:
      - {serial: DATA0001, wwid: nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001, size_bytes: 4294967296}
      - {serial: DATA0002, wwid: nvme.1b36-4441544130303032-51454d55204e564d65204374726c-00000001, size_bytes: 4294967296}
    uuid: 0b7e6c1e-3c55-4d7a-a0f1-6a4c2d9e8b13
    options: [-L, checkpoints, -d, 'su=1048576,sw=2,agsize=2146435072']

- name: Over a drive that held another filesystem (destroys it)
  ai_storage.checkpoint_io.xfs_format:
    device: /dev/nvme1n1
    drive: {serial: DATA0001, size_bytes: 4294967296}
    uuid: 0b7e6c1e-3c55-4d7a-a0f1-6a4c2d9e8b13
    force: [DATA0001]

- name: Erase that XFS, and only it
  ai_storage.checkpoint_io.xfs_format:
    device: /dev/nvme1n1
    drive: {serial: DATA0001}
    uuid: 0b7e6c1e-3c55-4d7a-a0f1-6a4c2d9e8b13
    state: absent
'''

RETURN = r'''
action:
  description: What was done (or would be in check mode).
  returned: always
  type: str
  choices: [none, created, erased]
  sample: created
uuid:
  description: The UUID of the XFS on the device after the task; V(null) when none (absent, or check mode before it is made).
  returned: always
  type: str
  sample: 0b7e6c1e-3c55-4d7a-a0f1-6a4c2d9e8b13
commands:
  description: The commands run, in order; in check mode, the commands that would run.
  returned: always
  type: list
  elements: list
  sample: [[/usr/sbin/mkfs.xfs, -L, checkpoints, -d, 'su=1048576,sw=2,agsize=2146435072', -m,
            'uuid=0b7e6c1e-3c55-4d7a-a0f1-6a4c2d9e8b13', /dev/md127]]
identities:
  description: The identities of the drives re-read immediately before the commands (the drive target and the log device).
  returned: always
  type: list
  elements: dict
  sample: [{name: nvme1n1, serial: DATA0001, wwid: 'nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001',
            size_bytes: 4294967296}]
half_made:
  description:
    - The target held an XFS with O(uuid) whose C(mkfs.xfs) was stopped before it finished (its primary superblock's
      in-progress flag set; blkid and wipefs call it xfs, the kernel refuses to mount it). It is made again.
  returned: with O(state=present)
  type: bool
  sample: false
signatures:
  description: What C(wipefs --no-act) found before the task, per device path.
  returned: always
  type: dict
  sample: {/dev/md127: [{device: md127, offset: '0x438', type: ext4, uuid: 68efbee8-e2fc-4726-b513-4e32e0991b1b,
                         label: null, usage: filesystem}]}
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import IdentityError
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs_format import XfsFormat


def main():
    module = AnsibleModule(
        argument_spec=dict(
            device=dict(type='path', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            uuid=dict(type='str', required=True),
            drive=dict(type='dict'),
            md_uuid=dict(type='str'),
            members=dict(type='list', elements='dict'),
            options=dict(type='list', elements='str', default=[]),
            log_device=dict(type='path'),
            log_identity=dict(type='dict'),
            force=dict(type='raw', default=[]),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        required_one_of=[('drive', 'md_uuid')],
        mutually_exclusive=[('drive', 'md_uuid')],
        required_together=[('md_uuid', 'members'), ('log_device', 'log_identity')],
        supports_check_mode=True,
    )
    work = XfsFormat(module)
    result = dict(changed=False, action='none', uuid=None, commands=work.commands, identities=[], signatures={})
    try:
        if module.params['state'] == 'present':
            work.present(result)
        else:
            work.absent(result)
    except IdentityError as exc:
        module.fail_json(msg='%s' % to_native(exc), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
