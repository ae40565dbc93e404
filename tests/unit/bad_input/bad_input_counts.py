# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The count of bad inputs tried per module and role (printed at the end of the run, written as JSON)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

COUNTS = {}


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
