# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over repeated measurements (documented in before_after.yml beside this file); the logic is in
module_utils/repeats.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils import repeats as _repeats


def before_after(before, after, same_settings=False, noise_floor=_repeats.NOISE_FLOOR):
    """``before_runs | ai_storage.checkpoint_io.before_after(after_runs, same)``: the verdict of a before/after."""
    try:
        return _repeats.compare(before, after, bool(same_settings), float(noise_floor))
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('before_after: %s' % exc)


class FilterModule(object):
    """Before/after verdicts over repeats."""

    def filters(self):
        return {'before_after': before_after}
