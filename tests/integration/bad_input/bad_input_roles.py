# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' side of the sweep: their options from meta/argument_specs.yml, their cases, and one real
``ansible-playbook --check`` run per role entry point on this machine (connection local) where every case is a host
of its own.

Each case host is an alias of localhost whose inventory variables are the role's base variables with the one bad
value (one run per entry point: a play whose hosts all fail ends the run). The role's argument spec is first
applied in-process with ansible's own ArgumentSpecValidator, as the role's first task does: a case it refuses
needs no host (most wrong types end there; the control cases show the spec passes in the real run). A role whose
table names its validation tags runs with ``--tags`` those tags: its argument spec and every task up to the last
check, nothing after - a value the role refuses only later would be refused after a change, and shows as accepted.

The hosts start from the fake node's facts (one gather, put in ansible's jsonfile fact cache for every host: no task
and no module run per host) and the collection's modules that read the node are pointed at the fake node
(module_defaults). Every file path of the base variables is under the run's scratch directory; the run is in check
mode; the scratch directory and the collection's real paths on this machine are compared before and after.
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
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
UNIT = os.path.join(ROOT, 'tests', 'unit')  # the fake node and helpers the tiers share
ROLE_DIR = os.path.join(ROOT, 'roles')
# What the roles write on a real node at their defaults: compared before and after, so a check-mode run that
# wrote here anyway shows. Not the state store and the job store at their defaults (/var/lib/..., /run/...): every
# case points them at the run's scratch directory, and other runs of the collection on this machine (a developer's
# playbook, other tests) use the defaults at the same time.
REAL_PATHS = ('/etc/udev/rules.d/99-ai-storage-checkpoint-io-block.rules',
              '/etc/modprobe.d/ai-storage-checkpoint-io-nvme.conf',
              '/etc/sysctl.d/90-ai-storage-checkpoint-io-io-uring.conf',
              '/etc/security/limits.d/90-ai-storage-checkpoint-io-io-uring.conf',
              '/etc/ai_storage_checkpoint_io', '/etc/mdadm/mdadm.conf', '/etc/fstab', '/mnt/checkpoints', '/etc/group')


def role_names():
    return sorted(name for name in os.listdir(ROLE_DIR) if os.path.isfile(
        os.path.join(ROLE_DIR, name, 'meta', 'argument_specs.yml')))


def role_specs(role):
    """{entry point: spec} of the role's meta/argument_specs.yml, as written."""
    with open(os.path.join(ROLE_DIR, role, 'meta', 'argument_specs.yml')) as handle:
        return yaml.safe_load(handle)['argument_specs']


def role_options(role):
    """{entry point: {option: spec}} of the role's meta/argument_specs.yml, suboptions as ``option.sub``."""
    out = {}
    for entry, spec in role_specs(role).items():
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
        base = dict(table.get('base', {}), **entry_table.get('base', {}))
        for option in sorted(entry_options):
            if option in specs:
                spec = dict(specs[option])
                spec.setdefault('names', [option, option.split('.')[-1].replace(role + '_', '', 1)])
                option_list = option_cases(target, option, entry_options[option], spec)
                cases.extend(_capped(role, entry, base, option_list, table.get('cap')))
        for extra in sorted(option for option in specs if option.startswith('+')):  # variables the role lacks
            cases.extend(option_cases(target, extra[1:], {}, specs[extra]))
    stale.extend('(entry point %s)' % entry for entry in sorted(set(table['entries']) - set(role_options(role))))
    return cases, missing, stale, options


# Which generic cases of an option run through ansible-playbook first, where the role's table caps them.
PRIORITY = ('huge', 'negative', 'zero', 'nan', 'relative', 'symlink', 'directory', 'long_name', 'el_relative',
            'el_huge', 'el_negative', 'el_zero', 'el_empty', 'el_newline', 'si', 'suffix', 'other', 'null', 'bool',
            'empty', 'missing', 'newline', 'nonascii', 'float', 'str', 'list', 'dict')


def _placeholders_only(value):
    """``value`` with its placeholders replaced by a path that exists nowhere (the argument spec looks at types)."""
    if isinstance(value, list):
        return [_placeholders_only(item) for item in value]
    if isinstance(value, dict):
        return dict((key, _placeholders_only(item)) for key, item in value.items())
    if isinstance(value, str):
        import re
        return re.sub(r'\{[a-z_:0-9]+\}', '/nonexistent/bad-input', value)
    return value


def _capped(role, entry, base, cases, cap):
    """The cases of one option that run: all of them without a cap (or with BAD_INPUT_ALL=1); with one, the
    option's own (curated) cases, the generic ones the argument spec refuses (in-process, no host) and at most
    ``cap`` more generic ones, in PRIORITY order."""
    if cap is None or os.environ.get('BAD_INPUT_ALL'):
        return cases
    kept, rest = [], []
    for case in cases:
        free = argspec_outcome(role, entry, _placeholders_only(build_args(base, case))) is not None
        (kept if case.curated or free else rest).append(case)
    rank = dict((kind, index) for index, kind in enumerate(PRIORITY))
    rest.sort(key=lambda case: rank.get(case.kind, len(PRIORITY)))
    chosen = set(id(case) for case in kept + rest[:cap])
    return [case for case in cases if id(case) in chosen]


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


# The collection's modules that read the node, pointed at the fake node (check-mode runs read it, nothing else).
MODULE_DEFAULTS = '''  module_defaults:
    ai_storage.checkpoint_io.checkpoint_io_facts:
      sysfs_root: %(sys)s
      procfs_root: %(proc)s
      devfs_root: %(dev)s
      etc_root: %(etc)s
      fio_probe: false
      use_nvme_cli: false
    ai_storage.checkpoint_io.block_queue:
      sysfs_root: %(sys)s
    ai_storage.checkpoint_io.md_array:
      sysfs_root: %(sys)s
      procfs_root: %(proc)s
      devfs_root: %(dev)s
'''

PLAY = '''- name: %(group)s
  hosts: all
  gather_facts: false
%(module_defaults)s  tasks:
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
    spec = role_specs(role)[entry].get('options') or {}
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


def first_check_outcome(role, first_check, args):
    """The outcome of the role's first task where it is a pure filter over the role's variables (the table's
    ``first_check``: (filter function, the task's name, the message's format)): None when the values pass."""
    function, task, message = first_check
    values = dict(role_defaults(role), **args)
    try:
        problems = function(values)
    except Exception:
        import traceback
        text = traceback.format_exc()
        return {'failed': True, 'msg': text.strip().splitlines()[-1], 'task': task, 'changed': False,
                'changed_tasks': [], 'exception': None, 'text': text, 'traceback': text, 'summary': text[-300:]}
    if not problems:
        return None
    msg = message % '; '.join(problems)
    return {'failed': True, 'msg': msg, 'task': '%s (in-process: the filter the task calls)' % task,
            'changed': False, 'changed_tasks': [], 'exception': None, 'text': msg, 'summary': msg}


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


def _workspace(tmp, prefix):
    """A run's directory: the scratch fixtures, the fake node and its facts. (work, places, facts)."""
    work = tempfile.mkdtemp(prefix=prefix, dir=tmp)
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
    return work, {'tmp': env, 'sys': node.sys, 'proc': node.proc, 'dev': node.dev, 'etc': node.etc}, facts


# Commands a role may run even in check mode (read-only probes with check_mode: false) or that must never run
# here: fakes first in the PATH of the run, so no command of a case reaches this machine's devices. wipefs --no-act
# answers "no signature", blkid "nothing found"; the others refuse.
FAKE_COMMANDS = {
    'wipefs': 'case " $* " in *" --no-act "*) echo \'{"signatures": []}\'; exit 0;; esac\n'
              'echo "bad-input harness: wipefs $* was not run" >&2; exit 1\n',
    'blkid': 'exit 2\n',
}
REFUSING_COMMANDS = ('mdadm', 'mkfs.xfs', 'xfs_info', 'xfs_growfs', 'fio', 'nvme', 'udevadm', 'update-initramfs',
                     'dracut', 'sysctl', 'mount', 'umount', 'losetup', 'dd', 'sgdisk', 'parted')


def _fake_bin(work):
    directory = os.path.join(work, 'bin')
    os.makedirs(directory)
    scripts = dict(FAKE_COMMANDS)
    for name in REFUSING_COMMANDS:
        scripts[name] = 'echo "bad-input harness: %s $* was not run" >&2; exit 1\n' % name
    for name, body in scripts.items():
        path = os.path.join(directory, name)
        with open(path, 'w') as handle:
            handle.write('#!/bin/sh\n' + body)
        os.chmod(path, 0o755)
    return directory


def _run_playbook(work, what, hosts, playbook_text, options, env_vars):
    """ansible-playbook --check of ``playbook_text`` over ``hosts`` ({host: variables}) on this machine, the JSON
    callback's document parsed; the scratch directory and the collection's real paths compared before and after.
    (document, stderr, changes)."""
    inventory = {'all': {'vars': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable},
                         'hosts': hosts}}
    with open(os.path.join(work, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump(inventory, handle, allow_unicode=True, width=1000)
    playbook = os.path.join(work, 'playbook.yml')
    with open(playbook, 'w') as handle:
        handle.write('---\n' + playbook_text)
    env = os.path.join(work, 'env')
    env_vars = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STRATEGY='linear',
                    ANSIBLE_STDOUT_CALLBACK='json', ANSIBLE_NOCOLOR='1', ANSIBLE_FORKS='8',
                    ANSIBLE_DEPRECATION_WARNINGS='0', ANSIBLE_LOCAL_TEMP=os.path.join(work, 'ansible_local'),
                    ANSIBLE_REMOTE_TEMP=os.path.join(work, 'ansible_remote'), **env_vars)
    env_vars['PATH'] = '%s:%s' % (_fake_bin(work), os.environ.get('PATH', '/usr/bin:/bin'))
    # a relative report directory (the plans, the verification's) lands in the scratch directory, not the checkout
    env_vars['PWD'] = work
    before_tmp = snapshot(env, contents=True)
    before_real = snapshot(*REAL_PATHS, contents=True)
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    proc = subprocess.run([binary, '-i', os.path.join(work, 'inventory.yml'), '--check'] + options + [playbook],
                          env=env_vars, cwd=work, capture_output=True, text=True, check=False, timeout=900)
    changed = (changes(before_tmp, snapshot(env, contents=True))
               + ['changed on this machine: %s' % line
                  for line in changes(before_real, snapshot(*REAL_PATHS, contents=True))])
    try:
        return json.loads(proc.stdout), proc.stderr[-2000:], changed
    except ValueError:
        raise AssertionError('ansible-playbook of %s gave no JSON (rc %d): %s'
                             % (what, proc.returncode, (proc.stdout + proc.stderr)[-4000:]))


def run_entry(role, entry, cases, tmp):
    """{case id: outcome} of the cases of one entry point of one role, from one ansible-playbook --check run."""
    work, places, facts = _workspace(tmp, '%s.%s.' % (role, entry))
    table = ROLES[role]
    entry_table = table['entries'][entry]
    base = dict(table.get('base', {}), **entry_table.get('base', {}))
    hosts, hosts_of, out = {}, {}, {}
    first_check = table.get('first_check')
    wired = set()
    for index, case in enumerate(cases):
        args = materialize(dict(base) if case.kind == 'control' else build_args(base, case), places['tmp'],
                           places)
        early = argspec_outcome(role, entry, args)
        if early is None and first_check is not None and case.kind != 'control':
            # The role's first task is a pure filter over its variables: it runs in-process too, except for the
            # first refusal of each variable, which goes through the real run to show the wiring.
            early = first_check_outcome(role, first_check, args)
            if early is not None and case.option not in wired:
                wired.add(case.option)
                early = None
        if early is not None:
            out[case.id] = dict(early, args=args, changes=[])
            continue
        host = 'c%04d' % index
        hosts[host] = args
        hosts_of[host] = case
    if not hosts:
        return out
    _fact_cache(os.path.join(work, 'facts'), hosts, facts)
    first = entry_table.get('preflight_first')
    # An entry point the playbooks never run in check mode: its argument spec (tagged always by ansible) and the
    # preflight role before it run, its own tasks do not (--tags always).
    argspec_only = entry_table.get('argspec_only')
    before = PREFLIGHT_FIRST % {'preflight_tags': '      tags: [always]\n' if argspec_only else ''}
    text = PLAY % dict(places, group='%s %s' % (role, entry), role=role, entry=entry,
                       module_defaults=MODULE_DEFAULTS % places,
                       before=before if first else '',
                       entry_tags='      tags: [bad_input_entry]\n' if argspec_only else '',
                       include_vars=BEFORE_VARS if first else '')
    tags = ['--tags', ','.join(table['validate_tags'])] if table.get('validate_tags') else []
    if argspec_only:
        tags = ['--tags', 'always']
    doc, stderr, changed = _run_playbook(work, '%s %s' % (role, entry), hosts, text, tags, {
        'ANSIBLE_CACHE_PLUGIN': 'ansible.builtin.jsonfile', 'ANSIBLE_CACHE_PLUGIN_TIMEOUT': '0',
        'ANSIBLE_CACHE_PLUGIN_CONNECTION': os.path.join(work, 'facts')})
    for host, case in hosts_of.items():
        out[case.id] = dict(_host_outcome(doc, host), args=hosts[host], stderr=stderr, changes=changed)
    return out


ACTION_PLAY = '''- name: action %(name)s
  hosts: all
  gather_facts: false
%(module_defaults)s  tasks:
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
    work, places, _facts = _workspace(tmp, 'action.%s.' % name)
    base = ACTIONS[name]['base']
    hosts, hosts_of = {}, {}
    for index, case in enumerate(cases):
        args = materialize(dict(base) if case.kind == 'control' else build_args(base, case), places['tmp'],
                           places)
        host = 'c%04d' % index
        hosts[host] = {'bi_args': args}
        hosts_of[host] = case
    lines = ''.join('        %s: "{{ bi_args[%r] if %r in bi_args else omit }}"\n' % (option, option, option)
                    for option in sorted(argument_spec(name)))
    doc, stderr, changed = _run_playbook(work, 'the action %s' % name, hosts,
                                         ACTION_PLAY % dict(places, name=name, args=lines,
                                                            module_defaults=MODULE_DEFAULTS % places), [], {})
    # An action whose check mode writes one file per host on the controller (the plans: <dir>/<host>.json) is
    # judged by its own host's file; every other change counts for every case.
    output = ACTIONS[name].get('check_mode_output')
    parts = output.split('/') if output else []
    made_for_it = ['/' + '/'.join(parts[:end]) for end in range(1, len(parts) + 1)]  # the directories on the way
    shared = [line for line in changed
              if not output or ('/%s/' % output not in line and not any(line.endswith(d) for d in made_for_it))]
    return dict((case.id, dict(_host_outcome(doc, host), args=hosts[host]['bi_args'], stderr=stderr,
                               changes=shared + [line for line in changed
                                                 if output and '/%s/%s.' % (output, host) in line]))
                for host, case in hosts_of.items())


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
