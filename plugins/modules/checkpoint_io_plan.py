#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_io_plan
short_description: Gather a node's facts once and decide what the run will do to it, layer by layer
version_added: 1.1.0
description:
  - Runs M(ai_storage.checkpoint_io.checkpoint_io_facts) on the node (the one gather of the play) and decides the
    node's plan from those facts, the checked C(checkpoint_io_*) inputs and the role settings (each tuning role's
    C(defaults/main.yml) with the inventory's values over them), with the same pure functions the roles apply with.
  - "The plan: the data drives (one selection verdict; C(problems) stop the node before anything changes), the
    per-rank queue depth policy (fixed, measured by the depth sweep, lowered by a thermal back-off; the depth the
    layers in front of DeepSpeed are sized for), and per layer in the order the run applies them the target it will
    set and why: fabric connections (made first: their namespaces are drives the later steps tune), GDS mode and
    cufile.json keys, io_uring access and memlock, each drive's block queue values and writes, the volume,
    DeepSpeed's aio section, the thermal validation and the verification."
  - Written on the controller as C(<report_dir>/plan/<inventory_hostname>.json), in check mode too (the plan is what
    a check run is for; nothing else is written); recorded on the node as the state store record C(plan) outside
    check mode, where no problem stops the node. C(lines) is the plan as a person reads it.
  - The plan is the run's bookkeeping, not a setting of the node - the task never reports a change.
  - This is an action plugin; the module file holds its documentation.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  action:
    description: Runs on the controller (it writes the plan there) in front of the facts module on the node.
    support: full
  check_mode:
    support: full
    details: Gathers and decides as in a real run and writes the plan on the controller; records nothing on the node.
  diff_mode:
    support: none
  platform:
    platforms: linux
options:
  inputs:
    description: The checked C(checkpoint_io_*) inputs, C(checkpoint_io_inputs['values']) (the preflight role's).
    type: dict
    required: true
  settings:
    description: Role variables given in the inventory (C(xfs_*), C(block_layer_*), C(gds_*), C(io_uring_engine_*),
      C(deepspeed_config_*), C(nvmeof_rdma_*), C(thermal_validate_*)); each role's default fills the rest.
    type: dict
    default: {}
  gather:
    description: Options of the facts gather (C(training_user), C(checkpoint_paths), C(deepspeed_configs),
      C(deepspeed_python), C(state_dir), C(gather_subset), C(fio_probe)); others are ignored.
    type: dict
    default: {}
  report_dir:
    description: The controller directory the plan goes below (C(plan/<host>.json)); relative to the controller's
      working directory. Default C(checkpoint_io_report_dir) of O(inputs).
    type: str
  record:
    description: Record the plan on the node (state store record C(plan)) outside check mode.
    type: bool
    default: true
'''

EXAMPLES = r'''
- name: Decide the node's plan before anything changes
  ai_storage.checkpoint_io.checkpoint_io_plan:
    inputs: "{{ checkpoint_io_inputs['values'] }}"
    settings: "{{ dict(__names | zip(q('ansible.builtin.vars', *__names))) }}"
    gather:
      deepspeed_configs: "{{ checkpoint_io_inputs['values'].checkpoint_io_deepspeed_configs }}"
  vars:
    __names: "{{ q('ansible.builtin.varnames', '^(xfs|block_layer|gds|deepspeed_config)_') }}"
  register: node_plan

- name: Show it
  ansible.builtin.debug:
    msg: "{{ node_plan.lines }}"
'''

RETURN = r'''
plan:
  description: The node's plan (also the fact C(checkpoint_io_plan)); the schema is in docs/architecture.md.
  returned: success
  type: dict
  contains:
    schema_version: {description: "The plan's layout version", returned: always, type: int, sample: 1}
    order: {description: "The steps in the order the run applies them", returned: always, type: list, elements: str}
    problems: {description: "What stops the node before anything changes", returned: always, type: list,
               elements: str}
    drives: {description: "The selection: selected, errors, warnings, problems", returned: always, type: dict}
    queue_depth:
      description: "The per-rank depth policy: policy, asked, measured, per_rank, sizing, backoff, reason"
      returned: always
      type: dict
    gds: {description: "Mode, reason, cufile.json keys, the proof", returned: always, type: dict}
    io_uring_engine: {description: "Training user, memlock bound and why", returned: always, type: dict}
    block_layer: {description: "Per drive the queue values after and the writes", returned: always, type: dict}
    xfs: {description: "The volume, or skip", returned: always, type: dict}
    deepspeed_config: {description: "The files and the aio section", returned: always, type: dict}
    nvmeof_rdma: {description: "The fabric targets, or skip", returned: always, type: dict}
    thermal_validate: {description: "The sustained write's shape, or skip", returned: always, type: dict}
    verification: {description: "The verification's shape, or skip", returned: always, type: dict}
lines:
  description: The plan as lines a person reads, in the order the run applies it.
  returned: success
  type: list
  elements: str
  sample: ["drives: /dev/nvme1n1 (DATA0001), /dev/nvme2n1 (DATA0002)", "queue depth per rank: fixed: 8 per rank"]
path:
  description: The plan's file on the controller.
  returned: success
  type: str
  sample: /home/ops/checkpoint_io_reports/plan/node1.json
'''

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(
            inputs=dict(type='dict', required=True),
            settings=dict(type='dict', default={}),
            gather=dict(type='dict', default={}),
            report_dir=dict(type='str'),
            record=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    module.fail_json(msg='checkpoint_io_plan runs as an action plugin on the controller (it writes the plan '
                         'there); call it as ai_storage.checkpoint_io.checkpoint_io_plan from a play')


if __name__ == '__main__':
    main()
