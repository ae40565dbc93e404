#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_io_lock
short_description: Take or give back a node's run lease, so two runs of the collection on one node never interleave
version_added: 0.6.0
description:
  - The playbooks take the lease in their first task and give it back in their last. A second run on the node (another
    operator, another controller, a cron job) waits up to O(wait) seconds for the first to finish, then fails that
    node naming the run that holds it (user, controller, playbook, since when, until when); other nodes go on.
  - The lease is the record C(run_lease) of the state store. It lasts O(ttl) seconds after it was last taken, so a run
    that died (controller killed, network lost) does not block a node for ever. Each play of a run renews it.
  - The lease is the run's bookkeeping, not a setting of the node - the task never reports a change (a second run of
    a playbook stays at changed=0).
  - The action plugin in front of the module names the run (controller host, the ansible-playbook process and its
    start time) and, when the lease belongs to a run of the same controller whose process is gone, takes it over
    at once with a warning. A lease of a dead run on another controller is taken with O(take_over).
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.state_store
attributes:
  check_mode:
    support: full
    details: Reports the holder and fails when another run holds the node (a check now would read a half-done
      state), but writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: linux
options:
  state:
    description: V(acquired) takes (or renews) the lease; V(released) gives it back if this run holds it.
    type: str
    choices: [acquired, released]
    default: acquired
  run_id:
    description: The run's name. The action plugin sets it (controller:pid:process start) unless given.
    type: str
  owner:
    description: Who the run is (user, controller, controller_pid, playbook), shown to a run that finds the lease
      taken. The action plugin fills it in.
    type: dict
    default: {}
  ttl:
    description: Seconds the lease lasts if the run never gives it back (60 to 604800).
    type: int
    default: 21600
  wait:
    description: Seconds to wait for another run's lease to end before failing (0 to 86400; 0 fails at once).
    type: int
    default: 0
  take_over:
    description: The run id of a lease known dead, taken at once (the failure message of a refused run names it).
    type: str
'''

EXAMPLES = r'''
- name: Take this node for the run (waits up to 10 minutes for another run to finish)
  ai_storage.checkpoint_io.checkpoint_io_lock:
    wait: 600
    state_dir: "{{ checkpoint_io_state_dir | default(omit) }}"

- name: Give it back
  ai_storage.checkpoint_io.checkpoint_io_lock:
    state: released
'''

RETURN = r'''
run_id:
  description: This run's name.
  returned: always
  type: str
  sample: "ctl01:41822:1733101234"
lease:
  description: The lease after the task (V(null) once released).
  returned: always
  type: dict
  sample: {run_id: "ctl01:41822:1733101234", user: alice, controller: ctl01, controller_pid: 41822,
           playbook: tune_checkpoint_nodes.yml, acquired: 1733101240.5, expires: 1733122840.5}
holder:
  description: The lease of another run found on the node (the one waited for, taken over or that refused this
    run); V(null) when there was none.
  returned: always
  type: dict
  sample: null
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type='str', choices=['acquired', 'released'], default='acquired'),
            run_id=dict(type='str'),
            owner=dict(type='dict', default={}),
            ttl=dict(type='int', default=21600),
            wait=dict(type='int', default=0),
            take_over=dict(type='str'),
            state_dir=dict(type='path', default=state_store.STATE_DIR),
        ),
        supports_check_mode=True,
    )
    params = module.params
    state_dir, run_id = params['state_dir'], params['run_id']
    result = dict(changed=False, run_id=run_id, lease=None, holder=None)
    for name, low, high in (('ttl', 60, 604800), ('wait', 0, 86400)):
        value = params[name]
        if isinstance(value, bool) or not isinstance(value, int):
            module.fail_json(msg='%s: %r is not a whole number of seconds (%d to %d)' % (name, value, low, high),
                             **result)
        if not low <= value <= high:
            module.fail_json(msg='%s: %d is out of range (%d to %d seconds)' % (name, value, low, high), **result)
    if not run_id:
        module.fail_json(msg='run_id is missing: the action plugin names the run; give run_id when calling the module '
                             'without it', **result)
    try:
        state_store.check_dir_param(state_dir)
    except state_store.StateError as exc:
        module.fail_json(msg=str(exc), **result)
    owner = dict(params['owner'] or {}, run_id=run_id)
    try:
        if params['state'] == 'released':
            if module.check_mode:
                lease = state_store.lease_holder(state_dir)
                result.update(lease=lease if lease and lease.get('run_id') != run_id else None)
            else:
                _released, before = state_store.release_run(state_dir, run_id)
                if before and before.get('run_id') != run_id:
                    result['holder'] = before
            module.exit_json(**result)
        if module.check_mode:
            lease = state_store.lease_holder(state_dir)
            if lease and lease.get('run_id') not in (run_id, params['take_over']):
                result['holder'] = lease
                module.fail_json(msg='%s (check mode too: it would read a half-done state)'
                                 % state_store.held_message(lease), **result)
            result.update(lease=lease)
            module.exit_json(**result)
        lease, holder = state_store.acquire_run(state_dir, owner, params['ttl'], wait=params['wait'],
                                                take_over=params['take_over'])[1:]
        result.update(lease=lease, holder=holder)
    except state_store.StateError as exc:
        holder = None
        try:
            holder = state_store.lease_holder(state_dir, now=time.time())
        except state_store.StateError:
            pass
        result['holder'] = holder if holder and holder.get('run_id') != run_id else None
        module.fail_json(msg=str(exc), **result)
    except OSError as exc:
        module.fail_json(msg='the run lease in %s: %s' % (state_dir, exc), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
