# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the training user's io_uring access (the io_uring_engine role): the memlock limit, the io_uring
group's other members, the role's record. Each filter is documented in the YAML file of its name beside this file;
the logic is in module_utils/io_uring/engine_access.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring import engine_access as _access


def engine_memlock_plan(value, options, io_uring=None, recorded=None):
    """``io_uring_engine_memlock | ai_storage.checkpoint_io.engine_memlock_plan(options, io_uring, recorded)``."""
    if not isinstance(options, dict):
        raise AnsibleFilterError('engine_memlock_plan: expected a dict of options, got %s' % type(options).__name__)
    return _access.memlock_plan(value, options, io_uring, recorded)


def engine_shared_group(group, passwd=None, training_user=None, found_gid=None, allow_shared=False):
    """``group | ai_storage.checkpoint_io.engine_shared_group(passwd, user, found_gid, allow)``: its other users."""
    return _access.shared_group(group, passwd, training_user, found_gid, allow_shared)


def engine_access_record(previous, found=None):
    """``record | ai_storage.checkpoint_io.engine_access_record(found)``: the record with this run's changes."""
    if previous is not None and not isinstance(previous, dict):
        raise AnsibleFilterError('engine_access_record: expected the record (a dict), got %s'
                                 % type(previous).__name__)
    return _access.access_record(previous, found)


class FilterModule(object):
    """io_uring access filters."""

    def filters(self):
        return {
            'engine_memlock_plan': engine_memlock_plan,
            'engine_shared_group': engine_shared_group,
            'engine_access_record': engine_access_record,
        }
