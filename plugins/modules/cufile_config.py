#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: cufile_config
short_description: Set keys of NVIDIA's cufile.json, keeping its comments and every other key, with revert
version_added: 0.3.0
description:
  - Sets the given dotted keys (C(properties.max_direct_io_size_kb), C(execution.max_io_queue_depth), ...) of a
    cuFile configuration file (C(/etc/cufile.json), or a file C(CUFILE_ENV_PATH_JSON) names). NVIDIA's stock file
    is JSON with C(//) and C(/* */) comments; only the characters of the values that change are replaced, a
    missing key is added to its object, and every other key, every comment and the layout stay as they were.
  - A missing file is created (O(create)), never its directory, from NVIDIA's documented defaults (the Configuration Guide's
    C(cufile.json) table, C(module_utils/gds/gds.py) C(CUFILE_DEFAULTS)) with the given keys, under a comment that
    says who made it.
  - Refused before anything is written, naming the path. A file that is not JSON even with its comments removed,
    or whose top level is not an object; a key whose parent is not an object; a value that is not a JSON scalar;
    a symlink (unless O(follow_symlinks)); a file that is not a regular file or has more than one hard link; a path
    with a directory that someone other than root and the file's owner can write.
  - Written only when a value changes, through the collection's atomic writer (a new file in the same directory
    renamed over the name, never written through a link); read back from disk and compared.
  - Before the first change the module records the file as found (its text, or that there was none) in the state
    store's record C(cufile_config) (O(state_dir)), keyed by the file's real path, with the text it wrote.
    O(state=restored) puts the original text back when the file is as the module left it; a file changed since
    gets only the module's keys set back to their original values (a key the original did not have is removed,
    with an object the module made for it) and a warning; a file the module created is removed only when it is as the module left it.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Write access to the file's directory and to the record.
seealso:
  - name: GPUDirect Storage Configuration Guide
    description: The cufile.json keys and their defaults.
    link: https://docs.nvidia.com/gpudirect-storage/configuration-guide/index.html
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.state_store
attributes:
  check_mode:
    support: full
    details: Reports the change, the keys and the diff without writing the file, a backup or the record.
  diff_mode:
    support: full
    details: The text before and the text that is (or would be) written.
  platform:
    platforms: posix
options:
  path:
    description:
      - The cuFile configuration file.
    type: path
    default: /etc/cufile.json
  settings:
    description:
      - Dotted keys and their values (booleans, integers, strings). Required with O(state=present); must be
        omitted with O(state=restored).
    type: dict
  create:
    description:
      - Create a missing file from NVIDIA's documented defaults with O(settings). With V(false) a missing file is
        refused, naming the path.
    type: bool
    default: true
  follow_symlinks:
    description:
      - Change the file a symlink at O(path) points to (the link is kept). With V(false) a symlink is refused.
    type: bool
    default: false
  backup:
    description:
      - Make a timestamped backup copy next to an existing file before changing it.
    type: bool
    default: true
  state:
    description:
      - V(present) sets O(settings); V(restored) puts back what the record holds and removes the file's entry.
    type: str
    choices: [present, restored]
    default: present
'''

EXAMPLES = r'''
- name: cuFile sized for 8 ranks x depth 32 x 8 MiB checkpoint writes, no silent compatibility mode
  ai_storage.checkpoint_io.cufile_config:
    settings:
      properties.max_direct_io_size_kb: 8192
      properties.max_device_pinned_mem_size_kb: 2097152
      execution.max_io_queue_depth: 32
      properties.allow_compat_mode: false

- name: Put back the cufile.json found before the first change
  ai_storage.checkpoint_io.cufile_config:
    state: restored
'''

RETURN = r'''
path:
  description: The file.
  returned: always
  type: str
  sample: /etc/cufile.json
real_path:
  description: The file read and written (the target of a followed symlink; the record's key).
  returned: always
  type: str
  sample: /etc/cufile.json
created:
  description: Whether the file was (or would be) created.
  returned: always
  type: bool
  sample: false
changed_keys:
  description: Each key whose value is (or would be) new or different, with the value before (V(null) when the file
    did not set it; for a file being created, NVIDIA's documented default it starts from) and after.
  returned: always
  type: dict
  sample: {execution.max_io_queue_depth: {before: 128, after: 160}}
properties:
  description: Every key of the file now (in check mode, of the text that would be written) under its dotted path,
    NVIDIA's default for the documented keys it leaves out; after a write, read back from disk. V(null) when there
    is no file.
  returned: always
  type: dict
  sample: {properties.max_direct_io_size_kb: 16384, execution.max_io_queue_depth: 160}
backup_file:
  description: The backup copy made before the change; V(null) when none was made.
  returned: always
  type: str
  sample: /etc/cufile.json.4242.2026-12-02@18:00:00~
record_file:
  description: The file of the state store's record C(cufile_config).
  returned: always
  type: str
  sample: /var/lib/ai_storage_checkpoint_io/cufile_config.json
recorded:
  description: Whether this run recorded the file as found (its first change).
  returned: always
  type: bool
  sample: true
restored:
  description: Whether O(state=restored) put the original back (or would).
  returned: always
  type: bool
  sample: false
removed_file:
  description: Whether O(state=restored) removed the file the module had created.
  returned: always
  type: bool
  sample: false
'''

import datetime
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.config_file import ConfigFileError, open_config
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.cufile_edit import (
    check_settings,
    default_text,
    properties_of,
    restore_text,
    set_keys,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.jsonc import JsoncError
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import check_path_limits

RECORD = 'cufile_config'


def argument_spec():
    return dict(
        path=dict(type='path', default='/etc/cufile.json'),
        settings=dict(type='dict'),
        create=dict(type='bool', default=True),
        follow_symlinks=dict(type='bool', default=False),
        backup=dict(type='bool', default=True),
        state=dict(type='str', choices=['present', 'restored'], default='present'),
        state_dir=dict(type='path', default=state_store.STATE_DIR),
    )


def change_record(module, state_dir, change, what, result):
    def apply(data):
        data = change(data if isinstance(data, dict) and isinstance(data.get('files'), dict) else {'files': {}})
        return data if data['files'] else None
    try:
        state_store.update(state_dir, RECORD, apply, writer='cufile_config')
    except (state_store.StateError, ValueError, IOError, OSError) as exc:
        module.fail_json(msg='%s: %s' % (what, exc), **result)


def read_entry(module, state_dir, real, result):
    try:
        data = state_store.read_record(state_dir, RECORD) or {'files': {}}
    except (state_store.StateError, ValueError) as exc:
        module.fail_json(msg='the record %s is not usable (%s); fix or move it aside' % (result['record_file'], exc),
                         **result)
    entry = (data.get('files') or {}).get(real)
    if entry is not None and not (isinstance(entry, dict) and isinstance(entry.get('existed'), bool)):
        module.fail_json(msg='the record %s holds an entry for %s that is not this module\'s layout; fix or move it '
                         'aside' % (result['record_file'], real), **result)
    return entry


def plan(module, params, handle, entry, result):
    """(new text or None to remove, the entry to record or None) for the run; fills the result."""
    text = handle.text if handle.exists else None
    if params['state'] == 'restored':
        new_text, warning = restore_text(entry, text)
        if warning:
            module.warn('%s: %s' % (params['path'], warning))
        result['restored'] = True
        return new_text, None
    base = text if text is not None else default_text()
    new_text, changed = set_keys(base, params['settings'])
    result['changed_keys'] = changed
    result['created'] = text is None
    record = None
    if entry is None and new_text != text:
        record = {'existed': text is not None, 'original': text}
    return new_text, record


def write(module, params, handle, new_text, result):
    if new_text is None:
        if handle.exists:
            result['removed_file'] = handle.remove()
        return
    if params['backup'] and handle.exists:
        result['backup_file'] = handle.backup()
    handle.write(new_text)
    on_disk = handle.read_back()
    if on_disk != new_text:
        module.fail_json(msg='%s reads back differently from what was written' % params['path'], **result)
    result['properties'] = properties_of(on_disk)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    path, state_dir = params['path'], params['state_dir']
    result = dict(changed=False, path=path, real_path=path, created=False, changed_keys={}, properties=None,
                  backup_file=None, record_file=state_store.record_path(state_dir or '', RECORD), recorded=False,
                  restored=False, removed_file=False)
    try:
        state_store.check_dir_param(state_dir)
    except state_store.StateError as exc:
        module.fail_json(msg=str(exc), **result)
    restoring = params['state'] == 'restored'
    if restoring and params['settings']:
        module.fail_json(msg='state=restored takes no settings (the record is used); remove settings', **result)
    try:
        check_path_limits(path, 'path')
    except ValueError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    parent = os.path.dirname(os.path.normpath(path))
    if path.startswith('/') and not restoring and not os.path.lexists(path) and not os.path.isdir(parent):
        module.fail_json(msg='path: %r does not exist and neither does its directory %r: check the path (the module '
                         'creates the file, never its directories); nothing was written' % (path, parent), **result)
    if not restoring:
        problems = check_settings(params['settings'])
        if problems:
            module.fail_json(msg='settings: %s; nothing was written' % '; '.join(problems), **result)
    if restoring and not os.path.lexists(path):
        handle = None
    else:
        try:
            handle = open_config(path, follow_symlinks=params['follow_symlinks'],
                                 create=params['create'] and not restoring, what='cuFile config')
        except ConfigFileError as exc:
            module.fail_json(msg='%s; nothing was written' % exc, **result)
        except (IOError, OSError) as exc:
            module.fail_json(msg='cannot open %s: %s; nothing was written' % (path, exc), **result)
    try:
        run(module, params, handle, result)
    finally:
        if handle is not None:
            handle.close()


def run(module, params, handle, result):
    path, state_dir = params['path'], params['state_dir']
    real = handle.real if handle is not None else os.path.realpath(path)
    result['real_path'] = real
    entry = read_entry(module, state_dir, real, result)
    text = handle.text if handle is not None and handle.exists else None
    if params['state'] == 'restored' and entry is None:
        result['properties'] = properties_of(text)
        result['msg'] = '%s: nothing recorded in %s, nothing to restore' % (path, result['record_file'])
        module.exit_json(**result)
    if handle is None:
        module.warn('%s no longer exists: the recorded original cannot be compared; dropping its entry' % path)
        new_text, record = None, None
        result['restored'] = True
    else:
        try:
            new_text, record = plan(module, params, handle, entry, result)
        except JsoncError as exc:
            module.fail_json(msg='%s: %s; nothing was written' % (path, exc), **result)
    result['changed'] = new_text != text or params['state'] == 'restored'
    result['properties'] = properties_of(new_text) if new_text is not None else None
    if module._diff:
        result['diff'] = dict(before=text or '', after=new_text or '', before_header=path, after_header=path)
    if module.check_mode or not result['changed']:
        module.exit_json(**result)
    if record is not None:
        now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        record.update(recorded_at=now, written=None)

        def add(data):
            data['files'].setdefault(real, record)
            return data
        change_record(module, state_dir, add, 'cannot record %s before changing it' % path, result)
        result['recorded'] = True
    try:
        if handle is not None and new_text != text:
            write(module, params, handle, new_text, result)
    except ConfigFileError as exc:
        module.fail_json(msg=str(exc), **result)
    except (IOError, OSError) as exc:
        module.fail_json(msg='cannot write %s: %s' % (path, exc), **result)

    def note(data):
        if params['state'] == 'restored':
            data['files'].pop(real, None)
        elif real in data['files']:
            data['files'][real]['written'] = new_text
        return data
    change_record(module, state_dir, note, '%s written, but its record could not be updated' % path, result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
