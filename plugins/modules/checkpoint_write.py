#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_write
short_description: Write a checkpoint the way training does (one shard per rank) and report it like MLPerf Storage
version_added: 0.2.0
description:
  - Writes one shard file C(rank_<N>.ckpt) per rank with one fio run (one job per rank, all ranks at once), the
    ranks spread round-robin over O(directories), for example one directory per checkpoint volume.
  - The shards are made in a directory made for the run in each of O(directories)
    (C(.checkpoint_io.<label>.<random>), owned by root, mode 0700), with C(O_CREAT|O_EXCL|O_NOFOLLOW), through
    descriptors opened from C(/) without following a symlink another user could plant; fio writes them through
    C(/proc/self/fd/<N>). A training user who owns the checkpoint directory cannot redirect the write (a planted
    C(rank_0.ckpt) symlink, a renamed or replaced run directory), and nothing the run did not make is removed (a
    C(rank_<N>.ckpt) already in the directory is never touched). RV(safety) names the path components other users
    can write and says how the run is made safe despite them.
  - Each run is recorded in the state store (record C(scratch)) before anything is made, and the record is dropped
    once its files are removed; what a killed run left is removed by
    M(ai_storage.checkpoint_io.checkpoint_job) with O(ai_storage.checkpoint_io.checkpoint_job#module:reap=true)
    (the preflight role runs it after it takes the node's run lease).
  - fio runs as one process (C(--thread)) in the module's process group and dies with the module (a timeout,
    SIGTERM, SIGINT or SIGHUP to the module, a kill of its process group by Ansible's C(async), or of the module
    alone), and the module then removes the run's files.
  - Each rank writes its shard sequentially with O(block_size) requests, O(queue_depth) in flight, with
    O(ioengine), O_DIRECT (O(direct)) and a final fsync (O(fsync)), so a rank's time ends when its data is on media.
    fio 3.33 counts the final fsync in a job's runtime (measured with strace); the module also reports the wall
    time of the whole fio process (RV(wall_s)).
  - Results follow MLPerf Storage checkpointing (GiB = 1024^3 bytes). The checkpoint is saved when its slowest
    rank is, so RV(duration_s) is the longest rank time and RV(throughput_gib_s) is the checkpoint size divided
    by it. Per-rank bandwidths and the depth each rank actually reached (RV(iodepth_max_achieved)) show
    stragglers and engines that never reached the asked depth.
  - Shards are sized with ftruncate before writing (sparse until written; fio C(fallocate=none)). Direct
    writes then never extend the file; on XFS a direct write beyond EOF drains all direct I/O in flight, which
    would make O(queue_depth) meaningless.
  - Refused before anything is written, with the value and the limit in the message. A directory that is not
    absolute, missing or not a directory, or reached through a symlink that lies in a directory another user can
    write; O(ranks) outside 1..1024; O(queue_depth) outside 1..65535;
    O(block_size) not a multiple of 4096; O(shard_size) below or not a multiple of O(block_size); O(total_size)
    that leaves less than one block per rank; shards needing more than the free space of a filesystem less
    O(free_space_margin).
  - Shards are removed at the end with their run directory, also when the run fails, unless O(keep_files=true).
  - With O(devices) instead of O(directories), the ranks write raw blank block devices (the measurement before
    a checkpoint volume exists on them). Rank N writes device N modulo their number, the k-th rank of a device at
    offset k x the shard size. DESTROYS what the devices hold, so each must be named in O(force_devices), and
    each is refused unless it is a whole disk, not a partition, without partitions, holders (md, LVM, dm),
    mounts or swap, not the OS drive, named once (after symlinks), large enough, and C(wipefs --no-act) finds
    no signature on it (a filesystem, an md or LVM superblock, a partition table). Then each is opened
    C(O_WRONLY|O_EXCL) (the kernel refuses a device that is mounted or held, and nothing can claim it while the
    write holds it), re-identified from that descriptor against O(expect), and written by fio through
    C(/proc/self/fd/<N>); a device whose serial, wwid or size is not the expected one is refused, nothing
    written.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - fio 3.x on the managed node (C(end_fsync) counted in the job runtime, JSON output with C(job_runtime)).
  - Linux; io_uring needs kernel 5.1 or later and must not be disabled (C(kernel.io_uring_disabled)).
  - For O(background=true), bash and coreutils C(timeout) on the managed node (the detached runner).
notes:
  - The result is a measurement, not a change, so C(changed) is always V(false) (the shards are removed unless
    O(keep_files=true)).
  - Check mode is not supported. Ansible skips the task in check mode (a dry run cannot measure anything).
  - The ranks are fio jobs (processes) on one node; this measures the storage path of one node, not the network
    or the framework's serialization.
seealso:
  - name: MLPerf Storage benchmark
    description: Checkpointing workload and its throughput definition.
    link: https://github.com/mlcommons/storage
  - module: ai_storage.checkpoint_io.queue_depth_sweep
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ai_storage.checkpoint_io.background_job
attributes:
  check_mode:
    support: none
    details: Ansible skips the task in check mode; it writes data to measure.
  diff_mode:
    support: none
  platform:
    platforms: linux
options:
  directories:
    description:
      - Absolute directories the shards are written in; rank N writes C(rank_<N>.ckpt) in directory
        N modulo the number of directories. Each must exist and be a directory.
      - One of O(directories) and O(devices) is required.
    type: list
    elements: path
  devices:
    description:
      - Raw blank block devices the ranks write instead of shard files (see the description for what is refused).
        Paths under C(/dev) (symlinks such as C(/dev/disk/by-id/...) are resolved once, before the checks).
    type: list
    elements: path
    version_added: 0.2.0
  force_devices:
    description:
      - Every device of O(devices), by path or kernel name (V(nvme1n1)), as the consent to overwrite it.
    type: list
    elements: str
    default: []
    version_added: 0.2.0
  expect:
    description:
      - Who each device of O(devices) must be, one entry per device (required with O(devices)), from the facts
        the drives were selected by. Checked from the device's open descriptor immediately before fio writes it,
        so a drive renumbered since the facts (a reset, a hot-plug) is refused instead of overwritten.
    type: list
    elements: dict
    version_added: 0.3.0
    suboptions:
      device:
        description:
          - The device, as in O(devices) or its kernel name.
        type: str
        required: true
        aliases: [name]
      serial:
        description:
          - The controller's serial number (sysfs C(device/serial)).
        type: str
      wwid:
        description:
          - The namespace's C(wwid) (sysfs).
        type: str
      size_bytes:
        description:
          - The device's size in bytes. At least one of O(expect[].serial), O(expect[].wwid) and
            O(expect[].size_bytes) is required.
        type: int
  ranks:
    description:
      - Number of ranks (shards, fio jobs), 1 to 1024.
    type: int
    default: 8
  shard_size:
    description:
      - Bytes each rank writes, a size (V(256M), V(1G), bytes); a multiple of O(block_size).
      - Mutually exclusive with O(total_size); one of them is required.
    type: raw
  total_size:
    description:
      - Size of the whole checkpoint; each rank writes O(total_size) / O(ranks) rounded down to a multiple of
        O(block_size), so RV(total_bytes) may be slightly below it.
      - Mutually exclusive with O(shard_size); one of them is required.
    type: raw
  block_size:
    description:
      - Size of each write request, a multiple of 4096.
    type: raw
    default: 1M
  queue_depth:
    description:
      - Writes in flight per rank (fio C(iodepth)), 1 to 65535. V(psync) always has 1 in flight.
    type: int
    default: 8
  ioengine:
    description:
      - fio I/O engine.
    type: str
    choices: [io_uring, libaio, psync]
    default: io_uring
  direct:
    description:
      - O_DIRECT writes, bypassing the page cache (as DeepSpeed aio and GDS do).
    type: bool
    default: true
  fsync:
    description:
      - fsync each shard at its end (fio C(end_fsync=1)), counted in the rank's time, so the data is on media
        before the rank's time stops.
    type: bool
    default: true
  keep_files:
    description:
      - Leave the shard files in place. By default they are removed after the run (also after a failure).
    type: bool
    default: false
  free_space_margin:
    description:
      - Fraction of each filesystem's free space that must stay free, a number from 0 to below 1. The run is
        refused before writing when the shards need more than free space x (1 - O(free_space_margin)).
    type: raw
    default: 0.1
  progress_file:
    description:
      - While fio runs, write a small JSON document here every O(progress_interval) seconds
        (C({"elapsed_s", "bytes_written", "total_bytes", "bw_bytes_so_far", "done"})), written atomically.
        C(bytes_written) comes from the allocated blocks of the shard files. At the end C(done) is V(true).
    type: path
  progress_interval:
    description:
      - Seconds between two progress file updates, a number above 0 and at most 3600.
    type: raw
    default: 2
  fio_path:
    description:
      - Path of fio. By default C(fio) is looked up in the PATH (and the module fails clearly when it is missing).
      - Checked before anything is done; an absolute path of an executable file.
    type: path
  label:
    description:
      - Free text echoed back in RV(label), for example V(before) and V(after) a tuning change.
    type: str
  timeout:
    description:
      - Seconds fio may run; past it fio is ended, the run's files are removed and the module fails (with
        O(background=true), the detached worker ends it, so it ends even when nobody polls it). A task that runs
        this module in the foreground should set its C(timeout) keyword (or C(async)) above this value, so the
        module always ends fio and cleans up first.
    type: int
    default: 3600
  background:
    description:
      - Start the write and return at once with RV(job_id), after every check above; poll it with
        M(ai_storage.checkpoint_io.checkpoint_job), which shows progress and returns this module's result when
        the write is done (and removes the shards unless O(keep_files=true)).
      - Works under every connection and strategy, Mitogen included (Ansible's C(async) of a collection module
        does not start under Mitogen 0.3.54 with ansible-core 2.19, measured).
      - Mutually exclusive with O(progress_file) (the poll computes progress itself).
    type: bool
    default: false
    version_added: 0.2.0
  job_store:
    description:
      - Directory of the background jobs' records (made mode 0700; refused when it is a symlink, belongs to
        another user or is writable by group or others).
    type: path
    default: /run/ai_storage_checkpoint_io/jobs
    version_added: 0.2.0
  runtime:
    description:
      - Seconds each rank may write at most, 1 to 86400 (fio C(runtime) without C(time_based)). The write ends
        after O(runtime) seconds or its bytes, whichever comes first, so a sustained write is bounded in time and
        in bytes. By default only the bytes bound it.
      - With it the shards may be written only in part; RV(total_bytes) is what was written.
    type: int
    version_added: 0.7.0
  read_back:
    description:
      - After a successful write, each rank reads its whole shard back (fio C(rw=read), the write's O(block_size),
        O(queue_depth), O(ioengine) and O(direct), all ranks at once, on the same files or device ranges), the
        restore a training job does after a failure. RV(restore) holds it in the write's units.
      - The shards' pages are dropped from the page cache first, shard by shard (C(posix_fadvise) C(DONTNEED) on
        the run's own descriptors after their fsync); the node's whole page cache is left alone.
      - Refused with O(runtime) (a sustained write may write its shards only in part).
    type: bool
    default: false
    version_added: 1.1.0
  sample_drives:
    description:
      - NVMe namespaces (V(nvme1n1) or V(/dev/nvme1n1)) sampled every O(sample_interval) seconds while fio writes -
        the block layer's write counters and in-flight writes, the composite and per-sensor temperatures (hwmon
        first, the SMART log otherwise), the SMART log's critical-warning bits and thermal counters (read with the
        NVMe admin ioctl, nvme-cli where the ioctl is refused). RV(samples) holds them, RV(sampled_drives) the
        drives' Identify Controller thresholds. A namespace that is not there is refused before anything is
        written.
    type: list
    elements: str
    default: []
    version_added: 0.7.0
  sample_interval:
    description:
      - Seconds between two samples of O(sample_drives), a number from 0.2 to 3600. Also the progress interval
        while sampling.
    type: raw
    default: 1
    version_added: 0.7.0
  state_dir:
    description:
      - The collection's state directory, where the run directories are recorded (record C(scratch)) and the
        node's run lease is read.
      - Checked before anything is done; refused when it is not an absolute path, is a symlink or not a directory,
        belongs to another user or is writable by group or others, or holds a record C(scratch) that is not
        valid JSON. A missing one is made (root-owned, mode 0755) on the first write.
    type: path
    default: /var/lib/ai_storage_checkpoint_io
    version_added: 0.3.0
'''

EXAMPLES = r'''
- name: Before a checkpoint volume exists - write the blank data drives raw (DESTROYS what they hold)
  ai_storage.checkpoint_io.checkpoint_write:
    devices: [/dev/nvme1n1, /dev/nvme2n1]
    force_devices: [nvme1n1, nvme2n1]
    expect:
      - {device: nvme1n1, serial: S6EUNX0T100001, size_bytes: 3840755982336}
      - {device: nvme2n1, serial: S6EUNX0T100002, size_bytes: 3840755982336}
    ranks: 2
    total_size: 8G
    queue_depth: 8
  register: baseline

- name: 64 GiB checkpoint from 8 ranks on two volumes, io_uring depth 16
  ai_storage.checkpoint_io.checkpoint_write:
    directories: [/mnt/ckpt0/bench, /mnt/ckpt1/bench]
    ranks: 8
    total_size: 64G
    queue_depth: 16
    label: after
    progress_file: /run/checkpoint_write.progress.json
  register: ckpt
  become: true

- name: Report
  ansible.builtin.debug:
    msg: >-
      {{ ckpt.total_gib | round(1) }} GiB in {{ ckpt.duration_s | round(2) }} s =
      {{ ckpt.throughput_gib_s | round(2) }} GiB/s

- name: Start a write in the background (returns at once)
  ai_storage.checkpoint_io.checkpoint_write:
    directories: [/mnt/ckpt0/bench]
    ranks: 8
    total_size: 16G
    label: after
    background: true
  register: job

- name: Wait for it, up to 5 s per poll, 120 polls
  ai_storage.checkpoint_io.checkpoint_job:
    job_id: "{{ job.job_id }}"
    wait: 5
  register: done
  until: done.finished
  retries: 120
  delay: 0

- name: Same with the queue depth found by a sweep
  ai_storage.checkpoint_io.checkpoint_write:
    directories: [/mnt/ckpt0/bench]
    ranks: 4
    shard_size: 4G
    queue_depth: "{{ sweep.per_rank_depth }}"
    label: auto
'''

RETURN = r'''
label:
  description: O(label) as given.
  returned: always
  type: str
  sample: after
throughput_gib_s:
  description: Checkpoint throughput in GiB/s (1024^3), RV(total_bytes) / RV(duration_s).
  returned: success
  type: float
  sample: 6.42
throughput_bytes_s:
  description: RV(throughput_gib_s) in bytes per second.
  returned: success
  type: int
  sample: 6893422182
duration_s:
  description: Seconds of the slowest rank (fio job runtime, including the final fsync).
  returned: success
  type: float
  sample: 9.967
wall_s:
  description: Wall time of the whole fio process in seconds (start-up, file set-up, all ranks, exit).
  returned: success
  type: float
  sample: 10.31
total_bytes:
  description: Bytes written by all ranks together.
  returned: success
  type: int
  sample: 68719476736
total_gib:
  description: RV(total_bytes) in GiB.
  returned: success
  type: float
  sample: 64.0
shard_bytes:
  description: Bytes each rank writes.
  returned: always
  type: int
  sample: 8589934592
mean_rank_bw_bytes:
  description: Mean of the per-rank bandwidths, bytes per second.
  returned: success
  type: int
  sample: 862000000
min_rank_bw_bytes:
  description: Bandwidth of the slowest rank, bytes per second.
  returned: success
  type: int
  sample: 861800000
per_rank:
  description: One entry per rank.
  returned: success
  type: list
  elements: dict
  contains:
    rank:
      description: Rank number.
      type: int
      returned: always
      sample: 0
    directory:
      description: Directory of the shard.
      type: str
      returned: always
      sample: /mnt/ckpt0/bench
    filename:
      description: Shard file, in the run's directory (removed after the run unless O(keep_files=true)), or the
        raw device.
      type: str
      returned: always
      sample: /mnt/ckpt0/bench/.checkpoint_io.after.0c1d2e3f4a5b/rank_0.ckpt
    bytes:
      description: Bytes written (fio C(io_bytes)).
      type: int
      returned: always
      sample: 8589934592
    seconds:
      description: The rank's time (fio C(write.runtime), whole ms, including the final fsync).
      type: float
      returned: always
      sample: 9.967
    bw_bytes:
      description: RV(per_rank[].bytes) / RV(per_rank[].seconds).
      type: int
      returned: always
      sample: 861837000
    iodepth_max_achieved:
      description: Deepest fio C(iodepth_level) bucket with a non-zero share (V(1), ..., V(32), V(>=64)).
      type: str
      returned: always
      sample: "16"
    p99_ns:
      description: The rank's 99th percentile write completion latency, ns (V(null) when fio printed none).
      type: float
      returned: always
      sample: 23461888
p99_ns:
  description: The highest RV(per_rank[].p99_ns) of the ranks (the checkpoint waits for its slowest rank), ns.
  returned: success
  type: float
  sample: 23461888
iodepth_max_achieved:
  description: RV(per_rank[].iodepth_max_achieved) of every rank, in rank order.
  returned: success
  type: list
  elements: str
  sample: ["16", "16"]
ranks:
  description: Number of ranks.
  returned: always
  type: int
  sample: 8
queue_depth:
  description: Writes in flight per rank asked for.
  returned: always
  type: int
  sample: 16
block_size:
  description: Request size in bytes.
  returned: always
  type: int
  sample: 1048576
ioengine:
  description: fio engine used.
  returned: always
  type: str
  sample: io_uring
direct:
  description: Whether O_DIRECT was used.
  returned: always
  type: bool
  sample: true
fsync:
  description: Whether each shard was fsynced at its end.
  returned: always
  type: bool
  sample: true
directories:
  description: O(directories) as given (V(null) with O(devices)).
  returned: always
  type: list
  elements: str
  sample: [/mnt/ckpt0/bench, /mnt/ckpt1/bench]
devices:
  description: Block device backing each directory of RV(directories), in the same order (from the directory's
    C(st_dev) and C(/sys/dev/block)); V(null) for a directory on no block device (tmpfs, overlay). With
    O(devices), their kernel names.
  returned: always
  type: list
  elements: str
  sample: [md127, nvme3n1]
fio_version:
  description: fio's version string.
  returned: success
  type: str
  sample: fio-3.33
command:
  description: The fio argv.
  returned: when fio was run
  type: list
  elements: str
  sample: [/usr/bin/fio, --output-format=json, --thread, --rw=write, --bs=1048576, --size=8589934592,
           --iodepth=16, --ioengine=io_uring, --direct=1, --end_fsync=1, --fallocate=none, --name=rank_0,
           --filename=/proc/self/fd/5]
read_command:
  description: The fio argv of the restore read (O(read_back=true)).
  returned: when O(read_back=true)
  type: list
  elements: str
  sample: [/usr/bin/fio, --output-format=json, --thread, --rw=read, --bs=1048576, --size=8589934592,
           --iodepth=16, --ioengine=io_uring, --direct=1, --fallocate=none, --name=rank_0,
           --filename=/proc/self/fd/5]
safety:
  description: Where the run wrote and why no other user could redirect it.
  returned: when something was written
  type: dict
  contains:
    writable_components:
      description: The directories on the way to O(directories) (the directories included) that a user other
        than root can change, C({directory, path, uid, gid, mode, writable_by}) each.
      type: list
      elements: dict
      returned: always
      sample: [{directory: /mnt/ckpt0/bench, path: /mnt/ckpt0/bench, uid: 1000, gid: 1000, mode: "0755",
                writable_by: [its owner uid 1000]}]
    run_dirs:
      description: The directories made for the run (removed with the shards).
      type: list
      elements: str
      returned: always
      sample: [/mnt/ckpt0/bench/.checkpoint_io.after.0c1d2e3f4a5b]
    swapped_run_dirs:
      description: Run directories another user renamed away in the moment between their mkdir and their open;
        the run made another one, and these stay where that user put them, empty, owned by root, mode 0700.
      type: list
      elements: str
      returned: always
      sample: []
    made_safe_by:
      description: How the write is made safe despite them.
      type: str
      returned: always
restore:
  description:
    - The restore read of O(read_back=true), reported as MLPerf Storage reports recovery - the checkpoint is
      restored when its slowest rank has read its last byte.
  returned: when O(read_back=true) and the write succeeded
  type: dict
  contains:
    throughput_gib_s:
      description: The checkpoint's bytes over RV(restore.duration_s), in GiB/s.
      type: float
    throughput_bytes_s:
      description: The same in bytes per second.
      type: int
    duration_s:
      description: The slowest rank's read time, seconds.
      type: float
    total_bytes:
      description: Bytes read by all ranks.
      type: int
    min_rank_bw_bytes:
      description: The slowest rank's bandwidth, bytes per second.
      type: int
    mean_rank_bw_bytes:
      description: The ranks' mean bandwidth, bytes per second.
      type: int
    wall_s:
      description: Wall time of the read's fio process.
      type: float
    p99_ns:
      description: The highest of the ranks' p99 read completion latencies (null when fio printed none).
      type: int
    iodepth_max_achieved:
      description: The deepest queue each rank reached.
      type: list
      elements: int
    per_rank:
      description: Each rank's C(rank), C(bytes), C(seconds) and C(bw_bytes).
      type: list
      elements: dict
  sample:
    throughput_gib_s: 1.93
    throughput_bytes_s: 2072347345
    duration_s: 0.133
    total_bytes: 268435456
    min_rank_bw_bytes: 505290270
    mean_rank_bw_bytes: 521133720
    wall_s: 0.412
    p99_ns: 9502720
    iodepth_max_achieved: [16, 16, 16, 16]
    per_rank: [{rank: 0, bytes: 67108864, seconds: 0.131, bw_bytes: 512278962}]
files_kept:
  description: The shard files left in place (O(keep_files=true)), else an empty list.
  returned: always
  type: list
  elements: str
  sample: []
stderr:
  description: fio's standard error.
  returned: when fio was run in the foreground
  type: str
  sample: ""
samples:
  description:
    - With O(sample_drives), one entry per sample - C(t) seconds since the first sample (taken as fio starts) and
      C(drives), per namespace - C(sectors_written), C(write_ios), C(write_ticks_ms) (cumulative since boot, from
      C(/sys/class/block/<ns>/stat)), C(inflight_writes), C(temp_c) and C(temp_source) (V(hwmon) or
      V(smart-log)), C(sensors_c), C(critical_warning), C(critical_warning_bits), C(warning_temp_time_min),
      C(critical_comp_time_min), C(thm_temp1_trans_count), C(thm_temp2_trans_count), C(thm_temp1_total_time_s),
      C(thm_temp2_total_time_s), the SMART wear fields, and C(error) (what could not be read, or V(null)).
  returned: when O(sample_drives) is set and fio ran
  type: list
  elements: dict
  sample:
    - t: 0.0
      drives:
        nvme1n1:
          sectors_written: 1024
          write_ios: 8
          write_ticks_ms: 80
          inflight_writes: 0
          temp_c: 49.85
          temp_source: hwmon
          critical_warning: 0
          warning_temp_time_min: 0
          thm_temp1_trans_count: 0
sampled_drives:
  description:
    - With O(sample_drives), per namespace - C(controller), C(serial), and from Identify Controller C(wctemp_c),
      C(cctemp_c), C(mntmt_c), C(mxtmt_c), C(hctma) (V(null) where the drive does not say).
  returned: when O(sample_drives) is set
  type: dict
  sample: {nvme1n1: {controller: nvme1, serial: DATA0001, wctemp_c: 70, cctemp_c: 100, hctma: 0}}

job_id:
  description: The background job to poll with M(ai_storage.checkpoint_io.checkpoint_job).
  returned: O(background=true)
  type: str
  sample: after.k2j4x9_a
started:
  description: V(true) once the background write runs.
  returned: O(background=true)
  type: bool
  sample: true
job_store:
  description: O(job_store) as used.
  returned: O(background=true)
  type: str
  sample: /run/ai_storage_checkpoint_io/jobs
'''

import os
import stat
from functools import partial

MAX_RUNTIME_S = 86400

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.blockdev import (
    BlockTopology,
    disk_bytes,
    raw_write_refusal,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import (
    IOENGINES,
    MAX_QUEUE_DEPTH,
    by_target,
    device_layout,
    device_needs,
    fraction_in_range,
    int_in_range,
    number,
    rank_layout,
    outcome_result,
    read_argv,
    restore_result,
    shard_plan,
    space_errors,
    space_needs,
    write_argv,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import (
    Terminated,
    check_fio_path,
    check_progress_path,
    run_fio,
    sectors_written,
    terminate_on_signals,
    write_progress,
    written_since,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.drive_sampler import check_names, start_sampling
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import name_of_dev
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.wipefs import (
    WIPEFS_COLUMNS,
    describe_signature,
    parse_wipefs_json,
)


def argument_spec():
    return dict(
        directories=dict(type='list', elements='path'),
        devices=dict(type='list', elements='path'),
        force_devices=dict(type='list', elements='str', default=[]),
        expect=dict(type='list', elements='dict', options=dict(
            device=dict(type='str', required=True, aliases=['name']),
            serial=dict(type='str'),
            wwid=dict(type='str'),
            size_bytes=dict(type='int'),
        )),
        ranks=dict(type='int', default=8),
        shard_size=dict(type='raw'),
        total_size=dict(type='raw'),
        block_size=dict(type='raw', default='1M'),
        queue_depth=dict(type='int', default=8),
        ioengine=dict(type='str', choices=list(IOENGINES), default='io_uring'),
        direct=dict(type='bool', default=True),
        fsync=dict(type='bool', default=True),
        keep_files=dict(type='bool', default=False),
        free_space_margin=dict(type='raw', default=0.1),
        progress_file=dict(type='path'),
        progress_interval=dict(type='raw', default=2),
        fio_path=dict(type='path'),
        label=dict(type='str'),
        timeout=dict(type='int', default=3600),
        background=dict(type='bool', default=False),
        job_store=dict(type='path', default=fio_job.JOB_STORE),
        heartbeat=dict(type='int', default=300),
        state_dir=dict(type='path', default=STATE_DIR),
        runtime=dict(type='int'),
        sample_drives=dict(type='list', elements='str', default=[]),
        sample_interval=dict(type='raw', default=1),
        read_back=dict(type='bool', default=False),
    )


def validate(module, params, result):
    """Everything checked before anything is written: (plan, layout)."""
    try:
        int_in_range(params['queue_depth'], 'queue_depth', 1, MAX_QUEUE_DEPTH)
        int_in_range(params['timeout'], 'timeout', 1)
        for name in ('free_space_margin', 'progress_interval', 'sample_interval'):
            params[name] = number(params[name], name)
        fraction_in_range(params['free_space_margin'], 'free_space_margin')
        if params['runtime'] is not None:
            int_in_range(params['runtime'], 'runtime', 1, MAX_RUNTIME_S)
            if params['read_back']:
                raise ValueError('read_back: a restore read needs whole shards, and runtime %s may end the write '
                                 'before them: leave one of the two out' % params['runtime'])
        params['sample_drives'] = check_names(params['sample_drives'])
        if params['sample_drives']:
            fraction_in_range(params['sample_interval'], 'sample_interval', 0.2, 3600.0, high_open=False)
        if params['progress_file'] is not None:
            fraction_in_range(params['progress_interval'], 'progress_interval', 0.0, 3600.0, low_open=True,
                              high_open=False)
            check_progress_path(params['progress_file'])
        plan = shard_plan(params['ranks'], params['block_size'], params['shard_size'], params['total_size'])
        if params['devices'] is not None:
            layout = device_layout(params['devices'], params['ranks'], plan['shard_bytes'])
        else:
            layout = rank_layout(params['directories'], params['ranks'])
        if params['background']:
            fio_job.check_store_path(params['job_store'])
            fio_job.check_heartbeat(params['heartbeat'])
        if params['fio_path']:
            check_fio_path(params['fio_path'])
        scratch.check_state_dir(params['state_dir'])
    except (ValueError, fio_job.JobError, scratch.ScratchError) as exc:
        module.fail_json(msg=str(exc), **result)
    return plan, layout


def _kernel_name(device):
    return os.path.basename(os.path.realpath(device)) if device.startswith('/') else device


def expectations(params, names):
    """The identity each device of O(devices) must have, from O(expect): ([{name, wwid, serial, size_bytes}],
    errors)."""
    wanted = {}
    errors = []
    for index, entry in enumerate(params['expect'] or []):
        name = _kernel_name(entry['device'])
        if name not in names.values():
            errors.append('expect[%d]: %s is not one of devices' % (index, entry['device']))
            continue
        wanted[name] = {'name': name, 'wwid': entry['wwid'], 'serial': entry['serial'],
                        'size_bytes': entry['size_bytes']}
    for path in params['devices']:
        name = names.get(path)
        if name is not None and name not in wanted:
            errors.append('%s (%s) has no entry in expect: a raw write re-identifies each device (serial, wwid or '
                          'size_bytes) from its open descriptor and never runs on a name alone' % (path, name))
    return [wanted[name] for name in sorted(wanted)], errors


def raw_devices(module, params, layout, shard_bytes, result):
    """The checks of O(devices) before anything is written: ({path: kernel name}, expected identities), or the
    host fails."""
    needs = device_needs(layout, shard_bytes)
    topology = BlockTopology(Context(module))
    forced = set(params['force_devices'])
    names = {}
    errors = []
    for path in params['devices']:
        real = os.path.realpath(path)
        name = os.path.basename(real)
        if not real.startswith('/dev/'):
            errors.append('%s is not under /dev (it leads to %s)' % (path, real))
            continue
        try:
            is_block = stat.S_ISBLK(os.stat(real).st_mode)
        except OSError as exc:
            errors.append('%s: %s' % (path, exc.strerror))
            continue
        if not is_block:
            errors.append('%s is not a block device' % path)
            continue
        if name in names.values():
            errors.append('%s is %s a second time (two paths to one device)' % (path, name))
            continue
        names[path] = name
        if not forced.intersection([path, real, name]):
            errors.append('%s (%s): writing it raw destroys what it holds; name it in force_devices' % (path, name))
        refusal = raw_write_refusal(topology, name)
        if refusal:
            errors.append(refusal)
            continue
        size = disk_bytes(topology, name)
        if size is not None and size < needs.get(path, 0):
            errors.append('%s holds %d bytes, below the %d bytes its ranks write' % (name, size, needs.get(path, 0)))
    expected, missing = expectations(params, names)
    errors.extend(missing)
    for path, name in sorted(names.items()):
        if any(name in error for error in errors):
            continue
        rc, out, err = module.run_command(['wipefs', '--no-act', '--json', '--output', WIPEFS_COLUMNS, '/dev/' + name])
        if rc != 0:
            errors.append('wipefs --no-act /dev/%s failed (%s): %s' % (name, rc, err.strip()))
            continue
        try:
            found = parse_wipefs_json(out)
        except ValueError as exc:
            errors.append('/dev/%s: %s' % (name, exc))
            continue
        if found:
            errors.append('/dev/%s is not blank: it carries %s' % (
                name, '; '.join(describe_signature(sig) for sig in found)))
    if errors:
        module.fail_json(msg='devices refused, nothing was written: %s' % '; '.join(errors), errors=errors, **result)
    return names, expected


def open_targets(module, params, result):
    """Each directory of O(directories) opened without following a symlink a user could plant: {path: Target}."""
    targets = {}
    try:
        for path in params['directories']:
            if path not in targets:
                targets[path] = scratch.open_dir(path, 'directories')
    except scratch.ScratchError as exc:
        for target in targets.values():
            target.close()
        module.fail_json(msg=str(exc), **result)
    return targets


def make_runs(targets, layout, shard_bytes, params, run_id):
    """One run directory per target directory (one per filesystem directory, whatever path named it), the
    shards in it; each layout entry gets its ``filename`` (where it is) and ``fio_file`` (what fio opens)."""
    runs = []
    try:
        for target, entries in by_target(targets, layout):
            run = scratch.create(target, params['label'] or 'checkpoint_write',
                                 [(entry['name'], shard_bytes) for entry in entries], params['state_dir'],
                                 run_id=run_id, writer='checkpoint_write')
            runs.append(run)
            for entry in entries:
                entry['filename'] = run.file_path(entry['name'])
                entry['fio_file'] = run.fio_file(entry['name'])
    except BaseException:
        for run in runs:
            run.cleanup()
        for target in targets.values():
            target.close()
        raise
    return runs


def close_all(fds):
    """Close the raw devices' descriptors {name: fd} (once: the dict is emptied)."""
    for fd in fds.values():
        os.close(fd)
    fds.clear()


class WriteFailed(Exception):
    """A checkpoint write that failed; ``result`` is what it got to."""

    def __init__(self, msg, result):
        Exception.__init__(self, msg)
        self.result = result


def sampled(sampler):
    """Take one sample; {namespace: {bw_bytes since the previous sample, temp_c, critical_warning}} for the
    progress report."""
    doc = sampler.sample()
    previous = sampler.samples[-2] if len(sampler.samples) > 1 else None
    out = {}
    for name, drive in sorted(doc['drives'].items()):
        entry = {'temp_c': drive.get('temp_c'), 'critical_warning': drive.get('critical_warning'), 'bw_bytes': None}
        before = (previous or {}).get('drives', {}).get(name) or {}
        seconds = doc['t'] - previous['t'] if previous else 0
        if seconds > 0 and drive.get('sectors_written') is not None and before.get('sectors_written') is not None:
            entry['bw_bytes'] = int((drive['sectors_written'] - before['sectors_written']) * 512 / seconds)
        out[name] = entry
    return out


def drop_cached(fds):
    """Drop the pages of the run's shards (or device ranges) from the page cache: a restore read must come from the
    drives, and the node's other files keep theirs (no global drop_caches)."""
    for fd in fds:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def read_back(job, report, timeout):
    """The restore read after a successful write: (restore, error)."""
    total = job['total_bytes']
    fds = [fd for run in job['runs'] for fd in run.fds()] + sorted(job['device_fds'].values())

    def tick(elapsed):
        if report is not None:
            report({'elapsed_s': round(elapsed, 3), 'bytes_written': total, 'total_bytes': total, 'done': True,
                    'phase': 'restore', 'restore_elapsed_s': round(elapsed, 3)})

    drop_cached(fds)
    rc, stdout, stderr, wall, timed_out = run_fio(job['read_argv'], timeout, tick, job['interval'], pass_fds=fds)
    reduced, error = outcome_result({}, job['layout'], dict(rc=rc, stdout=stdout, stderr=stderr, wall_s=wall,
                                                            timed_out=timed_out), timeout, direction='read')
    if error:
        return None, 'the checkpoint was written, then its restore read failed: %s' % error
    return restore_result(reduced), None


def write(job, report=None):
    """The write itself, in the module or in a background worker: fio on the run's descriptors, progress, then
    the run's files removed (or kept). Returns the result; raises WriteFailed."""
    total = job['total_bytes']
    runs, fds = job['runs'], job['device_fds']
    result = dict(job['result'])

    sampler = job.get('sampler')

    def tick(elapsed, done=False):
        drives = sampled(sampler) if sampler is not None else None
        if report is None:
            return
        if done:
            written = total
        elif job['start_sectors']:
            written = min(total, written_since(job['start_sectors']))
        else:
            written = min(total, sum(run.allocated() for run in runs))
        doc = {'elapsed_s': round(elapsed, 3), 'bytes_written': written, 'total_bytes': total,
               'bw_bytes_so_far': int(written / elapsed) if elapsed > 0 else 0, 'done': done}
        if drives is not None:
            doc['drives'] = drives
        report(doc)

    error = None
    try:
        tick(0.0)
        rc, stdout, stderr, wall, timed_out = run_fio(
            job['argv'], job['timeout'], tick, job['interval'],
            pass_fds=[fd for run in runs for fd in run.fds()] + sorted(fds.values()))
        outcome = dict(rc=rc, stdout=stdout, stderr=stderr, wall_s=wall, timed_out=timed_out)
        result, error = outcome_result(result, job['layout'], outcome, job['timeout'])
        if error is None:
            tick(wall, done=True)
        if error is None and job.get('read_argv'):
            result['restore'], error = read_back(job, report, max(1, job['timeout'] - int(wall)))
    except (IOError, OSError) as exc:
        error = 'checkpoint write failed: %s' % exc
    finally:
        kept = []
        for run in runs:
            kept.extend(run.cleanup(keep=job['keep_files']))
        close_all(fds)
        result['files_kept'] = kept if job['keep_files'] else []
        if sampler is not None:
            result['samples'] = sampler.samples
    if error:
        raise WriteFailed(error, result)
    return result


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=False,
                           mutually_exclusive=[('shard_size', 'total_size'), ('background', 'progress_file'),
                                               ('directories', 'devices'), ('directories', 'expect')],
                           required_one_of=[('shard_size', 'total_size'), ('directories', 'devices')])
    params = module.params
    result = dict(changed=False, label=params['label'], ranks=params['ranks'], queue_depth=params['queue_depth'],
                  block_size=None, shard_bytes=None, ioengine=params['ioengine'], direct=params['direct'],
                  fsync=params['fsync'], directories=params['directories'], devices=[], files_kept=[])

    plan, layout = validate(module, params, result)
    result.update(block_size=plan['block_size'], shard_bytes=plan['shard_bytes'])
    raw = expected = targets = None
    if params['devices'] is not None:
        raw, expected = raw_devices(module, params, layout, plan['shard_bytes'], result)
        result['devices'] = [raw[path] for path in params['devices']]
        for entry in layout:  # the resolved node, not a symlink that could be swapped after the checks
            entry['filename'] = entry['device'] = '/dev/' + raw[entry['device']]
    else:
        targets = open_targets(module, params, result)
        devices = dict((path, name_of_dev(target.dev)) for path, target in targets.items())
        result['devices'] = [devices[path] for path in params['directories']]
        errors = space_errors(space_needs(layout, plan['shard_bytes'], targets, devices), params['free_space_margin'])
        if errors:
            module.fail_json(msg='not enough free space: %s' % '; '.join(errors), errors=errors, **result)

    fio = params['fio_path'] or module.get_bin_path('fio', required=True)
    sampler = start_sampling(module, Context(module), params['sample_drives'], result)

    run_id = scratch.current_run(params['state_dir'])
    job = dict(runs=[], device_fds={}, layout=layout, total_bytes=plan['total_bytes'], timeout=params['timeout'],
               interval=params['sample_interval'] if sampler else params['progress_interval'],
               keep_files=params['keep_files'], start_sectors=None, sampler=sampler)
    handed_over = False
    try:
        with terminate_on_signals():
            try:
                if raw:
                    job['device_fds'] = scratch.open_devices(expected)
                    for entry in layout:
                        entry['fio_file'] = '/proc/self/fd/%d' % job['device_fds'][os.path.basename(entry['device'])]
                    job['start_sectors'] = sectors_written(sorted(set(raw.values())))
                    result['safety'] = scratch.device_safety()
                else:
                    job['runs'] = make_runs(targets, layout, plan['shard_bytes'], params, run_id)
                    result['safety'] = scratch.safety(list(targets.values()), job['runs'])
                job['argv'] = result['command'] = write_argv(
                    fio, layout, plan['shard_bytes'], plan['block_size'], params['queue_depth'], params['ioengine'],
                    params['direct'], params['fsync'], runtime=params['runtime'])
                if params['read_back']:
                    job['read_argv'] = result['read_command'] = read_argv(
                        fio, layout, plan['shard_bytes'], plan['block_size'], params['queue_depth'],
                        params['ioengine'], params['direct'])
                job['result'] = result
                if params['background']:
                    record = dict(kind='checkpoint_write', label=params['label'], total_bytes=plan['total_bytes'],
                                  run_id=run_id, state_dir=params['state_dir'])
                    result['job_id'] = fio_job.start_call(
                        partial(write, job), record, label=params['label'], store=params['job_store'],
                        keep_fds=[fd for run in job['runs'] for fd in run.fds() + [run.fd, run.target.fd]]
                        + list(job['device_fds'].values()), heartbeat_s=params['heartbeat'] or None)
                    handed_over = True
                    started = fio_job.load(result['job_id'], params['job_store'])
                    owner = dict(job_id=result['job_id'], session=started['session'], worker=started.get('worker'),
                                 boot_id=scratch.boot_id())
                    for run in job['runs']:
                        run.set_owner(owner)
                    result.update(started=True, job_store=params['job_store'], total_bytes=plan['total_bytes'])
                    module.exit_json(**result)
                progress = params['progress_file']
                module.exit_json(**write(job, (lambda doc: write_progress(progress, doc)) if progress else None))
            finally:
                for run in job['runs']:
                    if handed_over:
                        run.release()  # the worker removes the run's files; here only the descriptors close
                    else:
                        run.cleanup()  # a failure before the write: what was made goes again
                close_all(job['device_fds'])
                for target in (targets or {}).values():
                    target.close()
    except WriteFailed as exc:
        module.fail_json(msg=str(exc), **exc.result)
    except scratch.ScratchError as exc:
        module.fail_json(msg='%s; nothing was written' % exc, **result)
    except (fio_job.JobError, IOError, OSError) as exc:
        module.fail_json(msg='cannot start the checkpoint write%s: %s' % (
            ' in the background' if params['background'] else '', exc), **result)
    except Terminated as exc:
        module.fail_json(msg='checkpoint write %s: fio was ended and the run\'s files removed' % exc, **result)


if __name__ == '__main__':
    main()
