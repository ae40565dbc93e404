#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: engine_verify
short_description: Run the io_uring engine profile's fio verification (scratch files no user can redirect)
version_added: 0.3.0
description:
  - Runs the one fio job per drive that the io_uring_engine role's verification needs (the argv of the
    C(ai_storage.checkpoint_io.engine_fio_argv) filter) and returns fio's JSON output for the
    C(ai_storage.checkpoint_io.engine_fio_verify) filter.
  - With C(verify_mode=read) (the default), every drive is read raw (fio C(--readonly)); nothing is written.
  - With C(verify_mode=scratch_write), a drive mounted at one of C(allow_mounted_by) is written through a scratch file
    instead. The file is made in a directory made for the run on that mount (C(.checkpoint_io.engine_verify.<random>),
    owned by root, mode 0700) with C(O_CREAT|O_EXCL|O_NOFOLLOW), through descriptors opened from C(/) without following
    a symlink another user could plant, sized with ftruncate, and written by fio through C(/proc/self/fd/<N>); the run
    is recorded in the state store (record C(scratch)) before anything is made, and the file and its directory are
    removed afterwards, also when fio fails or times out or the module gets SIGTERM, SIGINT or SIGHUP.
  - fio runs as one process (C(--thread)) in the module's process group, and dies with the module.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - fio 3.x with the io_uring engine on the managed node.
notes:
  - The result is a measurement, so C(changed) is always V(false).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: none
    details: Ansible skips the task in check mode; it runs fio.
  diff_mode:
    support: none
  platform:
    platforms: linux
options:
  profile:
    description:
      - The engine profile (the C(ai_storage.checkpoint_io.engine_profile) filter's result).
    type: dict
    required: true
  options:
    description:
      - The io_uring_engine role's options without their prefix (C(verify_mode), C(verify_runtime),
        C(verify_size), C(allow_mounted_by)), as the C(engine_fio_argv) filter takes them.
    type: dict
    default: {}
  drives:
    description:
      - The selected drives (C(select_drives) C(selected)), for their mount points and sizes.
    type: list
    elements: dict
    default: []
  fio_path:
    description:
      - Path of fio. By default C(fio) is looked up in the PATH.
      - Checked before anything is done; an absolute path of an executable file.
    type: path
  timeout:
    description:
      - Seconds fio may run; past it fio is ended, the scratch files are removed and the module fails. The task's
        C(timeout) keyword should be above it.
    type: int
    default: 660
  state_dir:
    description:
      - The collection's state directory (the record C(scratch) of the run's directories, the node's run lease).
      - Checked before anything is done; refused when it is not an absolute path, is a symlink or not a directory,
        belongs to another user or is writable by group or others, or holds a record C(scratch) that is not
        valid JSON. A missing one is made (root-owned, mode 0755) on the first write.
    type: path
    default: /var/lib/ai_storage_checkpoint_io
'''

EXAMPLES = r'''
- name: Verify the in-flight depth (raw reads by default)
  ai_storage.checkpoint_io.engine_verify:
    profile: "{{ profile }}"
    options: {verify_mode: scratch_write, verify_runtime: 10, verify_size: 1G, allow_mounted_by: [/mnt/ckpt]}
    drives: "{{ selection.selected }}"
    timeout: 70
  register: fio_run
  timeout: 130

- name: The profile with its verification
  ansible.builtin.set_fact:
    verified: "{{ profile | ai_storage.checkpoint_io.engine_fio_verify(fio_run.stdout, options, selection.selected) }}"
'''

RETURN = r'''
stdout:
  description: fio's JSON output.
  returned: when fio ran
  type: str
  sample: '{"fio version": "fio-3.33", "jobs": []}'
stderr:
  description: fio's standard error.
  returned: when fio ran
  type: str
  sample: ""
wall_s:
  description: Wall time of the fio run in seconds.
  returned: when fio ran
  type: float
  sample: 10.4
rc:
  description: fio's exit status.
  returned: when fio ran
  type: int
  sample: 0
cmd:
  description: The fio argv (scratch files as C(/proc/self/fd/<N>)).
  returned: always
  type: list
  elements: str
  sample: [/usr/bin/fio, --output-format=json, --runtime=10, --thread, --readonly, --name=nvme1n1,
           --filename=/dev/nvme1n1, --rw=read, --size=1073741824, --ioengine=io_uring]
safety:
  description: Where the scratch files were written and why no other user could redirect them (scratch_write).
  returned: when a scratch file was made
  type: dict
  contains:
    writable_components:
      description: Directories on the way to each mount that a user other than root can change.
      type: list
      elements: dict
      returned: always
    run_dirs:
      description: The directories made for the run (removed afterwards).
      type: list
      elements: str
      returned: always
    swapped_run_dirs:
      description: Run directories another user renamed away in the moment between their mkdir and their open;
        the run made another one, and these stay where that user put them, empty, owned by root, mode 0700.
      type: list
      elements: str
      returned: always
      sample: []
    made_safe_by:
      description: How the write is made safe.
      type: str
      returned: always
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import int_in_range
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring.engine_verify import fio_argv, verify_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import (
    Terminated,
    check_fio_path,
    run_fio,
    terminate_on_signals,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR

PROFILE_KEYS = ('name', 'device', 'block_size_bytes', 'fio_options')


def check_profile(profile):
    """The shape of O(profile) the plan and the argv read: drives, a non-empty list of dicts with a name, a device,
    a positive block size and fio options (ValueError naming the option and what is wrong)."""
    drives = profile.get('drives')
    if not isinstance(drives, list) or not drives:
        raise ValueError('profile: drives is %r, not a non-empty list of drives (give the engine_profile filter\'s '
                         'result)' % (drives,))
    for index, entry in enumerate(drives):
        if not isinstance(entry, dict):
            raise ValueError('profile: drives[%d] is %r, not a dict' % (index, entry))
        missing = [key for key in PROFILE_KEYS if key not in entry]
        if missing:
            raise ValueError('profile: drives[%d] (%r) lacks %s' % (index, entry.get('name'), ', '.join(missing)))
        for key in ('name', 'device'):
            if not isinstance(entry[key], str) or not entry[key]:
                raise ValueError('profile: drives[%d].%s is %r, not a non-empty string' % (index, key, entry[key]))
        block = entry['block_size_bytes']
        if isinstance(block, bool) or not isinstance(block, int) or block < 1:
            raise ValueError('profile: drives[%d].block_size_bytes is %r, not a positive number of bytes'
                             % (index, block))
        if not isinstance(entry['fio_options'], dict):
            raise ValueError('profile: drives[%d].fio_options is %r, not a dict' % (index, entry['fio_options']))


def main():
    module = AnsibleModule(argument_spec=dict(
        profile=dict(type='dict', required=True),
        options=dict(type='dict', default={}),
        drives=dict(type='list', elements='dict', default=[]),
        fio_path=dict(type='path'),
        timeout=dict(type='int', default=660),
        state_dir=dict(type='path', default=STATE_DIR),
    ), supports_check_mode=False)
    params = module.params
    result = dict(changed=False, cmd=[])
    try:
        int_in_range(params['timeout'], 'timeout', 1)
        check_profile(params['profile'])
        plan = verify_plan(params['profile'], params['options'], params['drives'])
        if params['fio_path']:
            check_fio_path(params['fio_path'])
        scratch.check_state_dir(params['state_dir'])
    except (ValueError, KeyError, TypeError, scratch.ScratchError) as exc:
        module.fail_json(msg='engine_verify: %s' % exc, **result)
    fio = params['fio_path'] or module.get_bin_path('fio', required=True)

    writes = {}
    for job in plan:
        if job['rw'] == 'write':
            writes.setdefault(job['directory'], []).append(job)
    runs = []
    targets = []
    try:
        with terminate_on_signals():
            try:
                run_id = scratch.current_run(params['state_dir'])
                files = {}
                for directory in sorted(writes):
                    target = scratch.open_dir(directory, 'allow_mounted_by')
                    targets.append(target)
                    run = scratch.create(target, 'engine_verify',
                                         [(job['scratch'], job['size']) for job in writes[directory]],
                                         params['state_dir'], run_id=run_id, writer='engine_verify')
                    runs.append(run)
                    files.update((job['name'], run.fio_file(job['scratch'])) for job in writes[directory])
                if runs:
                    result['safety'] = scratch.safety(targets, runs)
                result['cmd'] = fio_argv(params['profile'], params['options'], params['drives'], fio, files)
                rc, stdout, stderr, wall, timed_out = run_fio(
                    result['cmd'], params['timeout'], pass_fds=[fd for run in runs for fd in run.fds()])
            finally:
                for run in runs:
                    run.cleanup()
                for target in targets:
                    target.close()
    except scratch.ScratchError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    except (ValueError, IOError, OSError) as exc:
        module.fail_json(msg='engine_verify: %s' % exc, **result)
    except Terminated as exc:
        module.fail_json(msg='engine verification %s: fio was ended and the scratch files removed' % exc, **result)
    result.update(rc=rc, stdout=stdout, stderr=stderr, wall_s=round(wall, 3))
    if timed_out:
        module.fail_json(msg='fio ran past timeout %d s and was ended' % params['timeout'], **result)
    if rc != 0:
        module.fail_json(msg='fio exited with %s: %s' % (rc, stderr.strip() or stdout[-2000:]), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
