# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the collection's drive facts. Documentation: select_drives.yml, drive_verdict.yml and selection_problems.yml
beside this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.records import own_holders
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import (
    drive_verdict as _drive_verdict,
    select_drives as _select_drives,
    selection_problems as _selection_problems,
)


def select_drives(facts, selection, allow_mounted_by=None, allow_held_by=None):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.select_drives(checkpoint_io_data_drives)``.

    The holders of the collection's own checkpoint volume (the state section's ``volume``) are allowed with
    ``allow_held_by``: a second run still selects the members of the array the xfs role made."""
    try:
        held = list(allow_held_by or []) + [name for name in own_holders(facts) if name not in (allow_held_by or [])]
        return _select_drives(section(facts, 'nvme', required=True), selection, allow_mounted_by=allow_mounted_by,
                              allow_held_by=held or None)
    except ValueError as exc:
        raise AnsibleFilterError('select_drives: %s' % exc)


def selection_problems(facts, selection, force=None):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.selection_problems(checkpoint_io_data_drives)``: the
    messages that stop the selection on this node ([] when usable); never raises on a bad selection. ``force``: the
    xfs role's ``xfs_force``, checked against the node's namespaces too (when the run is to build the volume)."""
    try:
        nvme = section(facts, 'nvme', required=True)
    except ValueError as exc:
        return ['selection_problems: %s' % exc]
    return _selection_problems(nvme, selection, allow_held_by=own_holders(facts) or None, force=force)


def drive_verdict(selection, destructive=False):
    """``selection | ai_storage.checkpoint_io.drive_verdict(destructive=true)``: {errors, warnings} of a selection."""
    try:
        return _drive_verdict(selection, bool(destructive))
    except ValueError as exc:
        raise AnsibleFilterError('drive_verdict: %s' % exc)


class FilterModule(object):
    """The collection-wide data drive selection."""

    def filters(self):
        return {'select_drives': select_drives, 'drive_verdict': drive_verdict, 'selection_problems': selection_problems}
