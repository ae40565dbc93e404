#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_job
short_description: Poll, wait for or cancel a background checkpoint write or queue-depth sweep; reap dead runs
version_added: 0.2.0
description:
  - Follows a write that M(ai_storage.checkpoint_io.checkpoint_write) started in the background
    (O(ai_storage.checkpoint_io.checkpoint_write#module:background=true)). It waits up to O(wait) seconds for
    it, then returns its progress (RV(progress)) or, once fio has ended, the
    write's whole result (RV(result), the same keys as M(ai_storage.checkpoint_io.checkpoint_write) returns).
  - The job's worker removes the write's shards (unless it kept them, C(keep_files)) as soon as fio ends, whether
    anyone polls or not. Once the result is returned, the job is collected (its record removed) and what the
    worker could not remove (it was killed) is removed the way O(reap) does; a second poll of the same job fails,
    naming it.
  - A write that failed (fio's exit status, a timeout, output that cannot be reduced) fails this task with the
    write's message; its shards are removed the same way.
  - The same for a queue-depth sweep that M(ai_storage.checkpoint_io.queue_depth_sweep) started in the background;
    RV(progress) then says which depth and run it is at and the medians measured so far, and RV(result) is the
    sweep's whole result; a sweep that failed fails this task with its message.
  - With O(reap=true) (and no O(job_id)), it cleans what dead runs left on the node. A background job of another
    run that still runs is cancelled, since the node's run lease, held by the current run, says no other run of
    the collection may be writing there; a finished job nobody collected is collected; and every run directory
    recorded in the state store (record C(scratch)) whose owner is gone (a play killed mid-write, a reboot) or
    that belongs to another run is removed, after the processes still holding its files open are killed. Only
    what the run recorded, at the inodes it recorded, is removed. The preflight role runs it right after it takes
    the lease.
  - Why not Ansible's C(async) with C(async_status)? Under Mitogen (mitogen_linear 0.3.54, ansible-core 2.19)
    an async task of a collection module never starts (measured). This pair runs under every strategy.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Linux (the job's processes are found through /proc).
notes:
  - Reading a job changes nothing on the node until the job is finished; collecting a finished job removes only
    the job's own folder in O(job_store) and the files its run made, never anything else, so C(changed) is
    V(false) for a poll; with O(reap=true), C(changed) says whether anything was cancelled or removed.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: partial
    details: With O(reap=true) it reports what it would cancel and remove and changes nothing. A poll or a cancel
      does nothing in check mode (the write it follows never runs in check mode).
  diff_mode:
    support: none
  platform:
    platforms: linux
options:
  job_id:
    description:
      - RV(ai_storage.checkpoint_io.checkpoint_write#module:job_id) of the write, or
        RV(ai_storage.checkpoint_io.queue_depth_sweep#module:job_id) of the sweep. Required unless O(reap=true).
    type: str
  wait:
    description:
      - Seconds to wait for the write to finish before returning its progress, a number from 0 to 3600.
    type: raw
    default: 5
  cancel:
    description:
      - End the write or sweep (TERM, then KILL after 10 s, to every process of its session), remove its shards
        (a sweep removes its scratch files on TERM) and collect the job.
    type: bool
    default: false
  max_runtime:
    description:
      - Seconds since the job started (its record, the node's clock) after which a poll ends it as O(cancel) does
        and fails, naming the limit - the poll loops of the roles end by it whatever the node says. Unset, no
        limit (the worker still ends fio at the module's own C(timeout)).
    type: int
    version_added: 0.9.0
  until_finished:
    description:
      - Whether this task waits until the job has ended, one O(wait) after another, showing RV(progress_line) after
        each (the action plugin calls the module again; the recap counts one task, not one per wait).
      - V(null) (the default) - until it has ended when every host of the play's batch has a fork of its own
        (C(ansible_play_batch) no longer than C(--forks)), so that no host's job waits unpolled for another host's
        wait to end (the job's heartbeat would stop it); otherwise, and with V(false), one O(wait) per task, the
        play including its poll again.
    type: bool
    version_added: 0.12.0
  job_store:
    description:
      - The job store the write was started in.
    type: path
    default: /run/ai_storage_checkpoint_io/jobs
  reap:
    description:
      - Clean what dead runs left (see the description) instead of following one job.
    type: bool
    default: false
    version_added: 0.3.0
  state_dir:
    description:
      - The collection's state directory (the record C(scratch) of the run directories, the node's run lease).
      - Checked before anything is done; refused when it is not an absolute path, is a symlink or not a directory,
        belongs to another user or is writable by group or others, or holds a record C(scratch) that is not
        valid JSON. A missing one is made (root-owned, mode 0755) on the first write.
    type: path
    default: /var/lib/ai_storage_checkpoint_io
    version_added: 0.3.0
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

- name: Wait for it, its progress shown every 10 s (one task, however long it takes)
  ai_storage.checkpoint_io.checkpoint_job:
    job_id: "{{ job.job_id }}"
    wait: 10
    until_finished: true
  register: written

- name: Report
  ansible.builtin.debug:
    msg: "{{ written.result.throughput_gib_s | round(2) }} GiB/s"

- name: A queue-depth sweep in the background, its progress shown by each poll
  ai_storage.checkpoint_io.queue_depth_sweep:
    directory: /mnt/checkpoints
    ranks: 8
    background: true
  register: sweep_job

- name: Poll the sweep once (on a fleet larger than the forks, the play includes this again until it is finished)
  ai_storage.checkpoint_io.checkpoint_job:
    job_id: "{{ sweep_job.job_id }}"
    wait: 10
    until_finished: false
  register: sweep

- name: After taking the node's run lease, clean what dead runs left
  ai_storage.checkpoint_io.checkpoint_job:
    reap: true
'''

RETURN = r'''
job_id:
  description: O(job_id) as given.
  returned: always
  type: str
  sample: after.k2j4x9_a
reaped:
  description: What O(reap=true) did (in check mode, would do).
  returned: O(reap=true)
  type: dict
  contains:
    run:
      description: The run that holds the node's lease (its jobs and run directories are kept), V(null) without
        a lease.
      type: str
      returned: always
      sample: tune_checkpoint_nodes.ctl1.4242.1733100000
    jobs:
      description: The background jobs of dead runs, C({job_id, kind, run_id, action}) each, C(action) one of
        V(cancelled), V(collected), V(kept).
      type: list
      elements: dict
      returned: always
    run_dirs:
      description: The recorded run directories removed, C({run_dir, reason, removed, left}) each (C(left) names
        what was not removed because it was no longer the run's own).
      type: list
      elements: dict
      returned: always
    kept:
      description: The recorded run directories kept, their owner still running, C({run_dir, reason}) each.
      type: list
      elements: dict
      returned: always
    errors:
      description: Records or directories that could not be read or reached.
      type: list
      elements: str
      returned: always
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
    drives:
      description:
        - A write with O(ai_storage.checkpoint_io.checkpoint_write#module:sample_drives) - per namespace, its last
          sample - C(bw_bytes) (bytes per second since the sample before), C(temp_c), C(critical_warning).
      type: dict
      returned: for a write that samples its drives
      sample: {nvme1n1: {bw_bytes: 73400320, temp_c: 49.85, critical_warning: 0}}
progress_line:
  description: RV(progress) in the line a person reads (the action plugin shows it after each wait that did not
    end the job).
  returned: with RV(progress)
  type: str
  sample: "after 1/3: 12.5 s, 3.00 of 64.00 GiB written, 245.8 MiB/s so far"
polls:
  description: How many waits this task made (more than one with O(until_finished)).
  returned: when O(job_id) is given
  type: int
  sample: 4
result:
  description: The result of M(ai_storage.checkpoint_io.checkpoint_write) for the write (throughput_gib_s,
    duration_s, per_rank, ...), or of M(ai_storage.checkpoint_io.queue_depth_sweep) for a sweep (curve, knee,
    per_rank_depth, ...), once it is finished.
  returned: when finished and successful
  type: dict
  sample: {throughput_gib_s: 6.42, duration_s: 9.967, total_gib: 64.0, ranks: 8, queue_depth: 16}
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job, job_progress
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch_reap
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import int_in_range, number
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR

MAX_WAIT_S = 3600
MAX_RUNTIME_S = 7 * 86400
KINDS = {'checkpoint_write': 'write', 'queue_depth_sweep': 'sweep'}


def progress(record, job_id, store, done=False):
    """How far the job is: a write's bytes from its worker's last report, a sweep's depth and medians."""
    doc = fio_job.call_progress(job_id, store)
    elapsed = round(max(0.0, time.time() - record['started']), 3)
    if record.get('kind') == 'queue_depth_sweep':
        written = doc.get('bytes_written') or 0
        return dict(elapsed_s=elapsed, bytes_written=written, total_bytes=None,
                    bw_bytes_so_far=int(written / elapsed) if elapsed > 0 else 0, depth=doc.get('depth'),
                    repeat=doc.get('repeat'), repeats=record.get('repeats'), points=doc.get('points') or [],
                    last_bw_bytes=doc.get('last_bw_bytes'))
    total = record.get('total_bytes')
    written = total if done else min(total or 0, doc.get('bytes_written') or 0)
    out = dict(elapsed_s=elapsed, bytes_written=written, total_bytes=total,
               bw_bytes_so_far=int(written / elapsed) if elapsed > 0 else 0)
    if doc.get('drives') is not None:
        out['drives'] = doc['drives']
    return out


def with_progress(response, record, job_id, store, done=False):
    """``response`` with the job's ``progress`` and its ``progress_line``."""
    response['progress'] = progress(record, job_id, store, done=done)
    response['progress_line'] = job_progress.line(record.get('kind'), record.get('label'), response['progress'])
    return response


def reap(module, params):
    """Cancel or collect the jobs of dead runs, then remove the run directories they (or dead foreground modules)
    left; in check mode only say so."""
    check = module.check_mode
    current = scratch.current_run(params['state_dir'])
    jobs = []
    for record in fio_job.jobs(params['job_store']):
        if record.get('state_dir', STATE_DIR) != params['state_dir']:
            continue  # a job of another state directory answers to another lease
        job_id = record.get('job_id')
        entry = dict(job_id=job_id, kind=record.get('kind'), run_id=record.get('run_id'), action='kept')
        running = fio_job.session_alive(record)
        if record.get('run_id') == current and current is not None:
            pass  # this run's own job
        elif running and current is None:
            pass  # nothing says it is dead: no run holds the node
        else:
            entry['action'] = 'cancelled' if running else 'collected'
            if not check:
                if running:
                    fio_job.cancel(job_id, params['job_store'])
                fio_job.collect(job_id, params['job_store'])
        jobs.append(entry)
    dirs = scratch_reap.reap(params['state_dir'], current, check_mode=check)
    reaped = dict(run=current, jobs=jobs, run_dirs=dirs['reaped'], kept=dirs['kept'], errors=dirs['errors'])
    changed = bool(dirs['reaped']) or any(job['action'] != 'kept' for job in jobs)
    module.exit_json(changed=changed, reaped=reaped, job_id=None, finished=True, cancelled=False, label=None)


def main():
    module = AnsibleModule(argument_spec=dict(
        job_id=dict(type='str'),
        wait=dict(type='raw', default=5),
        cancel=dict(type='bool', default=False),
        max_runtime=dict(type='int'),
        job_store=dict(type='path', default=fio_job.JOB_STORE),
        reap=dict(type='bool', default=False),
        state_dir=dict(type='path', default=STATE_DIR),
        until_finished=dict(type='bool'),  # the action plugin's (it calls this module once per wait)
    ), supports_check_mode=True, required_one_of=[('job_id', 'reap')], mutually_exclusive=[('job_id', 'reap')])
    params = module.params
    job_id, store = params['job_id'], params['job_store']
    response = dict(changed=False, job_id=job_id, finished=False, cancelled=False, label=None)
    try:
        fio_job.check_store_path(params['job_store'])
        scratch.check_state_dir(params['state_dir'])
        if not params['reap']:
            params['wait'] = number(params['wait'], 'wait')
        if params['max_runtime'] is not None:
            int_in_range(params['max_runtime'], 'max_runtime', 1, MAX_RUNTIME_S)
    except (ValueError, fio_job.JobError, scratch.ScratchError) as exc:
        module.fail_json(msg=str(exc), **response)
    if params['reap']:
        reap(module, params)
    if module.check_mode:
        module.exit_json(skipped=True, msg='check mode: the job is not polled (nothing is written in check mode)',
                         **response)
    if not 0 <= params['wait'] <= MAX_WAIT_S:
        module.fail_json(msg='wait: %s is outside 0..%d seconds' % (params['wait'], MAX_WAIT_S), **response)
    try:
        record = fio_job.load(job_id, store)
        kind = KINDS.get(record.get('kind'))
        if kind is None:
            module.fail_json(msg='job %s is a %s job, not a checkpoint write or a queue depth sweep'
                             % (job_id, record.get('kind')), **response)
        response['label'] = record.get('label')
        overdue = (params['max_runtime'] is not None and not params['cancel']
                   and time.time() - float(record.get('started') or 0) > params['max_runtime'])
        if overdue:
            cancelled = fio_job.cancel(job_id, store)
            with_progress(response, record, job_id, store).update(finished=True, cancelled=cancelled)
            fio_job.collect(job_id, store)
            scratch_reap.reap(params['state_dir'], job_id=job_id)
            module.fail_json(msg='%s: the %s ran past max_runtime %d s: it was %s (fio ended, its files removed)'
                             % (job_id, kind, params['max_runtime'], 'cancelled' if cancelled else 'collected'),
                             **response)
        if params['cancel']:
            response['cancelled'] = fio_job.cancel(job_id, store)
            with_progress(response, record, job_id, store)['finished'] = True
            fio_job.collect(job_id, store)
            scratch_reap.reap(params['state_dir'], job_id=job_id)  # what a worker killed after the grace left
            module.exit_json(**response)
        record, ended = fio_job.poll(job_id, params['wait'], store)
    except fio_job.JobError as exc:
        module.fail_json(msg=str(exc), **response)
    if ended is None:
        module.exit_json(**with_progress(response, record, job_id, store))
    done = fio_job.call_outcome(job_id, store)
    with_progress(response, record, job_id, store, done=bool(done and done['ok']))['finished'] = True
    fio_job.collect(job_id, store)
    scratch_reap.reap(params['state_dir'], job_id=job_id)  # nothing, unless the worker was killed before its cleanup
    if done is None:
        module.fail_json(msg='%s: the %s ended without a result (killed from outside the module?)' % (job_id, kind),
                         **response)
    if not done['ok']:
        module.fail_json(msg='%s: %s' % (job_id, done['msg']), result=done.get('result'), **response)
    module.exit_json(result=done['result'], **response)


if __name__ == '__main__':
    main()
