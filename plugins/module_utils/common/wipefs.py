# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``wipefs --no-act --json`` found on a device, and whether it may be overwritten (only signatures the
collection wrote itself - its md array's or its XFS's UUID - are "ours"). Pure functions, standard library only:
they run on the controller (filters) and on the node (modules)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

_UUID_STRIP = re.compile(r'[-:\s]')


# ---------------------------------------------------------------- signatures
def norm_uuid(value):
    """'E78A7203:E730DF8E:...' / 'e78a7203-e730-...' -> 'e78a7203e730...' (None stays None)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return _UUID_STRIP.sub('', value.lower()) or None


# The wipefs columns parse_wipefs_json reads (``wipefs --no-act --json --output WIPEFS_COLUMNS DEVICE``).
WIPEFS_COLUMNS = 'DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE'


def parse_wipefs_json(text):
    """``wipefs --no-act --json -O DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE`` -> list of
    {device, offset, type, uuid, label, usage}. Raises ValueError on anything else."""
    if isinstance(text, dict):
        doc = text
    else:
        if not isinstance(text, str):
            raise ValueError('wipefs output is %s, not text' % type(text).__name__)
        if not text.strip():
            return []
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise ValueError('wipefs output is not JSON (%s): %r' % (exc, text[:200]))
    if not isinstance(doc, dict) or not isinstance(doc.get('signatures', []), list):
        raise ValueError('wipefs JSON has no "signatures" list: %r' % (doc,))
    result = []
    for item in doc.get('signatures') or []:
        if not isinstance(item, dict):
            continue
        result.append(dict((key, item.get(key)) for key in ('device', 'offset', 'type', 'uuid', 'label', 'usage')))
    return result


def describe_signature(sig):
    kind = sig.get('type') or 'unknown'
    usage = sig.get('usage') or ''
    what = '%s partition table' % kind if 'partition' in usage else '%s signature' % kind
    extras = []
    if sig.get('uuid'):
        extras.append('UUID %s' % sig['uuid'])
    if sig.get('label'):
        extras.append('label %s' % sig['label'])
    if sig.get('offset'):
        extras.append('offset %s' % sig['offset'])
    return '%s (%s)' % (what, ', '.join(extras)) if extras else what


def _is_ours(sig, device, ours):
    kind = sig.get('type')
    uuid = norm_uuid(sig.get('uuid'))
    if kind == 'linux_raid_member' and uuid and uuid in ours['md_uuids']:
        return True
    if kind == 'xfs' and uuid and uuid in ours['fs_uuids']:
        return True
    if kind == 'xfs_external_log' and device in ours['log_devices']:
        return True
    return False


def signature_verdicts(signatures, devices, ours=None):
    """Which devices may be written.

    ``signatures``: :func:`parse_wipefs_json` output (or the raw text).
    ``devices``: [{"path": "/dev/nvme1n1", "kernel_name": "nvme1n1", "label": "DATA0001"}], plan members
    ({"device", "name", "serial"}) or paths.
    ``ours``: {"md_uuids": [...], "fs_uuids": [...], "log_devices": [paths]}: what this role wrote.

    Returns {"devices": [{path, label, signatures, ours, foreign, verdict: clean|ours|foreign}],
    "refused": [messages naming the device and each foreign signature]}.
    """
    if not isinstance(signatures, list):
        signatures = parse_wipefs_json(signatures)
    ours = ours or {}
    known = {
        'md_uuids': set(filter(None, (norm_uuid(u) for u in ours.get('md_uuids') or []))),
        'fs_uuids': set(filter(None, (norm_uuid(u) for u in ours.get('fs_uuids') or []))),
        'log_devices': set(ours.get('log_devices') or []),
    }
    result = {'devices': [], 'refused': []}
    for dev in devices or []:
        if isinstance(dev, str):
            dev = {'path': dev}
        path = dev.get('path') or dev.get('device')
        kernel = dev.get('kernel_name') or dev.get('name')
        names = set(filter(None, [path, os.path.basename(path or ''), kernel]))
        found = [sig for sig in signatures if sig.get('device') in names]
        mine = [sig for sig in found if _is_ours(sig, path, known)]
        foreign = [sig for sig in found if sig not in mine]
        verdict = 'foreign' if foreign else ('ours' if mine else 'clean')
        label = dev.get('label') or dev.get('serial')
        result['devices'].append({'path': path, 'label': label, 'signatures': found, 'ours': mine,
                                  'foreign': foreign, 'verdict': verdict})
        if foreign:
            result['refused'].append('%s%s carries %s' % (path, ' (%s)' % label if label else '',
                                                          '; '.join(describe_signature(s) for s in foreign)))
    return result


# ---------------------------------------------------------------- read back
