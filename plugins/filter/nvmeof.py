# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvmeof_rdma role's filters (documented in the .yml files of their names beside this file); the logic is in
module_utils/fabric/fabric_plan.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fabric import fabric_plan as _plan


def nvmeof_target_errors(targets):
    """``nvmeof_rdma_targets | ai_storage.checkpoint_io.nvmeof_target_errors``: every problem, [] when none."""
    if not isinstance(targets, list):
        return ['nvmeof_rdma_targets: %r is not a list of targets' % (targets,)]
    errors = []
    for index, target in enumerate(targets):
        errors += _plan.target_errors(target, index)
    return errors or _plan.duplicate_targets(targets)


def nvmeof_duplicate_identities(identities):
    """``{host: {hostnqn, hostid}} | ai_storage.checkpoint_io.nvmeof_duplicate_identities``: shared identities."""
    if not isinstance(identities, dict):
        raise AnsibleFilterError('nvmeof_duplicate_identities: %r is not a dict of hosts' % (identities,))
    return _plan.duplicate_identities(identities)


def nvmeof_persistence(connections, generation, text=None, hostnqn=None, hostid=None):
    """The persistence file's text for nvme-cli ``generation`` (2: discovery.conf with the role's block replaced in
    ``text``; 3: the nvme-fabrics.conf.d drop-in)."""
    try:
        keyed = [dict(c, key=tuple(c['key'])) for c in connections]
        if int(generation) >= 3:
            return _plan.fabrics_ini(keyed, hostnqn, hostid)
        return _plan.discovery_conf(text, keyed)
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError('nvmeof_persistence: %s' % exc)


def nvmeof_new_identity(seed=None):
    """A fresh {hostnqn, hostid} (``seed``: a UUID to derive it from, e.g. ``inventory_hostname | to_uuid``)."""
    try:
        return _plan.new_identity(seed)
    except ValueError as exc:
        raise AnsibleFilterError('nvmeof_new_identity: %s' % exc)


def nvmeof_iopolicy(kernel_release, asked='auto'):
    """``ansible_kernel | ai_storage.checkpoint_io.nvmeof_iopolicy(asked)``: {iopolicy, reason}."""
    return _plan.iopolicy_plan(kernel_release, asked)


def nvmeof_summary(connection):
    """One nvmeof_connect connection as the summary line shows it."""
    if not isinstance(connection, dict):
        raise AnsibleFilterError('nvmeof_summary: %r is not a connection' % (connection,))
    return _plan.summary(connection)


class FilterModule(object):
    """NVMe over Fabrics filters."""

    def filters(self):
        return {'nvmeof_target_errors': nvmeof_target_errors,
                'nvmeof_duplicate_identities': nvmeof_duplicate_identities,
                'nvmeof_persistence': nvmeof_persistence,
                'nvmeof_new_identity': nvmeof_new_identity,
                'nvmeof_iopolicy': nvmeof_iopolicy,
                'nvmeof_summary': nvmeof_summary}
