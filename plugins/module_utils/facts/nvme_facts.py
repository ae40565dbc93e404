# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe controllers and namespaces from /sys/class/nvme (sysfs first), with
NVMe admin commands only for what sysfs lacks (id-ctrl, smart-log, get-feature 7).

An admin command is sent with the kernel's passthrough ioctl (nvme_ioctl,
through Context.nvme_admin) and nvme-cli is spawned only where the ioctl is
refused (no CAP_SYS_ADMIN, no passthrough, a test's fixture tree). Each runs
at most once per controller and log, controllers in parallel, so facts stay
cheap on nodes with many drives.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import threading

from concurrent.futures import ThreadPoolExecutor

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import nvme_ioctl
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.blockdev import BlockTopology
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import read_ids
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import boot_cache
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.nvme_cli import (
    parse_get_feature_num_queues,
    parse_id_ctrl,
    parse_smart_log,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    expand_cpulist,
    isdir,
    listdir,
    read_int,
    read_str,
    readlink_basename,
)

CTRL_RE = re.compile(r'^nvme\d+$')
NS_RE = re.compile(r'^nvme\d+n\d+$')
PATH_RE = re.compile(r'^nvme(\d+)c(\d+)n(\d+)$')
PCI_RE = re.compile(r'^[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$')
GTS_RE = re.compile(r'^\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s')
MAX_WORKERS = 8

# log name -> (argv after the binary, with DEV as placeholder; parser)
NVME_LOGS = {
    'id-ctrl': (['id-ctrl', 'DEV', '-o', 'json'], parse_id_ctrl),
    'smart-log': (['smart-log', 'DEV', '-o', 'json'], parse_smart_log),
    # get-feature has no JSON output in nvme-cli 2.x: the parser reads the text line.
    'num-queues': (['get-feature', 'DEV', '-f', '7'], parse_get_feature_num_queues),
}
# what each log is called where a message names the command
LOG_COMMANDS = {'id-ctrl': 'id-ctrl', 'smart-log': 'smart-log', 'num-queues': 'get-feature'}
CLI_NOTE_PREFIX = 'nvme-cli (nvme) not found in PATH'
SOURCE_IOCTL = 'ioctl'
SOURCE_CLI = 'nvme-cli'


def _parser_errors(parsed):
    errors = parsed.get('errors') if isinstance(parsed, dict) else None
    if not errors:
        return []
    if isinstance(errors, dict):
        return ['%s: %s' % (key, errors[key]) for key in sorted(errors)]
    return [str(e) for e in errors]


class NvmeInventory(object):
    """Controllers, namespaces and a per-(controller, log) cache of the admin commands' answers (ioctl first,
    nvme-cli where the ioctl is refused). ``use_nvme_cli=False``: no admin command at all, sysfs alone."""

    def __init__(self, ctx, use_nvme_cli=True):
        self.ctx = ctx
        self.use_nvme_cli = use_nvme_cli
        self.topology = BlockTopology(ctx)
        self.controllers = [c for c in listdir(ctx.sys('class', 'nvme')) if CTRL_RE.match(c)]
        self.cli_path = ctx.which('nvme') if use_nvme_cli else None
        self._results = {}
        self._lock = threading.Lock()
        self._key_locks = {}
        self._namespaces = None
        self._refusals = {}  # log -> why the ioctl was refused, where nvme-cli was not there to answer instead

    # --- admin commands: ioctl, else nvme-cli ---------------------------------------
    def cli_note(self, logs=None):
        """Why admin-command facts (of ``logs``, default all) are None for want of nvme-cli (the ioctl refused
        and no nvme-cli), or None. Tells only about the logs already read: call it after them."""
        if not self.controllers or not self.use_nvme_cli or self.cli_path:
            return None
        with self._lock:
            refusals = dict(self._refusals)
        if not refusals:
            return None
        logs = [log for log in NVME_LOGS if log in refusals and (logs is None or log in logs)]
        if not logs:
            return None
        names = [LOG_COMMANDS[log] for log in logs]
        listed = names[0] if len(names) == 1 else '%s and %s' % (', '.join(names[:-1]), names[-1])
        return '%s and the NVMe admin ioctl refused (%s): %s facts are None' % (
            CLI_NOTE_PREFIX, refusals[logs[0]], listed)

    def prefetch(self, logs):
        """Read the wanted logs for all controllers, one worker per controller."""
        logs = [log for i, log in enumerate(logs) if log in NVME_LOGS and log not in logs[:i]]
        if not logs or not self.use_nvme_cli or not self.controllers:
            return

        def one(ctrl):
            for log in logs:
                self.get(ctrl, log)

        workers = max(1, min(MAX_WORKERS, len(self.controllers)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, self.controllers))

    def per_controller(self, facts_of, logs):
        """``[facts_of(ctrl)]`` for every controller, and the section's errors: the nvme-cli note plus
        the failures of the given logs."""
        errors = []
        items = []
        for ctrl in self.controllers:
            items.append(facts_of(ctrl))
            for log in logs:
                errors.extend(self.error(ctrl, log))
        note = self.cli_note(logs)
        return items, ([note] if note else []) + errors

    def _key_lock(self, key):
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def get(self, ctrl, log):
        """Parsed answer of one admin command for one controller (cached), or None."""
        entry = self._entry(ctrl, log)
        return entry[0]

    def source(self, ctrl, log):
        """Who answered that log for that controller: SOURCE_IOCTL, SOURCE_CLI, or None (nobody, or not read)."""
        entry = self._results.get((ctrl, log))
        return entry[2] if entry else None

    def error(self, ctrl, log):
        """Error strings for one (controller, log); [] when it ran fine or did not run."""
        key = (ctrl, log)
        entry = self._results.get(key)
        return list(entry[1]) if entry else []

    def _entry(self, ctrl, log):
        key = (ctrl, log)
        if key in self._results:
            return self._results[key]
        with self._key_lock(key):
            if key not in self._results:
                self._results[key] = self._run(ctrl, log)
        return self._results[key]

    def _run(self, ctrl, log):
        """(parsed or None, errors, source) of one log: the ioctl; nvme-cli where the ioctl is refused."""
        if not self.use_nvme_cli or log not in NVME_LOGS:
            return (None, [], None)
        dev = self.ctx.dev(ctrl)
        try:
            parsed = self.ctx.nvme_admin(log, dev)
        except nvme_ioctl.NvmeIoctlError as exc:
            if not nvme_ioctl.refused(exc):
                # the drive answered with an NVMe status, or the controller is gone: nvme-cli would fare no better
                return (None, ['%s: %s (ioctl): %s' % (ctrl, log, exc)], None)
            refusal = str(exc)
        except Exception as exc:  # a reader that broke is a refusal: nvme-cli may still answer
            refusal = '%s: %s' % (type(exc).__name__, exc)
        else:
            return (parsed, ['%s: %s (ioctl): %s' % (ctrl, log, msg) for msg in _parser_errors(parsed)],
                    SOURCE_IOCTL)
        if not self.cli_path:
            with self._lock:
                self._refusals.setdefault(log, refusal)
            return (None, [], None)
        return self._run_cli(ctrl, log, dev)

    def read(self, ctrl, log):
        """(parsed or None, errors) of one log read now, not cached (a sampler reading a drive again and again)."""
        parsed, errors, _source = self._run(ctrl, log)
        return parsed, errors

    def _run_cli(self, ctrl, log, dev):
        template, parser = NVME_LOGS[log]
        if not os.path.exists(dev):
            return (None, ['%s: nvme %s skipped: no device node %s' % (ctrl, log, dev)], None)
        argv = [self.cli_path] + [dev if arg == 'DEV' else arg for arg in template]
        res = self.ctx.run(argv)
        if res['error']:
            return (None, ['%s: %s' % (ctrl, res['error'])], None)
        try:
            parsed = parser(res['stdout'])
        except Exception as e:  # the parsers promise not to raise; stay safe anyway
            return (None, ['%s: nvme %s output not parsed: %s' % (ctrl, log, e)], None)
        errors = ['%s: nvme %s: %s' % (ctrl, log, msg) for msg in _parser_errors(parsed)]
        if res['stderr'].strip():
            errors.append('%s: nvme %s (rc=0) stderr: %s' % (ctrl, log, res['stderr'].strip()[:300]))
        return (parsed, errors, SOURCE_CLI)

    # --- namespaces ---------------------------------------------------------------
    def _multipath_heads(self):
        """per-path device name (nvme0c1n1) -> head block device (nvme0n1)."""
        heads = {}
        for name in listdir(self.ctx.sys('block')):
            if not NS_RE.match(name):
                continue
            for path in listdir(self.ctx.sys('block', name, 'multipath')):
                heads[path] = name
        return heads

    def namespaces(self):
        """Ordered {block name: {controllers: [...], paths: [...]}} over all controllers."""
        if self._namespaces is not None:
            return self._namespaces
        heads = None
        result = {}
        order = []
        for ctrl in self.controllers:
            for entry in listdir(self.ctx.sys('class', 'nvme', ctrl)):
                path_match = PATH_RE.match(entry)
                if NS_RE.match(entry):
                    name, path = entry, None
                elif path_match:
                    if heads is None:
                        heads = self._multipath_heads()
                    name = heads.get(entry) or 'nvme%sn%s' % (path_match.group(1), path_match.group(3))
                    path = entry
                else:
                    continue
                if name not in result:
                    result[name] = {'controllers': [], 'paths': []}
                    order.append(name)
                if ctrl not in result[name]['controllers']:
                    result[name]['controllers'].append(ctrl)
                if path and path not in result[name]['paths']:
                    result[name]['paths'].append(path)
        self._namespaces = dict((name, result[name]) for name in order)
        self._order = order
        return self._namespaces

    def namespace_names(self):
        self.namespaces()
        return list(self._order)

    def controller_namespaces(self, ctrl):
        return [name for name in self.namespace_names() if ctrl in self._namespaces[name]['controllers']]


def _link_speed(text):
    if not text or text.lower().startswith('unknown'):
        return None, None
    match = GTS_RE.match(text)
    return text, (float(match.group(1)) if match else None)


def _positive(value):
    return value if value is not None and value > 0 else None


def pci_link(device_dir):
    """PCIe link facts of the controller's PCI function (None when not PCIe)."""
    cur, cur_gts = _link_speed(read_str(os.path.join(device_dir, 'current_link_speed')))
    top, top_gts = _link_speed(read_str(os.path.join(device_dir, 'max_link_speed')))
    return {
        'current_link_speed': cur,
        'current_link_speed_gts': cur_gts,
        'max_link_speed': top,
        'max_link_speed_gts': top_gts,
        'current_link_width': _positive(read_int(os.path.join(device_dir, 'current_link_width'))),
        'max_link_width': _positive(read_int(os.path.join(device_dir, 'max_link_width'))),
    }


def controller_facts(ctx, inv, ctrl):
    base = ctx.sys('class', 'nvme', ctrl)
    device_dir = os.path.join(base, 'device')
    transport = read_str(os.path.join(base, 'transport'))
    address = read_str(os.path.join(base, 'address'))
    pci_address = None
    if transport == 'pcie':
        link = readlink_basename(device_dir)
        if link and PCI_RE.match(link):
            pci_address = link
        elif address and PCI_RE.match(address):
            pci_address = address
        address = pci_address or address

    numa = read_int(os.path.join(device_dir, 'numa_node'))
    if numa is None:
        numa = read_int(os.path.join(base, 'numa_node'))
    if numa is not None and numa < 0:
        numa = None
    cpulist = read_str(os.path.join(device_dir, 'local_cpulist')) or None

    queue_count = read_int(os.path.join(base, 'queue_count'))
    sqsize = read_int(os.path.join(base, 'sqsize'))

    facts = {
        'name': ctrl,
        'device': os.path.join('/dev', ctrl),
        'model': read_str(os.path.join(base, 'model')) or None,
        'serial': read_str(os.path.join(base, 'serial')) or None,
        'firmware': read_str(os.path.join(base, 'firmware_rev')) or None,
        'transport': transport or None,
        'address': address or None,
        'pci_address': pci_address,
        'subsysnqn': read_str(os.path.join(base, 'subsysnqn')) or None,
        'cntlid': read_int(os.path.join(base, 'cntlid')),
        'state': read_str(os.path.join(base, 'state')) or None,
        'numa_node': numa,
        'local_cpulist': cpulist,
        'local_cpus': expand_cpulist(cpulist) if cpulist else None,
        'io_queues': queue_count - 1 if queue_count else None,
        'queue_count': queue_count,
        'sqsize': sqsize,
        'io_queues_feature': None,
        'io_queues_feature_sq': None,
        'io_queues_feature_cq': None,
        'mdts_bytes': None,
        'namespaces': inv.controller_namespaces(ctrl),
    }
    facts.update(pci_link(device_dir))

    num_queues = inv.get(ctrl, 'num-queues')
    if num_queues:
        sq = num_queues.get('submission_queues')
        cq = num_queues.get('completion_queues')
        facts['io_queues_feature_sq'] = sq
        facts['io_queues_feature_cq'] = cq
        if sq is not None and cq is not None:
            facts['io_queues_feature'] = min(sq, cq)
    id_ctrl = inv.get(ctrl, 'id-ctrl')
    if id_ctrl:
        facts['mdts_bytes'] = id_ctrl.get('mdts_bytes')
    facts['admin_source'] = {'id_ctrl': inv.source(ctrl, 'id-ctrl'), 'num_queues': inv.source(ctrl, 'num-queues')}
    return facts


def namespace_facts(ctx, inv, name):
    info = inv.namespaces()[name]
    base = ctx.sys('block', name)
    queue = os.path.join(base, 'queue')
    sectors = read_int(os.path.join(base, 'size'))
    facts = {
        'name': name,
        'device': os.path.join('/dev', name),
        'controllers': list(info['controllers']),
        'paths': list(info['paths']),
        'multipath': bool(info['paths']) or isdir(os.path.join(base, 'multipath')),
        'nsid': read_int(os.path.join(base, 'nsid')),
        'size_bytes': sectors * 512 if sectors is not None else None,
        'logical_block_size': read_int(os.path.join(queue, 'logical_block_size')),
        'physical_block_size': read_int(os.path.join(queue, 'physical_block_size')),
        'optimal_io_size': read_int(os.path.join(queue, 'optimal_io_size')),
        'wwid': read_str(os.path.join(base, 'wwid')) or None,
    }
    # The ids the drive reports (None where sysfs shows none): two devices sharing one are one namespace.
    ids = read_ids(base)
    facts.update(nguid=ids['nguid'], eui=ids['eui'], uuid=ids['uuid'])
    facts.update(inv.topology.disk_usage(name))
    return facts


def cli_version(ctx, path):
    """nvme-cli's version (kept for the boot: boot_cache), or None."""
    if not path:
        return None
    key = boot_cache.key_for(ctx, path)
    cached = boot_cache.read(ctx, 'nvme_cli_version', key)
    if cached is not None:
        return cached.get('version')
    res = ctx.run([path, 'version'])
    if res['error']:
        return None
    match = re.search(r'nvme version\s+(\S+)', res['stdout'])
    version = match.group(1) if match else None
    boot_cache.write(ctx, 'nvme_cli_version', key, {'version': version})
    return version


def collect(ctx, inv):
    """The ``nvme`` section."""
    controllers, errors = inv.per_controller(lambda ctrl: controller_facts(ctx, inv, ctrl),
                                             ('id-ctrl', 'num-queues'))
    namespaces = [namespace_facts(ctx, inv, name) for name in inv.namespace_names()]
    return {
        'nvme_cli': {'path': inv.cli_path, 'version': cli_version(ctx, inv.cli_path)},
        'controllers': controllers,
        'namespaces': namespaces,
        'errors': errors,
    }
