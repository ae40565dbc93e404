# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deepspeed_config role's values checked before anything is gathered or changed, and its plan of DeepSpeed's
checkpoint writer (documented in the .yml files beside this file); the code is in module_utils/deepspeed/."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import role_input_errors
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.writer import node_writer_plan


def deepspeed_config_inputs(values):
    """``{name: value} | ai_storage.checkpoint_io.deepspeed_config_inputs``: the messages of the bad values ([] when
    all hold)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError('deepspeed_config_inputs: %r is not a dict of variables' % (values,))
    return role_input_errors(dict(values))


def deepspeed_writer_plan(facts, options, aio, ranks, drives, engine_memlock=None):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.deepspeed_writer_plan(options, aio, ranks, drives,
    engine_memlock)``: the checkpoint.writer section for the node, each key with its reason, or why it is left
    alone."""
    if not isinstance(facts, dict) or not isinstance(options, dict) or not isinstance(aio, dict):
        raise AnsibleFilterError('deepspeed_writer_plan: expected the facts, the options and the aio values as '
                                 'dicts, got %s, %s, %s' % (type(facts).__name__, type(options).__name__,
                                                            type(aio).__name__))
    try:
        return node_writer_plan(facts, options, aio, int(ranks), list(drives or []), engine_memlock)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError('deepspeed_writer_plan: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'deepspeed_config_inputs': deepspeed_config_inputs, 'deepspeed_writer_plan': deepspeed_writer_plan}
