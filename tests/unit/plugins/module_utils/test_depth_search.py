# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The depth search from the physics (module_utils/verify/depth_search.py) against modelled drives: Little's Law
curves shaped like the lab's drive models (lab/nvmelab.py: knee2, knee8, knee16, two drives), with noise, against
the exhaustive grid's choice; a throttle and a curve without a latency fall back to the walk."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.repeats import smallest_within_noise
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.depth_search import DepthSearch

MIB = 1048576
DEPTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
# the lab's models (lab/nvmelab.py): latency per 1 MiB request (ms), ceiling per drive (MiB/s); two drives
MODELS = {'knee2': (40.0, 40.0), 'knee8': (80.0, 70.0), 'knee16': (160.0, 60.0)}


def drive(model, drives=2, noise=0.03, throttle_past=None, seed=1):
    """A run at a per-rank depth: (bandwidth, mean latency ns) of an array that follows Little's Law."""
    latency_ms, ceiling = MODELS[model]
    rng = random.Random(seed)

    def run(depth, ranks=1):
        inflight = depth * ranks
        top = ceiling * drives * MIB * (0.5 if throttle_past and depth > throttle_past else 1)
        bw = min(top, inflight * MIB / (latency_ms / 1e3))
        latency_ns = max(latency_ms * 1e6, inflight * MIB / top * 1e9)
        return bw * (1 + rng.uniform(-noise, noise)), latency_ns
    return run


def search(run, ranks=1, **kwargs):
    s = DepthSearch(DEPTHS, MIB, ranks=ranks, **kwargs)
    depth = s.next_depth()
    while depth is not None:
        bw, lat = run(depth, ranks)
        s.add(depth, bw, lat)
        depth = s.next_depth()
    choice = s.choice() or smallest_within_noise([{'depth': d, 'bw': v} for d, v in sorted(s.runs.items())],
                                                 floor=0.05)
    written = sum(sum(v) for v in s.runs.values())
    return s, choice, written


@pytest.mark.parametrize('model', sorted(MODELS))
@pytest.mark.parametrize('ranks', [1, 4])
@pytest.mark.parametrize('seed', [1, 2, 3])
def test_the_search_finds_the_grids_depth_for_a_fifth_of_its_runs_and_bytes(model, ranks, seed):
    auto, auto_choice, auto_bytes = search(drive(model, seed=seed), ranks)
    grid, grid_choice, grid_bytes = search(drive(model, seed=seed + 100), ranks, exhaustive=True)
    assert auto.summary()['method'] == 'physics' and auto.summary()['reason'] is None
    assert grid.summary()['runs'] == 27
    run = drive(model, noise=0.0)
    assert run(auto_choice['depth'], ranks)[0] >= 0.98 * run(grid_choice['depth'], ranks)[0]
    assert auto_choice['depth'] <= grid_choice['depth'] * 2
    assert auto.summary()['runs'] <= 0.2 * 27, auto.summary()
    assert auto_bytes <= 0.2 * grid_bytes, (auto.summary(), auto_bytes, grid_bytes)


def test_the_prediction_is_littles_law():
    s, choice, _written = search(drive('knee16', noise=0.0))
    # 2 drives x 60 MiB/s x 0.16 s / 1 MiB = 19.2 requests in flight: depth 20 predicted, 32 the list's next
    assert s.predicted == 20 and choice['depth'] == 32
    assert s.summary()['measured_depths'] == [1, 16, 32, 256]


def test_a_throttle_at_depth_falls_back_to_the_walk_and_says_why():
    s, choice, _written = search(drive('knee8', throttle_past=64, noise=0.0))
    summary = s.summary()
    assert summary['method'] == 'walk' and 'the ceiling moves' in summary['reason']
    assert choice['depth'] == 16       # 2 drives x 70 MiB/s x 0.08 s / 1 MiB = 11.2 in flight


def test_no_latency_at_depth_one_falls_back_to_the_walk():
    def run(depth, ranks=1):
        return drive('knee2', noise=0.0)(depth, ranks)[0], None
    s, choice, _written = search(run)
    assert s.summary()['method'] == 'walk' and 'no latency' in s.summary()['reason']
    assert choice['depth'] == 4        # 2 drives x 40 MiB/s x 0.04 s / 1 MiB = 3.2 in flight


def test_a_knee_at_the_first_depth_needs_two_runs():
    def flat(depth, ranks=1):
        return 100.0 * MIB, 1e6
    s, choice, _written = search(flat)
    assert choice['depth'] == 1 and s.summary()['runs'] == 2


def test_a_median_near_the_threshold_is_measured_again():
    # depth 16 at 92.5% of the deepest: the ceiling pooled from both (96.25) puts the threshold at 91.4, too close
    # to call from one run: 16 is run again (the pooled ceiling then settles it), then the depth below it decides
    def near(depth, ranks=1):
        bw = {1: 10.0, 2: 20.0, 4: 40.0, 8: 80.0, 16: 92.5}.get(depth, 100.0)
        return bw * MIB, 10e6
    s, choice, _written = search(near)
    assert len(s.runs[16]) == 2 and choice['depth'] == 16 and 8 in s.runs
    assert s.summary()['runs'] <= 8


def test_walk_asked_for_and_few_depths():
    s = DepthSearch([1, 2], MIB)
    assert s.summary()['method'] == 'walk' and s.summary()['reason'] == 'fewer than 3 depths'
    s = DepthSearch(DEPTHS, MIB, walk=True)
    assert s.summary()['reason'] == 'asked for' and s.next_depth() == 1
