# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe chains from sysfs paths, the ACS control register from config space bytes, and where two devices meet."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from gds_fake import ACS, ACS_PLAIN, ACS_REDIRECT, AER, acs_config, config_space

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.pci import acs_control, chain, relation

GPU_PATH = '/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0'
NVME_PATH = '/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0'
GPU = chain(GPU_PATH)
DPC = 0x001D  # another extended capability id that is not ACS


# ----------------------------------------------------------------------------- chain
def test_chain_from_the_root_complex_down():
    assert GPU == ('pci0000:00', ['0000:00:01.0', '0000:01:00.0', '0000:02:00.0', '0000:03:00.0'])


def test_chain_lowers_hex_and_skips_non_pci_parts():
    assert chain('/tmp/x/sys/devices/pci0000:AF/0000:AF:00.0/0000:B0:00.0/nvme/nvme3') == (
        'pci0000:AF', ['0000:af:00.0', '0000:b0:00.0'])


@pytest.mark.parametrize('path', [None, '', '/sys/devices/virtual/nvme-fabrics/ctl/nvme4', 'relative/0000:01:00.0'])
def test_chain_off_pci(path):
    assert chain(path) == (None, [])


# ----------------------------------------------------------------------------- acs_control
def test_acs_redirect_bits_decoded():
    decoded = acs_control(acs_config(ACS_REDIRECT))
    assert decoded == {'present': True, 'control': ACS_REDIRECT, 'source_validation': True,
                       'translation_blocking': False, 'p2p_request_redirect': True, 'p2p_completion_redirect': True,
                       'upstream_forwarding': True, 'p2p_egress_control': False, 'direct_translated_p2p': False}


def test_acs_present_with_nothing_enabled():
    decoded = acs_control(acs_config(ACS_PLAIN))
    assert decoded['present'] is True and decoded['control'] == 0
    assert not any(decoded[name] for name in ('p2p_request_redirect', 'p2p_completion_redirect'))


def test_acs_as_the_first_extended_capability():
    assert acs_control(config_space([(0x100, ACS, 0, 0x0004)]))['p2p_request_redirect'] is True


@pytest.mark.parametrize('caps', [
    [(0x100, AER, 0, 0)],  # the list ends without ACS
    [(0x100, AER, 0x148, 0), (0x148, DPC, 0x100, 0)],  # a loop in the next pointers
    [(0x100, AER, 0xFFC, 0)],  # the next pointer runs off the end of the config space
    [],  # no extended capability at all (header 0)
])
def test_acs_absent(caps):
    assert acs_control(config_space(caps)) == {'present': False, 'control': None}


def test_acs_absent_when_the_device_is_gone():
    assert acs_control(b'\xff' * 4096) == {'present': False, 'control': None}


@pytest.mark.parametrize('size', [0, 64, 256])
def test_acs_unknown_without_the_extended_space(size):
    """sysfs gives 64 or 256 bytes of config to a user who is not root: nothing can be said."""
    assert acs_control(acs_config(ACS_REDIRECT, size)) == {'present': None, 'control': None}
    assert acs_control(None) == {'present': None, 'control': None}


# ----------------------------------------------------------------------------- relation
def test_same_switch_and_the_bridges_between():
    assert relation(GPU, chain(NVME_PATH)) == {
        'relation': 'same switch', 'bridges': ['0000:01:00.0', '0000:02:00.0', '0000:02:01.0']}


def test_same_root_port():
    gpu = ('pci0000:00', ['0000:00:01.0', '0000:01:00.0'])
    nvme = ('pci0000:00', ['0000:00:01.0', '0000:01:00.1'])
    assert relation(gpu, nvme) == {'relation': 'same root port', 'bridges': ['0000:00:01.0']}


def test_same_root_complex():
    nvme = chain('/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.0')
    assert relation(GPU, nvme) == {'relation': 'same root complex', 'bridges': [
        '0000:00:01.0', '0000:01:00.0', '0000:02:00.0', '0000:00:03.0']}


def test_different_root_complexes():
    other = chain('/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0')
    assert relation(GPU, other) == {'relation': 'different root complexes', 'bridges': []}
    assert relation(other, GPU)['relation'] == 'different root complexes'


def test_a_device_not_found_on_pci_is_unknown():
    assert relation(GPU, (None, [])) == {'relation': 'unknown', 'bridges': []}
    assert relation((None, []), GPU)['relation'] == 'unknown'
