# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's files apart from its logic: a jsonfile fact cache read (its hosts in order, one document at a
time, strictly decoded), the documents beside it, the CSV cell every CSV of the collection writes, the page's data
chunks (packed column by column, deflated) and the JSON Lines' xz stream written from a thread of its own. Used by
fleet_report.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import lzma
import os
import queue
import re
import threading
import zlib

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import loads_finite

CONTROL_RE = re.compile(r'[\x00-\x1f\x7f-\x9f\u2028\u2029]')  # no line break or control character in a CSV cell
FORMULA_LEADS = ('=', '+', '-', '@')  # a spreadsheet reads a cell starting so as a formula (OWASP: CSV injection)


def cache_entries(cache_dir, prefix=''):
    """(host, file name) of every host of a jsonfile fact cache (2.19's s1_<host> files, or the older plain <host>
    files; where a host has both, the first in name order), in host order. Only the names are held, once sorted as
    one string (a few bytes a host, not a string object each)."""
    cut = len(prefix)

    def host_of(name):
        host = name[cut:]
        return host[3:] if host.startswith('s1_') else host
    names = [name for name in os.listdir(cache_dir) if not name.startswith('.') and name.startswith(prefix)
             and '\n' not in name]
    names.sort()
    if any(not name.startswith(prefix + 's1_') for name in names) and any(
            name.startswith(prefix + 's1_') for name in names):
        names.sort(key=host_of)   # both layouts: host order (stable: the name order within a host)
    listing = '\n'.join(names)
    del names
    last, at = None, 0
    while at < len(listing):
        end = listing.find('\n', at)
        end = len(listing) if end < 0 else end
        name, at = listing[at:end], end + 1
        host = host_of(name)
        if host == last or not os.path.isfile(os.path.join(cache_dir, name)):
            continue
        last = host
        yield host, name


def read_cache_file(path, name):
    """The document of one cache file (its __payload__ where it has one), or {__unreadable__, __why__}."""
    with open(path, 'rb') as handle:
        try:
            doc = loads_finite(handle.read().decode('utf-8'))
        except ValueError as exc:
            return {'__unreadable__': name, '__why__': str(exc)}
    if isinstance(doc, dict) and '__payload__' in doc:
        payload = doc['__payload__']
        try:
            doc = loads_finite(payload) if isinstance(payload, str) else payload
        except ValueError as exc:
            doc = {'__unreadable__': name, '__why__': str(exc)}
    return doc


def iter_cache(cache_dir, prefix=''):
    """(host, document) of every host of a jsonfile fact cache, in host order, one file in memory at a time."""
    for host, name in cache_entries(cache_dir, prefix):
        yield host, read_cache_file(os.path.join(cache_dir, name), name)


class CacheSource(object):
    """A jsonfile fact cache directory as the build's input: its files are read and decoded by worker processes."""

    def __init__(self, cache_dir, prefix=''):
        self.cache_dir = cache_dir
        self.prefix = prefix

    def __iter__(self):
        return iter_cache(self.cache_dir, self.prefix)


class PreviousReport(object):
    """A previous report's nodes, read one line at a time as (host, status, drifted), in the order it wrote them.
    ``in_order``: its hosts are known to ascend (a schema 2 report that says so, or a schema 1 report's nodes,
    sorted here), so a build whose hosts ascend too compares with it node by node, holding none of it. ValueError
    for what is not a report."""

    def __init__(self, path):
        with open(path, encoding='utf-8') as handle:
            summary = json.load(handle)
        if not isinstance(summary, dict):
            raise ValueError('not a JSON object')
        self.generated_at = summary.get('generated_at')
        self.lines, self.nodes = None, None
        if isinstance(summary.get('nodes'), list):          # schema 1: the nodes inside
            self.nodes = sorted((str(node.get('host')), node.get('status'), node.get('drifted'))
                                for node in summary['nodes'] if isinstance(node, dict))
            self.in_order = True
            return
        files = summary.get('files') if isinstance(summary.get('files'), dict) else {}
        self.lines = os.path.join(os.path.dirname(path), str(files.get('nodes') or ''))
        if not os.path.isfile(self.lines):
            raise ValueError('its nodes file %s is not there' % self.lines)
        self.in_order = summary.get('hosts_sorted') is True

    def __iter__(self):
        if self.nodes is not None:
            yield from self.nodes
            return
        try:
            with lzma.open(self.lines, 'rt', encoding='utf-8') as handle:
                for number, line in enumerate(handle, 1):
                    node = json.loads(line)
                    if not isinstance(node, dict):
                        raise ValueError('line %d is not a JSON object' % number)
                    yield str(node.get('host')), node.get('status'), node.get('drifted')
        except (lzma.LZMAError, EOFError) as exc:
            raise ValueError('the previous report\'s nodes file %s: %s' % (self.lines, exc))


def csv_cell(value):
    """A value as one safe CSV cell (the one escaping helper of every CSV the collection writes): numbers and None
    as they are; text with its line breaks and other control characters made spaces, and a leading = + - @ (a
    formula to a spreadsheet: a node or a drive controls these strings) behind a single quote."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = CONTROL_RE.sub(' ', str(value))
    if text[:1] in FORMULA_LEADS:
        text = "'" + text
    return text


def csv_row(values):
    return [csv_cell(value) for value in values]


def side_document(directory, host):
    """The JSON document ``<directory>/<host>.json`` a playbook wrote on the controller beside the facts (the
    verification's verify/, compression_readiness.yml's compression/); None without a directory, a file or JSON."""
    if not directory:
        return None
    path = os.path.join(directory, '%s.json' % host)
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


class XzWriter(object):
    """Text written as one xz stream to a binary handle, compressed in a thread of its own (LZMA releases the GIL:
    the pass that makes the lines goes on meanwhile, on the other core), 256 KiB at a time, two in the queue."""

    def __init__(self, handle, preset=1):
        self.handle = handle
        self.compressor = lzma.LZMACompressor(format=lzma.FORMAT_XZ, preset=preset)
        self.queue = queue.Queue(maxsize=2)
        self.parts, self.size, self.error = [], 0, None
        self.thread = threading.Thread(target=self._run, name='fleet_report xz')
        self.thread.daemon = True
        self.thread.start()

    def _run(self):
        while True:
            data = self.queue.get()
            if data is None:
                return
            if self.error is None:
                try:
                    self.handle.write(self.compressor.compress(data))
                except Exception as exc:  # pylint: disable=broad-except
                    self.error = exc      # raised by close(); the queue is drained meanwhile

    def write(self, text):
        self.parts.append(text)
        self.size += len(text)
        if self.size >= 1 << 18:
            self.queue.put(''.join(self.parts).encode('utf-8'))
            self.parts, self.size = [], 0

    def close(self):
        """The rest compressed and the stream ended; the thread's error raised here."""
        if self.parts:
            self.queue.put(''.join(self.parts).encode('utf-8'))
            self.parts = []
        self.stop()
        if self.error is not None:
            raise self.error
        self.handle.write(self.compressor.flush())

    def stop(self):
        if self.thread.is_alive():
            self.queue.put(None)
            self.thread.join()


def deflate(text):
    """Raw DEFLATE (the browser's 'deflate-raw'), base64; level 6: level 9 took several times as long for a few
    percent fewer bytes on a fleet's chunks (the bench's bytes per node hold either way)."""
    comp = zlib.compressobj(6, zlib.DEFLATED, -15)
    return base64.b64encode(comp.compress(text.encode('utf-8')) + comp.flush()).decode('ascii')


def pack_chunk(entries):
    """A chunk of the page's data file from [(row list, detail), ...]: column by column (DEFLATE's 32 KiB window
    then sees a column's like values side by side: a quarter smaller than node by node) -
    {r: [the column of each row key], nd: [drives a node], d: [the column of each drive field, all the chunk's
    drives], nc: [curve points a node], c: [depths, MiB/s, ms], x, f, t: [a node's drift, findings, thermal]}."""
    rows = [row for row, _detail in entries]
    details = [detail for _row, detail in entries]
    drives = [drive for detail in details for drive in detail['d']]
    points = [point for detail in details for point in detail['c']]
    return {'r': [list(column) for column in zip(*rows)], 'nd': [len(detail['d']) for detail in details],
            'd': [list(column) for column in zip(*drives)], 'nc': [len(detail['c']) for detail in details],
            'c': [list(column) for column in zip(*points)], 'x': [detail['x'] for detail in details],
            'f': [detail['f'] for detail in details], 't': [detail['t'] for detail in details]}


def unpack_chunk(packed):
    """pack_chunk's inverse (the page's unpack() does the same): [(row list, detail), ...]."""
    out, drive_at, point_at = [], 0, 0
    for i, (drives, points) in enumerate(zip(packed['nd'], packed['nc'])):
        detail = {'d': [[column[drive_at + j] for column in packed['d']] for j in range(drives)],
                  'c': [[column[point_at + j] for column in packed['c']] for j in range(points)],
                  'x': packed['x'][i], 'f': packed['f'][i], 't': packed['t'][i]}
        drive_at += drives
        point_at += points
        out.append(([column[i] for column in packed['r']], detail))
    return out
