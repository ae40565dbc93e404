# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a measurement may start on a node, and whether the drives it wrote to held up while it ran.

Pure functions over ``ansible_facts.checkpoint_io`` (sections nvme, thermal, xfs, io_uring), for the measuring
steps (the checkpoint-write verification): before the first write, fio must be installed, io_uring must not be
disabled for everyone when the write uses it, and no drive behind the checkpoint directories may report a
critical warning; after the writes (or when one failed), every such drive must still be on the node by identity
(serial and WWID: its kernel name may change) with no critical warning raised and no media error counted since.
Each problem is one message that says what happened and what to do.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.facts_access import section
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet.planner import rated_bytes

# smart-log critical_warning bits (NVMe base specification, SMART / Health Information log, byte 0), by the names
# of the thermal facts' critical_warning_bits.
WARNING_BITS = (
    ('available_spare', 0x01, 'available spare below its threshold'),
    ('temperature_threshold', 0x02, 'temperature above or below a threshold'),
    ('reliability_degraded', 0x04, 'NVM subsystem reliability degraded'),
    ('read_only', 0x08, 'media in read-only mode'),
    ('volatile_backup_failed', 0x10, 'volatile memory backup failed'),
    ('pmr_read_only', 0x20, 'persistent memory region read-only'),
)
IOENGINES_ON_IO_URING = ('io_uring',)


def _under(path, mount_point):
    mount_point = mount_point.rstrip('/') or '/'
    return path == mount_point or mount_point == '/' or path.startswith(mount_point + '/')


def names_behind(facts, dirs):
    """Kernel names of the NVMe namespaces a write into ``dirs`` lands on: for each directory, the members of the
    md array (or the device) of the XFS the xfs facts place it on (gathered with the directory as a checkpoint path,
    else the XFS mounted deepest above it: a gather of every XFS, as one gather for a whole play makes before the
    directories are settled), else the namespace mounted deepest above it."""
    names = []
    filesystems = [fs for fs in section(facts, 'xfs').get('filesystems') or [] if isinstance(fs, dict)]
    namespaces = [ns for ns in section(facts, 'nvme').get('namespaces') or [] if isinstance(ns, dict)]
    for path in dirs:
        on_xfs = [fs for fs in filesystems if path in (fs.get('checkpoint_paths') or [])]
        if not on_xfs:
            above = sorted((len(fs['mount_point']), i) for i, fs in enumerate(filesystems)
                           if isinstance(fs.get('mount_point'), str) and _under(path, fs['mount_point'])
                           and fs['mount_point'].rstrip('/'))
            on_xfs = [filesystems[above[-1][1]]] if above else []
        if on_xfs:
            md = on_xfs[0].get('md') or {}
            names.extend(md.get('members') or [on_xfs[0].get('kernel_name')])
            continue
        mounted = [(len(mp), ns.get('name')) for ns in namespaces for mp in ns.get('mount_points') or []
                   if isinstance(mp, str) and _under(path, mp)]
        if mounted:
            names.append(max(mounted)[1])
    return [name for i, name in enumerate(names) if name and name not in names[:i]]


def drive_state(facts, ns):
    """One namespace's identity and health: {name, serial, wwid, controller, critical_warning, warnings,
    media_errors}. ``critical_warning`` is the smart-log byte (nvme-cli), else bit 1 from the hwmon alarm (the
    kernel reads the same log; no tool needed), else None."""
    controllers = dict((c.get('name'), c) for c in section(facts, 'nvme').get('controllers') or []
                       if isinstance(c, dict))
    thermal = dict((c.get('name'), c) for c in section(facts, 'thermal').get('controllers') or []
                   if isinstance(c, dict))
    ctrl_name = (ns.get('controllers') or [None])[0]
    ctrl = controllers.get(ctrl_name) or {}
    heat = thermal.get(ctrl_name) or {}
    value = heat.get('critical_warning')
    bits = heat.get('critical_warning_bits') or {}
    if value is None and heat.get('temp_alarm'):
        value, bits = 0x02, {'temperature_threshold': True}
    return {'name': ns.get('name'), 'serial': ctrl.get('serial'), 'wwid': ns.get('wwid'), 'controller': ctrl_name,
            'critical_warning': value, 'warnings': _warnings(value, bits), 'media_errors': heat.get('media_errors'),
            'data_units_written': heat.get('data_units_written'), 'percentage_used': heat.get('percentage_used'),
            'size_bytes': ns.get('size_bytes')}


DATA_UNIT = 512000  # the SMART log's data unit: 1000 x 512 bytes
ENDURANCE_KEYS = ('tbw', 'dwpd', 'capacity', 'warranty_years')


def rating(endurance, serial, capacity=None, name='checkpoint_io_drive_endurance'):
    """(rated bytes, source) of the drive ``serial`` from ``endurance`` ({SERIAL or default: {tbw | dwpd,
    capacity (default: the namespace's size), warranty_years}}), (None, None) where none is given; ValueError naming
    the entry and the limit."""
    endurance = endurance or {}
    key = serial if serial in endurance else 'default'
    entry = endurance.get(key)
    if entry is None:
        return None, None
    label = '%s[%s]' % (name, key)
    if not isinstance(entry, dict) or set(entry) - set(ENDURANCE_KEYS):
        raise ValueError('%s: %r is not a mapping of %s' % (label, entry, ', '.join(ENDURANCE_KEYS)))
    try:
        rated, source = rated_bytes(entry.get('tbw'), entry.get('dwpd'), entry.get('capacity', capacity),
                                    entry.get('warranty_years', 5))
    except ValueError as exc:
        raise ValueError('%s: %s' % (label, exc))
    if rated is None:
        raise ValueError('%s: give tbw, or dwpd (with capacity where the drive\'s size is not known)' % label)
    return rated, '%s %s' % (source, key)


def check_endurance(value, name='checkpoint_io_drive_endurance'):
    """``value`` if every entry gives a rating (a dwpd entry without capacity is checked with a 1 TB drive: its
    size comes from the facts), else ValueError naming the entry."""
    if not isinstance(value, dict):
        raise ValueError('%s: %r is not a mapping of drive serials (or default) to ratings' % (name, value))
    for key in value:
        if not isinstance(key, str) or not key:
            raise ValueError('%s: the key %r is not a drive serial or default' % (name, key))
        rating(value, key, 10 ** 12, name)
    return value


def _share_words(share):
    return '%.2g%%' % (share * 100)


def writes_between(before, after, endurance=None):
    """The bytes written to each NVMe namespace between two gathers of the facts (block and nvme sections),
    matched by identity (serial and WWID: a kernel name may change), from the block layer's sectors written:
    [{name, serial, bytes, why, rated_bytes, rated_from, run_share, life_bytes, life_share, percentage_used,
    line}], ``bytes`` None with ``why`` where it cannot be told (a drive new since, a counter that went back: the
    node rebooted in between, a device without the counter). With ``endurance`` (:func:`rating`), the share of the
    drive's rated life the run used (``run_share``) and, from the SMART log's data units written, its life so far
    (``life_bytes``, ``life_share``); ``percentage_used`` is the drive's own estimate."""
    def counters(facts):
        return dict((d.get('name'), d.get('sectors_written')) for d in section(facts, 'block').get('devices') or []
                    if isinstance(d, dict))
    old, new = counters(before), counters(after)
    out = []
    for ns in section(after, 'nvme').get('namespaces') or []:
        if not isinstance(ns, dict) or ns.get('name') not in new:
            continue
        now = drive_state(after, ns)
        then = _find(before, now)
        entry = {'name': now['name'], 'serial': now['serial'], 'bytes': None, 'why': None}
        start, end = (old.get(then['name']) if then else None), new.get(now['name'])
        if then is None:
            entry['why'] = 'not on the node at the first gather'
        elif start is None or end is None:
            entry['why'] = 'no sectors written counter'
        elif end < start:
            entry['why'] = 'the counter went back (the node rebooted in between)'
        else:
            entry['bytes'] = (end - start) * 512
        written = ('%.2f GiB written' % (entry['bytes'] / 1073741824.0) if entry['bytes'] is not None
                   else 'not known (%s)' % entry['why'])
        units = now.get('data_units_written')
        rated, source = rating(endurance, now['serial'], now.get('size_bytes'))
        entry.update(rated_bytes=rated, rated_from=source, percentage_used=now.get('percentage_used'),
                     life_bytes=units * DATA_UNIT if isinstance(units, int) and not isinstance(units, bool) else None,
                     run_share=None, life_share=None)
        if rated:
            entry['run_share'] = entry['bytes'] / rated if entry['bytes'] is not None else None
            entry['life_share'] = entry['life_bytes'] / rated if entry['life_bytes'] is not None else None
            written += '; %s of its rated %.3g TB (%s)' % (
                _share_words(entry['run_share']) if entry['run_share'] is not None else 'a share not known',
                rated / 1e12, source)
        if entry['life_bytes'] is not None:
            written += '; %.3g TB written in its life (SMART)%s' % (
                entry['life_bytes'] / 1e12, ', %s of the rating' % _share_words(entry['life_share'])
                if entry['life_share'] is not None else '')
        if entry['percentage_used'] is not None:
            written += '; the drive counts %s%% of its life used' % entry['percentage_used']
        entry['line'] = '%s %s' % (_label(now), written)
        out.append(entry)
    return out


def _label(drive):
    return '%s (%s)' % (drive.get('serial') or 'serial unknown', drive.get('name'))


def _find(facts, drive):
    """The namespace now on the node with the drive's identity (serial and WWID), or None."""
    for ns in section(facts, 'nvme').get('namespaces') or []:
        if not isinstance(ns, dict):
            continue
        now = drive_state(facts, ns)
        if now['serial'] == drive.get('serial') and now['wwid'] == drive.get('wwid'):
            return now
    return None


def _warning_problem(drive, when):
    return ('%s reports critical warning 0x%02x (%s) %s: a measurement now measures a drive in distress, not the '
            'tuning. Read its log (nvme smart-log /dev/%s), cool, fix or replace the drive, then run again'
            % (_label(drive), drive['critical_warning'], ', '.join(drive['warnings']) or 'unknown bits', when,
               drive.get('controller') or drive.get('name')))


def readiness(facts, dirs, ioengine):
    """Before the first write: {drives, problems}. ``drives`` are the namespaces behind ``dirs`` with their
    health (the identities the check after the writes compares with)."""
    dirs = [d for d in dirs or [] if isinstance(d, str)]
    io_uring = section(facts, 'io_uring')
    problems = []
    if io_uring and not io_uring.get('fio_path'):
        problems.append('fio is not installed (not in PATH): the verification writes the checkpoint with fio. Install '
                        'it (apt-get install fio, or let the io_uring_engine role do it: '
                        'io_uring_engine_install_packages: true), then run again')
    if ioengine in IOENGINES_ON_IO_URING and io_uring.get('io_uring_disabled') == 2:
        problems.append('kernel.io_uring_disabled=2: io_uring is disabled for every process, root included, so a '
                        'checkpoint write with ioengine io_uring cannot start (nor can DeepSpeed aio over io_uring). '
                        'Allow it (sysctl kernel.io_uring_disabled=0, or the io_uring_engine role with '
                        'io_uring_engine_io_uring_disabled: 0, or 1 with io_uring_engine_io_uring_group), or set '
                        'checkpoint_io_verify_ioengine: libaio, then run again')
    namespaces = dict((ns.get('name'), ns) for ns in section(facts, 'nvme').get('namespaces') or []
                      if isinstance(ns, dict))
    drives = [drive_state(facts, namespaces[name]) for name in names_behind(facts, dirs) if name in namespaces]
    for drive in drives:
        if drive['critical_warning']:
            problems.append(_warning_problem(drive, 'before the checkpoint write'))
    return {'drives': drives, 'problems': problems}


def _warnings(value, bits):
    return [text for key, bit, text in WARNING_BITS if (bits or {}).get(key) or (isinstance(value, int) and value & bit)]


def sampled_state(write, drive):
    """The drive of ``before`` as the checkpoint write's own samples saw it (checkpoint_write ``sample_drives``:
    ``sampled_drives`` read as fio started, ``samples`` every second and once more after fio ended): None where
    its kernel name no longer holds a drive with its serial or the last sample could not read its block counters
    (gone); else its state, the worst critical warning of any sample, the media errors of the last."""
    name = drive.get('name')
    info = ((write or {}).get('sampled_drives') or {}).get(name) or {}
    entries = [(sample.get('drives') or {}).get(name) for sample in (write or {}).get('samples') or []
               if isinstance(sample, dict)]
    entries = [entry for entry in entries if isinstance(entry, dict)]
    if not entries or info.get('serial') != drive.get('serial') or entries[-1].get('sectors_written') is None:
        return None
    raised = [entry for entry in entries if entry.get('critical_warning')]
    worst = raised[-1] if raised else entries[-1]
    value = worst.get('critical_warning')
    return {'name': name, 'serial': info.get('serial'), 'wwid': drive.get('wwid'), 'controller': info.get('controller'),
            'critical_warning': value, 'warnings': _warnings(value, worst.get('critical_warning_bits')),
            'media_errors': entries[-1].get('media_errors')}


def _finder(facts, write):
    """How a drive of ``before`` is found now: in ``write``'s samples where given, else in ``facts``."""
    if write is not None:
        return lambda drive: sampled_state(write, drive)
    return lambda drive: _find(facts, drive)


def held_up(facts, before, failed=False, write=None):
    """After the writes (``failed``: one of them failed): the problems of the drives of ``before`` (from
    :func:`readiness`): gone from the node, a critical warning raised, media errors counted since. With ``write``
    (the last checkpoint write's result, drives sampled) the drives are read from its samples, not from ``facts``."""
    void = 'the write failed' if failed else 'the measurement is void and is not published'
    problems = []
    for drive in before or []:
        if not isinstance(drive, dict):
            continue
        now = _finder(facts, write)(drive)
        if now is None:
            problems.append('%s, a drive the checkpoint directory is on, left the node while the checkpoint was written '
                            '(hot-removed, reset or dead; WWID %s): %s. Put it back or replace it, make the checkpoint '
                            'volume whole again (a reboot assembles the array from mdadm.conf and mounts it from '
                            'fstab; a replaced drive needs the volume rebuilt: xfs_state absent with xfs_force, then '
                            'present), then run again' % (_label(drive), drive.get('wwid'), void))
            continue
        if now['critical_warning'] and now['critical_warning'] != drive.get('critical_warning'):
            problems.append('%s raised critical warning 0x%02x (%s) while the checkpoint was written: %s. Read its log '
                            '(nvme smart-log /dev/%s), cool, fix or replace the drive, then run again'
                            % (_label(now), now['critical_warning'], ', '.join(now['warnings']) or 'unknown bits',
                               void, now.get('controller') or now.get('name')))
        before_errors, now_errors = drive.get('media_errors'), now.get('media_errors')
        if isinstance(before_errors, int) and isinstance(now_errors, int) and now_errors > before_errors:
            problems.append('%s counted %d media errors while the checkpoint was written (smart-log media_errors %d -> '
                            '%d): %s. The drive is failing: replace it, then run again'
                            % (_label(now), now_errors - before_errors, before_errors, now_errors, void))
    return problems


def health(facts, dirs=None, ioengine=None, before=None, failed=False, write=None):
    """The filter's one entry: ``before`` None -> :func:`readiness`; else {drives: the drives of ``before`` as
    they are now (None where gone), problems: :func:`held_up`}; ``write``: read them from that checkpoint write's
    samples (:func:`sampled_state`) instead of ``facts``."""
    if before is None:
        return readiness(facts, dirs, ioengine)
    if not isinstance(before, list):
        raise ValueError('before: expected the drives of an earlier drive_health result (a list), got %s'
                         % type(before).__name__)
    if write is not None and not isinstance(write, dict):
        raise ValueError('write: expected a checkpoint_write result (a dict), got %s' % type(write).__name__)
    now = _finder(facts, write)
    return {'drives': [now(drive) for drive in before if isinstance(drive, dict)],
            'problems': held_up(facts, before, failed, write)}
