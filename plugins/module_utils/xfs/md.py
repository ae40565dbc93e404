# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""md RAID: /proc/mdstat parsed, mdadm's sizes and its --export output, mdadm.conf lines. The md_array module's work
on a node (find, create or assemble, verify, persist, stop) is :class:`md_array.MdArray`. The parsers and sizes are
pure (the md sizes mdadm uses are planning: xfs_layout.py); MdArray runs mdadm through an AnsibleModule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.wipefs import norm_uuid
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.mount_options import check_path

MDSTAT_ARRAY_KEYS = (
    "level", "state", "read_only", "members", "failed", "spares", "chunk_bytes",
    "size_bytes", "raid_disks", "active_disks", "degraded",
)
_MD_LINE_RE = re.compile(r"^(md\S*)\s*:\s*(active|inactive)(?:\s*\(([^)]*)\))?\s*(.*)$")
_MD_MEMBER_RE = re.compile(r"^(\S+?)\[(\d+)\]((?:\([A-Za-z]\))*)$")
_MD_BLOCKS_RE = re.compile(r"(\d+)\s+blocks")
_MD_CHUNK_RE = re.compile(r"(\d+)([kKmM])\s+chunk")
_MD_STATUS_RE = re.compile(r"\[(\d+)/(\d+)\]\s*\[([U_]+)\]")


# ---------------------------------------------------------------- /proc/mdstat
def _md_members(tokens):
    members, failed, spares = [], [], []
    for token in tokens:
        match = _MD_MEMBER_RE.match(token)
        if not match:
            continue
        name, role, flags = match.group(1), int(match.group(2)), match.group(3)
        if "(F)" in flags:
            failed.append((role, name))
        elif "(S)" in flags:
            spares.append((role, name))
        else:
            members.append((role, name))
    return [n for _r, n in sorted(members)], [n for _r, n in sorted(failed)], [n for _r, n in sorted(spares)]


def _md_array(match):
    state, qualifier, rest = match.group(2), (match.group(3) or ""), match.group(4).split()
    level = rest[0] if rest and "[" not in rest[0] else None
    members, failed, spares = _md_members(rest[1:] if level else rest)
    array = dict.fromkeys(MDSTAT_ARRAY_KEYS)
    array.update({
        "level": level, "state": state, "read_only": "read-only" in qualifier,
        "members": members, "failed": failed, "spares": spares,
    })
    return array


def _md_detail(array, line):
    if line.lstrip().startswith("bitmap:"):
        return
    blocks = _MD_BLOCKS_RE.search(line)
    if blocks and array["size_bytes"] is None:
        array["size_bytes"] = int(blocks.group(1)) * 1024
    chunk = _MD_CHUNK_RE.search(line)
    if chunk:
        array["chunk_bytes"] = int(chunk.group(1)) * (1024 if chunk.group(2) in "kK" else 1024 * 1024)
    status = _MD_STATUS_RE.search(line)
    if status:
        array["raid_disks"], array["active_disks"] = int(status.group(1)), int(status.group(2))
        array["degraded"] = "_" in status.group(3)


def parse_mdstat(text):
    """Parse ``/proc/mdstat`` into ``{"md0": {...}, "md127": {...}}``.

    Each array: ``{level: "raid0"|"raid10"|... or None (inactive), state:
    "active"|"inactive", read_only: bool ("(auto-read-only)"), members:
    [device names in role order, spares and failed excluded], failed: [...],
    spares: [...], chunk_bytes: int or None (raid1/linear have none),
    size_bytes: int (1 KiB blocks x 1024), raid_disks, active_disks: int or
    None, degraded: bool or None (None where mdstat prints no [n/m] status,
    e.g. raid0)}``. Text that holds no md arrays gives ``{}`` (an empty
    /proc/mdstat is legitimate); never raises.
    """
    arrays = {}
    if not isinstance(text, str):
        return arrays
    current = None
    for line in text.splitlines():
        match = _MD_LINE_RE.match(line)
        if match:
            current = arrays[match.group(1)] = _md_array(match)
        elif current is not None and line[:1].isspace() and line.strip():
            _md_detail(current, line)
        else:
            current = None
    return arrays


# ---------------------------------------------------------------- mdadm on a node
MARKER = '# Managed by Ansible (ai_storage.checkpoint_io.md_array): %s'


def parse_export(text):
    """``mdadm --detail/--examine --export`` KEY=value lines -> dict."""
    result = {}
    for line in (text or '').splitlines():
        key, sep, value = line.strip().partition('=')
        if sep and key.startswith('MD_'):
            result[key] = value.strip().strip("'")
    return result


def name_matches(md_name, name):
    """Superblock name ``host:ckpt`` (or ``ckpt``) against the array name ``ckpt``."""
    return bool(md_name) and (md_name == name or md_name.rsplit(':', 1)[-1] == name)


def colon_uuid(value):
    """Any UUID spelling -> mdadm's ``8:8:8:8`` form."""
    raw = norm_uuid(value)
    if not raw or len(raw) != 32:
        return value
    return ':'.join(raw[i:i + 8] for i in range(0, 32, 8))


def update_conf(text, device, uuid, line, name):
    """O(conf_file) text with ``line`` for ``device``/``uuid`` (None: removed), in place."""
    marker = MARKER % name
    wanted = norm_uuid(uuid)
    out = []
    placed = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped == marker:
            continue
        tokens = stripped.split()
        if tokens[:1] == ['ARRAY']:
            same_device = len(tokens) > 1 and tokens[1] == device
            same_uuid = wanted and any(tok.startswith('UUID=') and norm_uuid(tok[5:]) == wanted for tok in tokens)
            if same_device or same_uuid:
                if line and not placed:
                    out.extend([marker, line])
                    placed = True
                continue
        out.append(raw)
    if line and not placed:
        out.extend([marker, line])
    result = '\n'.join(out)
    return result + '\n' if result else result


def check_conf_file(path, name='conf_file'):
    """The mdadm configuration file the module writes: an absolute path within the kernel's limits, in a directory
    that exists, and neither a directory nor a symlink (the module never writes through one)."""
    check_path(path, name)
    if os.path.islink(path):
        raise ValueError('%s: %s is a symlink: the module never writes through one; give the file it points at'
                         % (name, path))
    if os.path.isdir(path):
        raise ValueError('%s: %s is a directory, not a file' % (name, path))
    if not os.path.isdir(os.path.dirname(path)):
        raise ValueError('%s: the directory of %s does not exist (is mdadm installed?)' % (name, path))
    return path
