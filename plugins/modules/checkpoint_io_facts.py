#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: checkpoint_io_facts
short_description: Gather NVMe, block queue, io_uring, XFS, GPUDirect Storage and DeepSpeed facts for checkpoint I/O
version_added: 1.0.0
description:
  - Read-only facts about the checkpoint write path of a GPU training node, returned as
    C(ansible_facts.checkpoint_io).
  - "C(nvme): controllers from C(/sys/class/nvme) (model, serial, firmware, transport, PCI address,
    NUMA node and local CPUs, PCIe link, I/O queue count) and namespaces (size, block sizes, partitions,
    holders, mounts and whether the drive is the OS drive or otherwise in use)."
  - "C(block): the blk-mq queue settings of every NVMe namespace (scheduler, nr_requests, read_ahead_kb,
    max_sectors_kb, hardware contexts and tag depth) and the nvme module parameters."
  - "C(thermal): composite temperature from hwmon (no tool needed), smart-log throttling counters,
    id-ctrl thresholds, and a derived C(throttled) verdict with its reason."
  - "C(io_uring): whether io_uring is allowed for the training user (kernel.io_uring_disabled and
    kernel.io_uring_group), RLIMIT_MEMLOCK, liburing, and a tiny fio job proving the io_uring engine runs."
  - "C(xfs): mount options, geometry (xfs_info) and md RAID layout of the XFS mounts holding the checkpoint paths."
  - "C(gds): nvidia_fs, libcufile, cufile.json and its per-process overrides, gdscheck, and the I/O path
    cuFile will take (C(dma), C(compat) or C(unavailable)) with the reason."
  - "C(deepspeed): the effective C(aio) section of DeepSpeed configs, with DeepSpeed's defaults and warnings
    for keys DeepSpeed ignores or misreads."
  - Sysfs and procfs are read first. What sysfs lacks (id-ctrl, smart-log, get-feature 7) is asked of each
    controller with the kernel's NVMe admin passthrough ioctl, no process spawned; C(nvme-cli) runs only where
    the ioctl is refused (no CAP_SYS_ADMIN, a kernel without passthrough). Each at most once per controller and
    log, controllers in parallel.
  - Nothing fails on a node that lacks a device, tool or kernel feature; missing values are V(null) and failed
    commands are listed in the C(errors) list of their section. Only invalid options fail the module.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - Linux with sysfs and procfs.
  - Optional, used when present; the facts they provide are V(null) otherwise
    C(nvme-cli) (id-ctrl, smart-log, get-feature where the admin ioctl is refused), C(fio) (io_uring probe),
    C(xfsprogs) (xfs_info),
    C(gdscheck) from the CUDA GDS tools, C(timeout) from coreutils (bounds every command).
notes:
  - Run with privilege escalation for full facts. As an unprivileged user, neither the admin ioctl nor
    nvme-cli can open the controllers and their facts (thresholds, smart-log counters) are V(null) with an
    entry in C(errors).
  - The fio probe reads 1 MiB of C(/dev/zero) through io_uring (C(--readonly)) and writes nothing, in check
    mode or not; set O(fio_probe=false) to skip it. It runs as the module's user, so it
    proves the engine for that user, not for O(training_user); C(io_uring.allowed_for_user)
    covers the training user.
  - What does not change until the node reboots or the tool is replaced is kept for the boot in
    C(/run/checkpoint_io/) (a root-only directory on the tmpfs C(/run), written outside check mode only), with
    what it depends on (the boot ID, the tool's file, the user; for the probe also C(kernel.io_uring_disabled) and
    C(kernel.io_uring_group)) - the io_uring probe's result and fio's version (C(io_uring_probe.json)), nvme-cli's
    version (C(nvme_cli_version.json)). A later gather in the same boot reads them instead of starting the tools
    again, and C(io_uring.fio_probe_cached) says so.
  - Libraries (liburing, libcufile) are looked up in the directories C(/etc/ld.so.conf) names (its includes
    followed) and the system's own, read directly, not through C(ldconfig -p).
  - Every command runs with C(LANG=C) and C(LC_ALL=C) and an argument list (no shell).
  - O(sysfs_root), O(procfs_root), O(devfs_root) and O(etc_root) exist for tests that point the module at
    a fake tree; leave them at their defaults on real nodes.
  - The C(/dev/...) paths in the facts always name the node's devices, whatever O(devfs_root) is.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - ai_storage.checkpoint_io.state_store
attributes:
  check_mode:
    support: full
    details: The module only reads; it behaves the same in check mode.
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: linux
options:
  gather_subset:
    description:
      - Sections to gather. V(all) gathers every section.
      - Prefix a name with V(!) to exclude it, for example V([all, "!gds"]). A list made only of
        exclusions starts from V(all).
    type: list
    elements: str
    default: [all]
    choices:
      - all
      - nvme
      - block
      - thermal
      - io_uring
      - xfs
      - gds
      - deepspeed
      - state
      - '!nvme'
      - '!block'
      - '!thermal'
      - '!io_uring'
      - '!xfs'
      - '!gds'
      - '!deepspeed'
      - '!state'
  checkpoint_paths:
    description:
      - Absolute directories checkpoints are written to. XFS facts are gathered for the mounts holding them.
        The paths need not exist yet; the longest mount point prefix decides. A relative path is refused.
      - When omitted or empty, XFS facts are gathered for every XFS mount.
    type: list
    elements: path
  deepspeed_configs:
    description:
      - Absolute paths of DeepSpeed C(ds_config.json) files whose C(aio) section is reported. A file that is
        missing or not strict JSON is reported with its error; a relative path is refused.
    type: list
    elements: path
  deepspeed_python:
    description:
      - The training environment's Python (its absolute path, a virtualenv's or conda's C(bin/python)). With
        C(deepspeed) gathered, it is run once in isolated mode to read the DeepSpeed and torch versions from the
        installed packages' metadata (nothing is imported); without it the versions are not known.
    type: path
    version_added: 1.1.0
  gds_job_dirs:
    description:
      - Absolute job working directories searched (two levels deep) for the C(local_cufile.json) that DeepSpeed's
        GDS handle writes and points C(CUFILE_ENV_PATH_JSON) at. A relative path is refused.
    type: list
    elements: path
  training_user:
    description:
      - User that runs training. Used for io_uring permission (kernel.io_uring_group membership) and for
        the RLIMIT_MEMLOCK configured in C(limits.conf) and C(limits.d).
      - Defaults to the user the module runs as.
    type: str
  fio_probe:
    description:
      - Run a tiny fio job with C(ioengine=io_uring) on a temporary file to prove the engine really runs.
    type: bool
    default: true
  use_nvme_cli:
    description:
      - Send the NVMe admin commands id-ctrl, smart-log and get-feature 7, with the kernel's admin passthrough
        ioctl first and with C(nvme-cli) where the ioctl is refused. With V(false) no admin command is sent (no
        ioctl, no nvme-cli), only sysfs is read and those facts are V(null).
    type: bool
    default: true
  sysfs_root:
    description:
      - Root of sysfs. For tests only.
    type: path
    default: /sys
  procfs_root:
    description:
      - Root of procfs. For tests only.
    type: path
    default: /proc
  devfs_root:
    description:
      - Root of the device directory. For tests only.
    type: path
    default: /dev
  etc_root:
    description:
      - Root of the configuration directory (passwd, group, security/limits.conf, cufile.json). For tests only.
    type: path
    default: /etc
  merge:
    description:
      - Merge the sections gathered into the host's current C(ansible_facts.checkpoint_io) (the action plugin of
        the same name does it on the controller). A gather of V([xfs]) refreshes C(xfs) and keeps C(nvme),
        C(block) and the others from earlier gathers, each with its time in C(gathered_at).
      - V(false) replaces the whole fact with the sections of this gather.
      - Facts of another C(schema_version) are never merged in.
    type: bool
    default: true
    version_added: 0.2.0
seealso:
  - name: NVIDIA GPUDirect Storage configuration guide
    description: cufile.json properties, compatibility mode and gdscheck.
    link: https://docs.nvidia.com/gpudirect-storage/configuration-guide/index.html
'''

EXAMPLES = r'''
- name: Gather all checkpoint I/O facts
  ai_storage.checkpoint_io.checkpoint_io_facts:
    checkpoint_paths:
      - /mnt/ckpt
    deepspeed_configs:
      - /opt/train/ds_config.json
    gds_job_dirs:
      - /opt/train
    training_user: trainer
  become: true

- name: Only NVMe and thermal facts from sysfs, without any NVMe admin command
  ai_storage.checkpoint_io.checkpoint_io_facts:
    gather_subset: [nvme, thermal]
    use_nvme_cli: false

- name: Everything except GPUDirect Storage, no fio probe
  ai_storage.checkpoint_io.checkpoint_io_facts:
    gather_subset: ['!gds']
    fio_probe: false

- name: Data drives that are safe to format
  ansible.builtin.debug:
    msg: "{{ ansible_facts.checkpoint_io.nvme.namespaces | rejectattr('in_use_reason') | map(attribute='device') | list }}"

- name: Stop when a drive is throttling
  ansible.builtin.assert:
    that: ansible_facts.checkpoint_io.thermal.throttled_controllers | length == 0
    fail_msg: "{{ ansible_facts.checkpoint_io.thermal.controllers | selectattr('throttled') | map(attribute='throttle_reason') | list }}"
'''

RETURN = r'''
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    checkpoint_io:
      description: Checkpoint I/O facts. A section is present only when it is in O(gather_subset).
      returned: always
      type: dict
      contains:
        schema_version:
          description: Version of this fact schema; bumped on incompatible changes.
          returned: always
          type: int
          sample: 1
        gather_subset:
          description:
            - Sections present, after resolving V(all) and exclusions; with O(merge=true), those of earlier
              gathers on the host too.
          returned: always
          type: list
          elements: str
          sample: [nvme, block, thermal, io_uring, xfs, gds, deepspeed]
        last_gather_subset:
          description: Sections this gather refreshed (with O(merge=true); the others were kept).
          returned: with O(merge=true)
          type: list
          elements: str
          sample: [xfs]
          version_added: 0.2.0
        gathered_at:
          description: When each present section was gathered, UTC, ISO 8601, by the node's clock.
          returned: always
          type: dict
          sample: {"nvme": "2026-12-01T20:31:02Z", "xfs": "2026-12-01T20:33:40Z"}
          version_added: 0.2.0
        nvme:
          description: NVMe controllers and namespaces.
          returned: when nvme is gathered
          type: dict
          contains:
            nvme_cli:
              description: The nvme-cli used.
              type: dict
              returned: always
              contains:
                path:
                  description: Path of the C(nvme) binary, V(null) when absent or O(use_nvme_cli=false).
                  type: str
                  returned: always
                  sample: /usr/sbin/nvme
                version:
                  description: nvme-cli version from C(nvme version).
                  type: str
                  returned: always
                  sample: "2.3"
            controllers:
              description: One entry per controller in C(/sys/class/nvme), in natural order.
              type: list
              elements: dict
              returned: always
              contains:
                name:
                  description: Controller name.
                  type: str
                  returned: always
                  sample: nvme0
                device:
                  description: Controller character device.
                  type: str
                  returned: always
                  sample: /dev/nvme0
                model:
                  description: Model number.
                  type: str
                  returned: always
                  sample: QEMU NVMe Ctrl
                serial:
                  description: Serial number.
                  type: str
                  returned: always
                  sample: DATA0001
                firmware:
                  description: Firmware revision (C(firmware_rev)).
                  type: str
                  returned: always
                  sample: "8.0.0"
                transport:
                  description: Transport (V(pcie), V(tcp), V(rdma), V(fc), V(loop)).
                  type: str
                  returned: always
                  sample: pcie
                address:
                  description: PCI address with domain for PCIe, else the fabrics address string.
                  type: str
                  returned: always
                  sample: "0000:00:04.0"
                pci_address:
                  description: PCI address with domain; V(null) for fabrics controllers.
                  type: str
                  returned: always
                  sample: "0000:00:04.0"
                subsysnqn:
                  description: NVM subsystem NQN.
                  type: str
                  returned: always
                  sample: nqn.2019-08.org.qemu:DATA0001
                cntlid:
                  description: Controller ID.
                  type: int
                  returned: always
                  sample: 0
                state:
                  description: Controller state.
                  type: str
                  returned: always
                  sample: live
                numa_node:
                  description: NUMA node of the PCI function; V(null) when unknown (kernel -1) or not PCIe.
                  type: int
                  returned: always
                  sample: 0
                local_cpulist:
                  description: CPUs local to the controller, kernel cpulist format.
                  type: str
                  returned: always
                  sample: 0-15
                local_cpus:
                  description: C(local_cpulist) expanded.
                  type: list
                  elements: int
                  returned: always
                  sample: [0, 1, 2, 3]
                queue_count:
                  description: Queues of the controller including the admin queue.
                  type: int
                  returned: always
                  sample: 9
                io_queues:
                  description: I/O queues in use (C(queue_count) - 1).
                  type: int
                  returned: always
                  sample: 8
                sqsize:
                  description: I/O submission queue size, 0's based (C(sqsize)).
                  type: int
                  returned: always
                  sample: 1023
                io_queues_feature:
                  description: I/O queue pairs the controller allocated (get-feature 7, min of SQ and CQ);
                    V(null) when neither the admin ioctl nor nvme-cli answered, or O(use_nvme_cli=false).
                  type: int
                  returned: always
                  sample: 8
                io_queues_feature_sq:
                  description: I/O submission queues allocated (NSQA + 1).
                  type: int
                  returned: always
                  sample: 8
                io_queues_feature_cq:
                  description: I/O completion queues allocated (NCQA + 1).
                  type: int
                  returned: always
                  sample: 8
                mdts_bytes:
                  description: Maximum data transfer size in bytes from id-ctrl (4 KiB pages assumed);
                    V(null) when unlimited, when neither the admin ioctl nor nvme-cli answered, or
                    O(use_nvme_cli=false).
                  type: int
                  returned: always
                  sample: 524288
                admin_source:
                  description: Who answered the admin commands of this section for this controller.
                  type: dict
                  returned: always
                  sample: {"id_ctrl": "ioctl", "num_queues": "ioctl"}
                  contains:
                    id_ctrl:
                      description: V(ioctl) (the kernel's admin passthrough), V(nvme-cli) (the ioctl refused),
                        or V(null) (no answer, see C(errors), or O(use_nvme_cli=false)).
                      type: str
                      returned: always
                      sample: ioctl
                    num_queues:
                      description: The same for get-feature 7 (Number of Queues).
                      type: str
                      returned: always
                      sample: ioctl
                current_link_speed:
                  description: Current PCIe link speed as the kernel prints it.
                  type: str
                  returned: always
                  sample: 8.0 GT/s PCIe
                current_link_speed_gts:
                  description: Current PCIe link speed in GT/s.
                  type: float
                  returned: always
                  sample: 8.0
                max_link_speed:
                  description: Maximum PCIe link speed as the kernel prints it.
                  type: str
                  returned: always
                  sample: 16.0 GT/s PCIe
                max_link_speed_gts:
                  description: Maximum PCIe link speed in GT/s.
                  type: float
                  returned: always
                  sample: 16.0
                current_link_width:
                  description: Current PCIe link width (lanes).
                  type: int
                  returned: always
                  sample: 4
                max_link_width:
                  description: Maximum PCIe link width (lanes).
                  type: int
                  returned: always
                  sample: 4
                namespaces:
                  description: Block device names of the namespaces reached through this controller.
                  type: list
                  elements: str
                  returned: always
                  sample: [nvme1n1]
            namespaces:
              description: One entry per namespace block device (the multipath head when native multipath is on).
              type: list
              elements: dict
              returned: always
              contains:
                name:
                  description: Block device name.
                  type: str
                  returned: always
                  sample: nvme1n1
                device:
                  description: Block device path.
                  type: str
                  returned: always
                  sample: /dev/nvme1n1
                controllers:
                  description: Controllers that reach this namespace.
                  type: list
                  elements: str
                  returned: always
                  sample: [nvme1]
                paths:
                  description: Hidden per-path devices (C(nvmeXcYnZ)) under native multipath; empty otherwise.
                  type: list
                  elements: str
                  returned: always
                  sample: []
                multipath:
                  description: Whether the block device is a native multipath head.
                  type: bool
                  returned: always
                  sample: false
                nsid:
                  description: Namespace ID.
                  type: int
                  returned: always
                  sample: 1
                size_bytes:
                  description: Size in bytes (C(size) x 512).
                  type: int
                  returned: always
                  sample: 10737418240
                logical_block_size:
                  description: Logical block size in bytes.
                  type: int
                  returned: always
                  sample: 512
                physical_block_size:
                  description: Physical block size in bytes.
                  type: int
                  returned: always
                  sample: 512
                optimal_io_size:
                  description: Optimal I/O size in bytes (0 = not reported).
                  type: int
                  returned: always
                  sample: 0
                wwid:
                  description: World wide identifier.
                  type: str
                  returned: always
                  sample: nvme.1b36-44415441303030310000-51454d55204e564d65204374726c-00000001
                nguid:
                  description:
                    - The namespace's NGUID as sysfs shows it (C(nguid)), lower case; V(null) when the drive reports
                      none (absent or all zero). Two block devices with the same NGUID, EUI-64, UUID or WWID are one
                      namespace reached twice (dual-ported or NVMe-oF without native multipath).
                  type: str
                  returned: always
                  sample: 6c6e7661-6d65-0000-0000-000000000001
                eui:
                  description: The namespace's EUI-64 (sysfs C(eui)), lower case; V(null) when none.
                  type: str
                  returned: always
                  sample: 0025388b01a2c3d4
                uuid:
                  description: The namespace's UUID (sysfs C(uuid)), lower case; V(null) when none.
                  type: str
                  returned: always
                  sample: 5d1f8c4e-0b4f-4a3e-9a8c-2f7e1b6d3c90
                partitions:
                  description: Partition names.
                  type: list
                  elements: str
                  returned: always
                  sample: [nvme0n1p1, nvme0n1p2]
                partitioned:
                  description: Whether the disk has partitions.
                  type: bool
                  returned: always
                  sample: true
                holders:
                  description: Kernel names of the devices stacked on the disk or its partitions (md, dm).
                  type: list
                  elements: str
                  returned: always
                  sample: [md0]
                mounted:
                  description: Whether the disk or one of its partitions is mounted or used as swap directly.
                  type: bool
                  returned: always
                  sample: true
                mount_points:
                  description: Mount points of the disk and its partitions (direct mounts only).
                  type: list
                  elements: str
                  returned: always
                  sample: [/, /boot/efi]
                swap:
                  description: Whether the disk or one of its partitions is an active swap device.
                  type: bool
                  returned: always
                  sample: false
                is_os_drive:
                  description: Whether the disk holds V(/), V(/boot), V(/boot/efi), V(/efi) or swap, directly,
                    through partitions or through dm/md holders.
                  type: bool
                  returned: always
                  sample: true
                os_roles:
                  description: The OS mount points (and V(swap)) the disk holds.
                  type: list
                  elements: str
                  returned: always
                  sample: [/]
                in_use_reason:
                  description: Why the disk is not safe to touch (mounts, swap, holders, partitions); V(null)
                    when it is free.
                  type: str
                  returned: always
                  sample: holds / (nvme0n1p1)
            errors:
              description: Failed commands and unparsable outputs of this section.
              type: list
              elements: str
              returned: always
              sample: []
        block:
          description: Block layer queue settings of the NVMe namespaces.
          returned: when block is gathered
          type: dict
          contains:
            devices:
              description: One entry per NVMe namespace block device.
              type: list
              elements: dict
              returned: always
              contains:
                name:
                  description: Block device name.
                  type: str
                  returned: always
                  sample: nvme1n1
                device:
                  description: Block device path.
                  type: str
                  returned: always
                  sample: /dev/nvme1n1
                scheduler:
                  description: Active I/O scheduler.
                  type: str
                  returned: always
                  sample: none
                schedulers_available:
                  description: Schedulers the device accepts.
                  type: list
                  elements: str
                  returned: always
                  sample: [none, mq-deadline]
                nr_requests:
                  description: C(queue/nr_requests).
                  type: int
                  returned: always
                  sample: 1023
                read_ahead_kb:
                  description: C(queue/read_ahead_kb) (KiB).
                  type: int
                  returned: always
                  sample: 128
                max_sectors_kb:
                  description: C(queue/max_sectors_kb) (KiB).
                  type: int
                  returned: always
                  sample: 512
                max_hw_sectors_kb:
                  description: C(queue/max_hw_sectors_kb) (KiB), the upper bound of C(max_sectors_kb).
                  type: int
                  returned: always
                  sample: 512
                nomerges:
                  description: C(queue/nomerges) (0, 1 or 2).
                  type: int
                  returned: always
                  sample: 0
                rq_affinity:
                  description: C(queue/rq_affinity) (0, 1 or 2).
                  type: int
                  returned: always
                  sample: 1
                io_poll:
                  description: Whether polled I/O is enabled (C(queue/io_poll)).
                  type: bool
                  returned: always
                  sample: false
                write_cache:
                  description: C(queue/write_cache).
                  type: str
                  returned: always
                  sample: write back
                rotational:
                  description: C(queue/rotational).
                  type: bool
                  returned: always
                  sample: false
                sectors_written:
                  description: 512-byte sectors written to the device since boot (C(stat), field 7); what a run
                    wrote to it is the change between two gathers of one boot.
                  type: int
                  returned: always
                  sample: 20971520
                hw_contexts:
                  description: Number of blk-mq hardware contexts (C(mq/*)); V(null) for bio-based devices.
                  type: int
                  returned: always
                  sample: 8
                hw_tag_depth:
                  description: Tags per hardware context (C(mq/0/nr_tags)), else the nvme C(io_queue_depth) parameter.
                  type: int
                  returned: always
                  sample: 1023
                hw_tag_depth_source:
                  description: Where C(hw_tag_depth) came from (V(mq) or V(module_param)).
                  type: str
                  returned: always
                  sample: mq
            nvme_io_queue_depth_param:
              description: nvme module parameter C(io_queue_depth) (bounds nr_requests with scheduler none).
              type: int
              returned: always
              sample: 1024
            nvme_poll_queues_param:
              description: nvme module parameter C(poll_queues).
              type: int
              returned: always
              sample: 0
            nvme_write_queues_param:
              description: nvme module parameter C(write_queues).
              type: int
              returned: always
              sample: 0
            nvme_core_multipath:
              description: nvme_core module parameter C(multipath) (native NVMe multipath).
              type: bool
              returned: always
              sample: true
            errors:
              description: Errors of this section.
              type: list
              elements: str
              returned: always
              sample: []
        thermal:
          description: NVMe temperatures, thresholds and throttling.
          returned: when thermal is gathered
          type: dict
          contains:
            controllers:
              description: One entry per controller. Temperatures are degrees Celsius.
              type: list
              elements: dict
              returned: always
              contains:
                name:
                  description: Controller name.
                  type: str
                  returned: always
                  sample: nvme1
                composite_temp_c:
                  description: Composite temperature, from hwmon when present, else from smart-log.
                  type: float
                  returned: always
                  sample: 49.85
                composite_source:
                  description: V(hwmon) or V(smart-log); V(null) when no source gave a value.
                  type: str
                  returned: always
                  sample: hwmon
                hwmon:
                  description: hwmon device name used.
                  type: str
                  returned: always
                  sample: hwmon1
                sensors:
                  description: hwmon temperature sensors.
                  type: list
                  elements: dict
                  returned: always
                  contains:
                    sensor:
                      description: hwmon channel.
                      type: str
                      returned: always
                      sample: temp1
                    label:
                      description: hwmon label.
                      type: str
                      returned: always
                      sample: Composite
                    temp_c:
                      description: Temperature in degrees Celsius.
                      type: float
                      returned: always
                      sample: 49.85
                temp_max_c:
                  description: hwmon C(temp1_max) (over-temperature threshold, feature 4).
                  type: float
                  returned: always
                  sample: 69.85
                temp_min_c:
                  description: hwmon C(temp1_min) (under-temperature threshold).
                  type: float
                  returned: always
                  sample: -273.15
                temp_crit_c:
                  description: hwmon C(temp1_crit) (critical composite temperature).
                  type: float
                  returned: always
                  sample: 99.85
                temp_alarm:
                  description: hwmon C(temp1_alarm).
                  type: bool
                  returned: always
                  sample: false
                smart_log_temp_c:
                  description: Composite temperature from smart-log (Kelvin - 273).
                  type: int
                  returned: always
                  sample: 50
                smart_log_sensors_c:
                  description: smart-log temperature sensors 1..8 that are reported.
                  type: list
                  elements: int
                  returned: always
                  sample: [51, 47]
                critical_warning:
                  description: smart-log critical warning byte.
                  type: int
                  returned: always
                  sample: 0
                critical_warning_bits:
                  description: Decoded critical warning bits (V(available_spare), V(temperature_threshold),
                    V(reliability_degraded), V(read_only), V(volatile_backup_failed), V(pmr_read_only)).
                  type: dict
                  returned: always
                  sample: {available_spare: false, temperature_threshold: false, reliability_degraded: false,
                           read_only: false, volatile_backup_failed: false, pmr_read_only: false}
                available_spare_pct:
                  description: Available spare (percent).
                  type: int
                  returned: always
                  sample: 100
                percentage_used:
                  description: Endurance used (percent, may exceed 100).
                  type: int
                  returned: always
                  sample: 3
                data_units_written:
                  description: Data units written over the drive's life (SMART log; a unit is 1000 x 512 bytes),
                    null without the log.
                  type: int
                  returned: always
                  sample: 1234567
                media_errors:
                  description: Media and data integrity errors.
                  type: int
                  returned: always
                  sample: 0
                warning_temp_time_min:
                  description: Minutes above WCTEMP.
                  type: int
                  returned: always
                  sample: 0
                critical_comp_time_min:
                  description: Minutes above CCTEMP.
                  type: int
                  returned: always
                  sample: 0
                thm_temp1_trans_count:
                  description: Transitions into light thermal throttling (TMT1).
                  type: int
                  returned: always
                  sample: 0
                thm_temp2_trans_count:
                  description: Transitions into heavy thermal throttling (TMT2).
                  type: int
                  returned: always
                  sample: 0
                thm_temp1_total_time_s:
                  description: Seconds spent in TMT1 throttling.
                  type: int
                  returned: always
                  sample: 0
                thm_temp2_total_time_s:
                  description: Seconds spent in TMT2 throttling.
                  type: int
                  returned: always
                  sample: 0
                wctemp_c:
                  description: Warning composite temperature threshold from id-ctrl.
                  type: int
                  returned: always
                  sample: 70
                cctemp_c:
                  description: Critical composite temperature threshold from id-ctrl.
                  type: int
                  returned: always
                  sample: 100
                mntmt_c:
                  description: Minimum thermal management temperature from id-ctrl (V(null) = not reported).
                  type: int
                  returned: always
                  sample: null
                mxtmt_c:
                  description: Maximum thermal management temperature from id-ctrl (V(null) = not reported).
                  type: int
                  returned: always
                  sample: null
                hctma:
                  description: Host controlled thermal management supported (id-ctrl HCTMA bit 0).
                  type: bool
                  returned: always
                  sample: false
                throttled:
                  description: V(true) when the critical warning temperature bit is set or the composite
                    temperature is at or above WCTEMP; V(null) when neither can be known.
                  type: bool
                  returned: always
                  sample: false
                throttle_reason:
                  description: Why C(throttled) is true, with the numbers; V(null) otherwise.
                  type: str
                  returned: always
                  sample: composite temperature 72 °C >= WCTEMP 70 °C (CCTEMP 100 °C)
                throttle_history:
                  description: V(true) when a thermal transition count or the warning/critical temperature time is
                    above zero; V(null) without smart-log.
                  type: bool
                  returned: always
                  sample: false
            throttled_controllers:
              description: Names of the controllers whose C(throttled) is true.
              type: list
              elements: str
              returned: always
              sample: []
            errors:
              description: Errors of this section.
              type: list
              elements: str
              returned: always
              sample: []
        io_uring:
          description: io_uring availability for the training user.
          returned: when io_uring is gathered
          type: dict
          contains:
            kernel_release:
              description: Kernel release.
              type: str
              returned: always
              sample: 6.1.0-57-amd64
            io_uring_disabled:
              description: C(kernel.io_uring_disabled) (0, 1, 2); V(null) when the kernel lacks it (before 6.6).
              type: int
              returned: always
              sample: 0
            io_uring_group:
              description: C(kernel.io_uring_group) (-1 = no group); V(null) when absent.
              type: int
              returned: always
              sample: -1
            training_user:
              description: User evaluated (O(training_user) or the module's user).
              type: str
              returned: always
              sample: trainer
            training_user_uid:
              description: UID of the training user; V(null) when unknown.
              type: int
              returned: always
              sample: 1000
            training_user_groups:
              description: Group names of the training user.
              type: list
              elements: str
              returned: always
              sample: [trainer, video]
            allowed_for_user:
              description: Whether the training user may create io_uring instances; V(null) when it cannot be told.
              type: bool
              returned: always
              sample: true
            allowed_reason:
              description: Why C(allowed_for_user) has its value.
              type: str
              returned: always
              sample: "kernel.io_uring_disabled=0: io_uring is allowed for everyone"
            memlock:
              description: RLIMIT_MEMLOCK values in bytes, or V(unlimited); V(null) when not known/configured.
              type: dict
              returned: always
              contains:
                module_soft_bytes:
                  description: Soft limit of the module process itself.
                  type: raw
                  returned: always
                  sample: 8388608
                module_hard_bytes:
                  description: Hard limit of the module process itself.
                  type: raw
                  returned: always
                  sample: 8388608
                configured_soft_bytes:
                  description: Soft memlock pam_limits gives the training user (limits.conf then limits.d/*.conf;
                    user entries beat @group entries beat V(*)); V(null) when none applies.
                  type: raw
                  returned: always
                  sample: unlimited
                configured_hard_bytes:
                  description: Hard memlock pam_limits gives the training user.
                  type: raw
                  returned: always
                  sample: unlimited
                configured_soft_source:
                  description: File and line of the winning soft entry.
                  type: str
                  returned: always
                  sample: /etc/security/limits.d/90-trainer.conf:3
                configured_hard_source:
                  description: File and line of the winning hard entry.
                  type: str
                  returned: always
                  sample: /etc/security/limits.d/90-trainer.conf:3
            fio_path:
              description: Path of fio.
              type: str
              returned: always
              sample: /usr/bin/fio
            fio_version:
              description: fio version.
              type: str
              returned: always
              sample: "3.33"
            fio_io_uring_works:
              description: Whether the io_uring fio probe read its 1 MiB of C(/dev/zero); V(null) when not run.
              type: bool
              returned: always
              sample: true
            fio_probe_error:
              description: Why the probe failed or did not run; V(null) on success.
              type: str
              returned: always
              sample: null
            fio_probe_cached:
              description: Whether the probe's result and fio's version were read from this boot's earlier gather
                (C(/run/checkpoint_io/io_uring_probe.json)) instead of running fio (see the notes).
              type: bool
              returned: always
              sample: false
            liburing:
              description: Whether liburing is installed.
              type: bool
              returned: always
              sample: true
            liburing_path:
              description: Path of liburing found.
              type: str
              returned: always
              sample: /lib/x86_64-linux-gnu/liburing.so.2
            errors:
              description: Errors and warnings of this section.
              type: list
              elements: str
              returned: always
              sample: []
        xfs:
          description: XFS filesystems holding the checkpoint paths.
          returned: when xfs is gathered
          type: dict
          contains:
            checkpoint_paths:
              description: Where each O(checkpoint_paths) entry lands.
              type: list
              elements: dict
              returned: always
              contains:
                path:
                  description: The path given.
                  type: str
                  returned: always
                  sample: /mnt/ckpt/run1
                mount_point:
                  description: Mount point holding it.
                  type: str
                  returned: always
                  sample: /mnt/ckpt
                fstype:
                  description: Filesystem type of that mount.
                  type: str
                  returned: always
                  sample: xfs
                is_xfs:
                  description: Whether that mount is XFS.
                  type: bool
                  returned: always
                  sample: true
            filesystems:
              description: One entry per selected XFS mount.
              type: list
              elements: dict
              returned: always
              contains:
                device:
                  description: Mount source.
                  type: str
                  returned: always
                  sample: /dev/md0
                kernel_name:
                  description: Kernel block device name of the source.
                  type: str
                  returned: always
                  sample: md0
                mount_point:
                  description: Mount point.
                  type: str
                  returned: always
                  sample: /mnt/ckpt
                checkpoint_paths:
                  description: The O(checkpoint_paths) this mount holds.
                  type: list
                  elements: str
                  returned: always
                  sample: [/mnt/ckpt/run1]
                options:
                  description: Mount options; flags are V(true), numeric values ints.
                  type: dict
                  returned: always
                  sample: {rw: true, noatime: true, sunit: 1024, swidth: 2048, logbsize: "256k"}
                mount_sunit_bytes:
                  description: Stripe unit from the mount options (512-byte sectors converted to bytes).
                  type: int
                  returned: always
                  sample: 524288
                mount_swidth_bytes:
                  description: Stripe width from the mount options in bytes.
                  type: int
                  returned: always
                  sample: 1048576
                sunit_bytes:
                  description: Stripe unit from xfs_info in bytes.
                  type: int
                  returned: always
                  sample: 524288
                swidth_bytes:
                  description: Stripe width from xfs_info in bytes.
                  type: int
                  returned: always
                  sample: 1048576
                agcount:
                  description: Allocation groups.
                  type: int
                  returned: always
                  sample: 16
                agsize_bytes:
                  description: Allocation group size in bytes.
                  type: int
                  returned: always
                  sample: 1073741824
                block_size:
                  description: Filesystem block size in bytes.
                  type: int
                  returned: always
                  sample: 4096
                sector_size:
                  description: Sector size in bytes.
                  type: int
                  returned: always
                  sample: 512
                size_bytes:
                  description: Data section size in bytes.
                  type: int
                  returned: always
                  sample: 17179869184
                isize:
                  description: Inode size in bytes.
                  type: int
                  returned: always
                  sample: 512
                log:
                  description: Journal placement and size; V(null) without xfs_info.
                  type: dict
                  returned: always
                  contains:
                    internal:
                      description: Whether the log is internal.
                      type: bool
                      returned: always
                      sample: true
                    device:
                      description: External log device; V(null) when internal.
                      type: str
                      returned: always
                      sample: null
                    bytes:
                      description: Log size in bytes.
                      type: int
                      returned: always
                      sample: 67108864
                md:
                  description: The md array under the filesystem; V(null) when not on md.
                  type: dict
                  returned: always
                  contains:
                    name:
                      description: md device name.
                      type: str
                      returned: always
                      sample: md0
                    level:
                      description: RAID level.
                      type: str
                      returned: always
                      sample: raid0
                    chunk_bytes:
                      description: Chunk size in bytes; V(null) for levels without chunks.
                      type: int
                      returned: always
                      sample: 524288
                    raid_disks:
                      description: Member slots.
                      type: int
                      returned: always
                      sample: 2
                    array_state:
                      description: md array state.
                      type: str
                      returned: always
                      sample: clean
                    degraded:
                      description: Whether the array is degraded.
                      type: bool
                      returned: always
                      sample: false
                    members:
                      description: Member block devices (C(slaves/)).
                      type: list
                      elements: str
                      returned: always
                      sample: [nvme3n1, nvme4n1]
            errors:
              description: Errors of this section.
              type: list
              elements: str
              returned: always
              sample: []
        gds:
          description: GPUDirect Storage state and the I/O path cuFile will take.
          returned: when gds is gathered
          type: dict
          contains:
            path:
              description: V(dma) (GPUDirect through nvidia_fs), V(compat) (cuFile falls back to POSIX I/O) or
                V(unavailable).
              type: str
              returned: always
              sample: unavailable
            path_reason:
              description: Why C(path) has its value.
              type: str
              returned: always
              sample: "no NVIDIA GPU: /proc/driver/nvidia/gpus is empty"
            gpus:
              description: Number of NVIDIA GPUs (C(/proc/driver/nvidia/gpus/*)).
              type: int
              returned: always
              sample: 8
            nvidia_fs_loaded:
              description: Whether the nvidia_fs kernel module is loaded.
              type: bool
              returned: always
              sample: true
            nvidia_fs_version:
              description: nvidia_fs version.
              type: str
              returned: always
              sample: "2.25.7"
            rw_stats_enabled:
              description: nvidia_fs C(rw_stats_enabled) parameter (read/write counters only move when true).
              type: bool
              returned: always
              sample: false
            nvidia_fs_stats:
              description: Read/write counters of C(/proc/driver/nvidia-fs/stats); V(null) when absent.
              type: dict
              returned: always
              contains:
                io_stats_enabled:
                  description: Whether the stats file says IO stats are enabled.
                  type: bool
                  returned: always
                  sample: false
                reads:
                  description: Read counters (hidden counters are V(null) while stats are disabled).
                  type: dict
                  returned: always
                  sample: {n: null, ok: null, err: 0, mib: null, io_state_err: 0}
                writes:
                  description: Write counters.
                  type: dict
                  returned: always
                  sample: {n: null, ok: null, err: 0, mib: null, io_state_err: 0}
            libcufile:
              description: Whether libcufile is installed.
              type: bool
              returned: always
              sample: true
            libcufile_path:
              description: Real file of libcufile.
              type: str
              returned: always
              sample: /usr/local/cuda-12.9/targets/x86_64-linux/lib/libcufile.so.1.14.0
            libcufile_version:
              description: Version from the library file name.
              type: str
              returned: always
              sample: "1.14.0"
            cufile_json:
              description: C(/etc/cufile.json).
              type: dict
              returned: always
              contains:
                path:
                  description: File path.
                  type: str
                  returned: always
                  sample: /etc/cufile.json
                exists:
                  description: Whether the file exists.
                  type: bool
                  returned: always
                  sample: true
                properties:
                  description: Effective properties by dotted key (file values plus NVIDIA's defaults); V(null)
                    when absent or unparsable.
                  type: dict
                  returned: always
                  sample: {"properties.allow_compat_mode": true, "execution.max_io_queue_depth": 128}
                set:
                  description: Dotted keys present in the file.
                  type: list
                  elements: str
                  returned: always
                  sample: [properties.allow_compat_mode]
                errors:
                  description: Parse errors.
                  type: list
                  elements: str
                  returned: always
                  sample: []
            overrides:
              description: Per-process configurations that bypass C(/etc/cufile.json).
              type: dict
              returned: always
              contains:
                env_path_json:
                  description: C(CUFILE_ENV_PATH_JSON) in the module's environment.
                  type: str
                  returned: always
                  sample: null
                env_file:
                  description: That file, in the C(cufile_json) format; V(null) when unset.
                  type: dict
                  returned: always
                  sample: null
                local_cufile_json:
                  description: C(local_cufile.json) files under O(gds_job_dirs), in the C(cufile_json) format.
                  type: list
                  elements: dict
                  returned: always
                  sample: []
                env_sources:
                  description: Where C(CUFILE_ENV_PATH_JSON) is set for the training user's processes - /etc/environment,
                    profile scripts, systemd service units, the user's shell start-up files (read without following a
                    link), the environments of running processes of root and the training user (other users'
                    processes are not read).
                  type: list
                  elements: dict
                  returned: always
                  sample: [{source: file, path: /home/trainer/.bashrc, value: /home/trainer/job/local_cufile.json}]
                  contains:
                    source:
                      description: V(file) or V(process).
                      type: str
                    path:
                      description: The file, or C(/proc/<pid>/environ).
                      type: str
                    value:
                      description: The file it names.
                      type: str
                    comm:
                      description: The process's name (V(process) only).
                      type: str
                    uid:
                      description: The owner of the file, or of the process, that sets it.
                      type: int
                    trusted:
                      description: Whether root alone controls the source (a root-owned file, a root process). The
                        gds role edits a file named from an untrusted source only when the file is the training
                        user's own.
                      type: bool
                    target_uid:
                      description: The owner of the file it names (V(null) when missing).
                      type: int
                notes:
                  description: What each override bypasses.
                  type: list
                  elements: str
                  returned: always
                  sample: []
                training_uid:
                  description: The training user's uid (V(null) when unknown on the node).
                  type: int
                  returned: always
                  sample: 1000
            gpu_pci:
              description: PCI addresses of the NVIDIA GPUs (C(/proc/driver/nvidia/gpus)).
              type: list
              elements: str
              returned: always
              sample: ["0000:1b:00.0"]
            driver:
              description: The NVIDIA driver from C(/proc/driver/nvidia/version).
              type: dict
              returned: always
              sample: {version: 565.57.01, open_kernel_module: true}
              contains:
                version:
                  description: The driver version; V(null) without the driver.
                  type: str
                open_kernel_module:
                  description: Whether NVIDIA's open kernel modules are loaded (V(false) - the proprietary ones).
                  type: bool
            kernel:
              description: The kernel and its PCI P2PDMA support.
              type: dict
              returned: always
              sample: {release: 6.8.0-60-generic, p2pdma: true}
              contains:
                release:
                  description: C(/proc/sys/kernel/osrelease).
                  type: str
                p2pdma:
                  description: C(CONFIG_PCI_P2PDMA=y) in C(/boot/config-<release>) or C(/proc/config.gz); V(null) when
                    neither is readable.
                  type: bool
            cuda_version:
              description: The CUDA toolkit's version (C(version.json) or C(version.txt) under C(/usr/local/cuda*));
                V(null) when not installed.
              type: str
              returned: always
              sample: 12.8.1
            nvidia_fs_modules:
              description: The drivers registered with nvidia-fs (C(/proc/driver/nvidia-fs/modules)); V(null) without
                nvidia-fs. Without C(nvme) every cuFile call to local NVMe runs in compatibility mode.
              type: list
              elements: str
              returned: always
              sample: [nvme]
            iommu:
              description: The IOMMU mode (V(off), V(passthrough), V(translated) or V(null)) and what it was read from.
              type: dict
              returned: always
              sample: {mode: passthrough, evidence: "iommu units: dmar0; group types: identity; cmdline: iommu=pt"}
              contains:
                mode:
                  description: V(off), V(passthrough), V(translated), or V(null) when not known.
                  type: str
                evidence:
                  description: The IOMMU units, the groups' default domain types and the kernel command line.
                  type: str
            topology:
              description: Each GPU and NVMe controller pair on PCI, where they meet, and the bridges between them with
                their ACS state (read from config space; root only).
              type: dict
              returned: always
              sample: {pairs: [{gpu: "0000:1b:00.0", nvme: nvme0, relation: same switch, bridges: ["0000:19:00.0"]}],
                       bridges: [{pci: "0000:19:00.0", acs: true, acs_p2p_redirect: false}]}
              contains:
                pairs:
                  description: V(same switch), V(same root port), V(same root complex) or V(different root complexes)
                    per pair, with the bridges on the path.
                  type: list
                  elements: dict
                bridges:
                  description: Each bridge - C(acs) (the capability is there; V(null) when config space was not
                    readable) and C(acs_p2p_redirect) (P2P request or completion redirect on).
                  type: list
                  elements: dict
            effective_config_source:
              description: Configuration cuFile reads for processes with the module's environment.
              type: str
              returned: always
              sample: /etc/cufile.json
            allow_compat_mode:
              description: Effective C(properties.allow_compat_mode) (legacy C(use_compat_mode) honoured).
              type: bool
              returned: always
              sample: true
            force_compat_mode:
              description: Effective C(properties.force_compat_mode).
              type: bool
              returned: always
              sample: false
            gdscheck_path:
              description: Path of gdscheck; V(null) when absent or not run (no GPU or no libcufile).
              type: str
              returned: always
              sample: /usr/local/cuda/gds/tools/gdscheck
            gdscheck:
              description: Summary of C(gdscheck -p); V(null) when not run.
              type: dict
              returned: always
              contains:
                gds_version:
                  description: GDS release version.
                  type: str
                  returned: always
                  sample: "1.14.0.30"
                nvidia_fs_version:
                  description: nvidia_fs version gdscheck saw.
                  type: str
                  returned: always
                  sample: "2.24"
                libcufile_version:
                  description: libcufile version gdscheck saw.
                  type: str
                  returned: always
                  sample: "2.12"
                nvme_supported:
                  description: Whether gdscheck reports GPUDirect support for NVMe.
                  type: bool
                  returned: always
                  sample: true
                nvme_modes:
                  description: NVMe modes (GDS 1.16+, for example V([nvfs, compat])); empty for older releases.
                  type: list
                  elements: str
                  returned: always
                  sample: []
                nvme_driver:
                  description: The parsed NVMe driver line (V(supported), V(modes), V(raw)).
                  type: dict
                  returned: always
                  sample: {supported: true, modes: [], raw: Supported}
                use_compat_mode:
                  description: C(properties.use_compat_mode) as gdscheck prints it.
                  type: bool
                  returned: always
                  sample: false
                iommu_enabled:
                  description: Whether the IOMMU is enabled per gdscheck.
                  type: bool
                  returned: always
                  sample: false
                gpus:
                  description: GPUs as gdscheck lists them.
                  type: list
                  elements: dict
                  returned: always
                  sample: [{index: 0, name: NVIDIA H200, bar: 1, bar_size_mib: 262144, supports_gds: true,
                            iommu_enabled: false}]
            errors:
              description: Errors of this section.
              type: list
              elements: str
              returned: always
              sample: []
        deepspeed:
          description: DeepSpeed aio settings of the O(deepspeed_configs).
          returned: when deepspeed is gathered
          type: dict
          contains:
            aio_defaults:
              description: DeepSpeed's aio defaults.
              type: dict
              returned: always
              sample: {block_size: 1048576, queue_depth: 8, intra_op_parallelism: 1, single_submit: false,
                       overlap_events: true, use_gds: false}
            configs:
              description: One entry per O(deepspeed_configs) path.
              type: list
              elements: dict
              returned: always
              contains:
                path:
                  description: Config path.
                  type: str
                  returned: always
                  sample: /opt/train/ds_config.json
                exists:
                  description: Whether the file exists.
                  type: bool
                  returned: always
                  sample: true
                parse_error:
                  description: Why the file could not be used; V(null) when parsed.
                  type: str
                  returned: always
                  sample: null
                aio_present:
                  description: Whether the config has an C(aio) section.
                  type: bool
                  returned: always
                  sample: true
                aio:
                  description: Effective aio values as DeepSpeed holds them (defaults for missing keys,
                    C(thread_count) mapped to C(intra_op_parallelism); string booleans stay strings).
                  type: dict
                  returned: always
                  sample: {block_size: 1048576, queue_depth: 32, intra_op_parallelism: 4, single_submit: "false",
                           overlap_events: true, use_gds: false}
                aio_truthiness:
                  description: Python truth value of the boolean keys (a non-empty string is true).
                  type: dict
                  returned: always
                  sample: {single_submit: true, overlap_events: true, use_gds: false}
                warnings:
                  description: Keys DeepSpeed ignores or misreads.
                  type: list
                  elements: str
                  returned: always
                  sample: ["aio.num_threads is ignored by DeepSpeed (ds_nvme_tune emits it); ..."]
                unknown_aio_keys:
                  description: aio keys DeepSpeed does not read.
                  type: list
                  elements: str
                  returned: always
                  sample: [num_threads]
                nvme_offload_paths:
                  description: C(zero_optimization.offload_optimizer/offload_param.nvme_path) values with device nvme.
                  type: list
                  elements: str
                  returned: always
                  sample: [/local_nvme]
                writer:
                  description: What DeepSpeed reads from C(checkpoint.writer) (FastPersist; its defaults for keys not
                    set); V(null) without the section (DeepSpeed saves with C(torch.save)).
                  type: dict
                  returned: always
                  version_added: 1.1.0
                  sample: {type: FAST, io_buffer_size: 67108864, io_buffer_double: true, show_statistics: false,
                           data_parallel: REPLICA, decoupled: false, io_multiplier: 1}
            installed:
              description: DeepSpeed and torch as O(deepspeed_python) has them.
              type: dict
              returned: always
              version_added: 1.1.0
              sample: {python: /opt/train/bin/python, version: 0.19.8, torch_version: 2.13.0+cpu, fastpersist: true,
                       error: null}
              contains:
                python:
                  description: O(deepspeed_python).
                  type: str
                  returned: always
                version:
                  description: DeepSpeed's version; V(null) when not installed or not known.
                  type: str
                  returned: always
                torch_version:
                  description: torch's version; V(null) when not installed or not known.
                  type: str
                  returned: always
                fastpersist:
                  description: Whether that DeepSpeed has FastPersist's checkpoint writer (0.17.1 and later); V(null)
                    when not known.
                  type: bool
                  returned: always
                error:
                  description: Why the versions are not known; V(null) when they are.
                  type: str
                  returned: always
            errors:
              description: Configs that are missing or unparsable.
              type: list
              elements: str
              returned: always
              sample: []
        state:
          description: The collection's state store on the node (O(state_dir)) - what it made, found and measured.
          returned: when state is gathered
          type: dict
          contains:
            dir:
              description: The state directory.
              type: str
              returned: always
              sample: /var/lib/ai_storage_checkpoint_io
            exists:
              description: Whether the directory exists (no run has recorded anything when V(false)).
              type: bool
              returned: always
              sample: true
            schema_version:
              description: The record schema this collection reads and writes.
              type: int
              returned: always
              sample: 1
            records:
              description: The data of every record by name (V(xfs) the checkpoint volume, V(depth_sweep) the
                sweeps, V(baseline) the write before tuning, V(settings_before), V(block_layer),
                V(io_uring_engine), V(deepspeed_aio) the values found before each role's first change; V(thermal_series),
                V(verification) and V(engine_check) the last measurements, each with what it depended on).
              type: dict
              returned: always
              sample: {settings_before: {queue_depth: 8, block_size: 1048576, intra_op_parallelism: 1}}
            meta:
              description: Per record, its schema (0 for a record of a version before the layout), written_at and
                writer.
              type: dict
              returned: always
              sample: {settings_before: {schema: 1, written_at: "2026-12-02T01:02:03Z", writer: tune_checkpoint_nodes}}
            volume:
              description:
                - The checkpoint volume the xfs role made (its record C(xfs)) - C(exists), C(holders) (the kernel name
                  its md array has now, found by its UUID link), C(mount_point), C(checkpoint_dir), C(md_uuid).
                - P(ai_storage.checkpoint_io.select_drives#filter) allows its holders, so a second run still selects
                  the array's members.
              type: dict
              returned: always
              contains:
                exists:
                  description: Whether the record says the volume is present (V(false) once reverted, or with none).
                  type: bool
                  returned: always
                  sample: true
                holders:
                  description: The kernel name of the volume's md array now (V([]) without an array or its link).
                  type: list
                  elements: str
                  returned: always
                  sample: [md127]
                mount_point:
                  description: The volume's mount point.
                  type: str
                  returned: always
                  sample: /mnt/checkpoints
                checkpoint_dir:
                  description: The checkpoint directory on it.
                  type: str
                  returned: always
                  sample: /mnt/checkpoints
                md_uuid:
                  description: The md array's UUID (mdadm's form).
                  type: str
                  returned: always
                  sample: "e78a7203:e730df8e:32ae8ffc:b4fc9ee8"
            kernel:
              description: The running kernel (what a recorded measurement depended on, with the drives and the
                volume; a later run measures again after a kernel change).
              type: dict
              returned: always
              contains:
                release:
                  description: The kernel's release (C(/proc/sys/kernel/osrelease)), V(null) where it cannot be read.
                  type: str
                  returned: always
                  sample: 6.1.0-28-amd64
            lease:
              description: The live run lease (the run holding the node; see M(ai_storage.checkpoint_io.checkpoint_io_lock)),
                V(null) when none.
              type: dict
              returned: always
              sample: null
            errors:
              description: Records or a directory the store refuses (a symlink, another owner, bad JSON, a newer
                schema).
              type: list
              elements: str
              returned: always
              sample: []
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.nvme_facts import CLI_NOTE_PREFIX
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.node_facts import (
    SUBSET_CHOICES,
    gather_facts,
)


def argument_spec():
    return dict(
        gather_subset=dict(type='list', elements='str', default=['all'], choices=SUBSET_CHOICES),
        checkpoint_paths=dict(type='list', elements='path'),
        deepspeed_configs=dict(type='list', elements='path'),
        deepspeed_python=dict(type='path'),
        gds_job_dirs=dict(type='list', elements='path'),
        training_user=dict(type='str'),
        fio_probe=dict(type='bool', default=True),
        use_nvme_cli=dict(type='bool', default=True),
        sysfs_root=dict(type='path', default='/sys'),
        procfs_root=dict(type='path', default='/proc'),
        devfs_root=dict(type='path', default='/dev'),
        etc_root=dict(type='path', default='/etc'),
        merge=dict(type='bool', default=True),
        state_dir=dict(type='path', default=STATE_DIR),
    )


def path_errors(params):
    """The path options refused before anything is read: each must be an absolute path (a relative one would be
    read wherever the module happens to run)."""
    errors = []
    for option in ('checkpoint_paths', 'deepspeed_configs', 'gds_job_dirs'):
        for index, path in enumerate(params.get(option) or []):
            if not isinstance(path, str) or not os.path.isabs(path):
                errors.append('%s[%d]: %r is not an absolute path' % (option, index, path))
    python = params.get('deepspeed_python')
    if python is not None and (not isinstance(python, str) or not os.path.isabs(python)):
        errors.append('deepspeed_python: %r is not an absolute path' % (python,))
    state_dir = params.get('state_dir')
    if state_dir is not None and (not isinstance(state_dir, str) or not os.path.isabs(state_dir)):
        errors.append('state_dir: %r is not an absolute path' % (state_dir,))
    return errors


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    errors = path_errors(params)
    if errors:
        module.fail_json(msg='; '.join(errors), errors=errors)
    ctx = Context(
        module=module,
        sysfs_root=params['sysfs_root'],
        procfs_root=params['procfs_root'],
        devfs_root=params['devfs_root'],
        etc_root=params['etc_root'],
        # the io_uring probe's result is kept for the boot in /run on a real node only (not under a fake /proc)
        run_root='/run' if os.path.normpath(params['procfs_root']) == '/proc' else None,
    )
    facts = gather_facts(ctx, params)
    # The note of a section whose admin commands neither the ioctl nor nvme-cli answered (see NvmeInventory.cli_note)
    notes = [error for section in ('nvme', 'thermal') for error in (facts.get(section) or {}).get('errors') or []
             if error.startswith(CLI_NOTE_PREFIX)]
    if params['use_nvme_cli'] and notes:
        module.warn('nvme-cli (nvme) is not installed: the NVMe facts come from sysfs alone (the NVMe admin ioctl was '
                    'refused too, see the errors: the facts of the commands it refused, id-ctrl, smart-log or '
                    'get-feature, are null; a critical warning is seen through the kernel\'s temperature alarm only) '
                    'and the tuning goes on. Install nvme-cli (apt-get install nvme-cli) for them.')
    module.exit_json(changed=False, ansible_facts={'checkpoint_io': facts})


if __name__ == '__main__':
    main()
