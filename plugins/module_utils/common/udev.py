# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way a string a drive, a target or a node controls enters a udev rule.

A udev rule is a line of ``KEY=="value"`` pairs that root applies on every uevent; a rule file's lines are rules.
A serial, a model, a WWID or a subsystem NQN comes from a drive's firmware or from an NVMe-oF target: a line break
in one starts a new rule (``RUN+="..."``: a command root runs), a ``"`` ends the value, a ``\\`` escapes, and
``* ? [ ] |`` make an exact match a pattern that matches other devices. udev has no escaping that covers all of
these on every systemd version, so :func:`match_value` refuses such a value (the rule is not written) and
:func:`comment` writes a value only as a comment, every character outside printable ASCII made ``?``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

MATCH_UNSAFE = re.compile(r'[^\x20-\x7e]|["\\*?\[\]|]')
COMMENT_UNSAFE = re.compile(r'[^\x20-\x7e]')
MAX_BYTES = 512


def match_value(value, what='value'):
    """``value`` as it may stand between the quotes of a udev match or assignment: printable ASCII without
    ``" \\ * ? [ ] |``, no blank at either end, at most 512 bytes. ValueError naming the value otherwise."""
    if value is None or isinstance(value, (bool, list, dict)):
        raise ValueError('%s %r is not a string a udev rule can match' % (what, value))
    text = str(value)
    if not text or text != text.strip():
        raise ValueError('%s %r is empty or has blanks at its ends: a udev rule could not match it exactly'
                         % (what, text))
    if len(text.encode('utf-8')) > MAX_BYTES:
        raise ValueError('%s %r is %d bytes; a udev value is at most %d here'
                         % (what, text[:64] + '...', len(text.encode('utf-8')), MAX_BYTES))
    bad = MATCH_UNSAFE.search(text)
    if bad:
        raise ValueError('%s %r holds %r, which a udev rule cannot carry safely (a line break starts a rule root '
                         'runs, a quote ends the value, * ? [ ] | make it a pattern): the rule is not written; '
                         'name the drive another way (its WWID) or correct the value at its source'
                         % (what, text, bad.group(0)))
    return text


def comment(value):
    """``value`` for a ``#`` comment line of a rule file: printable ASCII only, anything else ``?``."""
    return COMMENT_UNSAFE.sub('?', '' if value is None else str(value))
