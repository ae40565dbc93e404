# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Samples of NVMe drives under load, cheap enough to take every second on every drive while a checkpoint is
written: the block layer's write counters (``/sys/class/block/<ns>/stat``, ``inflight``), the composite and
per-sensor temperatures (hwmon first, the SMART log otherwise) and the SMART log's thermal counters and
critical-warning bits. The SMART log and Identify Controller come through the facts' one NVMe reader
(``facts/nvme_facts.py``'s ``NvmeInventory.read``: the admin ioctl, nvme-cli where the ioctl is refused), the
temperatures through the thermal facts' ``controller_thermal``, so a sample and the facts never disagree on a
field. Used by the checkpoint_write module (``sample_drives``); ``thermal.py`` reads the samples.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.nvme_facts import NS_RE, NvmeInventory
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.thermal_facts import (
    ID_CTRL_FIELDS,
    SMART_FIELDS,
    controller_thermal,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import block_stat, read_str

MAX_DRIVES = 256


def check_names(names, option='sample_drives'):
    """The namespaces to sample, as the option gives them: kernel names ``nvmeXnY`` (or ``/dev/nvmeXnY``), each
    once, at most :data:`MAX_DRIVES`. ValueError naming the value and the limit."""
    if not isinstance(names, list):
        raise ValueError('%s: %r is not a list of NVMe namespaces' % (option, names))
    if len(names) > MAX_DRIVES:
        raise ValueError('%s: %d namespaces, above the %d one write can sample' % (option, len(names), MAX_DRIVES))
    out = []
    for name in names:
        base = name[len('/dev/'):] if isinstance(name, str) and name.startswith('/dev/') else name
        if not isinstance(base, str) or not NS_RE.match(base):
            raise ValueError('%s: %r is not an NVMe namespace (nvme<X>n<Y>)' % (option, name))
        if base in out:
            raise ValueError('%s: %s is named twice' % (option, base))
        out.append(base)
    return out


class _Fresh(object):
    """The one NVMe reader, read anew for the SMART log at every sample (Identify Controller once)."""

    def __init__(self, inventory):
        self.inventory = inventory
        self.id_ctrl = {}
        self.errors = []

    def get(self, ctrl, log):
        if log == 'id-ctrl' and ctrl in self.id_ctrl:
            return self.id_ctrl[ctrl]
        parsed, errors = self.inventory.read(ctrl, log)
        self.errors.extend(errors)
        if log == 'id-ctrl':
            self.id_ctrl[ctrl] = parsed
        return parsed


class DriveSampler(object):
    """Samples of the namespaces ``names`` (see the module's doc): :meth:`info` once, :meth:`sample` per tick."""

    def __init__(self, ctx, names, clock=time.time):
        self.ctx = ctx
        self.names = list(names)
        inventory = NvmeInventory(ctx)
        self.reader = _Fresh(inventory)
        self.clock = clock
        self.start = None
        self.samples = []
        # The facts' namespace map (a native-multipath head: its first path's controller)
        namespaces = inventory.namespaces()
        self.controllers = dict((name, ((namespaces.get(name) or {}).get('controllers') or [None])[0])
                                for name in self.names)

    def missing(self):
        """Namespaces that are not there (or have no controller): messages."""
        out = []
        for name in self.names:
            if not os.path.isdir(self.ctx.sys('class', 'block', name)):
                out.append('%s: no such block device' % name)
            elif self.controllers[name] is None:
                out.append('%s: no NVMe controller behind it in sysfs' % name)
        return out

    def info(self):
        """{name: {controller, serial, wctemp_c, cctemp_c, mntmt_c, mxtmt_c, hctma}} from Identify Controller."""
        out = {}
        for name in self.names:
            ctrl = self.controllers[name]
            ident = self.reader.get(ctrl, 'id-ctrl') or {}
            entry = {'controller': ctrl, 'serial': (read_str(self.ctx.sys('class', 'nvme', ctrl, 'serial')) or '')
                     .strip() or None}
            entry.update((key, ident.get(key)) for key in ID_CTRL_FIELDS)
            out[name] = entry
        return out

    def sample(self):
        """One sample of every drive, appended to :attr:`samples` and returned: {t (s since the first), drives}."""
        now = self.clock()
        if self.start is None:
            self.start = now
        drives = {}
        for name in self.names:
            ctrl = self.controllers[name]
            entry = block_stat(self.ctx.sysfs_root, name)
            before = len(self.reader.errors)
            thermal = controller_thermal(self.ctx, self.reader, ctrl) if ctrl else {}
            entry.update({
                'temp_c': thermal.get('composite_temp_c'), 'temp_source': thermal.get('composite_source'),
                'sensors_c': [s.get('temp_c') for s in thermal.get('sensors') or []]
                or list(thermal.get('smart_log_sensors_c') or []),
            })
            entry.update((key, thermal.get(key)) for key in SMART_FIELDS)
            errors = self.reader.errors[before:]
            entry['error'] = '; '.join(errors) if errors else None
            drives[name] = entry
        doc = {'t': round(now - self.start, 3), 'drives': drives}
        self.samples.append(doc)
        return doc


def start_sampling(module, ctx, names, result):
    """The sampler of a writing module's ``sample_drives`` (None when it names none), the drives' Identify
    Controller thresholds in ``result['sampled_drives']``; a namespace that is not there fails the module naming
    it, before anything is written."""
    if not names:
        return None
    sampler = DriveSampler(ctx, names)
    missing = sampler.missing()
    if missing:
        module.fail_json(msg='sample_drives refused, nothing was written: %s' % '; '.join(missing), **result)
    result['sampled_drives'] = sampler.info()
    return sampler
