# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a queue depth sweep measures next: the depth search from the physics (Little's Law), with the ascending
walk as its fallback. Pure logic; queue_depth_sweep runs fio at the depths it names.

A drive (or an array of them) that follows Little's Law delivers ``min(ceiling, depth x block / latency)``: the
depth-1 run gives the latency, the deepest depth of the list gives the ceiling, and the knee is predicted at
``ceiling x latency / (block x ranks)`` per rank. Only the depths around that prediction are measured then, each
once, again (up to ``repeats`` runs) where its median is too close to the threshold to call: the smallest depth
of the list within the noise floor of the best is found when the depth below it is measured below the threshold.
A curve that is not Little's Law is walked instead (every depth ascending, ``repeats`` runs each, the plateau rule
as before), and the search says why: a point measured above the deepest one (a ceiling that moves, a throttle, a
curve that falls with depth), or a depth-1 run without a latency or a bandwidth.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import plateau_reached


class DepthSearch(object):
    """The search over ``depths`` (ascending, distinct). Call :meth:`next_depth` for the depth to measure (None:
    done) and :meth:`add` with each run's bandwidth and mean latency (ns); :meth:`summary` says what it did."""

    def __init__(self, depths, block_size, ranks=1, floor=0.05, repeats=3, walk=False, plateau_gain=0.05,
                 plateau_points=3, exhaustive=False):
        self.depths = list(depths)
        self.block_size, self.ranks, self.floor, self.repeats = block_size, max(1, ranks), floor, max(1, repeats)
        self.plateau = (plateau_gain, plateau_points)
        self.runs = {}              # depth -> [bandwidth, ...]
        self.latency = {}           # depth -> [mean ns, ...]
        self.exhaustive = exhaustive
        walk = walk or exhaustive
        self.method = 'walk' if walk or len(self.depths) < 3 else 'physics'
        self.reason = ('every depth asked for' if exhaustive else 'asked for' if walk else
                       'fewer than 3 depths' if len(self.depths) < 3 else None)
        self.predicted = None
        self.done = False

    # ------------------------------------------------------------------------------------------------ results
    def add(self, depth, bw_bytes, mean_ns=None):
        self.runs.setdefault(depth, []).append(float(bw_bytes or 0))
        if mean_ns:
            self.latency.setdefault(depth, []).append(float(mean_ns))

    def median(self, depth):
        values = sorted(self.runs[depth])
        mid = len(values) // 2
        return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2.0

    def summary(self):
        return {'method': self.method, 'reason': self.reason, 'predicted_depth': self.predicted,
                'measured_depths': [d for d in self.depths if d in self.runs],
                'runs': sum(len(v) for v in self.runs.values())}

    # ------------------------------------------------------------------------------------------------ the search
    def next_depth(self):
        if self.done:
            return None
        if self.method == 'walk':
            return self._walk()
        first, deepest = self.depths[0], self.depths[-1]
        for depth in (first, deepest):
            if depth not in self.runs:
                return depth
        if self.predicted is None:
            latency = self.latency.get(first)
            if not latency or self.median(first) <= 0 or self.median(deepest) <= 0:
                return self._fall_back('the depth-1 run gave no latency or bandwidth: the knee cannot be predicted')
            ceiling = self.median(deepest)
            per_rank = ceiling * sorted(latency)[len(latency) // 2] / 1e9 / (self.block_size * self.ranks)
            self.predicted = max(first, int(math.ceil(per_rank - 1e-9)))
        return self._around_prediction()

    def _fall_back(self, reason):
        self.method, self.reason = 'walk', reason
        return self._walk()

    def _walk(self):
        """Every depth ascending, ``repeats`` runs each, until the plateau rule stops it (never when exhaustive)."""
        curve = []
        for depth in self.depths:
            if len(self.runs.get(depth, ())) < self.repeats:
                return depth
            curve.append(self.median(depth))
            if not self.exhaustive and plateau_reached(curve, *self.plateau):
                break
        self.done = True
        return None

    def _plateau(self):
        """(ceiling, threshold, the best depth): past the knee every depth delivers the ceiling, so the runs of the
        depths within twice the floor of the best median are all samples of it (one noisy run does not set it)."""
        measured = [d for d in self.depths if d in self.runs]
        best = max(measured, key=lambda d: (self.median(d), -d))
        top = self.median(best)
        samples = sorted(bw for d in measured if self.median(d) >= (1 - 2 * self.floor) * top for bw in self.runs[d])
        mid = len(samples) // 2
        ceiling = samples[mid] if len(samples) % 2 else (samples[mid - 1] + samples[mid]) / 2.0
        return ceiling, ceiling * (1 - self.floor), best

    def choice(self):
        """The search's depth: {depth, best_depth, threshold, noise, ceiling} (None before it is done, or for a
        walk, whose choice is repeats.smallest_within_noise's)."""
        if not self.done or self.method != 'physics':
            return None
        ceiling, threshold, best = self._plateau()
        depth = min(d for d in self.depths if d in self.runs and self.median(d) >= threshold)
        return {'depth': depth, 'best_depth': best, 'threshold': threshold, 'noise': self.floor, 'ceiling': ceiling}

    def _around_prediction(self):
        measured = [d for d in self.depths if d in self.runs]
        deepest = self.median(self.depths[-1])
        ceiling, threshold, best = self._plateau()
        if self.median(best) > deepest * (1 + 2 * self.floor):
            return self._fall_back('depth %d measured %.0f%% above the deepest depth %d: the ceiling moves (a '
                                   'throttle, or a curve that falls with depth), not Little\'s Law' % (
                                       best, (self.median(best) / deepest - 1) * 100, self.depths[-1]))
        # a median too close to the threshold to call is measured again first (up to repeats runs)
        for depth in measured:
            if abs(self.median(depth) - threshold) < 0.25 * self.floor * ceiling and \
                    len(self.runs[depth]) < self.repeats:
                return depth
        index = dict((d, i) for i, d in enumerate(self.depths))
        hi = min(index[d] for d in measured if self.median(d) >= threshold)
        below = [index[d] for d in measured if index[d] < hi]
        lo = max(below) if below else -1
        if hi - lo == 1 or hi == 0:
            self.done = True
            return None
        # the first probe at the prediction (the smallest listed depth that reaches it), then one step from it
        # toward the knee (a prediction at or just past the knee: one step down), then halving what is left (a
        # prediction that missed: a few probes, not a walk); nothing between lo and hi is measured
        target = next((i for i, d in enumerate(self.depths) if d >= self.predicted), len(self.depths) - 1)
        if lo < target < hi:
            return self.depths[target]
        step = target - 1 if target >= hi else target + 1
        if lo < step < hi:
            return self.depths[step]
        return self.depths[(lo + hi) // 2]
