# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: one node's facts to a report record (fleet_node.py), the fleet's summary, and the documents,
streamed one node at a time so that the memory is bounded by a node, not by the fleet.

A node's input is the document ansible's jsonfile fact cache holds for the host (or the same written from live facts
by the fleet_report role): ``checkpoint_io`` (or ``ansible_checkpoint_io``), the collection's facts; optionally
``checkpoint_io_plan``, ``checkpoint_io_data_drives``, ``checkpoint_io_verify`` (the verification's report),
``fleet_report_targets`` (the host's own targets) and ``checkpoint_io_compression`` (compression_readiness.yml's
result). The records of the state store in the facts' ``state`` section give the depth sweep, the thermal series and
the baseline.

The build reads and decodes each node's document once (in worker processes where a cache directory is read: the
build is CPU-bound), writes what does not depend on the other nodes as it goes and keeps per node only a few numbers
(its bandwidth, data drives, status, counts: arrays of a few bytes a node); the peers' medians, the outliers, the
worst nodes and the drift groups come from those, and a second streaming pass over a temporary file of the node
lines writes the rest. Documents (docs/fleet_report_schema.md, SCHEMA_VERSION 2): ``<name>.json`` the summary (fleet,
plan, changes, drift groups, worst nodes), ``<name>_nodes.jsonl.xz`` one JSON object per node, ``<name>_nodes.csv.gz``
one row per node, ``<name>.html`` the page (the summary, a node found by name) and ``<name>_data.js`` the page's node
details, deflated in chunks and decoded in the browser only when a node of the chunk is opened.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import array
import csv
import gc
import gzip
import heapq
import io
import json
import math
import multiprocessing
import os
import tempfile
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import repeats
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import atomic_output
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet.fleet_files import (
    CacheSource,
    PreviousReport,
    XzWriter,
    cache_entries,
    csv_row,
    deflate,
    pack_chunk,
    read_cache_file,
    side_document,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet.fleet_node import (
    ROW_KEYS,
    SEVERITIES,
    _dict,
    _finding,
    node_record,
)

SCHEMA = 'ai_storage.checkpoint_io.fleet_report'
SCHEMA_VERSION = 2
CHUNK = 500                 # nodes per compressed chunk of the page's data file
WORST = 50                  # the worst nodes listed in the summary and on the page
DRIFT_GROUPS = 100          # drift groups listed (the largest); signatures counted: at most DRIFT_SIGNATURES
DRIFT_SIGNATURES = 2000     # distinct drift signatures counted one by one; more are counted as one "other" group
NAMES_LISTED = 1000         # new and gone nodes named in the changes since a previous report (all are counted)
STATUSES = ('error', 'missing', 'stale', 'warning', 'drift', 'ok')   # worst first
NODE_CSV = ROW_KEYS
NAN = float('nan')


def median(values):
    """The median of the measured values (None and NaN left out; None when there is none): repeats.median's."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    return repeats.median(values) if values else None


def histogram(values, bins=10):
    """[[low, high, count], ...] of the values (None and NaN left out; empty without any)."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return []
    low, high = min(values), max(values)
    if high == low:
        return [[low, high, len(values)]]
    width = (high - low) / float(bins)
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - low) / width))] += 1
    return [[round(low + i * width, 3), round(low + (i + 1) * width, 3), c] for i, c in enumerate(counts)]


def fleet_plan(plan_args, ceilings, latencies, slowest_before, slowest_after):
    """The planner over the fleet's measurements: the median sweep ceiling and latency, the slowest node now and
    tuned (GiB/s). None without plan arguments; {error} when the planner refuses them."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import planner
    args = dict(_dict(plan_args))
    if not args.get('checkpoint'):
        return None
    for key, values in (('drive_mib_s', ceilings), ('latency_ms', latencies)):
        value = median(values)
        args.setdefault(key, None if value is None else round(value, 3))   # the build keeps them as 32-bit floats
    if slowest_before is not None:
        args.setdefault('now_mib_s', slowest_before * 1024)
    if slowest_after is not None:
        args.setdefault('tuned_mib_s', slowest_after * 1024)
    if args.get('drive_mib_s') is None or args.get('latency_ms') is None:
        return {'error': 'no depth sweep in the facts: give drive_mib_s and latency_ms'}
    checkpoint = args.pop('checkpoint')
    try:
        result = planner.plan(checkpoint, **args)
    except (ValueError, TypeError) as exc:
        return {'error': str(exc)}
    result['line'] = planner.plan_line(result)
    return result


def _compact(value):
    return json.dumps(value, separators=(',', ':'), sort_keys=True, allow_nan=False)


# a node's parts: their keys already in a fixed order (no sorting: a fifth of a node's cost)
_encode = json.JSONEncoder(separators=(',', ':'), allow_nan=False).encode


def _script_json(value):
    """JSON safe inside a <script> element (no '</', no '<!--', no U+2028/9 surprises)."""
    return (value.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')
            .replace(u'\u2028', '\\u2028').replace(u'\u2029', '\\u2029'))


def detail_of(record):
    """What the page loads when a node opens: compact arrays (each drive's fields in the page's column order,
    drift, findings, the depth curve, the thermal series as the record has it)."""
    return {'d': [[d['name'], d['serial'], d['model'], d['size_bytes'], d['os_drive'], d['temp_c'], d['wctemp_c'],
                   d['throttled'], d['scheduler'], d['nr_requests'], d['read_ahead_kb'], d['max_sectors_kb'],
                   d['nomerges'], d['rq_affinity'], d['io_queues'], d['link'], d['drift']] for d in record['drives']],
            'x': [[x['layer'], x['item'], x['setting'], x['found'], x['target']] for x in record['drift']],
            'f': [[f['severity'], f['device'], f['message'], f['fix']] for f in record['findings']],
            'c': record['curve'], 't': record['thermal']}


def drift_signature(drift):
    """What a node's drift is, for grouping nodes that drifted the same way: the sorted distinct (layer, setting,
    found, target) of its drifted settings (the drive or file names left out)."""
    return sorted(set((str(x['layer']), str(x['setting']), str(x['found']), str(x['target'])) for x in drift))


def failed_record(host, exc):
    """The record of a node whose document cannot be reported (a list where a name was expected, a number no
    float holds): the node is named, with what went wrong, and the report goes on with the others."""
    row = dict((key, None) for key in ROW_KEYS)
    row.update({'host': str(host), 'status': 'error', 'errors': 1, 'warnings': 0, 'infos': 0, 'drifted': 0,
                'data_drives': 0, 'throttled': 0, 'outlier': False})
    finding = _finding('error', None, 'the facts of %s cannot be reported (%s: %s)' % (
        host, type(exc).__name__, str(exc)[:200]), 'gather the host again; if it persists, its facts are malformed')
    return {'row': row, 'drives': [], 'drift': [], 'findings': [finding], 'curve': [], 'thermal': {}}


def _record(host, doc, targets, now, stale_hours, verify_dir, compression_dir, run_dir=None):
    """node_record() of one (host, document), with the documents beside the facts and an unreadable cache file
    reported as the node's error."""
    verify = side_document(verify_dir, host)
    run = side_document(run_dir, host)
    compression = side_document(compression_dir, host)
    if compression is not None and isinstance(doc, dict) and not doc.get('checkpoint_io_compression'):
        doc = dict(doc, checkpoint_io_compression=compression)
    record = node_record(host, doc, targets, now, stale_hours, verify, run)
    if isinstance(doc, dict) and doc.get('__unreadable__'):
        why = (': %s' % doc['__why__']) if doc.get('__why__') else ''
        record['findings'].insert(0, _finding('error', None, 'cache file %s is not JSON%s' % (
            doc['__unreadable__'], why), 'gather the host again'))
        record['row']['errors'] += 1
        record['row']['status'] = 'error'
    return record


# ------------------------------------------------------------------------------------------ one node, anywhere
def node_parts(host, doc, ctx):
    """One node as the build's first pass keeps it: a line of the temporary file (the row as a list in ROW_KEYS
    order, the drift signature, the node's JSON Lines object without its row; tab-separated: compact JSON holds no
    tab) and its entry of the page's data (the row list, detail_of). A document that breaks the reader (or holds a
    number JSON cannot write) fails only its node."""
    try:
        return _parts(_record(host, doc, ctx['targets'], ctx['now'], ctx['stale_hours'], ctx['verify_dir'],
                              ctx['compression_dir'], ctx.get('run_dir')))
    except Exception as exc:  # pylint: disable=broad-except
        # a node's document is data the node controls: one that breaks the reader fails that node
        return _parts(failed_record(host, exc))


def _parts(record):
    row = record['row']
    rest = {'drives': record['drives'], 'drift': record['drift'], 'findings': record['findings'],
            'curve': record['curve'], 'thermal': record['thermal']}
    row_list = [row[k] for k in ROW_KEYS]
    detail = detail_of(record)
    # encoding raises here, inside the node's try, for what JSON cannot write (a NaN): the detail holds only what
    # the row and the rest hold, so the chunk that carries it encodes
    line = '\t'.join((_encode(row_list), _encode(drift_signature(record['drift'])), _encode(rest))) + '\n'
    return line, (row_list, detail)


def batch_parts(nodes, ctx):
    """A chunk's worth of (host, document): its temporary lines, and its chunk of the page's data file packed and
    deflated (the rows as found: the outliers, known only once every node is read, are patched by the page)."""
    lines, entries = [], []
    for host, doc in nodes:
        line, entry = node_parts(host, doc, ctx)
        lines.append(line)
        entries.append(entry)
    return lines, deflate(_encode(pack_chunk(entries)))


_WORKER = {}


def _worker_init(ctx):
    # a worker's objects are decoded JSON and the rows made of it: no cycles, freed as each node is done; the
    # collector's full passes over them cost a worker time for nothing at the default thresholds
    gc.set_threshold(50000, 20, 20)
    _WORKER.clear()
    _WORKER.update(ctx)


def _worker_batch(batch):
    """A worker process's task: batch_parts of a chunk of (host, cache file name)."""
    return batch_parts(((host, read_cache_file(os.path.join(_WORKER['cache_dir'], name), name))
                        for host, name in batch), _WORKER)


def _batches(entries, size):
    batch = []
    for entry in entries:
        batch.append(entry)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _node_batches(nodes, ctx, workers):
    """batch_parts of each chunk of CHUNK nodes, in input order: worker processes over a CacheSource of more than a
    chunk where more than one worker is asked for, else this process."""
    # worker processes for more than a chunk only: a small fleet is read faster than a pool starts
    if isinstance(nodes, CacheSource) and workers > 1 and len(os.listdir(nodes.cache_dir)) > CHUNK:
        pool = multiprocessing.get_context('fork').Pool(workers, _worker_init, (dict(ctx, cache_dir=nodes.cache_dir),))
        try:
            yield from pool.imap(_worker_batch, _batches(cache_entries(nodes.cache_dir, nodes.prefix), CHUNK))
        finally:
            pool.terminate()
            pool.join()
        return
    for batch in _batches(nodes, CHUNK):
        yield batch_parts(batch, ctx)


# ------------------------------------------------------------------------------------------------ the fleet
class _Fleet(object):
    """What the build keeps per node between its passes: a few numbers in arrays (no dict, no string per node)."""

    def __init__(self):
        self.bw = array.array('d')          # after tuning, else before (NaN: not measured)
        self.drives = array.array('H')      # data drives
        self.status = bytearray()           # STATUSES index
        self.temp = array.array('f')        # for the histogram and the plan's medians: a float's 7 digits are plenty
        self.ceiling = array.array('f')
        self.latency = array.array('f')
        self.slowest = [None, None]         # the lowest bw_before, bw_after
        self.drift_groups = {}              # signature (JSON) -> [nodes, drifted settings, first hosts]
        self.drift_other = 0
        self.sorted = True
        self.first_hosts = []               # per chunk: its first host
        self.last_host = None

    def add(self, index, row, signature_json):
        get = dict(zip(ROW_KEYS, row)).get
        bw = get('bw_after') if get('bw_after') is not None else get('bw_before')
        self.bw.append(NAN if bw is None else float(bw))
        self.drives.append(min(65535, int(get('data_drives') or 0)))
        self.status.append(STATUSES.index(get('status')) if get('status') in STATUSES else 0)
        for values, key in ((self.temp, 'temp_max_c'), (self.ceiling, 'sweep_ceiling_mib_s'),
                            (self.latency, 'latency_ms')):
            values.append(NAN if get(key) is None else float(get(key)))
        for i, key in enumerate(('bw_before', 'bw_after')):
            value = get(key)
            if value and (self.slowest[i] is None or value < self.slowest[i]):
                self.slowest[i] = value
        host = get('host')
        if index % CHUNK == 0:
            self.first_hosts.append(host)
        if self.last_host is not None and host < self.last_host:
            self.sorted = False
        self.last_host = host
        if get('drifted'):
            group = self.drift_groups.get(signature_json)
            if group is None and len(self.drift_groups) >= DRIFT_SIGNATURES:
                self.drift_other += 1
            elif group is None:
                self.drift_groups[signature_json] = [1, get('drifted'), [host]]
            else:
                group[0] += 1
                group[1] += get('drifted')
                if len(group[2]) < 5:
                    group[2].append(host)

    def outliers(self, fraction):
        """A bytearray: 1 where the node's bandwidth is below ``fraction`` of the median of its peers (the nodes
        with as many data drives: a 4-drive node is not slow next to 8-drive nodes)."""
        peers = {}
        for drives, value in zip(self.drives, self.bw):
            if not math.isnan(value):
                peers.setdefault(drives, array.array('d')).append(value)
        reference = dict((drives, median(values)) for drives, values in peers.items())
        del peers
        flags = bytearray(len(self.bw))
        for i, (drives, value) in enumerate(zip(self.drives, self.bw)):
            ref = reference.get(drives)
            if ref and not math.isnan(value) and value < fraction * ref:
                flags[i] = 1
        return flags

    def groups(self):
        ranked = sorted(self.drift_groups.items(), key=lambda item: (-item[1][0], item[0]))[:DRIFT_GROUPS]
        out = [{'settings': [dict(zip(('layer', 'setting', 'found', 'target'), s)) for s in json.loads(sig)],
                'nodes': count, 'drifted_settings': drifted, 'hosts': hosts} for sig, (count, drifted, hosts) in ranked]
        return {'groups': out, 'signatures': len(self.drift_groups), 'other_nodes': self.drift_other}


def mark_outlier(row):
    """A row found below its peers: flagged, one warning more, ok or drift become warning (the page's
    fleetOutliers does the same to the rows of its chunks)."""
    row['outlier'] = True
    row['warnings'] += 1
    if row['status'] in ('ok', 'drift'):
        row['status'] = 'warning'


def _rank(row):
    """The worst first: errors, warnings, drifted settings (more is worse), then the lower bandwidth, the name."""
    return (-row['errors'], -row['warnings'], -row['drifted'], row['bw_after'] or 0, row['host'])


class _Worst(object):
    """The WORST worst rows, kept in a heap of WORST entries while the rows stream by."""

    def __init__(self):
        self.heap = []
        self.count = 0

    def add(self, row):
        if not (row['errors'] or row['warnings'] or row['drifted']):
            return
        self.count += 1
        key = _Inverted(_rank(row))
        if len(self.heap) < WORST:
            heapq.heappush(self.heap, (key, self.count, row))
        elif key > self.heap[0][0]:
            heapq.heapreplace(self.heap, (key, self.count, row))

    def rows(self):
        return [row for _key, _n, row in sorted(self.heap, key=lambda item: _rank(item[2]))]


class _Inverted(object):
    """A key whose order is the reverse of the wrapped one's (a min-heap that keeps the smallest ranks)."""
    __slots__ = ('key',)

    def __init__(self, key):
        self.key = key

    def __lt__(self, other):
        return self.key > other.key

    def __gt__(self, other):
        return self.key < other.key


def read_previous(path):
    """A previous report (its summary JSON, its nodes' JSON Lines beside it; or a schema 1 report's JSON) as a
    PreviousReport, or None where there is none."""
    if not path or not os.path.isfile(path):
        return None
    return PreviousReport(path)


class _Changes(object):
    """What changed since a previous report, compared node by node as the rows stream by: where both reports'
    hosts ascend (every report built from a fact cache), the previous report's lines are read alongside (a merge:
    memory does not grow with the fleet); else its nodes are held as {host: (status, drifted)}."""

    def __init__(self, previous, in_order):
        self.previous = previous
        self.new, self.changed, self.gone, self.new_count, self.gone_count = [], [], [], 0, 0
        self.merge = bool(previous) and previous.in_order and in_order
        self.pending = self.last = self.stream = None
        if not previous:
            return
        if self.merge:
            self.stream = iter(previous)
            self._advance()
        else:
            self.held = dict((host, (status, drifted)) for host, status, drifted in previous)

    def _advance(self):
        before = self.pending
        self.pending = next(self.stream, None)
        if before is not None and self.pending is not None and not before[0] < self.pending[0]:
            raise ValueError('the previous report\'s nodes are not in host order (%r after %r): build it again' % (
                self.pending[0], before[0]))

    def _gone(self, host):
        self.gone_count += 1
        if len(self.gone) < NAMES_LISTED:
            self.gone.append(host)

    def _before(self, host):
        if not self.merge:
            before = self.held.pop(host, None)
            if before is None and self.last is not None and self.last[0] == host:
                before = self.last[1]
            if before is not None:
                self.last = (host, before)
            return before
        if self.last is not None and self.last[0] == host:   # a host twice in this build: compared again
            return self.last[1]
        while self.pending is not None and self.pending[0] < host:
            self._gone(self.pending[0])
            self._advance()
        if self.pending is None or self.pending[0] != host:
            return None
        self.last = (host, self.pending[1:])
        self._advance()
        return self.last[1]

    def add(self, row):
        if not self.previous:
            return
        host = row['host']
        before = self._before(host)
        if before is None:
            self.new_count += 1
            if len(self.new) < NAMES_LISTED:
                self.new.append(host)
            return
        if (before[0] != row['status'] or before[1] != row['drifted']) and len(self.changed) < NAMES_LISTED:
            self.changed.append({'host': host, 'status_before': before[0], 'status': row['status'],
                                 'drifted_before': before[1], 'drifted': row['drifted']})

    def result(self):
        if not self.previous:
            return None
        if self.merge:
            while self.pending is not None:
                self._gone(self.pending[0])
                self._advance()
        else:
            for host in sorted(self.held):
                self._gone(host)
        return {'previous_generated_at': self.previous.generated_at, 'new_nodes': sorted(self.new),
                'new_count': self.new_count, 'gone_nodes': self.gone, 'gone_count': self.gone_count,
                'changed': self.changed}


def paths_of(out_dir, name='fleet_report'):
    return dict((k, os.path.join(out_dir, name + suffix)) for k, suffix in (
        ('html', '.html'), ('data', '_data.js'), ('json', '.json'), ('nodes', '_nodes.jsonl.xz'),
        ('nodes_csv', '_nodes.csv.gz')))


def build(nodes, out_dir, name='fleet_report', targets=None, plan_args=None, previous=None, stale_hours=24.0,
          outlier_fraction=0.8, verify_dir=None, now=None, title='Checkpoint I/O fleet report', source=None,
          compression_dir=None, workers=1, run_dir=None):
    """Write the report's files (paths_of) under ``out_dir`` from ``nodes``: an iterable of (host, document), or a
    CacheSource, whose files ``workers`` processes read and decode. ``previous``: read_previous()'s result.
    Returns {paths, overview, plan, changes, drift, worst, summary (lines), nodes, html_bytes}."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report_html
    now = now or time.time()
    paths = paths_of(out_dir, name)
    ctx = {'targets': targets, 'now': now, 'stale_hours': stale_hours, 'verify_dir': verify_dir,
           'compression_dir': compression_dir, 'run_dir': run_dir}
    fleet = _Fleet()
    # every file through atomic_output (a new file with a random name, O_EXCL, renamed over the report's name):
    # nothing is opened through a name that exists, so a link planted in out_dir is replaced, never followed
    with tempfile.TemporaryFile('w+', encoding='utf-8', dir=out_dir) as lines, \
            atomic_output(paths['data']) as data_file:
        data_file.write('/* %s: node details, %d a chunk, column by column, raw DEFLATE + base64 */\n' % (
            SCHEMA, CHUNK))
        count = 0
        for number, (batch, chunk) in enumerate(_node_batches(nodes, ctx, workers)):
            data_file.write('fleetChunk(%d,"%s");\n' % (number, chunk))
            for line in batch:
                lines.write(line)
                row_json, signature, _rest = line.split('\t', 2)
                fleet.add(count, json.loads(row_json), signature)
                count += 1
        outliers = fleet.outliers(outlier_fraction)
        # the rows in the chunks are as found; the page marks these (their index in the report) as outliers
        data_file.write('fleetOutliers(%s);\n' % _compact([i for i, flag in enumerate(outliers) if flag]))
        lines.seek(0)
        totals = {'status': dict((s, 0) for s in STATUSES), 'findings': dict((s, 0) for s in SEVERITIES),
                  'drives': 0, 'drift_nodes': 0, 'throttled_drives': 0, 'gds_paths': {}, 'outliers': 0,
                  'run_written_gib': 0.0, 'run_nodes': 0, 'run_rated_share_max': None, 'reused_nodes': 0}
        worst, delta = _Worst(), _Changes(previous, fleet.sorted)
        with atomic_output(paths['nodes'], binary=True) as nodes_file, \
                atomic_output(paths['nodes_csv'], binary=True) as csv_file:
            # xz: its window spans many nodes (three quarters of gzip's size here); xzcat, Python's lzma, pandas
            jsonl = XzWriter(nodes_file)
            try:
                csv_gz = gzip.GzipFile(fileobj=csv_file, mode='wb', compresslevel=6, mtime=0)
                csv_text = io.TextIOWrapper(csv_gz, encoding='utf-8', newline='')
                writer = csv.writer(csv_text)
                writer.writerow(NODE_CSV)
                for i, line in enumerate(lines):
                    row_json, _signature, rest = line.rstrip('\n').split('\t')
                    row = dict(zip(ROW_KEYS, json.loads(row_json)))
                    if outliers[i]:
                        mark_outlier(row)
                        totals['outliers'] += 1
                    totals['status'][row['status']] = totals['status'].get(row['status'], 0) + 1
                    for severity in SEVERITIES:
                        totals['findings'][severity] += row[severity + 's'] or 0
                    totals['drives'] += row['data_drives'] or 0
                    totals['drift_nodes'] += 1 if row['drifted'] else 0
                    totals['throttled_drives'] += row['throttled'] or 0
                    if row['run_written_gib'] is not None:
                        totals['run_nodes'] += 1
                        totals['run_written_gib'] += row['run_written_gib']
                    if row['run_rated_share'] is not None and (totals['run_rated_share_max'] is None or
                                                               row['run_rated_share'] > totals['run_rated_share_max']):
                        totals['run_rated_share_max'] = row['run_rated_share']
                    totals['reused_nodes'] += 1 if row['reused'] else 0
                    gds = str(row['gds'] or 'unknown')
                    totals['gds_paths'][gds] = totals['gds_paths'].get(gds, 0) + 1
                    worst.add(row)
                    delta.add(row)
                    text = _compact(row)
                    jsonl.write(text[:-1] + ',' + rest[1:] + '\n')
                    writer.writerow(csv_row([row.get(k) for k in NODE_CSV]))
                csv_text.flush()
                csv_text.detach()
                csv_gz.close()
                jsonl.close()
            finally:
                jsonl.stop()   # the thread ended whatever happened
    overview = {
        'nodes': count, 'drives': totals['drives'], 'gds_paths': totals['gds_paths'],
        'status': dict((k, v) for k, v in totals['status'].items() if v), 'findings': totals['findings'],
        'drift_nodes': totals['drift_nodes'], 'bandwidth_median_gib_s': median(fleet.bw),
        'bandwidth_histogram': histogram(fleet.bw), 'temperature_histogram': histogram(fleet.temp),
        'outlier_fraction': outlier_fraction, 'outliers': totals['outliers'],
        'throttled_drives': totals['throttled_drives'],
        'run_writes': {'nodes': totals['run_nodes'], 'written_gib': round(totals['run_written_gib'], 3),
                       'rated_share_max': totals['run_rated_share_max'], 'reused_nodes': totals['reused_nodes']}}
    plan = fleet_plan(plan_args, fleet.ceiling, fleet.latency, fleet.slowest[0], fleet.slowest[1])
    changes = delta.result()
    drift = fleet.groups()
    worst_rows = worst.rows()
    summary = {'schema': SCHEMA, 'schema_version': SCHEMA_VERSION, 'title': title,
               'generated_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)), 'source': source,
               'files': dict((k, os.path.basename(v)) for k, v in paths.items() if k != 'json'),
               'row_keys': list(ROW_KEYS), 'fleet': overview, 'plan': plan, 'changes': changes, 'drift': drift,
               'worst': worst_rows, 'worst_count': worst.count, 'hosts_sorted': fleet.sorted}
    with atomic_output(paths['json']) as out:
        out.write(_compact(summary) + '\n')
    page = dict(summary, chunks={'size': CHUNK, 'first': fleet.first_hosts, 'sorted': fleet.sorted,
                                 'file': os.path.basename(paths['data'])})
    with atomic_output(paths['html']) as out:
        out.write(fleet_report_html.render(title, _script_json(_compact(page)), os.path.basename(paths['data'])))
    lines = summary_lines(overview, worst_rows, plan, changes, drift)
    return {'paths': paths, 'overview': overview, 'plan': plan, 'changes': changes, 'drift': drift,
            'worst': worst_rows, 'summary': lines, 'nodes': count, 'html_bytes': os.path.getsize(paths['html'])}


def summary_lines(fleet, worst_rows, plan=None, delta=None, drift=None, worst=5):
    """The console summary: counts, the worst nodes, the largest drift group, the plan's line."""
    lines = ['%d nodes, %d data drives; status: %s' % (fleet['nodes'], fleet['drives'], ', '.join(
        '%s %d' % (k, v) for k, v in sorted(fleet['status'].items()))),
        'findings: %s; drift on %d nodes; %d outliers below %d%% of the median %s GiB/s; %d throttled drives' % (
            ', '.join('%d %s' % (fleet['findings'][s], s) for s in SEVERITIES), fleet['drift_nodes'],
            fleet['outliers'], round(fleet['outlier_fraction'] * 100),
            round(fleet['bandwidth_median_gib_s'], 3) if fleet['bandwidth_median_gib_s'] else 'n/a',
            fleet['throttled_drives']),
        'GDS paths: %s' % ', '.join('%s %d' % kv for kv in sorted(fleet['gds_paths'].items()))]
    runs = fleet.get('run_writes') or {}
    if runs.get('nodes'):
        lines.append('the last runs wrote %.1f GiB to the data drives of %d nodes%s; %d nodes reused measurements' % (
            runs['written_gib'], runs['nodes'],
            (', at most %.3g%% of a drive\'s rated endurance' % (runs['rated_share_max'] * 100))
            if runs.get('rated_share_max') is not None else ' (no endurance rating given)', runs['reused_nodes']))
    for r in worst_rows[:worst]:
        lines.append('worst: %s %s (%d errors, %d warnings, %d drifted settings%s)' % (
            r['host'], r['status'], r['errors'], r['warnings'], r['drifted'],
            (', %s GiB/s' % r['bw_after']) if r['bw_after'] is not None else ''))
    if drift and drift['groups']:
        group = drift['groups'][0]
        lines.append('drift: %d groups; the largest, %d nodes: %s' % (drift['signatures'], group['nodes'], '; '.join(
            '%s %s %s -> %s' % (s['layer'], s['setting'], s['found'], s['target']) for s in group['settings'][:3])))
    if plan:
        lines.append('plan: %s' % (plan.get('line') or plan.get('error')))
    if delta:
        lines.append('since %s: %d new, %d gone, %d changed' % (delta['previous_generated_at'], delta['new_count'],
                                                                delta['gone_count'], len(delta['changed'])))
    return lines
