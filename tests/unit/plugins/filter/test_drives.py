# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ai_storage.checkpoint_io.select_drives filter and its documentation sidecar."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import os

import jinja2
import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.filter import drives

SIDECAR = os.path.join(os.path.dirname(os.path.abspath(drives.__file__)), 'select_drives.yml')

NVME = {
    'controllers': [{'name': 'nvme0', 'serial': 'OS0001', 'model': 'QEMU NVMe Ctrl'},
                    {'name': 'nvme1', 'serial': 'DATA0001', 'model': 'QEMU NVMe Ctrl'}],
    'namespaces': [
        {'name': 'nvme0n1', 'device': '/dev/nvme0n1', 'controllers': ['nvme0'], 'is_os_drive': True,
         'os_roles': ['/'], 'holders': [], 'mount_points': [], 'swap': False, 'wwid': 'w0'},
        {'name': 'nvme1n1', 'device': '/dev/nvme1n1', 'controllers': ['nvme1'], 'is_os_drive': False,
         'os_roles': [], 'holders': [], 'mount_points': [], 'swap': False, 'wwid': 'w1'},
    ],
}
FACTS = {'nvme': NVME}  # the whole ansible_facts.checkpoint_io, as every filter takes it


def test_filter_is_registered_under_its_documented_name():
    filters = drives.FilterModule().filters()
    assert list(filters) == ['select_drives', 'drive_verdict', 'selection_problems']
    assert filters['select_drives'] is drives.select_drives and filters['drive_verdict'] is drives.drive_verdict
    assert filters['selection_problems'] is drives.selection_problems


def test_filter_in_a_template():
    env = jinja2.Environment()
    env.filters.update(drives.FilterModule().filters())
    template = env.from_string(
        "{{ (facts | select_drives(sel)).selected | map(attribute='device') | join(',') }}|"
        "{{ (facts | select_drives(sel)).refused | map(attribute='reason') | join(',') }}")
    out = template.render(facts=FACTS, sel={'serials': ['DATA0001', 'OS0001']})
    assert out == '/dev/nvme1n1|/dev/nvme0n1 is the OS drive (holds /)'


def test_allow_mounted_by_is_passed_through():
    facts = {'nvme': {'controllers': NVME['controllers'],
                      'namespaces': [dict(NVME['namespaces'][1], mount_points=['/ck'])]}}
    assert drives.select_drives(facts, {'serials': ['DATA0001']})['selected'] == []
    assert len(drives.select_drives(facts, {'serials': ['DATA0001']}, allow_mounted_by=['/ck'])['selected']) == 1


def test_allow_held_by_is_passed_through():
    # The second run of the whole playbook: the members of the xfs role's own array md127 stay selectable.
    held = {'nvme': {'controllers': NVME['controllers'], 'namespaces': [dict(NVME['namespaces'][1], holders=['md127'])]}}
    refused = drives.select_drives(held, {'serials': ['DATA0001']})
    assert refused['selected'] == [] and 'holders (md127)' in refused['refused'][0]['reason']
    assert len(drives.select_drives(held, {'serials': ['DATA0001']}, allow_held_by=['md127'])['selected']) == 1
    other = drives.select_drives(held, {'serials': ['DATA0001']}, allow_held_by=['md126'])
    assert other['selected'] == []


@pytest.mark.parametrize('selection, fragment', [
    ({}, 'selects nothing'),
    (None, 'is not set'),
    ({'serial': ['x']}, 'unknown keys serial'),
])
def test_bad_input_is_an_ansible_filter_error(selection, fragment):
    with pytest.raises(AnsibleFilterError) as exc:
        drives.select_drives(FACTS, selection)
    assert str(exc.value).startswith('select_drives: ')
    assert fragment in str(exc.value)


def test_sidecar_documents_the_filter():
    with open(SIDECAR) as f:
        doc = yaml.safe_load(f)
    assert set(doc) == {'DOCUMENTATION', 'EXAMPLES', 'RETURN'}
    documentation = doc['DOCUMENTATION']
    assert documentation['name'] == 'select_drives'
    assert set(documentation['options']) == {'_input', 'selection', 'allow_mounted_by', 'allow_held_by'}
    assert set(documentation['options']['selection']['suboptions']) == {'serials', 'models', 'devices'}
    params = list(inspect.signature(drives.select_drives).parameters)
    assert params == ['facts', 'selection', 'allow_mounted_by', 'allow_held_by']
    assert 'ai_storage.checkpoint_io.select_drives' in doc['EXAMPLES']
    yaml.safe_load(doc['EXAMPLES'])
    assert set(doc['RETURN']['_value']['contains']) == {'selected', 'refused', 'unmatched'}


# ------------------------------------------------------------------ drive_verdict
def test_a_misspelt_serial_stops_a_destructive_role_and_is_named():
    selection = drives.select_drives(FACTS, {'serials': ['DATA0001', 'NO_SUCH']})
    verdict = drives.drive_verdict(selection, destructive=True)
    assert verdict['errors'] == ['checkpoint_io_data_drives selectors without a drive on this node: serial NO_SUCH '
                                 '(this role formats the drives it selects: fix the selection)']
    assert drives.drive_verdict(selection) == {
        'errors': [], 'warnings': ['checkpoint_io_data_drives selectors without a drive on this node: serial NO_SUCH']}


def test_a_named_os_drive_and_an_empty_selection_are_errors_for_every_role():
    verdict = drives.drive_verdict(drives.select_drives(FACTS, {'serials': ['OS0001']}))
    assert verdict['errors'] == [
        'checkpoint_io_data_drives names drives that must not be used: /dev/nvme0n1 is the OS drive (holds /); '
        'remove them from checkpoint_io_data_drives',
        'checkpoint_io_data_drives selects no data drive (unmatched: none; refused: /dev/nvme0n1 is the OS drive '
        '(holds /))']


def test_a_drive_refused_after_a_model_match_is_a_warning():
    verdict = drives.drive_verdict(drives.select_drives(FACTS, {'models': ['^QEMU']}))
    assert verdict == {'errors': [], 'warnings': ['not used (matched by a model regex only): /dev/nvme0n1 is the OS '
                                                  'drive (holds /)']}


def test_drive_verdict_refuses_what_is_not_a_selection():
    with pytest.raises(AnsibleFilterError) as exc:
        drives.drive_verdict({'selected': []})
    assert 'drive_verdict needs the result of select_drives' in str(exc.value)


def test_the_collections_own_array_is_not_a_foreign_holder():
    held = {'controllers': NVME['controllers'], 'namespaces': [dict(NVME['namespaces'][1], holders=['md127'])]}
    assert drives.select_drives({'nvme': held}, {'serials': ['DATA0001']})['selected'] == []
    ours = {'nvme': held, 'state': {'volume': {'exists': True, 'holders': ['md127']}}}
    assert [d['name'] for d in drives.select_drives(ours, {'serials': ['DATA0001']})['selected']] == ['nvme1n1']
    other = {'nvme': held, 'state': {'volume': {'exists': True, 'holders': ['md126']}}}
    assert drives.select_drives(other, {'serials': ['DATA0001']})['selected'] == []
