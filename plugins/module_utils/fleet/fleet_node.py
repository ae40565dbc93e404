# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node in the fleet report: its facts (and the plan they carry) to a report record - the row, its drives, the
drift of every setting a role manages against the target, the findings, the depth curve and the thermal series.
Pure functions, used by :mod:`fleet_report` (which builds the fleet's documents from the records)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import math
import time

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import select_drives
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan.depth import DEFAULT_QUEUE_DEPTH


SEVERITIES = ('error', 'warning', 'info')
SECTIONS = ('nvme', 'block', 'thermal', 'io_uring', 'xfs', 'gds', 'deepspeed', 'state')
MIB = 1024 ** 2
GIB = 1024 ** 3
SERIES_POINTS = 20          # thermal samples kept per drive (evenly picked, first and last kept)
# The settings the roles manage, their target variable (role defaults), and how a found value is read.
DEFAULT_TARGETS = {
    'block_layer_scheduler': 'none',
    'block_layer_read_ahead': '1M',
    'block_layer_nr_requests': None,
    'block_layer_max_sectors_kb': None,
    'block_layer_nomerges': None,
    'block_layer_rq_affinity': None,
    'deepspeed_config_queue_depth': DEFAULT_QUEUE_DEPTH,
    'deepspeed_config_block_size': '1M',
    'deepspeed_config_intra_op_parallelism': 1,
    'deepspeed_config_single_submit': False,
    'deepspeed_config_overlap_events': True,
    'xfs_mount_options': ['noatime', 'inode64', 'logbufs=8', 'logbsize=256k', 'largeio', 'swalloc'],
    'io_uring_engine_allowed': True,
}
BLOCK_SETTINGS = (('scheduler', 'block_layer_scheduler', None), ('nr_requests', 'block_layer_nr_requests', None),
                  ('read_ahead_kb', 'block_layer_read_ahead', 1024), ('max_sectors_kb', 'block_layer_max_sectors_kb',
                                                                      None),
                  ('nomerges', 'block_layer_nomerges', None), ('rq_affinity', 'block_layer_rq_affinity', None))
AIO_SETTINGS = (('queue_depth', 'deepspeed_config_queue_depth'), ('block_size', 'deepspeed_config_block_size'),
                ('intra_op_parallelism', 'deepspeed_config_intra_op_parallelism'),
                ('single_submit', 'deepspeed_config_single_submit'),
                ('overlap_events', 'deepspeed_config_overlap_events'))
ROW_KEYS = ('host', 'status', 'gathered_at', 'age_h', 'kernel', 'data_drives', 'gds', 'io_uring', 'temp_max_c',
            'throttled', 'bw_before', 'bw_after', 'ratio', 'errors', 'warnings', 'infos', 'drifted', 'outlier',
            'sweep_ceiling_mib_s', 'latency_ms', 'compression_ratio', 'compression_codec', 'compression_bound',
            'run_written_gib', 'run_rated_share', 'reused')


def _size(value):
    """A size (bytes, '1M', '256k') to bytes; None where it is not one."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value) if math.isfinite(value) else None
    text = str(value).strip().lower()
    mult = {'k': 1024, 'm': MIB, 'g': GIB}
    for suffix in ('kib', 'mib', 'gib', 'k', 'm', 'g', 'b'):
        if text.endswith(suffix):
            head = text[:-len(suffix)].strip()
            return int(head) * mult.get(suffix[0], 1) if head.isdigit() else None
    return int(text) if text.isdigit() else None


def _num(value):
    """A number, or the median of a repeats summary ({median, ...}); None otherwise."""
    kind = type(value)
    if kind is float:        # the common case first (a fleet's samples): finite floats as they are
        return value if value - value == 0.0 else None
    if kind is int:
        return float(value)
    if isinstance(value, dict):
        value = value.get('median')
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _dict(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _finding(severity, where, message, fix=None, layer=None):
    return {'severity': severity if severity in SEVERITIES else 'info', 'device': where, 'message': message,
            'fix': fix, 'layer': layer}


_TIMES = {}


def _parse_time(text):
    """Seconds of a 'YYYY-MM-DDTHH:MM:SSZ' stamp, or None; the stamps of a fleet repeat (the sections of a node, the
    nodes of one run): the last few thousand are remembered."""
    text = str(text)
    if text in _TIMES:
        return _TIMES[text]
    try:
        value = calendar.timegm(time.strptime(text, '%Y-%m-%dT%H:%M:%SZ'))
    except (ValueError, OverflowError):
        value = None
    if len(_TIMES) >= 4096:
        _TIMES.clear()
    _TIMES[text] = value
    return value


def host_facts(doc):
    """The collection's facts in a cached host document ({} where absent)."""
    doc = _dict(doc)
    return _dict(doc.get('checkpoint_io') or doc.get('ansible_checkpoint_io')
                 or _dict(doc.get('ansible_facts')).get('checkpoint_io'))


def host_plan(doc):
    """The node's plan in a cached host document (the fact checkpoint_io_plan of tune_checkpoint_nodes.yml's first
    play), {} where absent."""
    doc = _dict(doc)
    return _dict(doc.get('checkpoint_io_plan') or doc.get('ansible_checkpoint_io_plan')
                 or _dict(doc.get('ansible_facts')).get('checkpoint_io_plan'))


def _latest_sweep(records):
    """The depth sweep's newest entry: {curve, knee, ...} ({} without one)."""
    sweeps = _dict(records.get('depth_sweep'))
    entries = [v for v in sweeps.values() if isinstance(v, dict) and isinstance(v.get('curve'), list)]
    return entries[-1] if entries else {}


def _series(thermal, points=SERIES_POINTS):
    """A thermal_validate result's samples, at most ``points`` per drive (evenly picked, the last kept), as the report
    carries them: {t: [whole seconds], d: {namespace: [its first whole degree, then the change from its sample
    before]}} - the drives' samples share their times, and an NVMe drive reports whole kelvins, so whole degrees lose
    nothing it measured and their changes compress well; null where a drive has no reading at a time. {} without
    samples."""
    samples = thermal.get('samples') if isinstance(thermal, dict) else None
    if not isinstance(samples, list) or not samples:
        return {}
    step = max(1, int(round(len(samples) / float(points))))
    picked = samples[::step]
    if picked[-1] is not samples[-1]:
        picked.append(samples[-1])
    times, columns = [], {}
    for sample in picked:
        if not isinstance(sample, dict):
            continue
        t = _num(sample.get('t'))
        drives = sample.get('drives')
        if t is None or not isinstance(drives, dict):
            continue
        at = len(times)
        times.append(int(round(t)))
        for name, drive in drives.items():
            temp = _num(drive.get('temp_c')) if isinstance(drive, dict) else None
            if temp is not None:
                column = columns.get(name)
                if column is None:
                    column = columns[str(name)] = []
                column.extend([None] * (at - len(column)))
                column.append(int(round(temp)))
    if not times:
        return {}
    out = {}
    for name in sorted(columns):
        column = columns[name] + [None] * (len(times) - len(columns[name]))
        last, changes = None, []
        for value in column:
            if value is None:
                changes.append(None)
            else:
                changes.append(value if last is None else value - last)
                last = value
        out[name] = changes
    return {'t': times, 'd': out}


def _drift_value(found, target):
    """Whether a found value differs from a target (sizes compared in bytes, strings case-blind)."""
    if target is None or (found == target and type(found) is type(target)):
        return False
    if isinstance(target, bool) or isinstance(found, bool):
        return bool(found) != bool(target)
    a, b = _size(found), _size(target)
    if a is not None and b is not None:
        return a != b
    return str(found).strip().lower() != str(target).strip().lower()


def absence_findings(facts, doc, plan, drives):
    """Findings for data drives that are not there: a node whose gathered NVMe facts show no data drive, the drives
    the node's plan selected that its facts no longer show (by serial), and what the inventory's selection
    (``checkpoint_io_data_drives`` in the host's document, as the fleet_report role writes it) names but the facts
    do not hold. A GPU node that lost its drives is an error, never ok."""
    if not facts or not isinstance(facts.get('nvme'), dict):
        return []    # no facts, or no NVMe section gathered: reported as such
    out = []
    data = [d for d in drives if not d['os_drive']]
    if not data:
        out.append(_finding('error', None, 'no NVMe data drive in the facts (only the OS drive, or none)',
                            'check the drives (nvme list, dmesg) and gather the facts again', 'nvme'))
    serials = set(str(d['serial']) for d in data if d.get('serial'))
    planned = [_dict(d) for d in _list(_dict(plan.get('drives')).get('selected'))]
    gone = sorted(set('%s (%s)' % (d.get('serial'), d.get('name')) for d in planned
                      if d.get('serial') and str(d.get('serial')) not in serials))
    if gone:
        out.append(_finding('error', None, 'the plan selected %d data drives; not in the facts now: %s' % (
            len(planned), ', '.join(gone)), 'check the drives (nvme list, dmesg); run the tune playbook again to '
            'plan the drives the node has', 'nvme'))
    selection = doc.get('checkpoint_io_data_drives')
    if selection:
        try:
            unmatched = select_drives(facts.get('nvme'), selection)['unmatched']
        except (ValueError, TypeError, KeyError) as exc:
            unmatched = ['(the selection cannot be read: %s)' % exc]
        if unmatched:
            out.append(_finding('error', None, 'the inventory\'s checkpoint_io_data_drives names what the facts do '
                                'not hold: %s' % ', '.join(str(u) for u in unmatched),
                                'check the drives (nvme list), or the selection', 'nvme'))
    return out


def run_writes(run):
    """What the node's last run of tune_checkpoint_nodes.yml wrote (its run document, ``<report_dir>/run/``):
    ({serial: {bytes, share}}, the GiB it wrote to the drives, the largest share of a drive's rated endurance, how
    many measurements it reused)."""
    per_drive = {}
    for entry in _list(_dict(run).get('run_writes')):
        entry = _dict(entry)
        if entry.get('serial') is not None:
            per_drive[str(entry['serial'])] = {'bytes': _num(entry.get('bytes')), 'share': _num(entry.get('run_share'))}
    written = [v['bytes'] for v in per_drive.values() if v['bytes'] is not None]
    shares = [v['share'] for v in per_drive.values() if v['share'] is not None]
    reused = sum(1 for m in _dict(_dict(run).get('measurements')).values() if _dict(m).get('reuse') is True)
    return (per_drive, round(sum(written) / float(GIB), 3) if written else None, max(shares) if shares else None,
            reused if run else None)


def node_record(host, doc, targets=None, now=None, stale_hours=24.0, verify=None, run=None):
    """One node's report record: the row (ROW_KEYS) and its details (drives, drift, findings, curve, thermal).
    ``run``: the node's run document (what its last run wrote to each drive and which measurements it reused)."""
    doc = _dict(doc)
    facts = host_facts(doc)
    want = dict(DEFAULT_TARGETS)
    want.update(_dict(targets))
    want.update(_dict(doc.get('fleet_report_targets')))
    verify = _dict(verify) or _dict(doc.get('checkpoint_io_verify'))
    run_drives, run_gib, run_share, reused = run_writes(run)
    # Where the node has a plan, drift is measured against it (each drive's planned queue values, the planned aio
    # section); elsewhere against the targets.
    plan = host_plan(doc)
    planned_drives = _dict(_dict(plan.get('block_layer')).get('drives'))
    planned_aio = _dict(_dict(plan.get('deepspeed_config')).get('aio'))
    findings, drift = [], []
    missing = [s for s in SECTIONS if not isinstance(facts.get(s), dict)] if facts else list(SECTIONS)
    nvme, block, thermal = _dict(facts.get('nvme')), _dict(facts.get('block')), _dict(facts.get('thermal'))
    io_uring, gds, state = _dict(facts.get('io_uring')), _dict(facts.get('gds')), _dict(facts.get('state'))
    records = _dict(state.get('records'))

    if not facts:
        findings.append(_finding('error', None, 'no checkpoint_io facts for this host in the cache',
                                 'run playbooks/fleet_report.yml live, or tune_checkpoint_nodes.yml, to gather them'))
    elif missing:
        findings.append(_finding('info', None, 'sections not gathered: %s' % ', '.join(missing),
                                 'gather them: checkpoint_io_facts with gather_subset all'))
    for name in SECTIONS:
        for error in _list(_dict(facts.get(name)).get('errors')):
            findings.append(_finding('warning', None, '%s facts: %s' % (name, error), 'see the node', name))

    gathered = [_parse_time(v) for v in _dict(facts.get('gathered_at')).values()]
    gathered = [g for g in gathered if g is not None]
    newest = max(gathered) if gathered else None
    age_h = round(((now or time.time()) - newest) / 3600.0, 1) if newest else None
    if age_h is not None and age_h > stale_hours:
        findings.append(_finding('warning', None, 'facts are %.1f h old (stale after %g h)' % (age_h, stale_hours),
                                 'gather again: playbooks/fleet_report.yml without a cache'))

    queues = dict((d.get('name'), d) for d in _list(block.get('devices')) if isinstance(d, dict))
    temps = dict((c.get('name'), c) for c in _list(thermal.get('controllers')) if isinstance(c, dict))
    namespaces = dict((n.get('name'), n) for n in _list(nvme.get('namespaces')) if isinstance(n, dict))
    drives = []
    for ctrl in _list(nvme.get('controllers')):
        ctrl = _dict(ctrl)
        t = _dict(temps.get(ctrl.get('name')))
        for ns in _list(ctrl.get('namespaces')):
            q, info = _dict(queues.get(ns)), _dict(namespaces.get(ns))
            os_drive = bool(info.get('is_os_drive'))
            drive = {'name': ns, 'controller': ctrl.get('name'), 'serial': ctrl.get('serial'),
                     'model': ctrl.get('model'), 'size_bytes': info.get('size_bytes'), 'os_drive': os_drive,
                     'temp_c': _num(t.get('composite_temp_c')), 'wctemp_c': _num(t.get('wctemp_c')),
                     'throttled': bool(t.get('throttled')), 'critical_warning': t.get('critical_warning'),
                     'io_queues': ctrl.get('io_queues'),
                     'link': ('%s x%s' % (ctrl.get('current_link_speed_gts'), ctrl.get('current_link_width'))
                              if ctrl.get('current_link_speed_gts') else None),
                     'drift': 0,
                     'run_bytes': _dict(run_drives.get(str(ctrl.get('serial')))).get('bytes'),
                     'run_share': _dict(run_drives.get(str(ctrl.get('serial')))).get('share')}
            for key, var, _default in BLOCK_SETTINGS:
                drive[key] = q.get(key)
            if not os_drive and q:
                planned = _dict(_dict(planned_drives.get(ns)).get('after')) if ns in planned_drives else None
                for key, var, _default in BLOCK_SETTINGS:
                    target = want.get(var) if planned is None else planned.get(key)
                    if key == 'read_ahead_kb' and target is not None and planned is None:
                        size = _size(target)
                        target = size // 1024 if size is not None else target
                    if _drift_value(q.get(key), target):
                        drive['drift'] += 1
                        drift.append({'layer': 'block_layer', 'item': ns, 'setting': key, 'found': q.get(key),
                                      'target': target, 'variable': var})
            if drive['throttled']:
                findings.append(_finding('warning', ns, 'throttled: %s' % (t.get('throttle_reason') or 'thermal'),
                                         'check cooling; run thermal_validate for the back-off', 'thermal'))
            if t.get('critical_warning'):
                findings.append(_finding('error', ns, 'critical warning %s' % t.get('critical_warning'),
                                         'replace or cool the drive before the next checkpoint', 'thermal'))
            drives.append(drive)

    findings.extend(absence_findings(facts, doc, plan, drives))

    ds = _dict(facts.get('deepspeed'))
    for config in _list(ds.get('configs')):
        aio = _dict(_dict(config).get('aio'))
        for key, var in AIO_SETTINGS:
            target = planned_aio.get(key) if planned_aio.get(key) is not None else want.get(var)
            if key in aio and _drift_value(aio.get(key), target):
                drift.append({'layer': 'deepspeed_config', 'item': _dict(config).get('path'), 'setting': 'aio.' + key,
                              'found': aio.get(key), 'target': target, 'variable': var})
    for fs in _list(_dict(facts.get('xfs')).get('filesystems')):
        opts = _dict(_dict(fs).get('options'))
        present = set(str(k) if v is True else '%s=%s' % (k, v) for k, v in opts.items())
        lacking = [o for o in _list(want.get('xfs_mount_options')) if o not in present and o.split('=')[0] not in opts]
        if lacking:
            drift.append({'layer': 'xfs', 'item': _dict(fs).get('mount_point'), 'setting': 'mount options',
                          'found': ','.join(sorted(present)), 'target': ','.join(_list(want.get('xfs_mount_options'))),
                          'variable': 'xfs_mount_options'})
    if io_uring and want.get('io_uring_engine_allowed') and io_uring.get('allowed_for_user') is False:
        drift.append({'layer': 'io_uring_engine', 'item': io_uring.get('training_user'), 'setting': 'io_uring allowed',
                      'found': False, 'target': True, 'variable': 'io_uring_engine_io_uring_disabled'})
        findings.append(_finding('warning', None, 'io_uring not allowed for %s: %s' % (
            io_uring.get('training_user'), io_uring.get('allowed_reason')), 'run the io_uring_engine role', 'io_uring'))
    if drift:
        layers = sorted(set(d['layer'] for d in drift))
        findings.append(_finding('info', None, '%d settings differ from the inventory\'s targets (%s)' % (
            len(drift), ', '.join(layers)), 'ansible-playbook playbooks/tune_checkpoint_nodes.yml --tags %s --limit %s'
            % (','.join(layers), host), 'drift'))

    for f in _list(verify.get('findings')):
        f = _dict(f)
        findings.append(_finding(f.get('severity', 'info'), f.get('device'), str(f.get('message', '')), f.get('fix'),
                                 'verify'))
    series_doc = _dict(records.get('thermal_series')) or _dict(doc.get('thermal_validate_result'))
    if series_doc.get('verdict') in ('throttling', 'critical'):
        findings.append(_finding('error' if series_doc['verdict'] == 'critical' else 'warning', None,
                                 'thermal validation: %s' % series_doc['verdict'],
                                 'the back-off is recorded; improve cooling', 'thermal'))

    sweep = _latest_sweep(records)
    curve = []
    for p in _list(sweep.get('curve')):
        p = _dict(p)
        if _num(p.get('depth')) is not None and _num(p.get('bw_bytes')) is not None:
            curve.append([int(p['depth']), round(_num(p['bw_bytes']) / MIB, 1),
                          round((_num(p.get('mean_ns')) or _num(p.get('p99_ns')) or 0) / 1e6, 2)])
    best = max(curve, key=lambda c: c[1]) if curve else None
    # the latency at the knee (the smallest depth reaching 95% of the best, as knee_depth finds it): past the knee
    # more depth adds latency only, so the best point's latency would overstate what Little's Law needs
    knee = min((c for c in curve if c[1] >= 0.95 * best[1]), key=lambda c: c[0]) if best else None
    sweep_drives = max(1, len(_list(_dict(sweep).get('device'))) if isinstance(sweep.get('device'), list) else 1)
    before = _num(_dict(verify.get('before')).get('throughput_gib_s'))
    if before is None:
        before = _num(_dict(records.get('baseline')).get('throughput_gib_s'))
    after = _num(_dict(verify.get('after')).get('throughput_gib_s'))
    counts = dict((s, sum(1 for f in findings if f['severity'] == s)) for s in SEVERITIES)
    temps_now = [d['temp_c'] for d in drives if d['temp_c'] is not None]
    row = {
        'host': str(host), 'gathered_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(newest)) if newest else None,
        'age_h': age_h, 'kernel': io_uring.get('kernel_release'),
        'data_drives': sum(1 for d in drives if not d['os_drive']), 'gds': gds.get('path'),
        'io_uring': io_uring.get('allowed_for_user'), 'temp_max_c': max(temps_now) if temps_now else None,
        'throttled': sum(1 for d in drives if d['throttled']),
        'bw_before': round(before, 3) if before is not None else None,
        'bw_after': round(after, 3) if after is not None else None,
        'ratio': round(after / before, 2) if before and after else None,
        'errors': counts['error'], 'warnings': counts['warning'], 'infos': counts['info'], 'drifted': len(drift),
        'outlier': False, 'sweep_ceiling_mib_s': round(best[1] / sweep_drives, 1) if best else None,
        'latency_ms': knee[2] if knee and knee[2] else None,
        'run_written_gib': run_gib, 'run_rated_share': run_share, 'reused': reused,
    }
    # compression readiness (playbooks/compression_readiness.yml's fact): the best codec's projection
    projection = _dict(_dict(doc.get('checkpoint_io_compression')).get('projection'))
    row['compression_ratio'] = _num(projection.get('ratio'))
    row['compression_codec'] = projection.get('codec')
    row['compression_bound'] = projection.get('bound')
    row['status'] = ('missing' if not facts else 'error' if counts['error'] else 'stale'
                     if age_h is not None and age_h > stale_hours else 'warning' if counts['warning'] else
                     'drift' if drift else 'ok')
    return {'row': row, 'drives': drives, 'drift': drift, 'findings': findings, 'curve': curve,
            'thermal': _series(series_doc), 'verify_line': verify.get('verdict')}
