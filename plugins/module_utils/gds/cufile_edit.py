# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""cufile.json edits for the ``cufile_config`` module: pure functions, standard library only.

The file's text is changed through :mod:`jsonc` (comments and layout kept); what it means is read by
``gds.parse_cufile_json`` (NVIDIA's defaults filled in), the same parser the facts use.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import jsonc
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import (
    CUFILE_DEFAULTS,
    flatten,
    parse_cufile_json,
)

# The largest value of a documented integer key: a 32-bit signed int (no cufile.json size in KiB or count needs more).
MAX_VALUE = 2 ** 31 - 1
KEY_RE = re.compile(r'^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$')
HEADER = ('// cuFile configuration made by ai_storage.checkpoint_io (role gds): NVIDIA\'s documented defaults\n'
          '// (GPUDirect Storage Configuration Guide) with the keys the role manages for checkpoint writes.\n'
          '// There was no /etc/cufile.json before; gds_state: absent removes this file if it is unchanged.\n')


def check_settings(settings):
    """Messages naming each unusable key or value (empty when all are usable)."""
    if not isinstance(settings, dict):
        return ['must be a mapping of dotted keys to values, got %r' % (settings,)]
    problems = []
    for key in sorted(settings, key=str):
        value = settings[key]
        if not isinstance(key, str) or not KEY_RE.match(key):
            problems.append('%r is not a dotted cufile.json key such as properties.max_direct_io_size_kb' % (key,))
        elif isinstance(value, float) and not math.isfinite(value):
            problems.append('%s: %r is not a JSON number' % (key, value))
        elif not isinstance(value, (bool, int, float, str)):
            problems.append('%s: %r is not a JSON scalar (true/false, a number or a string)' % (key, value))
        elif key in CUFILE_DEFAULTS and isinstance(CUFILE_DEFAULTS[key], bool) and not isinstance(value, bool):
            problems.append('%s: %r must be true or false' % (key, value))
        elif key in CUFILE_DEFAULTS and not isinstance(CUFILE_DEFAULTS[key], bool) and (
                isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_VALUE):
            problems.append('%s: %r must be a whole number from 0 to %d' % (key, value, MAX_VALUE))
    return problems


def nested(flat):
    """{'a.b': 1} -> {'a': {'b': 1}}."""
    out = {}
    for key in sorted(flat):
        node = out
        parts = key.split('.')
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = flat[key]
    return out


def default_text():
    """A new cufile.json: the header comment and NVIDIA's documented defaults."""
    return HEADER + json.dumps(nested(CUFILE_DEFAULTS), indent=4, sort_keys=True) + '\n'


def present_values(text):
    """{dotted key: value} of the leaves the text sets (no defaults)."""
    doc = jsonc.parse(text)
    if not isinstance(doc, dict):
        raise jsonc.JsoncError('the top level is not a JSON object')
    return flatten(doc)


def set_keys(text, settings):
    """(new text, {key: {before, after}}) with ``settings`` set in ``text``; the text itself when nothing changes."""
    found = present_values(text)
    for key in settings:
        inside = sorted(k for k in found if k.startswith(key + '.'))
        if inside:
            raise jsonc.JsoncError('%s is an object in the file (holding %s): set the keys inside it, not the object'
                                   % (key, ', '.join(inside[:4])))
    changed = dict((key, {'before': found.get(key), 'after': value}) for key, value in settings.items()
                   if not jsonc.same(found.get(key), value))
    if not changed:
        return text, {}
    return jsonc.set_values(text, dict((key, value['after']) for key, value in changed.items())), changed


def properties_of(text):
    """Effective properties of a text (NVIDIA's defaults filled in); None without text."""
    return None if text is None else parse_cufile_json(text).get('properties')


_ABSENT = object()


def restore_text(entry, text):
    """(the text to leave, or None to remove the file; a warning or None) for the recorded ``entry``."""
    written = entry.get('written')
    if not entry['existed']:
        if text is None or text == written:
            return None, None
        return text, ('changed since the collection created it: kept (remove it by hand if it is not wanted)')
    original = entry.get('original')
    if text == written or text is None:
        return original, None
    ours = present_values(written) if written else {}
    before = present_values(original) if original else {}
    keys = [key for key in ours if not jsonc.same(ours[key], before.get(key))]
    back = dict((key, before[key]) for key in keys if key in before)
    added = sorted(key for key in keys if key not in before)
    new_text, _changed = set_keys(text, back)
    new_text = jsonc.remove_keys(new_text, added)  # what the original did not have goes again
    parents = sorted(set('.'.join(key.split('.')[:depth]) for key in added for depth in range(1, key.count('.') + 1)),
                     key=lambda name: -name.count('.'))
    for parent in parents:  # an object the module made for them, empty now and absent from the original
        if jsonc.get(original or '{}', parent, _ABSENT) is _ABSENT and jsonc.get(new_text, parent) == {}:
            new_text = jsonc.remove_keys(new_text, [parent])
    warning = ('changed since the collection wrote it: only the keys it set were put back (%s to their values found'
               '%s), every other change kept' % (', '.join(sorted(back)) or 'none',
                                                 ('; %s, which the file did not have, removed' % ', '.join(added))
                                                 if added else ''))
    return new_text, warning
