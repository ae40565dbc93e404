# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbook-level interface: the shared ``checkpoint_io_*`` inventory variables, their types, limits and defaults.

One table (:data:`SPEC`) that the plays validate against before anything changes (the ``preflight`` role
through the ``checkpoint_io_inputs`` filter) and that the README's table documents (a unit test keeps the two the
same). Role variables (``<role>_*``) are validated by each role's meta/argument_specs.yml; these are the ones the
playbooks read and hand to several roles.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import posixpath

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.ckpt_write import (
    IOENGINES,
    MAX_QUEUE_DEPTH,
    MAX_RANKS,
    fraction_in_range,
    int_in_range,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.plan.depth import DEFAULT_QUEUE_DEPTH
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import normalize_selection
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.drive_health import check_endurance
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.state_store import STATE_DIR
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.remeasure import (
    DEFAULT_DAYS as REMEASURE_DAYS,
    MAX_DAYS as REMEASURE_MAX_DAYS,
    POLICIES as REMEASURE_POLICIES,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    check_path_limits,
    parse_size,
    to_bool,
    to_int,
)

# name: (kind, default, limits, description). Kinds: int (limits (low, high)), number (limits (low, high,
# low_open, high_open)), bool, size (bytes, > 0), depth (int in limits or 'auto'), choice (limits: the choices),
# str, user (a login name: limits (longest,)), path (an absolute path), paths (a list of absolute paths), dict (the
# data drive selection: its keys checked by selection.normalize_selection), batches (Ansible's play keyword serial:
# a host count in limits, a percentage 1%..100% or a list of them). A default of None means "unset": the plays
# decide (described).
#
# checkpoint_io_serial / checkpoint_io_max_fail_percentage are the play keywords serial and max_fail_percentage
# of the plays that change drives or node settings (io_uring_engine, block_layer, xfs, deepspeed_config). Play
# keywords are templated before any task, so those plays read them through the checkpoint_io_inputs filter
# themselves (a bad value falls back to the default there; the preflight role has failed every host with it).
# Ansible counts max_fail_percentage per batch: more than that share of a batch failing ends the run (the batch's
# other hosts stop at the next task, later batches and plays do not start); a batch whose hosts ALL fail ends it
# too, whatever the percentage - so a single-host canary batch that fails stops every later batch.
SERIAL_DEFAULT = [1, '10%', '100%']
# A login name: useradd's limit (utmp's UT_NAMESIZE); paths: units.check_path_limits.
USER_MAX = 32
SPEC = {
    'checkpoint_io_hosts': ('str', 'checkpoint_nodes', None, 'the inventory group the plays run on'),
    'checkpoint_io_data_drives': ('dict', None, None, 'the data drives: serials, devices, models (regexes), subsystems (NVMe-oF NQNs); '
                                                      'required: unset, the run refuses every node in its first play'),
    'checkpoint_io_training_user': ('user', None, (USER_MAX,), 'the user that runs training (io_uring group, memlock, '
                                                               'the checkpoint directory\'s owner); unset: root'),
    'checkpoint_io_ranks': ('int', 8, (1, MAX_RANKS), 'ranks per node that write the checkpoint at once'),
    'checkpoint_io_queue_depth': ('depth', DEFAULT_QUEUE_DEPTH, (1, MAX_QUEUE_DEPTH),
                                  'DeepSpeed aio queue_depth per rank, or auto (the depth sweep)'),
    'checkpoint_io_xfs': ('bool', False, None, 'let the xfs role build the RAID0 + XFS volume on the data drives '
                                               '(formats them)'),
    'checkpoint_io_checkpoint_paths': ('paths', None, None, 'checkpoint directories whose XFS facts are gathered'),
    'checkpoint_io_checkpoint_dir': ('path', None, None, 'the checkpoint directory the depth sweep writes into, '
                                                         'when the xfs role did not build the volume'),
    'checkpoint_io_deepspeed_configs': ('paths', None, None, 'DeepSpeed config files whose aio section is tuned'),
    'checkpoint_io_deepspeed_python': ('path', None, None, 'the training environment\'s Python (a venv\'s or conda\'s '
                                                           'bin/python): its DeepSpeed version decides the '
                                                           'checkpoint.writer section and the verification\'s '
                                                           'engine; unset: not known'),
    'checkpoint_io_drive_endurance': ('endurance', None, None,
                                      'the data drives\' rated endurance, by serial or default: {tbw: terabytes '
                                      'written} or {dwpd, capacity (default the drive\'s size), warranty_years (5)}; '
                                      'the summary gives each drive\'s share of it the run wrote and, from SMART, '
                                      'its life so far'),
    'checkpoint_io_deepspeed_writer': ('choice', 'auto', ('auto', 'manage', 'leave'),
                                       'the checkpoint.writer section (FastPersist) beside aio: auto where the '
                                       'training environment\'s DeepSpeed has it (0.17.1 and later), manage always, '
                                       'leave never'),
    'checkpoint_io_alignment': ('choice', 'fail', ('fail', 'warn'), 'what an error finding of the alignment check '
                                                                    'does'),
    'checkpoint_io_baseline_measure': ('bool', True, None, 'measure the checkpoint write before any role runs '
                                                           '(recorded once)'),
    'checkpoint_io_verify_dirs': ('paths', None, None, 'directories the verification writes into; unset: the xfs '
                                                       'role\'s volume'),
    'checkpoint_io_verify_ranks': ('int', None, (1, MAX_RANKS), 'ranks of the verification write; unset: '
                                                                'checkpoint_io_ranks'),
    'checkpoint_io_verify_total_size': ('size', '105G', None, 'the checkpoint size written (all ranks); unset, '
                                                              '105G scaled down to checkpoint_io_verify_free_share of '
                                                              'free space; set, refused where it does not fit'),
    'checkpoint_io_verify_free_share': ('number', 0.25, (0.0, 0.9, True, False),
                                        'the most of the free space the verification may write'),
    'checkpoint_io_verify_repeats': ('int', 3, (1, 20), 'runs of each verification write (median and spread)'),
    'checkpoint_io_verify_ioengine': ('choice', 'io_uring', IOENGINES, 'fio engine of the verification write'),
    'checkpoint_io_verify_engine': ('choice', 'auto', ('auto', 'fio', 'deepspeed'),
                                    'what writes the verification\'s checkpoints - deepspeed (DeepSpeed\'s own FastPersist '
                                    'writer, run by checkpoint_io_deepspeed_python), fio, or auto (deepspeed where '
                                    'that Python has DeepSpeed 0.17.1 or later, else fio)'),
    'checkpoint_io_verify_restore': ('bool', True, None, 'read each verification write back (the restore read, '
                                                         'O_DIRECT, the shards dropped from the page cache first) '
                                                         'and report its GiB/s before and after'),
    'checkpoint_io_remeasure': ('choice', 'auto', REMEASURE_POLICIES,
                                'which recorded measurements (the depth sweep, the thermal validation, the '
                                'verification, the io_uring check) a run reuses - auto: those nothing they depended '
                                'on changed under (drives, firmware, kernel, volume, settings) and at most '
                                'checkpoint_io_remeasure_days old; changed: those nothing changed under, any age; '
                                'always: none'),
    'checkpoint_io_remeasure_days': ('int', REMEASURE_DAYS, (0, REMEASURE_MAX_DAYS),
                                     'the age in days past which auto measures again'),
    'checkpoint_io_verify_timeout': ('int', 3600, (1, 86400), 'seconds one verification write may take'),
    'checkpoint_io_verify_poll': ('number', 5, (0.0, 3600.0, True, False), 'seconds between progress reports'),
    'checkpoint_io_verify_min_fraction': ('number', 0.5, (0.0, 1.0, False, False),
                                          'the least share of the measured ceiling a node must reach'),
    'checkpoint_io_gds': ('bool', True, None, 'run the gds role (step 1): the GPUDirect Storage mode decided, '
                                              'cufile.json sized for the checkpoint, the DMA path proven'),
    'checkpoint_io_gds_policy': ('choice', 'preferred', ('required', 'preferred'),
                                 'required fails a node without a GPUDirect DMA path, naming why; preferred warns '
                                 'and continues (use_gds stays false)'),
    'checkpoint_io_thermal_validate': ('bool', True, None, 'run the thermal validation (step 7): a sustained '
                                                           'checkpoint write with each drive\'s thermal evidence '
                                                           'sampled, a verdict per drive and a depth back-off'),
    'checkpoint_io_thermal_duration': ('int', 120, (1, 86400), 'seconds of the thermal validation\'s sustained '
                                                               'write (real fleets: minutes)'),
    'checkpoint_io_report_dir': ('str', 'checkpoint_io_reports', None, 'controller directory of the reports'),
    'checkpoint_io_state_dir': ('path', STATE_DIR, None, 'the node directory of the collection\'s records (what it '
                                                         'made, found and measured; root-owned)'),
    'checkpoint_io_lock_wait': ('int', 0, (0, 86400), 'seconds a run waits for another run on the node to finish '
                                                      '(0: refuse at once, naming it)'),
    'checkpoint_io_lock_ttl': ('int', 21600, (60, 604800), 'seconds a run\'s lease on a node lasts if the run '
                                                           'dies without giving it back'),
    'checkpoint_io_lock_take_over': ('str', None, None, 'the run id of a dead run whose lease is to be taken '
                                                        '(the refusal names it)'),
    'checkpoint_io_serial': ('batches', SERIAL_DEFAULT, (1, 100000),
                             'hosts per batch of the plays that change drives or node settings (play keyword '
                             'serial): a canary host first, then 10%, then the rest'),
    'checkpoint_io_max_fail_percentage': ('int', 50, (0, 100),
                                          'the percentage of a batch\'s hosts that may fail before the run '
                                          'stops (play keyword max_fail_percentage; a batch whose hosts all fail '
                                          'always stops it)'),
}


def _limits_text(kind, limits):
    if kind == 'batches':
        return 'hosts %d to %d or 1%% to 100%%, or a list of them' % limits
    if kind in ('int', 'depth'):
        text = '%d to %d' % limits
        return text + ' or auto' if kind == 'depth' else text
    if kind == 'number':
        low, high, low_open, high_open = limits
        return '%s %s and %s %s' % ('above' if low_open else 'at least', low, 'below' if high_open else 'at most',
                                    high)
    if kind == 'choice':
        return 'one of %s' % ', '.join(limits)
    if kind == 'user':
        return 'at most %d characters, no blank, colon, slash or control character' % limits
    return ''


def absolute_path(name, value):
    """An absolute path below / that the kernel can take (no component over NAME_MAX bytes, at most PATH_MAX - 1
    bytes in all), normalized; or raises ValueError naming the variable, the value and the limit."""
    if not isinstance(value, str) or not posixpath.isabs(value) or posixpath.normpath(value) == '/':
        raise ValueError('%s: %r is not an absolute path below /' % (name, value))
    check_path_limits(value, name)
    if '\0' in value:
        raise ValueError('%s: %r holds a NUL byte' % (name, value))
    return posixpath.normpath(value)


def _user(name, limits, value):
    """A login name as useradd takes it (non-ASCII letters are left to the node's lookup)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError('%s: %r is not a non-empty string' % (name, value))
    if len(value) > limits[0]:
        raise ValueError('%s: %r... is %d characters long, above the %d a user name may have'
                         % (name, value[:40], len(value), limits[0]))
    bad = [char for char in value if char.isspace() or char in ':/' or ord(char) < 32 or ord(char) == 127]
    if bad:
        raise ValueError('%s: %r holds %r, which a user name may not (%s)'
                         % (name, value, bad[0], _limits_text('user', limits)))
    return value


def _batch(name, limits, value):
    """One batch size of the play keyword serial: a host count (int) or a percentage string 'N%'."""
    if isinstance(value, str) and value.strip().endswith('%'):
        text = value.strip()[:-1].strip()
        try:
            number = to_int(text, name)
        except ValueError:
            raise ValueError('%s: %r is not a percentage (1%% to 100%%)' % (name, value))
        if number < 1 or number > 100:
            raise ValueError('%s: %r is outside 1%% to 100%%' % (name, value))
        return '%d%%' % number
    try:
        number = to_int(value, name)
    except ValueError:
        raise ValueError('%s: %r is not a host count or a percentage (%s)'
                         % (name, value, _limits_text('batches', limits)))
    return int_in_range(number, name, *limits)


def _batches(name, limits, value):
    """Ansible's serial: one batch size or a non-empty list of them (the last one repeats); always a list."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError('%s: [] is an empty list (%s)' % (name, _limits_text('batches', limits)))
        return [_batch('%s[%d]' % (name, index), limits, item) for index, item in enumerate(value)]
    return [_batch(name, limits, value)]


def _check(name, kind, limits, value):
    """The value coerced, or raises ValueError naming the variable, the value and the limit."""
    if kind == 'int' or (kind == 'depth' and not (isinstance(value, str) and value.strip() == 'auto')):
        try:
            number = to_int(value, name)
        except ValueError:
            raise ValueError('%s: %r is not an integer (%s)' % (name, value, _limits_text(kind, limits)))
        return int_in_range(number, name, *limits)
    if kind == 'depth':
        return 'auto'
    if kind == 'number':
        try:
            number = float(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or math.isnan(number):
            raise ValueError('%s: %r is not a number (%s)' % (name, value, _limits_text(kind, limits)))
        low, high, low_open, high_open = limits
        fraction_in_range(value if isinstance(value, (int, float)) else number, name, low, high, low_open,
                          high_open)
        return number
    if kind == 'bool':
        return to_bool(value, name)
    if kind == 'size':
        return parse_size(value, name)
    if kind == 'choice':
        if value not in limits:
            raise ValueError('%s: %r is not %s' % (name, value, _limits_text(kind, limits)))
        return value
    if kind == 'str':
        if not isinstance(value, str) or not value.strip():
            raise ValueError('%s: %r is not a non-empty string' % (name, value))
        return value
    if kind == 'user':
        return _user(name, limits, value)
    if kind == 'path':
        return absolute_path(name, value)
    if kind == 'paths':
        if not isinstance(value, (list, tuple)):
            raise ValueError('%s: %r is not a list of absolute paths' % (name, value))
        for index, path in enumerate(value):
            if not isinstance(path, str) or not posixpath.isabs(path):
                raise ValueError('%s[%d]: %r is not an absolute path' % (name, index, path))
            absolute_path('%s[%d]' % (name, index), path)
        return list(value)
    if kind == 'dict':
        if not isinstance(value, dict):
            raise ValueError('%s: %r is not a dict' % (name, value))
        if value:  # {} selects nothing: the roles that take drives refuse it, the others never read it
            normalize_selection(value)
        return value
    if kind == 'endurance':
        return check_endurance(value, name)
    if kind == 'batches':
        return _batches(name, limits, value)
    raise AssertionError('unknown kind %r' % kind)


def check_inputs(given):
    """``given``: {name: value} of the variables the inventory or the command line set (others ignored).

    Returns {"errors": [message, ...], "values": {name: coerced value or default}} for every name of SPEC; a value
    of None counts as unset.
    """
    errors = []
    values = {}
    given = given if isinstance(given, dict) else {}
    for name, (kind, default, limits, _doc) in SPEC.items():
        value = given.get(name)
        if value is None:
            values[name] = list(default) if isinstance(default, list) else default
            continue
        try:
            values[name] = _check(name, kind, limits, value)
        except ValueError as exc:
            errors.append(str(exc))
            values[name] = list(default) if isinstance(default, list) else default
    if values['checkpoint_io_verify_ranks'] is None and 'checkpoint_io_ranks' in values:
        values['checkpoint_io_verify_ranks'] = values['checkpoint_io_ranks']
    return {'errors': errors, 'values': values}


def readme_rows():
    """The README table's rows: (name, type and limits, default, description)."""
    rows = []
    for name, (kind, default, limits, doc) in SPEC.items():
        limit = _limits_text(kind, limits)
        kind_text = {'int': 'int', 'number': 'number', 'bool': 'bool', 'size': 'size', 'depth': 'int',
                     'choice': 'choice', 'str': 'string', 'user': 'string', 'path': 'absolute path',
                     'paths': 'list of absolute paths',
                     'dict': 'dict', 'endurance': 'dict', 'batches': 'batches'}[kind]
        if default is None:
            shown = '-'
        elif isinstance(default, list):
            shown = json.dumps(default)
        elif isinstance(default, bool):
            shown = 'true' if default else 'false'
        else:
            shown = str(default)
        rows.append((name, kind_text + (', ' + limit if limit else ''), shown, doc))
    return rows


# The argument spec types of the kinds. The numeric kinds are raw: ansible's own conversion would refuse 'abc'
# without the limit, so the limits are checked (and named) by check_inputs, the preflight role's first task.
_ARG_TYPES = {'int': 'raw', 'number': 'raw', 'size': 'raw', 'depth': 'raw', 'bool': 'bool', 'choice': 'str',
              'str': 'str', 'user': 'str', 'path': 'path', 'paths': 'list', 'dict': 'dict', 'endurance': 'dict',
              'batches': 'raw'}


def argument_spec_options(names=None):
    """The options of a role's meta/argument_specs.yml for the shared variables ``names`` (default: all of SPEC):
    the preflight role's spec and the verify_checkpoint_write role's are generated from this table and a unit
    test keeps them equal to it."""
    options = {}
    for name, (kind, default, limits, doc) in SPEC.items():
        if names is not None and name not in names:
            continue
        limit = _limits_text(kind, limits)
        option = {'description': ['%s%s.' % (doc[0].upper() + doc[1:], (' (%s)' % limit) if limit else ''),
                                  'Checked with its limits by the preflight role before anything is gathered or '
                                  'changed.'],
                  'type': _ARG_TYPES[kind]}
        if kind == 'paths':
            option['elements'] = 'path'
        if kind == 'choice':
            option['choices'] = list(limits)
        if name == 'checkpoint_io_state_dir':
            # Typed in one place only (state_store.STATE_DIR): the spec names where, not the path.
            option['description'].append('Default: STATE_DIR of plugins/module_utils/common/state_store.py (the README\'s '
                                         'table shows it).')
        elif default is not None:
            option['default'] = default
        options[name] = option
    return options


# Play keywords (serial, max_fail_percentage) are templated before any host's variables are visible: an inventory's
# checkpoint_io_serial (group_vars, host_vars) never reaches them, only -e does; the groups do. The first play puts
# every host in one group that names the run's batches (checked values), and the later plays read them back from the
# groups (:func:`run_batches`).
BATCHES_GROUP = 'checkpoint_io_batches__'


def batches_group(values):
    """The group naming a host's checked batches: ``checkpoint_io_batches__1_10p_100p__f50`` (a percentage as
    ``p``)."""
    serial = values.get('checkpoint_io_serial') or SERIAL_DEFAULT
    serial = serial if isinstance(serial, list) else [serial]
    text = '_'.join(str(item).replace('%', 'p') for item in serial)
    return '%s%s__f%d' % (BATCHES_GROUP, text, int(values.get('checkpoint_io_max_fail_percentage', 50)))


def run_batches(groups, keyword, given=None):
    """The play keyword ``keyword`` (serial or max_fail_percentage) of the run: ``given`` (an extra variable, the only
    checkpoint_io_* variable a play keyword sees) checked, else the one batches group of the first play, else the
    default. Hosts that disagree (two groups) get the default: one run has one canary order."""
    name = {'serial': 'checkpoint_io_serial', 'max_fail_percentage': 'checkpoint_io_max_fail_percentage'}[keyword]
    if given is None:
        found = sorted(group for group in (groups or {}) if str(group).startswith(BATCHES_GROUP))
        if len(found) == 1:
            serial, _sep, fail = found[0][len(BATCHES_GROUP):].rpartition('__f')
            given = ([item[:-1] + '%' if item.endswith('p') else item for item in serial.split('_')]
                     if keyword == 'serial' else fail)
    return check_inputs({name: given} if given is not None else {})['values'][name]
