# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fake GPU training node for the checkpoint_io_facts tests.

Builds sys/, proc/, dev/ and etc/ trees under a tmp dir that mirror the
layout of a Debian bookworm lab node (kernel 6.1, QEMU NVMe behind PCIe root
ports; see lab-sysfs-dump), plus a table-driven fake command runner.

Node:
  nvme0  OS0001    0000:01:00.0  nvme0n1 partitioned: p1 "/", p15 "/boot/efi"; hwmon under the controller
  nvme1  DATA0001  0000:02:00.0  nvme1n1 free; hwmon under the controller
  nvme2  DATA0002  0000:03:00.0  nvme2n1 free; hwmon under device/hwmon (older kernels); throttling
  nvme3  DATA0003  0000:04:00.0  nvme3n1 held by md0 (raid0), md0 is XFS on /mnt/ckpt
  nvme4  tcp fabrics controller, native multipath: path nvme4c4n1, head nvme4n1
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os


def write(path, content=''):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    with open(path, 'w') as f:
        f.write(content if content.endswith('\n') or content == '' else content + '\n')


def link(path, target):
    """Symlink ``path`` -> ``target`` (both absolute), stored relative like sysfs does."""
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(os.path.relpath(target, parent), path)


def mkdir(path):
    if not os.path.isdir(path):
        os.makedirs(path)


QUEUE_DEFAULTS = {
    'scheduler': '[none] mq-deadline ',
    'nr_requests': '1023',
    'read_ahead_kb': '128',
    'max_sectors_kb': '512',
    'max_hw_sectors_kb': '512',
    'nomerges': '0',
    'rq_affinity': '1',
    'io_poll': '0',
    'write_cache': 'write back',
    'rotational': '0',
    'logical_block_size': '512',
    'physical_block_size': '512',
    'optimal_io_size': '512',
}


class FakeNode(object):
    """Paths and helpers of one fake node."""

    def __init__(self, base):
        self.base = str(base)
        self.sys = os.path.join(self.base, 'sys')
        self.proc = os.path.join(self.base, 'proc')
        self.dev = os.path.join(self.base, 'dev')
        self.etc = os.path.join(self.base, 'etc')
        for path in (self.sys, self.proc, self.dev, self.etc):
            mkdir(path)
        self.mounts = []
        self.swaps = []

    # --- generic sysfs pieces --------------------------------------------------
    def block_dir(self, ctrl_dir, name, size_sectors, nsid=1, hw_queues=2, queue=None, mq=True, wwid=None):
        """A namespace block dir inside the controller dir, with /sys/block and class/block links."""
        bdir = os.path.join(ctrl_dir, name)
        write(os.path.join(bdir, 'size'), str(size_sectors))
        write(os.path.join(bdir, 'nsid'), str(nsid))
        write(os.path.join(bdir, 'wwid'), wwid or 'nvme.1b36-%s-51454d55-%08x' % (name, nsid))
        mkdir(os.path.join(bdir, 'holders'))
        mkdir(os.path.join(bdir, 'slaves'))
        values = dict(QUEUE_DEFAULTS)
        values.update(queue or {})
        for key, value in values.items():
            write(os.path.join(bdir, 'queue', key), value)
        if mq:
            for index in range(hw_queues):
                write(os.path.join(bdir, 'mq', str(index), 'nr_tags'), '1023')
                write(os.path.join(bdir, 'mq', str(index), 'cpu_list'), str(index))
        link(os.path.join(self.sys, 'block', name), bdir)
        link(os.path.join(self.sys, 'class', 'block', name), bdir)
        write(os.path.join(self.dev, name))
        return bdir

    def partition(self, disk_dir, name, size_sectors, number):
        pdir = os.path.join(disk_dir, name)
        write(os.path.join(pdir, 'partition'), str(number))
        write(os.path.join(pdir, 'size'), str(size_sectors))
        mkdir(os.path.join(pdir, 'holders'))
        link(os.path.join(self.sys, 'class', 'block', name), pdir)
        write(os.path.join(self.dev, name))
        return pdir

    def hwmon(self, directory, millic=49850, sensors=None, max_millic=69850, crit_millic=99850):
        write(os.path.join(directory, 'name'), 'nvme')
        write(os.path.join(directory, 'temp1_input'), str(millic))
        write(os.path.join(directory, 'temp1_label'), 'Composite')
        write(os.path.join(directory, 'temp1_max'), str(max_millic))
        write(os.path.join(directory, 'temp1_min'), '-273150')
        write(os.path.join(directory, 'temp1_crit'), str(crit_millic))
        write(os.path.join(directory, 'temp1_alarm'), '0')
        for index, value in enumerate(sensors or [], 2):
            write(os.path.join(directory, 'temp%d_input' % index), str(value))
            write(os.path.join(directory, 'temp%d_label' % index), 'Sensor %d' % (index - 1))

    def pci_controller(self, ctrl, root_port, pci, serial, queue_count=3, numa='-1', cpulist='0-1',
                       speed='2.5 GT/s PCIe', width='1', max_speed='2.5 GT/s PCIe', max_width='1'):
        """A PCIe NVMe controller like QEMU's, behind a root port, returns the controller dir."""
        fn = os.path.join(self.sys, 'devices', 'pci0000:00', root_port, pci)
        for key, value in (('numa_node', numa), ('local_cpulist', cpulist), ('current_link_speed', speed),
                           ('current_link_width', width), ('max_link_speed', max_speed),
                           ('max_link_width', max_width), ('vendor', '0x1b36'), ('class', '0x010802')):
            write(os.path.join(fn, key), value)
        cdir = os.path.join(fn, 'nvme', ctrl)
        self._ctrl_attrs(cdir, serial, 'pcie', pci, queue_count)
        link(os.path.join(cdir, 'device'), fn)
        link(os.path.join(self.sys, 'class', 'nvme', ctrl), cdir)
        write(os.path.join(self.dev, ctrl))
        # the generic char device dir the kernel also puts there (must be ignored)
        mkdir(os.path.join(cdir, 'ng%sn1' % ctrl[4:]))
        return cdir

    def _ctrl_attrs(self, cdir, serial, transport, address, queue_count):
        for key, value in (('model', 'QEMU NVMe Ctrl                          '),
                           ('serial', serial.ljust(20)), ('firmware_rev', '7.2.22  '),
                           ('transport', transport), ('address', address),
                           ('queue_count', str(queue_count)), ('sqsize', '1023'), ('cntlid', '0'),
                           ('state', 'live'), ('numa_node', '-1'),
                           ('subsysnqn', 'nqn.2019-08.org.qemu:%s' % serial)):
            write(os.path.join(cdir, key), value)

    # --- proc / etc ------------------------------------------------------------------
    def add_mount(self, source, mount_point, fstype, options='rw,relatime'):
        self.mounts.append('%s %s %s %s 0 0' % (source, mount_point, fstype, options))
        self.flush()

    def flush(self):
        base = ['sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0',
                'proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0',
                'udev /dev devtmpfs rw,nosuid,relatime,size=984864k,nr_inodes=246216,mode=755,inode64 0 0',
                'tmpfs /run tmpfs rw,nosuid,nodev,noexec,relatime,size=201408k,mode=755,inode64 0 0']
        write(os.path.join(self.proc, 'self', 'mounts'), '\n'.join(base + self.mounts))
        lines = ['Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority'] + self.swaps
        write(os.path.join(self.proc, 'swaps'), '\n'.join(lines))

    def set_sysctl(self, name, value):
        path = os.path.join(self.proc, 'sys', 'kernel', name)
        if value is None:
            if os.path.exists(path):
                os.unlink(path)
        else:
            write(path, str(value))


def build_node(base):
    """The standard fake node described in the module docstring."""
    node = FakeNode(base)
    s = node.sys
    write(os.path.join(node.proc, 'sys', 'kernel', 'osrelease'), '6.1.0-50-amd64')

    # nvme module parameters (lab values)
    for key, value in (('io_queue_depth', '1024'), ('poll_queues', '0'), ('write_queues', '0'),
                       ('max_host_mem_size_mb', '128'), ('use_cmb_sqes', 'Y')):
        write(os.path.join(s, 'module', 'nvme', 'parameters', key), value)
    write(os.path.join(s, 'module', 'nvme_core', 'parameters', 'multipath'), 'Y')

    # nvme0: OS drive, partitioned
    c0 = node.pci_controller('nvme0', '0000:00:02.0', '0000:01:00.0', 'OS0001')
    node.hwmon(os.path.join(c0, 'hwmon1'), millic=49850)
    d0 = node.block_dir(c0, 'nvme0n1', 6291456)
    node.partition(d0, 'nvme0n1p1', 6000000, 1)
    node.partition(d0, 'nvme0n1p15', 262144, 15)

    # nvme1: free data drive
    c1 = node.pci_controller('nvme1', '0000:00:03.0', '0000:02:00.0', 'DATA0001', numa='0', cpulist='0-3,8-11',
                             speed='8.0 GT/s PCIe', width='4', max_speed='16.0 GT/s PCIe', max_width='4')
    node.hwmon(os.path.join(c1, 'hwmon0'), millic=44850, sensors=[46850, 41850])
    node.block_dir(c1, 'nvme1n1', 8388608, queue={'scheduler': 'none [mq-deadline] kyber', 'nr_requests': '256'})

    # nvme2: free data drive, hwmon in the older place, throttling
    c2 = node.pci_controller('nvme2', '0000:00:04.0', '0000:03:00.0', 'DATA0002')
    node.hwmon(os.path.join(c2, 'device', 'hwmon', 'hwmon2'), millic=71850)
    # the older layout has hwmon under the PCI function: c2/device is a symlink, write there
    node.block_dir(c2, 'nvme2n1', 8388608)

    # nvme3: held by md0, md0 is XFS on /mnt/ckpt
    c3 = node.pci_controller('nvme3', '0000:00:05.0', '0000:04:00.0', 'DATA0003')
    d3 = node.block_dir(c3, 'nvme3n1', 8388608)
    md = os.path.join(s, 'devices', 'virtual', 'block', 'md0')
    for key, value in (('level', 'raid0'), ('chunk_size', '524288'), ('raid_disks', '1'),
                       ('array_state', 'clean'), ('degraded', '0')):
        write(os.path.join(md, 'md', key), value)
    write(os.path.join(md, 'size'), '8380416')
    mkdir(os.path.join(md, 'holders'))
    link(os.path.join(md, 'slaves', 'nvme3n1'), d3)
    link(os.path.join(d3, 'holders', 'md0'), md)
    link(os.path.join(s, 'block', 'md0'), md)
    link(os.path.join(s, 'class', 'block', 'md0'), md)
    write(os.path.join(node.dev, 'md0'))

    # nvme4: NVMe/TCP controller with native multipath (hidden path device + head)
    c4 = os.path.join(s, 'devices', 'virtual', 'nvme-fabrics', 'ctl', 'nvme4')
    node._ctrl_attrs(c4, 'FABRIC01', 'tcp', 'traddr=127.0.0.1,trsvcid=4420,src_addr=127.0.0.1', 3)
    link(os.path.join(s, 'class', 'nvme', 'nvme4'), c4)
    write(os.path.join(node.dev, 'nvme4'))
    write(os.path.join(c4, 'nvme4c4n1', 'size'), '8388608')
    write(os.path.join(c4, 'nvme4c4n1', 'ana_state'), 'optimized')
    head = node.block_dir(os.path.join(s, 'devices', 'virtual', 'nvme-subsystem', 'nvme-subsys4'), 'nvme4n1',
                          8388608, mq=False)
    link(os.path.join(head, 'multipath', 'nvme4c4n1'), os.path.join(c4, 'nvme4c4n1'))

    # mounts
    node.add_mount('/dev/nvme0n1p1', '/', 'ext4', 'rw,relatime,errors=remount-ro')
    node.add_mount('/dev/nvme0n1p15', '/boot/efi', 'vfat', 'rw,relatime,fmask=0022,dmask=0022')
    node.add_mount('/dev/md0', '/mnt/ckpt', 'xfs',
                   'rw,noatime,attr2,inode64,logbufs=8,logbsize=256k,sunit=1024,swidth=1024,noquota')

    # users
    write(os.path.join(node.etc, 'passwd'), '\n'.join([
        'root:x:0:0:root:/root:/bin/bash',
        'trainer:x:1000:1000:Trainer:/home/trainer:/bin/bash',
        'other:x:1001:1001::/home/other:/bin/sh',
    ]))
    write(os.path.join(node.etc, 'group'), '\n'.join([
        'root:x:0:',
        'video:x:44:trainer',
        'trainer:x:1000:',
        'other:x:1001:',
        'iouring:x:1500:trainer',
    ]))
    write(os.path.join(node.etc, 'security', 'limits.conf'), '\n'.join([
        '# /etc/security/limits.conf',
        '*               soft    core            0',
        '*               -       memlock         65536',
    ]))
    return node


# --- fake commands ----------------------------------------------------------------------

ID_CTRL = {
    'vid': 6966, 'ssvid': 6900, 'sn': 'DATA0001            ', 'mn': 'QEMU NVMe Ctrl                          ',
    'fr': '7.2.22  ', 'rab': 6, 'cmic': 0, 'mdts': 7, 'cntlid': 0, 'ver': 66560, 'oacs': 266,
    'wctemp': 343, 'cctemp': 373, 'mntmt': 0, 'mxtmt': 0, 'hctma': 0, 'sqes': 102, 'cqes': 68, 'nn': 256,
    'subnqn': 'nqn.2019-08.org.qemu:DATA0001',
}


def smart_log(temperature=323, critical_warning=0, thm1=0, warning_time=0, strings=False, as_object=False,
              sensors=None):
    log = {
        'critical_warning': critical_warning,
        'temperature': temperature,
        'avail_spare': 100, 'spare_thresh': 10, 'percent_used': 3,
        'endurance_grp_critical_warning_summary': 0,
        'data_units_read': 5, 'data_units_written': 7, 'power_on_hours': 12, 'unsafe_shutdowns': 1,
        'media_errors': 0, 'num_err_log_entries': 0,
        'warning_temp_time': warning_time, 'critical_comp_time': 0,
        'thm_temp1_trans_count': thm1, 'thm_temp2_trans_count': 0,
        'thm_temp1_total_time': thm1 * 60, 'thm_temp2_total_time': 0,
    }
    for index, value in enumerate(sensors or [], 1):
        log['temperature_sensor_%d' % index] = value
    if as_object:
        log['critical_warning'] = {
            'value': critical_warning, 'available_spare': critical_warning & 1,
            'temp_threshold': (critical_warning >> 1) & 1, 'reliability_degraded': (critical_warning >> 2) & 1,
            'ro': (critical_warning >> 3) & 1, 'vmbu_failed': (critical_warning >> 4) & 1,
            'pmr_ro': (critical_warning >> 5) & 1,
        }
    if strings:
        for key in ('data_units_read', 'data_units_written', 'power_on_hours', 'media_errors',
                    'num_err_log_entries', 'unsafe_shutdowns'):
            log[key] = str(log[key])
    return json.dumps(log, indent=2)


def num_queues(value='0x00070007'):
    return 'get-feature:0x07 (Number of Queues), Current value:%s\n' % value


FIO_OK = json.dumps({
    'fio version': 'fio-3.33',
    'jobs': [{'jobname': 'probe', 'error': 0,
              'read': {'io_bytes': 0, 'bw_bytes': 0, 'iops': 0.0, 'runtime': 0},
              'write': {'io_bytes': 1048576, 'bw_bytes': 524288000, 'iops': 128000.0, 'runtime': 2,
                        'clat_ns': {'percentile': {'99.000000': 1000}}, 'lat_ns': {'mean': 900.0}},
              'iodepth_level': {'1': 100.0}}],
    'disk_util': [],
})

XFS_INFO_MD0 = """meta-data=/dev/md0               isize=512    agcount=16, agsize=261888 blks
         =                       sectsz=512   attr=2, projid32bit=1
         =                       crc=1        finobt=1, sparse=1, rmapbt=0
         =                       reflink=1    bigtime=1 inobtcount=1 nrext64=0
data     =                       bsize=4096   blocks=4190208, imaxpct=25
         =                       sunit=128    swidth=128 blks
naming   =version 2              bsize=4096   ascii-ci=0, ftype=1
log      =internal log           bsize=4096   blocks=16384, version=2
         =                       sectsz=512   sunit=8 blks, lazy-count=1
realtime =none                   extsz=4096   blocks=0, rtextents=0
"""


class FakeRunner(object):
    """Table-driven fake of Context's runner and which.

    ``bins``: name -> path (absent = not installed).
    ``table``: list of (predicate(argv) -> bool, (rc, stdout, stderr) or callable(argv)).
    Every call is recorded in ``calls``.
    """

    def __init__(self, bins=None, table=None):
        self.bins = dict(bins or {})
        self.table = list(table or [])
        self.calls = []

    def which(self, name, opt_dirs=None):
        return self.bins.get(name)

    def run(self, argv, cwd=None):
        self.calls.append(list(argv))
        for predicate, result in self.table:
            if predicate(argv):
                return result(argv) if callable(result) else result
        return (127, '', '%s: fake command not in the table' % argv[0])

    def count(self, *words):
        return len([c for c in self.calls if all(w in c for w in words)])


def nvme_cmd(sub, ctrl):
    return lambda argv: len(argv) > 2 and argv[1] == sub and os.path.basename(argv[2]) == ctrl


def standard_runner(node, cli=None, **overrides):
    """nvme-cli, fio and xfs_info answers for build_node()'s node.

    ``cli``: {(subcommand, controller): (rc, stdout, stderr)} replaces nvme-cli answers;
    ``fio``, ``xfs_info``: replace those answers; ``bins``: {name: path or None}.
    """
    overrides.update(cli or {})
    smart = {
        'nvme0': smart_log(temperature=323),
        'nvme1': smart_log(temperature=318, strings=True, sensors=[320, 315]),
        'nvme2': smart_log(temperature=345, critical_warning=2, thm1=3, warning_time=12, as_object=True),
        'nvme3': smart_log(temperature=323, thm1=0),
        'nvme4': smart_log(temperature=0),
    }
    table = []
    for ctrl in ('nvme0', 'nvme1', 'nvme2', 'nvme3', 'nvme4'):
        idc = dict(ID_CTRL, sn=ctrl.upper())
        table.append((nvme_cmd('id-ctrl', ctrl), overrides.get(('id-ctrl', ctrl), (0, json.dumps(idc), ''))))
        table.append((nvme_cmd('smart-log', ctrl), overrides.get(('smart-log', ctrl), (0, smart[ctrl], ''))))
        table.append((nvme_cmd('get-feature', ctrl), overrides.get(('get-feature', ctrl), (0, num_queues(), ''))))
    nvme_version = 'nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n'
    table.append((lambda a: a[1:] == ['version'], (0, nvme_version, '')))
    table.append((lambda a: a[1:] == ['--version'], (0, 'fio-3.33\n', '')))
    table.append((lambda a: any(x == '--ioengine=io_uring' for x in a), overrides.get('fio', (0, FIO_OK, ''))))
    table.append((lambda a: os.path.basename(a[0]) == 'xfs_info' and a[1] == '/mnt/ckpt',
                  overrides.get('xfs_info', (0, XFS_INFO_MD0, ''))))
    bins = {'nvme': '/usr/sbin/nvme', 'fio': '/usr/bin/fio', 'xfs_info': '/usr/sbin/xfs_info'}
    bins.update(overrides.get('bins', {}))
    bins = dict((k, v) for k, v in bins.items() if v)
    return FakeRunner(bins=bins, table=table)


def make_context(node, runner, **kwargs):
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
    params = dict(sysfs_root=node.sys, procfs_root=node.proc, devfs_root=node.dev, etc_root=node.etc,
                  which=runner.which, runner=runner.run, environ={}, tmpdir=node.base,
                  lib_dirs=[os.path.join(node.base, 'usr', 'lib')],
                  cuda_globs=[os.path.join(node.base, 'usr', 'local', 'cuda*')])
    params.update(kwargs)
    return Context(**params)
