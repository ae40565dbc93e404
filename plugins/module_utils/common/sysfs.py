# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small, exception-free readers for sysfs / procfs style files.

Every function returns a default (None, [] or {}) instead of raising, the way
ansible's setup module reads the kernel's pseudo files: a missing attribute on
an older kernel or a racing hot-unplug must never fail fact gathering.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re


def read_str(path, default=None):
    """Return the stripped content of a small text file, or ``default``."""
    try:
        with open(path, 'rb') as f:
            data = f.read(1024 * 1024)
    except (IOError, OSError, TypeError, ValueError):
        return default
    try:
        text = data.decode('utf-8', 'replace')
    except Exception:  # pragma: no cover - decode with 'replace' does not raise
        return default
    return text.strip()


def read_text(path, default=None, limit=16 * 1024 * 1024):
    """Return the full (unstripped) content of a text file, or ``default``."""
    try:
        with open(path, 'rb') as f:
            data = f.read(limit)
    except (IOError, OSError, TypeError, ValueError):
        return default
    return data.decode('utf-8', 'replace')


def read_int(path, default=None, base=0):
    """Return the file content as an int (decimal or 0x-prefixed hex), or ``default``.

    ``base=0`` lets Python honour 0x / 0o prefixes; plain decimal with leading
    zeroes ("007") is handled as decimal.
    """
    value = read_str(path)
    return to_int(value, default=default, base=base)


def to_int(value, default=None, base=0):
    """Convert a string to int without raising."""
    if value is None:
        return default
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text:
        return default
    try:
        return int(text, base)
    except ValueError:
        pass
    try:
        return int(text, 10)
    except ValueError:
        return default


def read_list(path, default=None):
    """Return the whitespace separated tokens of a file ([] when empty), or ``default``.

    ``default`` is [] when not given, so callers can always iterate.
    """
    value = read_str(path)
    if value is None:
        return [] if default is None else default
    return value.split()


def read_lines(path):
    """Return the lines of a file without trailing newlines; [] when unreadable."""
    text = read_text(path)
    if text is None:
        return []
    return text.splitlines()


def listdir(path):
    """Sorted directory entries; [] when the directory is missing or unreadable."""
    try:
        return sorted(os.listdir(path), key=natural_key)
    except (IOError, OSError, TypeError, ValueError):
        return []


def exists(path):
    try:
        return os.path.exists(path)
    except (TypeError, ValueError):
        return False


def isdir(path):
    try:
        return os.path.isdir(path)
    except (TypeError, ValueError):
        return False


def readlink_basename(path):
    """Basename of a symlink's target (``device`` -> "0000:00:04.0"), or None."""
    try:
        target = os.readlink(path)
    except (IOError, OSError, TypeError, ValueError):
        return None
    target = target.rstrip('/')
    return os.path.basename(target) or None


def realpath(path):
    """os.path.realpath that never raises (returns None on error)."""
    try:
        return os.path.realpath(path)
    except (IOError, OSError, TypeError, ValueError):
        return None


_NATURAL_RE = re.compile(r'(\d+)')


def natural_key(name):
    """Sort key so that nvme2 sorts before nvme10."""
    parts = _NATURAL_RE.split(str(name))
    return [(0, int(p), '') if p.isdigit() else (1, 0, p) for p in parts]


def parse_scheduler(text):
    """Parse /sys/block/<dev>/queue/scheduler.

    "[none] mq-deadline" -> {"active": "none", "available": ["none", "mq-deadline"]}.
    "none" (md / bio-based devices) -> active "none", available ["none"].
    An empty file or None -> active None, available [].
    """
    result = {'active': None, 'available': []}
    if not text:
        return result
    for token in text.split():
        if token.startswith('[') and token.endswith(']'):
            name = token[1:-1]
            result['active'] = name
        else:
            name = token
        if name and name not in result['available']:
            result['available'].append(name)
    if result['active'] is None and len(result['available']) == 1:
        result['active'] = result['available'][0]
    return result


def read_scheduler(path):
    return parse_scheduler(read_str(path))


def expand_cpulist(text):
    """Expand a kernel cpulist ("0-3,8,10-11", "0-7:2") into a sorted list of ints.

    Returns [] for empty input and None when the text is not a cpulist.
    """
    if text is None:
        return None
    text = text.strip()
    if not text:
        return []
    cpus = set()
    for chunk in text.split(','):
        chunk = chunk.strip()
        if not chunk:
            continue
        stride = 1
        if ':' in chunk:
            chunk, _sep, stride_text = chunk.partition(':')
            stride_text = stride_text.split('/')[0]
            stride = to_int(stride_text, base=10)
            if not stride or stride < 1:
                return None
        if '-' in chunk:
            low, _sep, high = chunk.partition('-')
            low = to_int(low, base=10)
            high = to_int(high, base=10)
            if low is None or high is None or high < low:
                return None
            cpus.update(range(low, high + 1, stride))
        else:
            cpu = to_int(chunk, base=10)
            if cpu is None:
                return None
            cpus.add(cpu)
    return sorted(cpus)


def read_kv_file(path, sep=None):
    """Read "key value" or "key: value" lines into a dict of strings."""
    result = {}
    for line in read_lines(path):
        if sep is None:
            if ':' in line:
                key, _s, value = line.partition(':')
            else:
                parts = line.split(None, 1)
                if not parts:
                    continue
                key = parts[0]
                value = parts[1] if len(parts) > 1 else ''
        else:
            key, _s, value = line.partition(sep)
        key = key.strip()
        if key:
            result[key] = value.strip()
    return result


def unescape_mount_field(field):
    r"""Undo the octal escapes of /proc/self/mounts ("\040" -> " ")."""
    if '\\' not in field:
        return field
    return re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)), field)


def join_root(root, path):
    """Join an absolute system path under a test root: join_root('/tmp/x', '/dev/sda')."""
    if not root or root == '/':
        return path
    return os.path.join(root, path.lstrip('/'))


def block_stat(sysfs_root, name):
    """{sectors_written, write_ios, write_ticks_ms, inflight_writes} of block device ``name``
    (``/sys/class/block/<name>/stat`` and ``inflight``, Documentation/block/stat.rst); None where unreadable."""
    fields = (read_str(os.path.join(sysfs_root, 'class', 'block', name, 'stat')) or '').split()
    inflight = (read_str(os.path.join(sysfs_root, 'class', 'block', name, 'inflight')) or '').split()

    def field(values, index):
        try:
            return int(values[index])
        except (IndexError, ValueError):
            return None
    return {'write_ios': field(fields, 4), 'sectors_written': field(fields, 6), 'write_ticks_ms': field(fields, 7),
            'inflight_writes': field(inflight, 1)}
