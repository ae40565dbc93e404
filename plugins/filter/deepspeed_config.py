# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deepspeed_config role's values checked before anything is gathered or changed (documented in
deepspeed_config_inputs.yml beside this file); the checks are in module_utils/deepspeed/deepspeed.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import role_input_errors


def deepspeed_config_inputs(values):
    """``{name: value} | ai_storage.checkpoint_io.deepspeed_config_inputs``: the messages of the bad values ([] when
    all hold)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError('deepspeed_config_inputs: %r is not a dict of variables' % (values,))
    return role_input_errors(dict(values))


class FilterModule(object):
    def filters(self):
        return {'deepspeed_config_inputs': deepspeed_config_inputs}
