# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The option of every module that reads or writes the collection's state store (module_utils/common/state_store.py).
    DOCUMENTATION = r'''
options:
  state_dir:
    description:
      - The node directory of the collection's records (one C(<name>.json) per record, one layout with a schema
        version). The roles and playbooks pass the inventory variable C(checkpoint_io_state_dir) here.
      - It must be a directory owned by root and writable by no one else; a symlink is refused.
    type: path
    default: /var/lib/ai_storage_checkpoint_io
notes:
  - Records are written under an exclusive lock on C(<state_dir>/.lock), through one atomic writer (a temporary file
    and a rename), so a reader never sees half a record and two writers never lose each other's change.
'''
