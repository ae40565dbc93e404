# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: one node's facts to a report record (fleet_node.py), the fleet's overview, and the documents (HTML, JSON, CSV,
the console summary), streamed one node at a time so the memory stays bounded for any fleet size.

A node's input is the document ansible's jsonfile fact cache holds for the host (or the same written from live facts
by the fleet_report role): ``checkpoint_io`` (or ``ansible_checkpoint_io``), the collection's facts; optionally
``checkpoint_io_verify`` (the verification's report), ``fleet_report_targets`` (the host's own targets) and
``checkpoint_io_compression`` (compression_readiness.yml's result: the best codec's projected ratio). The records
of the state store in the facts' ``state`` section give the depth sweep (``depth_sweep``), the thermal time series
(``thermal_series``) and the baseline.

JSON schema (SCHEMA_VERSION; documented in docs/fleet_report_schema.md): {schema, schema_version, generated_at,
source, fleet: overview, plan, changes, nodes: [node]}; a node is its row (ROW_KEYS) plus ``drives``, ``drift``,
``findings``, ``curve``, ``thermal``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import csv
import io
import json
import os
import re
import tempfile
import time
import zlib

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import repeats
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import atomic_output
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import loads_strict
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet.fleet_node import (
    ROW_KEYS,
    SEVERITIES,
    _dict,
    _finding,
    _list,
    node_record,
)

SCHEMA = 'ai_storage.checkpoint_io.fleet_report'
SCHEMA_VERSION = 1
CHUNK = 200                 # node details per compressed chunk in the page
CONTROL_RE = re.compile(r'[\x00-\x1f\x7f-\x9f\u2028\u2029]')  # no line break or control character in a CSV cell
FORMULA_LEADS = ('=', '+', '-', '@')  # a spreadsheet reads a cell starting so as a formula (OWASP: CSV injection)

NODE_CSV = ROW_KEYS
DRIVE_CSV = ('host', 'name', 'serial', 'model', 'size_bytes', 'os_drive', 'temp_c', 'wctemp_c', 'throttled',
             'critical_warning', 'scheduler', 'nr_requests', 'read_ahead_kb', 'max_sectors_kb', 'nomerges',
             'rq_affinity', 'io_queues', 'link', 'drift')


def median(values):
    """The median of the measured values (None left out; None when there is none): repeats.median's."""
    values = [v for v in values if v is not None]
    return repeats.median(values) if values else None


def histogram(values, bins=10):
    """[[low, high, count], ...] of the values (empty without any)."""
    values = [v for v in values if v is not None]
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


def overview(rows, outlier_fraction):
    """The fleet's overview from the rows (and the rows' outlier flags set): a node is an outlier when its checkpoint
    bandwidth (after tuning, else before) is below ``outlier_fraction`` of the median of its peers, the nodes with as
    many data drives (a 4-drive node is not slow next to 8-drive nodes)."""
    bw = [r['bw_after'] if r['bw_after'] is not None else r['bw_before'] for r in rows]
    med = median(bw)
    peers = {}
    for r, value in zip(rows, bw):
        peers.setdefault(r['data_drives'], []).append(value)
    peer_median = dict((k, median(v)) for k, v in peers.items())
    outliers = []
    for r, value in zip(rows, bw):
        ref = peer_median.get(r['data_drives'])
        if ref and value is not None and value < outlier_fraction * ref:
            r['outlier'] = True
            r['warnings'] += 1
            if r['status'] in ('ok', 'drift'):
                r['status'] = 'warning'
            outliers.append(r['host'])
    statuses = {}
    for r in rows:
        statuses[r['status']] = statuses.get(r['status'], 0) + 1
    return {
        'nodes': len(rows), 'drives': sum(r['data_drives'] for r in rows),
        'gds_paths': _count(r['gds'] or 'unknown' for r in rows),
        'status': statuses,
        'findings': dict((s, sum(r[s + 's'] for r in rows)) for s in SEVERITIES),
        'drift_nodes': sum(1 for r in rows if r['drifted']),
        'bandwidth_median_gib_s': med, 'bandwidth_histogram': histogram(bw),
        'temperature_histogram': histogram([r['temp_max_c'] for r in rows]),
        'outlier_fraction': outlier_fraction, 'outliers': len(outliers),
        'throttled_drives': sum(r['throttled'] for r in rows),
    }


def _count(items):
    out = {}
    for item in items:
        out[str(item)] = out.get(str(item), 0) + 1
    return out


def changes(rows, previous):
    """What changed since a previous report's JSON (its nodes' rows): new and gone nodes, status changes."""
    if not previous:
        return None
    before = dict((n.get('host'), n) for n in _list(_dict(previous).get('nodes')) if isinstance(n, dict))
    now = dict((r['host'], r) for r in rows)
    status = []
    for host in sorted(set(before) & set(now)):
        if before[host].get('status') != now[host]['status'] or before[host].get('drifted') != now[host]['drifted']:
            status.append({'host': host, 'status_before': before[host].get('status'), 'status': now[host]['status'],
                           'drifted_before': before[host].get('drifted'), 'drifted': now[host]['drifted']})
    return {'previous_generated_at': _dict(previous).get('generated_at'), 'new_nodes': sorted(set(now) - set(before)),
            'gone_nodes': sorted(set(before) - set(now)), 'changed': status}


def fleet_plan(rows, plan_args):
    """The planner over the fleet's measurements: the median sweep ceiling and latency, the slowest node now and
    tuned. None without plan arguments or measurements; {error} when the planner refuses them."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import planner
    args = dict(_dict(plan_args))
    if not args.get('checkpoint'):
        return None
    args.setdefault('drive_mib_s', median([r['sweep_ceiling_mib_s'] for r in rows]))
    args.setdefault('latency_ms', median([r['latency_ms'] for r in rows]))
    before = [r['bw_before'] for r in rows if r['bw_before']]
    after = [r['bw_after'] for r in rows if r['bw_after']]
    if before:
        args.setdefault('now_mib_s', min(before) * 1024)
    if after:
        args.setdefault('tuned_mib_s', min(after) * 1024)
    if args.get('drive_mib_s') is None or args.get('latency_ms') is None:
        return {'error': 'no depth sweep in the facts: give drive_mib_s and latency_ms'}
    checkpoint = args.pop('checkpoint')
    try:
        result = planner.plan(checkpoint, **args)
    except (ValueError, TypeError) as exc:
        return {'error': str(exc)}
    result['line'] = planner.plan_line(result)
    return result


# ---------------------------------------------------------------------------------------------------------- docs
def _compact(value):
    return json.dumps(value, separators=(',', ':'), sort_keys=True, allow_nan=False)


def _script_json(value):
    """JSON safe inside a <script> element (no '</', no '<!--', no U+2028/9 surprises)."""
    return (value.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')
            .replace(u'\u2028', '\\u2028').replace(u'\u2029', '\\u2029'))


def detail_of(record):
    """What the page loads when a node opens: compact arrays."""
    return {'d': [[d['name'], d['serial'], d['model'], d['size_bytes'], d['os_drive'], d['temp_c'], d['wctemp_c'],
                   d['throttled'], d['scheduler'], d['nr_requests'], d['read_ahead_kb'], d['max_sectors_kb'],
                   d['nomerges'], d['rq_affinity'], d['io_queues'], d['link'], d['drift']] for d in record['drives']],
            'x': [[x['layer'], x['item'], x['setting'], x['found'], x['target']] for x in record['drift']],
            'f': [[f['severity'], f['device'], f['message'], f['fix']] for f in record['findings']],
            'c': record['curve'], 't': record['thermal']}


def iter_cache(cache_dir, prefix=''):
    """(host, document) of every host of a jsonfile fact cache (2.19's s1_<host> files with a __payload__, or the
    older plain <host> files), in name order, one file in memory at a time."""
    names = sorted(os.listdir(cache_dir))
    seen = set()
    for name in names:
        if name.startswith('.') or not name.startswith(prefix):
            continue
        path = os.path.join(cache_dir, name)
        if not os.path.isfile(path):
            continue
        host = name[len(prefix):]
        if host.startswith('s1_'):
            host = host[3:]
        if host in seen:
            continue
        seen.add(host)
        with open(path, 'rb') as handle:
            try:
                doc = loads_strict(handle.read().decode('utf-8'))
            except ValueError as exc:
                yield host, {'__unreadable__': name, '__why__': str(exc)}
                continue
        if isinstance(doc, dict) and '__payload__' in doc:
            payload = doc['__payload__']
            try:
                doc = loads_strict(payload) if isinstance(payload, str) else payload
            except ValueError as exc:
                doc = {'__unreadable__': name, '__why__': str(exc)}
        yield host, doc


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


def failed_record(host, exc):
    """The record of a node whose document cannot be reported (a list where a name was expected, a number no
    float holds): the node is named, with what went wrong, and the report goes on with the others."""
    row = dict((key, None) for key in ROW_KEYS)
    row.update({'host': str(host), 'status': 'error', 'errors': 1, 'warnings': 0, 'infos': 0, 'drifted': 0,
                'data_drives': 0, 'throttled': 0, 'outlier': False})
    finding = _finding('error', None, 'the facts of %s cannot be reported (%s: %s)' % (
        host, type(exc).__name__, str(exc)[:200]), 'gather the host again; if it persists, its facts are malformed')
    return {'row': row, 'drives': [], 'drift': [], 'findings': [finding], 'curve': [], 'thermal': {}}


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


def _record(host, doc, targets, now, stale_hours, verify_dir, compression_dir):
    """node_record() of one (host, document), with the documents beside the facts and an unreadable cache file
    reported as the node's error."""
    verify = side_document(verify_dir, host)
    compression = side_document(compression_dir, host)
    if compression is not None and isinstance(doc, dict) and not doc.get('checkpoint_io_compression'):
        doc = dict(doc, checkpoint_io_compression=compression)
    record = node_record(host, doc, targets, now, stale_hours, verify)
    if isinstance(doc, dict) and doc.get('__unreadable__'):
        why = (': %s' % doc['__why__']) if doc.get('__why__') else ''
        record['findings'].insert(0, _finding('error', None, 'cache file %s is not JSON%s' % (
            doc['__unreadable__'], why), 'gather the host again'))
        record['row']['errors'] += 1
        record['row']['status'] = 'error'
    return record


def build(nodes, out_dir, name='fleet_report', targets=None, plan_args=None, previous=None, stale_hours=24.0,
          outlier_fraction=0.8, verify_dir=None, now=None, title='Checkpoint I/O fleet report', source=None,
          compression_dir=None):
    """Write <name>.html, <name>.json, <name>_nodes.csv, <name>_drives.csv under ``out_dir`` from ``nodes`` (an
    iterable of (host, document)). Returns {paths, overview, plan, summary (lines), nodes}."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report_html
    now = now or time.time()
    paths = dict((k, os.path.join(out_dir, name + suffix)) for k, suffix in (
        ('html', '.html'), ('json', '.json'), ('nodes_csv', '_nodes.csv'), ('drives_csv', '_drives.csv')))
    rows, chunks, pending = [], [], []
    # every file through atomic_output (a new file with a random name, O_EXCL, renamed over the report's name):
    # nothing is opened through a name that exists, so a link planted in out_dir is replaced, never followed
    with tempfile.TemporaryFile('w+', encoding='utf-8', dir=out_dir) as details:
        with atomic_output(paths['drives_csv'], newline='') as drives_file:
            drives_csv = csv.writer(drives_file)
            drives_csv.writerow(DRIVE_CSV)
            for host, doc in nodes:
                try:
                    record = _record(host, doc, targets, now, stale_hours, verify_dir, compression_dir)
                except Exception as exc:  # pylint: disable=broad-except
                    # a node's document is data the node controls: one that breaks the reader fails that node
                    record = failed_record(host, exc)
                rows.append(record['row'])
                details.write(_compact({'drives': record['drives'], 'drift': record['drift'],
                                        'findings': record['findings'], 'curve': record['curve'],
                                        'thermal': record['thermal']}) + '\n')
                for d in record['drives']:
                    drives_csv.writerow(csv_row([host] + [d.get(k) for k in DRIVE_CSV[1:]]))
                pending.append(detail_of(record))
                if len(pending) == CHUNK:
                    chunks.append(_pack(pending))
                    pending = []
            if pending:
                chunks.append(_pack(pending))
        fleet = overview(rows, outlier_fraction)
        plan = fleet_plan(rows, plan_args)
        delta = changes(rows, previous)
        header = {'schema': SCHEMA, 'schema_version': SCHEMA_VERSION, 'title': title,
                  'generated_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)), 'source': source,
                  'fleet': fleet, 'plan': plan, 'changes': delta}
        details.seek(0)
        with atomic_output(paths['json']) as out:
            text = _compact(header)
            out.write(text[:-1] + ',"nodes":[')
            for i, (row, line) in enumerate(zip(rows, details)):
                node = json.loads(line)
                node.update(row)
                out.write((',' if i else '') + _compact(node))
            out.write(']}\n')

    with atomic_output(paths['nodes_csv'], newline='') as handle:
        writer = csv.writer(handle)
        writer.writerow(NODE_CSV)
        for row in rows:
            writer.writerow(csv_row([row.get(k) for k in NODE_CSV]))

    page = {'h': header, 'k': list(ROW_KEYS), 'r': [[row[k] for k in ROW_KEYS] for row in rows], 'n': CHUNK}
    with atomic_output(paths['html']) as out:
        out.write(fleet_report_html.render(title, _script_json(_compact(page)), chunks))
    lines = summary_lines(fleet, rows, plan, delta)
    return {'paths': paths, 'overview': fleet, 'plan': plan, 'changes': delta, 'summary': lines,
            'nodes': len(rows), 'html_bytes': os.path.getsize(paths['html'])}


def _pack(details):
    """One chunk of node details: compact JSON, deflated (raw DEFLATE, the browser's 'deflate-raw'), base64."""
    raw = _compact(details).encode('utf-8')
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    return base64.b64encode(comp.compress(raw) + comp.flush()).decode('ascii')


def summary_lines(fleet, rows, plan=None, delta=None, worst=5):
    """The console summary: counts, the worst nodes, the plan's line."""
    lines = ['%d nodes, %d data drives; status: %s' % (fleet['nodes'], fleet['drives'], ', '.join(
        '%s %d' % (k, v) for k, v in sorted(fleet['status'].items()))),
        'findings: %s; drift on %d nodes; %d outliers below %d%% of the median %s GiB/s; %d throttled drives' % (
            ', '.join('%d %s' % (fleet['findings'][s], s) for s in SEVERITIES), fleet['drift_nodes'],
            fleet['outliers'], round(fleet['outlier_fraction'] * 100),
            round(fleet['bandwidth_median_gib_s'], 3) if fleet['bandwidth_median_gib_s'] else 'n/a',
            fleet['throttled_drives']),
        'GDS paths: %s' % ', '.join('%s %d' % kv for kv in sorted(fleet['gds_paths'].items()))]
    ranked = sorted(rows, key=lambda r: (-r['errors'], -r['warnings'], -r['drifted'], r['bw_after'] or 0, r['host']))
    bad = [r for r in ranked if r['errors'] or r['warnings'] or r['drifted']][:worst]
    for r in bad:
        lines.append('worst: %s %s (%d errors, %d warnings, %d drifted settings%s)' % (
            r['host'], r['status'], r['errors'], r['warnings'], r['drifted'],
            (', %s GiB/s' % r['bw_after']) if r['bw_after'] is not None else ''))
    if plan:
        lines.append('plan: %s' % (plan.get('line') or plan.get('error')))
    if delta:
        lines.append('since %s: %d new, %d gone, %d changed' % (delta['previous_generated_at'],
                                                                len(delta['new_nodes']), len(delta['gone_nodes']),
                                                                len(delta['changed'])))
    return lines


def read_previous(path):
    """A previous report's JSON (its header and rows), or None where there is none."""
    if not path or not os.path.isfile(path):
        return None
    with io.open(path, encoding='utf-8') as handle:
        return json.load(handle)
