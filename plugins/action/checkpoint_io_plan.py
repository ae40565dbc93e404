# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin checkpoint_io_plan: gather a node's facts once, decide its plan, record it, write it for a person.

The facts module runs on the node (the one gather of the play; merged into the host's facts as the facts action
does). The plan is decided here by module_utils/plan (pure): the role settings are each role's
``defaults/main.yml`` with the inventory's values over them. It is recorded on the node (state store record
``plan``; not in check mode, nor where the plan's problems stop the node) and written on the controller as ``<report_dir>/plan/<inventory_hostname>.json``
(in check mode too: the plan is what a check run is for). The task never reports a change: the plan is the run's
bookkeeping, not a setting of the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import re

from ansible.plugins.action import ActionBase

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_atomic
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.fact_merge import merge_facts
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan.node import node_plan, plan_lines

ARGUMENT_SPEC = dict(inputs=dict(type='dict', required=True), settings=dict(type='dict', default={}),
                     gather=dict(type='dict', default={}), report_dir=dict(type='str'),
                     record=dict(type='bool', default=True))
ROLES = ('gds', 'io_uring_engine', 'block_layer', 'xfs', 'deepspeed_config', 'nvmeof_rdma', 'thermal_validate')
GATHER_KEYS = ('training_user', 'checkpoint_paths', 'deepspeed_configs', 'deepspeed_python', 'state_dir', 'gather_subset',
               'fio_probe')
REFERENCE = re.compile(r'^\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}$')
ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')


def role_defaults(roles_dir=ROLES_DIR, loader=None):
    """Every tuning role's defaults ({variable: value}); a default that is another variable of the same files
    (``{{ xfs_mount_point }}``) takes its value, any other template is left out (the inputs decide those)."""
    import yaml  # ansible's own dependency; imported here so the unit tier can import this file's helpers
    found = {}
    for role in ROLES:
        path = os.path.join(roles_dir, role, 'defaults', 'main.yml')
        with open(path) as handle:
            found.update(yaml.safe_load(handle) or {})
    resolved = {}
    for name, value in found.items():
        match = REFERENCE.match(value) if isinstance(value, str) else None
        if match:
            value = found.get(match.group(1))
        if isinstance(value, str) and '{{' in value:
            continue
        resolved[name] = value
    return resolved


def plan_file(report_dir, host, cwd=None):
    """``<report_dir>/plan/<host>.json``; a relative report_dir is below the controller's working directory. A host
    name that is not one file name (a slash, ``..``, a NUL) is refused: it would write elsewhere."""
    if not isinstance(host, str) or not host or '/' in host or '\0' in host or host in ('.', '..'):
        raise ValueError('inventory_hostname %r cannot name a file of the plan directory (a slash, NUL, "." or '
                         '"..")' % (host,))
    if not isinstance(report_dir, str) or not report_dir or '\0' in report_dir:
        raise ValueError('checkpoint_io_report_dir %r is not a directory name' % (report_dir,))
    base = report_dir if os.path.isabs(report_dir) else os.path.join(cwd or os.environ.get('PWD') or os.getcwd(),
                                                                     report_dir)
    return os.path.join(base, 'plan', host + '.json')


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        # a directory name is a string: ansible's str conversion would make a list or a dict one (a directory named
        # "{'a': 1}" below the working directory)
        given = self._task.args.get('report_dir')
        if given is not None and not isinstance(given, str):
            return dict(result, failed=True, changed=False,
                        msg='checkpoint_io_plan: report_dir: %r is not a directory name (a string)' % (given,))
        # the module file's options, checked as a module's are (a message naming the option, no traceback)
        _validated, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        host = task_vars.get('inventory_hostname')
        inputs, settings = args.get('inputs'), args.get('settings') or {}
        try:
            path = plan_file(args.get('report_dir') or inputs.get('checkpoint_io_report_dir') or
                             'checkpoint_io_reports', host)
            merged = role_defaults()
        except (ValueError, IOError, OSError) as exc:
            return dict(result, failed=True, changed=False, msg='checkpoint_io_plan: %s' % exc)
        merged.update(settings)
        gather = dict((key, value) for key, value in args.get('gather').items()
                      if key in GATHER_KEYS and value is not None)
        facts = self._execute_module(module_name='ai_storage.checkpoint_io.checkpoint_io_facts',
                                     module_args=gather, task_vars=task_vars)
        if facts.get('failed'):
            return dict(result, failed=True, changed=False, msg='checkpoint_io_plan: gathering the facts failed: %s'
                        % facts.get('msg'))
        new = (facts.get('ansible_facts') or {}).get('checkpoint_io') or {}
        try:
            gathered = merge_facts((task_vars.get('ansible_facts') or {}).get('checkpoint_io'), new)
        except ValueError as exc:
            return dict(result, failed=True, changed=False, msg='checkpoint_io_plan: the facts could not be merged: '
                        '%s' % exc)
        made_at = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        plan = node_plan(gathered, inputs, merged, host=host, made_at=made_at)
        plan['check_mode'] = bool(self._task.check_mode)
        warnings = list(facts.get('warnings') or [])
        # a node the plan stops (its problems: nothing will change there) keeps no record of it
        if not self._task.check_mode and not plan['problems'] and args.get('record'):
            recorded = self._execute_module(
                module_name='ai_storage.checkpoint_io.checkpoint_io_record',
                module_args=dict({'name': 'plan', 'data': dict(plan, made_at=None), 'writer': 'checkpoint_io_plan'},
                                 **({'state_dir': gather['state_dir']} if gather.get('state_dir') else {})),
                task_vars=task_vars)
            if recorded.get('failed'):
                return dict(result, failed=True, changed=False, msg='checkpoint_io_plan: recording the plan on the '
                            'node failed: %s' % recorded.get('msg'))
        try:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            write_atomic(path, json.dumps(plan, indent=1, sort_keys=True) + '\n', mode=0o644)
        except (IOError, OSError) as exc:
            return dict(result, failed=True, changed=False, msg='checkpoint_io_plan: the plan could not be written '
                        'to %s on the controller: %s' % (path, exc))
        result.update(changed=False, plan=plan, lines=plan_lines(plan), path=path, warnings=warnings,
                      ansible_facts={'checkpoint_io': gathered, 'checkpoint_io_plan': plan})
        return result
