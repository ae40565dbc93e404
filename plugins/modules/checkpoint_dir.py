#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_dir
short_description: Make the training user's checkpoint directory below a root-owned mount point, through no link
version_added: 0.9.0
description:
  - Makes O(path) (below O(base), the checkpoint volume's mount point) the directory of O(owner) and O(group) with
    O(mode), as root, without resolving a name another user can steer.
  - O(base) is opened from C(/) (a symlink followed only where nobody but root can write beside it); every
    component below it is opened by descriptor with C(O_NOFOLLOW). A missing directory on the way is made root's,
    mode 0755; an existing one must be root's and not writable by its group or others (sticky bit aside), or its
    owner could replace what is below it with a link and the run would hand the link's target to O(owner). The last
    component is made with C(mkdirat) and its owner and mode are set on its descriptor (C(fchown), C(fchmod)).
  - A symlink anywhere below O(base), or a component that is not a directory, is refused with its name; nothing is
    changed then.
  - Why a module of its own. M(ansible.builtin.file) works by name and gives every directory it makes on the way
    the owner asked for the last one.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reports what would be made or changed (and the diff) without changing anything.
  diff_mode:
    support: full
    details: The directory's owner, group and mode before and after.
  platform:
    platforms: linux
options:
  path:
    description: The directory (absolute, O(base) itself or below it; no C(.) or C(..) component).
    type: path
    required: true
  base:
    description:
      - The directory O(path) lies in (the checkpoint volume's mount point); changed only when it is O(path).
    type: path
    required: true
  owner:
    description: The user who owns O(path) (a name or a numeric uid).
    type: str
    required: true
  group:
    description: The group of O(path) (a name or a numeric gid); the owner's primary group when unset.
    type: str
  mode:
    description:
      - The mode of O(path) as octal digits (V(0750), V(2750)), or the number YAML makes of an unquoted V(0750).
    type: raw
    default: '0750'
'''

EXAMPLES = r'''
- name: The checkpoint directory, two levels below the mount point, owned by the training user
  ai_storage.checkpoint_io.checkpoint_dir:
    path: /mnt/checkpoints/team/job
    base: /mnt/checkpoints
    owner: trainer
    mode: "0750"
'''

RETURN = r'''
path:
  description: The directory.
  returned: always
  type: str
  sample: /mnt/checkpoints/team/job
created:
  description: The directories made (or that check mode would make), root's on the way, then O(path).
  returned: always
  type: list
  elements: str
  sample: [/mnt/checkpoints/team, /mnt/checkpoints/team/job]
uid:
  description: The owner's uid.
  returned: always
  type: int
  sample: 1000
gid:
  description: The group's gid.
  returned: always
  type: int
  sample: 1000
mode:
  description: The mode, octal.
  returned: always
  type: str
  sample: '0750'
'''

import grp
import pwd
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import owned_dir

MODE_RE = re.compile(r'^[0-7]{3,4}$')


def parse_mode(value):
    """The mode as an int; ValueError naming the value."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0o7777:
        return value
    if isinstance(value, str) and MODE_RE.match(value.strip()):
        return int(value.strip(), 8)
    raise ValueError('mode: %r is not an octal mode (3 or 4 digits 0-7, such as "0750")' % (value,))


def resolve(owner, group):
    """(uid, gid) of names or numbers; ValueError naming the one that does not exist."""
    try:
        user = pwd.getpwuid(int(owner)) if owner.isdigit() else pwd.getpwnam(owner)
    except (KeyError, ValueError, OverflowError):
        raise ValueError('owner: %r is not a user on this node' % owner)
    if group is None or group == '':
        return user.pw_uid, user.pw_gid
    try:
        entry = grp.getgrgid(int(group)) if group.isdigit() else grp.getgrnam(group)
    except (KeyError, ValueError, OverflowError):
        raise ValueError('group: %r is not a group on this node' % group)
    return user.pw_uid, entry.gr_gid


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', required=True),
            base=dict(type='path', required=True),
            owner=dict(type='str', required=True),
            group=dict(type='str'),
            mode=dict(type='raw', default='0750'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        mode = parse_mode(p['mode'])
        uid, gid = resolve(p['owner'], p['group'])
        result = owned_dir.ensure(p['base'], p['path'], uid, gid, mode, check_mode=module.check_mode)
    except ValueError as exc:
        module.fail_json(msg='checkpoint_dir: %s. Nothing was changed.' % exc)
    except owned_dir.OwnedDirError as exc:
        module.fail_json(msg='checkpoint_dir: path %r: %s. Nothing was changed.' % (p['path'], exc))
    except OSError as exc:
        module.fail_json(msg='checkpoint_dir: path %r: %s' % (p['path'], exc.strerror or exc))
    out = dict(changed=result['changed'], path=p['path'], created=result['created'], uid=uid, gid=gid,
               mode='%04o' % mode)
    if module._diff:
        out['diff'] = {'before': result['before'] or {'state': 'absent'}, 'after': result['after'],
                       'before_header': p['path'], 'after_header': p['path']}
    module.exit_json(**out)


if __name__ == '__main__':
    main()
