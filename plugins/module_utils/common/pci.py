# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""PCI Express topology and Access Control Services, from sysfs paths and config space bytes: pure functions.

Written here because nothing maintained reads this without ``lspci`` text (pciutils' ``setpci``/``lspci -vvv``
print ACS control as text meant for people; the kernel's sysfs gives the device path and the raw config space):

* :func:`chain` - the PCI functions from the root complex down to a device, from the device's real sysfs path
  (``/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/...``).
* :func:`acs_control` - the ACS Control register decoded from a function's config space (extended capability
  0x000D): P2P Request Redirect and P2P Completion Redirect send peer-to-peer traffic up to the root complex,
  which GPUDirect Storage needs off on the switch ports between a GPU and its drives.
* :func:`relation` - where two devices meet: ``same switch``, ``same root port``, ``same root complex``,
  ``different root complexes`` (or ``unknown`` for a device not found on PCI), and the bridges between them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

BDF_RE = re.compile(r'^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$')
ROOT_RE = re.compile(r'^pci[0-9a-fA-F]{4}:[0-9a-fA-F]{2}$')
EXT_CAP_START = 0x100
EXT_CAP_ACS = 0x000D
ACS_BITS = (('source_validation', 0), ('translation_blocking', 1), ('p2p_request_redirect', 2),
            ('p2p_completion_redirect', 3), ('upstream_forwarding', 4), ('p2p_egress_control', 5),
            ('direct_translated_p2p', 6))


def chain(real_path):
    """(root complex, [BDF from the root port down to the device]) of a device's real sysfs path; (None, [])
    for a path that is not on PCI."""
    parts = [part for part in (real_path or '').split('/') if part]
    roots = [index for index, part in enumerate(parts) if ROOT_RE.match(part)]
    if not roots:
        return None, []
    start = roots[-1]
    return parts[start], [part.lower() for part in parts[start + 1:] if BDF_RE.match(part)]


def _word(data, offset, size):
    return int.from_bytes(data[offset:offset + size], 'little')


def acs_control(config):
    """{present, control, <bit names>} of the ACS extended capability in config space bytes; ``present`` None when
    the bytes stop before the extended space (sysfs gives 64 or 256 bytes to a user who is not root)."""
    if not config or len(config) < EXT_CAP_START + 4:
        return {'present': None, 'control': None}
    offset, seen = EXT_CAP_START, set()
    while offset and offset not in seen and offset + 8 <= len(config):
        seen.add(offset)
        header = _word(config, offset, 4)
        if header in (0, 0xFFFFFFFF):
            break
        if header & 0xFFFF == EXT_CAP_ACS:
            control = _word(config, offset + 6, 2)
            decoded = dict((name, bool(control >> bit & 1)) for name, bit in ACS_BITS)
            decoded.update(present=True, control=control)
            return decoded
        offset = (header >> 20) & 0xFFC
    return {'present': False, 'control': None}


def relation(first, second):
    """{relation, bridges}: where two (root, chain) pairs meet and the bridges on the path between them (the
    last shared function and every function below it but the two devices)."""
    root_a, chain_a = first
    root_b, chain_b = second
    if root_a is None or root_b is None:
        return {'relation': 'unknown', 'bridges': []}
    if root_a != root_b:
        return {'relation': 'different root complexes', 'bridges': []}
    shared = 0
    for left, right in zip(chain_a[:-1], chain_b[:-1]):
        if left != right:
            break
        shared += 1
    if shared == 0:
        name = 'same root complex'
    elif shared == 1:
        name = 'same root port'
    else:
        name = 'same switch'
    bridges = chain_a[max(shared - 1, 0):-1] + chain_b[shared:-1]
    return {'relation': name, 'bridges': bridges}
