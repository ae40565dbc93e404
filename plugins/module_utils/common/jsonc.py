# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""JSON with comments (NVIDIA's ``/etc/cufile.json``): read it, and set keys in it in place.

Everything here is a pure function of its arguments (standard library only).

The accepted text is JSON plus ``//`` line comments and ``/* */`` block comments wherever whitespace may go,
and a trailing comma after the last member of an object or the last item of an array. Duplicate keys: the
last one wins (as with :func:`json.loads`). ``NaN``, ``Infinity`` and other non-JSON tokens are refused.

* :func:`parse` - the text to its Python value.
* :func:`set_values` - ``{"properties.max_direct_io_size_kb": 16384, ...}`` written into the text: only the
  characters of a changed value are replaced, a missing member is inserted as the last member of its object
  (nested objects created as needed), and every other character - comments and layout included - is kept. When
  every value is already there (``True`` and ``1`` differ, ``1`` and ``1.0`` do not), the very same text object
  comes back.
* :func:`remove_keys` - dotted keys taken out of the text (the member, its comma and, when it stood alone on its
  line, that line), every other character kept.
* :func:`get` - one dotted key of a text or of a parsed value.
* :func:`same` - JSON equality as this module sees it (``True`` is not ``1``; ``1`` is ``1.0``), used by
  ``cufile_edit`` to say what changed.

Errors raise :class:`JsoncError` (a ``ValueError``) naming the line and column, or the dotted path.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from collections import namedtuple

# Whitespace and complete comments; an unclosed "/*" is left where it starts, for the error to point at.
_SKIP = re.compile(r"(?:[ \t\n\r]+|//[^\n]*|/\*.*?\*/)*", re.S)
# Comments that follow a value on its own line (block comments may run on to later lines).
_SAME_LINE_COMMENTS = re.compile(r"(?:[ \t]*(?://[^\r\n]*|/\*.*?\*/))*", re.S)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORD = re.compile(r"[A-Za-z0-9_+.-]+")
_INDENT = re.compile(r"[ \t]*")
_DEFAULT_UNIT = "    "

# One member of an object: its decoded key, where the key's opening quote is, its value's node, and where the
# comma after the value is (None when there is none).
_Member = namedtuple("_Member", "key key_start node comma")


class JsoncError(ValueError):
    """A text that is not JSON with comments, or a key path that cannot be set in it."""

    def __init__(self, message, lineno=None, colno=None):
        if lineno is not None:
            message = "line %d column %d: %s" % (lineno, colno, message)
        super(JsoncError, self).__init__(message)
        self.lineno = lineno
        self.colno = colno


class _Node(object):
    """A parsed value with its span ``text[start:end]``; ``members`` is a list of :data:`_Member` for an
    object and None for anything else."""

    __slots__ = ("value", "start", "end", "members")

    def __init__(self, value, start, end=None, members=None):
        self.value = value
        self.start = start
        self.end = end
        self.members = members


class _Scanner(object):
    """Recursive descent over the text; ``pos`` is the next character to read."""

    def __init__(self, text):
        self.text = text
        self.pos = 1 if text.startswith("\ufeff") else 0

    def fail(self, expected, pos=None, found=None):
        pos = self.pos if pos is None else pos
        lineno = self.text.count("\n", 0, pos) + 1
        colno = pos - self.text.rfind("\n", 0, pos)
        raise JsoncError("expected %s, found %s" % (expected, found or self._found(pos)), lineno, colno)

    def _found(self, pos):
        if pos >= len(self.text):
            return "end of text"
        word = _WORD.match(self.text, pos)
        return repr(word.group() if word else self.text[pos])

    def skip(self):
        self.pos = _SKIP.match(self.text, self.pos).end()
        if self.text.startswith("/*", self.pos):
            self.fail("'*/' to close the comment that starts here", found="end of text")

    def peek(self):
        return self.text[self.pos:self.pos + 1]

    def eat(self, char):
        if self.peek() != char:
            return False
        self.pos += 1
        return True

    def value(self):
        char = self.peek()
        if char == "{":
            return self._object()
        if char == "[":
            return self._array()
        token = (_STRING if char == '"' else _SCALAR).match(self.text, self.pos)
        if token is None:
            self.fail("'\"' closing the string that starts here" if char == '"' else "a value",
                      found="end of text" if char == '"' else None)
        try:
            value = json.loads(token.group())
        except ValueError as exc:  # a raw control character or a bad escape in a string
            self.fail("a string character or escape", self.pos + getattr(exc, "pos", 0))
        if isinstance(value, float) and value in (float("inf"), float("-inf")):
            self.fail("a finite number")
        self.pos = token.end()
        return _Node(value, token.start(), token.end())

    def _sequence(self, close, item):
        """Items up to ``close`` (a trailing comma allowed): a list of ``(item(), comma position or None)``."""
        self.pos += 1
        self.skip()
        items = []
        while not self.eat(close):
            got = item()
            self.skip()
            comma = self.pos
            if not self.eat(","):
                comma = None
            items.append((got, comma))
            self.skip()
            if comma is None and self.peek() != close:
                self.fail("',' or '%s'" % close)
        return items

    def _member(self):
        if self.peek() != '"':
            self.fail("a string key or '}'")
        key = self.value()
        self.skip()
        if not self.eat(":"):
            self.fail("':'")
        self.skip()
        return key, self.value()

    def _object(self):
        node = _Node({}, self.pos, members=[])
        for (key, child), comma in self._sequence("}", self._member):
            node.members.append(_Member(key.value, key.start, child, comma))
            node.value[key.value] = child.value
        node.end = self.pos
        return node

    def _array(self):
        start = self.pos
        items = self._sequence("]", self.value)
        return _Node([child.value for child, _comma in items], start, self.pos)


def _parse_node(text):
    if not isinstance(text, str):
        raise TypeError("JSON with comments must be a str, not %s" % type(text).__name__)
    scanner = _Scanner(text)
    try:
        scanner.skip()
        node = scanner.value()
        scanner.skip()
    except RecursionError:
        raise JsoncError("nesting too deep")
    if scanner.pos < len(text):
        scanner.fail("end of text")
    return node


def parse(text):
    """The Python value of a JSON-with-comments text; raises :class:`JsoncError`."""
    return _parse_node(text).value


def _split(dotted):
    keys = dotted.split(".") if isinstance(dotted, str) else [""]
    if "" in keys:
        raise JsoncError("invalid key path %r: expected dot-separated non-empty keys" % (dotted,))
    return keys


def get(text_or_parsed, dotted, default=None):
    """The value at ``dotted`` ("properties.use_poll_mode") of a text or parsed value, else ``default``."""
    value = parse(text_or_parsed) if isinstance(text_or_parsed, str) else text_or_parsed
    for key in _split(dotted):
        if not isinstance(value, dict) or key not in value:
            return default
        value = value[key]
    return value


def _dumps(value, dotted=None):
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
    except (TypeError, ValueError) as exc:
        raise JsoncError("value for %r is not JSON-serialisable: %s" % (dotted, exc))


def same(old, new):
    """Equal as JSON values, with booleans never equal to numbers (``True != 1`` here)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(same(old[key], new[key]) for key in old)
    if isinstance(old, list) and isinstance(new, (list, tuple)):
        return len(old) == len(new) and all(same(a, b) for a, b in zip(old, new))
    return old == new


def _line_prefix(text, pos):
    """``(indentation of pos's line, whether only that indentation precedes pos)``."""
    indent = _INDENT.match(text, text.rfind("\n", 0, pos) + 1, pos)
    return indent.group(), indent.end() == pos


def _own_unit(text, obj):
    """One indentation step of a multi-line object: its members' indentation less its own; None if unknown."""
    if not obj.members:
        return None
    inner, own_line = _line_prefix(text, obj.members[-1].key_start)
    outer = _line_prefix(text, obj.start)[0]
    if own_line and len(inner) > len(outer) and inner.startswith(outer):
        return inner[len(outer):]
    return None


def _render(keys, value, indent, unit, newline):
    """``"key": value``, wrapping the value in new objects for keys[1:]; one line when indent is None."""
    head = _dumps(keys[0]) + ": "
    if len(keys) == 1:
        return head + _dumps(value)
    inner_indent = None if indent is None else indent + unit
    inner = _render(keys[1:], value, inner_indent, unit, newline)
    if indent is None:
        return head + "{" + inner + "}"
    return head + "{" + newline + inner_indent + inner + newline + indent + "}"


def _insert_inline(text, last, member):
    """After the last member of a one-line object: ``, "k": v`` (or `` "k": v,`` after a trailing comma)."""
    if last.comma is None:
        return text[:last.node.end] + ", " + member + text[last.node.end:]
    return text[:last.comma + 1] + " " + member + "," + text[last.comma + 1:]


def _insert_lines(text, obj, keys, value, unit):
    """A new last member on its own line, after the previous last member and the comments on its line."""
    newline = "\r\n" if "\r\n" in text else "\n"
    outer = _line_prefix(text, obj.start)[0]
    last = obj.members[-1] if obj.members else None
    if last is None:
        indent, after, comma = outer + unit, obj.start + 1, ""
    else:
        indent = _line_prefix(text, last.key_start)[0]
        after = last.node.end if last.comma is None else last.comma + 1
        comma = "," if last.comma is None else ""
    anchor = _SAME_LINE_COMMENTS.match(text, after).end()
    member = newline + indent + _render(keys, value, indent, unit, newline)
    if last is not None and last.comma is not None:  # keep the trailing-comma style
        member += ","
    close = obj.end - 1
    resume = anchor
    if text[anchor:close].strip(" \t") == "":  # "}" on the same line: give it a line of its own
        member, resume = member + newline + outer, close
    return text[:after] + comma + text[after:anchor] + member + text[resume:]


def _insert(text, root, obj, keys, value):
    last = obj.members[-1] if obj.members else None
    if last is not None and not _line_prefix(text, last.key_start)[1]:
        return _insert_inline(text, last, _render(keys, value, None, None, None))
    unit = _own_unit(text, obj) or _own_unit(text, root) or _DEFAULT_UNIT
    return _insert_lines(text, obj, keys, value, unit)


def _find(obj, key):
    for member in reversed(obj.members):
        if member.key == key:
            return member
    return None


def _set_one(text, root, dotted, value):
    keys = _split(dotted)
    rendered = _dumps(value, dotted)
    node = root
    for depth, key in enumerate(keys):
        if node.members is None:
            raise JsoncError("cannot set %r: %r is not an object" % (dotted, ".".join(keys[:depth])))
        member = _find(node, key)
        if member is None:
            return _insert(text, root, node, keys[depth:], value)
        node = member.node
    if same(node.value, value):
        return text
    return text[:node.start] + rendered + text[node.end:]


def _root_object(text):
    root = _parse_node(text)
    if root.members is None:
        raise JsoncError("expected an object at the top level, found %s" % type(root.value).__name__)
    return root


def set_values(text, values):
    """``text`` with each ``{dotted path: value}`` of ``values`` set (in order); the same object when every
    value is already there. Raises :class:`JsoncError` for a bad text, path or value."""
    root = _root_object(text)
    for dotted, value in values.items():
        new = _set_one(text, root, dotted, value)
        if new is not text:
            text, root = new, _root_object(new)
    return text


def _remove_one(text, root, dotted):
    keys = _split(dotted)
    node, parent, member = root, None, None
    for key in keys:
        if node.members is None:
            return text
        found = _find(node, key)
        if found is None:
            return text
        parent, member, node = node, found, found.node
    index = parent.members.index(member)
    previous = parent.members[index - 1] if index > 0 else None
    if member.comma is None and previous is not None and previous.comma is not None:
        # the last member: it goes with the comma before it (and what lay between: its line's indentation, its
        # comments), so the one before becomes the last
        return text[:previous.comma] + text[member.node.end:]
    start, end = member.key_start, (member.comma + 1 if member.comma is not None else member.node.end)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        return text[:line_start] + text[line_end + 1:]  # it stood alone on its line: the line goes
    return text[:start] + text[end:].lstrip(" ")


def remove_keys(text, dotted_keys):
    """``text`` without each dotted key of ``dotted_keys`` (a missing one is skipped): the member and its comma go,
    and its line when it stood alone on it; the same object when none was there. Raises :class:`JsoncError` for a
    bad text, and when the result would not parse or still held a key (never written then)."""
    root = _root_object(text)
    for dotted in dotted_keys:
        new = _remove_one(text, root, dotted)
        if new is not text:
            text, root = new, _root_object(new)
    for dotted in dotted_keys:
        if get(root.value, dotted, _MISSING) is not _MISSING:
            raise JsoncError("cannot remove %r: it is still there (a duplicate key?)" % dotted)
    return text


_MISSING = object()
