#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fleet_report
short_description: Write the fleet report (a page, JSON Lines, CSV) from a fact cache, on the controller
version_added: 0.3.0
description:
  - >-
    Reads one document per host from a directory laid out like ansible's C(ansible.builtin.jsonfile) fact cache
    (2.19's C(s1_<host>) files with C(__payload__), or plain C(<host>) files; the fleet_report role writes the same
    from live facts or from any configured cache plugin, C(community.general.redis) included), each read and
    decoded once by O(workers) processes, and writes on the machine it runs on (the controller - run it with
    C(delegate_to: localhost) and C(run_once: true)), streaming, its memory bounded by a node and not by the fleet
    (schema C(ai_storage.checkpoint_io.fleet_report), version 2, described in docs/fleet_report_schema.md)
    C(<name>.json) (the summary - the overview, the plan, the changes, the drift groups, the worst nodes),
    C(<name>_nodes.jsonl.xz) (one JSON object per node, its drives, drift, findings and depth curve),
    C(<name>_nodes.csv.gz) (one row per node), C(<name>.html) (a page that opens from disk with the summary and finds
    a node by name) and C(<name>_data.js) (the page's node details, deflated in chunks, loaded when a node is
    looked up).
  - A host's document holds C(checkpoint_io) (the facts of M(ai_storage.checkpoint_io.checkpoint_io_facts); the
    state records give the depth sweep, the thermal series and the baseline), optionally C(checkpoint_io_verify)
    (the verification's report; also read from O(verify_dir)), C(checkpoint_io_compression) (compression readiness;
    also read from O(compression_dir)) and C(fleet_report_targets) (the host's targets).
  - Drift is every setting a role manages, found against the target (O(targets) over the role defaults, the host's
    own C(fleet_report_targets) over both).
  - The logic is in module_utils/fleet/fleet_report.py (the page in fleet_report_html.py), the planner's in planner.py.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Builds the report in a temporary directory, returns its summary and removes it; O(out_dir) is untouched.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  cache_dir:
    description: The fact cache directory (absolute), one file per host.
    type: path
    required: true
  cache_prefix:
    description: The cache plugin's C(prefix) (the files' names start with it).
    type: str
    default: ''
  out_dir:
    description:
      - The directory the report is written to (absolute; made when missing).
      - It must not be a symlink, must belong to the user running the module or root, and must not be writable by
        its group or others; every ancestor must belong to that user or root and be writable by others only with
        the sticky bit (as C(/tmp)). Each file is written to a new file with a random name (C(O_EXCL)) and renamed
        over the report's name, so a link planted in the directory is replaced, never followed.
      - CSV cells never hold a line break or control character, and a cell starting with C(=), C(+), C(-) or
        C(@) (a formula to a spreadsheet) is written behind a single quote.
      - A host whose cached facts cannot be read or reported (not JSON, C(NaN) or C(Infinity), a value of the wrong
        kind) is reported by name with an error; the other hosts are reported as usual.
    type: path
    required: true
  name:
    description: The files' base name (letters, digits, C(_), C(-), C(.); at most 100).
    type: str
    default: fleet_report
  title:
    description: The page's title.
    type: str
    default: Checkpoint I/O fleet report
  targets:
    description:
      - The targets of the managed settings, by role variable (C(block_layer_scheduler), C(block_layer_read_ahead),
        C(block_layer_nr_requests), C(block_layer_max_sectors_kb), C(block_layer_nomerges), C(block_layer_rq_affinity),
        C(deepspeed_config_queue_depth), C(deepspeed_config_block_size), C(deepspeed_config_intra_op_parallelism),
        C(deepspeed_config_single_submit), C(deepspeed_config_overlap_events), C(xfs_mount_options),
        C(io_uring_engine_allowed)); the role defaults for the rest. V(null) - not compared.
    type: dict
    default: {}
  plan:
    description:
      - The planner's arguments (filter P(ai_storage.checkpoint_io.checkpoint_plan#filter)) - C(checkpoint) (a size
        or a preset), C(ranks_per_node), C(window_s), and optionally C(mtbf_hours), C(nodes),
        C(accelerators_per_node), C(block_size), C(drive_mib_s) and C(latency_ms) (by default the fleet's median
        sweep ceiling per drive and latency), C(now_mib_s) and C(tuned_mib_s) (by default the slowest node's
        verification before and after), and the drives' rated endurance (C(drive_tbw), or C(drive_dwpd) with
        C(drive_capacity) and C(warranty_years)) with C(interval_s) for what the checkpoints cost the drives.
        Empty - no plan.
    type: dict
    default: {}
  previous:
    description:
      - A previous report's C(<name>.json) (its C(<name>_nodes.jsonl.xz) beside it; or a schema 1 report's JSON); the
        page and the summary show what changed since (new, gone and changed nodes, counted, the first 1000 named).
    type: path
  workers:
    description:
      - Processes that read and decode the cache's files (the build is CPU-bound there); V(0) - one per CPU of the
        controller, at most 8. V(1) reads them in the module's own process.
    type: int
    default: 0
  verify_dir:
    description: A directory of the verification's C(<host>.json) reports (the verification role's C(verify/)).
    type: path
  compression_dir:
    description:
      - A directory of compression readiness results, C(<host>.json) (playbooks/compression_readiness.yml's
        C(compression/) beside C(verify/)); a host's document's own C(checkpoint_io_compression) comes first.
    type: path
  run_dir:
    description:
      - A directory of run documents, C(<host>.json) (C(tune_checkpoint_nodes.yml)'s C(run/) beside C(verify/)) -
        what each node's last run wrote to each drive, its share of the drive's rated endurance, and which
        measurements it reused. The rows' C(run_written_gib), C(run_rated_share) and C(reused), each drive's
        C(run_bytes) and C(run_share), and the overview's C(run_writes) come from it.
    type: path
  stale_hours:
    description: Facts older than this (hours) are stale (above 0, at most 87600; a number, not a boolean).
    type: raw
    default: 24
  outlier_fraction:
    description:
      - A node below this fraction of the median bandwidth of the nodes with as many drives is an outlier (above 0,
        at most 1; a number, not a boolean).
    type: raw
    default: 0.8
'''

EXAMPLES = r'''
- name: Fleet report from the jsonfile fact cache, without contacting any host
  ai_storage.checkpoint_io.fleet_report:
    cache_dir: /var/cache/ansible/facts
    out_dir: /srv/reports/fleet
    plan: {checkpoint: llama3-70b, ranks_per_node: 8, window_s: 60, mtbf_hours: 20000}
  delegate_to: localhost
  run_once: true
'''

RETURN = r'''
paths:
  description: The files written (keys html, data, json, nodes, nodes_csv); empty in check mode.
  returned: always
  type: dict
  sample: {html: /srv/reports/fleet/fleet_report.html, data: /srv/reports/fleet/fleet_report_data.js,
           json: /srv/reports/fleet/fleet_report.json, nodes: /srv/reports/fleet/fleet_report_nodes.jsonl.xz,
           nodes_csv: /srv/reports/fleet/fleet_report_nodes.csv.gz}
nodes:
  description: Hosts in the report.
  returned: always
  type: int
  sample: 10000
html_bytes:
  description: The page's size (its summary; the node details are in the data file).
  returned: always
  type: int
  sample: 120000
overview:
  description: The fleet's overview (the JSON's C(fleet)).
  returned: always
  type: dict
plan:
  description: The planner's result (with C(line)), C({error}) where it refused, V(null) without O(plan).
  returned: always
  type: dict
drift:
  description:
    - The drift groups - nodes that drifted the same way (C(settings), each C(layer), C(setting), C(found),
      C(target)), their C(nodes), C(drifted_settings) and first C(hosts), the largest 100 - with C(signatures)
      (how many ways) and C(other_nodes) (nodes in ways past the first 2000 counted).
  returned: always
  type: dict
changes:
  description: What changed since O(previous) (C(new_nodes), C(gone_nodes), C(changed), counts); V(null) without it.
  returned: always
  type: dict
summary:
  description: The console summary, one line each (counts, the worst nodes, the largest drift group, the plan).
  returned: always
  type: list
  elements: str
'''

import math
import os
import re
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_node, fleet_report, planner
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import units

NAME_RE = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$')


def _number(value):
    """A float option: booleans, NaN and infinities refused (AnsibleModule's float takes True as 1.0)."""
    if isinstance(value, bool):
        raise TypeError('%r is a boolean, not a number' % (value,))
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError('%r is not a number' % (value,))
    if math.isnan(number) or math.isinf(number):
        raise ValueError('%r is not a finite number' % (value,))
    return number


def _owner_problem(path, info, what):
    """Why a directory on the way to the report is unsafe: someone other than this user or root owns it, or others
    may write in it without the sticky bit (they could rename what is in it, or plant the next component)."""
    if info.st_uid not in (0, os.geteuid()):
        return 'out_dir: %s %r belongs to uid %d, not to this user (uid %d) or root' % (
            what, path, info.st_uid, os.geteuid())
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        return 'out_dir: %s %r is writable by its group or every user (mode %o) without the sticky bit' % (
            what, path, stat.S_IMODE(info.st_mode))
    return None


def out_dir_problem(path):
    """Why the report must not be written in ``path`` (None when it may): a symlink, not a directory, a directory
    another user owns or its group or others can write, or an ancestor another user owns or others can write
    without the sticky bit. A directory yet to be made is judged by the ancestors that exist."""
    try:
        units.check_path_limits(path, 'out_dir')
    except ValueError as exc:
        return str(exc)
    path = os.path.normpath(path)
    try:
        info = os.lstat(path)
    except OSError:
        info = None
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            return 'out_dir: %r is a symlink; name the directory itself' % path
        if not stat.S_ISDIR(info.st_mode):
            return 'out_dir: %r exists and is not a directory' % path
        problem = _owner_problem(path, info, 'the directory')
        if problem:
            return problem
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return 'out_dir: %r is writable by its group or every user (mode %o); use a directory only its owner ' \
                   'writes' % (path, stat.S_IMODE(info.st_mode))
    # the ancestors as they are reached (links resolved: a link is as safe as the directories it leads through)
    parent = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    while parent != os.path.dirname(parent):
        parent = os.path.dirname(parent)
        try:
            above = os.lstat(parent)
        except OSError:
            continue  # made by this run (os.makedirs), from the nearest ancestor that exists
        problem = _owner_problem(parent, above, 'its ancestor')
        if problem:
            return problem
    return None


def plan_problem(plan):
    """The planner's refusal of the plan's arguments (measurements it may take from the fleet stand in)."""
    if not plan:
        return None
    args = dict(plan)
    if 'checkpoint' not in args:
        return 'plan: checkpoint is required (a size or one of %s)' % ', '.join(sorted(planner.PRESETS))
    checkpoint = args.pop('checkpoint')
    args.setdefault('drive_mib_s', 1)
    args.setdefault('latency_ms', 1)
    try:
        planner.plan(checkpoint, **args)
    except TypeError as exc:
        return 'plan: %s' % exc
    except ValueError as exc:
        return 'plan: %s' % exc
    return None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            cache_dir=dict(type='path', required=True),
            cache_prefix=dict(type='str', default=''),
            out_dir=dict(type='path', required=True),
            name=dict(type='str', default='fleet_report'),
            title=dict(type='str', default='Checkpoint I/O fleet report'),
            targets=dict(type='dict', default={}),
            plan=dict(type='dict', default={}),
            previous=dict(type='path'),
            verify_dir=dict(type='path'),
            compression_dir=dict(type='path'),
            run_dir=dict(type='path'),
            stale_hours=dict(type='raw', default=24.0),
            outlier_fraction=dict(type='raw', default=0.8),
            workers=dict(type='int', default=0),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for key in ('stale_hours', 'outlier_fraction'):
        try:
            p[key] = _number(p[key])
        except (TypeError, ValueError) as exc:
            module.fail_json(msg='%s: %s' % (key, exc))
    for key in ('cache_dir', 'out_dir', 'previous', 'verify_dir', 'compression_dir', 'run_dir'):
        if p[key] is not None and not os.path.isabs(p[key]):
            module.fail_json(msg='%s: %r is not an absolute path' % (key, p[key]))
    for key in ('cache_dir', 'previous', 'verify_dir', 'compression_dir', 'run_dir'):
        if p[key] is not None:
            try:
                units.check_path_limits(p[key], key)
            except ValueError as exc:
                module.fail_json(msg=str(exc))
    problem = out_dir_problem(p['out_dir']) or plan_problem(p['plan'])
    if problem:
        module.fail_json(msg=problem)
    if not os.path.isdir(p['cache_dir']):
        module.fail_json(msg='cache_dir: %r is not a directory' % p['cache_dir'])
    for key in ('verify_dir', 'compression_dir', 'run_dir'):
        if p[key] is not None and not os.path.isdir(p[key]):
            module.fail_json(msg='%s: %r is not a directory' % (key, p[key]))
    if not NAME_RE.match(p['name'] or '') or p['name'] in ('.', '..'):
        module.fail_json(msg='name: %r must be letters, digits, _ - . (at most 100, not . or ..)' % (p['name'],))
    if not 0 < p['stale_hours'] <= 24 * 3650:
        module.fail_json(msg='stale_hours: %r must be above 0 and at most 87600' % p['stale_hours'])
    if not 0 < p['outlier_fraction'] <= 1:
        module.fail_json(msg='outlier_fraction: %r must be above 0 and at most 1' % p['outlier_fraction'])
    if isinstance(p['workers'], bool) or not 0 <= p['workers'] <= 64:
        module.fail_json(msg='workers: %r must be 0 (one per CPU) to 64' % p['workers'])
    workers = p['workers'] or min(8, os.cpu_count() or 1)
    unknown = sorted(set(p['targets']) - set(fleet_node.DEFAULT_TARGETS))
    if unknown:
        module.fail_json(msg='targets: unknown settings %s (known: %s)' % (
            ', '.join(unknown), ', '.join(sorted(fleet_node.DEFAULT_TARGETS))))
    previous = None
    if p['previous']:
        try:
            previous = fleet_report.read_previous(p['previous'])
        except (ValueError, OSError, UnicodeDecodeError, EOFError) as exc:
            module.fail_json(msg='previous: %r is not a fleet report\'s JSON: %s' % (p['previous'], exc))
    out_dir = p['out_dir']
    scratch = None
    try:
        if module.check_mode:
            scratch = out_dir = tempfile.mkdtemp(prefix='fleet_report.')
        elif not os.path.isdir(out_dir):
            os.makedirs(out_dir, 0o755)
            problem = out_dir_problem(out_dir)  # made now: its own, unless another user raced to make it first
            if problem:
                module.fail_json(msg=problem)
        result = fleet_report.build(
            fleet_report.CacheSource(p['cache_dir'], p['cache_prefix']), out_dir, name=p['name'],
            targets=p['targets'], plan_args=p['plan'], previous=previous, stale_hours=p['stale_hours'],
            outlier_fraction=p['outlier_fraction'], verify_dir=p['verify_dir'], title=p['title'],
            source=p['cache_dir'], compression_dir=p['compression_dir'], workers=workers,
            run_dir=p['run_dir'])
    except (OSError, ValueError) as exc:
        module.fail_json(msg='fleet report: %s' % exc)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    if scratch:
        result['paths'] = {}
    module.exit_json(changed=True, paths=result['paths'], nodes=result['nodes'],
                     html_bytes=result['html_bytes'], overview=result['overview'], plan=result['plan'],
                     changes=result['changes'], drift=result['drift'], summary=result['summary'])


if __name__ == '__main__':
    main()
