# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No value reaches a udev rule or a CSV cell except through the one escaping helper (issue 31, finding 2 and 5):
a grep of the rule templates and the CSV writers, as the issue's "Done when" asks, kept as a test."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from testenv import ROOT

EXPRESSION = re.compile(r'\{\{(.*?)\}\}', re.S)
RULE_HELPERS = ('ai_storage.checkpoint_io.udev_match', 'ai_storage.checkpoint_io.udev_comment')


def _rule_sources():
    """(path, text) of every udev rule the collection writes: its rule templates, and the copy tasks whose content is
    a rule (ACTION== or SUBSYSTEM== in it)."""
    for path in sorted(glob.glob(os.path.join(ROOT, 'roles', '*', 'templates', '*.rules.j2'))):
        with open(path) as handle:
            yield path, handle.read()
    for path in sorted(glob.glob(os.path.join(ROOT, 'roles', '*', 'tasks', '*.yml'))):
        with open(path) as handle:
            text = handle.read()
        for block in re.findall(r'content: \|\n((?:      .*\n|\n)+)', text):
            if 'ACTION==' in block or 'SUBSYSTEM==' in block:
                yield path, block


def test_every_value_in_a_udev_rule_goes_through_the_helper():
    sources = list(_rule_sources())
    assert len(sources) >= 2  # the block_layer template, the nvmeof_rdma rule
    bare = []
    for path, text in sources:
        for expression in EXPRESSION.findall(text):
            if not any(helper in expression for helper in RULE_HELPERS) and not re.match(
                    r'^\s*__nvmeof_rule_(nqns|policy)\s*$|^\s*nqn\s*$', expression):
                bare.append('%s: {{%s}}' % (os.path.relpath(path, ROOT), expression))
    assert bare == []


def test_the_nvmeof_rule_values_are_made_by_the_helper():
    with open(os.path.join(ROOT, 'roles', 'nvmeof_rdma', 'tasks', 'present.yml')) as handle:
        text = handle.read()
    for name in ('__nvmeof_rule_nqns', '__nvmeof_rule_policy'):
        (line,) = [line for line in text.splitlines() if line.strip().startswith(name + ':')]
        assert 'ai_storage.checkpoint_io.udev_match' in line, line


def test_every_csv_row_goes_through_csv_row():
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, 'plugins', '**', '*.py'), recursive=True)):
        with open(path) as handle:
            for number, line in enumerate(handle, start=1):
                if 'writerow(' in line:
                    rows.append((os.path.relpath(path, ROOT), number, line.strip()))
    assert rows, 'no CSV writer found'
    bare = [row for row in rows if 'writerow(csv_row(' not in row[2] and not re.search(r'writerow\([A-Z_]+\)', row[2])]
    assert bare == []  # a header row (a constant tuple of column names) is the only other kind
