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

AIO = 'aio'

# Order matters only for presentation.
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
            warnings.append('aio.%s is not a DeepSpeed aio key and is ignored (DeepSpeed does not check '
                            'unknown keys)' % key)
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
    "warnings": [...], "unknown_aio_keys": [...], "nvme_offload_paths": [...]}.
    """
    result = {
        'parse_error': None,
        'aio_present': False,
        'aio': aio_defaults(),
        'aio_truthiness': dict((key, bool(AIO_DEFAULTS_DICT[key])) for key in AIO_BOOL_KEYS),
        'warnings': [],
        'unknown_aio_keys': [],
        'nvme_offload_paths': [],
    }
    try:
        config = json.loads(text)
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
