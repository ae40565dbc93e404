#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_job
short_description: Poll, wait for or cancel a checkpoint write or a queue-depth sweep started in the background
version_added: 0.2.0
description:
  - Follows a write that M(ai_storage.checkpoint_io.checkpoint_write) started in the background
    (O(ai_storage.checkpoint_io.checkpoint_write#module:background=true)). It waits up to O(wait) seconds for
    it, then returns its progress (RV(progress)) or, once fio has ended, the
    write's whole result (RV(result), the same keys as M(ai_storage.checkpoint_io.checkpoint_write) returns).
  - Once the result is returned, the job is collected (its record and fio's output removed) and the shards are
    removed unless the write kept them (C(keep_files)); a second poll of the same job fails, naming it.
  - A write that failed (fio's exit status, a timeout, output that cannot be reduced) fails this task with the
    write's message; its shards are removed the same way.
  - The same for a queue-depth sweep that M(ai_storage.checkpoint_io.queue_depth_sweep) started in the background;
    RV(progress) then says which depth and run it is at and the medians measured so far, and RV(result) is the
    sweep's whole result; a sweep that failed fails this task with its message.
  - Why not Ansible's C(async) with C(async_status)? Under Mitogen (mitogen_linear 0.3.54, ansible-core 2.19)
    an async task of a collection module never starts (measured). This pair runs under every strategy.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Linux (the job's processes are found through /proc).
notes:
  - Reading a job changes nothing on the node until the job is finished; collecting a finished job removes only
    the job's own folder in O(job_store) and the shards of its write, never anything else, so C(changed) is
    always V(false).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: none
    details: The write it follows never runs in check mode; Ansible skips the task in check mode.
  diff_mode:
    support: none
  platform:
    platforms: linux
options:
  job_id:
    description:
      - RV(ai_storage.checkpoint_io.checkpoint_write#module:job_id) of the write, or
        RV(ai_storage.checkpoint_io.queue_depth_sweep#module:job_id) of the sweep.
    type: str
    required: true
  wait:
    description:
      - Seconds to wait for the write to finish before returning its progress, 0 to 3600.
    type: float
    default: 5
  cancel:
    description:
      - End the write or sweep (TERM, then KILL after 10 s, to every process of its session), remove its shards
        (a sweep removes its scratch files on TERM) and collect the job.
    type: bool
    default: false
  job_store:
    description:
      - The job store the write was started in.
    type: path
    default: /run/ai_storage_checkpoint_io/jobs
'''

EXAMPLES = r'''
- name: Start the write
  ai_storage.checkpoint_io.checkpoint_write:
    directories: [/mnt/checkpoints/bench]
    ranks: 8
    total_size: 64G
    background: true
    label: after
  register: job

- name: Wait for it, showing nothing but retries
  ai_storage.checkpoint_io.checkpoint_job:
    job_id: "{{ job.job_id }}"
    wait: 10
  register: written
  until: written.finished
  retries: 360
  delay: 0

- name: Report
  ansible.builtin.debug:
    msg: "{{ written.result.throughput_gib_s | round(2) }} GiB/s"

- name: A queue-depth sweep in the background, its progress shown by each poll
  ai_storage.checkpoint_io.queue_depth_sweep:
    directory: /mnt/checkpoints
    ranks: 8
    background: true
  register: sweep_job

- name: Poll the sweep
  ai_storage.checkpoint_io.checkpoint_job:
    job_id: "{{ sweep_job.job_id }}"
    wait: 10
  register: sweep
  until: sweep.finished
  retries: 360
  delay: 0
'''

RETURN = r'''
job_id:
  description: O(job_id) as given.
  returned: always
  type: str
  sample: after.k2j4x9_a
finished:
  description: Whether the write has ended (its result is in RV(result)).
  returned: always
  type: bool
  sample: false
cancelled:
  description: Whether O(cancel=true) ended a running write.
  returned: always
  type: bool
  sample: false
label:
  description: The write's label.
  returned: always
  type: str
  sample: after
progress:
  description: How far the write is, from the allocated blocks of its shard files (raw devices - the sectors they
    wrote since the write started).
  returned: always
  type: dict
  contains:
    elapsed_s:
      description: Seconds since the write started.
      type: float
      returned: always
      sample: 12.5
    bytes_written:
      description: Bytes on the shards so far (all of them once finished).
      type: int
      returned: always
      sample: 3221225472
    total_bytes:
      description: Bytes the write writes in all (V(null) for a sweep, which ends at the plateau).
      type: int
      returned: always
      sample: 68719476736
    bw_bytes_so_far:
      description: RV(progress.bytes_written) / RV(progress.elapsed_s).
      type: int
      returned: always
      sample: 257698037
    depth:
      description: A sweep's depth being measured (V(null) during its scratch layout).
      type: int
      returned: for a sweep
      sample: 8
    repeat:
      description: A sweep's run of that depth (1-based), of RV(progress.repeats).
      type: int
      returned: for a sweep
      sample: 2
    repeats:
      description: A sweep's runs per depth.
      type: int
      returned: for a sweep
      sample: 3
    points:
      description: A sweep's depths measured so far, C({depth, bw_bytes, spread}) each (median of the runs).
      type: list
      elements: dict
      returned: for a sweep
    last_bw_bytes:
      description: A sweep's bandwidth of its last run, bytes per second.
      type: int
      returned: for a sweep
      sample: 52428800
result:
  description: The result of M(ai_storage.checkpoint_io.checkpoint_write) for the write (throughput_gib_s,
    duration_s, per_rank, ...), or of M(ai_storage.checkpoint_io.queue_depth_sweep) for a sweep (curve, knee,
    per_rank_depth, ...), once it is finished.
  returned: when finished and successful
  type: dict
  sample: {throughput_gib_s: 6.42, duration_s: 9.967, total_gib: 64.0, ranks: 8, queue_depth: 16}
'''

import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils import fio_job
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.ckpt_write import outcome_result
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fio_runner import remove, written_so_far

MAX_WAIT_S = 3600


def progress(record, done):
    total = record['total_bytes']
    elapsed = round(max(0.0, time.time() - record['started']), 3)
    written = total if done else min(total, written_so_far(record['files'], record['shard_bytes'], record.get('start_sectors')))
    return dict(elapsed_s=elapsed, bytes_written=written, total_bytes=total,
                bw_bytes_so_far=int(written / elapsed) if elapsed > 0 else 0)


def sweep_progress(record, job_id, store):
    doc = fio_job.call_progress(job_id, store)
    elapsed = round(max(0.0, time.time() - record['started']), 3)
    written = doc.get('bytes_written') or 0
    return dict(elapsed_s=elapsed, bytes_written=written, total_bytes=None,
                bw_bytes_so_far=int(written / elapsed) if elapsed > 0 else 0, depth=doc.get('depth'),
                repeat=doc.get('repeat'), repeats=record.get('repeats'), points=doc.get('points') or [],
                last_bw_bytes=doc.get('last_bw_bytes'))


def sweep_main(module, params, record, response):
    """A background queue-depth sweep: its progress, or its result once it has ended."""
    job_id, store = params['job_id'], params['job_store']
    response['label'] = record.get('label')
    if params['cancel']:
        response['cancelled'] = fio_job.cancel(job_id, store)
        response.update(finished=True, progress=sweep_progress(record, job_id, store))
        fio_job.collect(job_id, store)
        module.exit_json(**response)
    record, outcome = fio_job.poll(job_id, params['wait'], store)
    response['progress'] = sweep_progress(record, job_id, store)
    if outcome is None:
        module.exit_json(**response)
    done = fio_job.call_outcome(job_id, store)
    fio_job.collect(job_id, store)
    response['finished'] = True
    if done is None:
        module.fail_json(msg='%s: the sweep ended without a result (killed from outside the module?)' % job_id,
                         **response)
    if not done['ok']:
        module.fail_json(msg='%s: %s' % (job_id, done['msg']), result=done.get('result'), **response)
    module.exit_json(result=done['result'], **response)


def finish(record):
    """Remove the write's shards unless it kept them; the list of the kept ones."""
    if record.get('keep_files'):
        return [path for path in record['files'] if os.path.exists(path)]
    for path in record['files']:
        remove(path)
    return []


def main():
    module = AnsibleModule(argument_spec=dict(
        job_id=dict(type='str', required=True),
        wait=dict(type='float', default=5),
        cancel=dict(type='bool', default=False),
        job_store=dict(type='path', default=fio_job.JOB_STORE),
    ), supports_check_mode=False)
    params = module.params
    job_id = params['job_id']
    response = dict(changed=False, job_id=job_id, finished=False, cancelled=False, label=None)
    if not 0 <= params['wait'] <= MAX_WAIT_S:
        module.fail_json(msg='wait: %s is outside 0..%d seconds' % (params['wait'], MAX_WAIT_S), **response)
    try:
        record = fio_job.load(job_id, params['job_store'])
        if record.get('kind') == 'queue_depth_sweep':
            sweep_main(module, params, record, response)
        if record.get('kind') != 'checkpoint_write':
            module.fail_json(msg='job %s is a %s job, not a checkpoint write or a queue depth sweep'
                             % (job_id, record.get('kind')), **response)
        response['label'] = record['result'].get('label')
        if params['cancel']:
            response['cancelled'] = fio_job.cancel(job_id, params['job_store'])
            finish(record)
            fio_job.collect(job_id, params['job_store'])
            response.update(finished=True, progress=progress(record, False))
            module.exit_json(**response)
        record, outcome = fio_job.poll(job_id, params['wait'], params['job_store'])
    except fio_job.JobError as exc:
        module.fail_json(msg=str(exc), **response)
    if outcome is None:
        response['progress'] = progress(record, False)
        module.exit_json(**response)
    result, error = outcome_result(record['result'], record['layout'], outcome, record['timeout'])
    response.update(finished=True, progress=progress(record, error is None))
    result['files_kept'] = finish(record)
    fio_job.collect(job_id, params['job_store'])
    if error:
        module.fail_json(msg='%s: %s' % (job_id, error), result=result, **response)
    module.exit_json(result=result, **response)


if __name__ == '__main__':
    main()
