# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A measurement's preconditions and the drives' health around it (module_utils/nvme/drive_health.py, filter
drive_health), over facts shaped as checkpoint_io_facts returns them. The lab's fault suite
(tests/lab/test_faults.py) raises the same faults on real nodes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.filter.health import FilterModule
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import drive_health as h

WWID1 = 'nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001'
WWID2 = 'nvme.1b36-4441544130303032-51454d55204e564d65204374726c-00000001'
DIRS = ['/mnt/checkpoints/runs']
# The problems (up to their first colon) of DATA0001 warning with 3 media errors and DATA0002 gone
WARNED_ERRORS_GONE = [
    'DATA0001 (nvme1n1) raised critical warning 0x02 (temperature above or below a threshold) while the '
    'checkpoint was written',
    'DATA0001 (nvme1n1) counted 3 media errors while the checkpoint was written (smart-log media_errors 0 -> 3)',
    'DATA0002 (nvme2n1), a drive the checkpoint directory is on, left the node while the checkpoint was written '
    '(hot-removed, reset or dead; WWID %s)' % WWID2]


def _ns(name, ctrl, wwid, mount_points=(), holders=()):
    return {'name': name, 'controllers': [ctrl], 'wwid': wwid, 'mount_points': list(mount_points),
            'holders': list(holders)}


def _heat(ctrl, warning=0, media_errors=0, alarm=False):
    bits = {'temperature_threshold': bool(warning & 2), 'available_spare': bool(warning & 1)}
    return {'name': ctrl, 'critical_warning': warning, 'critical_warning_bits': bits, 'temp_alarm': alarm,
            'media_errors': media_errors}


def facts(fio='/usr/bin/fio', disabled=None):
    """A node with the OS drive on / and an md RAID0 of two data drives under an XFS holding DIRS."""
    return {
        'schema_version': 1,
        'nvme': {
            'controllers': [{'name': 'nvme0', 'serial': 'OS0001'}, {'name': 'nvme1', 'serial': 'DATA0001'},
                            {'name': 'nvme2', 'serial': 'DATA0002'}],
            'namespaces': [_ns('nvme0n1', 'nvme0', 'nvme.os', mount_points=['/']),
                           _ns('nvme1n1', 'nvme1', WWID1, holders=['md127']),
                           _ns('nvme2n1', 'nvme2', WWID2, holders=['md127'])],
        },
        'thermal': {'controllers': [_heat('nvme0'), _heat('nvme1'), _heat('nvme2')]},
        'xfs': {'filesystems': [{'kernel_name': 'md127', 'mount_point': '/mnt/checkpoints', 'checkpoint_paths': DIRS,
                                 'md': {'members': ['nvme1n1', 'nvme2n1']}}]},
        'io_uring': {'fio_path': fio, 'io_uring_disabled': disabled},
    }


def test_the_drives_behind_an_xfs_on_md_are_its_members_not_the_os_drive():
    got = h.health(facts(), DIRS, 'io_uring')
    assert got['problems'] == []
    assert [(d['serial'], d['name'], d['wwid'], d['critical_warning']) for d in got['drives']] == [
        ('DATA0001', 'nvme1n1', WWID1, 0), ('DATA0002', 'nvme2n1', WWID2, 0)]


def test_an_xfs_gathered_without_the_directories_is_found_by_its_mount_point():
    """One gather for a whole play lists every XFS before the directories are settled: a directory below a mount
    point is on that XFS (the deepest one), a directory below none is not, and the root XFS claims nothing."""
    node = facts()
    volume = node['xfs']['filesystems'][0]
    volume['checkpoint_paths'] = []
    node['xfs']['filesystems'].append({'kernel_name': 'nvme0n1p1', 'mount_point': '/', 'checkpoint_paths': [],
                                       'md': None})
    deeper = {'kernel_name': 'nvme2n1', 'mount_point': '/mnt/checkpoints/fast', 'checkpoint_paths': [], 'md': None}
    node['xfs']['filesystems'].append(deeper)
    assert h.names_behind(node, ['/mnt/checkpoints/runs']) == ['nvme1n1', 'nvme2n1']
    assert h.names_behind(node, ['/mnt/checkpoints/fast/a']) == ['nvme2n1']
    assert h.names_behind(node, ['/mnt/checkpointsX']) == ['nvme0n1']  # not below the volume: the OS drive's /
    assert h.names_behind(node, ['/srv']) == ['nvme0n1']


def test_a_directory_on_no_xfs_is_on_the_namespace_mounted_deepest_above_it():
    node = facts()
    node['nvme']['namespaces'][2]['mount_points'] = ['/data']
    assert [d['serial'] for d in h.health(node, ['/data/ckpt', '/srv'], None)['drives']] == ['DATA0002', 'OS0001']


def test_fio_missing_and_io_uring_disabled_for_everyone_stop_the_measurement_saying_what_to_do():
    problems = h.health(facts(fio=None, disabled=2), DIRS, 'io_uring')['problems']
    assert len(problems) == 2
    assert problems[0].startswith('fio is not installed (not in PATH)') and 'apt-get install fio' in problems[0]
    assert problems[1].startswith('kernel.io_uring_disabled=2: io_uring is disabled for every process, root included')
    assert 'checkpoint_io_verify_ioengine: libaio' in problems[1]
    # libaio does not need io_uring; disabled=1 lets root (the verification's fio) use it
    assert h.health(facts(disabled=2), DIRS, 'libaio')['problems'] == []
    assert h.health(facts(disabled=1), DIRS, 'io_uring')['problems'] == []


def test_a_critical_warning_before_the_write_stops_it_naming_drive_and_bits():
    node = facts()
    node['thermal']['controllers'][1] = _heat('nvme1', warning=2)
    problems = h.health(node, DIRS, 'io_uring')['problems']
    assert problems == ['DATA0001 (nvme1n1) reports critical warning 0x02 (temperature above or below a threshold) '
                        'before the checkpoint write: a measurement now measures a drive in distress, not the tuning. '
                        'Read its log (nvme smart-log /dev/nvme1), cool, fix or replace the drive, then run again']


def test_without_nvme_cli_the_hwmon_alarm_stands_for_the_temperature_bit():
    node = facts()
    node['thermal']['controllers'][2] = dict(_heat('nvme2', alarm=True), critical_warning=None,
                                             critical_warning_bits=None, media_errors=None)
    drives = h.health(node, DIRS, 'io_uring')['drives']
    assert drives[1]['critical_warning'] == 2 and drives[1]['warnings'] == ['temperature above or below a threshold']


def test_after_the_write_a_drive_gone_a_warning_raised_and_media_errors_void_the_measurement():
    before = h.health(facts(), DIRS, 'io_uring')['drives']
    assert h.health(facts(), before=before) == {'drives': before, 'problems': []}
    now = facts()
    del now['nvme']['namespaces'][2]
    now['thermal']['controllers'][1] = _heat('nvme1', warning=2, media_errors=3)
    got = h.health(now, before=before)
    assert got['drives'][1] is None
    assert [p.split(':')[0] for p in got['problems']] == WARNED_ERRORS_GONE
    assert all(p.endswith('then run again') for p in got['problems'])
    assert 'the measurement is void and is not published' in got['problems'][0]
    assert 'the write failed' in h.health(now, before=before, failed=True)['problems'][0]


def test_a_drive_back_under_another_name_is_the_same_drive_by_serial_and_wwid():
    before = h.health(facts(), DIRS, 'io_uring')['drives']
    now = copy.deepcopy(facts())
    now['nvme']['namespaces'][2]['name'] = 'nvme3n1'
    now['nvme']['namespaces'][2]['controllers'] = ['nvme3']
    now['nvme']['controllers'][2]['name'] = 'nvme3'
    now['thermal']['controllers'][2]['name'] = 'nvme3'
    got = h.health(now, before=before)
    assert got['problems'] == [] and got['drives'][1]['name'] == 'nvme3n1'
    # another drive with the same serial but another WWID is not the same drive
    now['nvme']['namespaces'][2]['wwid'] = 'nvme.other'
    assert 'left the node' in h.health(now, before=before)['problems'][0]


def _write(samples, serials=None):
    """A checkpoint_write result with sample_drives nvme1n1 and nvme2n1: sampled_drives and the samples given as
    [{name: (critical_warning, media_errors, sectors_written)}]."""
    serials = serials or {'nvme1n1': 'DATA0001', 'nvme2n1': 'DATA0002'}
    return {'sampled_drives': dict((name, {'controller': 'nvme' + name[4], 'serial': serial})
                                   for name, serial in serials.items()),
            'samples': [{'t': float(i), 'drives': dict(
                (name, {'critical_warning': cw, 'critical_warning_bits': {'temperature_threshold': bool(cw & 2)},
                        'media_errors': me, 'sectors_written': sw, 'error': None if sw is not None else 'gone'})
                for name, (cw, me, sw) in sample.items())} for i, sample in enumerate(samples)]}


def test_after_the_write_its_own_samples_stand_for_a_second_gather():
    before = h.health(facts(), DIRS, 'io_uring')['drives']
    calm = {'nvme1n1': (0, 0, 100), 'nvme2n1': (0, 0, 100)}
    got = h.health(facts(), before=before, write=_write([calm, calm]))
    assert got['problems'] == []
    assert [(d['serial'], d['name'], d['wwid']) for d in got['drives']] == [
        ('DATA0001', 'nvme1n1', WWID1), ('DATA0002', 'nvme2n1', WWID2)]
    # a warning in any sample (cleared by the last), media errors counted by the last, a drive whose block counters
    # could not be read after fio ended: each voids the measurement, the facts are not read
    samples = [calm, {'nvme1n1': (2, 0, 150), 'nvme2n1': (0, 0, 150)}, {'nvme1n1': (0, 3, 200), 'nvme2n1': (0, 0, None)}]
    got = h.health({}, before=before, write=_write(samples))
    assert [p.split(':')[0] for p in got['problems']] == WARNED_ERRORS_GONE
    assert got['drives'][1] is None


def test_a_sampled_name_that_holds_another_drive_or_no_sample_is_a_drive_gone():
    before = h.health(facts(), DIRS, 'io_uring')['drives']
    calm = {'nvme1n1': (0, 0, 100), 'nvme2n1': (0, 0, 100)}
    swapped = _write([calm], {'nvme1n1': 'DATA0001', 'nvme2n1': 'OTHER9'})
    assert 'left the node' in h.health({}, before=before, write=swapped)['problems'][0]
    assert len(h.health({}, before=before, write={'sampled_drives': {}, 'samples': []})['problems']) == 2


def test_the_filter_names_itself_on_bad_input():
    drive_health = FilterModule().filters()['drive_health']
    with pytest.raises(AnsibleFilterError, match='drive_health: before: expected the drives'):
        drive_health(facts(), before='nvme1n1')
    with pytest.raises(AnsibleFilterError, match='drive_health: write: expected a checkpoint_write result'):
        drive_health(facts(), before=[], write=['nvme1n1'])
    with pytest.raises(AnsibleFilterError, match='drive_health: expected the whole ansible_facts.checkpoint_io'):
        drive_health({'namespaces': []}, DIRS)


def _facts(drives):
    """nvme and block sections: {kernel name: (serial, wwid, sectors written)}."""
    return {'nvme': {'controllers': [{'name': 'nvme%d' % i, 'serial': serial} for i, (serial, _w, _s)
                                     in enumerate(drives.values())],
                     'namespaces': [{'name': name, 'wwid': wwid, 'controllers': ['nvme%d' % i]} for i, (name, (
                         _serial, wwid, _s)) in enumerate(drives.items())]},
            'block': {'devices': [{'name': name, 'sectors_written': sectors} for name, (_serial, _wwid, sectors)
                                  in drives.items()]}}


def test_writes_between_two_gathers_by_identity():
    before = _facts({'nvme1n1': ('DATA0001', 'eui.1', 1000), 'nvme2n1': ('DATA0002', 'eui.2', 50),
                     'nvme3n1': ('DATA0003', 'eui.3', None)})
    # DATA0001 came back as nvme2n1 (kernel names moved), DATA0002 as nvme1n1 with its counter reset, DATA0004 is new
    after = _facts({'nvme2n1': ('DATA0001', 'eui.1', 1000 + 2097152), 'nvme1n1': ('DATA0002', 'eui.2', 10),
                    'nvme3n1': ('DATA0003', 'eui.3', 7), 'nvme4n1': ('DATA0004', 'eui.4', 99)})
    writes = dict((w["serial"], w) for w in h.writes_between(before, after))
    assert writes['DATA0001']['bytes'] == 2097152 * 512 and writes['DATA0001']['name'] == 'nvme2n1'
    assert writes['DATA0001']['line'] == 'DATA0001 (nvme2n1) 1.00 GiB written'
    assert writes['DATA0002']['bytes'] is None and 'rebooted' in writes['DATA0002']['why']
    assert writes['DATA0003']['why'] == 'no sectors written counter'
    assert writes['DATA0004']['why'] == 'not on the node at the first gather'
    assert writes['DATA0004']['line'] == 'DATA0004 (nvme4n1) not known (not on the node at the first gather)'


def test_the_run_and_the_drives_life_against_its_rated_endurance():
    before = _facts({'nvme1n1': ('DATA0001', 'eui.1', 0), 'nvme2n1': ('DATA0002', 'eui.2', 0)})
    after = _facts({'nvme1n1': ('DATA0001', 'eui.1', 2 * 10 ** 9), 'nvme2n1': ('DATA0002', 'eui.2', 0)})
    after['thermal'] = {'controllers': [{'name': 'nvme0', 'data_units_written': 2 * 10 ** 6, 'percentage_used': 3}]}
    for ns in after['nvme']['namespaces']:
        ns['size_bytes'] = 2 * 10 ** 12
    # DATA0001 by its serial (600 TB written), the others by the default: 1 DWPD of their 2 TB over 3 years
    endurance = {'DATA0001': {'tbw': 600}, 'default': {'dwpd': 1, 'warranty_years': 3}}
    writes = dict((w['serial'], w) for w in h.writes_between(before, after, endurance))
    one, two = writes['DATA0001'], writes['DATA0002']
    assert (one['rated_bytes'], one['rated_from']) == (600e12, 'tbw DATA0001')
    assert one['run_share'] == pytest.approx(2 * 10 ** 9 * 512 / 600e12)
    assert one['life_bytes'] == 2 * 10 ** 6 * 512000 and one['life_share'] == pytest.approx(1.024e12 / 600e12)
    assert one['line'] == ('DATA0001 (nvme1n1) 953.67 GiB written; 0.17% of its rated 600 TB (tbw DATA0001); '
                           '1.02 TB written in its life (SMART), 0.17% of the rating; the drive counts 3% of its '
                           'life used')
    assert (two['rated_bytes'], two['rated_from']) == (2e12 * 365 * 3, 'dwpd default')
    assert two['run_share'] == 0 and two['life_bytes'] is None and two['life_share'] is None
    plain = dict((w['serial'], w) for w in h.writes_between(before, after))['DATA0001']
    assert plain['rated_bytes'] is None and plain['run_share'] is None and '; 1.02 TB written in its life' in plain['line']


@pytest.mark.parametrize('value, message', [
    ([], 'is not a mapping of drive serials'),
    ({'': {'tbw': 1}}, "the key '' is not a drive serial"),
    ({'default': {'tbw': 1, 'dwpd': 1}}, 'checkpoint_io_drive_endurance[default]: drive_tbw and drive_dwpd'),
    ({'S1': {'tbw': 0}}, 'checkpoint_io_drive_endurance[S1]: drive_tbw'),
    ({'S1': {'warranty_years': 5}}, 'checkpoint_io_drive_endurance[S1]: give tbw, or dwpd'),
    ({'S1': {'tbwx': 5}}, 'is not a mapping of tbw, dwpd, capacity, warranty_years'),
    ({'S1': {'dwpd': 1, 'capacity': 'lots'}}, 'drive_capacity'),
])
def test_a_rating_that_gives_no_bytes_is_refused_naming_the_entry(value, message):
    with pytest.raises(ValueError) as exc:
        h.check_endurance(value)
    assert message in str(exc.value)
    assert h.check_endurance({'default': {'dwpd': 1}}) == {'default': {'dwpd': 1}}  # its size from the facts
