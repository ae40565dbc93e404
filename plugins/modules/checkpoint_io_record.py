#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_io_record
short_description: Write or remove one record of the collection's state store on a node
version_added: 0.6.0
description:
  - The one way the roles and playbooks keep what they made, found and measured on a node (the xfs role's volume,
    the depth sweeps, the baseline before tuning, the io_uring settings found). Reading is the C(state) subset of
    M(ai_storage.checkpoint_io.checkpoint_io_facts).
  - A record is C(<state_dir>/<name>.json) in one layout (C(checkpoint_io_record) schema version, C(name),
    C(written_at), C(writer), C(data)). A record whose data would not change is not rewritten.
  - Why a module of its own. M(ansible.builtin.copy) writes one file, without a lock, without a layout or schema
    check, and through whatever the destination is.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.state_store
attributes:
  check_mode:
    support: full
    details: Reports whether the record would change (and the diff) without writing anything.
  diff_mode:
    support: full
    details: The record's data before and after.
  platform:
    platforms: linux
options:
  name:
    description:
      - The record's name (lower-case letters, digits and C(_), a letter first, at most 64; the file C(<name>.json)).
      - V(run_lease) is refused (the run lease is M(ai_storage.checkpoint_io.checkpoint_io_lock)'s).
    type: str
    required: true
  state:
    description:
      - V(present) sets the record's data to O(data) (or keeps an existing one with O(keep)).
      - V(absent) removes the record (only records of the store; nothing else in the directory is touched).
    type: str
    choices: [present, absent]
    default: present
  data:
    description:
      - The record's data (required with O(state=present)). Plain JSON only - NaN, Infinity and non-string keys are
        refused before anything is written.
    type: dict
  keep:
    description: Keep an existing record as it is (the first write wins - a baseline, the values found before tuning).
    type: bool
    default: false
  merge:
    description:
      - Set the top-level keys of O(data) in the existing record and keep its other keys (read and written under the
        store's lock, so two writers never lose each other's key). Without it O(data) replaces the record.
    type: bool
    default: false
  writer:
    description: Who wrote the record (kept in the record; the role or playbook name).
    type: str
    default: checkpoint_io_record
'''

EXAMPLES = r'''
- name: Record the settings found before tuning (first run only)
  ai_storage.checkpoint_io.checkpoint_io_record:
    name: settings_before
    data: "{{ settings }}"
    keep: true
    writer: tune_checkpoint_nodes
    state_dir: "{{ checkpoint_io_state_dir | default(omit) }}"

- name: Add one sweep to the depth_sweep record (other sweeps kept)
  ai_storage.checkpoint_io.checkpoint_io_record:
    name: depth_sweep
    data: "{{ {key: sweep} }}"
    merge: true

- name: Forget the xfs role's volume
  ai_storage.checkpoint_io.checkpoint_io_record:
    name: xfs
    state: absent
'''

RETURN = r'''
path:
  description: The record's file.
  returned: always
  type: str
  sample: /var/lib/ai_storage_checkpoint_io/settings_before.json
record:
  description: The record's data after the task (V(null) when there is none).
  returned: always
  type: dict
  sample: {queue_depth: 8, block_size: 1048576, intra_op_parallelism: 1}
previous:
  description: The record's data before the task (V(null) when there was none).
  returned: always
  type: dict
  sample: null
kept:
  description: Whether an existing record was kept (O(keep)).
  returned: always
  type: bool
  sample: false
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            data=dict(type='dict'),
            keep=dict(type='bool', default=False),
            merge=dict(type='bool', default=False),
            writer=dict(type='str', default='checkpoint_io_record'),
            state_dir=dict(type='path', default=state_store.STATE_DIR),
        ),
        required_if=[('state', 'present', ['data'])],
        mutually_exclusive=[('keep', 'merge')],
        supports_check_mode=True,
    )
    params = module.params
    state_dir, name = params['state_dir'], params['name']
    result = dict(changed=False, path=None, record=None, previous=None, kept=False)
    try:
        state_store.check_name(name)
        if name == state_store.RUN_LEASE:
            raise state_store.StateError('record name %r is the run lease, which only checkpoint_io_lock writes'
                                         % name)
        state_store.check_dir_param(state_dir)
        problem = state_store.json_problem(params['data'])
        if problem:
            raise state_store.StateError('%s; nothing was written' % problem)
    except state_store.StateError as exc:
        module.fail_json(msg='%s: %s' % ('checkpoint_io_record', exc), **result)
    try:
        result['path'] = state_store.record_path(state_dir, name)
        previous = state_store.read_record(state_dir, name) if state_store.check_dir(state_dir) else None
        if params['state'] == 'absent':
            wanted = None
        elif params['keep'] and previous is not None:
            wanted, result['kept'] = previous, True
        elif params['merge']:
            wanted = dict(previous or {}, **params['data'])
        else:
            wanted = params['data']
        result['previous'] = previous
        if module.check_mode:
            result.update(changed=wanted != previous, record=wanted)
        elif params['state'] == 'absent' and previous is None:
            pass
        elif params['state'] == 'absent':
            changed, before, after = state_store.remove_record(state_dir, name)
            result.update(changed=changed, previous=before, record=after)
        elif params['merge']:
            data = params['data']
            changed, before, after = state_store.update(state_dir, name, lambda old: dict(old or {}, **data),
                                                        params['writer'])
            result.update(changed=changed, previous=before, record=after)
        else:
            changed, before, after = state_store.write_record(state_dir, name, params['data'], params['writer'],
                                                              keep=params['keep'])
            result.update(changed=changed, previous=before, record=after, kept=params['keep'] and before is not None)
    except (state_store.StateError, OSError) as exc:
        module.fail_json(msg='%s record %r: %s' % ('checkpoint_io state store', name, exc), **result)
    if module._diff:
        result['diff'] = dict(before=result['previous'] or {}, after=result['record'] or {},
                              before_header='%s (before)' % result['path'], after_header='%s (after)' % result['path'])
    module.exit_json(**result)


if __name__ == '__main__':
    main()
