# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""select_drives: the collection-wide data drive selection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import pytest

from checkpoint_io_fake_node import build_node, make_context, standard_runner

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import nvme_facts
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import (
    drive_verdict,
    log_device_check,
    normalize_selection,
    refusal_reason,
    select_drives,
)


def ns(name, ctrl, **kwargs):
    entry = {'name': name, 'device': '/dev/' + name, 'controllers': [ctrl], 'paths': [], 'wwid': 'wwid-' + name,
             'partitions': [], 'holders': [], 'mounted': False, 'mount_points': [], 'swap': False,
             'is_os_drive': False, 'os_roles': [], 'in_use_reason': None}
    entry.update(kwargs)
    return entry


def ctrl(name, serial, model='QEMU NVMe Ctrl'):
    return {'name': name, 'serial': serial, 'model': model}


FACTS = {
    'controllers': [ctrl('nvme0', 'OS0001'), ctrl('nvme1', 'DATA0001'), ctrl('nvme2', 'DATA0002'),
                    ctrl('nvme3', 'DATA0003', 'SAMSUNG MZQL27T6HBLA'), ctrl('nvme4', 'DATA0004'),
                    ctrl('nvme5', 'DATA0005'), ctrl('nvme6', 'DATA0006')],
    'namespaces': [
        ns('nvme0n1', 'nvme0', partitions=['nvme0n1p1'], partitioned=True, is_os_drive=True, os_roles=['/'],
           mount_points=[], in_use_reason='holds / (nvme0n1p1)'),
        ns('nvme1n1', 'nvme1'),
        ns('nvme2n1', 'nvme2'),
        ns('nvme3n1', 'nvme3', holders=['md0'], in_use_reason='held by md0'),
        ns('nvme4n1', 'nvme4', mounted=True, mount_points=['/srv/other'], in_use_reason='mounted at /srv/other'),
        ns('nvme5n1', 'nvme5', mounted=True, mount_points=['/mnt/ckpt'], in_use_reason='mounted at /mnt/ckpt'),
        ns('nvme6n1', 'nvme6', mounted=True, swap=True, in_use_reason='used as swap'),
    ],
    'errors': [],
}


def names(items):
    return [item['name'] for item in items]


def test_serials_select_data_drives_with_controller_serial_and_model():
    result = select_drives(FACTS, {'serials': ['DATA0001', 'DATA0002']})
    assert names(result['selected']) == ['nvme1n1', 'nvme2n1']
    first = result['selected'][0]
    assert first['serial'] == 'DATA0001' and first['model'] == 'QEMU NVMe Ctrl'
    assert first['controller'] == 'nvme1' and first['serials'] == ['DATA0001']
    assert first['matched_by'] == ['serial DATA0001'] and first['explicit'] is True
    assert first['wwid'] == 'wwid-nvme1n1' and first['device'] == '/dev/nvme1n1'
    assert result['refused'] == [] and result['unmatched'] == []


def test_selectors_are_a_union_without_duplicates():
    result = select_drives(FACTS, {'serials': ['DATA0001'], 'devices': ['/dev/nvme1n1', 'nvme2n1'],
                                   'models': ['^QEMU']})
    assert names(result['selected']) == ['nvme1n1', 'nvme2n1']
    assert result['selected'][0]['matched_by'] == ['serial DATA0001', 'model ^QEMU', 'device /dev/nvme1n1']
    assert result['unmatched'] == []


def test_model_regexes_use_search():
    result = select_drives(FACTS, {'models': ['MZQL2']})
    assert names(result['selected']) == []
    assert [r['device'] for r in result['refused']] == ['/dev/nvme3n1']


@pytest.mark.parametrize('device, fragment', [
    ('nvme0n1', '/dev/nvme0n1 is the OS drive (holds /)'),
    ('nvme3n1', '/dev/nvme3n1 has holders (md0)'),
    ('nvme4n1', '/dev/nvme4n1 is mounted by someone else at /srv/other'),
    ('nvme6n1', '/dev/nvme6n1 is used as swap'),
])
def test_drives_in_use_are_refused_with_device_and_reason(device, fragment):
    result = select_drives(FACTS, {'devices': [device]})
    assert result['selected'] == []
    refused = result['refused'][0]
    assert fragment in refused['reason']
    assert refused['device'] == '/dev/' + device and refused['explicit'] is True
    assert refused['serial']


def test_refusals_through_a_model_regex_are_not_explicit():
    result = select_drives(FACTS, {'models': ['QEMU']})
    assert names(result['selected']) == ['nvme1n1', 'nvme2n1']
    assert [r['name'] for r in result['refused']] == ['nvme0n1', 'nvme4n1', 'nvme5n1', 'nvme6n1']
    assert not any(r['explicit'] for r in result['refused'])


def test_allow_mounted_by_keeps_the_collections_own_mount():
    selection = {'serials': ['DATA0005', 'DATA0004']}
    assert names(select_drives(FACTS, selection)['selected']) == []
    result = select_drives(FACTS, selection, allow_mounted_by=['/mnt/ckpt/'])
    assert names(result['selected']) == ['nvme5n1']
    assert names(result['refused']) == ['nvme4n1']
    assert names(select_drives(FACTS, selection, allow_mounted_by='/mnt/ckpt')['selected']) == ['nvme5n1']


def test_the_os_drive_stays_refused_whatever_allow_mounted_by_says():
    result = select_drives(FACTS, {'serials': ['OS0001']}, allow_mounted_by=['/'])
    assert result['selected'] == [] and 'OS drive' in result['refused'][0]['reason']


def test_unmatched_selectors_are_reported():
    result = select_drives(FACTS, {'serials': ['DATA0001', 'NOPE'], 'models': ['^INTEL'],
                                   'devices': ['/dev/nvme9n1']})
    assert result['unmatched'] == ['serial NOPE', 'model ^INTEL', 'device /dev/nvme9n1']
    assert names(result['selected']) == ['nvme1n1']


def test_nothing_matched_is_an_empty_selection_not_an_error():
    result = select_drives(FACTS, {'serials': ['NOPE']})
    assert result == {'selected': [], 'refused': [], 'unmatched': ['serial NOPE']}


def test_the_whole_checkpoint_io_dict_is_accepted():
    result = select_drives({'nvme': FACTS, 'block': {}}, {'serials': ['DATA0002']})
    assert names(result['selected']) == ['nvme2n1']


def test_facts_are_not_modified():
    facts = copy.deepcopy(FACTS)
    result = select_drives(facts, {'serials': ['DATA0001']})
    result['selected'][0]['holders'].append('x')
    assert facts == FACTS


def test_a_single_string_selector_is_a_list_of_one():
    assert normalize_selection({'serials': 'DATA0001'}) == {'serials': ['DATA0001'], 'models': [], 'devices': [],
                                                            'subsystems': []}


def test_fabric_namespaces_are_selected_by_subsystem_nqn():
    nqn = 'nqn.2026-12.io.checkpoint-io.lab:target-data'
    facts = {'controllers': [ctrl('nvme0', 'OS0001'), dict(ctrl('nvme3', 'a1b2c3', 'Linux'), subsysnqn=nqn),
                             dict(ctrl('nvme4', 'a1b2c3', 'Linux'), subsysnqn=nqn)],
             'namespaces': [ns('nvme0n1', 'nvme0', is_os_drive=True),
                            ns('nvme3n1', 'nvme3', controllers=['nvme3', 'nvme4'], paths=['nvme3c3n1', 'nvme3c4n1']),
                            ns('nvme3n2', 'nvme3', controllers=['nvme3', 'nvme4'])]}
    result = select_drives(facts, {'subsystems': [nqn, 'nqn.2026-12.io.example:absent']})
    assert [d['name'] for d in result['selected']] == ['nvme3n1', 'nvme3n2']
    assert result['selected'][0]['matched_by'] == ['subsystem ' + nqn] and result['selected'][0]['explicit']
    assert result['unmatched'] == ['subsystem nqn.2026-12.io.example:absent']


@pytest.mark.parametrize('selection, fragment', [
    (None, 'checkpoint_io_data_drives is not set'),
    ({}, 'selects nothing'),
    ({'serials': [], 'models': None}, 'selects nothing'),
    (['DATA0001'], 'must be a dict'),
    ('DATA0001', 'must be a dict'),
    ({'serial': ['DATA0001']}, 'unknown keys serial'),
    ({'serials': 'DATA0001', 'wwids': []}, 'unknown keys wwids'),
    ({'serials': 12}, 'serials must be a list of strings'),
    ({'serials': [12]}, 'must hold non-empty strings'),
    ({'devices': ['']}, 'must hold non-empty strings'),
    ({'models': ['[unclosed']}, "'[unclosed' is not a valid regular expression"),
])
def test_bad_selections_are_refused_with_a_clear_message(selection, fragment):
    with pytest.raises(ValueError) as exc:
        select_drives(FACTS, selection)
    assert fragment in str(exc.value)


@pytest.mark.parametrize('facts', [None, [], {'controllers': []}, 'nvme'])
def test_facts_without_namespaces_are_refused(facts):
    with pytest.raises(ValueError, match='needs the nvme facts'):
        select_drives(facts, {'serials': ['DATA0001']})


@pytest.mark.parametrize('allowed', [['relative'], [3], 5])
def test_bad_allow_mounted_by_is_refused(allowed):
    with pytest.raises(ValueError, match='allow_mounted_by'):
        select_drives(FACTS, {'serials': ['DATA0001']}, allow_mounted_by=allowed)


def test_allow_held_by_keeps_the_callers_own_md_array():
    """The xfs role selects the members of the md array it made on an earlier run (idempotent re-runs)."""
    selection = {'serials': ['DATA0003']}
    assert names(select_drives(FACTS, selection)['refused']) == ['nvme3n1']
    result = select_drives(FACTS, selection, allow_held_by=['md0'])
    assert names(result['selected']) == ['nvme3n1'] and result['refused'] == []
    assert names(select_drives(FACTS, selection, allow_held_by='md0')['selected']) == ['nvme3n1']
    other = select_drives(FACTS, selection, allow_held_by=['md127'])
    assert names(other['selected']) == [] and 'holders (md0)' in other['refused'][0]['reason']


def test_allow_held_by_only_forgives_the_named_holders():
    facts = copy.deepcopy(FACTS)
    facts['namespaces'][3]['holders'] = ['md0', 'dm-3']
    result = select_drives(facts, {'serials': ['DATA0003']}, allow_held_by=['md0'])
    assert names(result['selected']) == [] and 'holders (dm-3)' in result['refused'][0]['reason']
    os_drive = select_drives(FACTS, {'serials': ['OS0001']}, allow_held_by=['md0'], allow_mounted_by=['/'])
    assert os_drive['selected'] == []


@pytest.mark.parametrize('allowed', [['/dev/md0'], [3], [''], 5])
def test_bad_allow_held_by_is_refused(allowed):
    with pytest.raises(ValueError, match='allow_held_by'):
        select_drives(FACTS, {'serials': ['DATA0001']}, allow_held_by=allowed)


def test_refusal_reason_of_a_free_drive_is_none():
    assert refusal_reason(ns('nvme1n1', 'nvme1')) is None
    # partitions alone do not make a drive "in use" for queue tuning
    assert refusal_reason(ns('nvme1n1', 'nvme1', partitions=['nvme1n1p1'])) is None


def test_on_the_facts_of_the_fake_node(tmp_path):
    """End to end with the real facts collector: OS drive, md member and multipath head."""
    node = build_node(tmp_path)
    ctx = make_context(node, standard_runner(node))
    inv = nvme_facts.NvmeInventory(ctx, use_nvme_cli=False)
    facts = nvme_facts.collect(ctx, inv)
    result = select_drives(facts, {'serials': ['OS0001', 'DATA0001', 'DATA0002', 'DATA0003', 'NOPE']})
    assert names(result['selected']) == ['nvme1n1', 'nvme2n1']
    assert [r['serial'] for r in result['selected']] == ['DATA0001', 'DATA0002']
    refused = dict((r['name'], r['reason']) for r in result['refused'])
    assert set(refused) == {'nvme0n1', 'nvme3n1'}
    assert 'OS drive' in refused['nvme0n1']
    assert 'md0' in refused['nvme3n1']
    assert result['unmatched'] == ['serial NOPE']
    # the md0 member is acceptable neither through /mnt/ckpt: holders always refuse
    again = select_drives(facts, {'serials': ['DATA0003']}, allow_mounted_by=['/mnt/ckpt'])
    assert again['selected'] == []


# ------------------------------------------------------------------ one namespace, two block devices (issue 12)
def twice(facts=None):
    """FACTS plus nvme7n1 and nvme8n1: one NVMe-oF namespace reached over two controllers without native
    multipath (FABRIC01 on both, one WWID), as the kernel shows it with nvme_core.multipath=N."""
    facts = copy.deepcopy(facts or FACTS)
    facts['controllers'] += [ctrl('nvme7', 'FABRIC01', 'Linux'), ctrl('nvme8', 'FABRIC01', 'Linux')]
    facts['namespaces'] += [ns('nvme7n1', 'nvme7', wwid='uuid.5d1f8c4e-0b4f-4a3e-9a8c-2f7e1b6d3c90'),
                            ns('nvme8n1', 'nvme8', wwid='UUID.5d1f8c4e-0b4f-4a3e-9a8c-2f7e1b6d3c90')]
    return facts


def test_both_paths_of_one_namespace_are_refused_naming_both_and_the_fix():
    """Before issue 12 both block devices were selected and md striped over the same blocks (test failed)."""
    result = select_drives(twice(), {'serials': ['FABRIC01']})
    assert result['selected'] == []
    assert names(result['refused']) == ['nvme7n1', 'nvme8n1']
    reason = result['refused'][0]['reason']
    assert reason.startswith('/dev/nvme7n1 and /dev/nvme8n1 are one namespace reached through 2 block devices (the '
                             'same WWID uuid.5d1f8c4e-0b4f-4a3e-9a8c-2f7e1b6d3c90)')
    assert 'nvme_core.multipath=Y' in reason and 'disconnect all but one path' in reason
    assert result['refused'][0]['duplicate_of'] == ['nvme8n1'] and result['refused'][1]['duplicate_of'] == ['nvme7n1']


def test_one_path_named_alone_is_refused_too():
    result = select_drives(twice(), {'devices': ['/dev/nvme8n1'], 'serials': ['DATA0001']})
    assert names(result['selected']) == ['nvme1n1'] and names(result['refused']) == ['nvme8n1']
    assert 'one namespace reached through 2 block devices' in result['refused'][0]['reason']


def test_duplicates_by_nguid_or_eui_when_the_wwids_differ():
    facts = copy.deepcopy(FACTS)
    facts['namespaces'][1]['nguid'] = facts['namespaces'][2]['nguid'] = None
    facts['namespaces'][1].update(wwid=None, eui='0025388b01a2c3d4')
    facts['namespaces'][2].update(wwid=None, eui='0025388B01A2C3D4')
    result = select_drives(facts, {'serials': ['DATA0001']})
    assert result['selected'] == [] and 'the same EUI-64 0025388b01a2c3d4' in result['refused'][0]['reason']


def test_a_native_multipath_head_is_one_device_and_stays_selected():
    facts = copy.deepcopy(FACTS)
    facts['controllers'] += [ctrl('nvme7', 'FABRIC01'), ctrl('nvme8', 'FABRIC01')]
    facts['namespaces'].append(ns('nvme7n1', 'nvme7', controllers=['nvme7', 'nvme8'], multipath=True,
                                  paths=['nvme7c7n1', 'nvme7c8n1']))
    assert names(select_drives(facts, {'serials': ['FABRIC01']})['selected']) == ['nvme7n1']


def test_a_duplicate_matched_by_a_model_is_an_error_for_every_role():
    """A model regex that matches both paths is not a warning: nothing may use either (test failed before)."""
    verdict = drive_verdict(select_drives(twice(), {'models': ['^Linux$', '^QEMU']}))
    assert len(verdict['errors']) == 1
    assert verdict['errors'][0].startswith('checkpoint_io_data_drives matches a namespace the node reaches through '
                                           'more than one block device: /dev/nvme7n1 and /dev/nvme8n1 are one')
    assert all('nvme7n1' not in warning for warning in verdict['warnings'])


# ------------------------------------------------------------------ the external log device (issue 12)
@pytest.mark.parametrize('path, resolved, fragment', [
    ('/dev/nvme0n1p1', None, 'xfs_log_device: /dev/nvme0n1p1 refused: /dev/nvme0n1 is the OS drive (holds /)'),
    ('/dev/nvme4n1', None, '/dev/nvme4n1 is mounted by someone else at /srv/other'),
    ('/dev/disk/by-id/nvme-DATA0003', '/dev/nvme3n1', 'xfs_log_device: /dev/disk/by-id/nvme-DATA0003 (/dev/nvme3n1) '
                                                      'refused: /dev/nvme3n1 has holders (md0)'),
    ('/dev/nvme6n1', None, 'is used as swap'),
    ('/dev/nvme1n1p2', None, "is a partition of the volume's member /dev/nvme1n1"),
    ('/dev/nvme8n1', None, '/dev/nvme7n1 and /dev/nvme8n1 are one namespace'),
    ('/dev/sdb1', None, 'xfs_log_device: /dev/sdb1 is not an NVMe namespace or a partition of one in the facts'),
])
def test_the_log_device_gets_the_checks_of_the_members(path, resolved, fragment):
    """Before issue 12 xfs_log_device had none of these checks (test failed: no error)."""
    facts = twice()
    facts['namespaces'][1]['partitions'] = ['nvme1n1p2']
    members = select_drives(facts, {'serials': ['DATA0001']})['selected']
    result = log_device_check(facts, path, resolved, members)
    assert any(fragment in error for error in result['errors']), result['errors']


def test_a_free_log_device_passes_with_its_identity():
    facts = copy.deepcopy(FACTS)
    facts['namespaces'][2].update(size_bytes=1024 ** 3, partitions=['nvme2n1p1'])
    result = log_device_check(facts, '/dev/nvme2n1', None, [])
    assert result == {'errors': [], 'identity': {'name': 'nvme2n1', 'device': '/dev/nvme2n1', 'disk': 'nvme2n1',
                                                 'wwid': 'wwid-nvme2n1', 'serial': 'DATA0002',
                                                 'size_bytes': 1024 ** 3}}
    part = log_device_check(facts, '/dev/nvme2n1p1', None, [])
    assert part['errors'] == [] and part['identity']['name'] == 'nvme2n1p1' and part['identity']['size_bytes'] is None
    # the volume's own mount point and md array are not "someone else"
    held = copy.deepcopy(facts)
    held['namespaces'][2].update(holders=['md127'], mount_points=['/mnt/ckpt'])
    assert log_device_check(held, '/dev/nvme2n1', None, [], ['/mnt/ckpt'], ['md127'])['errors'] == []


def test_a_dual_ported_drive_without_native_multipath_on_the_fake_nodes_sysfs(tmp_path):
    """End to end with the real facts collector: a dual-ported drive seen through two controllers without native
    multipath (two block devices, one EUI-64 and NGUID in sysfs) is refused on both paths; the namespace facts carry
    the ids."""
    node = build_node(tmp_path)
    for ctrl_name, pci in (('nvme5', '0000:06:00.0'), ('nvme6', '0000:07:00.0')):
        cdir = node.pci_controller(ctrl_name, '0000:00:0%s.0' % ctrl_name[-1], pci, 'DUAL0001')
        bdir = node.block_dir(cdir, ctrl_name + 'n1', 8388608, wwid='eui.0025388b01a2c3d4')
        with open(os.path.join(bdir, 'eui'), 'w') as handle:
            handle.write('00 25 38 8b 01 a2 c3 d4\n' if ctrl_name == 'nvme5' else '0025388b01a2c3d4\n')
        with open(os.path.join(bdir, 'nguid'), 'w') as handle:
            handle.write('00000000-0000-0000-0000-000000000000\n')  # all zero: no NGUID
    ctx = make_context(node, standard_runner(node))
    facts = nvme_facts.collect(ctx, nvme_facts.NvmeInventory(ctx, use_nvme_cli=False))
    by_name = dict((entry['name'], entry) for entry in facts['namespaces'])
    assert by_name['nvme6n1']['eui'] == by_name['nvme5n1']['eui'] == '0025388b01a2c3d4'
    assert by_name['nvme6n1']['nguid'] is None
    assert by_name['nvme1n1']['eui'] is None and by_name['nvme1n1']['uuid'] is None
    result = select_drives(facts, {'serials': ['DUAL0001', 'DATA0001']})
    assert names(result['selected']) == ['nvme1n1']
    assert names(result['refused']) == ['nvme5n1', 'nvme6n1']
    assert drive_verdict(result, destructive=True)['errors'][0].startswith(
        'checkpoint_io_data_drives matches a namespace the node reaches through more than one block device: '
        '/dev/nvme5n1 and /dev/nvme6n1 are one namespace reached through 2 block devices (the same WWID '
        'eui.0025388b01a2c3d4)')


# --- issue 31, finding 6: a serial names every namespace of its controller ---------------------------------------
MULTI = {'controllers': [ctrl('nvme0', 'OS0001'), ctrl('nvme3', 'MULTI01')],
         'namespaces': [ns('nvme0n1', 'nvme0', is_os_drive=True), ns('nvme3n1', 'nvme3', nsid=1),
                        ns('nvme3n2', 'nvme3', nsid=2)]}


def test_a_serial_alone_does_not_select_several_namespaces():
    with pytest.raises(ValueError) as err:
        select_drives(MULTI, {'serials': ['MULTI01']})
    assert 'MULTI01 is the serial of a controller with 2 namespaces (nvme3n1 (MULTI01/1), nvme3n2 (MULTI01/2))' \
        in str(err.value) and 'MULTI01/<nsid>' in str(err.value)
    result = select_drives(MULTI, {'serials': ['MULTI01/2']})
    assert [d['name'] for d in result['selected']] == ['nvme3n2'] and result['unmatched'] == []
    assert result['selected'][0]['serial_namespaces'] == 2
    assert select_drives(MULTI, {'serials': ['MULTI01/3']})['unmatched'] == ['serial MULTI01/3']


def test_a_force_names_one_namespace_of_a_controller_with_several():
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import identity
    drives = select_drives(MULTI, {'serials': ['MULTI01/1', 'MULTI01/2']})['selected']
    names, errors = identity.check_force(['MULTI01'], drives)
    assert len(errors) == 1 and 'xfs_force names MULTI01, the serial of a controller with several namespaces' \
        in errors[0] and '/dev/nvme3n1 (MULTI01/1, wwid wwid-nvme3n1)' in errors[0]
    assert identity.check_force(['MULTI01/2'], drives)[1] == []
    assert [identity.named_by(d, ['MULTI01/2']) for d in drives] == [None, 'MULTI01/2']
    assert [identity.named_by(d, ['wwid-nvme3n1']) for d in drives] == ['wwid-nvme3n1', None]
    single = select_drives(FACTS, {'serials': ['DATA0001']})['selected'][0]
    assert identity.named_by(single, ['DATA0001']) == 'DATA0001'  # one namespace: the serial alone names it


def test_the_first_play_names_what_stops_the_selection_on_this_node():
    """Issue 31, findings 11 and 17: checked in the first play, before any role changes a node."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import selection_problems
    assert selection_problems(FACTS, {'serials': ['DATA0001']}) == []
    (problem,) = selection_problems(FACTS, {'serials': ['DATA0001', 'DATA0O02'], 'devices': ['/dev/nvme9n1']})
    assert 'names serial DATA0O02, device /dev/nvme9n1, which are no NVMe drive on this node' in problem
    assert 'DATA0001, DATA0002' in problem  # the serials it has
    assert 'is not set' in selection_problems(FACTS, None)[0]
    assert 'selects nothing' in selection_problems(FACTS, {})[0]
    assert 'MULTI01/<nsid>' in selection_problems(MULTI, {'serials': ['MULTI01']})[0]
    # a model pattern or an NQN a fleet shares may match nothing on one node
    assert selection_problems(FACTS, {'models': ['^NOSUCH'], 'subsystems': ['nqn.2026-12.io.x:absent']}) == []


def test_the_first_play_checks_only_the_xfs_settings_the_inventory_gives():
    from ansible_collections.ai_storage.checkpoint_io.plugins.filter.xfs_volume import xfs_settings_errors
    over = {'label': u'ckpt\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9'}  # 10 characters, 16 bytes
    assert xfs_settings_errors(over, given_only=True) == [
        u"xfs_label: 'ckpt\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9' must be at most 12 bytes (UTF-8) without spaces"]
    assert any('xfs_mount_point' in e for e in xfs_settings_errors(over))  # without given_only: all of them
    assert xfs_settings_errors({'label': 'ckpt'}, given_only=True) == []


def test_the_first_play_checks_the_force_list_against_the_node():
    """Finding 7/11: a misspelt serial in xfs_force passed until the xfs step (after the raw baseline and three
    plays had changed the node); a bare serial of a multi-namespace controller named every namespace."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.selection import selection_problems
    sel = {'serials': ['DATA0001', 'DATA0002']}
    assert selection_problems(FACTS, sel, force=['DATA0001', 'DATA0002']) == []
    assert selection_problems(FACTS, sel) == []  # no force given: not checked
    typo = selection_problems(FACTS, sel, force=['DATA0001', 'DATA00002'])
    assert len(typo) == 1 and typo[0].startswith('xfs_force names DATA00002, which is none of the drives')
    assert "xfs_force: True is no longer accepted" in selection_problems(FACTS, sel, force=True)[0]
    multi = selection_problems(MULTI, {'serials': ['MULTI01/1']}, force=['MULTI01'])
    assert len(multi) == 1 and 'xfs_force names MULTI01, the serial of a controller with several namespaces' in multi[0]
    assert selection_problems(MULTI, {'serials': ['MULTI01/1']}, force=['MULTI01/1']) == []
