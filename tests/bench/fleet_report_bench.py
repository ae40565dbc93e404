# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the fleet report: for each fleet size, a synthetic jsonfile fact cache (tests/bench/fleet_cache.py)
is written, then the report is built from it as the fleet_report module does (module_utils/fleet/fleet_report.build), and
the time, the peak memory of the build (the maximum resident set of a process that only builds it) and the HTML
size are printed. What it asserts holds on a slow machine as on a fast one: the HTML of 10,000 nodes under 10 MB
(bytes do not depend on the machine), and the cost per node of the largest fleet at most SCALING times the cost per
node of the smallest, measured in the same run (the smallest built REPEATS times: its median, widened by the
spread of its repeats). The seconds are printed, never compared with a fixed bound.

    python tests/bench/fleet_report_bench.py                 # 1000 and 10000 nodes
    python tests/bench/fleet_report_bench.py --nodes 500 --keep /tmp/bench
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import shutil
import sys
import tempfile
import time
import json
import resource
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), 'collections'))

import fleet_cache  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report  # noqa: E402

HTML_BUDGET = 10 * 1000 * 1000
# The build streams one node at a time: its cost per node may not grow with the fleet by more than this (a build
# that turned quadratic would cost 10x per node at 10x the nodes).
SCALING = 1.5
REPEATS = 3
PLAN = {'checkpoint': 'llama3-405b', 'ranks_per_node': 8, 'window_s': 120, 'mtbf_hours': 50000}


def run(nodes, work, repeats=1):
    """Write a cache of ``nodes`` and build its report ``repeats`` times (each in a fresh process); the result
    of the median build, with every build's seconds in ``runs``."""
    cache = os.path.join(work, 'cache%d' % nodes)
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    started = time.time()
    fleet_cache.write_cache(cache, nodes)
    generated = time.time() - started
    results = []
    for _repeat in range(repeats):
        out = os.path.join(work, 'report%d' % nodes)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        child = subprocess.run([sys.executable, os.path.abspath(__file__), '--build', cache, out], check=True,
                               stdout=subprocess.PIPE, universal_newlines=True)
        results.append(json.loads(child.stdout))
    results.sort(key=lambda r: r['report_s'])
    result = results[len(results) // 2]
    runs = [r['report_s'] for r in results]
    result.update(nodes=nodes, cache_s=generated, runs=runs,
                  spread=(max(runs) - min(runs)) / result['report_s'] if result['report_s'] else 0.0)
    return result


def build(cache, out):
    """Build one report in this process; print its time, sizes and the process's peak resident memory."""
    started = time.time()
    result = fleet_report.build(fleet_report.iter_cache(cache), out, plan_args=PLAN, source=cache)
    took = time.time() - started
    print(json.dumps({'report_s': took, 'html_bytes': result['html_bytes'],
                      'json_bytes': os.path.getsize(result['paths']['json']),
                      'peak_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      'html': result['paths']['html']}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--nodes', type=int, action='append', help='fleet sizes (default 1000 and 10000)')
    parser.add_argument('--keep', help='work directory to keep (default: a temporary one, removed)')
    parser.add_argument('--build', nargs=2, metavar=('CACHE', 'OUT'), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build:
        build(*args.build)
        return 0
    work = args.keep or tempfile.mkdtemp(prefix='fleet_bench.')
    sizes = sorted(args.nodes or [1000, 10000])
    problems = []
    try:
        print('%8s %10s %10s %12s %12s %10s %14s' % (
            'nodes', 'cache s', 'report s', 'HTML bytes', 'JSON bytes', 'peak MiB', 'ms per node'))
        reference = None
        for nodes in sizes:
            r = run(nodes, work, repeats=REPEATS if reference is None and len(sizes) > 1 else 1)
            per_node = r['report_s'] / nodes
            print('%8d %10.1f %10.2f %12d %12d %10.1f %14.3f%s' % (
                nodes, r['cache_s'], r['report_s'], r['html_bytes'], r['json_bytes'], r['peak_mib'],
                per_node * 1000, '  (median of %s s, spread %.0f%%)' % (
                    ', '.join('%.2f' % t for t in r['runs']), r['spread'] * 100) if len(r['runs']) > 1 else ''))
            if nodes >= 10000 and r['html_bytes'] >= HTML_BUDGET:
                problems.append('the HTML of %d nodes is %d bytes: over %d' % (nodes, r['html_bytes'], HTML_BUDGET))
            if reference is None:
                reference = (nodes, per_node, r['spread'])
                continue
            ratio = per_node / reference[1]
            allowed = SCALING * (1 + reference[2])
            print('%8d nodes cost %.2fx per node what %d nodes cost (allowed: %.2f = %.1f x (1 + the spread %.0f%%))'
                  % (nodes, ratio, reference[0], allowed, SCALING, reference[2] * 100))
            if ratio > allowed:
                problems.append('%d nodes cost %.2fx per node what %d cost: over %.2f (the build no longer scales '
                                'linearly with the fleet)' % (nodes, ratio, reference[0], allowed))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for problem in problems:
        print('FAILED: ' + problem)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
