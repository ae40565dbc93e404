# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write an ansible jsonfile fact cache of N synthetic checkpoint nodes, made from a real node's facts.

The base is the facts the collection's collectors gather on the lab-shaped fake node of the unit tests
(tests/unit/checkpoint_io_fake_node.py: the lab node's sysfs, procfs and nvme-cli outputs; node_facts.gather_facts
runs on it), so every section has the real layout. Each synthetic node varies from it: drive count (2..8), serials,
temperatures (some throttled, some with a critical warning), GDS path (nvidia-fs, p2pdma, compat, unavailable),
block settings (some drifted from the targets), io_uring refused on a few, a depth sweep curve and a thermal time
series in its state records, the verification's before/after bandwidth (a few slow outliers), and some nodes with
missing sections, stale facts or no facts at all.

    python tests/bench/fleet_cache.py --nodes 10000 --out /tmp/cache        # 2.19 layout: s1_<host>, __payload__
    python tests/bench/fleet_cache.py --lab --out /tmp/labcache             # the lab fleet after a tune run

``--lab``: the two lab nodes (node1, node2) as after tune_checkpoint_nodes.yml: tuned settings, a sweep, a thermal
validation, the verification's before and after; node2's second data drive throttled in the thermal run (the lab's
knee8 model). Deterministic: the same arguments write the same files.
"""

from __future__ import absolute_import, division, print_function

import argparse
import copy
import json
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'collections'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'unit'))

GIB = 1024 ** 3
MIB = 1024 ** 2


def base_facts():
    """The facts node_facts.gather_facts returns on the lab-shaped fake node (every section)."""
    from checkpoint_io_fake_node import build_node, make_context, standard_runner
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import node_facts
    # the fake node lives for the gather only (removed after: each call used to leave one in /tmp)
    with tempfile.TemporaryDirectory(prefix='fleet_cache.') as tmp:
        node = build_node(tmp)
        ctx = make_context(node, standard_runner(node))
        facts = node_facts.gather_facts(ctx, {'gather_subset': ['all'], 'fio_probe': False,
                                              'state_dir': os.path.join(tmp, 'state')})
        return json.loads(json.dumps(facts))


def _curve(rng, ceiling_mib, latency_ms, ranks):
    out = []
    for depth in (1, 2, 4, 8, 16, 32, 64):
        share = 1.0 - 0.85 ** (depth * 1.7)
        bw = ceiling_mib * MIB * share * rng.uniform(0.97, 1.03)
        out.append({'depth': depth, 'aggregate_depth': depth * ranks, 'bw_bytes': int(bw),
                    'mean_ns': int(latency_ms * 1e6 * (1 + depth / 24.0)), 'p99_ns': int(latency_ms * 3e6),
                    'spread': round(rng.uniform(0.01, 0.06), 3)})
    return out


def _series(rng, names, seconds, start, hot):
    samples = []
    for i in range(0, seconds + 1, 2):
        drives = {}
        for j, name in enumerate(names):
            rise = (hot + 4 * j) * (1 - 0.93 ** i)
            drives[name] = {'temp_c': round(start + rise + rng.uniform(-0.4, 0.4), 2), 'temp_source': 'hwmon'}
        samples.append({'t': float(i), 'drives': drives})
    return samples


def synth(base, host, i, rng, now, lab=False):
    """One node's cached document (the facts and the verification), varied from ``base``."""
    facts = copy.deepcopy(base)
    stamp = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now - rng.uniform(60, 3000)))
    if not lab and rng.random() < 0.02:
        stamp = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now - 86400 * rng.uniform(2, 30)))   # stale
    facts['gathered_at'] = dict((k, stamp) for k in facts['gathered_at'])
    # drives: the OS drive and 2..8 data drives cloned from the fake node's first data drive
    ctrls, names = facts['nvme']['controllers'], facts['nvme']['namespaces']
    queues, temps = facts['block']['devices'], facts['thermal']['controllers']
    os_ctrl, data_ctrl = ctrls[0], ctrls[1]
    data_ns = dict((n['name'], n) for n in names)[data_ctrl['namespaces'][0]]
    data_q = dict((q['name'], q) for q in queues)[data_ctrl['namespaces'][0]]
    data_t = dict((t['name'], t) for t in temps)[data_ctrl['name']]
    count = 2 if lab else rng.choice((4, 8, 8, 8, 8, 8, 8, 8, 8, 8))
    new_ctrls, new_ns, new_q, new_t = [os_ctrl], [names[0]], [queues[0]], [temps[0]]
    drifted = not lab and rng.random() < 0.15
    for d in range(count):
        ctrl_name, ns_name = 'nvme%d' % (d + 1), 'nvme%dn1' % (d + 1)
        c = dict(copy.deepcopy(data_ctrl), name=ctrl_name, device='/dev/' + ctrl_name, namespaces=[ns_name],
                 serial='DATA%04d' % (d + 1) if lab else 'S%05dD%02d' % (i, d + 1))
        n = dict(copy.deepcopy(data_ns), name=ns_name, device='/dev/' + ns_name, controllers=[ctrl_name])
        q = dict(copy.deepcopy(data_q), name=ns_name, device='/dev/' + ns_name, scheduler='none', read_ahead_kb=1024)
        if drifted and d == 0:
            q.update(scheduler='mq-deadline', read_ahead_kb=128)
        t = copy.deepcopy(data_t)
        t.update(name=ctrl_name, composite_temp_c=round(rng.uniform(34, 58), 1), throttled=False,
                 throttle_reason=None, critical_warning=0)
        if (lab and i == 2 and d == 1) or (not lab and rng.random() < 0.01):
            t.update(composite_temp_c=round(rng.uniform(69, 74), 1), throttled=True,
                     throttle_reason='composite temperature at WCTEMP')
        if not lab and rng.random() < 0.002:
            t.update(critical_warning=2)
        new_ctrls.append(c)
        new_ns.append(n)
        new_q.append(q)
        new_t.append(t)
    facts['nvme']['controllers'], facts['nvme']['namespaces'] = new_ctrls, new_ns
    facts['block']['devices'], facts['thermal']['controllers'] = new_q, new_t
    facts['thermal']['throttled_controllers'] = [t['name'] for t in new_t if t['throttled']]
    # GDS, io_uring
    if not lab:
        path = rng.choice(('nvidia-fs', 'nvidia-fs', 'p2pdma', 'compat', 'unavailable'))
        facts['gds']['path'] = path
        facts['gds']['path_reason'] = 'synthetic node %d' % i
        facts['gds']['gpus'] = 0 if path == 'unavailable' else 8
        if rng.random() < 0.02:
            facts['io_uring']['allowed_for_user'] = False
            facts['io_uring']['allowed_reason'] = 'kernel.io_uring_disabled is 2'
    for fs in facts['xfs']['filesystems']:   # the xfs role's mount options (the fake node's md0 lacks two)
        fs['options'].update(largeio=True, swalloc=True)
    facts['io_uring']['kernel_release'] = '6.1.0-50-amd64' if lab else rng.choice(('6.1.0-50-amd64', '6.12.9-amd64'))
    # measurements in the state records: the sweep, the thermal series, the baseline
    ceiling = rng.uniform(1800, 2600) if not lab else 330.0
    latency = rng.uniform(0.8, 2.5) if not lab else 6.0
    ranks = 8 if not lab else 2
    data_names = [n['name'] for n in new_ns[1:]]
    sweep = {'curve': _curve(rng, ceiling * count, latency, ranks), 'knee': {'knee': 8}, 'per_rank_depth': 8,
             'device': data_names, 'block_size': MIB, 'ranks': ranks}
    hot = 30 if (lab and i == 2) else rng.uniform(6, 20)
    thermal = {'verdict': 'throttling' if any(t['throttled'] for t in new_t) else 'ok', 'duration_s': 60,
               'samples': _series(rng, data_names, 60 if lab else 30, 38.0, hot), 'ranks': ranks}
    facts['state']['records'] = {'depth_sweep': {'/mnt/checkpoints|1048576|%d' % ranks: sweep},
                                 'thermal_series': thermal}
    facts['state']['exists'] = True
    before = ceiling * count / 1024.0 * rng.uniform(0.35, 0.55)
    after = ceiling * count / 1024.0 * rng.uniform(0.85, 0.97)
    if not lab and rng.random() < 0.03:
        after = max(before * 1.05, after * rng.uniform(0.55, 0.75))   # an outlier: tuned, yet far below its peers
    verify = {'node': host, 'ranks': ranks, 'verdict': 'faster',
              'before': {'throughput_gib_s': {'median': round(before, 3), 'n': 3}},
              'after': {'throughput_gib_s': {'median': round(after, 3), 'n': 3}},
              'findings': []}
    if lab and i == 2:
        verify['findings'].append({'severity': 'warning', 'device': 'nvme2n1', 'message':
                                   'DATA0002 throttled to 30% under the sustained write',
                                   'fix': 'cool the drive; the thermal back-off (per-rank depth 8 -> 3) is in force'})
    doc = {'checkpoint_io': facts, 'checkpoint_io_verify': verify}
    if lab or rng.random() < 0.5:   # compression_readiness.yml's fact (its projection)
        doc['checkpoint_io_compression'] = {'projection': {
            'codec': 'huffman', 'ratio': round(rng.uniform(1.15, 1.35), 4), 'bound': 'compress'}}
    if not lab:
        roll = rng.random()
        if roll < 0.01:
            return {'discovered_interpreter_python': '/usr/bin/python3'}   # never gathered
        if roll < 0.03:
            for section in ('gds', 'deepspeed', 'xfs'):
                facts.pop(section, None)
                facts['gathered_at'].pop(section, None)
        if rng.random() < 0.001:
            host_marker = '<img src=x onerror=alert(1)>'
            facts['nvme']['controllers'][1]['model'] = host_marker   # markup in a fact: must show as text
    return doc


def write_cache(out, nodes, seed=16, lab=False, prefix='node', now=None):
    """Write the cache files; returns the host names."""
    base = base_facts()
    rng = random.Random(seed)
    now = now or time.time()
    if not os.path.isdir(out):
        os.makedirs(out)
    hosts = []
    for i in range(1, (2 if lab else nodes) + 1):
        host = '%s%d' % (prefix, i) if lab else '%s%05d' % (prefix, i)
        doc = synth(base, host, i, rng, now, lab)
        with open(os.path.join(out, 's1_' + host), 'w') as handle:
            json.dump({'__payload__': json.dumps(doc, separators=(',', ':'))}, handle)
        hosts.append(host)
    return hosts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--out', required=True)
    parser.add_argument('--seed', type=int, default=16)
    parser.add_argument('--lab', action='store_true', help='the two lab nodes after a tune run')
    args = parser.parse_args(argv)
    hosts = write_cache(args.out, args.nodes, args.seed, args.lab)
    print('%d hosts written to %s' % (len(hosts), args.out))


if __name__ == '__main__':
    main()
