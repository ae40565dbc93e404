# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the fleet report: for each fleet size, a synthetic jsonfile fact cache (tests/bench/fleet_cache.py)
is written, then the report is built from it as the fleet_report module does (module_utils/fleet/fleet_report.build
over a CacheSource, one worker process per CPU, at most 8), in a process that only builds it; its time, the peak
resident memory of that process and of its largest worker, and every output's size are printed.

What it asserts holds on a slow machine as on a fast one, comparing what one run measured: all the output of a
fleet of 10,000 nodes or more at most BYTES_PER_NODE bytes a node (50 MB for 100,000 nodes; bytes do not depend on
the machine), the page itself under PAGE_BYTES whatever the fleet, the cost per node of the largest fleet at most
SCALING times the cost per node of the smallest (the smallest built REPEATS times: its median, widened by the
spread of its repeats), and the peak memory (the build's process and its largest worker together) of the largest
fleet at most MEMORY_GROWTH times the smallest's, again when the largest is built a second time compared with its
first report (the changes since a previous report: none, its nodes read alongside, not held). The seconds are
printed, never compared with a fixed bound. --open also times opening each page in headless Chromium (Debian's,
through Playwright) until its summary shows, printed only.

    python tests/bench/fleet_report_bench.py                      # 1000 and 10000 nodes
    python tests/bench/fleet_report_bench.py --nodes 10000 --nodes 100000 --open
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

BYTES_PER_NODE = 500
PAGE_BYTES = 1000 * 1000
# The build streams one node at a time: its cost per node may not grow with the fleet by more than this (a build
# that turned quadratic would cost 10x per node at 10x the nodes), nor its memory by more than MEMORY_GROWTH.
SCALING = 1.5
MEMORY_GROWTH = 1.2
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


def run_again(nodes, work):
    """Build the report of ``nodes`` again, compared with the one run() left (the changes since a previous report:
    its nodes read alongside, line by line)."""
    out = os.path.join(work, 'again%d' % nodes)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    child = subprocess.run([sys.executable, os.path.abspath(__file__), '--build', os.path.join(work, 'cache%d' % nodes),
                            out, os.path.join(work, 'report%d' % nodes, 'fleet_report.json')], check=True,
                           stdout=subprocess.PIPE, universal_newlines=True)
    return json.loads(child.stdout)


def build(cache, out, previous=None):
    """Build one report in this process (compared with the report ``previous`` names, if any); print its time, the
    files' sizes, the peak resident memory of this process and of its largest worker."""
    started = time.time()
    result = fleet_report.build(fleet_report.CacheSource(cache), out, plan_args=PLAN, source=cache,
                                workers=min(8, os.cpu_count() or 1), previous=fleet_report.read_previous(previous))
    took = time.time() - started
    print(json.dumps({'report_s': took, 'bytes': dict((k, os.path.getsize(v)) for k, v in result['paths'].items()),
                      'peak_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      'worker_peak_mib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0,
                      'html': result['paths']['html'],
                      'changed': None if result['changes'] is None else sum(
                          result['changes'][k] for k in ('new_count', 'gone_count')) + len(
                              result['changes']['changed'])}))


def open_seconds(html):
    """Seconds from navigating headless Chromium to the page until its summary's cards show."""
    from playwright.sync_api import sync_playwright
    os.environ.setdefault('PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD', '1')
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path='/usr/bin/chromium', headless=True, args=['--no-sandbox'])
        page = browser.new_page()
        started = time.time()
        page.goto('file://' + html)
        page.wait_for_selector('#cards .card')
        took = time.time() - started
        browser.close()
    return took


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--nodes', type=int, action='append', help='fleet sizes (default 1000 and 10000)')
    parser.add_argument('--keep', help='work directory to keep (default: a temporary one, removed)')
    parser.add_argument('--open', action='store_true', help='also time opening each page in headless Chromium')
    parser.add_argument('--build', nargs='+', metavar='CACHE OUT [PREVIOUS]', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build:
        build(*args.build)
        return 0
    work = args.keep or tempfile.mkdtemp(prefix='fleet_bench.')
    sizes = sorted(args.nodes or [1000, 10000])
    problems = []
    try:
        print('%8s %9s %9s %11s %11s %11s %10s %11s %9s %9s %10s %8s' % (
            'nodes', 'cache s', 'build s', 'ms a node', 'page', 'data file', 'JSON', 'JSON Lines', 'CSV',
            'all', 'bytes/node', 'peak MiB'))
        reference = None
        for nodes in sizes:
            r = run(nodes, work, repeats=REPEATS if reference is None and len(sizes) > 1 else 1)
            per_node = r['report_s'] / nodes
            sizes_of = r['bytes']
            total = sum(sizes_of.values())
            peak = r['peak_mib'] + r['worker_peak_mib']
            print('%8d %9.1f %9.2f %11.3f %11d %11d %10d %11d %9d %9d %10.0f %8.1f%s' % (
                nodes, r['cache_s'], r['report_s'], per_node * 1000, sizes_of['html'], sizes_of['data'],
                sizes_of['json'], sizes_of['nodes'], sizes_of['nodes_csv'], total, total / float(nodes), peak,
                '  (median of %s s, spread %.0f%%)' % (', '.join('%.2f' % t for t in r['runs']), r['spread'] * 100)
                if len(r['runs']) > 1 else ''))
            print('%8s peak MiB: the build %.1f + its largest worker %.1f' % ('', r['peak_mib'], r['worker_peak_mib']))
            if args.open:
                print('%8s the page opened in headless Chromium in %.2f s' % ('', open_seconds(r['html'])))
            if nodes >= 10000 and total > BYTES_PER_NODE * nodes:   # below, the summary and the page weigh in
                problems.append('the output of %d nodes is %d bytes: over %d a node' % (nodes, total, BYTES_PER_NODE))
            if sizes_of['html'] > PAGE_BYTES:
                problems.append('the page of %d nodes is %d bytes: over %d' % (nodes, sizes_of['html'], PAGE_BYTES))
            if reference is None:
                reference = (nodes, per_node, r['spread'], peak)
                continue
            ratio = per_node / reference[1]
            allowed = SCALING * (1 + reference[2])
            print('%8d nodes cost %.2fx per node what %d nodes cost (allowed: %.2f = %.1f x (1 + the spread %.0f%%)); '
                  'peak memory %.2fx (allowed %.1f)' % (
                      nodes, ratio, reference[0], allowed, SCALING, reference[2] * 100, peak / reference[3],
                      MEMORY_GROWTH))
            if ratio > allowed:
                problems.append('%d nodes cost %.2fx per node what %d cost: over %.2f (the build no longer scales '
                                'linearly with the fleet)' % (nodes, ratio, reference[0], allowed))
            if peak > MEMORY_GROWTH * reference[3]:
                problems.append('%d nodes took %.1f MiB at the peak, %.2fx what %d took: over %.1f (the memory grows '
                                'with the fleet)' % (nodes, peak, peak / reference[3], reference[0], MEMORY_GROWTH))
        if reference is not None:
            nodes = sizes[-1]
            r = run_again(nodes, work)
            peak = r['peak_mib'] + r['worker_peak_mib']
            print('%8d nodes again, compared with their first report: %.2f s, %d nodes changed, peak MiB %.1f '
                  '(the build %.1f + its largest worker %.1f): %.2fx what %d nodes took without one (allowed %.1f)' % (
                      nodes, r['report_s'], r['changed'], peak, r['peak_mib'], r['worker_peak_mib'],
                      peak / reference[3], reference[0], MEMORY_GROWTH))
            if r['changed']:
                problems.append('%d nodes built again from one cache: %d changed' % (nodes, r['changed']))
            if peak > MEMORY_GROWTH * reference[3]:
                problems.append('%d nodes compared with a previous report took %.1f MiB at the peak, %.2fx what %d '
                                'took: over %.1f (the previous report is held, not read alongside)' % (
                                    nodes, peak, peak / reference[3], reference[0], MEMORY_GROWTH))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for problem in problems:
        print('FAILED: ' + problem)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
