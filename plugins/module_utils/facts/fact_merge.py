# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merging a subset gather of ``checkpoint_io`` facts into the ones the host already has.

ansible-core merges facts one level deep: a module returning ``ansible_facts.checkpoint_io`` replaces the whole
``checkpoint_io`` dict, so a gather of ``[xfs]`` after one of ``[nvme, block]`` would lose ``nvme`` and ``block``.
The action plugin in front of ``checkpoint_io_facts`` calls :func:`merge_facts` with the host's current facts and
the module's, so a gather refreshes the sections it gathered and keeps the others, each with the time it was
gathered (``gathered_at``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.schema import SCHEMA_VERSION, SUBSETS


def merge_facts(current, new):
    """The facts after a gather: ``new``'s sections over ``current``'s, the others kept.

    ``current``: the host's ``ansible_facts.checkpoint_io`` (None, or anything else that is not a dict of this
    schema version, is dropped: facts of another collection version are not mixed in). ``new``: the module's
    ``checkpoint_io`` dict. Returns a new dict; ``gather_subset`` lists every section present (in the
    collection's order), ``last_gather_subset`` the ones this gather refreshed, ``gathered_at`` the time of each.
    """
    if not isinstance(new, dict):
        raise ValueError('new: %r is not a checkpoint_io fact dict' % (new,))
    gathered = [name for name in new.get('gather_subset') or [] if name in SUBSETS]
    if not isinstance(current, dict) or current.get('schema_version') != new.get('schema_version', SCHEMA_VERSION):
        current = {}
    merged = dict(current)
    merged.update(new)
    stamps = dict(current.get('gathered_at') or {}) if isinstance(current.get('gathered_at'), dict) else {}
    stamps.update(new.get('gathered_at') or {})
    present = [name for name in SUBSETS if name in merged]
    merged['gather_subset'] = present
    merged['last_gather_subset'] = gathered
    merged['gathered_at'] = dict((name, stamps[name]) for name in present if name in stamps)
    return merged
