# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every variable of every role entry point given wrong input: the role fails the host before any task that would
change something, naming the variable and the value (and the limit), with no traceback, in a real
``ansible-playbook --check`` run on this machine (bad_input_roles.py: one run per role, one host per case); or the
value is accepted for the reason its table entry states.

The variables come from each role's meta/argument_specs.yml: one without an entry in bad_input_tables.ROLES fails
test_every_role_option_has_cases.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

# bad_input_report: the session fixture that prints the count table (autouse)
from bad_input_counts import bad_input_report, record_counts  # noqa: F401 pylint: disable=unused-import
from bad_input_lib import check, check_accepted
from bad_input_modules import value_at
from bad_input_roles import action_cases, action_names, role_cases, role_names, run_all
from bad_input_tables import ACTIONS, ROLES


def all_cases():
    params = []
    for name in role_names():
        if name in ROLES:
            params.extend(case.param() for case in role_cases(name)[0])
    for name in action_names():
        params.extend(case.param() for case in action_cases(name)[0])
    return params


@pytest.fixture(scope='module')
def outcomes(tmp_path_factory):
    results = run_all(str(tmp_path_factory.mktemp('bad_input_roles')))
    for name in role_names():
        if name in ROLES:
            cases, _missing, _stale, options = role_cases(name)
            record_counts('role', name, [(entry, option) for entry in options for option in options[entry]], cases)
    for name in action_names():
        cases, _missing, _stale, options = action_cases(name)
        record_counts('action plugin', name, options, cases)
    return results


def test_every_role_has_a_table():
    assert sorted(set(role_names()) - set(ROLES)) == [], 'roles without a bad-input table'
    assert sorted(set(ROLES) - set(role_names())) == [], 'tables of roles that are gone'


@pytest.mark.parametrize('name', role_names())
def test_every_role_option_has_cases(name):
    _cases, missing, stale, _options = role_cases(name)
    assert missing == [], '%s: variables without bad-input cases in bad_input_tables.ROLES: %s' % (name, missing)
    assert stale == [], '%s: table entries of variables the role no longer has: %s' % (name, stale)


@pytest.mark.parametrize('name', action_names())
def test_every_action_argument_has_cases(name):
    _cases, missing, stale, _options = action_cases(name)
    assert missing == [], '%s: arguments the action reads without bad-input cases in ACTIONS: %s' % (name, missing)
    assert stale == [], '%s: table entries of arguments the action no longer reads: %s' % (name, stale)
    assert name in ACTIONS


@pytest.mark.parametrize('case', all_cases())
def test_bad_role_input(case, outcomes):
    outcome = outcomes[case.id]
    if case.expect == 'control':
        problems = check_accepted(case, outcome)
        if outcome['failed']:
            problems.append('the base variables are refused (task %s): %s' % (outcome['task'], outcome['msg'][:800]))
    else:
        problems = check(case, value_at(outcome['args'], case.option), outcome)
    assert problems == [], '%s (%r): %s' % (case.id, case.value if not isinstance(case.value, str)
                                            or len(case.value) < 80 else case.value[:80] + '...', '; '.join(problems))
