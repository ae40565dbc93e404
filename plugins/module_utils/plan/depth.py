# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-rank queue depth: its one default, and the policy that settles it for a node (pure).

DeepSpeed's aio ``queue_depth`` is per rank. The inventory gives a number (fixed) or ``auto`` (the depth sweep of
the deepspeed_config role measures the knee on the checkpoint volume). Every other layer sizes for it: cufile.json's
``execution.max_io_queue_depth`` and pinned memory, the training user's memlock bound, the thermal validation's
write and the verification's. With ``auto`` those are sized before the sweep has run, for the deepest depth the
sweep may choose (its deepest point), so the first run and every later one size them the same (one run converges).
A thermal back-off recorded by thermal_validate lowers the depth the writers use (records.thermal_depth), never the
sizing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import DEFAULT_DEPTHS
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.records import recorded_sweep, thermal_backoff

# The one default of the per-rank queue depth: the seed's stable baseline.
DEFAULT_QUEUE_DEPTH = 8
AUTO = 'auto'


def sizing_depth(asked, sweep_depths=None):
    """The per-rank depth the layers in front of DeepSpeed are sized for: the depth asked, or with ``auto`` the
    deepest the sweep tries (``sweep_depths``, by default the sweep's own)."""
    if asked is None:
        return DEFAULT_QUEUE_DEPTH
    if isinstance(asked, str) and asked.strip() == AUTO:
        depths = [d for d in (sweep_depths or DEFAULT_DEPTHS) if isinstance(d, int) and not isinstance(d, bool)]
        return max(depths or DEFAULT_DEPTHS)
    return int(asked)


def depth_policy(facts, asked, directory=None, block_size=None, ranks=None, sweep_depths=None):
    """The node's per-rank depth: {policy: fixed|auto, asked, measured (the recorded sweep's, or None), per_rank
    (what DeepSpeed gets now, the thermal back-off applied; None while a sweep is still to run), sizing (what
    cufile.json and memlock are sized for), backoff (the record's, or None), reason, sweep (the recorded sweep, or
    None)}."""
    auto = isinstance(asked, str) and asked.strip() == AUTO
    asked = AUTO if auto else (DEFAULT_QUEUE_DEPTH if asked is None else int(asked))
    measured, entry = None, {}
    if auto:
        if directory and block_size and ranks:
            try:
                entry = recorded_sweep(facts, directory, block_size, ranks)
            except ValueError:
                entry = {}
        measured = entry.get('per_rank_depth') if isinstance(entry.get('per_rank_depth'), int) else None
        if measured is not None:
            base, reason = measured, ('auto: %d, the knee the depth sweep recorded on %s for %s ranks'
                                      % (measured, directory, ranks))
        elif directory:
            base, reason = None, ('auto: measured by the depth sweep on %s in this run (deepspeed_config), before '
                                  'the ds_config is written' % directory)
        else:
            base, reason = None, 'auto: no checkpoint directory for the depth sweep'
    else:
        base, reason = asked, 'fixed: %d per rank' % asked
    try:
        backoff = thermal_backoff(facts)
    except ValueError as exc:
        backoff, reason = None, reason + ' (the thermal record is unusable: %s)' % exc
    per_rank = base
    if backoff and base is not None and backoff['per_rank_depth'] < base:
        per_rank = backoff['per_rank_depth']
        reason += '; lowered to %d by the thermal back-off in force (%s)' % (per_rank, backoff.get('reason'))
    elif backoff:
        reason += '; a thermal back-off to %d is in force and caps any deeper depth' % backoff['per_rank_depth']
    return {'policy': AUTO if auto else 'fixed', 'asked': asked, 'measured': measured, 'per_rank': per_rank,
            'sizing': sizing_depth(asked, sweep_depths), 'backoff': backoff, 'reason': reason,
            'sweep': entry or None}
