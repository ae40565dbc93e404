# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the checkpoint volume (the xfs role). Each filter is documented in the YAML file of its name
beside this file; the logic is in module_utils/xfs/xfs_plan.py, mount_options.py (pure functions, unit tested)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import wipefs as _wipefs
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import mount_options as _mount_options
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import xfs_plan as _plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import force_names
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import log_device_check, select_drives


def _settings(settings, name):
    if not isinstance(settings, dict):
        raise AnsibleFilterError('%s: expected a dict of settings, got %s' % (name, type(settings).__name__))
    return settings


def xfs_volume_plan(facts, selection, settings, target_size_bytes=None, allow_held_by=None):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.xfs_volume_plan(checkpoint_io_data_drives,
    settings, target_size_bytes, allow_held_by)``: the drive selection and the volume plan."""
    settings = _settings(settings, 'xfs_volume_plan')
    try:
        nvme_facts = section(facts, 'nvme', required=True)
    except ValueError as exc:
        raise AnsibleFilterError('xfs_volume_plan: %s' % exc)
    try:
        mount_point = _mount_options.normalize_mount_point(settings.get('mount_point'))
    except ValueError:
        mount_point = None  # reported by plan_volume
    try:
        chosen = select_drives(nvme_facts, selection, allow_mounted_by=[mount_point] if mount_point else None,
                               allow_held_by=allow_held_by or None)
    except ValueError as exc:
        raise AnsibleFilterError('xfs_volume_plan: %s' % exc)
    if target_size_bytes in ('', 0):
        target_size_bytes = None
    if target_size_bytes is not None:
        try:
            target_size_bytes = int(target_size_bytes)
        except (TypeError, ValueError):
            raise AnsibleFilterError('xfs_volume_plan: target_size_bytes must be an integer, got %r'
                                     % (target_size_bytes,))
    log = {'errors': [], 'identity': None}
    if isinstance(settings.get('log_device'), str) and settings['log_device'].startswith('/dev/'):
        log = log_device_check(nvme_facts, settings['log_device'], settings.get('log_device_resolved'),
                               chosen['selected'], allow_mounted_by=[mount_point] if mount_point else None,
                               allow_held_by=allow_held_by or None)
    plan = _plan.plan_volume(chosen['selected'], (nvme_facts or {}).get('controllers'), settings,
                             target_size_bytes=target_size_bytes, log_identity=log['identity'])
    plan['errors'].extend(log['errors'])
    plan['selection'] = chosen
    return plan


def xfs_settings_errors(settings, given_only=False):
    """``__xfs_settings | ai_storage.checkpoint_io.xfs_settings_errors``: what is wrong with the settings alone.
    ``given_only``: only the errors of the settings in the dict (the first play checks what the inventory gives,
    the role's defaults filling the rest later)."""
    settings = _settings(settings, 'xfs_settings_errors')
    errors = _plan.settings_errors(settings)
    if given_only:
        errors = [e for e in errors if any(e.startswith('xfs_%s:' % key) or e.startswith('xfs_%s ' % key)
                                           for key in settings)]
    return errors


def xfs_signature_verdicts(wipefs_output, devices, ours=None, force=None):
    """``probe.stdout | ai_storage.checkpoint_io.xfs_signature_verdicts(devices, ours, force)``."""
    try:
        verdicts = _wipefs.signature_verdicts(wipefs_output, devices, ours or {})
        if force is None:
            return verdicts
        return _plan.forced_verdicts(verdicts, devices, force_names(force, 'xfs_force'))
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('xfs_signature_verdicts: %s' % exc)


def xfs_revert_plan(facts, record, force=None):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.xfs_revert_plan(record, xfs_force)``."""
    try:
        namespaces = section(facts, 'nvme', required=True).get('namespaces')
    except ValueError as exc:
        raise AnsibleFilterError('xfs_revert_plan: %s' % exc)
    return _plan.revert_plan(namespaces, record, force)


def xfs_verify_volume(facts, plan):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.xfs_verify_volume(plan)``: mismatches."""
    if not isinstance(plan, dict):
        raise AnsibleFilterError('xfs_verify_volume: expected the plan dict, got %s' % type(plan).__name__)
    try:
        filesystems = section(facts, 'xfs', required=True).get('filesystems')
    except ValueError as exc:
        raise AnsibleFilterError('xfs_verify_volume: %s' % exc)
    found = None
    for entry in filesystems or []:
        if isinstance(entry, dict) and entry.get('mount_point') == plan.get('mount_point'):
            found = entry
    return _plan.verify_volume(plan, found)


class FilterModule(object):
    """Checkpoint volume (xfs role) filters."""

    def filters(self):
        return {
            'xfs_volume_plan': xfs_volume_plan,
            'xfs_signature_verdicts': xfs_signature_verdicts,
            'xfs_verify_volume': xfs_verify_volume,
            'xfs_revert_plan': xfs_revert_plan,
            'xfs_settings_errors': xfs_settings_errors,
        }
