# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of a measurement's preconditions and of the drives' health around it (module_utils/nvme/drive_health.py).
Documentation: the .yml files beside this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import drive_health as _health


def drive_health(facts, dirs=None, ioengine=None, before=None, failed=False, write=None):
    try:
        return _health.health(facts, dirs, ioengine, before, failed, write)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('drive_health: %s' % exc)


def drives_behind(facts, dirs):
    try:
        return _health.names_behind(facts, list(dirs or []))
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('drives_behind: %s' % exc)


def drive_writes(after, before, endurance=None):
    try:
        return _health.writes_between(before, after, endurance)
    except (ValueError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError('drive_writes: %s' % exc)


class FilterModule(object):
    """A measurement's preconditions and the drives' health around it."""

    def filters(self):
        return {'drive_health': drive_health, 'drives_behind': drives_behind, 'drive_writes': drive_writes}
