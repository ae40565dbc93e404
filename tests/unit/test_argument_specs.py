"""Every module's and role entry point's argument spec is complete and typed, so ansible-core's own validator
refuses a value of the wrong type before the collection's code runs.

This stands in for the bad-input sweep's generated cases that only re-tested that validator
(tests/integration/bad_input/bad_input_lib.py: VALIDATOR_KINDS, validator_cases). Per module (its argument_spec as
its ``main()`` builds it, captured in-process as the sweep reads it: bad_input_modules.argument_spec) and per role
entry point (meta/argument_specs.yml):

- complete and typed: every option, suboptions too, declares a type; a list its elements; its choices and its
  default are of that type; a role's options are described, its role-prefixed options are the variables of its
  defaults/main.yml (all of them for the main entry point; one without a default is required), its other options are
  shared checkpoint_io_* inputs (module_utils/common/inputs.py), and a default in the spec is the one defaults/main.yml sets;
- the validator refuses: for each option, the very values the sweep no longer tries (one per kind it leaves to
  ansible-core: 'abc' for an int, a list for a bool, a value outside the choices, null for a typed option with a
  default...), run through ansible-core's ``ArgumentSpecValidator`` here, are refused with a message naming it;
- the validator accepts what the spec declares: every choice, the spec's default and the role's defaults/main.yml.

No process starts (the unit tier's conftest fails a test that starts one): the modules are imported, not run.
"""
import json
import os
import sys

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from testenv import ROOT

BAD_INPUT = os.path.join(ROOT, 'tests', 'integration', 'bad_input')
if BAD_INPUT not in sys.path:
    sys.path.insert(0, BAD_INPUT)

from bad_input_lib import validator_cases  # noqa: E402
from bad_input_modules import argument_spec as module_argument_spec, module_names  # noqa: E402
from bad_input_roles import role_names, role_specs  # noqa: E402
from bad_input_tables import MODULES, ROLES  # noqa: E402

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import SPEC as SHARED  # noqa: E402

# The Python types a declared type's choices and default must be (bool is no int here, though Python says so).
TYPES = {'str': str, 'int': int, 'float': (int, float), 'bool': bool, 'list': list, 'dict': dict, 'path': str,
         'raw': object, 'bytes': (int, str), 'bits': (int, str), 'json': object, 'jsonarg': object}
# What an option's spec may hold besides its own keys: the checks between suboptions, left out where one suboption
# is validated alone.
BETWEEN = ('required_if', 'required_one_of', 'required_together', 'required_by', 'mutually_exclusive')

# Argument-spec gaps found here, in files this test does not own: run as xfail(strict=True), so each turns into a
# failure once it is fixed. {(test, id): what is wrong}.
KNOWN_GAPS = {
    ('accepts', 'block_layer/main'): (
        'roles/block_layer/meta/argument_specs.yml: block_layer_scheduler documents null ("V(null) leaves the '
        'scheduler as found", null is one of its choices) but ansible-core 2.19 refuses it: the option is a str with '
        'a default (none), so its converter turns null into "" before the choices are compared ("value of '
        'block_layer_scheduler must be one of: none, mq-deadline, kyber, bfq, None, got: ")'),
}


def _is(value, kind):
    if kind in ('int', 'float') and isinstance(value, bool):
        return False
    return isinstance(value, TYPES[kind])


def _templated(value):
    return '{{' in json.dumps(value, default=str)


def _untyped(options, prefix=''):
    """Problems of a spec's options: missing or unknown types, lists without element types, choices or defaults of
    another type; suboptions recursively."""
    problems = []
    for name, info in sorted((options or {}).items()):
        where = prefix + name
        kind = info.get('type')
        if not kind:
            problems.append('%s: no type' % where)
            continue
        if kind not in TYPES:
            problems.append('%s: unknown type %r' % (where, kind))
            continue
        elements = info.get('elements')
        if kind == 'list' and not elements:
            problems.append('%s: a list without elements' % where)
        elif kind == 'list' and elements not in TYPES:
            problems.append('%s: unknown element type %r' % (where, elements))
        item_type = (elements if elements in TYPES else 'raw') if kind == 'list' else kind
        for choice in info.get('choices') or []:
            # null among the choices: the option documents null (whether the validator takes it is checked below)
            if choice is not None and not _is(choice, item_type):
                problems.append('%s: choice %r is not of type %s' % (where, choice, item_type))
        default = info.get('default')
        if default is not None:
            if not _is(default, kind):
                problems.append('%s: default %r is not of type %s' % (where, default, kind))
            elif kind == 'list':
                problems.extend('%s: default element %r is not of type %s' % (where, item, item_type)
                                for item in default if not _is(item, item_type))
        if info.get('options'):
            problems.extend(_untyped(info['options'], where + '.'))
    return problems


def _undescribed(options, prefix=''):
    out = []
    for name, info in sorted((options or {}).items()):
        if not info.get('description'):
            out.append(prefix + name)
        out.extend(_undescribed(info.get('options'), prefix + name + '.'))
    return out


def _flat(options):
    """{option: spec} with suboptions as ``option.sub`` (as the sweep names them)."""
    flat = {}
    for name, info in (options or {}).items():
        flat[name] = info
        for sub, sub_info in (info.get('options') or {}).items():
            flat['%s.%s' % (name, sub)] = sub_info
    return flat


def _validate(options, name, value, role):
    """ansible-core's validator over option ``name`` (``a.b``: suboption b of a) of ``options`` given ``value``,
    the option alone (a suboption inside its parent, without its siblings): (error messages, crash or None)."""
    if '.' in name:
        parent, sub = name.split('.', 1)
        outer = dict((key, item) for key, item in options[parent].items() if key not in BETWEEN + ('default',))
        outer['options'] = {sub: options[parent]['options'][sub]}
        outer['required'] = False
        spec = {parent: outer}
        params = {parent: [{sub: value}] if outer.get('type') == 'list' else {sub: value}}
    else:
        spec = {name: options[name]}
        params = {name: value}
    try:
        kwargs = {'validate_role_argument_spec': True} if role else {}
        result = ArgumentSpecValidator(spec).validate(params, **kwargs)
    except Exception as exc:  # pylint: disable=broad-except
        return [], '%s: %s' % (type(exc).__name__, exc)
    return result.error_messages, None


def _refusals(target, options, tables, role):
    """Problems where ansible-core's validator does not refuse, naming the option, a value the sweep leaves to it
    (``tables``: the options' entries in the sweep's tables, which may type an option their own way), and the count
    of values tried."""
    problems, tried = [], 0
    for name, info in sorted(_flat(options).items()):
        for case_kind, value in validator_cases(target, name, info, tables.get(name) or {}):
            tried += 1
            errors, crash = _validate(options, name, value, role)
            shown = name.split('.')[-1]
            if crash:
                problems.append('%s=%r (%s): the validator crashed: %s' % (name, value, case_kind, crash))
            elif not errors:
                problems.append('%s=%r (%s): accepted by the validator' % (name, value, case_kind))
            elif not any(shown in message for message in errors):
                problems.append('%s=%r (%s): refused without naming the option: %s' % (name, value, case_kind, errors))
    return problems, tried


def _accepts(options, role, defaults=None):
    """Problems where ansible-core's validator refuses what the spec declares: a choice, the spec's default (of an
    option without suboptions), a value of the role's defaults/main.yml that is not a template."""
    problems = []
    for name, info in sorted(_flat(options).items()):
        as_list = info.get('type') == 'list'
        given = [('choice', [choice] if as_list else choice) for choice in info.get('choices') or []]
        if info.get('default') is not None and not info.get('options'):
            given.append(('default', info['default']))
        if '.' not in name and defaults and name in defaults and not _templated(defaults[name]):
            given.append(('defaults/main.yml', defaults[name]))
        for what, value in given:
            errors, crash = _validate(options, name, value, role)
            if crash or errors:
                problems.append('%s=%r (%s): refused: %s' % (name, value, what, crash or errors))
    return problems


def _param(test, name, ident=None):
    gap = KNOWN_GAPS.get((test, ident or name))
    marks = [pytest.mark.xfail(strict=True, reason='argument-spec gap: %s' % gap)] if gap else []
    return pytest.param(*(name if isinstance(name, tuple) else (name,)), id=ident or name, marks=marks)


# --- modules ---------------------------------------------------------------------------------------------------------
def _module_options(name):
    """The module's options as its main() builds them, suboptions nested (bad_input_modules flattens them)."""
    return dict((option, info) for option, info in module_argument_spec(name).items() if '.' not in option)


@pytest.mark.parametrize('name', [_param('typed', name) for name in module_names()])
def test_module_argument_spec_is_complete_and_typed(name):
    options = _module_options(name)
    assert options, '%s: no options' % name
    assert _untyped(options) == [], name
    problems, _tried = _refusals('module:%s' % name, options, MODULES.get(name, {}).get('options', {}), role=False)
    assert problems == [], name


@pytest.mark.parametrize('name', [_param('accepts', name) for name in module_names()])
def test_module_argument_spec_accepts_what_it_declares(name):
    assert _accepts(_module_options(name), role=False) == [], name


# --- roles -----------------------------------------------------------------------------------------------------------
def _role_defaults(role):
    """defaults/main.yml of the role (None where it has none)."""
    path = os.path.join(ROOT, 'roles', role, 'defaults', 'main.yml')
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return yaml.safe_load(handle) or {}


def _role_entries():
    return [(role, entry) for role in role_names() for entry in sorted(role_specs(role))]


def _variables(role, entry, options, defaults):
    """Problems between an entry point's options and the role's variables: its role-prefixed options are variables
    of defaults/main.yml (or required), all of them for the main entry point; its other options are shared inputs;
    defaults/main.yml sets only role-prefixed variables; a default in the spec is the one defaults/main.yml sets."""
    prefix = role + '_'
    defaults = defaults or {}
    own = set(name for name in options if name.startswith(prefix))
    problems = ['%s: not a role-prefixed variable nor a shared input (module_utils/common/inputs.py)' % name
                for name in sorted(set(options) - own - set(SHARED))]
    problems += ['%s: no default in defaults/main.yml and not required' % name
                 for name in sorted(own - set(defaults)) if not options[name].get('required')]
    problems += ['defaults/main.yml: %s is not role-prefixed' % name for name in sorted(defaults)
                 if not name.startswith(prefix)]
    if entry == 'main':
        problems += ['defaults/main.yml: %s is not an option of the main entry point' % name
                     for name in sorted(set(defaults) - own)]
    for name in sorted(own & set(defaults)):
        value, info = defaults[name], options[name]
        if 'default' in info and value is not None and not _templated(value) and info['default'] != value:
            problems.append('%s: the spec says default %r, defaults/main.yml sets %r' % (name, info['default'], value))
    return problems


@pytest.mark.parametrize('role, entry', [_param('typed', pair, '%s/%s' % pair) for pair in _role_entries()])
def test_role_argument_spec_is_complete_and_typed(role, entry):
    where = '%s/%s' % (role, entry)
    options = role_specs(role)[entry].get('options') or {}
    assert _untyped(options) == [], where
    assert _undescribed(options) == [], '%s: options without a description' % where
    assert _variables(role, entry, options, _role_defaults(role)) == [], where
    tables = ROLES.get(role, {}).get('entries', {}).get(entry, {}).get('options', {})
    target = 'role:%s' % role if entry == 'main' else 'role:%s/%s' % (role, entry)
    problems, _tried = _refusals(target, options, tables, role=True)
    assert problems == [], where


@pytest.mark.parametrize('role, entry', [_param('accepts', pair, '%s/%s' % pair) for pair in _role_entries()])
def test_role_argument_spec_accepts_what_it_declares(role, entry):
    options = role_specs(role)[entry].get('options') or {}
    assert _accepts(options, role=True, defaults=_role_defaults(role)) == [], '%s/%s' % (role, entry)
