# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' side of the sweep: their options from meta/argument_specs.yml, their cases, and one real
``ansible-playbook --check`` run per role on this machine (connection local) where every case is a host of its own.

Each case host is an alias of localhost whose inventory variables are the role's base variables with the one bad
value (one run per entry point: a play whose hosts all fail ends the run). The role's argument spec is first
applied in-process with ansible's own ArgumentSpecValidator, as the role's first task does: a case it refuses
needs no host (most wrong types end there; the control cases show the spec passes in the real run). A role whose table
names its validation tags runs with ``--tags`` those tags: its argument spec and every task up to the last check,
nothing after - a value the role refuses only later would be refused after a change, and shows as accepted. The hosts start
from the fake node's facts (one gather, put in ansible's jsonfile fact cache for every host: no task and no module
run per host) and the collection's modules that read the node are pointed at the fake node (module_defaults). Every file path of the base
variables is under the run's scratch directory; the run is in check mode; the scratch directory and the
collection's real paths on this machine are compared before and after.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import yaml

from bad_input_lib import Case, OMIT, build_args, changes, make_scratch, materialize, option_cases, snapshot
from bad_input_tables import ROLES

HERE = os.path.dirname(os.path.abspath(__file__))
UNIT = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(UNIT))
ROLE_DIR = os.path.join(ROOT, 'roles')
# What the roles write on a real node at their defaults: compared before and after, so a check-mode run that
# wrote here anyway shows.
REAL_PATHS = ('/etc/udev/rules.d/99-ai-storage-checkpoint-io-block.rules',
              '/etc/modprobe.d/ai-storage-checkpoint-io-nvme.conf',
              '/etc/sysctl.d/90-ai-storage-checkpoint-io-io-uring.conf',
              '/etc/security/limits.d/90-ai-storage-checkpoint-io-io-uring.conf',
              '/etc/ai_storage_checkpoint_io', '/var/lib/ai_storage_checkpoint_io', '/etc/mdadm/mdadm.conf',
              '/etc/fstab', '/mnt/checkpoints', '/run/ai_storage_checkpoint_io', '/etc/group')


def role_names():
    return sorted(name for name in os.listdir(ROLE_DIR) if os.path.isfile(
        os.path.join(ROLE_DIR, name, 'meta', 'argument_specs.yml')))


def role_options(role):
    """{entry point: {option: spec}} of the role's meta/argument_specs.yml, suboptions as ``option.sub``."""
    with open(os.path.join(ROLE_DIR, role, 'meta', 'argument_specs.yml')) as handle:
        specs = yaml.safe_load(handle)['argument_specs']
    out = {}
    for entry, spec in specs.items():
        flat = {}
        for option, info in (spec.get('options') or {}).items():
            flat[option] = info
            for sub, sub_info in (info.get('options') or {}).items():
                flat['%s.%s' % (option, sub)] = sub_info
        out[entry] = flat
    return out


def target_of(role, entry):
    return 'role:%s' % role if entry == 'main' else 'role:%s/%s' % (role, entry)


def role_cases(role):
    """(cases, missing, stale, options) of one role, every entry point; a control case per entry point first."""
    table = ROLES.get(role, {'entries': {}})
    cases, missing, stale, options = [], [], [], {}
    for entry, entry_options in sorted(role_options(role).items()):
        target = target_of(role, entry)
        entry_table = table['entries'].get(entry)
        if entry_table is None:
            missing.append('(entry point %s)' % entry)
            continue
        options[entry] = entry_options
        specs = entry_table['options']
        missing.extend('%s: %s' % (entry, option) for option in sorted(set(entry_options) - set(specs)))
        stale.extend('%s: %s' % (entry, option) for option in sorted(set(specs) - set(entry_options))
                     if not option.startswith('+'))
        cases.append(Case(target, '-', 'control', None, expect='control', reason='the base variables pass'))
        for option in sorted(entry_options):
            if option in specs:
                spec = dict(specs[option])
                spec.setdefault('names', [option, option.split('.')[-1].replace(role + '_', '', 1)])
                cases.extend(option_cases(target, option, entry_options[option], spec))
        for extra in sorted(option for option in specs if option.startswith('+')):  # variables the role lacks
            cases.extend(option_cases(target, extra[1:], {}, specs[extra]))
    stale.extend('(entry point %s)' % entry for entry in sorted(set(table['entries']) - set(role_options(role))))
    return cases, missing, stale, options


def fake_facts(tmp):
    """The fake node's facts as one gather of every section gives them: ({path of the JSON}, node)."""
    from checkpoint_io_fake_node import build_node, make_context, standard_runner
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.node_facts import gather_facts
    node = build_node(os.path.join(tmp, 'node'))
    ctx = make_context(node, standard_runner(node))
    facts = gather_facts(ctx, {'gather_subset': ['all'], 'training_user': 'trainer', 'fio_probe': False,
                               'use_nvme_cli': True, 'checkpoint_paths': ['/mnt/ckpt'],
                               'deepspeed_configs': [os.path.join(tmp, 'ds', 'ds_config.json')],
                               'state_dir': os.path.join(tmp, 'state'), 'devfs_root': node.dev})
    path = os.path.join(tmp, 'facts.json')
    with open(path, 'w') as handle:
        json.dump(facts, handle)
    return path, node


def _fill(value, places):
    if isinstance(value, list):
        return [_fill(item, places) for item in value]
    if isinstance(value, dict):
        return dict((key, _fill(item, places)) for key, item in value.items())
    if isinstance(value, str):
        for key in ('sys', 'proc', 'dev', 'etc'):
            value = value.replace('{%s}' % key, places[key])
        return materialize(value, places['tmp'])
    return value


PLAY = '''- name: %(group)s
  hosts: all
  gather_facts: false
  module_defaults:
    ai_storage.checkpoint_io.checkpoint_io_facts:
      sysfs_root: %(sys)s
      procfs_root: %(proc)s
      devfs_root: %(dev)s
      etc_root: %(etc)s
    ai_storage.checkpoint_io.block_queue:
      sysfs_root: %(sys)s
    ai_storage.checkpoint_io.md_array:
      sysfs_root: %(sys)s
      procfs_root: %(proc)s
      devfs_root: %(dev)s
  tasks:
%(before)s    - name: The role under test
      ansible.builtin.import_role:
        name: ai_storage.checkpoint_io.%(role)s
        tasks_from: %(entry)s
%(entry_tags)s%(include_vars)s'''
PREFLIGHT_FIRST = '''    - name: The preflight role (the playbooks run it before this entry point)
      ansible.builtin.import_role:
        name: ai_storage.checkpoint_io.preflight
%(preflight_tags)s'''
# What the playbooks hand the verification's baseline and settings_before entry points.
BEFORE_VARS = '''      vars:
        __facts_before: "{{ ansible_facts.checkpoint_io }}"
        checkpoint_io_before: "{{ ansible_facts.checkpoint_io }}"
        checkpoint_io_settings_before: {queue_depth: 8, block_size: 1048576, intra_op_parallelism: 1, source: test}
'''


def role_defaults(role):
    """The role's defaults/main.yml (the values a host without the variable gets; templated ones left out)."""
    path = os.path.join(ROLE_DIR, role, 'defaults', 'main.yml')
    if not os.path.isfile(path):
        return {}
    with open(path) as handle:
        values = yaml.safe_load(handle) or {}
    return dict((key, value) for key, value in values.items() if not (isinstance(value, str) and '{{' in value))


def argspec_outcome(role, entry, args):
    """The role's argument spec validation in-process, as ansible's validate_argument_spec action runs it (the same
    ArgumentSpecValidator over the role defaults and the host's variables): the outcome of a case it refuses (or
    crashes on), None when it passes. The cases it refuses need no ansible-playbook run."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    with open(os.path.join(ROLE_DIR, role, 'meta', 'argument_specs.yml')) as handle:
        spec = yaml.safe_load(handle)['argument_specs'][entry].get('options') or {}
    values = dict(role_defaults(role), **args)
    provided = dict((name, values[name]) for name in spec if name in values)
    task = '%s : Validating arguments against arg spec %s (in-process, ansible\'s ArgumentSpecValidator)' % (
        role, entry)
    try:
        result = ArgumentSpecValidator(spec).validate(provided, validate_role_argument_spec=True)
    except Exception:  # ansible-core's own validator crashed: a user would see this as the task's error
        import traceback
        text = traceback.format_exc()
        return {'failed': True, 'msg': 'Task failed: %s' % text.strip().splitlines()[-1], 'task': task,
                'changed': False, 'changed_tasks': [], 'exception': None, 'text': text, 'traceback': text,
                'summary': text[-300:]}
    if not result.error_messages:
        return None
    msg = 'Validation of arguments failed:\n%s' % '\n'.join(result.error_messages)
    return {'failed': True, 'msg': msg, 'task': task, 'changed': False, 'changed_tasks': [], 'exception': None,
            'text': msg, 'summary': msg}


def _fact_cache(directory, hosts, facts):
    """The fake node's facts as ansible's jsonfile fact cache holds them, one file per host (2.19 names the file
    s1_<host> and wraps the JSON in __payload__; the plain <host> file is the older layout): the hosts start with
    them, no task and no module run per host."""
    os.makedirs(directory)
    payload = json.dumps({'__payload__': json.dumps(facts)})
    plain = json.dumps(facts)
    for host in hosts:
        for name, text in (('s1_' + host, payload), (host, plain)):
            with open(os.path.join(directory, name), 'w') as handle:
                handle.write(text)


def _entry_of(case):
    return case.target.split('/', 1)[1] if '/' in case.target else 'main'


def run_role(role, cases, tmp):
    """{case id: outcome} of every case of one role: one ansible-playbook --check run per entry point."""
    results = {}
    for entry in sorted(set(_entry_of(case) for case in cases)):
        results.update(run_entry(role, entry, [case for case in cases if _entry_of(case) == entry], tmp))
    return results


def run_entry(role, entry, cases, tmp):
    """{case id: outcome} of the cases of one entry point of one role, from one ansible-playbook --check run."""
    work = tempfile.mkdtemp(prefix='%s.%s.' % (role, entry), dir=tmp)
    os.chmod(work, 0o755)
    env = os.path.join(work, 'env')
    os.makedirs(env)
    os.chmod(env, 0o755)
    make_scratch(env)
    for name in ('ckpt', 'ds', 'udev', 'modprobe', 'sysctl', 'limits', 'profile', 'mnt'):
        os.makedirs(os.path.join(env, name))
    with open(os.path.join(env, 'ds', 'ds_config.json'), 'w') as handle:
        handle.write('{"train_batch_size": 8, "aio": {"queue_depth": 8}}\n')
    facts_path, node = fake_facts(env)
    with open(facts_path) as handle:
        facts = json.load(handle)
    places = {'tmp': env, 'sys': node.sys, 'proc': node.proc, 'dev': node.dev, 'etc': node.etc}
    table = ROLES[role]
    entry_table = table['entries'][entry]
    base = dict(table.get('base', {}), **entry_table.get('base', {}))
    hosts, hosts_of, out = {}, {}, {}
    for index, case in enumerate(cases):
        args = _fill(dict(base) if case.kind == 'control' else build_args(base, case), places)
        early = argspec_outcome(role, entry, args)
        if early is not None:
            out[case.id] = dict(early, args=args, changes=[])
            continue
        host = 'c%04d' % index
        hosts[host] = args
        hosts_of[host] = case
    if not hosts:
        return out
    inventory = {'all': {'vars': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable},
                         'hosts': hosts}}
    with open(os.path.join(work, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump(inventory, handle, allow_unicode=True, width=1000)
    _fact_cache(os.path.join(work, 'facts'), hosts, facts)
    first = entry_table.get('preflight_first')
    # An entry point the playbooks never run in check mode: its argument spec (tagged always by ansible) and the
    # preflight role before it run, its own tasks do not (--tags always).
    argspec_only = entry_table.get('argspec_only')
    playbook = os.path.join(work, 'playbook.yml')
    with open(playbook, 'w') as handle:
        before = PREFLIGHT_FIRST % {'preflight_tags': '      tags: [always]\n' if argspec_only else ''}
        handle.write('---\n' + PLAY % dict(places, group='%s %s' % (role, entry), role=role, entry=entry,
                                            before=before if first else '',
                                            entry_tags='      tags: [bad_input_entry]\n' if argspec_only else '',
                                            include_vars=BEFORE_VARS if first else ''))
    env_vars = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='linear',
                    ANSIBLE_STDOUT_CALLBACK='json', ANSIBLE_NOCOLOR='1', ANSIBLE_FORKS='8',
                    ANSIBLE_DEPRECATION_WARNINGS='0', ANSIBLE_CACHE_PLUGIN='ansible.builtin.jsonfile',
                    ANSIBLE_CACHE_PLUGIN_CONNECTION=os.path.join(work, 'facts'), ANSIBLE_CACHE_PLUGIN_TIMEOUT='0',
                    ANSIBLE_LOCAL_TEMP=os.path.join(work, 'ansible_local'),
                    ANSIBLE_REMOTE_TEMP=os.path.join(work, 'ansible_remote'))
    before_tmp = snapshot(env, contents=True)
    before_real = snapshot(*REAL_PATHS, contents=True)
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    tags = ['--tags', ','.join(table['validate_tags'])] if table.get('validate_tags') else []
    if argspec_only:
        tags = ['--tags', 'always']
    proc = subprocess.run([binary, '-i', os.path.join(work, 'inventory.yml'), '--check'] + tags + [playbook],
                          env=env_vars, cwd=work, capture_output=True, text=True, check=False, timeout=900)
    changed_tmp = changes(before_tmp, snapshot(env, contents=True))
    changed_real = changes(before_real, snapshot(*REAL_PATHS, contents=True))
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('ansible-playbook of %s %s gave no JSON (rc %d): %s'
                             % (role, entry, proc.returncode, (proc.stdout + proc.stderr)[-4000:]))
    for host, case in hosts_of.items():
        outcome = _host_outcome(doc, host)
        outcome.update(args=hosts[host], stderr=proc.stderr[-2000:],
                       changes=changed_tmp + ['changed on this machine: %s' % line for line in changed_real])
        out[case.id] = outcome
    return out


ACTION_PLAY = '''- name: action %(name)s
  hosts: all
  gather_facts: false
  module_defaults:
    ai_storage.checkpoint_io.checkpoint_io_facts:
      sysfs_root: %(sys)s
      procfs_root: %(proc)s
      devfs_root: %(dev)s
      etc_root: %(etc)s
      fio_probe: false
      use_nvme_cli: false
  tasks:
    - name: The action under test
      ai_storage.checkpoint_io.%(name)s:
%(args)s'''
ACTION_DIR = os.path.join(ROOT, 'plugins', 'action')


def action_names():
    return sorted(name[:-3] for name in os.listdir(ACTION_DIR) if name.endswith('.py') and name != '__init__.py')


def action_options(name):
    """The arguments the action plugin reads itself (``args.get('x')``, ``args['x']`` in its source)."""
    import re
    with open(os.path.join(ACTION_DIR, name + '.py')) as handle:
        source = handle.read()
    return sorted(set(re.findall(r"args(?:\.get\(|\[|\.setdefault\()'(\w+)'", source)))


def action_cases(name):
    """(cases, missing, stale, options) of one action plugin: its own arguments, a control first."""
    from bad_input_tables import ACTIONS
    table = ACTIONS.get(name, {'options': {}})
    options = action_options(name)
    missing = sorted(set(options) - set(table['options']))
    stale = sorted(set(table['options']) - set(options))
    target = 'action:%s' % name
    cases = [Case(target, '-', 'control', None, expect='control', reason='the base arguments pass')]
    for option in options:
        if option in table['options']:
            cases.extend(option_cases(target, option, {}, table['options'][option]))
    return cases, missing, stale, options


def run_action(name, cases, tmp):
    """{case id: outcome} of an action plugin's cases: one ansible-playbook --check run, a host per case, the task's
    arguments from the host's variable bi_args (an argument the case leaves out is omitted)."""
    from bad_input_modules import argument_spec
    from bad_input_tables import ACTIONS
    work = tempfile.mkdtemp(prefix='action.%s.' % name, dir=tmp)
    os.chmod(work, 0o755)
    env = os.path.join(work, 'env')
    os.makedirs(env)
    os.chmod(env, 0o755)
    make_scratch(env)
    facts_path, node = fake_facts(env)
    places = {'tmp': env, 'sys': node.sys, 'proc': node.proc, 'dev': node.dev, 'etc': node.etc}
    base = ACTIONS[name]['base']
    hosts, hosts_of = {}, {}
    for index, case in enumerate(cases):
        args = _fill(dict(base) if case.kind == 'control' else build_args(base, case), places)
        host = 'c%04d' % index
        hosts[host] = {'bi_args': args}
        hosts_of[host] = case
    inventory = {'all': {'vars': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable},
                         'hosts': hosts}}
    with open(os.path.join(work, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump(inventory, handle, allow_unicode=True, width=1000)
    lines = ''.join('        %s: "{{ bi_args[%r] if %r in bi_args else omit }}"\n' % (option, option, option)
                    for option in sorted(argument_spec(name)))
    playbook = os.path.join(work, 'playbook.yml')
    with open(playbook, 'w') as handle:
        handle.write('---\n' + ACTION_PLAY % dict(places, name=name, args=lines))
    env_vars = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='linear',
                    ANSIBLE_STDOUT_CALLBACK='json', ANSIBLE_NOCOLOR='1', ANSIBLE_FORKS='8',
                    ANSIBLE_DEPRECATION_WARNINGS='0', ANSIBLE_LOCAL_TEMP=os.path.join(work, 'ansible_local'),
                    ANSIBLE_REMOTE_TEMP=os.path.join(work, 'ansible_remote'))
    before_tmp = snapshot(env, contents=True)
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    proc = subprocess.run([binary, '-i', os.path.join(work, 'inventory.yml'), '--check', playbook], env=env_vars,
                          cwd=work, capture_output=True, text=True, check=False, timeout=900)
    changed_tmp = changes(before_tmp, snapshot(env, contents=True))
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('ansible-playbook of the action %s gave no JSON (rc %d): %s'
                             % (name, proc.returncode, (proc.stdout + proc.stderr)[-4000:]))
    out = {}
    for host, case in hosts_of.items():
        outcome = _host_outcome(doc, host)
        outcome.update(args=hosts[host]['bi_args'], stderr=proc.stderr[-2000:], changes=changed_tmp)
        out[case.id] = outcome
    return out


def _msg(result):
    msg = result.get('msg') or ''
    if not isinstance(msg, str):
        msg = json.dumps(msg)
    items = [item for item in result.get('results') or [] if isinstance(item, dict) and item.get('failed')]
    if items:
        msg += ' | ' + ' | '.join(str(item.get('msg') or '') for item in items)
    return msg


def _host_outcome(doc, host):
    """The first failure of ``host`` in the run (its task and message), whether a task before it reported a
    change, and whether a traceback reached the output."""
    changed_tasks = []
    for play in doc.get('plays') or []:
        for task in play.get('tasks') or []:
            result = (task.get('hosts') or {}).get(host)
            if result is None:
                continue
            name = (task.get('task') or {}).get('name')
            text = json.dumps(result)
            exception = result.get('exception') or next(
                (item.get('exception') for item in result.get('results') or [] if isinstance(item, dict)
                 and item.get('exception')), None)
            if result.get('failed') or result.get('unreachable'):
                return {'failed': True, 'msg': _msg(result), 'task': name, 'changed': bool(changed_tasks),
                        'changed_tasks': changed_tasks, 'exception': exception, 'text': text,
                        'summary': '%s: %s' % (name, _msg(result))}
            if result.get('changed') and not result.get('skipped'):
                changed_tasks.append(name)
    return {'failed': False, 'msg': '', 'task': None, 'changed': bool(changed_tasks),
            'changed_tasks': changed_tasks, 'exception': None, 'text': '',
            'summary': 'ran to the end in check mode (tasks that would change: %s)' % (changed_tasks or 'none')}


def run_all(tmp, jobs=2):
    """{case id: outcome} of every role, the entry points' runs ``jobs`` at a time, the largest first."""
    runs = []
    for name in role_names():
        if name in ROLES:
            cases = role_cases(name)[0]
            for entry in sorted(set(_entry_of(case) for case in cases)):
                runs.append((name, entry, [case for case in cases if _entry_of(case) == entry]))
    runs.sort(key=lambda run: -len(run[2]))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_entry, name, entry, cases, tmp) for name, entry, cases in runs]
        futures += [pool.submit(run_action, name, action_cases(name)[0], tmp) for name in action_names()]
        results = {}
        for future in futures:
            results.update(future.result())
    return results


__all__ = ['OMIT', 'role_names', 'role_options', 'role_cases', 'run_all', 'run_role']
