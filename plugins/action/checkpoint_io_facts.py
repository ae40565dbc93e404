# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin in front of the checkpoint_io_facts module: a subset gather keeps the sections it did not gather.

ansible-core merges facts one level deep, so without this every call with a smaller ``gather_subset`` would replace
all of ``ansible_facts.checkpoint_io``. The module runs on the node as usual; this merges its result into the
host's current facts (module_utils/facts/fact_merge.py) unless ``merge: false``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.fact_merge import merge_facts


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        # null is the default (merge); a value that is not a boolean is refused by the module (nothing merged then)
        merge = args.get('merge')
        merge = True if merge is None else boolean(merge, strict=False)
        result.update(self._execute_module(module_name='ai_storage.checkpoint_io.checkpoint_io_facts',
                                           module_args=args, task_vars=task_vars))
        new = (result.get('ansible_facts') or {}).get('checkpoint_io')
        if merge and not result.get('failed') and isinstance(new, dict):
            current = (task_vars.get('ansible_facts') or {}).get('checkpoint_io')
            try:
                result['ansible_facts']['checkpoint_io'] = merge_facts(current, new)
            except ValueError as exc:
                result.update(failed=True, msg='checkpoint_io_facts: the facts could not be merged: %s' % exc)
        return result
