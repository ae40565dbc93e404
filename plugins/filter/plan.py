# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-rank queue depth's one default and sizing, for roles used on their own (module_utils/plan/depth.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan import depth as _depth


def queue_depth_default(value):
    """``role_queue_depth | ai_storage.checkpoint_io.queue_depth_default``: the value, or the one default when
    unset (None or an empty string)."""
    return _depth.DEFAULT_QUEUE_DEPTH if value is None or value == '' else value


def queue_depth_sizing(value, sweep_depths=None):
    """``queue_depth | ai_storage.checkpoint_io.queue_depth_sizing(sweep_depths)``: the per-rank depth the layers in
    front of DeepSpeed are sized for (the depth, or with auto the deepest the sweep tries)."""
    try:
        return _depth.sizing_depth(None if value == '' else value, sweep_depths)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('queue_depth_sizing: %r is not a per-rank depth or auto (%s)' % (value, exc))


class FilterModule(object):
    """The per-rank queue depth."""

    def filters(self):
        return {'queue_depth_default': queue_depth_default, 'queue_depth_sizing': queue_depth_sizing}
