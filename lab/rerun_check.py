# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The three runs of ``LAB_DEMO_RERUN=1 lab/demo.sh`` checked against issue 34's "re-measure only when something
changed": run 1 tunes a blank node, run 2 has nothing changed, run 3 has one more rank.

Each run's directory (``<state>/runs/<n>/``) holds the playbook's run documents (``<node>.json``: what the run
wrote to each drive, from the block layer's sectors written between its first gather and its summary, and each
measurement measured or reused) and ``wall`` (the playbook's start and end, seconds). Checks, per node:
- run 2 took at most 0.3 of run 1's wall time and wrote at most 1% of run 1's bytes to the data drives, and
  reused every measurement it records (the sweep, the thermal validation, the verification, the io_uring check);
- run 3 measured again what depends on the ranks (the sweep, the thermal validation, the verification), each
  saying that the ranks changed.
Prints every figure; exit status 1 when a check fails.
"""

import json
import os
import sys

MIB = 1024 * 1024
WALL_SHARE = 0.3
BYTES_SHARE = 0.01
RANK_DEPENDENT = ('sweep', 'thermal', 'verification')


def load(runs_dir, number):
    folder = os.path.join(runs_dir, str(number))
    with open(os.path.join(folder, 'wall')) as handle:
        start, end = (float(v) for v in handle.read().split())
    docs = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith('.json'):
            with open(os.path.join(folder, name)) as handle:
                docs[name[:-5]] = json.load(handle)
    return end - start, docs


def written(doc):
    """Bytes the run wrote to its drives (every drive the run document counts; None where one is not known)."""
    values = [entry.get('bytes') for entry in doc.get('run_writes') or []]
    return None if any(v is None for v in values) else sum(values)


def check(runs_dir):
    failures = []
    wall = {}
    docs = {}
    for number in (1, 2, 3):
        wall[number], docs[number] = load(runs_dir, number)
        print('run %d: %.1f s' % (number, wall[number]))
    share = wall[2] / wall[1]
    print('run 2 / run 1 wall time: %.3f (bound %.1f)' % (share, WALL_SHARE))
    if share > WALL_SHARE:
        failures.append('run 2 took %.3f of run 1\'s wall time, above %.1f' % (share, WALL_SHARE))
    for node, first in sorted(docs[1].items()):
        second, third = docs[2].get(node) or {}, docs[3].get(node) or {}
        before, again = written(first), written(second)
        print('%s: run 1 wrote %s MiB, run 2 %s MiB to its drives' % (
            node, None if before is None else round(before / MIB, 1), None if again is None else round(again / MIB, 3)))
        for entry in second.get('run_writes') or []:
            print('  run 2: %s' % entry.get('line'))
        if before is None or again is None or before == 0:
            failures.append('%s: the bytes the runs wrote are not known (%s / %s)' % (node, before, again))
        elif again > BYTES_SHARE * before:
            failures.append('%s: run 2 wrote %.4f of run 1\'s bytes, above %.2f' % (node, again / before, BYTES_SHARE))
        else:
            print('  run 2 / run 1 bytes: %.5f (bound %.2f)' % (again / float(before), BYTES_SHARE))
        for label, decision in sorted((second.get('measurements') or {}).items()):
            print('  run 2 %s' % decision.get('line'))
            if not decision.get('reuse'):
                failures.append('%s: run 2 measured %s again: %s' % (node, label, decision.get('reason')))
        if not second.get('measurements'):
            failures.append('%s: run 2 recorded no measurement decision' % node)
        for label in RANK_DEPENDENT:
            decision = (third.get('measurements') or {}).get(label) or {}
            print('  run 3 %s' % decision.get('line'))
            # the decision's changed list holds every difference (its reason names the first six)
            if decision.get('reuse') is not False or not any(
                    change.split(' ', 1)[0].split('.')[-1] == 'ranks' for change in decision.get('changed') or []):
                failures.append('%s: run 3 (one more rank) did not measure %s again for the ranks: %s'
                                % (node, label, decision.get('reason')))
    for failure in failures:
        print('FAIL: ' + failure)
    print('rerun check: %s' % ('FAILED' if failures else 'passed'))
    return not failures


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: rerun_check.py RUNS_DIR')
    sys.exit(0 if check(sys.argv[1]) else 1)
