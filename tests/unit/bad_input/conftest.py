# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prints the bad-input counts at the end of a run and writes them to <basetemp>/bad_input_counts.json; the cases
that failed go to <basetemp>/bad_input_failures.json (case, what happened), the list to hand on."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import bad_input_counts

FAILURES = {}


def pytest_runtest_logreport(report):
    if report.when == 'call' and report.failed and 'bad_input' in report.nodeid:
        message = getattr(report.longrepr, 'reprcrash', None)
        FAILURES[report.nodeid.split('::', 1)[-1]] = message.message if message is not None else str(report.longrepr)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not bad_input_counts.COUNTS:
        return
    terminalreporter.section('bad inputs tried per module and role')
    for row in bad_input_counts.table():
        terminalreporter.write_line(row)
    try:
        base = str(config._tmp_path_factory.getbasetemp())
    except AttributeError:
        return
    for name, data in (('bad_input_counts.json', bad_input_counts.COUNTS), ('bad_input_failures.json', FAILURES)):
        path = os.path.join(base, name)
        with open(path, 'w') as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
        terminalreporter.write_line('(written to %s)' % path)
