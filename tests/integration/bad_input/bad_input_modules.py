# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The modules' side of the sweep: their options from the real argument_spec, their cases, the batched runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils import basic

from bad_input_lib import Case, build_args, option_cases
from bad_input_tables import MODULES

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MODULE_DIR = os.path.join(ROOT, 'plugins', 'modules')
PREFIX = 'ansible_collections.ai_storage.checkpoint_io.plugins.modules.'


def module_names():
    return sorted(name[:-3] for name in os.listdir(MODULE_DIR) if name.endswith('.py') and name != '__init__.py')


class _Captured(Exception):
    pass


def argument_spec(name):
    """The module's argument spec as its main() builds it (file attributes included), {option: spec}, with
    suboptions as ``option.sub``."""
    module = importlib.import_module(PREFIX + name)
    captured = {}

    def capture(self, argument_spec=None, **kwargs):
        captured.update(spec=argument_spec, kwargs=kwargs)
        raise _Captured()
    original = basic.AnsibleModule.__init__
    basic.AnsibleModule.__init__ = capture
    try:
        module.main()
    except _Captured:
        pass
    finally:
        basic.AnsibleModule.__init__ = original
    spec = dict(captured['spec'])
    if captured['kwargs'].get('add_file_common_args'):
        spec.update(basic.FILE_COMMON_ARGUMENTS)
    flat = {}
    for option, info in spec.items():
        flat[option] = info
        for sub, sub_info in (info.get('options') or {}).items():
            flat['%s.%s' % (option, sub)] = sub_info
    return flat


def module_cases(name):
    """(cases, options without a table entry, table entries without an option, options) of one module; the
    control case first. A module that does not load has no cases and its missing entry says why."""
    table = MODULES.get(name, {'options': {}})
    try:
        options = argument_spec(name)
    except Exception as exc:  # a module being rewritten in the shared checkout: its completeness test says so
        return [], ['(the module does not load: %s: %s)' % (type(exc).__name__, exc)], [], {}
    missing = sorted(set(options) - set(table['options']))
    stale = sorted(set(table['options']) - set(options))
    target = 'module:%s' % name
    cases = [Case(target, '-', 'control', None, expect='control', reason='the base arguments pass validation')]
    for option in sorted(options):
        if option in table['options']:
            cases.extend(option_cases(target, option, options[option], table['options'][option]))
    return cases, missing, stale, options


def _run_worker(name, cases, tmp):
    base = MODULES[name]['base']
    payload = []
    for case in cases:
        args = dict(base) if case.kind == 'control' else build_args(base, case)
        payload.append({'id': case.id, 'args': args})
    # the control last: a legitimate run may change the node (the worker rebuilds it after any change)
    payload = payload[1:] + payload[:1]
    work = tempfile.mkdtemp(prefix='%s.' % name, dir=tmp)
    os.chmod(work, 0o755)
    job = os.path.join(work, 'in.json')
    out = os.path.join(work, 'out.json')
    with open(job, 'w') as handle:
        json.dump({'module': name, 'tmp': work, 'cases': payload}, handle)
    proc = subprocess.run([sys.executable, os.path.join(HERE, 'bad_input_worker.py'), job, out],
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0 or not os.path.exists(out):
        raise AssertionError('the bad-input worker of %s failed (rc %s): %s'
                             % (name, proc.returncode, (proc.stdout + proc.stderr)[-4000:]))
    with open(out) as handle:
        return dict((entry['id'], entry) for entry in json.load(handle))


def run_all(tmp, jobs=2):
    """{case id: worker outcome} of every module, the workers run ``jobs`` at a time."""
    names = [name for name in module_names() if name in MODULES]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_run_worker, name, module_cases(name)[0], tmp) for name in names]
        results = {}
        for future in futures:
            results.update(future.result())
    return results


def value_at(args, option):
    value = args
    for part in option.split('.'):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def outcome_of(entry):
    """The worker's record of one case as the checks read it."""
    result = entry.get('result') or {}
    failed = entry.get('traceback') is not None or entry.get('rc') not in (0, None) or bool(result.get('failed'))
    return {'failed': failed, 'msg': result.get('msg') or '', 'changed': result.get('changed'),
            'changes': entry.get('changes'), 'traceback': entry.get('traceback'), 'exception': result.get('exception'),
            'text': (entry.get('stdout') or '') + (entry.get('traceback') or ''),
            'summary': json.dumps(dict((k, v) for k, v in result.items() if k in ('msg', 'changed', 'failed')))}
