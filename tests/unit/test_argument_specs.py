"""Every module's and role entry point's argument spec is complete and typed, so ansible-core's own validator
refuses a value of the wrong type before the collection's code runs.

This replaces the bad-input sweep's generated cases that only re-tested that validator
(tests/integration/bad_input/bad_input_lib.py: VALIDATOR_KINDS): per module and per role entry point, every option
declares a type (lists their elements, dicts with suboptions typed suboptions), its choices and default are of that
type, every role option is described and every role default is declared, and for each typed option one value of
each kind the sweep no longer generates is refused by ansible-core's ``ArgumentSpecValidator`` run here, naming the
option. The module specs are the ones their ``main()`` builds (captured in-process, as the sweep reads them).
"""
import os
import sys

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from testenv import ROOT

sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration', 'bad_input'))
from bad_input_lib import GENERIC, ELEMENTS, derive_kind, left_to_validator  # noqa: E402
from bad_input_modules import module_names  # noqa: E402
from bad_input_modules import argument_spec as module_argument_spec  # noqa: E402
from bad_input_roles import role_names  # noqa: E402
from bad_input_tables import MODULES, ROLES  # noqa: E402

TYPES = {'str': str, 'int': int, 'float': (int, float), 'bool': bool, 'list': list, 'dict': dict, 'path': str,
         'raw': object, 'bytes': (int, str), 'bits': (int, str), 'json': object, 'jsonarg': object}


def _role_specs(role):
    with open(os.path.join(ROOT, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        return yaml.safe_load(handle)['argument_specs']


def _role_defaults(role):
    path = os.path.join(ROOT, 'roles', role, 'defaults', 'main.yml')
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        return yaml.safe_load(handle) or {}


def _untyped(options, prefix=''):
    """Problems of a spec's options: missing types, lists without element types, choices or defaults of another
    type; suboptions recursively."""
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
        if kind == 'list' and not info.get('elements'):
            problems.append('%s: a list without elements' % where)
        element_type = TYPES.get(info.get('elements'), object) if kind == 'list' else TYPES[kind]
        for choice in info.get('choices') or []:
            # None in choices is the antsibull-docs finding of issue 35 (a typed spec with a null choice)
            if choice is not None and not isinstance(choice, element_type):
                problems.append('%s: choice %r is not of type %s' % (where, choice, info.get('elements') or kind))
        default = info.get('default')
        if default is not None and kind != 'raw' and not isinstance(default, TYPES[kind]):
            problems.append('%s: default %r is not of type %s' % (where, default, kind))
        if info.get('options'):
            problems.extend(_untyped(info['options'], where + '.'))
    return problems


def _wrong_values(info, kind, spec):
    """(case kind, value) the sweep leaves to ansible-core for this option (``spec``: its table entry)."""
    dropped = left_to_validator(info, kind, spec)
    generic = dict(GENERIC.get(kind, []))
    out = []
    for case_kind in dropped:
        if case_kind.startswith('el_'):
            out.append((case_kind, [dict(ELEMENTS['int'] + [('float', 1.5)])[case_kind[3:]]]))
        elif case_kind == 'upper':
            first = str([c for c in info['choices'] if c is not None][0])
            out.append((case_kind, first.upper() if first.upper() != first else first + 'X'))
        elif case_kind == 'list' and kind == 'choice':
            out.append((case_kind, [info['choices'][0]]))
        else:
            out.append((case_kind, generic[case_kind]))
    return out


def _refusals(options, tables, role):
    """Problems where ansible-core's validator accepts a wrong-type value the sweep no longer tries (``tables``:
    the options' table entries in the sweep, which may type an option their own way)."""
    problems = []
    checked = 0
    for name, info in sorted(options.items()):
        spec = tables.get(name) or {}
        kind = derive_kind(info, spec)
        for case_kind, value in _wrong_values(info, kind, spec):
            alone = {name: dict((k, v) for k, v in info.items() if k not in ('required', 'default'))}
            result = ArgumentSpecValidator(alone).validate({name: value}, **(
                {'validate_role_argument_spec': True} if role else {}))
            checked += 1
            if not result.error_messages:
                problems.append('%s=%r (%s): accepted by the validator' % (name, value, case_kind))
            elif not any(name in message for message in result.error_messages):
                problems.append('%s=%r (%s): refused without naming the option: %s'
                                % (name, value, case_kind, result.error_messages))
    return problems, checked


@pytest.mark.parametrize('name', module_names())
def test_module_argument_spec_is_complete_and_typed(name):
    flat = module_argument_spec(name)
    top = dict((option, info) for option, info in flat.items() if '.' not in option)
    assert top, '%s: no options' % name
    assert _untyped(top) == [], name
    problems, _checked = _refusals(top, MODULES.get(name, {}).get('options', {}), role=False)
    assert problems == [], name


def _role_entries():
    return [(role, entry) for role in role_names() for entry in sorted(_role_specs(role))]


@pytest.mark.parametrize('role, entry', _role_entries(), ids=['%s/%s' % pair for pair in _role_entries()])
def test_role_argument_spec_is_complete_and_typed(role, entry):
    specs = _role_specs(role)
    options = specs[entry].get('options') or {}
    assert _untyped(options) == [], '%s/%s' % (role, entry)
    undescribed = sorted(name for name, info in options.items() if not info.get('description'))
    assert undescribed == [], '%s/%s: options without a description' % (role, entry)
    declared = set(name for spec in specs.values() for name in (spec.get('options') or {}))
    assert sorted(set(_role_defaults(role)) - declared) == [], '%s: defaults no entry point declares' % role
    tables = ROLES.get(role, {}).get('entries', {}).get(entry, {}).get('options', {})
    problems, _checked = _refusals(options, tables, role=True)
    assert problems == [], '%s/%s' % (role, entry)
