# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The option of every module that starts a detached job polled by checkpoint_job (module_utils/verify/fio_job.py).
    DOCUMENTATION = r'''
options:
  heartbeat:
    description:
      - With O(background=true), seconds the job lives without a poll by M(ai_storage.checkpoint_io.checkpoint_job)
        (every poll renews it). A controller killed, or its connection lost, stops polling, and the detached worker
        then ends fio and removes the run's files within this deadline instead of writing on until O(timeout).
        V(0) turns it off (the job then ends only at O(timeout) or when cancelled). 30 to 86400, or 0.
    type: int
    default: 300
    version_added: 0.9.0
'''
