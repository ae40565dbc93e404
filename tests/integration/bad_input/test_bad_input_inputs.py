# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every shared checkpoint_io_* variable of the playbooks (plugins/module_utils/common/inputs.py, checked by the preflight
role's first task through the checkpoint_io_inputs filter) given wrong input, in-process: refused naming the
variable and the value (and the limit), or accepted for the stated reason; never an exception.

The roles that take these variables run a few of the same cases through ansible-playbook (test_bad_input_roles.py).
A variable of inputs.SPEC whose kind bad_input_tables.inputs_spec does not know fails
test_every_shared_variable_has_cases.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import SPEC, check_inputs

# bad_input_report: the session fixture that prints the count table (autouse)
from bad_input_counts import bad_input_report, record_counts  # noqa: F401 pylint: disable=unused-import
from bad_input_lib import build_args, check, option_cases
from bad_input_tables import inputs_spec


def input_cases():
    cases = []
    for name in sorted(SPEC):
        spec = inputs_spec(name)
        if spec is not None:
            cases.extend(option_cases('inputs', name, {'type': 'raw'}, dict(spec, names=[name])))
    return cases


CASES = input_cases()
record_counts('inputs', 'checkpoint_io_* (plugins/module_utils/common/inputs.py)', list(SPEC), CASES)


def test_every_shared_variable_has_cases():
    assert sorted(name for name in SPEC if inputs_spec(name) is None) == []


@pytest.mark.parametrize('case', [case.param() for case in CASES])
def test_bad_shared_input(case):
    given = build_args({}, case)
    outcome = {'failed': False, 'msg': '', 'changes': [], 'text': ''}
    try:
        result = check_inputs(given)
        outcome.update(failed=bool(result['errors']), msg='; '.join(result['errors']),
                       summary='values: %r' % (result['values'].get(case.option),))
    except Exception:  # the filter would show this as a crash of the preflight role's first task
        outcome.update(failed=True, traceback=traceback.format_exc())
    problems = check(case, given.get(case.option), outcome)
    assert problems == [], '%s (%r): %s' % (case.id, case.value, '; '.join(problems))
