#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: deepspeed_aio
short_description: Merge DeepSpeed's C(aio) and C(checkpoint.writer) sections into a ds_config.json, with real JSON types
version_added: 0.2.0
description:
  - Sets the given keys of the C(aio) section of a DeepSpeed config file (C(ds_config.json)) and keeps every other
    key of the file exactly as it is (nested ones too, in their order). Keys of the C(aio) section that are not
    given are kept, except the clean-ups below.
  - Values are written with real JSON types. DeepSpeed reads the section with a plain C(dict.get) and checks no type,
    so a string C("false") (as C(ds_nvme_tune) and many templates write) is truthy and turns the option on.
    Booleans given as V(true)/V(false), V(yes)/V(no), V(on)/V(off) or V(1)/V(0) are written as JSON booleans; string
    booleans already in the file for keys not given are rewritten as booleans too (and reported).
  - Refused before anything is written, with the value and the limit in the message. A C(block_size) that is not a
    multiple of 4096 or above 2147483647 (DeepSpeed's C++ aio handle takes it as an int); a C(queue_depth) outside
    1..65535; an C(intra_op_parallelism) outside 1..1024; a key that is not a DeepSpeed aio key; an O(state_dir)
    that is not an absolute path of a directory only root can write; a file that is not strict JSON (C(NaN),
    C(Infinity), a key twice in one object, a number of more than 64 digits), whose top level is not an object or
    whose C(aio) is not an object.
  - With O(remove_ignored_keys), the keys DeepSpeed is known to ignore are removed from the section and reported,
    namely C(num_threads), which C(ds_nvme_tune) emits but no DeepSpeed version reads (the list was read from
    DeepSpeed 0.19.8 and its unit test checks it against the installed DeepSpeed's own parser). Other keys DeepSpeed
    does not read are kept and reported in RV(warnings_found), since a later DeepSpeed may read them.
  - C(thread_count) was renamed C(intra_op_parallelism) in DeepSpeed PR 7056 (merged February 2025); each DeepSpeed
    version reads only one of the two names. O(thread_key) chooses the name(s) written.
  - The file is written only when its content changes, not for formatting alone, through the collection's atomic
    writer - a new file made in the same directory, renamed over the name - and never through a link. The module
    runs as root in a directory the training user may own, so the file's directory is opened from C(/) without
    following a symlink a user could plant and kept open; the file is read through a descriptor opened without
    following a link and replaced by a rename in that directory. An existing file keeps its owner, group and mode;
    a new one is root's, mode 0644.
  - Refused before anything is written, naming the path. A file that is a symlink (unless O(follow_symlinks); the
    message names the link and its target); a file that is not a regular file (a directory, a device, a FIFO) or
    has more than one hard link, or is not UTF-8 text; a missing file (unless O(create)); a path with a directory
    that someone other than root and the file's owner can write (another user, a shared group, everyone), who could
    swap the config the training job reads.
  - The first time the module changes a file it records the C(aio) section it found (or that there was none, or
    no file) in the state store's record C(deepspeed_aio) (O(state_dir)), keyed by the file's real path. An
    existing entry is never overwritten.
    O(state=restored) puts the recorded section back and removes the entry.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Write access to the config file and to the record.
notes:
  - The module neither needs nor imports DeepSpeed. Its unit tests read the merged files back with DeepSpeed's own
    parser (C(deepspeed.runtime.swap_tensor.aio_config.get_aio_config)).
  - C(use_gds=true) makes DeepSpeed assert a CUDA accelerator when it reads the config.
seealso:
  - name: DeepSpeed configuration JSON, asynchronous I/O
    description: The aio keys and their defaults.
    link: https://www.deepspeed.ai/docs/config-json/#asynchronous-io
  - name: DeepSpeed PR 7056
    description: Renamed aio C(thread_count) to C(intra_op_parallelism).
    link: https://github.com/deepspeedai/DeepSpeed/pull/7056
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.state_store
attributes:
  check_mode:
    support: full
    details: Validates and reports the change and the diff without writing the config file or the record file.
  diff_mode:
    support: full
    details: The diff shows the file's text before and the text that is (or would be) written.
  platform:
    platforms: posix
options:
  path:
    description:
      - The DeepSpeed config file (JSON).
    type: path
    required: true
    aliases: [dest]
  aio:
    description:
      - The aio values to set. Only the keys given are managed.
      - Required with O(state=present) unless the run should only clean up the existing section
        (O(remove_ignored_keys), string booleans); must be omitted with O(state=restored).
    type: dict
    suboptions:
      block_size:
        description:
          - Bytes per I/O request. Bytes (V(1048576)) or a binary size (V(1M), V(512K), V(1MiB)); a multiple of
            4096, at most 2147483647. DeepSpeed's default is 1048576.
        type: raw
      queue_depth:
        description:
          - I/O requests in flight per handle, 1..65535. DeepSpeed's default is 8.
        type: raw
      intra_op_parallelism:
        description:
          - I/O threads per handle, 1..1024. DeepSpeed's default is 1. Written under the name(s) of O(thread_key).
        type: raw
      single_submit:
        description:
          - Submit requests one by one instead of in batches. DeepSpeed's default is V(false).
        type: raw
      overlap_events:
        description:
          - Overlap submission and completion. DeepSpeed's default is V(true).
        type: raw
      use_gds:
        description:
          - Use NVIDIA GPUDirect Storage (needs a CUDA accelerator). DeepSpeed's default is V(false).
        type: raw
  writer:
    description:
      - The C(checkpoint.writer) values to set (DeepSpeed's FastPersist checkpoint writer, DeepSpeed 0.17.1 and
        later). Only the keys given are managed; every other key of C(checkpoint) and of the file is kept. A
        C(checkpoint) object is added where the file has none.
      - Refused before anything is written, naming the key, the value and the limit - a value DeepSpeed would refuse
        (a C(type) or C(data_parallel) outside its choices), a C(io_buffer_size) that is not a multiple of 1024 (the
        aio handle's alignment, twice for a double buffer) or above 2^40, an C(io_multiplier) outside 1..64, a
        boolean that is no boolean word. Values are written with real JSON types (DeepSpeed takes a string
        C("false") as true).
      - A key given as V(null) is not managed (C(data_parallel) null, the job's rank 0 writing alone, is DeepSpeed's
        default when the key is absent).
      - Recorded and put back with O(state=restored) as the C(aio) section is (the section found before the first
        change of the writer, or that there was none).
    type: dict
    version_added: 1.1.0
    suboptions:
      type:
        description: V(FAST) (the aio handle), V(PYTHON) or V(MOCK); DeepSpeed's default is V(FAST).
        type: raw
      io_buffer_size:
        description:
          - Bytes of the pinned buffer each writing process fills and drains (one buffer, split in two halves when
            O(writer.io_buffer_double)). DeepSpeed's default is 64 MiB.
        type: raw
      io_buffer_double:
        description: Split the buffer in two, one half filled while the other drains. DeepSpeed's default is V(true).
        type: raw
      io_multiplier:
        description: Files per writer (1..64). DeepSpeed's default is 1.
        type: raw
      show_statistics:
        description: Print the writer's statistics after each save. DeepSpeed's default is V(false).
        type: raw
      data_parallel:
        description:
          - Which ranks write - V(REPLICA) every data-parallel rank its share, V(SOCKET) one per socket, V(MACHINE)
            one per machine. DeepSpeed's default (the key absent) is the job's data-parallel rank 0 alone.
        type: raw
      decoupled:
        description: Write in a process of its own (DecoupledCheckpointEngine). DeepSpeed's default is V(false).
        type: raw
  thread_key:
    description:
      - Name(s) under which O(aio.intra_op_parallelism) is written.
      - V(intra_op_parallelism) for DeepSpeed with PR 7056 (merged February 2025) and later;
        V(thread_count) for older versions; V(both) for a file read by both.
      - When O(aio.intra_op_parallelism) is given, the other name is removed from the section (unless V(both)), so
        the file never holds two different values. Without O(aio.intra_op_parallelism) this option has no effect.
    type: str
    choices: [intra_op_parallelism, thread_count, both]
    default: intra_op_parallelism
  remove_ignored_keys:
    description:
      - Remove the keys of the section DeepSpeed is known to ignore (C(num_threads)) and report them in
        RV(removed_keys). Keys DeepSpeed does not read today are kept.
    type: bool
    default: true
  create:
    description:
      - Create a missing file holding only the C(aio) section, and its missing directories (mode 0755) when the
        deepest existing one can be written by root alone.
      - With V(false) a missing file is refused, naming the path and this option (a mistyped path is not created).
    type: bool
    default: false
  follow_symlinks:
    description:
      - Tune the file a symlink at O(path) points to (replaced in its own directory; the link is kept). A link in
        a directory another user can write is followed only to a file that user owns.
      - With V(false) a symlink is refused, naming the link and its target.
    type: bool
    default: false
  backup:
    description:
      - Make a timestamped backup copy next to an existing file before changing it.
    type: bool
    default: true
  state:
    description:
      - V(present) merges O(aio).
      - V(restored) puts back the section recorded in the record before the first change (removes C(aio) when
        there was none; removes the file when the module created it and nothing but C(aio) is in it now), keeps all
        other keys as they are now, and removes the file's entry. Nothing happens when there is no entry.
    type: str
    choices: [present, restored]
    default: present
'''

EXAMPLES = r'''
- name: Tuned aio values for ZeRO-Infinity NVMe offload (DeepSpeed with PR 7056 or later)
  ai_storage.checkpoint_io.deepspeed_aio:
    path: /etc/deepspeed/ds_config.json
    aio:
      block_size: 1M
      queue_depth: 32
      intra_op_parallelism: 8
      single_submit: false
      overlap_events: true

- name: A file read by DeepSpeed versions before and after the thread_count rename
  ai_storage.checkpoint_io.deepspeed_aio:
    path: /srv/train/ds_config.json
    aio:
      intra_op_parallelism: 4
    thread_key: both

- name: Clean up what ds_nvme_tune wrote (string booleans, num_threads) without changing a value
  ai_storage.checkpoint_io.deepspeed_aio:
    path: /srv/train/ds_config.json
    aio: {}

- name: Create the file when it is missing (a new job's config)
  ai_storage.checkpoint_io.deepspeed_aio:
    path: /etc/deepspeed/ds_config.json
    aio:
      queue_depth: 16
    create: true

- name: The aio section and FastPersist's checkpoint writer beside it (DeepSpeed 0.17.1 and later)
  ai_storage.checkpoint_io.deepspeed_aio:
    path: /etc/deepspeed/ds_config.json
    aio:
      block_size: 1M
      queue_depth: 32
    writer:
      type: FAST
      io_buffer_size: 67108864
      io_buffer_double: true
      data_parallel: REPLICA

- name: Put back the aio and writer sections found before the first change
  ai_storage.checkpoint_io.deepspeed_aio:
    path: /etc/deepspeed/ds_config.json
    state: restored
'''

RETURN = r'''
path:
  description: The config file.
  returned: always
  type: str
  sample: /etc/deepspeed/ds_config.json
real_path:
  description: The file read and written (the target of a followed symlink; the record's key).
  returned: always
  type: str
  sample: /etc/deepspeed/ds_config.json
link:
  description: The symlink followed (O(follow_symlinks)); V(null) when O(path) is no link.
  returned: always
  type: dict
  sample: {path: /srv/job/ds_config.json, target: ../configs/ds_config.json}
  contains:
    path:
      description: The link.
      type: str
    target:
      description: What the link holds.
      type: str
safety:
  description: The directories on the way that a user other than root can write (the file's owner; others are
    refused), and how the write is made safe against them.
  returned: always
  type: dict
  sample: {writable_components: [{path: /home/train, uid: 1000, gid: 1000, mode: '0755',
           writable_by: [its owner uid 1000]}], made_safe_by: the file is read through a descriptor ...}
  contains:
    writable_components:
      description: Each directory, its owner, group, mode and who besides root can write it.
      type: list
      elements: dict
    made_safe_by:
      description: How the write is made safe against them; V(null) when there are none.
      type: str
created:
  description: Whether the file was (or, in check mode, would be) created.
  returned: always
  type: bool
  sample: false
changed_keys:
  description: Keys of the aio section whose value is (or would be) new or different.
  returned: always
  type: list
  elements: str
  sample: [queue_depth, single_submit]
removed_keys:
  description: Keys removed from the aio section (ignored keys, the other name of the thread key, keys absent from
    the recorded section with O(state=restored)).
  returned: always
  type: list
  elements: str
  sample: [num_threads]
fixed_keys:
  description: Boolean keys not given in O(aio) whose string value in the file was rewritten as a JSON boolean.
  returned: always
  type: list
  elements: str
  sample: [overlap_events]
aio:
  description: The aio section now in the file (in check mode, the one that would be written); V(null) when none.
  returned: always
  type: dict
  sample: {block_size: 1048576, queue_depth: 32, intra_op_parallelism: 8, single_submit: false, overlap_events: true}
aio_before:
  description: The aio section found; V(null) when none (or no file).
  returned: always
  type: dict
  sample: {queue_depth: 32, single_submit: "false", num_threads: 8}
effective:
  description: What DeepSpeed will use from the resulting file (its defaults for keys not set), as
    C(deepspeed.runtime.swap_tensor.aio_config.get_aio_config) reads it; after a write, from the file read back
    from disk.
  returned: always
  type: dict
  sample: {block_size: 1048576, queue_depth: 32, intra_op_parallelism: 8, single_submit: false, overlap_events: true,
           use_gds: false}
writer:
  description: The C(checkpoint.writer) section now in the file (in check mode, the one that would be written);
    V(null) when none.
  returned: always
  type: dict
  version_added: 1.1.0
  sample: {type: FAST, io_buffer_size: 67108864, io_buffer_double: true, data_parallel: REPLICA}
writer_before:
  description: The C(checkpoint.writer) section found; V(null) when none (or no file).
  returned: always
  type: dict
  version_added: 1.1.0
  sample: null
writer_effective:
  description: What DeepSpeed's C(get_checkpoint_config) reads from RV(writer) (its defaults for keys not set);
    V(null) when there is no writer section (DeepSpeed then saves with C(torch.save)).
  returned: always
  type: dict
  version_added: 1.1.0
  sample: {type: FAST, io_buffer_size: 67108864, io_buffer_double: true, show_statistics: false,
           data_parallel: REPLICA, decoupled: false, io_multiplier: 1}
warnings_found:
  description: Problems of the aio section found (string booleans, ignored keys, the thread key rename, bad values).
  returned: always
  type: list
  elements: str
  sample: ["aio.num_threads is ignored by DeepSpeed (ds_nvme_tune emits it); ..."]
backup_file:
  description: The backup copy made before the change; V(null) when none was made.
  returned: always
  type: str
  sample: /etc/deepspeed/ds_config.json.12345.2025-03-01@12:00:00~
record_file:
  description: The file of the state store's record C(deepspeed_aio).
  returned: always
  type: str
  sample: /var/lib/ai_storage_checkpoint_io/deepspeed_aio.json
recorded:
  description: Whether this run recorded the file's original aio section (first change only).
  returned: always
  type: bool
  sample: true
original:
  description: The file's entry in the record (the aio section found before the first change); V(null) when none.
  returned: always
  type: dict
  sample: {path: /etc/deepspeed/ds_config.json, existed: true, aio_present: true, aio: {queue_depth: 8},
           recorded_at: "2025-03-01T12:00:00Z"}
restored:
  description: With O(state=restored), whether a recorded entry was found and put back.
  returned: always
  type: bool
  sample: false
removed_file:
  description: With O(state=restored), whether the file (created by the module) was removed.
  returned: always
  type: bool
  sample: false
'''

import datetime
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.config_file import ConfigFileError, open_config
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import writer as ds_writer
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import (
    AIO,
    AIO_BOOL_KEYS,
    THREAD_KEYS,
    aio_record_entry,
    check_aio_record,
    dump_config,
    effective_aio,
    empty_aio_record,
    loads_config,
    merge_aio,
    restore_aio,
    same_json,
    section_changes,
)

AIO_SUBOPTIONS = ('block_size', 'queue_depth', 'intra_op_parallelism', 'single_submit', 'overlap_events', 'use_gds')
RECORD = 'deepspeed_aio'


def argument_spec():
    return dict(
        path=dict(type='path', required=True, aliases=['dest']),
        aio=dict(type='dict', options=dict((key, dict(type='raw')) for key in AIO_SUBOPTIONS)),
        writer=dict(type='dict', options=dict((key, dict(type='raw')) for key in ds_writer.WRITER_KEYS)),
        thread_key=dict(type='str', choices=list(THREAD_KEYS), default='intra_op_parallelism'),
        remove_ignored_keys=dict(type='bool', default=True),
        create=dict(type='bool', default=False),
        follow_symlinks=dict(type='bool', default=False),
        backup=dict(type='bool', default=True),
        state=dict(type='str', choices=['present', 'restored'], default='present'),
        state_dir=dict(type='path', default=state_store.STATE_DIR),
    )


def parse_config(module, path, text, result):
    """The parsed config of ``text``; fails on anything DeepSpeed could not read as a config object."""
    try:
        config = loads_config(text)
    except ValueError as exc:
        module.fail_json(msg='%s is not valid JSON: %s; nothing was written' % (path, exc), **result)
    if not isinstance(config, dict):
        module.fail_json(msg='%s: the top level must be a JSON object, got %s; nothing was written'
                         % (path, type(config).__name__), **result)
    if config.get(AIO) is not None and not isinstance(config[AIO], dict):
        module.fail_json(msg='%s: aio must be a JSON object, got %s; nothing was written'
                         % (path, type(config[AIO]).__name__), **result)
    try:
        ds_writer.writer_section(config)
    except ValueError as exc:
        module.fail_json(msg='%s: %s; nothing was written' % (path, exc), **result)
    return config


def load_record(module, state_dir, result):
    try:
        data = state_store.read_record(state_dir, RECORD)
        if data is None:
            return empty_aio_record()
        return check_aio_record(data, state_store.record_path(state_dir, RECORD))
    except (state_store.StateError, ValueError) as exc:
        module.fail_json(msg='the record %s is not usable (%s); fix or move it aside'
                         % (state_store.record_path(state_dir, RECORD), exc), **result)


def change_record(module, state_dir, change, what, result):
    """Apply ``change(record) -> record`` under the state store's lock (an empty record is removed)."""
    def apply(data):
        data = change(empty_aio_record() if data is None else check_aio_record(data, RECORD))
        return data if data['files'] else None
    try:
        state_store.update(state_dir, RECORD, apply, writer='deepspeed_aio')
    except (state_store.StateError, ValueError, IOError, OSError) as exc:
        module.fail_json(msg='%s: %s' % (what, exc), **result)


def open_file(module, params, restoring, result):
    """The ds_config opened for a rewrite (module_utils/common/config_file.py), or None when restoring a file that is
    gone; fails with the refusal's message."""
    path = params['path']
    if restoring and not os.path.lexists(path):
        return None
    try:
        return open_config(path, follow_symlinks=params['follow_symlinks'], create=params['create'] and not restoring,
                           what='ds_config')
    except ConfigFileError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    except (IOError, OSError) as exc:
        module.fail_json(msg='cannot open %s: %s; nothing was written' % (path, exc), **result)


class _Module(AnsibleModule):
    """AnsibleModule whose ``aio`` option, given something that is neither a mapping nor text (a list, a number),
    is checked as a plain dict: ansible-core's suboption check crashes on such a value (TypeError, ansible/ansible
    PR 81631) instead of refusing it, and the plain type check names the option and the type."""

    def _load_params(self):
        super(_Module, self)._load_params()
        for option in ('aio', 'writer'):
            value = self.params.get(option) if isinstance(self.params, dict) else None
            if value is not None and not isinstance(value, (dict, str)):
                self.argument_spec = dict(self.argument_spec, **{option: dict(type='dict')})


def main():
    module = _Module(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    path = params['path']
    state_dir = params['state_dir']
    record_file = state_store.record_path(state_dir or '', RECORD)
    restoring = params['state'] == 'restored'
    result = dict(changed=False, path=path, real_path=path, link=None, safety=None, created=False, changed_keys=[],
                  removed_keys=[], fixed_keys=[], aio=None, aio_before=None, effective=effective_aio(None)['aio'],
                  warnings_found=[], backup_file=None, record_file=record_file, recorded=False, original=None,
                  restored=False, removed_file=False)
    try:  # before anything is made: a bad state_dir is refused naming the option, with nothing changed
        state_store.check_dir_param(state_dir)
    except state_store.StateError as exc:
        module.fail_json(msg=str(exc), **result)

    desired = dict((key, value) for key, value in (params['aio'] or {}).items() if value is not None)
    # a writer key given as null is not managed (Ansible cannot tell it from one not given)
    writer = dict((key, value) for key, value in (params['writer'] or {}).items() if value is not None)
    if restoring and (desired or writer):
        module.fail_json(msg='state=restored takes no aio or writer values (the recorded sections are used); remove %s'
                         % ', '.join(['aio.%s' % key for key in desired] + ['writer.%s' % key for key in writer]),
                         **result)
    result['writer'] = None
    result['writer_before'] = None
    result['writer_effective'] = None

    handle = open_file(module, params, restoring, result)
    try:
        run(module, params, handle, result, restoring, (desired, writer), record_file)
    finally:
        if handle is not None:
            handle.close()


def _writer_result(result, config, key):
    section = ds_writer.writer_section(config) if isinstance(config, dict) else None
    result[key] = section
    if key == 'writer':
        result['writer_effective'] = ds_writer.effective_writer(section)['writer']


def run(module, params, handle, result, restoring, wanted, record_file):
    desired, writer = wanted
    path, state_dir = params['path'], params['state_dir']
    existed = handle is not None and handle.exists
    text = handle.text if existed else None
    config = parse_config(module, path, text, result) if existed else None
    real = handle.real if handle is not None else os.path.realpath(path)
    result.update(real_path=real, link=handle.link if handle is not None else None,
                  safety=handle.safety() if handle is not None else None)
    if existed:
        result['aio_before'] = config.get(AIO)
        result['warnings_found'] = effective_aio(config.get(AIO))['warnings'] + ds_writer.effective_writer(
            ds_writer.writer_section(config))['warnings']
        _writer_result(result, config, 'writer_before')

    record = load_record(module, state_dir, result)
    entry = record['files'].get(real)
    result['original'] = entry

    remove_file = False
    if restoring:
        if entry is None:
            result['aio'] = result['aio_before']
            result['effective'] = effective_aio(result['aio'])['aio']
            result['msg'] = '%s: no recorded aio section in %s, nothing to restore' % (path, record_file)
            module.exit_json(**result)
        if not existed:
            if entry.get('existed', True):
                module.warn('%s no longer exists: its recorded aio section cannot be put back; dropping its entry '
                            'in %s' % (path, record_file))
            new_config = None
        else:
            new_config, remove_file = restore_aio(config, entry)
            new_config = ds_writer.restore_writer(new_config, entry)
            remove_file = not entry.get('existed', True) and not new_config
            if not entry.get('existed', True) and not remove_file:
                module.warn('%s was created by this module but now holds other keys (%s): removing only its aio '
                            'section, keeping the file' % (path, ', '.join(sorted(new_config))))
        changed_keys, removed_keys = section_changes(result['aio_before'], (new_config or {}).get(AIO))
        before_writer = ds_writer.writer_section(config) if existed else None
        after_writer = ds_writer.writer_section(new_config) if new_config else None
        if before_writer != after_writer:
            changed_keys = changed_keys + ['writer']
    else:
        try:
            new_config, changed_keys, removed_keys = merge_aio(config or {}, desired, params['thread_key'],
                                                               params['remove_ignored_keys'])
            new_config, writer_changed = ds_writer.merge_writer(new_config, writer)[:2]
        except ValueError as exc:
            module.fail_json(msg='%s: %s; nothing was written' % (path, exc), **result)
        changed_keys = changed_keys + writer_changed
        if not existed and not new_config:
            result['msg'] = '%s does not exist and no aio values were given: nothing to create' % path
            module.exit_json(**result)
        result['fixed_keys'] = [key for key in changed_keys if key in AIO_BOOL_KEYS and key not in desired]

    content_changed = remove_file or (new_config is not None and (not existed or not same_json(config, new_config)))
    result['changed_keys'] = changed_keys
    result['removed_keys'] = removed_keys
    result['created'] = not existed and new_config is not None and not restoring
    result['aio'] = None if new_config is None or remove_file else new_config.get(AIO)
    result['effective'] = effective_aio(result['aio'])['aio']
    _writer_result(result, None if new_config is None or remove_file else new_config, 'writer')
    result['changed'] = content_changed
    after_text = '' if new_config is None or remove_file else (dump_config(new_config) if content_changed else text)
    if module._diff:
        result['diff'] = dict(before=text or '', after=after_text, before_header=path, after_header=path)

    if module.check_mode:
        if restoring:
            result['restored'] = True
            result['removed_file'] = remove_file
            result['changed'] = True
        module.exit_json(**result)

    writer_changes = any(key.startswith('writer') for key in changed_keys)
    if content_changed and not restoring and (entry is None or (writer_changes and 'writer_present' not in entry)):
        # Before the first write: the record must hold the sections found, whatever happens next. An entry made
        # before the writer was managed gets the writer section found now, once.
        now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        new_entry = aio_record_entry(config, existed, path, now) if entry is None else dict(entry)
        new_entry.update(ds_writer.writer_record_fields(config))
        entry = new_entry

        def add(data):
            old_entry = data['files'].get(real)
            if old_entry is None:
                data['files'][real] = entry
            elif 'writer_present' not in old_entry:
                old_entry.update(ds_writer.writer_record_fields(config))
            return data
        change_record(module, state_dir, add, 'cannot record the aio section of %s in %s before changing it'
                      % (path, record_file), result)
        record['files'][real] = entry
        result['recorded'] = True
        result['original'] = record['files'][real]

    try:
        if content_changed and existed and params['backup']:
            result['backup_file'] = handle.backup()
        if remove_file:
            result['removed_file'] = handle.remove()
        elif content_changed and new_config is not None:
            handle.write(dump_config(new_config))
            # Read back from disk: aio and effective are what the file now holds, not what was meant to be written.
            on_disk = parse_config(module, path, handle.read_back(), result)
            if not same_json(on_disk, new_config):
                module.fail_json(msg='%s reads back differently from what was written: %s' % (path, on_disk), **result)
            result['aio'] = on_disk.get(AIO)
            result['effective'] = effective_aio(result['aio'])['aio']
            _writer_result(result, on_disk, 'writer')
    except ConfigFileError as exc:
        module.fail_json(msg=str(exc), **result)
    except (IOError, OSError) as exc:
        module.fail_json(msg='cannot write %s: %s' % (path, exc), **result)

    if restoring:
        def drop(data):
            data['files'].pop(real, None)
            return data
        change_record(module, state_dir, drop, '%s restored, but its entry could not be removed from %s'
                      % (path, record_file), result)
        result['restored'] = True
        result['changed'] = True
    module.exit_json(**result)


if __name__ == '__main__':
    main()
