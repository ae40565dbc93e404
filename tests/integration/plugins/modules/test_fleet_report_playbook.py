# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/fleet_report.yml for real (ansible-playbook, no host contacted): from a jsonfile cache read directly,
and from the facts the hosts already have through ansible's own jsonfile cache plugin, with a host's inventory
target making drift; check mode writes nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import lzma
import os
import subprocess
import sys

from testenv import ROOT

sys.path.insert(0, os.path.join(ROOT, 'tests', 'bench'))
import fleet_cache  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOK = os.path.join(ROOT, 'playbooks', 'fleet_report.yml')


INVENTORY = ('[checkpoint_nodes]\nnode1 ansible_host=192.0.2.1\n'
             'node2 ansible_host=192.0.2.2 block_layer_scheduler=mq-deadline\n')


def _play(tmp_path, extra, env=None, check=False, inventory_text=INVENTORY):
    inventory = tmp_path / 'inventory.ini'
    inventory.write_text(inventory_text)
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', str(inventory), PLAYBOOK,
            '-e', json.dumps(extra)] + (['--check'] if check else [])
    run = subprocess.run(argv, cwd=ROOT, env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    return run.stdout


FILES = ['fleet_report.html', 'fleet_report.json', 'fleet_report_data.js', 'fleet_report_nodes.csv.gz',
         'fleet_report_nodes.jsonl.xz']


def _nodes(path):
    """{host: node} of the report whose summary is ``path`` (its JSON Lines beside it)."""
    with open(path) as handle:
        lines = os.path.join(os.path.dirname(path), json.load(handle)['files']['nodes'])
    with lzma.open(lines, 'rt', encoding='utf-8') as handle:
        return dict((n['host'], n) for n in map(json.loads, handle))


def test_from_a_cache_directory_and_from_cached_facts(tmp_path):
    cache = str(tmp_path / 'cache')
    fleet_cache.write_cache(cache, 2, lab=True)
    out = str(tmp_path / 'direct')
    log = _play(tmp_path, {'fleet_report_source': 'cache', 'fleet_report_cache_dir': cache, 'fleet_report_dir': out})
    assert '2 nodes, 4 data drives' in log and 'worst: node2' in log
    assert sorted(os.listdir(out)) == FILES
    assert _nodes(os.path.join(out, 'fleet_report.json'))['node2']['drift'] == []   # the cache has no inventory
    # the facts the hosts already have (ansible's jsonfile cache plugin): node2's inventory asks for mq-deadline
    out = str(tmp_path / 'facts')
    scratch = tmp_path / 'tmp'
    scratch.mkdir()
    _play(tmp_path, {'fleet_report_source': 'facts', 'fleet_report_dir': out},
          env={'ANSIBLE_CACHE_PLUGIN': 'jsonfile', 'ANSIBLE_CACHE_PLUGIN_CONNECTION': cache, 'TMPDIR': str(scratch)})
    nodes = _nodes(os.path.join(out, 'fleet_report.json'))
    assert nodes['node1']['drift'] == [] and nodes['node2']['drifted'] == 2
    assert [(x['item'], x['found'], x['target']) for x in nodes['node2']['drift']] == [
        ('nvme1n1', 'none', 'mq-deadline'), ('nvme2n1', 'none', 'mq-deadline')]
    # the host documents went to a private directory of the run, removed after: only the report is left
    assert sorted(os.listdir(out)) == FILES
    assert [n for n in os.listdir(str(scratch)) if n.startswith('fleet_report')] == []
    # a host gone from the inventory since is not in the next report (no document of an earlier run is read)
    _play(tmp_path, {'fleet_report_source': 'facts', 'fleet_report_dir': out},
          env={'ANSIBLE_CACHE_PLUGIN': 'jsonfile', 'ANSIBLE_CACHE_PLUGIN_CONNECTION': cache},
          inventory_text='[checkpoint_nodes]\nnode1 ansible_host=192.0.2.1\n')
    assert sorted(_nodes(os.path.join(out, 'fleet_report.json'))) == ['node1']


def test_check_mode_writes_no_report(tmp_path):
    cache = str(tmp_path / 'cache')
    fleet_cache.write_cache(cache, 2, lab=True)
    out = str(tmp_path / 'report')
    log = _play(tmp_path, {'fleet_report_source': 'cache', 'fleet_report_cache_dir': cache, 'fleet_report_dir': out},
                check=True)
    assert 'check mode: not written' in log and not os.path.exists(out)
