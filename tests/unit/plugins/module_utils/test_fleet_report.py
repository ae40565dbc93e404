# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report from a fact cache: the lab fleet after a tune run and synthetic nodes (tests/bench/fleet_cache.py,
made from the facts the collectors gather on the lab-shaped fake node), drift, outliers, stale and missing facts,
the documents (JSON schema, CSV, the page's embedded data), the change since a previous report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import csv
import gzip
import json
import lzma
import os
import random
import re
import sys
import zlib

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_files as ff
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_node as fn
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report as fr

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'bench'))
import fleet_cache  # noqa: E402  pylint: disable=wrong-import-position

NOW = 1796256000.0   # 2026-12-03T00:00:00Z


@pytest.fixture(scope='module')
def base():
    return fleet_cache.base_facts()


@pytest.fixture(scope='module')
def lab(tmp_path_factory, base):
    cache = str(tmp_path_factory.mktemp('labcache'))
    fleet_cache.write_cache(cache, 2, lab=True, now=NOW)
    out = str(tmp_path_factory.mktemp('labreport'))
    result = fr.build(ff.iter_cache(cache), out, now=NOW, plan_args={
        'checkpoint': 'llama3-8b', 'ranks_per_node': 2, 'window_s': 60, 'mtbf_hours': 20000})
    return result


def _summary(result):
    with open(result['paths']['json']) as handle:
        return json.load(handle)


def _nodes(result):
    """{host: node} of the report's JSON Lines."""
    with lzma.open(result['paths']['nodes'], 'rt', encoding='utf-8') as handle:
        return dict((node['host'], node) for node in map(json.loads, handle))


def _chunks(result):
    """The page's data file decoded: [[row list, detail], ...] of every chunk, in order."""
    with open(result['paths']['data']) as handle:
        text = handle.read()
    out = []
    for n, b64 in re.findall(r'^fleetChunk\((\d+),"([A-Za-z0-9+/=]*)"\);$', text, re.M):
        assert int(n) == len(out) // fr.CHUNK
        packed = json.loads(zlib.decompress(base64.b64decode(b64), -15))
        out.extend([row, detail] for row, detail in ff.unpack_chunk(packed))
    outliers = json.loads(re.findall(r'^fleetOutliers\((\[[0-9,]*\])\);$', text, re.M)[-1])
    for i in outliers:          # as the page does
        row = dict(zip(fn.ROW_KEYS, out[i][0]))
        fr.mark_outlier(row)
        out[i][0] = [row[k] for k in fn.ROW_KEYS]
    return out


def _doc(base, **changes):
    facts = json.loads(json.dumps(base))
    stamp = '2026-12-02T23:00:00Z'
    facts['gathered_at'] = dict((k, stamp) for k in facts['gathered_at'])
    for path, value in changes.items():
        node = facts
        keys = path.split('.')
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[keys[-1]] = value
    return {'checkpoint_io': facts}


def test_lab_fleet_after_a_tune_run(lab):
    fleet = lab['overview']
    assert fleet['nodes'] == 2 and fleet['drives'] == 4 and fleet['throttled_drives'] == 1
    doc = _summary(lab)
    assert doc['schema'] == 'ai_storage.checkpoint_io.fleet_report' and doc['schema_version'] == 2
    assert [r['host'] for r in doc['worst']] == ['node2'] and doc['files']['nodes'] == 'fleet_report_nodes.jsonl.xz'
    node2 = _nodes(lab)['node2']
    assert node2['status'] == 'warning' and node2['throttled'] == 1
    assert any('DATA0002' in f['message'] and f['fix'] for f in node2['findings'])
    assert node2['curve'] and sorted(node2['thermal']['d']) == ['nvme1n1', 'nvme2n1']
    assert node2['data_drives'] == 2 and [d['serial'] for d in node2['drives']] == ['OS0001', 'DATA0001', 'DATA0002']
    assert node2['drifted'] == 0 and node2['drift'] == []
    assert node2['bw_before'] < node2['bw_after'] and node2['ratio'] > 1
    assert lab['plan']['preset'] == 'llama3-8b' and lab['plan']['after']['interval_s'] > 0
    assert any(line.startswith('worst: node2') for line in lab['summary'])


def test_csv_has_a_row_per_node_and_the_lines_every_drive(lab):
    with gzip.open(lab['paths']['nodes_csv'], 'rt', encoding='utf-8', newline='') as handle:
        nodes = list(csv.DictReader(handle))
    assert [n['host'] for n in nodes] == ['node1', 'node2'] and nodes[1]['status'] == 'warning'
    drives = [d for node in _nodes(lab).values() for d in node['drives']]
    assert len(drives) == 6 and [d['os_drive'] for d in drives].count(True) == 2   # OS drives included


def test_page_fetches_nothing_and_its_data_file_decodes(lab):
    with open(lab['paths']['html']) as handle:
        page = handle.read()
    assert 'http://' not in page.replace('http://www.w3.org/2000/svg', '') and 'https://' not in page
    assert '<link' not in page and '<script src' not in page and 'fleet_report_data.js' in page
    details = _chunks(lab)
    assert [dict(zip(fn.ROW_KEYS, row))['host'] for row, _detail in details] == ['node1', 'node2']
    thermal = details[1][1]['t']
    assert details[1][1]['c'] and sorted(thermal['d']) == ['nvme1n1', 'nvme2n1'] and len(thermal['t']) > 2
    # whole degrees, the first of each drive and then its changes: they add up to the series node_record keeps
    assert all(isinstance(v, int) for v in thermal['d']['nvme1n1'])


def test_a_chunk_packed_column_by_column_unpacks_to_its_nodes(base):
    records = [fn.node_record('n%d' % i, _doc(base), now=NOW) for i in range(3)]
    records[1] = fr.failed_record('n1', ValueError('bad'))          # no drives, no curve
    entries = [([r['row'][k] for k in fn.ROW_KEYS], fr.detail_of(r)) for r in records]
    packed = ff.pack_chunk(entries)
    assert packed['nd'] == [len(records[0]['drives']), 0, len(records[2]['drives'])] and packed['nc'][1] == 0
    assert ff.unpack_chunk(json.loads(fr._compact(packed))) == [   # pylint: disable=protected-access
        (list(row), json.loads(fr._compact(detail))) for row, detail in entries]   # pylint: disable=protected-access


def test_the_thermal_series_in_whole_degrees_and_their_changes():
    samples = [{'t': 0.0, 'drives': {'b': {'temp_c': 40.2}, 'a': {'temp_c': 38.0}}},
               {'t': 2.0, 'drives': {'b': {'temp_c': 41.7}}},                      # a: no reading here
               {'t': 4.0, 'drives': {'b': {'temp_c': 41.4}, 'a': {'temp_c': 45.0}}}]
    assert fn._series({'samples': samples}) == {   # pylint: disable=protected-access
        't': [0, 2, 4], 'd': {'a': [38, None, 7], 'b': [40, 2, -1]}}
    assert fn._series({}) == {} and fn._series({'samples': []}) == {}   # pylint: disable=protected-access


def test_drift_names_found_and_target(base):
    ns = base['nvme']['controllers'][1]['namespaces'][0]
    index = [d['name'] for d in base['block']['devices']].index(ns)
    doc = _doc(base, **{'block.devices.%d.scheduler' % index: 'mq-deadline', 'block.devices.%d.read_ahead_kb' % index: 128})
    record = fn.node_record('n1', doc, now=NOW)
    block = [x for x in record['drift'] if x['layer'] == 'block_layer' and x['item'] == ns]
    assert {'setting': 'scheduler', 'found': 'mq-deadline', 'target': 'none'} in [
        dict((k, x[k]) for k in ('setting', 'found', 'target')) for x in block]
    assert [x['target'] for x in block if x['setting'] == 'read_ahead_kb'] == [1024]
    fix = [f['fix'] for f in record['findings'] if f['layer'] == 'drift'][0]
    assert 'tune_checkpoint_nodes.yml --tags' in fix and '--limit n1' in fix
    # the host's own target wins: read-ahead 128 KiB asked for is no drift
    doc['fleet_report_targets'] = {'block_layer_read_ahead': '128K', 'block_layer_scheduler': 'mq-deadline'}
    assert not [x for x in fn.node_record('n1', doc, now=NOW)['drift'] if x['item'] == ns]


def test_missing_stale_and_unreadable_nodes(base, tmp_path):
    assert fn.node_record('gone', {'discovered_interpreter_python': '/usr/bin/python3'}, now=NOW)['row']['status'] \
        == 'missing'
    old = _doc(base)
    old['checkpoint_io']['gathered_at'] = dict((k, '2026-11-01T00:00:00Z') for k in old['checkpoint_io']['gathered_at'])
    stale = fn.node_record('old', old, now=NOW)
    assert stale['row']['age_h'] > 24 and any('stale' in f['message'] for f in stale['findings'])
    partial = _doc(base)
    del partial['checkpoint_io']['gds']
    assert any('gds' in f['message'] for f in fn.node_record('p', partial, now=NOW)['findings'])
    cache = tmp_path / 'cache'
    cache.mkdir()
    (cache / 's1_broken').write_text('{not json')
    (cache / 'plain').write_text(json.dumps(_doc(base)))
    (cache / 's1_wrapped').write_text(json.dumps({'__payload__': json.dumps(_doc(base))}))
    hosts = dict(ff.iter_cache(str(cache)))
    assert sorted(hosts) == ['broken', 'plain', 'wrapped'] and '__unreadable__' in hosts['broken']
    result = fr.build(ff.iter_cache(str(cache)), str(tmp_path), now=NOW)
    nodes = _nodes(result)
    assert nodes['broken']['status'] == 'error' and 'not JSON' in nodes['broken']['findings'][0]['message']
    # the fake node's DATA0002 raises critical warning 2 (temperature): an error with its fix
    assert [f['device'] for f in nodes['plain']['findings'] if f['severity'] == 'error'] == ['nvme2n1']


def test_outliers_against_peers_with_as_many_drives():
    rows = [{'host': 'n%d' % i, 'data_drives': 8, 'bw_before': None, 'bw_after': bw, 'status': 'ok', 'warnings': 0,
             'errors': 0, 'infos': 0, 'drifted': 0, 'gds': None, 'temp_max_c': 40, 'throttled': 0, 'outlier': False}
            for i, bw in enumerate([10.0, 10.2, 9.8, 6.0])]
    rows.append(dict(rows[0], host='small', data_drives=4, bw_after=5.0))
    fleet = fr._Fleet()   # pylint: disable=protected-access
    for i, row in enumerate(rows):
        fleet.add(i, [row.get(k) for k in fn.ROW_KEYS], '[]')
    assert list(fleet.outliers(0.8)) == [0, 0, 0, 1, 0]


def test_markup_in_facts_cannot_close_the_script_element():
    text = fr._script_json(fr._compact({'host': '</script><script>alert(1)</script>', 'x': u'\u2028'}))
    assert '</script' not in text and '<' not in text and u'\u2028' not in text
    assert json.loads(text)['host'] == '</script><script>alert(1)</script>'


def test_changes_since_a_previous_report(lab, base, tmp_path):
    previous = fr.read_previous(lab['paths']['json'])
    docs = [('node1', _doc(base)), ('node3', _doc(base))]
    result = fr.build(iter(docs), str(tmp_path), previous=previous, now=NOW)
    delta = result['changes']
    assert delta['new_nodes'] == ['node3'] and delta['gone_nodes'] == ['node2']
    assert (delta['new_count'], delta['gone_count']) == (1, 1)
    assert delta['previous_generated_at'] == '2026-12-03T00:00:00Z'


class _Previous(object):
    """A previous report's nodes as fleet_files.PreviousReport gives them."""

    def __init__(self, nodes, in_order):
        self.nodes, self.in_order, self.generated_at = nodes, in_order, '2026-12-02T00:00:00Z'

    def __iter__(self):
        return iter(self.nodes)


def _changes(previous, rows, in_order=True):
    delta = fr._Changes(previous, in_order)
    for host, status, drifted in rows:
        delta.add({'host': host, 'status': status, 'drifted': drifted})
    return delta


def test_changes_merged_line_by_line_are_the_changes_held_whole():
    rng = random.Random(7)
    hosts = ['n%04d' % i for i in range(3000)]
    before = [(h, rng.choice(['ok', 'warning']), rng.randint(0, 1)) for h in hosts if rng.random() < 0.9]
    after = [(h, rng.choice(['ok', 'warning']), rng.randint(0, 1)) for h in hosts if rng.random() < 0.9]
    merged = _changes(_Previous(before, True), after)
    assert merged.merge and not hasattr(merged, 'held')   # nothing of the previous report held
    held = _changes(_Previous(before, True), after, in_order=False)
    assert not held.merge
    result = merged.result()
    assert result == held.result()
    gone = sorted(set(h for h, _s, _d in before) - set(h for h, _s, _d in after))
    new = sorted(set(h for h, _s, _d in after) - set(h for h, _s, _d in before))
    assert (result['gone_count'], result['new_count']) == (len(gone), len(new))
    assert result['gone_nodes'] == gone[:fr.NAMES_LISTED] and result['new_nodes'] == new[:fr.NAMES_LISTED]
    was = dict((h, (s, d)) for h, s, d in before)
    assert result['changed'][:5] == [{'host': h, 'status_before': was[h][0], 'status': s, 'drifted_before': was[h][1],
                                      'drifted': d} for h, s, d in after if h in was and was[h] != (s, d)][:5]


def test_a_previous_report_out_of_host_order_is_refused_not_misread():
    with pytest.raises(ValueError, match="not in host order .'a' after 'b'"):
        _changes(_Previous([('b', 'ok', 0), ('a', 'ok', 0)], True), [('c', 'ok', 0)]).result()
    unsorted = _changes(_Previous([('b', 'ok', 0), ('a', 'ok', 0)], False), [('a', 'error', 0)]).result()
    assert unsorted['gone_nodes'] == ['b'] and unsorted['changed'][0]['status'] == 'error'


def test_a_truncated_previous_report_is_a_clear_error(lab, tmp_path):
    summary = _summary(lab)
    assert summary['hosts_sorted'] is True
    with open(lab['paths']['nodes'], 'rb') as handle:
        data = handle.read()
    (tmp_path / summary['files']['nodes']).write_bytes(data[:len(data) // 2])
    (tmp_path / 'fleet_report.json').write_text(json.dumps(summary))
    previous = fr.read_previous(str(tmp_path / 'fleet_report.json'))
    with pytest.raises(ValueError, match="previous report's nodes file"):
        list(previous)


def test_plan_errors_are_reported_not_raised():
    assert 'error' in fr.fleet_plan({'checkpoint': 'llama3-70b', 'ranks_per_node': 8, 'window_s': 60}, [], [],
                                    None, None)
    bad = fr.fleet_plan({'checkpoint': 'llama3-70b', 'ranks_per_node': 8, 'window_s': 0, 'drive_mib_s': 100,
                         'latency_ms': 1}, [], [], None, None)
    assert 'window_s' in bad['error']


def test_compression_readiness_in_the_row(base):
    doc = _doc(base)
    doc['checkpoint_io_compression'] = {'projection': {'codec': 'huffman', 'ratio': 1.2473, 'bound': 'compress'}}
    row = fn.node_record('n', doc, now=NOW)['row']
    assert (row['compression_ratio'], row['compression_codec'], row['compression_bound']) == (1.2473, 'huffman',
                                                                                              'compress')
    assert fn.node_record('n', _doc(base), now=NOW)['row']['compression_ratio'] is None


def test_compression_results_read_beside_the_facts(base, tmp_path):
    """compression_readiness.yml's <reports>/compression/<host>.json joins the host's row; a host's own
    checkpoint_io_compression comes first; a file that is not JSON is ignored."""
    side = tmp_path / 'compression'
    side.mkdir()
    (side / 'a.json').write_text(json.dumps({'projection': {'codec': 'zstd', 'ratio': 1.31, 'bound': 'write'}}))
    (side / 'b.json').write_text(json.dumps({'projection': {'codec': 'zlib', 'ratio': 1.05, 'bound': 'write'}}))
    (side / 'c.json').write_text('{not json')
    own = _doc(base)
    own['checkpoint_io_compression'] = {'projection': {'codec': 'huffman', 'ratio': 1.2, 'bound': 'compress'}}
    out = tmp_path / 'out'
    out.mkdir()
    result = fr.build(iter([('a', _doc(base)), ('b', own), ('c', _doc(base))]), str(out), now=NOW,
                      compression_dir=str(side))
    nodes = _nodes(result)
    assert (nodes['a']['compression_ratio'], nodes['a']['compression_codec']) == (1.31, 'zstd')
    assert (nodes['b']['compression_ratio'], nodes['b']['compression_codec']) == (1.2, 'huffman')
    assert nodes['c']['compression_ratio'] is None


def test_the_last_runs_writes_and_reuse_read_beside_the_facts(base, tmp_path):
    """tune_checkpoint_nodes.yml's <reports>/run/<host>.json: what the run wrote to each drive (by serial) and its
    share of the rated endurance, in the row, the drives and the overview; a node without one has nulls."""
    side = tmp_path / 'run'
    side.mkdir()
    serial = fn.node_record('a', _doc(base), now=NOW)['drives'][-1]['serial']
    (side / 'a.json').write_text(json.dumps({
        'run_writes': [{'serial': serial, 'bytes': 3 << 30, 'run_share': 0.00025},
                       {'serial': 'GONE', 'bytes': 1 << 30, 'run_share': None}],
        'measurements': {'sweep': {'reuse': True}, 'thermal': {'reuse': False}, 'verification': {'reuse': True}}}))
    out = tmp_path / 'out'
    out.mkdir()
    result = fr.build(iter([('a', _doc(base)), ('b', _doc(base))]), str(out), now=NOW, run_dir=str(side))
    nodes = _nodes(result)
    assert (nodes['a']['run_written_gib'], nodes['a']['run_rated_share'], nodes['a']['reused']) == (4.0, 0.00025, 2)
    assert [d['run_bytes'] for d in nodes['a']['drives'] if d['serial'] == serial] == [3 << 30]
    assert (nodes['b']['run_written_gib'], nodes['b']['reused']) == (None, None)
    assert result['overview']['run_writes'] == {'nodes': 1, 'written_gib': 4.0, 'rated_share_max': 0.00025,
                                                'reused_nodes': 1}
    assert ('the last runs wrote 4.0 GiB to the data drives of 1 nodes, at most 0.025% of a drive\'s rated '
            'endurance; 1 nodes reused measurements') in result['summary']


# --- what a node, a drive or another user controls (issue 31, finding 5) ---

def test_a_csv_cell_holds_no_line_break_and_no_formula():
    assert ff.csv_cell('=HYPERLINK("http://x","y")') == '\'=HYPERLINK("http://x","y")'
    for lead in '+-@':
        assert ff.csv_cell(lead + 'cmd') == "'" + lead + 'cmd'
    assert ff.csv_cell('QEMU\nRUN+="x"\r\u2028') == 'QEMU RUN+="x"  '
    assert ff.csv_cell('\n=1') == ' =1'  # a break made a space: no longer a formula's first character
    assert [ff.csv_cell(v) for v in (None, True, -3, -1.5, 'ok')] == [None, True, -3, -1.5, 'ok']


def test_hostile_strings_in_facts_stay_in_their_cell(base, tmp_path):
    doc = _doc(base, **{'nvme.controllers.1.model': '=cmd|" /C calc"!A0\nhost2,evil,row',
                        'nvme.controllers.1.serial': '@SUM(1+1)'})
    out = tmp_path / 'out'
    out.mkdir()
    result = fr.build([('-n1\n=x', doc)], str(out), now=NOW)
    with gzip.open(result['paths']['nodes_csv'], 'rt', encoding='utf-8', newline='') as handle:
        nodes = list(csv.reader(handle))
    assert len(nodes) == 2 and nodes[1][0] == "'-n1 =x"      # the header, the node: no row injected
    cells = [cell for row in nodes[1:] for cell in row]
    assert not [c for c in cells if (c and c[0] in '=+-@') or '\n' in c]
    # the JSON Lines keep the strings as they are, one line a node
    with lzma.open(result['paths']['nodes'], 'rt', encoding='utf-8') as handle:
        lines = handle.read().split('\n')
    assert len(lines) == 2 and lines[1] == '' and json.loads(lines[0])['host'] == '-n1\n=x'
    assert '=cmd|" /C calc"!A0\nhost2,evil,row' in [d['model'] for d in json.loads(lines[0])['drives']]


def test_one_bad_node_is_named_and_the_others_reported(base, tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir()
    good = json.dumps(_doc(base))
    (cache / 'good').write_text(good)
    (cache / 'inf').write_text(good.replace('"mdts_bytes": 524288', '"mdts_bytes": 1e999', 1))
    (cache / 'nan').write_text(good.replace('"mdts_bytes": 524288', '"mdts_bytes": NaN', 1))
    (cache / 's1_wrapped_inf').write_text(json.dumps({'__payload__': good.replace('524288', 'Infinity', 1)}))
    listed = _doc(base, **{'nvme.controllers.1.name': ['nvme1']})  # a list where a name is expected
    (cache / 'listed').write_text(json.dumps(listed))
    assert '524288' in good
    out = tmp_path / 'out'
    out.mkdir()
    result = fr.build(ff.iter_cache(str(cache)), str(out), now=NOW)
    nodes = _nodes(result)
    assert sorted(nodes) == ['good', 'inf', 'listed', 'nan', 'wrapped_inf'] and result['nodes'] == 5
    assert nodes['good']['status'] != 'error' or nodes['good']['errors'] == 1  # the fake node's own finding
    for host, words in (('inf', 'out of range'), ('nan', 'NaN is not a JSON number'), ('wrapped_inf', 'Infinity'),
                        ('listed', 'the facts of listed cannot be reported (TypeError')):
        assert nodes[host]['status'] == 'error', host
        assert words in nodes[host]['findings'][0]['message'], (host, nodes[host]['findings'][0])
    for path in (result['paths']['html'], result['paths']['data']):
        with open(path) as handle:
            assert 'NaN' not in handle.read().replace('"NaN is not', '')


def test_a_link_planted_in_the_report_directory_is_replaced_not_followed(base, tmp_path):
    out = tmp_path / 'out'
    out.mkdir()
    victim = tmp_path / 'shadow'
    victim.write_text('root:secret\n')
    planted = ['fleet_report.json', 'fleet_report.json.tmp', 'fleet_report_nodes.csv.gz', '.fleet_report.details.tmp',
               'fleet_report.html', 'fleet_report_data.js', 'fleet_report_nodes.jsonl.gz']
    for name in planted:
        os.symlink(str(victim), str(out / name))
    result = fr.build([('n1', _doc(base))], str(out), now=NOW)
    assert victim.read_text() == 'root:secret\n'
    assert not [path for path in result['paths'].values() if os.path.islink(path)]
    assert list(_nodes(result)) == ['n1']
    left = sorted(p.name for p in out.iterdir())
    assert left == sorted(set(planted) | set(os.path.basename(p) for p in result['paths'].values()))  # no temporary


def test_a_failed_write_leaves_no_temporary_file(base, tmp_path):
    out = tmp_path / 'out'
    out.mkdir()

    def nodes():
        yield 'n1', _doc(base)
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        fr.build(nodes(), str(out), now=NOW)
    assert list(out.iterdir()) == []


def test_drift_is_measured_against_the_nodes_plan_where_it_has_one(base):
    """A node with a plan (the fact checkpoint_io_plan in the cache): each drive's planned queue values and the
    planned aio section are the targets, not the fleet-wide defaults."""
    ns = base['nvme']['controllers'][1]['namespaces'][0]
    index = [d['name'] for d in base['block']['devices']].index(ns)
    doc = _doc(base, **{'block.devices.%d.scheduler' % index: 'mq-deadline', 'block.devices.%d.read_ahead_kb' % index: 128})
    after = {'scheduler': 'mq-deadline', 'read_ahead_kb': 128}
    doc['checkpoint_io_plan'] = {'block_layer': {'drives': {ns: {'after': after}}}}
    assert not [x for x in fn.node_record('n1', doc, now=NOW)['drift'] if x['item'] == ns]
    doc['checkpoint_io_plan'][u'block_layer']['drives'][ns]['after']['read_ahead_kb'] = 1024
    found = [x for x in fn.node_record('n1', doc, now=NOW)['drift'] if x['item'] == ns]
    assert [(x['setting'], x['found'], x['target']) for x in found] == [('read_ahead_kb', 128, 1024)]


def _absent(record):
    """The node's error findings about its NVMe drives (the synthetic base also has a drive's critical warning)."""
    return [f['message'] for f in record['findings'] if f['severity'] == 'error' and f['layer'] == 'nvme']


def _data_controllers(facts):
    return [c for c in facts['nvme']['controllers'] if not any(
        n.get('is_os_drive') for n in facts['nvme']['namespaces'] if n['name'] in c['namespaces'])]


def test_a_node_with_no_data_drive_is_an_error_not_ok(base):
    """Issue 36: a GPU node whose facts show no NVMe data drive (only the OS drive) was reported ok."""
    doc = _doc(base)
    facts = doc['checkpoint_io']
    gone = [c['name'] for c in _data_controllers(facts)]
    assert gone
    facts['nvme']['controllers'] = [c for c in facts['nvme']['controllers'] if c['name'] not in gone]
    record = fn.node_record('n1', doc, now=NOW)
    assert record['row']['data_drives'] == 0 and record['row']['status'] == 'error'
    assert _absent(record) == ['no NVMe data drive in the facts (only the OS drive, or none)']
    # the same node with its drives: no such finding
    assert _absent(fn.node_record('n1', _doc(base), now=NOW)) == []


def test_drives_the_plan_selected_that_are_gone_are_named(base):
    doc = _doc(base)
    facts = doc['checkpoint_io']
    data = _data_controllers(facts)
    assert len(data) >= 2
    planned = [{'name': c['namespaces'][0], 'serial': c['serial']} for c in data]
    doc['checkpoint_io_plan'] = {'drives': {'selected': planned}}
    assert _absent(fn.node_record('n1', doc, now=NOW)) == []
    facts['nvme']['controllers'] = [c for c in facts['nvme']['controllers'] if c['name'] != data[0]['name']]
    record = fn.node_record('n1', doc, now=NOW)
    assert record['row']['status'] == 'error' and record['row']['data_drives'] == len(data) - 1
    assert _absent(record) == ['the plan selected %d data drives; not in the facts now: %s (%s)' % (
        len(data), data[0]['serial'], data[0]['namespaces'][0])]


def test_what_the_inventory_selection_names_but_the_facts_lack_is_named(base):
    doc = _doc(base)
    data = _data_controllers(doc['checkpoint_io'])
    doc['checkpoint_io_data_drives'] = {'serials': [data[0]['serial'], 'GONE0001']}
    record = fn.node_record('n1', doc, now=NOW)
    assert record['row']['status'] == 'error'
    assert _absent(record) == [
        "the inventory's checkpoint_io_data_drives names what the facts do not hold: serial GONE0001"]
    doc['checkpoint_io_data_drives'] = {'serials': [data[0]['serial']]}
    assert _absent(fn.node_record('n1', doc, now=NOW)) == []


def test_the_page_data_holds_the_rows_of_the_json_lines(tmp_path, monkeypatch):
    """The page's chunks hold the rows as found and the outliers apart (fleetOutliers); patched as the page does,
    they are the JSON Lines' rows, node for node, across chunks (of 40 nodes here)."""
    monkeypatch.setattr(fr, 'CHUNK', 40)
    cache = str(tmp_path / 'cache')
    fleet_cache.write_cache(cache, fr.CHUNK + 37, now=NOW)
    out = tmp_path / 'out'
    out.mkdir()
    result = fr.build(fr.CacheSource(cache), str(out), now=NOW)
    nodes = _nodes(result)
    chunks = _chunks(result)
    assert len(chunks) == fr.CHUNK + 37 == len(nodes)
    assert result['overview']['outliers'] >= 1
    for row, detail in chunks:
        row = dict(zip(fn.ROW_KEYS, row))
        node = nodes[row['host']]
        assert row == dict((k, node[k]) for k in fn.ROW_KEYS)
        assert [d[0] for d in detail['d']] == [d['name'] for d in node['drives']] and detail['t'] == node['thermal']
    summary = _summary(result)
    assert summary['fleet']['outliers'] == sum(1 for n in nodes.values() if n['outlier'])
    assert sum(g['nodes'] for g in summary['drift']['groups']) == summary['fleet']['drift_nodes']
