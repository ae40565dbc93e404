# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeepSpeed ``aio`` configuration: defaults, effective values and lint warnings.

Mirrors deepspeed/runtime/swap_tensor/aio_config.py (get_aio_config): a plain
``dict.get`` per key with no type, range or unknown-key checks.  The key
``thread_count`` was renamed ``intra_op_parallelism`` in DeepSpeed PR #7056
(Feb 2025): each DeepSpeed version reads only one of the two names.

This file is shared by the facts module (reading configs) and by the roles that
render configs (``render_aio`` builds a section with real JSON types).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import to_bool
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import writer as ds_writer

AIO = 'aio'

# DeepSpeed's own defaults of the aio keys (deepspeed/runtime/swap_tensor/aio_config.py: what DeepSpeed uses where a
# config leaves a key out), a fact about DeepSpeed and not the collection's choice (that is plan/depth.py's
# DEFAULT_QUEUE_DEPTH). Order matters only for presentation.
AIO_DEFAULTS = (
    ('block_size', 1048576),
    ('queue_depth', 8),
    ('intra_op_parallelism', 1),
    ('single_submit', False),
    ('overlap_events', True),
    ('use_gds', False),
)

AIO_DEFAULTS_DICT = dict(AIO_DEFAULTS)
AIO_BOOL_KEYS = ('single_submit', 'overlap_events', 'use_gds')
AIO_INT_KEYS = ('block_size', 'queue_depth', 'intra_op_parallelism')
LEGACY_KEYS = {'thread_count': 'intra_op_parallelism'}
# The keys of the aio section DeepSpeed is known to ignore, and only those: merge_aio(remove_ignored=True) removes
# them. Read from DeepSpeed IGNORED_KEYS_READ_FROM: deepspeed/runtime/swap_tensor/aio_config.py get_aio_config reads
# exactly the keys of AIO_DEFAULTS (and versions before PR #7056 read thread_count instead of
# intra_op_parallelism, so thread_count is no ignored key); deepspeed/nvme/perf_generate_param.py (ds_nvme_tune)
# writes num_threads, which no version reads. Any other key is kept and reported: a later DeepSpeed may read it.
# tests/unit/plugins/module_utils/test_deepspeed_merge.py checks the list against the installed DeepSpeed's own
# get_aio_config.
IGNORED_KEYS_READ_FROM = '0.19.8'
IGNORED_KEYS = {
    'num_threads': 'aio.num_threads is ignored by DeepSpeed (ds_nvme_tune emits it); '
                   'the I/O parallelism key is intra_op_parallelism (thread_count before DeepSpeed PR #7056)',
}
KNOWN_KEYS = frozenset(list(AIO_DEFAULTS_DICT) + list(LEGACY_KEYS))


def aio_defaults():
    """A fresh dict of DeepSpeed's aio defaults."""
    return dict(AIO_DEFAULTS)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def effective_aio(section):
    """Return the aio values DeepSpeed would use for ``section`` plus warnings.

    ``section`` is the value of the ``aio`` key (or None when absent).
    Values are kept exactly as DeepSpeed's parser keeps them (a JSON string
    "false" stays the string "false"); ``truthiness`` gives Python's view of the
    boolean keys, which is what ``if aio_config[...]`` tests in DeepSpeed see.

    Returns {"present": bool, "aio": {...}, "truthiness": {...}, "warnings": [...],
    "unknown_keys": [...], "string_booleans": [...]}.
    """
    warnings = []
    present = section is not None
    if section is None:
        section = {}
    if not isinstance(section, dict):
        warnings.append('aio must be a JSON object, got %s: DeepSpeed would fail on it; defaults shown'
                        % type(section).__name__)
        section = {}

    aio = aio_defaults()
    for key in AIO_DEFAULTS_DICT:
        if key in section:
            aio[key] = section[key]

    has_new = 'intra_op_parallelism' in section
    has_old = 'thread_count' in section
    if has_old and not has_new:
        aio['intra_op_parallelism'] = section['thread_count']
        warnings.append(
            'aio.thread_count=%r is the pre-rename name of intra_op_parallelism: DeepSpeed versions after '
            'PR #7056 ignore it and use intra_op_parallelism=1; write intra_op_parallelism'
            % (section['thread_count'],))
    elif has_new and not has_old:
        warnings.append(
            'aio.intra_op_parallelism=%r is ignored by DeepSpeed versions before PR #7056 (they read '
            'thread_count, default 1); set both keys if older DeepSpeed versions must honour it'
            % (section['intra_op_parallelism'],))
    elif has_new and has_old and section['thread_count'] != section['intra_op_parallelism']:
        warnings.append(
            'aio.thread_count=%r and aio.intra_op_parallelism=%r differ: the value used depends on the '
            'DeepSpeed version (thread_count before PR #7056, intra_op_parallelism after)'
            % (section['thread_count'], section['intra_op_parallelism']))

    unknown = []
    for key in sorted(section):
        if key in IGNORED_KEYS:
            warnings.append(IGNORED_KEYS[key])
            unknown.append(key)
        elif key not in KNOWN_KEYS:
            warnings.append('aio.%s is not a DeepSpeed aio key (DeepSpeed %s does not read it, nor check unknown '
                            'keys): a misspelling, or a key of a later DeepSpeed; kept' % (key, IGNORED_KEYS_READ_FROM))
            unknown.append(key)

    string_bools = []
    for key in AIO_BOOL_KEYS:
        value = aio[key]
        if isinstance(value, bool):
            continue
        if isinstance(value, str):
            string_bools.append(key)
            warnings.append(
                'aio.%s is the string %r: DeepSpeed keeps strings as strings and any non-empty string is '
                'truthy, so it acts as %s; write a JSON boolean (%s)'
                % (key, value, bool(value), 'true' if value.strip().lower() in ('true', '1', 'yes') else 'false'))
        else:
            warnings.append('aio.%s should be a JSON boolean, got %r' % (key, value))

    int_keys = list(AIO_INT_KEYS)
    for key in int_keys:
        value = aio[key]
        if not _is_int(value):
            warnings.append('aio.%s should be an integer, got %r (%s)' % (key, value, type(value).__name__))
        elif value < 1:
            warnings.append('aio.%s should be >= 1, got %d' % (key, value))
    if _is_int(aio['block_size']) and aio['block_size'] > 0 and aio['block_size'] % 4096:
        warnings.append('aio.block_size=%d is not a multiple of 4096: O_DIRECT I/O needs aligned sizes'
                        % aio['block_size'])

    truthiness = dict((key, bool(aio[key])) for key in AIO_BOOL_KEYS)
    return {
        'present': present,
        'aio': aio,
        'truthiness': truthiness,
        'warnings': warnings,
        'unknown_keys': unknown,
        'string_booleans': string_bools,
    }


def nvme_offload_paths(config):
    """nvme_path values of zero_optimization.offload_{optimizer,param} (where ZeRO-Infinity swaps)."""
    paths = []
    zero = config.get('zero_optimization') if isinstance(config, dict) else None
    if not isinstance(zero, dict):
        return paths
    for key in ('offload_optimizer', 'offload_param'):
        sub = zero.get(key)
        if isinstance(sub, dict) and sub.get('device') == 'nvme' and isinstance(sub.get('nvme_path'), str):
            if sub['nvme_path'] not in paths:
                paths.append(sub['nvme_path'])
    return paths


def analyze_config_text(text):
    """Parse a ds_config.json text; never raises.

    Returns {"parse_error": str|None, "aio_present": bool, "aio": {...}, "aio_truthiness": {...},
    "warnings": [...], "unknown_aio_keys": [...], "nvme_offload_paths": [...], "writer": {...}|None (what
    DeepSpeed reads from checkpoint.writer, module_utils/deepspeed/writer.py)}.
    """
    result = {
        'parse_error': None,
        'aio_present': False,
        'aio': aio_defaults(),
        'aio_truthiness': dict((key, bool(AIO_DEFAULTS_DICT[key])) for key in AIO_BOOL_KEYS),
        'warnings': [],
        'unknown_aio_keys': [],
        'nvme_offload_paths': [],
        'writer': None,
    }
    try:
        config = loads_config(text)
    except ValueError as e:
        result['parse_error'] = 'invalid JSON: %s' % e
        return result
    if not isinstance(config, dict):
        result['parse_error'] = 'top level must be a JSON object, got %s' % type(config).__name__
        return result
    eff = effective_aio(config.get(AIO))
    result['aio_present'] = eff['present']
    result['aio'] = eff['aio']
    result['aio_truthiness'] = eff['truthiness']
    result['warnings'] = eff['warnings']
    result['unknown_aio_keys'] = eff['unknown_keys']
    result['nvme_offload_paths'] = nvme_offload_paths(config)
    try:
        writer = ds_writer.effective_writer(ds_writer.writer_section(config))
    except ValueError as exc:
        result['warnings'].append(str(exc))
    else:
        result['writer'] = writer['writer']
        result['warnings'].extend(writer['warnings'])
    return result


def render_aio(block_size=None, queue_depth=None, intra_op_parallelism=None, single_submit=None,
               overlap_events=None, use_gds=None, legacy_thread_count=False):
    """Build an aio section with real JSON types (ints, booleans) for a config template.

    Missing arguments take DeepSpeed's defaults.  ``legacy_thread_count`` also writes
    ``thread_count`` so DeepSpeed versions before PR #7056 honour the parallelism.
    """
    given = {
        'block_size': block_size,
        'queue_depth': queue_depth,
        'intra_op_parallelism': intra_op_parallelism,
        'single_submit': single_submit,
        'overlap_events': overlap_events,
        'use_gds': use_gds,
    }
    aio = aio_defaults()
    for key, value in given.items():
        if value is None:
            continue
        if key in AIO_BOOL_KEYS:
            if not isinstance(value, bool):
                raise TypeError('%s must be a bool, got %r' % (key, value))
        elif not _is_int(value) or value < 1:
            raise ValueError('%s must be a positive int, got %r' % (key, value))
        aio[key] = value
    if legacy_thread_count:
        aio['thread_count'] = aio['intra_op_parallelism']
    return aio


# --- merging an aio section into a ds_config -----------------------------------------------------
# Limits enforced on the values this collection writes (DeepSpeed itself checks none of them).
AIO_BLOCK_ALIGN = 4096
# DeepSpeed's C++ aio handle takes block_size as a C int (csrc/aio/py_lib/deepspeed_py_io_handle.h).
AIO_BLOCK_MAX = 2 ** 31 - 1
AIO_RANGES = {
    'queue_depth': (1, 65535),
    'intra_op_parallelism': (1, 1024),
}
THREAD_KEYS = ('intra_op_parallelism', 'thread_count', 'both')


def _to_bool(value, name):
    """A real bool from a bool or an Ansible-ish word (units.to_bool: true/false, yes/no, on/off, 1/0)."""
    try:
        return to_bool(value, name)
    except ValueError:
        raise ValueError('%s: %r is not a boolean (use true or false)' % (name, value))


def _to_positive_int(value, name):
    if isinstance(value, bool) or value is None:
        raise ValueError('%s: %r is not an integer' % (name, value))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().lstrip('+-').isdigit():
        value = int(value.strip())
    if not _is_int(value):
        raise ValueError('%s: %r is not an integer' % (name, value))
    if value < 1:
        raise ValueError('%s: %d is below the minimum 1' % (name, value))
    return value


def normalize_aio_values(values):
    """Validate and convert the aio values asked for; return a new dict with real JSON types.

    Keys are those of DeepSpeed's aio section (``AIO_DEFAULTS``); ``None`` values are skipped.
    Booleans accept true/false, yes/no, on/off, 1/0 (bool, int or string) and become bools;
    ``block_size`` accepts a size (``1M``, ``512K``, bytes) and must be a multiple of 4096;
    ``queue_depth`` must be 1..65535 and ``intra_op_parallelism`` 1..1024.
    Raises ValueError naming every bad value and its limit (all problems in one message).
    """
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

    if values is None:
        return {}
    if not isinstance(values, dict):
        raise ValueError('aio must be a mapping of DeepSpeed aio keys, got %s' % type(values).__name__)
    result = {}
    errors = []
    for key in values:
        value = values[key]
        if value is None:
            continue
        name = 'aio.%s' % key
        try:
            if key in LEGACY_KEYS:
                raise ValueError('%s: set intra_op_parallelism and choose the name written with thread_key '
                                 '(thread_count or both)' % name)
            if key in IGNORED_KEYS:
                raise ValueError('%s: %s' % (name, IGNORED_KEYS[key]))
            if key not in AIO_DEFAULTS_DICT:
                raise ValueError('%s is not a DeepSpeed aio key (known keys: %s)'
                                 % (name, ', '.join(k for k, _v in AIO_DEFAULTS)))
            if key in AIO_BOOL_KEYS:
                result[key] = _to_bool(value, name)
            elif key == 'block_size':
                size = parse_size(value, name)
                if size % AIO_BLOCK_ALIGN:
                    raise ValueError('%s: %r (%d bytes) is not a multiple of %d (O_DIRECT I/O needs aligned '
                                     'sizes); use e.g. %d' % (name, value, size, AIO_BLOCK_ALIGN,
                                                              max(AIO_BLOCK_ALIGN, size - size % AIO_BLOCK_ALIGN)))
                if size > AIO_BLOCK_MAX:
                    raise ValueError('%s: %r (%d bytes) is above the limit %d (DeepSpeed passes block_size to its '
                                     'C++ aio handle as an int)' % (name, value, size, AIO_BLOCK_MAX))
                result[key] = size
            else:
                number = _to_positive_int(value, name)
                low, high = AIO_RANGES[key]
                if number > high:
                    raise ValueError('%s: %d is above the limit %d (allowed %d..%d)' % (name, number, high, low, high))
                result[key] = number
        except ValueError as exc:
            errors.append(str(exc))
    if errors:
        raise ValueError('; '.join(errors))
    # presentation order of DeepSpeed's defaults
    return dict((key, result[key]) for key, _default in AIO_DEFAULTS if key in result)


# Numbers of a ds_config: DeepSpeed's own values are far below this many digits.
CONFIG_MAX_DIGITS = 64


def _config_pairs(pairs):
    keys = [key for key, _value in pairs]
    twice = sorted(set(key for key in keys if keys.count(key) > 1))
    if twice:
        raise ValueError('the key %s appears twice in one object (json.load keeps the last one silently)'
                         % ', '.join(repr(key) for key in twice))
    return dict(pairs)


def _config_constant(name):
    raise ValueError('%s is not a JSON number (DeepSpeed would read it as a float)' % name)


def _config_int(text):
    digits = len(text.lstrip('-'))
    if digits > CONFIG_MAX_DIGITS:
        raise ValueError('a number of %d digits (the limit is %d digits)' % (digits, CONFIG_MAX_DIGITS))
    return int(text)


def _config_float(text):
    value = float(text)
    if math.isnan(value) or math.isinf(value):
        raise ValueError('the number %s is out of range (Infinity)' % text[:40])
    return value


def loads_config(text):
    """A ds_config text parsed as strict JSON; ValueError naming what :func:`json.loads` lets through but JSON is
    not: NaN, Infinity, a key twice in one object (the first value would be dropped), a number of more than
    CONFIG_MAX_DIGITS digits (Python's own 4300-digit error otherwise)."""
    return json.loads(text, object_pairs_hook=_config_pairs, parse_constant=_config_constant, parse_int=_config_int,
                      parse_float=_config_float)


def same_json(a, b):
    """Equality of JSON values that tells true from 1 and 1 from 1.0 (key order does not matter)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(same_json(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _copy_json(value):
    """A deep copy of a JSON value that keeps key order."""
    if isinstance(value, dict):
        return dict((key, _copy_json(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


def section_changes(before, after):
    """(changed_keys, removed_keys) between two aio sections (None = absent)."""
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    changed = [key for key in after if key not in before or not same_json(before[key], after[key])]
    removed = [key for key in before if key not in after]
    return changed, removed


def merge_aio(config, desired, thread_key='intra_op_parallelism', remove_ignored=True):
    """Merge ``desired`` aio values into a parsed ds_config; return (new_config, changed_keys, removed_keys).

    ``config`` is never mutated; every other key (nested ones too) and the key order are kept.
    ``desired`` goes through ``normalize_aio_values``.  Only the keys given are managed, with these
    clean-ups of the existing section:

    * ``intra_op_parallelism`` is written under the name(s) ``thread_key`` selects (``thread_count`` is
      the name DeepSpeed read before PR #7056); the other name, when present, is removed so the file
      holds a single, unambiguous value (``both`` writes both names).
    * with ``remove_ignored``, the keys DeepSpeed is known to ignore (``IGNORED_KEYS``: ``num_threads``) are
      removed; other keys it does not read are kept (a later DeepSpeed may read them).
    * string booleans of unmanaged boolean keys (``"false"``, truthy for DeepSpeed) become booleans; a string
      that is no boolean word raises ValueError (set the key in ``desired``).

    A missing (or null) section is added at the end when there is anything to write.
    Raises ValueError when ``config`` is not an object, ``aio`` is neither an object nor null, or a value is bad.
    """
    if thread_key not in THREAD_KEYS:
        raise ValueError('thread_key must be one of %s, got %r' % (', '.join(THREAD_KEYS), thread_key))
    if not isinstance(config, dict):
        raise ValueError('the top level must be a JSON object, got %s' % type(config).__name__)
    old = config.get(AIO)
    if old is not None and not isinstance(old, dict):
        raise ValueError('aio must be a JSON object, got %s' % type(old).__name__)
    wanted = normalize_aio_values(desired)

    section = _copy_json(old) if old is not None else {}
    if remove_ignored:
        for key in list(section):
            if key in IGNORED_KEYS:
                del section[key]
    for key in AIO_BOOL_KEYS:
        if key in wanted or key not in section or not isinstance(section[key], str):
            continue
        try:
            section[key] = _to_bool(section[key], 'aio.%s' % key)
        except ValueError:
            raise ValueError('aio.%s is the string %r in the file, which DeepSpeed treats as %s (any non-empty '
                             'string is truthy) and which is no boolean word; set aio.%s to true or false'
                             % (key, section[key], bool(section[key]), key))
    for key, value in wanted.items():
        if key != 'intra_op_parallelism':
            section[key] = value
            continue
        names = ['intra_op_parallelism', 'thread_count'] if thread_key == 'both' else [thread_key]
        for name in names:
            section[name] = value
        for name in ('intra_op_parallelism', 'thread_count'):
            if name not in names and name in section:
                del section[name]

    changed, removed = section_changes(old, section)
    new_config = _copy_json(config)
    if changed or removed:
        new_config[AIO] = section
    return new_config, changed, removed


# --- the record of the aio sections found before the first change (state=restored) ----------------
AIO_RECORD_SCHEMA_VERSION = 1


def empty_aio_record():
    return {'schema_version': AIO_RECORD_SCHEMA_VERSION, 'files': {}}


def check_aio_record(data, path):
    """Raise ValueError unless ``data`` (parsed from ``path``) is an aio record."""
    if not isinstance(data, dict) or not isinstance(data.get('files'), dict):
        raise ValueError('the record file %s has no "files" mapping; fix or move it aside' % path)
    return data


def aio_record_entry(config, existed, path, now):
    """The record entry of a file before its first change: whether it existed and its aio section (if any)."""
    present = isinstance(config, dict) and AIO in config
    return {
        'path': path,
        'existed': bool(existed),
        'aio_present': present,
        'aio': _copy_json(config[AIO]) if present else None,
        'recorded_at': now,
    }


def restore_aio(config, entry):
    """The config with the aio section of a record ``entry`` put back; every other key as it is now.

    Returns (new_config, remove_file): ``remove_file`` is True when the module created the file and
    nothing but the aio section is in it now.  ``config`` is None when the file no longer exists.
    """
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ValueError('the top level must be a JSON object, got %s' % type(config).__name__)
    new_config = _copy_json(config)
    if entry.get('aio_present'):
        new_config[AIO] = _copy_json(entry.get('aio'))
    else:
        new_config.pop(AIO, None)
    remove_file = not entry.get('existed', True) and not new_config
    return new_config, remove_file


def dump_config(config):
    """The text written for a ds_config: 2-space indented JSON with a trailing newline."""
    return json.dumps(config, indent=2, ensure_ascii=False) + '\n'


# --- the deepspeed_config role's values, checked before anything is gathered or changed -------------------------
# {variable: (low, high)} of its integers (the queue_depth_sweep module's limits where it has them).
ROLE_INT_LIMITS = (
    ('deepspeed_config_saturation_factor', 1, 1024),
    ('deepspeed_config_sweep_runtime', 1, 3600),
    ('deepspeed_config_sweep_ramp', 0, 3600),
    ('deepspeed_config_sweep_repeats', 1, 20),
    ('deepspeed_config_sweep_plateau_points', 1, 1024),
)
ROLE_DEPTH_MAX = 65535
ROLE_POLL_MAX = 3600
ROLE_SIZE_MAX = 2 ** 60


def _role_int(value, name, low, high):
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import to_int

    number = to_int(value, name)
    if number < low or number > high:
        raise ValueError('%s: %r is out of range %d..%d' % (name, value, low, high))
    return number


def role_input_errors(values):
    """The messages of the deepspeed_config role's values out of their limits (each names the variable, the value
    and the limit); [] when all hold. ``values``: {variable: value} (a variable not given is not checked)."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

    errors = []

    def check(name, function):
        if name in values:
            try:
                function(values[name], name)
            except ValueError as exc:
                errors.append(str(exc))

    def block_size(value, name):
        size = parse_size(value, name)
        if size % AIO_BLOCK_ALIGN:
            raise ValueError('%s: %r (%d bytes) is not a multiple of %d (O_DIRECT I/O needs aligned sizes)'
                             % (name, value, size, AIO_BLOCK_ALIGN))
        if size > AIO_BLOCK_MAX:
            raise ValueError('%s: %r (%d bytes) is above the limit %d (DeepSpeed passes block_size to its C++ aio '
                             'handle as an int)' % (name, value, size, AIO_BLOCK_MAX))

    def size(value, name):
        size = parse_size(value, name)
        if size > ROLE_SIZE_MAX:
            raise ValueError('%s: %r (%d bytes) is above the limit %d bytes' % (name, value, size, ROLE_SIZE_MAX))

    def depths(value, name):
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError('%s: %r is not a non-empty list of depths 1..%d' % (name, value, ROLE_DEPTH_MAX))
        for index, depth in enumerate(value):
            _role_int(depth, '%s[%d]' % (name, index), 1, ROLE_DEPTH_MAX)

    def poll(value, name):
        try:
            number = float(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or math.isnan(number) or number < 0 or number > ROLE_POLL_MAX:
            raise ValueError('%s: %r is out of range 0..%d seconds' % (name, value, ROLE_POLL_MAX))

    check('deepspeed_config_block_size', block_size)
    for name, low, high in ROLE_INT_LIMITS:
        check(name, lambda value, name, low=low, high=high: _role_int(value, name, low, high))
    check('deepspeed_config_sweep_depths', depths)
    check('deepspeed_config_sweep_poll', poll)
    check('deepspeed_config_sweep_size_per_point', size)
    check('deepspeed_config_sweep_scratch_size', size)
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.remeasure import (
        role_input_errors as remeasure_errors)
    return errors + ds_writer.role_input_errors(values) + remeasure_errors(values, 'deepspeed_config')
