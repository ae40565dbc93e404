#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: block_queue
short_description: Set the block queue of one disk (scheduler, nr_requests, read-ahead, merges) in a safe order
version_added: 0.2.0
description:
  - Writes C(/sys/block/<device>/queue) attributes of one whole disk in the order the kernel needs, validates every
    value against the device's limits before writing anything, reads every value back after writing and fails
    when the kernel kept another.
  - Order of writes is C(scheduler), C(nr_requests), C(max_sectors_kb), C(read_ahead_kb), C(nomerges),
    C(rq_affinity). Switching the scheduler resets C(nr_requests), so C(nr_requests) is written after it (and
    rewritten after any scheduler switch). Some kernels recompute read-ahead when C(max_sectors_kb) changes, so
    read-ahead comes after it.
  - Refused before any write, with the value and the limit in the message. C(nr_requests) above the hardware tag
    depth (C(mq/*/nr_tags)) with scheduler C(none) (the kernel answers EINVAL, which tuning scripts often hide
    with C(|| true)); C(nr_requests) above 2048 with a scheduler; C(nr_requests) below 4 (the kernel silently
    clamps it to 4); C(max_sectors_kb) above C(max_hw_sectors_kb) or below the page size; C(read_ahead_kb) that
    is not a multiple of the page size (the kernel would round it down); any value above 4294967295 (the kernel's
    C(queue_var_store) answers EINVAL); a scheduler the device does not offer; a O(state_dir) that is not an
    absolute path or not a safe directory (see O(state_dir)).
  - The first time the module changes a device it records the values it found (all six attributes) in
    the state store's record C(block_layer) (O(state_dir)), keyed by the device's WWID (else controller serial and
    namespace id), written atomically.
    An existing entry is never overwritten, so the record keeps the values found before the first change.
    O(state=restored) writes those values back in the same order and removes the device's entry.
  - Why a module of its own. No module of C(ansible.posix) or C(community.general) writes sysfs block queue
    attributes; generic file writes (C(ansible.builtin.copy), C(ansible.builtin.shell) with C(echo)) know neither
    the ordering (scheduler before nr_requests), nor the limits (tag depth, 2048, the clamp at 4), nor read
    back what the kernel kept, and report a change on every run. tuned's disk plugin cannot set nr_requests
    and linux-system-roles kernel_settings sorts keys so nr_requests is written before the scheduler.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Linux with sysfs; root to write C(/sys/block/*/queue).
notes:
  - Live values do not survive a reboot. The C(ai_storage.checkpoint_io.block_layer) role adds a udev rule for that.
  - O(sysfs_root) exists for tests that point the module at a fake tree; leave it at its default on real nodes.
seealso:
  - name: Kernel documentation of the queue sysfs files
    description: Meaning of scheduler, nr_requests, read_ahead_kb, max_sectors_kb, nomerges and rq_affinity.
    link: https://docs.kernel.org/block/queue-sysfs.html
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.state_store
attributes:
  check_mode:
    support: full
    details: Validates, plans and reports the writes (and the diff) without writing sysfs or the record file.
  diff_mode:
    support: full
    details: The diff shows the managed attributes before and after.
  platform:
    platforms: linux
options:
  device:
    description:
      - Whole disk to tune, as a kernel name (V(nvme1n1)) or a path (V(/dev/nvme1n1), or a C(/dev/disk/by-id) link).
      - Partitions are refused; they share the queue of their disk.
    type: str
    required: true
  scheduler:
    description:
      - I/O scheduler. V(none) suits checkpoint writes (large sequential writes, no reordering);
        V(mq-deadline) suits mixed use.
      - Must be offered by the device (C(queue/scheduler)) or be one the kernel loads on demand
        (V(mq-deadline), V(kyber), V(bfq)).
      - Omit to leave the scheduler as it is.
    type: str
  nr_requests:
    description:
      - Requests the block layer holds per hardware queue. 4 to the hardware tag depth with scheduler V(none),
        4 to 2048 with a scheduler (the scheduler that is active after this module ran).
      - Omit to leave it as it is (note that a scheduler switch resets it).
    type: int
  read_ahead_kb:
    description:
      - Read-ahead in KiB (buffered reads only). A multiple of the page size (4 on x86_64).
      - Mutually exclusive with O(read_ahead).
    type: int
  read_ahead:
    description:
      - Read-ahead as a size, converted to C(read_ahead_kb). Bytes (V(1048576)) or a binary suffix
        (V(1024K), V(1M), V(1MiB)); K, M, G mean 1024, 1024^2, 1024^3. V(1MB) is refused as ambiguous.
      - Mutually exclusive with O(read_ahead_kb).
    type: raw
  max_sectors_kb:
    description:
      - Largest request the block layer issues, in KiB. Between the page size and C(max_hw_sectors_kb).
    type: int
  nomerges:
    description:
      - V(0) merges requests, V(1) only simple one-hit merges, V(2) no merging at all.
    type: int
    choices: [0, 1, 2]
  rq_affinity:
    description:
      - V(0) completes requests anywhere, V(1) in the submitting CPU's group, V(2) on the submitting CPU itself.
    type: int
    choices: [0, 1, 2]
  state:
    description:
      - V(present) sets the given values.
      - V(restored) writes back the values recorded in the record before the first change and removes the
        device's entry (the file itself when it becomes empty). Nothing happens when the device has no entry.
        The value options must be omitted.
    type: str
    choices: [present, restored]
    default: present
  sysfs_root:
    description:
      - Root of sysfs. For tests only.
    type: path
    default: /sys
'''

EXAMPLES = r'''
- name: Checkpoint writes on a data drive - no reordering, 1 MiB read-ahead, no merging
  ai_storage.checkpoint_io.block_queue:
    device: /dev/nvme1n1
    scheduler: none
    nr_requests: 512
    read_ahead: 1M
    nomerges: 2
    rq_affinity: 2
  become: true

- name: Mixed use - mq-deadline with a deeper scheduler queue
  ai_storage.checkpoint_io.block_queue:
    device: nvme2n1
    scheduler: mq-deadline
    nr_requests: 1024
  become: true

- name: Validate only (check mode), before touching any drive
  ai_storage.checkpoint_io.block_queue:
    device: nvme1n1
    nr_requests: 4096
  check_mode: true
  register: probe
  # fails: "nvme1n1: nr_requests 4096 is above the hardware tag depth 1023 (scheduler none; ...)"

- name: Put back the values found before the first change
  ai_storage.checkpoint_io.block_queue:
    device: nvme1n1
    state: restored
  become: true
'''

RETURN = r'''
device:
  description: Kernel name of the disk.
  returned: always
  type: str
  sample: nvme1n1
identity:
  description: Stable identity of the disk, the key of its entry in the record.
  returned: always
  type: dict
  contains:
    wwid:
      description: C(/sys/block/<device>/wwid).
      type: str
      returned: always
      sample: nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001
    serial:
      description: Controller serial.
      type: str
      returned: always
      sample: DATA0001
    model:
      description: Controller model.
      type: str
      returned: always
      sample: QEMU NVMe Ctrl
    key:
      description: Record key (C(wwid:...), else C(serial:.../nsid:...), else C(name:...)).
      type: str
      returned: always
      sample: wwid:nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001
wanted:
  description: The values asked for, with O(read_ahead) converted to C(read_ahead_kb); for O(state=restored)
    the recorded values.
  returned: always
  type: dict
  sample: {scheduler: none, nr_requests: 512, read_ahead_kb: 1024}
order:
  description: The order the attributes are written in (and must be in a udev rule).
  returned: always
  type: list
  elements: str
  sample: [scheduler, nr_requests, max_sectors_kb, read_ahead_kb, nomerges, rq_affinity]
before:
  description: The managed attributes as found.
  returned: always
  type: dict
  sample: {scheduler: none, nr_requests: 1023, read_ahead_kb: 128}
after:
  description: The managed attributes as read back after writing; in check mode, the prediction.
  returned: always
  type: dict
  sample: {scheduler: none, nr_requests: 512, read_ahead_kb: 1024}
changed_keys:
  description: Attributes whose value differs between RV(before) and RV(after).
  returned: always
  type: list
  elements: str
  sample: [nr_requests, read_ahead_kb]
writes:
  description: The ordered writes (planned in check mode), with the reason for each.
  returned: always
  type: list
  elements: dict
  sample: [{attribute: nr_requests, value: 512, reason: differs (1023 -> 512)}]
limits:
  description: The device limits the values were validated against.
  returned: always
  type: dict
  sample: {hw_tag_depth: 1023, max_hw_sectors_kb: 512, max_sched_nr_requests: 2048, min_nr_requests: 4,
           page_size_kb: 4, schedulers_available: [none, mq-deadline], blk_mq: true}
recorded:
  description: Whether this run recorded the device's original values in the record (first change only).
  returned: always
  type: bool
  sample: true
original:
  description: The device's entry in the record (values found before the first change), V(null) when none.
  returned: always
  type: dict
  sample: {device: nvme1n1, serial: DATA0001, values: {scheduler: none, nr_requests: 1023, read_ahead_kb: 128}}
restored:
  description: With O(state=restored), whether a recorded entry was found and written back.
  returned: always
  type: bool
  sample: false
record_file:
  description: The file of the state store's record C(block_layer).
  returned: always
  type: str
  sample: /var/lib/ai_storage_checkpoint_io/block_layer.json
errors:
  description: Validation errors (the module fails when there are any).
  returned: on failure
  type: list
  elements: str
  sample: ["nvme1n1: nr_requests 4096 is above the hardware tag depth 1023 (scheduler none; ...)"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block.block_queue import (
    ORDER,
    apply,
    device_name,
    drop_record,
    identity,
    load_record,
    plan,
    read_queue,
    record_originals,
    resolve_read_ahead,
)

VALUE_OPTIONS = ('scheduler', 'nr_requests', 'read_ahead_kb', 'read_ahead', 'max_sectors_kb', 'nomerges',
                 'rq_affinity')


def argument_spec():
    return dict(
        device=dict(type='str', required=True),
        scheduler=dict(type='str'),
        nr_requests=dict(type='int'),
        read_ahead_kb=dict(type='int'),
        read_ahead=dict(type='raw'),
        max_sectors_kb=dict(type='int'),
        nomerges=dict(type='int', choices=[0, 1, 2]),
        rq_affinity=dict(type='int', choices=[0, 1, 2]),
        state=dict(type='str', choices=['present', 'restored'], default='present'),
        state_dir=dict(type='path', default=state_store.STATE_DIR),
        sysfs_root=dict(type='path', default='/sys'),
    )


def wanted_values(module, result):
    """(wanted values, how the user wrote those that were converted)."""
    params = module.params
    wanted = dict((key, params.get(key)) for key in ORDER if params.get(key) is not None)
    given = {}
    if params.get('read_ahead') is not None:
        try:
            wanted['read_ahead_kb'] = resolve_read_ahead(params['read_ahead'])
        except ValueError as exc:
            module.fail_json(msg=str(exc), errors=[str(exc)], **result)
        given['read_ahead_kb'] = 'read_ahead %r' % (params['read_ahead'],)
    return wanted, given


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True,
                           mutually_exclusive=[('read_ahead', 'read_ahead_kb')])
    params = module.params
    sysfs_root = params['sysfs_root']
    state_dir = params['state_dir']
    record_file = state_store.record_path(state_dir or '', 'block_layer')
    result = dict(changed=False, device=params['device'], identity=None, wanted={}, order=list(ORDER),
                  before={}, after={}, changed_keys=[], writes=[], limits={}, recorded=False, original=None,
                  restored=False, record_file=None)
    try:
        state_store.check_dir_param(state_dir)
    except state_store.StateError as exc:
        module.fail_json(msg=str(exc), errors=[str(exc)], **result)
    result['record_file'] = record_file

    try:
        name = device_name(params['device'], sysfs_root)
        result['device'] = name
        current, limits = read_queue(sysfs_root, name)
    except ValueError as exc:
        module.fail_json(msg=str(exc), errors=[str(exc)], **result)
    ident = identity(sysfs_root, name)
    result.update(identity=ident, limits=limits)

    try:
        record = load_record(state_dir)
    except ValueError as exc:
        module.fail_json(msg=str(exc), errors=[str(exc)], **result)
    entry = record['devices'].get(ident['key'])
    result['original'] = entry

    if params['state'] == 'restored':
        given = [key for key in VALUE_OPTIONS if params.get(key) is not None]
        if given:
            module.fail_json(msg='state=restored takes no values (the recorded ones are used); remove %s'
                             % ', '.join(given), **result)
        if entry is None:
            result['msg'] = '%s (%s): no recorded values in %s, nothing to restore' % (
                name, ident['key'], record_file)
            module.exit_json(**result)
        wanted = dict((key, value) for key, value in (entry.get('values') or {}).items()
                      if key in ORDER and value is not None)
        given = {}
    else:
        wanted, given = wanted_values(module, result)
    result['wanted'] = wanted

    planned = plan(current, wanted, limits, name, given)
    result.update(before=planned['before'], after=planned['after'], changed_keys=planned['changed_keys'],
                  writes=planned['writes'])
    for warning in planned['warnings']:
        module.warn(warning)
    if planned['errors']:
        module.fail_json(msg='; '.join(planned['errors']), errors=planned['errors'], **result)

    restoring = params['state'] == 'restored'
    changed = bool(planned['writes']) or restoring
    if module._diff:
        header = '%s/block/%s/queue' % (sysfs_root.rstrip('/'), name)
        result['diff'] = dict(before=planned['before'], after=planned['after'], before_header=header,
                              after_header=header)
    if module.check_mode or not changed:
        if restoring:
            result['restored'] = True
        result['changed'] = changed
        module.exit_json(**result)

    if planned['writes'] and not restoring and entry is None:
        # Before the first write: a failure half-way must still leave the originals on record.
        try:
            result['recorded'] = record_originals(state_dir, ident, current)
            result['original'] = load_record(state_dir)['devices'].get(ident['key'])
        except (ValueError, IOError, OSError) as exc:
            module.fail_json(msg='cannot record the original values of %s in %s before changing it: %s'
                             % (name, record_file, exc), **result)

    queue_dir = '%s/block/%s/queue' % (sysfs_root.rstrip('/'), name)
    outcome = apply(queue_dir, planned['writes'], wanted)
    result['after'] = outcome['after']
    result['changed_keys'] = [key for key in ORDER if key in outcome['after']
                              and outcome['after'][key] != planned['before'].get(key)]
    result['changed'] = bool(outcome['done']) or restoring
    if module._diff:
        result['diff']['after'] = outcome['after']
    if outcome['error']:
        module.fail_json(msg='%s: %s (written before the failure: %s)' % (
            name, outcome['error'], ', '.join(outcome['done']) or 'nothing'), **result)

    if restoring:
        try:
            drop_record(state_dir, ident['key'])
        except (ValueError, IOError, OSError) as exc:
            module.fail_json(msg='%s restored, but its entry could not be removed from %s: %s'
                             % (name, record_file, exc), **result)
        result['restored'] = True
    module.exit_json(**result)


if __name__ == '__main__':
    main()
