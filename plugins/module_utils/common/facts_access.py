# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way a filter reads the facts: every filter of the collection takes the whole
``ansible_facts.checkpoint_io`` as its piped input and reads a section through :func:`section`."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts.schema import SUBSETS

_WHOLE_KEYS = frozenset(SUBSETS) | frozenset(('schema_version', 'gather_subset', 'gathered_at', 'last_gather_subset'))


def section(facts, name, required=False):
    """The ``name`` section of ``facts`` (the whole ``ansible_facts.checkpoint_io``); {} when it was not gathered,
    or ValueError with ``required``. A section piped in place of the whole facts is an error that says so."""
    if not isinstance(facts, dict):
        raise ValueError('expected the whole ansible_facts.checkpoint_io (a dict), got %s' % type(facts).__name__)
    if facts and not _WHOLE_KEYS.intersection(facts):
        raise ValueError('expected the whole ansible_facts.checkpoint_io, got a dict with keys %s (one section?): pipe '
                         'ansible_facts.checkpoint_io itself' % ', '.join(sorted(facts)[:6]))
    value = facts.get(name)
    if value is None:
        if required:
            raise ValueError('the %s facts were not gathered: run checkpoint_io_facts with gather_subset including %s'
                             % (name, name))
        return {}
    return value
