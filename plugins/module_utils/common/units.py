# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit conversion and value coercion shared by the collection's parsers.

Everything here is a pure function of its arguments (standard library only).

* :func:`parse_size` - a user-supplied size ("1M", "512KiB", 1048576) to bytes.
* :func:`kelvin_to_celsius` - NVMe temperatures (Kelvin, 0 = not reported).
* :func:`to_int` / :func:`to_count` / :func:`to_bool` - the ONE place where values from command
  output (ints, integral floats such as ``1765656.0``, numeric or hex strings)
  are coerced; they raise ``ValueError`` with a message naming the value.
* :func:`convert` - applies a coercer to one field and records a failure in an
  ``errors`` dict instead of raising, so one bad field never hides the others.
* :func:`load_json_document` - JSON text to an object, skipping non-JSON lines
  that tools print before the document (fio warnings).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

# Binary multipliers. "K", "KiB" (any case) all mean 1024: block sizes, queue
# buffers and chunk sizes are binary by nature. SI-looking suffixes ("kB",
# "MB", "GB", "TB") are REFUSED as ambiguous rather than guessed: a user who
# writes "1MB" for a block size almost always means 1 MiB, but fio, dd and
# parted disagree on that, so the module asks instead of picking one.
_BINARY_SUFFIXES = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kib": 1024,
    "m": 1024 ** 2,
    "mib": 1024 ** 2,
    "g": 1024 ** 3,
    "gib": 1024 ** 3,
    "t": 1024 ** 4,
    "tib": 1024 ** 4,
}
_AMBIGUOUS_SUFFIXES = ("kb", "mb", "gb", "tb")
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")
_INT_RE = re.compile(r"^\s*[-+]?\d+\s*$")
_HEX_RE = re.compile(r"^\s*0[xX][0-9a-fA-F]+\s*$")
_FLOAT_RE = re.compile(r"^\s*[-+]?\d+\.\d*\s*$")

_TRUE_WORDS = ("true", "yes", "on", "enabled", "1")
_FALSE_WORDS = ("false", "no", "off", "disabled", "0")


def _size_error(name, value):
    return ValueError(
        "%s: %r is not a size; use bytes (1048576) or a binary suffix "
        "(512K, 1M, 1MiB, 1G, 1GiB, 1T); sizes must be whole and above zero"
        % (name, value)
    )


def parse_size(value, name="value"):
    """Return ``value`` as a positive number of bytes (int).

    Accepted: a positive int (``1048576``), an integral float (``1048576.0``,
    as YAML may give), or a string of digits with an optional binary suffix,
    case-insensitive and with optional space: ``"1048576"``, ``"512K"``,
    ``"512k"``, ``"4KiB"``, ``"1M"``, ``"1m"``, ``"1 MiB"``, ``"1G"``,
    ``"1GiB"``, ``"2T"``, ``"4096B"``. K/M/G/T are powers of 1024.

    Refused with ``ValueError`` (message names ``name`` and the value): bools,
    zero, negative numbers, fractions (``1.5``, ``"1.5M"``), unknown suffixes
    (``"1X"``) and the ambiguous SI-looking ``"kB"``, ``"MB"``, ``"GB"``,
    ``"TB"`` (write ``1M`` or ``1000000`` instead).
    """
    if isinstance(value, bool):
        raise _size_error(name, value)
    if isinstance(value, float):
        if not value.is_integer():
            raise _size_error(name, value)
        value = int(value)
    if isinstance(value, int):
        if value <= 0:
            raise _size_error(name, value)
        return value
    if not isinstance(value, str):
        raise _size_error(name, value)
    match = _SIZE_RE.match(value)
    if not match:
        raise _size_error(name, value)
    digits, suffix = match.group(1), match.group(2).lower()
    if suffix in _AMBIGUOUS_SUFFIXES:
        raise ValueError(
            "%s: %r is ambiguous (1000 or 1024?); use a binary suffix such as "
            "%s%s (= %d bytes) or plain bytes"
            % (name, value, digits, suffix[0].upper(),
               int(digits) * _BINARY_SUFFIXES[suffix[0]])
        )
    if suffix not in _BINARY_SUFFIXES:
        raise _size_error(name, value)
    result = int(digits) * _BINARY_SUFFIXES[suffix]
    if result <= 0:
        raise _size_error(name, value)
    return result


def to_int(value, name="value"):
    """Coerce one value from command output to ``int``.

    Accepts ints, integral floats (nvme-cli 1.x prints 128-bit counters as
    ``1765656.0``), and strings holding a decimal integer, an integral decimal
    (``"310.0"``) or hex (``"0x66"``, as in nvme-cli text output).
    Raises ``ValueError`` for bools, ``None``, fractions and anything else.
    """
    if isinstance(value, bool) or value is None:
        raise ValueError("%s: %r is not an integer" % (name, value))
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():  # also False for nan and inf
            raise ValueError("%s: %r is not a whole number" % (name, value))
        return int(value)
    if isinstance(value, str):
        if _INT_RE.match(value):
            return int(value.strip())
        if _HEX_RE.match(value):
            return int(value.strip(), 16)
        if _FLOAT_RE.match(value):
            return to_int(float(value), name)
    raise ValueError("%s: %r is not an integer" % (name, value))


def to_count(value, name="value"):
    """:func:`to_int` that also refuses negative numbers (counters, sizes, ids)."""
    number = to_int(value, name)
    if number < 0:
        raise ValueError("%s: %r is negative" % (name, value))
    return number


def to_bool(value, name="value"):
    """Coerce ``true``/``false``, ``1``/``0``, ``yes``/``no``, ``enabled``/``disabled``
    (any case; bools, the ints 0 and 1, or strings) to ``bool``; else ``ValueError``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise ValueError("%s: %r is not a boolean" % (name, value))


def kelvin_to_celsius(kelvin):
    """Convert an NVMe Kelvin reading to whole degrees Celsius (``K - 273``,
    the offset nvme-cli itself uses).

    Returns ``None`` for ``None`` and for 0: in Identify Controller
    (wctemp, cctemp, mntmt, mxtmt) and in the SMART log 0 K means "not
    reported". Accepts what :func:`to_int` accepts; raises ``ValueError`` for
    anything else or a negative value.
    """
    if kelvin is None:
        return None
    value = to_int(kelvin, "kelvin")
    if value < 0:
        raise ValueError("kelvin: %r is below absolute zero" % (kelvin,))
    if value == 0:
        return None
    return value - 273


def convert(value, coercer, errors, key):
    """Return ``coercer(value, key)``; ``None`` when ``value`` is ``None``.

    A ``ValueError``/``TypeError`` from the coercer is recorded as
    ``errors[key] = message`` and ``None`` is returned: a wrong type in one
    field (``"temperature": "hot"``) costs that field only.
    """
    if value is None:
        return None
    try:
        return coercer(value, key)
    except (ValueError, TypeError) as exc:
        errors[key] = str(exc)
        return None


def load_json_document(text):
    """Parse the JSON document in ``text``; return ``(obj, None)`` or
    ``(None, message)``.

    Lines printed before the document that are not JSON (``fio: io_u error
    ...``, shell noise) are skipped: parsing starts at the first non-blank
    line if it opens with ``{``/``[``, else at the next line that opens with
    ``{``/``[`` in column 0 (nested objects of a truncated document are
    indented, so they are never mistaken for the document). Text after the
    document is ignored. Never raises.
    """
    if text is None:
        return None, "no input"
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return None, "input is %s, not text" % type(text).__name__
    if not text.strip():
        return None, "empty input"
    decoder = json.JSONDecoder()
    offset = 0
    first_error = None
    seen_content = False
    for line in text.splitlines(True):
        stripped = line.lstrip()
        starts_doc = stripped[:1] in ("{", "[") and (not seen_content or line[:1] in ("{", "["))
        if stripped.strip():
            seen_content = True
        if starts_doc:
            try:
                obj, _end = decoder.raw_decode(text, offset + len(line) - len(stripped))
                return obj, None
            except ValueError as exc:
                if first_error is None:
                    first_error = "not valid JSON (%s)" % exc
        offset += len(line)
    return None, first_error or "no JSON document found"


def whole(value):
    """An int from an int or a string of digits; None for anything else (true/false are not numbers here)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def whole_number_errors(params, limits):
    """Messages naming each option of ``limits`` ({name: (low, high)}) whose value in ``params`` is not a whole
    number from low to high, with the value and the limits; the values are made ints (None where not) in
    ``params``. For modules' raw number options (gds_path_proof, checkpoint_compression)."""
    errors = []
    for name, (low, high) in sorted(limits.items()):
        value = whole(params[name])
        if value is None or not low <= value <= high:
            errors.append('%s: %r must be a whole number from %d to %d' % (name, params[name], low, high))
        params[name] = value
    return errors


# ---------------------------------------------------------------- paths
NAME_MAX = 255                        # bytes of one path component (the kernel's NAME_MAX)
PATH_MAX = 4095                       # bytes of a path, without its NUL (the kernel's PATH_MAX is 4096)


def check_path_limits(path, name):
    """Raise ValueError unless ``path`` (a string) is within the kernel's limits: at most PATH_MAX bytes in all and
    NAME_MAX bytes a component. The one home of this check (mount_options.check_path, inputs.absolute_path)."""
    size = len(path.encode('utf-8', 'surrogateescape'))
    if size > PATH_MAX:
        raise ValueError('%s: %r... is %d bytes long; the kernel takes paths of at most %d bytes (PATH_MAX)'
                         % (name, path[:40], size, PATH_MAX))
    longest = max(len(part.encode('utf-8', 'surrogateescape')) for part in path.split('/'))
    if longest > NAME_MAX:
        raise ValueError('%s: %r... has a component of %d bytes; the kernel takes at most %d (NAME_MAX)'
                         % (name, path[:40], longest, NAME_MAX))
    return path
