# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cross-layer queue-depth alignment filters. Each filter is documented in the YAML file of its name beside
this file (queue_alignment.yml, knee_depth.yml, per_rank_depth.yml,
finding_line.yml); the logic is in module_utils/block/alignment.py and alignment_plan.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import alignment as _alignment
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import alignment_plan as _alignment_plan


def _call(name, function, *args):
    try:
        return function(*args)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('%s: %s' % (name, exc))


def queue_alignment(facts, plan):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.queue_alignment(plan)``: findings and per-drive depths."""
    return _call('queue_alignment', _alignment.check_alignment, facts, plan)


def knee_depth(curve, fraction=0.95, block_size=None):
    """``sweep_points | ai_storage.checkpoint_io.knee_depth(0.95, '1M')``: the knee of a depth sweep."""
    return _call('knee_depth', _alignment_plan.knee_depth, curve, fraction, block_size)


def per_rank_depth(knee, ranks_per_drive, nr_requests):
    """``knee | ai_storage.checkpoint_io.per_rank_depth(4, 1023)``: ceil(knee / ranks) clamped to [1, nr_requests]."""
    return _call('per_rank_depth', _alignment_plan.per_rank_depth, knee, ranks_per_drive, nr_requests)


def finding_line(finding):
    """``findings | map('ai_storage.checkpoint_io.finding_line')``: one line per finding for messages and reports."""
    if not isinstance(finding, dict) or 'message' not in finding:
        raise AnsibleFilterError('finding_line: %r is not a finding of queue_alignment' % (finding,))
    device = finding.get('device')
    # the messages of queue_alignment mostly start with the device already
    where = ' %s' % device if device and not str(finding['message']).startswith('%s:' % device) else ''
    line = '%s%s: %s' % (finding.get('severity', 'info'), where, finding['message'])
    if finding.get('fix'):
        line += ' (fix: %s)' % finding['fix']
    return line


class FilterModule(object):
    """Queue-depth alignment filters."""

    def filters(self):
        return {
            'queue_alignment': queue_alignment,
            'knee_depth': knee_depth,
            'per_rank_depth': per_rank_depth,
            'finding_line': finding_line,
        }
