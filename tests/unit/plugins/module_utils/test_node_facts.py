# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Collectors of checkpoint_io_facts on a fake Linux 6.1 node (see checkpoint_io_fake_node)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from checkpoint_io_fake_node import (
    XFS_INFO_MD0,
    build_node,
    link,
    make_context,
    num_queues,
    smart_log,
    standard_runner,
    write,
)

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import deepspeed
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import (
    block_facts,
    deepspeed_facts,
    gds_facts,
    io_uring_facts,
    node_facts,
    nvme_facts,
    thermal_facts,
    xfs_facts,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.blockdev import BlockTopology


@pytest.fixture
def node(tmp_path):
    return build_node(tmp_path)


def _by_name(items):
    return dict((item['name'], item) for item in items)


def _inventory(node, runner=None, use_nvme_cli=True, logs=('id-ctrl', 'num-queues', 'smart-log'), **ctx_kwargs):
    runner = runner or standard_runner(node)
    ctx = make_context(node, runner, **ctx_kwargs)
    inv = nvme_facts.NvmeInventory(ctx, use_nvme_cli=use_nvme_cli)
    inv.prefetch(list(logs))
    return ctx, inv, runner


# ----------------------------------------------------------------------------- nvme
def test_controllers_from_sysfs(node):
    ctx, inv, _runner = _inventory(node)
    section = nvme_facts.collect(ctx, inv)
    assert section['errors'] == []
    ctrls = _by_name(section['controllers'])
    assert list(ctrls) == ['nvme0', 'nvme1', 'nvme2', 'nvme3', 'nvme4']
    c0 = ctrls['nvme0']
    assert c0['serial'] == 'OS0001'
    assert c0['model'] == 'QEMU NVMe Ctrl'
    assert c0['firmware'] == '7.2.22'
    assert c0['transport'] == 'pcie'
    assert c0['address'] == c0['pci_address'] == '0000:01:00.0'
    assert c0['numa_node'] is None  # kernel -1
    assert c0['local_cpulist'] == '0-1' and c0['local_cpus'] == [0, 1]
    assert c0['current_link_speed'] == '2.5 GT/s PCIe' and c0['current_link_speed_gts'] == 2.5
    assert c0['current_link_width'] == 1 and c0['max_link_width'] == 1
    assert c0['queue_count'] == 3 and c0['io_queues'] == 2
    assert c0['io_queues_feature'] == 8 and c0['io_queues_feature_sq'] == 8
    assert c0['mdts_bytes'] == 524288
    assert c0['namespaces'] == ['nvme0n1']
    assert c0['device'] == '/dev/nvme0'
    assert section['nvme_cli'] == {'path': '/usr/sbin/nvme', 'version': '2.3'}


def test_controller_numa_and_fast_link(node):
    ctx, inv, _runner = _inventory(node)
    c1 = _by_name(nvme_facts.collect(ctx, inv)['controllers'])['nvme1']
    assert c1['numa_node'] == 0
    assert c1['local_cpus'] == [0, 1, 2, 3, 8, 9, 10, 11]
    assert (c1['current_link_speed_gts'], c1['max_link_speed_gts']) == (8.0, 16.0)
    assert (c1['current_link_width'], c1['max_link_width']) == (4, 4)


def test_fabrics_controller_with_native_multipath(node):
    ctx, inv, _runner = _inventory(node)
    section = nvme_facts.collect(ctx, inv)
    c4 = _by_name(section['controllers'])['nvme4']
    assert c4['transport'] == 'tcp'
    assert c4['pci_address'] is None
    assert c4['address'].startswith('traddr=127.0.0.1')
    assert c4['current_link_speed'] is None and c4['numa_node'] is None
    assert c4['namespaces'] == ['nvme4n1']
    ns4 = _by_name(section['namespaces'])['nvme4n1']
    assert ns4['paths'] == ['nvme4c4n1'] and ns4['multipath'] is True
    assert ns4['controllers'] == ['nvme4']
    assert ns4['in_use_reason'] is None


def test_multipath_head_found_through_multipath_links(node):
    """A head whose name differs from nvme<subsys>n<ns> is found via /sys/block/<head>/multipath."""
    s = node.sys
    c4 = os.path.realpath(os.path.join(s, 'class', 'nvme', 'nvme4'))
    os.rename(os.path.join(c4, 'nvme4c4n1'), os.path.join(c4, 'nvme7c4n1'))
    head = os.path.realpath(os.path.join(s, 'block', 'nvme4n1'))
    os.unlink(os.path.join(head, 'multipath', 'nvme4c4n1'))
    link(os.path.join(head, 'multipath', 'nvme7c4n1'), os.path.join(c4, 'nvme7c4n1'))
    ctx, inv, _runner = _inventory(node)
    assert inv.namespaces()['nvme4n1'] == {'controllers': ['nvme4'], 'paths': ['nvme7c4n1']}


def test_namespaces_sizes_and_usage(node):
    ctx, inv, _runner = _inventory(node)
    ns = _by_name(nvme_facts.collect(ctx, inv)['namespaces'])
    assert list(ns) == ['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1', 'nvme4n1']

    os_drive = ns['nvme0n1']
    assert os_drive['device'] == '/dev/nvme0n1'
    assert os_drive['size_bytes'] == 6291456 * 512
    assert os_drive['logical_block_size'] == 512 and os_drive['optimal_io_size'] == 512
    assert os_drive['partitions'] == ['nvme0n1p1', 'nvme0n1p15'] and os_drive['partitioned'] is True
    assert os_drive['is_os_drive'] is True
    assert os_drive['os_roles'] == ['/', '/boot/efi']
    assert os_drive['mounted'] is True and os_drive['mount_points'] == ['/', '/boot/efi']
    assert 'holds / (nvme0n1p1)' in os_drive['in_use_reason']
    assert 'holds /boot/efi (nvme0n1p15)' in os_drive['in_use_reason']

    for free in ('nvme1n1', 'nvme2n1'):
        assert ns[free]['is_os_drive'] is False
        assert ns[free]['mounted'] is False and ns[free]['holders'] == []
        assert ns[free]['in_use_reason'] is None

    md_member = ns['nvme3n1']
    assert md_member['holders'] == ['md0']
    assert md_member['mounted'] is False  # not directly mounted
    assert md_member['is_os_drive'] is False
    assert md_member['in_use_reason'] == 'mounted at /mnt/ckpt through md0'


def test_lab_layout_whole_disk_root(node):
    """The lab node mounts / from the unpartitioned /dev/nvme0n1 (no p1)."""
    node.mounts = ['/dev/nvme1n1 / ext4 rw,relatime,errors=remount-ro 0 0']
    node.flush()
    ctx, inv, _runner = _inventory(node)
    ns = _by_name(nvme_facts.collect(ctx, inv)['namespaces'])
    assert ns['nvme1n1']['is_os_drive'] is True
    assert ns['nvme1n1']['in_use_reason'] == 'holds / (nvme1n1)'
    # the partitioned disk with nothing mounted is still not free to touch
    assert ns['nvme0n1']['is_os_drive'] is False
    assert ns['nvme0n1']['in_use_reason'] == 'has partitions (nvme0n1p1, nvme0n1p15)'


def test_dev_root_resolved_through_mountinfo(node):
    node.mounts = ['/dev/root / ext4 rw 0 0']
    node.flush()
    write(os.path.join(node.proc, 'self', 'mountinfo'),
          '22 1 259:3 / / rw,relatime shared:1 - ext4 /dev/root rw\n')
    link(os.path.join(node.sys, 'dev', 'block', '259:3'),
         os.path.realpath(os.path.join(node.sys, 'class', 'block', 'nvme2n1')))
    ctx, inv, _runner = _inventory(node)
    ns = _by_name(nvme_facts.collect(ctx, inv)['namespaces'])
    assert ns['nvme2n1']['is_os_drive'] is True
    assert ns['nvme0n1']['is_os_drive'] is False


def test_swap_and_lvm_root_through_dm(node):
    """Swap on a partition and / on LVM (dm-0 over nvme1n1) both make OS drives."""
    s = node.sys
    d1 = os.path.realpath(os.path.join(s, 'block', 'nvme1n1'))
    node.partition(d1, 'nvme1n1p1', 8000000, 1)
    dm = os.path.join(s, 'devices', 'virtual', 'block', 'dm-0')
    write(os.path.join(dm, 'dm', 'name'), 'vg-root')
    link(os.path.join(dm, 'slaves', 'nvme1n1p1'), os.path.join(d1, 'nvme1n1p1'))
    link(os.path.join(d1, 'nvme1n1p1', 'holders', 'dm-0'), dm)
    link(os.path.join(s, 'class', 'block', 'dm-0'), dm)
    link(os.path.join(s, 'block', 'dm-0'), dm)
    link(os.path.join(node.dev, 'mapper', 'vg-root'), os.path.join(node.dev, 'dm-0'))
    write(os.path.join(node.dev, 'dm-0'))
    node.mounts = ['/dev/mapper/vg-root / ext4 rw 0 0']
    node.swaps = ['/dev/nvme2n1\t\t\t\tpartition\t2097148\t\t0\t\t-2']
    node.flush()
    ctx, inv, _runner = _inventory(node)
    ns = _by_name(nvme_facts.collect(ctx, inv)['namespaces'])
    assert ns['nvme1n1']['is_os_drive'] is True
    assert ns['nvme1n1']['holders'] == ['dm-0']
    assert ns['nvme1n1']['mounted'] is False
    assert ns['nvme1n1']['in_use_reason'] == 'holds / through dm-0 (vg-root)'
    assert ns['nvme2n1']['is_os_drive'] is True and ns['nvme2n1']['swap'] is True
    assert ns['nvme2n1']['mounted'] is True and ns['nvme2n1']['os_roles'] == ['swap']
    assert ns['nvme2n1']['in_use_reason'] == 'holds swap (nvme2n1)'


def test_swap_file_on_data_drive(node):
    node.add_mount('/dev/nvme2n1', '/scratch', 'xfs')
    node.swaps = ['/scratch/swapfile\t\t\t\tfile\t\t2097148\t\t0\t\t-2']
    node.flush()
    topo = BlockTopology(make_context(node, standard_runner(node)))
    usage = topo.disk_usage('nvme2n1')
    assert usage['is_os_drive'] is True and usage['os_roles'] == ['swap']
    assert usage['mount_points'] == ['/scratch']


def test_nvme_cli_runs_once_per_controller_and_log(node):
    runner = standard_runner(node)
    ctx = make_context(node, runner)
    params = {'gather_subset': ['nvme', 'block', 'thermal'], 'use_nvme_cli': True}
    node_facts.gather_facts(ctx, params)
    for sub in ('id-ctrl', 'smart-log', 'get-feature'):
        for ctrl in ('nvme0', 'nvme1', 'nvme2', 'nvme3', 'nvme4'):
            assert runner.count(sub, os.path.join(node.dev, ctrl)) == 1, (sub, ctrl)
    nvme_calls = [c for c in runner.calls if c[0] == '/usr/sbin/nvme' and c[1] != 'version']
    assert len(nvme_calls) == 15
    json_calls = [c for c in nvme_calls if c[1] in ('id-ctrl', 'smart-log')]
    assert all(c[-2:] == ['-o', 'json'] for c in json_calls)


def test_nvme_cli_missing_gives_none_and_one_note(node):
    runner = standard_runner(node, bins={'nvme': None})
    ctx, inv, runner = _inventory(node, runner=runner)
    section = nvme_facts.collect(ctx, inv)
    assert section['nvme_cli']['path'] is None
    assert len(section['errors']) == 1 and 'not found' in section['errors'][0]
    c0 = _by_name(section['controllers'])['nvme0']
    assert c0['mdts_bytes'] is None and c0['io_queues_feature'] is None
    assert c0['io_queues'] == 2  # sysfs still answers
    assert runner.calls == []


def test_use_nvme_cli_false_runs_nothing(node):
    ctx, inv, runner = _inventory(node, use_nvme_cli=False)
    section = nvme_facts.collect(ctx, inv)
    assert section['errors'] == []
    assert [c for c in runner.calls if 'nvme' in c[0]] == []


@pytest.mark.parametrize('override, expected', [
    ((1, '', 'NVMe status: Invalid Field in Command(0x2)'), 'failed (rc=1): NVMe status: Invalid Field'),
    ((0, 'not json at all', ''), "nvme id-ctrl: _input"),
    ((0, '{"mdts": 7}', 'warning: something odd'), 'stderr: warning: something odd'),
])
def test_nvme_cli_failures_become_errors(node, override, expected):
    runner = standard_runner(node, cli={('id-ctrl', 'nvme1'): override})
    ctx, inv, _runner = _inventory(node, runner=runner)
    section = nvme_facts.collect(ctx, inv)
    assert any(expected in e and e.startswith('nvme1') for e in section['errors']), section['errors']
    others = _by_name(section['controllers'])
    assert others['nvme0']['mdts_bytes'] == 524288


def test_missing_device_node_is_an_error_not_a_call(node):
    os.unlink(os.path.join(node.dev, 'nvme3'))
    ctx, inv, runner = _inventory(node)
    section = nvme_facts.collect(ctx, inv)
    assert any('no device node' in e for e in section['errors'])
    assert runner.count(os.path.join(node.dev, 'nvme3')) == 0


# ----------------------------------------------------------------------------- block
def test_block_queue_facts(node):
    ctx, inv, _runner = _inventory(node)
    section = block_facts.collect(ctx, inv)
    devs = _by_name(section['devices'])
    d0 = devs['nvme0n1']
    assert d0['scheduler'] == 'none' and d0['schedulers_available'] == ['none', 'mq-deadline']
    assert d0['nr_requests'] == 1023 and d0['read_ahead_kb'] == 128
    assert d0['max_sectors_kb'] == 512 and d0['max_hw_sectors_kb'] == 512
    assert d0['nomerges'] == 0 and d0['rq_affinity'] == 1
    assert d0['io_poll'] is False and d0['rotational'] is False
    assert d0['write_cache'] == 'write back'
    assert d0['hw_contexts'] == 2 and d0['hw_tag_depth'] == 1023 and d0['hw_tag_depth_source'] == 'mq'
    d1 = devs['nvme1n1']
    assert d1['scheduler'] == 'mq-deadline' and d1['nr_requests'] == 256
    assert d1['schedulers_available'] == ['none', 'mq-deadline', 'kyber']
    head = devs['nvme4n1']
    assert head['hw_contexts'] is None and head['hw_tag_depth'] is None
    assert section['nvme_io_queue_depth_param'] == 1024
    assert section['nvme_poll_queues_param'] == 0 and section['nvme_write_queues_param'] == 0
    assert section['nvme_core_multipath'] is True
    assert d0['sectors_written'] is None      # no stat file in the fake tree: not known, not 0


def test_block_sectors_written_from_the_stat_file(node):
    # Documentation/block/stat.rst: the 7th field is the sectors written
    write(os.path.join(node.sys, 'class', 'block', 'nvme0n1', 'stat'),
          '  100 0 800 5 20 0 4096 7 0 12 12 0 0 0 0 0 0\n')
    ctx, inv, _runner = _inventory(node)
    assert _by_name(block_facts.collect(ctx, inv)['devices'])['nvme0n1']['sectors_written'] == 4096


def test_block_tag_depth_falls_back_to_module_param(node):
    d2 = os.path.realpath(os.path.join(node.sys, 'block', 'nvme2n1'))
    for index in ('0', '1'):
        os.unlink(os.path.join(d2, 'mq', index, 'nr_tags'))
    ctx, inv, _runner = _inventory(node)
    dev = _by_name(block_facts.collect(ctx, inv)['devices'])['nvme2n1']
    assert dev['hw_contexts'] == 2
    assert dev['hw_tag_depth'] == 1024 and dev['hw_tag_depth_source'] == 'module_param'


# ----------------------------------------------------------------------------- thermal
def test_thermal_hwmon_first(node):
    ctx, inv, _runner = _inventory(node)
    section = thermal_facts.collect(ctx, inv)
    ctrls = _by_name(section['controllers'])
    t0 = ctrls['nvme0']
    assert t0['composite_temp_c'] == 49.85 and t0['composite_source'] == 'hwmon'
    assert t0['hwmon'] == 'hwmon1'
    assert t0['temp_max_c'] == 69.85 and t0['temp_crit_c'] == 99.85 and t0['temp_min_c'] == -273.15
    assert t0['wctemp_c'] == 70 and t0['cctemp_c'] == 100
    assert t0['mntmt_c'] is None and t0['hctma'] is False
    assert t0['smart_log_temp_c'] == 50
    assert t0['throttled'] is False and t0['throttle_reason'] is None
    assert t0['throttle_history'] is False
    assert t0['critical_warning'] == 0
    t1 = ctrls['nvme1']
    assert [(s['sensor'], s['label'], s['temp_c']) for s in t1['sensors']] == [
        ('temp1', 'Composite', 44.85), ('temp2', 'Sensor 1', 46.85), ('temp3', 'Sensor 2', 41.85)]
    assert t1['smart_log_sensors_c'] == [47, 42]
    assert t1['media_errors'] == 0  # string "0" in nvme-cli 2.3 output
    assert section['throttled_controllers'] == ['nvme2']


def test_thermal_hwmon_under_device_and_critical_warning_bit(node):
    ctx, inv, _runner = _inventory(node)
    t2 = _by_name(thermal_facts.collect(ctx, inv)['controllers'])['nvme2']
    assert t2['hwmon'] == 'hwmon2' and t2['composite_source'] == 'hwmon'
    assert t2['composite_temp_c'] == 71.85
    assert t2['critical_warning'] == 2 and t2['critical_warning_bits']['temperature_threshold'] is True
    assert t2['throttled'] is True
    assert t2['throttle_reason'].startswith('critical_warning temperature bit set')
    assert '71.85' in t2['throttle_reason'] and 'WCTEMP 70' in t2['throttle_reason']
    assert t2['throttle_history'] is True
    assert t2['thm_temp1_trans_count'] == 3 and t2['thm_temp1_total_time_s'] == 180
    assert t2['warning_temp_time_min'] == 12


def test_thermal_smart_log_fallback_and_composite_at_wctemp(node):
    runner = standard_runner(node, cli={('smart-log', 'nvme3'): (0, smart_log(temperature=343), '')})
    ctx, inv, _runner = _inventory(node, runner=runner)
    t3 = _by_name(thermal_facts.collect(ctx, inv)['controllers'])['nvme3']
    assert t3['hwmon'] is None and t3['composite_source'] == 'smart-log'
    assert t3['composite_temp_c'] == 70
    assert t3['throttled'] is True
    assert t3['throttle_reason'] == 'composite temperature 70 °C >= WCTEMP 70 °C (CCTEMP 100 °C)'


def test_thermal_hwmon_kelvin_rounding_hits_wctemp(node):
    """hwmon says 69.85 °C for 343 K; nvme-cli says WCTEMP 70 °C for 343 K: that is at the threshold."""
    c0 = os.path.realpath(os.path.join(node.sys, 'class', 'nvme', 'nvme0'))
    write(os.path.join(c0, 'hwmon1', 'temp1_input'), '69850')
    ctx, inv, _runner = _inventory(node)
    t0 = _by_name(thermal_facts.collect(ctx, inv)['controllers'])['nvme0']
    assert t0['throttled'] is True


def test_thermal_without_nvme_cli_is_unknown_not_false(node):
    ctx, inv, _runner = _inventory(node, use_nvme_cli=False)
    ctrls = _by_name(thermal_facts.collect(ctx, inv)['controllers'])
    assert ctrls['nvme0']['composite_temp_c'] == 49.85
    assert ctrls['nvme0']['throttled'] is None and ctrls['nvme0']['throttle_history'] is None
    assert ctrls['nvme3']['composite_temp_c'] is None and ctrls['nvme3']['composite_source'] is None


def test_thermal_zero_kelvin_is_not_reported(node):
    ctx, inv, _runner = _inventory(node)
    t4 = _by_name(thermal_facts.collect(ctx, inv)['controllers'])['nvme4']
    assert t4['composite_temp_c'] is None and t4['smart_log_temp_c'] is None
    assert t4['throttled'] is False  # critical_warning 0 is known


def test_thermal_failed_smart_log_is_an_error(node):
    runner = standard_runner(node, cli={('smart-log', 'nvme0'): (1, '', 'open: Permission denied')})
    ctx, inv, _runner = _inventory(node, runner=runner)
    section = thermal_facts.collect(ctx, inv)
    assert any(e.startswith('nvme0:') and 'Permission denied' in e for e in section['errors'])
    t0 = _by_name(section['controllers'])['nvme0']
    assert t0['critical_warning'] is None and t0['composite_temp_c'] == 49.85
    assert t0['throttled'] is False  # composite 49.85 and WCTEMP 70 are known


# ----------------------------------------------------------------------------- io_uring
@pytest.mark.parametrize('disabled, group, user, allowed', [
    (None, None, 'trainer', True),
    (0, -1, 'trainer', True),
    (2, -1, 'root', False),
    (1, -1, 'root', True),
    (1, 1500, 'trainer', True),
    (1, 1500, 'other', False),
    (1, -1, 'trainer', False),
    (1, 1500, 'ghost', None),
])
def test_io_uring_allowed_for_user(node, disabled, group, user, allowed):
    node.set_sysctl('io_uring_disabled', disabled)
    node.set_sysctl('io_uring_group', group)
    ctx = make_context(node, standard_runner(node))
    section = io_uring_facts.collect(ctx, training_user=user, fio_probe=False)
    assert section['allowed_for_user'] is allowed
    assert section['io_uring_disabled'] == disabled and section['io_uring_group'] == group
    assert section['allowed_reason']
    if user == 'ghost':
        assert any('ghost not found' in e for e in section['errors'])


def test_io_uring_basics(node):
    ctx = make_context(node, standard_runner(node))
    section = io_uring_facts.collect(ctx, training_user='trainer', fio_probe=True)
    assert section['kernel_release'] == '6.1.0-50-amd64'
    assert section['training_user_uid'] == 1000
    assert section['training_user_groups'] == ['iouring', 'trainer', 'video']
    assert section['fio_version'] == '3.33' and section['fio_path'] == '/usr/bin/fio'
    assert section['fio_io_uring_works'] is True and section['fio_probe_error'] is None
    soft = section['memlock']['module_soft_bytes']
    assert soft == 'unlimited' or isinstance(soft, int)
    assert section['errors'] == []


def test_memlock_from_limits_files(node):
    ctx = make_context(node, standard_runner(node))
    mem = io_uring_facts.collect(ctx, training_user='other', fio_probe=False)['memlock']
    assert mem['configured_soft_bytes'] == mem['configured_hard_bytes'] == 65536 * 1024
    assert mem['configured_soft_source'].endswith('limits.conf:3')

    d = os.path.join(node.etc, 'security', 'limits.d')
    write(os.path.join(d, '10-video.conf'), '@video hard memlock 1048576\n@video soft memlock 524288\n')
    write(os.path.join(d, '90-trainer.conf'), '# trainer\ntrainer soft memlock unlimited\n')
    write(os.path.join(d, '95-wild.conf'), '*  -  memlock  1024\n')
    write(os.path.join(d, 'ignored.txt'), 'trainer - memlock 1\n')
    ctx = make_context(node, standard_runner(node))
    mem = io_uring_facts.collect(ctx, training_user='trainer', fio_probe=False)['memlock']
    assert mem['configured_soft_bytes'] == 'unlimited'  # user entry beats @group and *
    assert mem['configured_soft_source'].endswith('90-trainer.conf:2')
    assert mem['configured_hard_bytes'] == 1048576 * 1024  # @group beats a later *
    assert mem['configured_hard_source'].endswith('10-video.conf:1')
    # for a user in no listed group, the later * wins over the earlier *
    mem = io_uring_facts.collect(ctx, training_user='other', fio_probe=False)['memlock']
    assert mem['configured_soft_bytes'] == mem['configured_hard_bytes'] == 1024 * 1024


@pytest.mark.parametrize('fio, works, error', [
    ((1, '', 'fio: io_uring_setup: Operation not permitted'), False, 'Operation not permitted'),
    ((0, 'garbage', ''), False, 'no job results'),
    ((0, json.dumps({'jobs': [{'jobname': 'probe', 'error': 95, 'write': {'io_bytes': 0}}]}), ''), False,
     'fio job error 95'),
])
def test_fio_probe_failures(node, fio, works, error):
    ctx = make_context(node, standard_runner(node, fio=fio))
    section = io_uring_facts.collect(ctx, training_user='root', fio_probe=True)
    assert section['fio_io_uring_works'] is works
    assert error in section['fio_probe_error']


def test_fio_probe_reads_dev_zero_and_writes_nothing(node):
    runner = standard_runner(node)
    ctx = make_context(node, runner)
    io_uring_facts.collect(ctx, fio_probe=True)
    probe = [c for c in runner.calls if '--ioengine=io_uring' in c][0]
    assert '--filename=/dev/zero' in probe and '--readonly' in probe and '--rw=read' in probe
    assert '--size=1M' in probe and '--output-format=json' in probe


def test_fio_missing_or_probe_disabled(node):
    runner = standard_runner(node, bins={'fio': None})
    section = io_uring_facts.collect(make_context(node, runner), fio_probe=True)
    assert section['fio_io_uring_works'] is None and section['fio_probe_error'] == 'fio not found in PATH'
    runner = standard_runner(node)
    section = io_uring_facts.collect(make_context(node, runner), fio_probe=False)
    assert section['fio_io_uring_works'] is None and section['fio_probe_error'] is None
    assert runner.count('--ioengine=io_uring') == 0


def test_liburing_from_lib_dirs_and_ld_so_conf(node):
    write(os.path.join(node.base, 'usr', 'lib', 'liburing.so.2.3'), 'ELF')
    runner = standard_runner(node)
    section = io_uring_facts.collect(make_context(node, runner), fio_probe=False)
    assert section['liburing'] is True and section['liburing_path'].endswith('liburing.so.2.3')
    assert not [c for c in runner.calls if 'ldconfig' in c[0]]   # no process to find a library

    # the directories ld.so.conf names (its includes followed, comments and hwcap lines skipped) come first
    os.remove(os.path.join(node.base, 'usr', 'lib', 'liburing.so.2.3'))
    write(os.path.join(node.etc, 'ld.so.conf'), 'include /etc/ld.so.conf.d/*.conf\n# a comment\nhwcap 0 nosegneg\n')
    write(os.path.join(node.etc, 'ld.so.conf.d', 'x.conf'), '/opt/uring/lib, /opt/other:/opt/third # trailing\n'
                                                            'include nested/*.conf\n')
    write(os.path.join(node.etc, 'nested', 'y.conf'), '/opt/nested\n')
    write(os.path.join(node.base, 'opt', 'nested', 'liburing.so.2'), 'ELF')
    ctx = make_context(node, standard_runner(node))
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import ld_so_conf_dirs
    assert ld_so_conf_dirs(ctx) == [os.path.join(node.base, d) for d in (
        'opt/uring/lib', 'opt/other', 'opt/third', 'opt/nested')]
    section = io_uring_facts.collect(ctx, fio_probe=False)
    assert section['liburing_path'] == os.path.join(node.base, 'opt', 'nested', 'liburing.so.2')


def test_an_include_loop_in_ld_so_conf_ends(node):
    write(os.path.join(node.etc, 'ld.so.conf'), 'include /etc/ld.so.conf\n/opt/lib\n')
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import ld_so_conf_dirs
    assert ld_so_conf_dirs(make_context(node, standard_runner(node))) == [os.path.join(node.base, 'opt', 'lib')]


class _Module(object):
    def __init__(self, check_mode):
        self.check_mode = check_mode


def _probe_context(node, check_mode=False, fio=None):
    fio = fio or os.path.join(node.base, 'usr', 'bin', 'fio')
    if not os.path.exists(fio):
        write(fio, 'fio')
    write(os.path.join(node.proc, 'sys', 'kernel', 'random', 'boot_id'), 'b00t-1\n')
    if not os.path.isdir(os.path.join(node.base, 'run')):
        os.mkdir(os.path.join(node.base, 'run'))           # a node's /run (a tmpfs) is always there
    runner = standard_runner(node, bins={'fio': fio})
    return make_context(node, runner, run_root=os.path.join(node.base, 'run'), module=_Module(check_mode)), runner


def test_the_fio_probe_runs_once_a_boot(node):
    cache = os.path.join(node.base, 'run', 'checkpoint_io', 'io_uring_probe.json')
    ctx, runner = _probe_context(node, check_mode=True)
    first = io_uring_facts.collect(ctx, fio_probe=True)
    assert first['fio_io_uring_works'] is True and first['fio_probe_cached'] is False
    assert not os.path.exists(cache)                      # check mode keeps nothing
    ctx, runner = _probe_context(node)
    io_uring_facts.collect(ctx, fio_probe=True)
    assert oct(os.stat(os.path.dirname(cache)).st_mode & 0o777) == '0o700'
    assert oct(os.stat(cache).st_mode & 0o777) == '0o600'
    ctx, runner = _probe_context(node, check_mode=True)
    again = io_uring_facts.collect(ctx, fio_probe=True)
    assert again['fio_probe_cached'] is True and runner.calls == []     # neither the probe nor fio --version
    assert (again['fio_version'], again['fio_io_uring_works'], again['fio_probe_error']) == ('3.33', True, None)
    # a new boot, or io_uring switched off, probes again
    write(os.path.join(node.proc, 'sys', 'kernel', 'io_uring_disabled'), '2\n')
    ctx, runner = _probe_context(node)
    assert io_uring_facts.collect(ctx, fio_probe=True)['fio_probe_cached'] is False
    assert runner.count('--ioengine=io_uring') == 1


def test_a_probe_cache_others_could_write_is_not_read(node):
    ctx, runner = _probe_context(node)
    io_uring_facts.collect(ctx, fio_probe=True)
    directory = os.path.join(node.base, 'run', 'checkpoint_io')
    os.chmod(directory, 0o777)
    ctx, runner = _probe_context(node, check_mode=True)
    assert io_uring_facts.collect(ctx, fio_probe=True)['fio_probe_cached'] is False
    os.chmod(directory, 0o700)
    target = os.path.join(directory, 'io_uring_probe.json')
    os.rename(target, target + '.real')
    os.symlink(target + '.real', target)                 # a link where the file was: not followed
    ctx, runner = _probe_context(node, check_mode=True)
    assert io_uring_facts.collect(ctx, fio_probe=True)['fio_probe_cached'] is False


# ----------------------------------------------------------------------------- xfs
def test_xfs_all_mounts_by_default(node):
    ctx = make_context(node, standard_runner(node))
    section = xfs_facts.collect(ctx)
    assert section['errors'] == []
    (fs,) = section['filesystems']
    assert fs['device'] == '/dev/md0' and fs['kernel_name'] == 'md0' and fs['mount_point'] == '/mnt/ckpt'
    assert fs['options']['noatime'] is True and fs['options']['logbsize'] == '256k'
    assert fs['mount_sunit_bytes'] == 524288 and fs['mount_swidth_bytes'] == 524288
    assert fs['sunit_bytes'] == 524288 and fs['swidth_bytes'] == 524288
    assert fs['agcount'] == 16 and fs['agsize_bytes'] == 261888 * 4096 and fs['block_size'] == 4096
    assert fs['log'] == {'internal': True, 'device': None, 'bytes': 16384 * 4096}
    assert fs['md'] == {'name': 'md0', 'level': 'raid0', 'chunk_bytes': 524288, 'raid_disks': 1,
                        'array_state': 'clean', 'degraded': False, 'members': ['nvme3n1']}


def test_xfs_checkpoint_paths_select_mounts(node):
    node.add_mount('/dev/nvme1n1', '/mnt/other', 'xfs')
    ctx = make_context(node, standard_runner(node))
    section = xfs_facts.collect(ctx, checkpoint_paths=['/mnt/ckpt/run1/not-yet', '/home/trainer'])
    assert [fs['mount_point'] for fs in section['filesystems']] == ['/mnt/ckpt']
    assert section['filesystems'][0]['checkpoint_paths'] == ['/mnt/ckpt/run1/not-yet']
    assert section['checkpoint_paths'] == [
        {'path': '/mnt/ckpt/run1/not-yet', 'mount_point': '/mnt/ckpt', 'fstype': 'xfs', 'is_xfs': True},
        {'path': '/home/trainer', 'mount_point': '/', 'fstype': 'ext4', 'is_xfs': False},
    ]


@pytest.mark.parametrize('overrides, expected, agcount', [
    ({'bins': {'xfs_info': None}}, 'xfs_info not found', None),
    ({'xfs_info': (1, '', 'xfs_info: /mnt/ckpt is not a mounted XFS filesystem')}, 'rc=1', None),
    ({'xfs_info': (0, XFS_INFO_MD0, 'xfs_info: warning: odd')}, 'stderr (rc=0): xfs_info: warning: odd', 16),
    ({'xfs_info': (0, XFS_INFO_MD0.split('naming', maxsplit=1)[0], '')}, 'section', 16),
])
def test_xfs_info_problems_are_errors(node, overrides, expected, agcount):
    ctx = make_context(node, standard_runner(node, **overrides))
    section = xfs_facts.collect(ctx)
    assert any(expected in e for e in section['errors']), section['errors']
    fs = section['filesystems'][0]
    assert fs['agcount'] == agcount and fs['mount_sunit_bytes'] == 524288 and fs['md']['level'] == 'raid0'


# ----------------------------------------------------------------------------- gds
def _gpu(node, count=1):
    for index in range(count):
        write(os.path.join(node.proc, 'driver', 'nvidia', 'gpus', '0000:%02x:00.0' % (0x18 + index), 'information'),
              'Model: NVIDIA H200')


def _libcufile(node):
    lib = os.path.join(node.base, 'usr', 'local', 'cuda-12.9', 'targets', 'x86_64-linux', 'lib')
    write(os.path.join(lib, 'libcufile.so.1.14.0'), 'ELF')
    os.symlink('libcufile.so.1.14.0', os.path.join(lib, 'libcufile.so.0'))
    os.symlink('libcufile.so.0', os.path.join(lib, 'libcufile.so'))
    return lib


def _nvidia_fs(node, version='2.25.7'):
    write(os.path.join(node.proc, 'driver', 'nvidia-fs', 'version'), 'version: %s' % version)
    write(os.path.join(node.sys, 'module', 'nvidia_fs', 'parameters', 'rw_stats_enabled'), '0')


GDSCHECK_OK = """ GDS release version: 1.14.0.30
 nvidia_fs version:  2.25 libcufile version: 2.12
 ============
 ENVIRONMENT:
 ============
 =====================
 DRIVER CONFIGURATION:
 =====================
 NVMe               : %s
 NVMeOF             : Unsupported
 =====================
 CUFILE CONFIGURATION:
 =====================
 properties.use_compat_mode : true
 execution.max_io_queue_depth : 128
 =========
 GPU INFO:
 =========
 GPU index 0 NVIDIA H200 bar:1 bar size (MiB):262144 supports GDS, IOMMU State: Disabled
 ==============
 PLATFORM INFO:
 ==============
 IOMMU: disabled
"""


def _gds_runner(node, nvme='Supported'):
    runner = standard_runner(node, bins={'gdscheck': '/usr/local/cuda/gds/tools/gdscheck'})
    runner.table.insert(0, (lambda a: a[-1] == '-p' and a[0].endswith('gdscheck'), (0, GDSCHECK_OK % nvme, '')))
    return runner


def test_gds_no_gpu_is_unavailable(node):
    section = gds_facts.collect(make_context(node, standard_runner(node)))
    assert section['path'] == 'unavailable'
    assert section['path_reason'] == 'no NVIDIA GPU: /proc/driver/nvidia/gpus is empty'
    assert section['gpus'] == 0 and section['gdscheck'] is None and section['errors'] == []


def test_gds_gpu_without_libcufile_is_unavailable(node):
    _gpu(node)
    section = gds_facts.collect(make_context(node, standard_runner(node)))
    assert section['path'] == 'unavailable' and 'libcufile not found' in section['path_reason']


def test_gds_not_loaded_is_compat(node):
    _gpu(node, 2)
    _libcufile(node)
    section = gds_facts.collect(make_context(node, standard_runner(node)))
    assert section['gpus'] == 2
    assert section['libcufile'] is True and section['libcufile_version'] == '1.14.0'
    assert section['libcufile_path'].endswith('libcufile.so.1.14.0')
    assert section['nvidia_fs_loaded'] is False
    assert section['path'] == 'compat'
    assert section['path_reason'].startswith('nvidia_fs kernel module not loaded')


def test_gds_dma_with_gdscheck(node):
    _gpu(node)
    _libcufile(node)
    _nvidia_fs(node)
    section = gds_facts.collect(make_context(node, _gds_runner(node)))
    assert section['nvidia_fs_loaded'] is True and section['nvidia_fs_version'] == '2.25.7'
    assert section['rw_stats_enabled'] is False
    assert section['gdscheck']['nvme_supported'] is True and section['gdscheck']['gds_version'] == '1.14.0.30'
    assert section['path'] == 'dma'
    assert 'gdscheck -p reports NVMe supported' in section['path_reason']
    assert section['errors'] == []
    assert section['gdscheck_path'] == '/usr/local/cuda/gds/tools/gdscheck'


@pytest.mark.parametrize('nvme, path', [
    ('Unsupported', 'compat'),
    ('nvfs, compat', 'dma'),
    ('compat', 'compat'),
])
def test_gds_gdscheck_nvme_line(node, nvme, path):
    _gpu(node)
    _libcufile(node)
    _nvidia_fs(node)
    section = gds_facts.collect(make_context(node, _gds_runner(node, nvme=nvme)))
    assert section['path'] == path
    if path == 'compat':
        assert 'gdscheck -p reports NVMe: %s' % nvme in section['path_reason']


def test_gds_force_compat_and_disallowed_compat(node):
    _gpu(node)
    _libcufile(node)
    _nvidia_fs(node)
    write(os.path.join(node.etc, 'cufile.json'), """{
    // comments are allowed in cufile.json
    "properties": {
        "allow_compat_mode": true,
        "force_compat_mode": true,
    }
}""")
    section = gds_facts.collect(make_context(node, standard_runner(node)))
    assert section['cufile_json']['exists'] is True
    assert section['cufile_json']['set'] == ['properties.allow_compat_mode', 'properties.force_compat_mode']
    assert section['force_compat_mode'] is True
    assert section['path'] == 'compat'
    assert 'force_compat_mode is true in /etc/cufile.json' in section['path_reason']

    write(os.path.join(node.etc, 'cufile.json'),
          '{"properties": {"allow_compat_mode": false, "force_compat_mode": true}}')
    section = gds_facts.collect(make_context(node, standard_runner(node)))
    assert section['path'] == 'unavailable' and 'allow_compat_mode is false' in section['path_reason']


def test_gds_overrides(node, tmp_path):
    _gpu(node)
    _libcufile(node)
    _nvidia_fs(node)
    write(os.path.join(node.etc, 'cufile.json'), '{"properties": {"force_compat_mode": false}}')
    env_file = os.path.join(node.base, 'job', 'env_cufile.json')
    write(env_file, '{"properties": {"force_compat_mode": true}, "execution": {"max_io_queue_depth": 32}}')
    local = os.path.join(node.base, 'job', 'rank0', 'local_cufile.json')
    write(local, '{"execution": {"max_io_queue_depth": 8}}')
    write(os.path.join(node.base, 'job', 'a', 'b', 'c', 'local_cufile.json'), '{}')  # too deep
    ctx = make_context(node, standard_runner(node), environ={'CUFILE_ENV_PATH_JSON': env_file})
    section = gds_facts.collect(ctx, job_dirs=[os.path.join(node.base, 'job')])
    ov = section['overrides']
    assert ov['env_path_json'] == env_file
    assert ov['env_file']['properties']['execution.max_io_queue_depth'] == 32
    assert [item['path'] for item in ov['local_cufile_json']] == [local]
    assert ov['local_cufile_json'][0]['properties']['execution.max_io_queue_depth'] == 8
    assert len(ov['notes']) == 2
    assert section['effective_config_source'] == env_file
    assert section['path'] == 'compat' and env_file in section['path_reason']


def test_gds_bad_cufile_json_is_an_error(node):
    write(os.path.join(node.etc, 'cufile.json'), '{"properties": ')
    section = gds_facts.collect(make_context(node, standard_runner(node)))
    assert section['cufile_json']['properties'] is None
    assert any('cufile.json' in e for e in section['errors'])
    assert section['effective_config_source'].startswith('cuFile defaults')


# ----------------------------------------------------------------------------- deepspeed
def test_aio_defaults_when_absent():
    result = deepspeed.analyze_config_text('{"train_batch_size": 8}')
    assert result['aio_present'] is False and result['parse_error'] is None
    assert result['aio'] == {'block_size': 1048576, 'queue_depth': 8, 'intra_op_parallelism': 1,
                             'single_submit': False, 'overlap_events': True, 'use_gds': False}
    assert result['warnings'] == []


def test_aio_ds_nvme_tune_output_is_flagged():
    text = json.dumps({'aio': {'block_size': 8388608, 'queue_depth': 32, 'single_submit': 'false',
                               'overlap_events': 'true', 'num_threads': 8}})
    result = deepspeed.analyze_config_text(text)
    aio = result['aio']
    assert aio['single_submit'] == 'false'  # kept as DeepSpeed keeps it
    assert result['aio_truthiness']['single_submit'] is True  # and it is truthy
    assert aio['intra_op_parallelism'] == 1  # num_threads is not read
    assert result['unknown_aio_keys'] == ['num_threads']
    joined = '\n'.join(result['warnings'])
    assert 'num_threads is ignored by DeepSpeed' in joined
    assert "aio.single_submit is the string 'false'" in joined and 'acts as True' in joined
    assert "aio.overlap_events is the string 'true'" in joined


def test_aio_thread_count_maps_and_warns():
    result = deepspeed.analyze_config_text('{"aio": {"thread_count": 4}}')
    assert result['aio']['intra_op_parallelism'] == 4
    assert any('thread_count=4 is the pre-rename name' in w for w in result['warnings'])
    result = deepspeed.analyze_config_text('{"aio": {"intra_op_parallelism": 4}}')
    assert any('ignored by DeepSpeed versions before PR #7056' in w for w in result['warnings'])
    result = deepspeed.analyze_config_text('{"aio": {"intra_op_parallelism": 4, "thread_count": 2}}')
    assert any('differ' in w for w in result['warnings'])
    result = deepspeed.analyze_config_text('{"aio": {"intra_op_parallelism": 2, "thread_count": 2}}')
    assert result['warnings'] == []


def test_aio_unknown_and_badly_typed_keys():
    result = deepspeed.analyze_config_text('{"aio": {"queue_depth": "32", "block_size": 1000, "qd": 4}}')
    joined = '\n'.join(result['warnings'])
    assert 'aio.qd is not a DeepSpeed aio key' in joined
    assert "aio.queue_depth should be an integer, got '32'" in joined
    assert 'not a multiple of 4096' in joined
    assert deepspeed.analyze_config_text('{"aio": 5}')['warnings'][0].startswith('aio must be a JSON object')


def test_render_aio_real_types():
    aio = deepspeed.render_aio(queue_depth=32, single_submit=True, legacy_thread_count=True,
                               intra_op_parallelism=4)
    assert aio == {'block_size': 1048576, 'queue_depth': 32, 'intra_op_parallelism': 4, 'thread_count': 4,
                   'single_submit': True, 'overlap_events': True, 'use_gds': False}
    assert deepspeed.effective_aio(aio)['warnings'] == []
    with pytest.raises(TypeError):
        deepspeed.render_aio(single_submit='true')
    with pytest.raises(ValueError):
        deepspeed.render_aio(queue_depth=0)


def test_deepspeed_collector(tmp_path):
    good = tmp_path / 'ds_config.json'
    good.write_text(json.dumps({
        'aio': {'queue_depth': 16},
        'zero_optimization': {'offload_optimizer': {'device': 'nvme', 'nvme_path': '/local_nvme'},
                              'offload_param': {'device': 'cpu'}},
    }))
    bad = tmp_path / 'bad.json'
    bad.write_text('{"aio": {')
    section = deepspeed_facts.collect(None, [str(good), str(bad), str(tmp_path / 'missing.json')])
    good_f, bad_f, missing = section['configs']
    assert good_f['exists'] is True and good_f['aio']['queue_depth'] == 16
    assert good_f['nvme_offload_paths'] == ['/local_nvme']
    assert bad_f['parse_error'].startswith('invalid JSON')
    assert missing['exists'] is False and missing['parse_error'] == 'file not found'
    assert len(section['errors']) == 2
    assert section['aio_defaults']['queue_depth'] == 8


# ----------------------------------------------------------------------------- orchestration
@pytest.mark.parametrize('requested, expected', [
    (['all'], list(node_facts.SUBSETS)),
    (None, list(node_facts.SUBSETS)),
    (['!gds'], ['nvme', 'block', 'thermal', 'io_uring', 'xfs', 'deepspeed', 'state']),
    (['all', '!gds', '!io_uring'], ['nvme', 'block', 'thermal', 'xfs', 'deepspeed', 'state']),
    (['thermal', 'nvme'], ['nvme', 'thermal']),
    (['nvme', '!nvme'], []),
])
def test_resolve_subsets(requested, expected):
    assert node_facts.resolve_subsets(requested) == expected


def test_gather_facts_only_requested_sections(node):
    runner = standard_runner(node)
    facts = node_facts.gather_facts(make_context(node, runner), {'gather_subset': ['thermal']})
    assert sorted(facts) == ['gather_subset', 'gathered_at', 'schema_version', 'thermal']
    assert list(facts['gathered_at']) == ['thermal'] and facts['gathered_at']['thermal'].endswith('Z')
    assert runner.count('get-feature') == 0  # only the logs thermal needs
    assert runner.count('id-ctrl') == 5 and runner.count('smart-log') == 5


def test_gather_facts_survives_a_broken_collector(node, monkeypatch):
    def boom(ctx, checkpoint_paths=None):
        raise RuntimeError('kaboom')
    monkeypatch.setattr(xfs_facts, 'collect', boom)
    facts = node_facts.gather_facts(make_context(node, standard_runner(node)), {'gather_subset': ['xfs', 'block']})
    assert facts['xfs'] == {'errors': ['xfs collector failed unexpectedly: RuntimeError: kaboom']}
    assert facts['block']['devices']


def test_context_run_wraps_timeout_and_reports(node):
    runner = standard_runner(node, bins={'timeout': '/usr/bin/timeout'})
    runner.table.insert(0, (lambda a: a[0] == '/usr/bin/timeout' and a[4] == '/bin/slow', (124, '', '')))
    ctx = make_context(node, runner)
    res = ctx.run(['/bin/slow', '--x'], timeout_s=7)
    assert runner.calls[-1] == ['/usr/bin/timeout', '-k', '5', '7', '/bin/slow', '--x']
    assert res['error'] == 'slow --x timed out after 7s'


def test_real_world_smart_logs_feed_thermal(node):
    """Optional: the shared real-world nvme-cli samples parse into thermal facts without errors."""
    from testenv import REAL_WORLD
    sample = os.path.join(REAL_WORLD, 'netdata_smart_log_v2.11_seagate_firecuda530.json')
    if not os.path.isfile(sample):
        pytest.skip('shared real-world outputs not present')
    with open(sample) as f:
        text = f.read()
    runner = standard_runner(node, cli={('smart-log', 'nvme1'): (0, text, '')})
    ctx, inv, _runner = _inventory(node, runner=runner)
    t1 = _by_name(thermal_facts.collect(ctx, inv)['controllers'])['nvme1']
    assert t1['thm_temp1_trans_count'] == 3 and t1['throttle_history'] is True
    assert t1['smart_log_temp_c'] == 51
    assert num_queues('0x003f003f')  # helper sanity


def test_a_gather_without_the_probe_keeps_the_version_not_a_verdict(node):
    ctx, runner = _probe_context(node)
    section = io_uring_facts.collect(ctx, fio_probe=False)
    assert section['fio_version'] == '3.33' and section['fio_io_uring_works'] is None
    ctx, runner = _probe_context(node, check_mode=True)
    section = io_uring_facts.collect(ctx, fio_probe=True)     # the probe asked: the version alone is not enough
    assert section['fio_probe_cached'] is False and section['fio_io_uring_works'] is True
    assert runner.count('--ioengine=io_uring') == 1


def test_nvme_cli_version_asked_once_a_boot(node):
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import nvme_facts
    nvme = os.path.join(node.base, 'usr', 'sbin', 'nvme')
    write(nvme, 'nvme')
    ctx, runner = _probe_context(node)
    assert nvme_facts.cli_version(ctx, nvme) == '2.3' and runner.count('version') == 1
    ctx, runner = _probe_context(node, check_mode=True)
    assert nvme_facts.cli_version(ctx, nvme) == '2.3' and runner.calls == []
