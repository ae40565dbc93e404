# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option of every module given wrong input: refused with a message naming the option, the value (and the
limit), no traceback, nothing changed on the fake node; or accepted for a stated reason without a traceback.

The modules run as processes of their own (tests/integration/bad_input/bad_input_worker.py, one per module, each case its
main() with JSON args as ansible hands them over), on a fake node where no command runs. The options come from each
module's real argument_spec: an option without an entry in bad_input_tables.MODULES fails
test_every_module_option_has_cases.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

# bad_input_report: the session fixture that prints the count table (autouse)
from bad_input_counts import bad_input_report, record_counts  # noqa: F401 pylint: disable=unused-import
from bad_input_lib import check, check_accepted
from bad_input_modules import module_cases, module_names, outcome_of, run_all, value_at
from bad_input_tables import MODULES


def all_cases():
    params = []
    for name in module_names():
        if name in MODULES:
            params.extend(case.param() for case in module_cases(name)[0])
    return params


@pytest.fixture(scope='module')
def outcomes(tmp_path_factory):
    results = run_all(str(tmp_path_factory.mktemp('bad_input_modules')))
    for name in module_names():
        if name not in MODULES:
            continue
        cases, _missing, _stale, options = module_cases(name)
        record_counts('module', name, options, cases)
    return results


def test_every_module_has_a_table():
    assert sorted(set(module_names()) - set(MODULES)) == [], 'modules without a bad-input table'
    assert sorted(set(MODULES) - set(module_names())) == [], 'tables of modules that are gone'


@pytest.mark.parametrize('name', module_names())
def test_every_module_option_has_cases(name):
    _cases, missing, stale, _options = module_cases(name)
    assert missing == [], '%s: options without bad-input cases in bad_input_tables.MODULES: %s' % (name, missing)
    assert stale == [], '%s: table entries of options the module no longer has: %s' % (name, stale)


@pytest.mark.parametrize('case', all_cases())
def test_bad_module_input(case, outcomes):
    entry = outcomes[case.id]
    outcome = outcome_of(entry)
    table = MODULES[case.target.split(':', 1)[1]]
    if case.expect == 'control':
        problems = check_accepted(case, outcome)
        if table.get('control', 'accept') == 'accept':
            if outcome['failed']:
                problems.append('the base arguments are refused: %s' % outcome['msg'][:800])
        elif table.get('control_expect_in') not in outcome['msg']:
            problems.append('the base arguments should pass validation and reach %r: %s'
                            % (table.get('control_expect_in'), outcome['msg'][:800]))
    else:
        problems = check(case, value_at(entry['args'], case.option), outcome)
    shown = case.value if not isinstance(case.value, str) or len(case.value) < 80 else case.value[:80] + '...'
    reached = ('; commands reached: %s' % entry['commands']) if entry['commands'] else ''
    assert problems == [], '%s (%r): %s%s' % (case.id, shown, '; '.join(problems), reached)
