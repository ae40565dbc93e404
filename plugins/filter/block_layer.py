# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The block_layer role's variables and files checked before anything is gathered or changed (documented in
block_layer_inputs.yml and block_layer_file_problems.yml beside this file); the checks are in
module_utils/block/block_queue.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block.block_queue import (
    role_file_problems,
    role_input_errors,
)


def block_layer_inputs(values, names=None):
    """``{name: value} | ai_storage.checkpoint_io.block_layer_inputs(names)``: the messages of the bad values ([]
    when all hold); ``names``: every block_layer_* variable set (a name the role does not have is refused)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError('block_layer_inputs: %r is not a dict of variables' % (values,))
    return role_input_errors(dict(values), names)


def block_layer_file_problems(found, wanted):
    """``find_result | ai_storage.checkpoint_io.block_layer_file_problems({variable: path})``: the messages of the
    files the role writes that are a directory or a symlink, or whose directory is missing."""
    if not isinstance(wanted, dict):
        raise AnsibleFilterError('block_layer_file_problems: %r is not a dict of paths' % (wanted,))
    return role_file_problems(found if isinstance(found, dict) else {}, wanted)


class FilterModule(object):
    def filters(self):
        return {'block_layer_inputs': block_layer_inputs, 'block_layer_file_problems': block_layer_file_problems}
