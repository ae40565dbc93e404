# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report built by worker processes (fleet_report.build over a CacheSource, workers > 1: the build is
CPU-bound where it reads a cache) writes the same bytes as the build in one process, in host order; a node whose
file breaks the reader fails only that node there too."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import lzma
import os
import sys

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report as fr

from testenv import ROOT

sys.path.insert(0, os.path.join(ROOT, 'tests', 'bench'))
import fleet_cache  # noqa: E402  pylint: disable=wrong-import-position

NOW = 1796256000.0   # 2026-12-03T00:00:00Z
NODES = 1234         # three chunks of the page's data file, the last one partial


def _files(result):
    out = {}
    for key, path in result['paths'].items():
        with open(path, 'rb') as handle:
            out[key] = handle.read()
    return out


def test_workers_write_what_one_process_writes(tmp_path):
    cache = str(tmp_path / 'cache')
    fleet_cache.write_cache(cache, NODES, now=NOW)
    with open(os.path.join(cache, sorted(os.listdir(cache))[7]), 'w') as handle:
        handle.write('{"checkpoint_io": NaN}')
    built = {}
    for workers in (1, 2, 3):
        out = tmp_path / ('out%d' % workers)
        out.mkdir()
        result = fr.build(fr.CacheSource(cache), str(out), workers=workers, now=NOW,
                          plan_args={'checkpoint': 'llama3-8b', 'ranks_per_node': 2, 'window_s': 60})
        assert result['nodes'] == NODES
        built[workers] = _files(result)
    assert built[2] == built[1] and built[3] == built[1]
    with lzma.open(os.path.join(str(tmp_path / 'out2'), 'fleet_report_nodes.jsonl.xz'), 'rt') as handle:
        nodes = [json.loads(line) for line in handle]
    hosts = [n['host'] for n in nodes]
    assert hosts == sorted(hosts) and len(hosts) == NODES
    assert nodes[7]['status'] == 'error' and 'NaN is not a JSON number' in nodes[7]['findings'][0]['message']
    assert [n for n in nodes if n['status'] == 'error' and 'cache file' in n['findings'][0]['message']] == [nodes[7]]
