# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the fleet report: for each fleet size, a synthetic jsonfile fact cache (tests/bench/fleet_cache.py)
is written, then the report is built from it as the fleet_report module does (module_utils/fleet_report.build), and
the time, the peak memory of the build (the maximum resident set of a process that only builds it) and the HTML
size are printed. Budgets (issue 16): 1,000 nodes under 10 s, 10,000 under 60 s, the HTML of 10,000 under 10 MB.

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
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils import fleet_report  # noqa: E402

BUDGET_S = {1000: 10.0, 10000: 60.0}
HTML_BUDGET = 10 * 1000 * 1000
PLAN = {'checkpoint': 'llama3-405b', 'ranks_per_node': 8, 'window_s': 120, 'mtbf_hours': 50000}


def run(nodes, work):
    cache, out = os.path.join(work, 'cache%d' % nodes), os.path.join(work, 'report%d' % nodes)
    for path in (cache, out):
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
    started = time.time()
    fleet_cache.write_cache(cache, nodes)
    generated = time.time() - started
    child = subprocess.run([sys.executable, os.path.abspath(__file__), '--build', cache, out], check=True,
                           stdout=subprocess.PIPE, universal_newlines=True)
    result = json.loads(child.stdout)
    result.update(nodes=nodes, cache_s=generated)
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
    failed = False
    try:
        print('%8s %10s %10s %12s %12s %10s  %s' % (
            'nodes', 'cache s', 'report s', 'HTML bytes', 'JSON bytes', 'peak MiB', 'budget'))
        for nodes in args.nodes or [1000, 10000]:
            r = run(nodes, work)
            budget = BUDGET_S.get(nodes)
            ok = (budget is None or r['report_s'] < budget) and (nodes < 10000 or r['html_bytes'] < HTML_BUDGET)
            failed = failed or not ok
            print('%8d %10.1f %10.2f %12d %12d %10.1f  %s' % (
                nodes, r['cache_s'], r['report_s'], r['html_bytes'], r['json_bytes'], r['peak_mib'],
                ('within' if ok else 'OVER') + (' (%g s%s)' % (budget, ', 10 MB' if nodes >= 10000 else '')
                                                if budget else '')))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
