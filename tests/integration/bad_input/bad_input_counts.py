# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The count of bad inputs tried per module and role: printed at the end of a run that holds the sweep and written
to <basetemp>/bad_input_counts.json (a session fixture of each sweep test file calls :func:`report` once it ends;
no conftest.py here: tests/integration's conftest module is imported by name).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

COUNTS = {}
_REPORTED = []


def record_counts(kind, name, options, cases):
    """Count one target: its options and its cases (the control case apart)."""
    from bad_input_lib import KNOWN
    tried = [case for case in cases if case.expect != 'control']
    COUNTS['%s %s' % (kind, name)] = {
        'kind': kind, 'name': name, 'options': len(options), 'cases': len(tried),
        'refusals': len([case for case in tried if case.expect == 'refuse']),
        'accepted': len([case for case in tried if case.expect == 'accept']),
        'known_failures': len([case for case in tried if case.known or case.id in KNOWN]),
    }


def table():
    """The counts as the rows of a markdown table."""
    rows = ['| kind | name | options | bad inputs tried | must be refused | accepted (reason in the table) | known '
            'failures |', '| --- | --- | --- | --- | --- | --- | --- |']
    total = dict.fromkeys(('options', 'cases', 'refusals', 'accepted', 'known_failures'), 0)
    for key in sorted(COUNTS):
        row = COUNTS[key]
        rows.append('| %(kind)s | %(name)s | %(options)d | %(cases)d | %(refusals)d | %(accepted)d | '
                    '%(known_failures)d |' % row)
        for field in total:
            total[field] += row[field]
    rows.append('| all | | %(options)d | %(cases)d | %(refusals)d | %(accepted)d | %(known_failures)d |' % total)
    return rows


def report(config, tmp_path_factory):
    """Print the table (once per session) and write it as JSON under the session's base temp directory."""
    if _REPORTED or not COUNTS:
        return
    _REPORTED.append(True)
    path = os.path.join(str(tmp_path_factory.getbasetemp()), 'bad_input_counts.json')
    with open(path, 'w') as handle:
        json.dump(COUNTS, handle, indent=2, sort_keys=True)
    reporter = config.pluginmanager.get_plugin('terminalreporter')
    capture = config.pluginmanager.get_plugin('capturemanager')
    if reporter is None:
        return
    with capture.global_and_fixture_disabled() if capture is not None else _nothing():
        reporter.write_line('')
        reporter.write_sep('=', 'bad inputs tried per module and role')
        for row in table():
            reporter.write_line(row)
        reporter.write_line('(written to %s)' % path)


class _nothing(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture(scope='session', autouse=True)
def bad_input_report(request, tmp_path_factory):
    """The count table at the end of the session: imported by each sweep test file (autouse there)."""
    yield
    report(request.config, tmp_path_factory)
