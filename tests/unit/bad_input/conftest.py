# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prints the bad-input counts at the end of a run and writes them to <basetemp>/bad_input_counts.json."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import bad_input_counts


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
    path = os.path.join(base, 'bad_input_counts.json')
    with open(path, 'w') as handle:
        json.dump(bad_input_counts.COUNTS, handle, indent=2, sort_keys=True)
    terminalreporter.write_line('(written to %s)' % path)
