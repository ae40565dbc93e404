# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection-wide data drive selection (``checkpoint_io_data_drives``).

One pure function, :func:`select_drives`, shared by every role of the collection
(through the ``ai_storage.checkpoint_io.select_drives`` filter): it matches the
user's selectors against the ``nvme`` section of ``checkpoint_io_facts`` and
splits the matches into drives that may be tuned and drives that are refused
(the OS drive, drives mounted by someone else, drives held by md/dm).

One namespace reached through two block devices (a dual-ported drive or an NVMe-oF namespace without native
multipath: two devices, one WWID/NGUID/EUI-64/UUID) is refused on every path whenever one of its paths is
matched, whatever selected it: md would stripe over the same blocks twice. A native-multipath head (one
``nvmeXnY`` over several controllers) is one device and stays selectable.

Standard library only; no Ansible import, so it runs on the controller (filter)
and on the node (modules) alike.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.identity import (
    check_force,
    duplicate_groups,
    identity_key,
    split_serial_nsid,
)

SELECTOR_KEYS = ('serials', 'models', 'devices', 'subsystems')
ID_LABELS = {'wwid': 'WWID', 'nguid': 'NGUID', 'eui': 'EUI-64', 'uuid': 'UUID'}
VARIABLE = 'checkpoint_io_data_drives'


_STR = (str,)


def _as_list(value, key):
    """A selector list: None -> [], a single string -> [string], else a list of non-empty strings."""
    if value is None:
        return []
    if isinstance(value, _STR):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValueError('%s.%s must be a list of strings, got %s %r'
                         % (VARIABLE, key, type(value).__name__, value))
    result = []
    for item in value:
        if not isinstance(item, _STR) or not item.strip():
            raise ValueError('%s.%s must hold non-empty strings, got %r' % (VARIABLE, key, item))
        item = item.strip()
        if item not in result:
            result.append(item)
    return result


def normalize_selection(selection):
    """Validate ``checkpoint_io_data_drives`` and return {serials, models, devices, subsystems} (lists).

    Raises ValueError naming the problem: not a dict, unknown keys, wrong types,
    an invalid regex, or nothing selected at all.
    """
    if selection is None:
        raise ValueError('%s is not set: select the data drives with serials, models (regexes) or '
                         'devices, for example {"serials": ["S6XXNE0T000001"]}' % VARIABLE)
    if not isinstance(selection, dict):
        raise ValueError('%s must be a dict with serials, models and/or devices, got %s %r'
                         % (VARIABLE, type(selection).__name__, selection))
    unknown = sorted(str(key) for key in selection if key not in SELECTOR_KEYS)
    if unknown:
        raise ValueError('%s has unknown keys %s; allowed: %s'
                         % (VARIABLE, ', '.join(unknown), ', '.join(SELECTOR_KEYS)))
    result = dict((key, _as_list(selection.get(key), key)) for key in SELECTOR_KEYS)
    for pattern in result['models']:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError('%s.models: %r is not a valid regular expression (%s)' % (VARIABLE, pattern, exc))
    devices = []
    for device in result['devices']:
        path = device if device.startswith('/') else '/dev/' + device
        if path not in devices:
            devices.append(path)
    result['devices'] = devices
    if not any(result[key] for key in SELECTOR_KEYS):
        raise ValueError('%s selects nothing: give at least one of serials, models (regexes), devices or '
                         'subsystems (NVMe-oF subsystem NQNs)' % VARIABLE)
    return result


def _allowed_mounts(allow_mounted_by):
    if allow_mounted_by is None:
        return []
    if isinstance(allow_mounted_by, _STR):
        allow_mounted_by = [allow_mounted_by]
    if not isinstance(allow_mounted_by, (list, tuple)):
        raise ValueError('allow_mounted_by must be a list of mount points, got %s %r'
                         % (type(allow_mounted_by).__name__, allow_mounted_by))
    result = []
    for item in allow_mounted_by:
        if not isinstance(item, _STR) or not item.startswith('/'):
            raise ValueError('allow_mounted_by must hold absolute mount points, got %r' % (item,))
        item = item.rstrip('/') or '/'
        if item not in result:
            result.append(item)
    return result


def _allowed_holders(allow_held_by):
    if allow_held_by is None:
        return []
    if isinstance(allow_held_by, _STR):
        allow_held_by = [allow_held_by]
    if not isinstance(allow_held_by, (list, tuple)):
        raise ValueError('allow_held_by must be a list of kernel device names, got %s %r'
                         % (type(allow_held_by).__name__, allow_held_by))
    result = []
    for item in allow_held_by:
        if not isinstance(item, _STR) or not item.strip() or '/' in item.strip():
            raise ValueError('allow_held_by must hold kernel device names such as md127, got %r' % (item,))
        if item.strip() not in result:
            result.append(item.strip())
    return result


def refusal_reason(namespace, allowed_mounts=None, allowed_holders=None):
    """Why a namespace must not be tuned, or None.

    Refused: the OS drive (/, /boot, /boot/efi, /efi or swap, directly or through md/dm),
    a drive with holders (md, dm: tune what you own, not someone's stack) other than
    ``allowed_holders``, a drive used as swap, and a drive mounted anywhere but at
    ``allowed_mounts``.
    """
    allowed = allowed_mounts or []
    name = namespace.get('device') or namespace.get('name')
    if namespace.get('is_os_drive'):
        roles = ', '.join(namespace.get('os_roles') or []) or 'the operating system'
        return '%s is the OS drive (holds %s)' % (name, roles)
    holders = [h for h in namespace.get('holders') or [] if h not in (allowed_holders or [])]
    if holders:
        return '%s has holders (%s): it is part of an md/dm stack; tune the stack\'s owner, not its members' % (
            name, ', '.join(holders))
    if namespace.get('swap'):
        return '%s is used as swap' % name
    foreign = [mp for mp in (namespace.get('mount_points') or []) if (mp.rstrip('/') or '/') not in allowed]
    if foreign:
        return '%s is mounted by someone else at %s' % (name, ', '.join(foreign))
    return None


def duplicate_paths(namespaces):
    """{namespace name: {key, names}} for every namespace that another block device of the facts also reaches
    (the same WWID, NGUID, EUI-64 or UUID)."""
    result = {}
    for group in duplicate_groups([ns for ns in namespaces or [] if isinstance(ns, dict)]):
        for name in group['names']:
            result[name] = group
    return result


def duplicate_reason(group):
    """The refusal of one namespace reached through several block devices, naming them, the id and the fix."""
    kind, dummy, value = group['key'].partition(':')
    return ('%s are one namespace reached through %d block devices (the same %s %s): a dual-ported drive or an '
            'NVMe-oF namespace without native multipath; md would stripe over the same blocks twice. Enable native '
            'NVMe multipath (kernel parameter nvme_core.multipath=Y, one nvmeXnY for all paths), or disconnect all '
            'but one path (fix the fabric or dual-port setup) and select that one'
            % (' and '.join('/dev/' + name for name in group['names']), len(group['names']), ID_LABELS[kind], value))


def _nvme_section(nvme_facts, who):
    if isinstance(nvme_facts, dict) and 'nvme' in nvme_facts and 'namespaces' not in nvme_facts:
        nvme_facts = nvme_facts['nvme']
    if not isinstance(nvme_facts, dict) or not isinstance(nvme_facts.get('namespaces'), list):
        raise ValueError('%s needs the nvme facts of checkpoint_io_facts (gather_subset nvme), '
                         'got %s' % (who, type(nvme_facts).__name__))
    return nvme_facts


def _controllers(nvme_facts):
    controllers = {}
    for ctrl in nvme_facts.get('controllers') or []:
        if isinstance(ctrl, dict) and ctrl.get('name'):
            controllers[ctrl['name']] = ctrl
    return controllers


def select_drives(nvme_facts, selection, allow_mounted_by=None, allow_held_by=None):
    """Match ``selection`` (checkpoint_io_data_drives) against ``nvme_facts``.

    ``nvme_facts`` is ``ansible_facts.checkpoint_io.nvme`` (or the whole
    ``ansible_facts.checkpoint_io`` dict). Selectors are a union: a namespace is
    matched when any controller serial equals one of ``serials``, any controller
    model matches one of the ``models`` regexes (re.search), or its device is in
    ``devices`` (``/dev/nvme1n1`` or ``nvme1n1``), or any controller's subsystem NQN is one of ``subsystems``
    (an NVMe-oF target's namespaces, the nvmeof_rdma role's connections).

    Returns::

        {"selected": [namespace dict + serial, serials, model, controller, matched_by, explicit],
         "refused": [{"device", "name", "serial", "model", "wwid", "reason", "matched_by", "explicit",
                      "duplicate_of"}],
         "unmatched": ["serial DATA0009", "model ^FOO", "device /dev/nvme9n1"]}

    ``explicit`` is true when the drive was named by serial or device (not only by a model regex).
    ``duplicate_of``: the other block devices of the same namespace (a refusal for every role, see
    :func:`drive_verdict`), [] for other refusals.
    ``allow_held_by``: kernel names of holders that belong to the caller (the md array a role made
    on an earlier run, such as ``md127``); a drive held only by them is still selected.
    Raises ValueError when the selection or the facts are not usable.
    """
    wanted = normalize_selection(selection)
    allowed = _allowed_mounts(allow_mounted_by)
    allowed_holders = _allowed_holders(allow_held_by)
    nvme_facts = _nvme_section(nvme_facts, 'select_drives')
    controllers = _controllers(nvme_facts)
    duplicates = duplicate_paths(nvme_facts['namespaces'])
    patterns = [(pattern, re.compile(pattern)) for pattern in wanted['models']]

    hits = dict(('serial %s' % s, 0) for s in wanted['serials'])
    hits.update(('model %s' % m, 0) for m in wanted['models'])
    hits.update(('device %s' % d, 0) for d in wanted['devices'])
    hits.update(('subsystem %s' % n, 0) for n in wanted['subsystems'])

    selected = []
    refused = []
    by_serial = namespaces_by_serial(nvme_facts['namespaces'], controllers)
    ambiguous = dict((name, by_serial[name]) for name in wanted['serials'] if len(by_serial.get(name) or []) > 1)
    if ambiguous:
        raise ValueError('; '.join(
            '%s.serials: %s is the serial of a controller with %d namespaces (%s): a serial names one drive, so name '
            'one namespace as %s/<nsid> or by its device' % (VARIABLE, name, len(found), ', '.join(
                '%s (%s/%s)' % (ns['name'], name, ns.get('nsid')) for ns in found), name)
            for name, found in sorted(ambiguous.items())))
    for namespace in nvme_facts['namespaces']:
        if not isinstance(namespace, dict) or not namespace.get('name'):
            continue
        ctrls = [controllers.get(name) or {'name': name} for name in namespace.get('controllers') or []]
        serials = [c.get('serial') for c in ctrls if c.get('serial')]
        models = [c.get('model') for c in ctrls if c.get('model')]
        device = namespace.get('device') or '/dev/' + namespace['name']
        matched_by = []
        for serial in wanted['serials']:
            alone, nsid = split_serial_nsid(serial)
            if alone in serials and (nsid is None or nsid == namespace.get('nsid')):
                matched_by.append('serial %s' % serial)
        for pattern, regex in patterns:
            if any(regex.search(model) for model in models):
                matched_by.append('model %s' % pattern)
        if device in wanted['devices']:
            matched_by.append('device %s' % device)
        nqns = [c.get('subsysnqn') for c in ctrls if c.get('subsysnqn')]
        for nqn in wanted['subsystems']:
            if nqn in nqns:
                matched_by.append('subsystem %s' % nqn)
        if not matched_by:
            continue
        for key in matched_by:
            hits[key] += 1
        explicit = any(not key.startswith('model ') for key in matched_by)
        entry = {
            'serial': serials[0] if serials else None,
            'model': models[0] if models else None,
            'matched_by': matched_by,
            'explicit': explicit,
        }
        group = duplicates.get(namespace['name'])
        reason = duplicate_reason(group) if group else refusal_reason(namespace, allowed, allowed_holders)
        if reason:
            entry.update({'device': device, 'name': namespace['name'], 'wwid': namespace.get('wwid'),
                          'reason': reason, 'duplicate_of': [n for n in group['names'] if n != namespace['name']]
                          if group else []})
            refused.append(entry)
            continue
        item = copy.deepcopy(namespace)
        item.update(entry)
        item['device'] = device
        item['serials'] = serials
        item['controller'] = ctrls[0]['name'] if ctrls else None
        # how many namespaces its serial reaches: a force naming the serial alone names none of several
        item['serial_namespaces'] = len(by_serial.get(item['serial']) or []) or None
        selected.append(item)
    unmatched = [key for key in (['serial %s' % s for s in wanted['serials']]
                                 + ['model %s' % m for m in wanted['models']]
                                 + ['device %s' % d for d in wanted['devices']]
                                 + ['subsystem %s' % n for n in wanted['subsystems']]) if not hits[key]]
    return {'selected': selected, 'refused': refused, 'unmatched': unmatched}


def selection_problems(nvme_facts, selection, allow_mounted_by=None, allow_held_by=None, force=None):
    """What stops ``selection`` (checkpoint_io_data_drives) on this node, as messages ([] when it can be used),
    for the first play of a run, before anything changes: the selection unset or malformed, a serial that names
    several namespaces, and every serial or device it names that is no drive here (a misspelt serial). Models and
    subsystems are patterns and NQNs a fleet shares (an NVMe-oF subsystem is connected later, by nvmeof_rdma): one
    that matches nothing on a node is not a problem here. ``force``: ``xfs_force`` (:func:`force_problems`), when
    the run is to build the volume."""
    problems = force_problems(nvme_facts, force) if force is not None else []
    try:
        found = select_drives(nvme_facts, selection, allow_mounted_by=allow_mounted_by, allow_held_by=allow_held_by)
    except ValueError as exc:
        return [str(exc)] + problems
    missing = [key for key in found['unmatched'] if key.startswith(('serial ', 'device '))]
    if not missing:
        return problems
    nvme_facts = _nvme_section(nvme_facts, 'selection_problems')
    here = sorted(set(c.get('serial') for c in _controllers(nvme_facts).values() if c.get('serial')))
    return ['%s names %s, which %s no NVMe drive on this node (its controllers\' serials: %s)'
            % (VARIABLE, ', '.join(missing), 'is' if len(missing) == 1 else 'are', ', '.join(here) or 'none')] + problems


def node_identities(nvme_facts):
    """Every NVMe namespace of the node as an identity a force is matched against: device, name, wwid (and the
    other ids), its controller's serial, nsid and how many namespaces that serial reaches."""
    nvme_facts = _nvme_section(nvme_facts, 'node_identities')
    ctrls = _controllers(nvme_facts)
    namespaces = [ns for ns in nvme_facts.get('namespaces') or [] if isinstance(ns, dict) and ns.get('name')]
    by_serial = namespaces_by_serial(namespaces, ctrls)
    out = []
    for namespace in namespaces:
        serial = next((ctrls.get(name, {}).get('serial') for name in namespace.get('controllers') or []
                       if ctrls.get(name, {}).get('serial')), None)
        out.append(dict(namespace, device='/dev/%s' % namespace['name'], serial=serial,
                        serial_namespaces=len(by_serial.get(serial) or []) or None))
    return out


def force_problems(nvme_facts, force, variable='xfs_force'):
    """What is wrong with a force (``xfs_force``: the drives that may be overwritten) on this node, before anything
    changes: a bare ``true`` or a bad type, a bare serial of a controller with several namespaces, a name that is no
    NVMe namespace of the node (a misspelt serial must stop the run, not pass as a force of nothing)."""
    return check_force(force, node_identities(nvme_facts), variable)[1]


def namespaces_by_serial(namespaces, controllers):
    """{controller serial: [the namespaces whose controllers carry it]}: one entry per namespace (a multipath
    head, or two block devices of one namespace - one WWID - count once)."""
    out, seen = {}, set()
    for namespace in namespaces or []:
        if not isinstance(namespace, dict) or not namespace.get('name'):
            continue
        for serial in set(controllers.get(name, {}).get('serial') for name in namespace.get('controllers') or []):
            key = (serial, identity_key(namespace) or namespace['name'])
            if serial and key not in seen:
                seen.add(key)
                out.setdefault(serial, []).append(namespace)
    return out


def log_device_check(nvme_facts, path, resolved=None, members=None, allow_mounted_by=None, allow_held_by=None,
                     variable='xfs_log_device'):
    """An external log device (a whole namespace or a partition of one) against the rules of the members.

    ``resolved``: the device ``path`` leads to (a ``/dev/disk/by-id`` link resolved); ``members``: the selected
    members (``select_drives(...).selected``). Refused: a device the NVMe facts do not know (nothing could prove
    it is not the OS drive or in use), the OS drive, a drive mounted (but at ``allow_mounted_by``), with holders
    (but ``allow_held_by``) or used as swap, a member or a partition of one, and one path of a namespace reached
    twice. Returns ``{errors: [...], identity: {name, device, wwid, serial, size_bytes} or None}``: what to
    re-check before mkfs.xfs writes the log.
    """
    nvme_facts = _nvme_section(nvme_facts, 'log_device_check')
    kernel = os.path.basename(resolved or path or '')
    namespaces = [ns for ns in nvme_facts['namespaces'] if isinstance(ns, dict) and ns.get('name')]
    disk = None
    for namespace in namespaces:
        if namespace['name'] == kernel or kernel in (namespace.get('partitions') or []):
            disk = namespace
    shown = path if not resolved or resolved == path else '%s (%s)' % (path, resolved)
    if disk is None:
        return {'errors': ['%s: %s is not an NVMe namespace or a partition of one in the facts of this node, so '
                           'nothing proves it is not the OS drive, mounted or held: give a namespace (or a '
                           'partition of one) that no one uses' % (variable, shown)], 'identity': None}
    errors = []
    member_names = [m.get('name') for m in members or [] if isinstance(m, dict)]
    if disk['name'] in member_names and kernel != disk['name']:  # a whole member: plan_volume names it
        errors.append('%s: %s is a partition of the volume\'s member /dev/%s; the external log needs a device of '
                      'its own' % (variable, shown, disk['name']))
    group = duplicate_paths(namespaces).get(disk['name'])
    reason = duplicate_reason(group) if group else refusal_reason(
        disk, _allowed_mounts(allow_mounted_by), _allowed_holders(allow_held_by))
    if reason:
        errors.append('%s: %s refused: %s' % (variable, shown, reason))
    ctrls = _controllers(nvme_facts)
    serials = [ctrls.get(name, {}).get('serial') for name in disk.get('controllers') or []]
    identity = {'name': kernel, 'device': path, 'disk': disk['name'], 'wwid': disk.get('wwid'),
                'serial': next((s for s in serials if s), None),
                'size_bytes': disk.get('size_bytes') if kernel == disk['name'] else None}
    return {'errors': errors, 'identity': identity}


def drive_verdict(selection, destructive=False, variable='checkpoint_io_data_drives'):
    """What a role does with a :func:`select_drives` result: {"errors": [...], "warnings": [...]}.

    Errors (the role fails before any change): one namespace reached through two block devices, however its
    paths were matched (by serial, device or model); drives named by serial or device that must not be used; no
    drive selected; and, for a ``destructive`` role (one that formats or overwrites drives), selectors that match no
    drive on the node, since a misspelt serial would otherwise build the volume on fewer drives than asked.
    Warnings: drives a model regex matched that are refused, and (non-destructive roles) selectors without a drive.
    """
    if not isinstance(selection, dict) or not all(key in selection for key in ('selected', 'refused', 'unmatched')):
        raise ValueError('drive_verdict needs the result of select_drives, got %r' % (selection,))
    errors = []
    warnings = []
    twice = [entry for entry in selection['refused'] if entry.get('duplicate_of')]
    reasons = []
    for entry in twice:
        if entry['reason'] not in reasons:
            reasons.append(entry['reason'])
    if reasons:
        errors.append('%s matches a namespace the node reaches through more than one block device: %s'
                      % (variable, '; '.join(reasons)))
    named = [entry for entry in selection['refused'] if entry.get('explicit') and not entry.get('duplicate_of')]
    if named:
        errors.append('%s names drives that must not be used: %s; remove them from %s'
                      % (variable, '; '.join(entry['reason'] for entry in named), variable))
    by_model = [entry for entry in selection['refused']
                if not entry.get('explicit') and not entry.get('duplicate_of')]
    if by_model:
        warnings.append('not used (matched by a model regex only): %s'
                        % '; '.join(entry['reason'] for entry in by_model))
    if selection['unmatched']:
        text = '%s selectors without a drive on this node: %s' % (variable, ', '.join(selection['unmatched']))
        if destructive:
            errors.append(text + ' (this role formats the drives it selects: fix the selection)')
        else:
            warnings.append(text)
    if not selection['selected']:
        errors.append('%s selects no data drive (unmatched: %s; refused: %s)'
                      % (variable, ', '.join(selection['unmatched']) or 'none',
                         '; '.join(entry['reason'] for entry in selection['refused']) or 'none'))
    return {'errors': errors, 'warnings': warnings}
