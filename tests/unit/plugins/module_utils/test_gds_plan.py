# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the gds role decides from a gds facts section: the mode and each refusal's reason, the platform checks,
the cufile.json keys, what a cuFile write proves, the inputs, the override files and the plan."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from gds_fake import OPEN_565, OPEN_570, PROPRIETARY_535

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds import gds_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import CUFILE_DEFAULTS

OPEN = {'version': '570.124.06', 'open_kernel_module': True}
PROPRIETARY = {'version': '535.129.03', 'open_kernel_module': False}
DIRECT = 'properties.max_direct_io_size_kb'
PINNED = 'properties.max_device_pinned_mem_size_kb'
DEPTH = 'execution.max_io_queue_depth'
COMPAT = 'properties.allow_compat_mode'
P2PDMA = 'properties.use_pci_p2pdma'
SWITCH_PAIR = {'gpu': '0000:18:00.0', 'nvme': 'nvme0', 'relation': 'same switch', 'bridges': ['0000:02:01.0']}
FAR_PAIR = {'gpu': '0000:18:00.0', 'nvme': 'nvme2', 'relation': 'different root complexes', 'bridges': []}


def facts(**changes):
    """A gds section of a node that could run either mode: one GPU, open driver 570, kernel 6.8 with P2PDMA,
    CUDA 12.8, nvidia_fs 2.26.6 not loaded."""
    section = {'gpus': 1, 'driver': dict(OPEN), 'kernel': {'release': '6.8.0-51-generic', 'p2pdma': True},
               'cuda_version': '12.8.1', 'nvidia_fs_loaded': False, 'nvidia_fs_version': None,
               'nvidia_fs_modules': None, 'iommu': {'mode': 'off', 'evidence': 'iommu units: none'},
               'topology': {'pairs': [SWITCH_PAIR], 'bridges': []}}
    section.update(changes)
    return section


def loaded(modules=('nvme',), version='2.26.6', **changes):
    return facts(nvidia_fs_loaded=True, nvidia_fs_version=version, nvidia_fs_modules=list(modules), **changes)


# ----------------------------------------------------------------------------- versions
@pytest.mark.parametrize('text, expected', [
    ('6.1.0-28-amd64', (6, 1, 0)), ('12.8', (12, 8)), (12.8, (12, 8)), ('R565', (565,)), (None, None), ('abc', None)])
def test_version_tuple(text, expected):
    assert gds_plan.version_tuple(text) == expected


@pytest.mark.parametrize('text, expected', [
    (OPEN_565, {'version': '565.57.01', 'open_kernel_module': True}),
    (OPEN_570, {'version': '570.124.06', 'open_kernel_module': True}),
    (PROPRIETARY_535, {'version': '535.129.03', 'open_kernel_module': False}),
    ('NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build  (dvs-builder@U16)',
     {'version': '570.86.15', 'open_kernel_module': True}),
    ('NVRM version: something new', {'version': None, 'open_kernel_module': False}),
    ('GCC version:  gcc version 12.2.0', {'version': None, 'open_kernel_module': None}),
    ('', {'version': None, 'open_kernel_module': None}),
    (None, {'version': None, 'open_kernel_module': None}),
])
def test_parse_driver_version(text, expected):
    assert gds_plan.parse_driver_version(text) == expected


# ----------------------------------------------------------------------------- nvidia-fs
def test_nvidia_fs_possible_with_the_open_modules():
    assert gds_plan.nvidia_fs_blocker(loaded()) is None
    assert gds_plan.nvidia_fs_blocker(facts()) is None  # not loaded yet: installable


@pytest.mark.parametrize('version, blocked', [
    (None, True), ('2.26.6', True), ('2.17.5', True), ('2.17.4', False), ('2.15.1', False)])
def test_nvidia_fs_with_the_proprietary_module(version, blocked):
    reason = gds_plan.nvidia_fs_blocker(facts(driver=dict(PROPRIETARY), nvidia_fs_version=version))
    if blocked:
        assert 'proprietary kernel module is loaded (driver 535.129.03' in reason
        assert "nvidia-fs 2.17.5 and later needs NVIDIA's open kernel modules" in reason
    else:
        assert reason is None


def test_nvidia_fs_with_an_unknown_driver():
    reason = gds_plan.nvidia_fs_blocker(facts(driver={'version': None, 'open_kernel_module': None}))
    assert reason.startswith('the NVIDIA driver version is unknown')


@pytest.mark.parametrize('modules, listed', [(['nvme_rdma', 'lustre'], 'nvme_rdma, lustre'), ([], 'nothing')])
def test_nvidia_fs_without_nvme_registered(modules, listed):
    reason = gds_plan.nvidia_fs_blocker(loaded(modules))
    assert reason.startswith('nvidia_fs is loaded but the nvme driver is not registered with it')
    assert '(/proc/driver/nvidia-fs/modules lists %s)' % listed in reason and 'compatibility mode' in reason


def test_nvidia_fs_modules_unreadable_is_not_a_refusal():
    assert gds_plan.nvidia_fs_blocker(facts(nvidia_fs_loaded=True, nvidia_fs_modules=None)) is None


# ----------------------------------------------------------------------------- P2PDMA
@pytest.mark.parametrize('changes, expected', [
    ({'kernel': {'release': '6.1.0-28-amd64', 'p2pdma': True}}, 'kernel 6.1.0-28-amd64 is older than 6.2'),
    ({'kernel': {'release': None, 'p2pdma': None}}, 'kernel (unknown) is older than 6.2'),
    ({'kernel': {'release': '6.8.0', 'p2pdma': False}}, 'kernel 6.8.0 is built without CONFIG_PCI_P2PDMA'),
    ({'kernel': {'release': '6.8.0', 'p2pdma': None}}, 'kernel 6.8.0 CONFIG_PCI_P2PDMA not known'),
    ({'cuda_version': '12.6.3'}, 'CUDA 12.6.3 is older than 12.8'),
    ({'cuda_version': None}, 'CUDA (not found) is older than 12.8'),
    ({'driver': {'version': '560.35.03', 'open_kernel_module': True}},
     'the NVIDIA driver 560.35.03 is older than R565'),
    ({'driver': dict(PROPRIETARY)}, "proprietary kernel module is loaded (driver 535.129.03"),
])
def test_p2pdma_refusals(changes, expected):
    assert expected in gds_plan.p2pdma_blocker(facts(**changes))


def test_p2pdma_possible_and_every_problem_joined():
    assert gds_plan.p2pdma_blocker(facts()) is None
    reason = gds_plan.p2pdma_blocker(facts(kernel={'release': '5.15.0'}, cuda_version='12.4', driver=PROPRIETARY))
    assert reason.startswith("kernel 5.15.0 is older than 6.2; CUDA 12.4 is older than 12.8; NVIDIA's proprietary")
    assert reason.endswith("P2PDMA needs NVIDIA's open kernel modules")


# ----------------------------------------------------------------------------- decide_mode
@pytest.mark.parametrize('section, mode, reason', [
    (loaded(), 'nvidia-fs', 'nvidia_fs 2.26.6 is loaded with nvme registered'),
    (facts(), 'p2pdma', 'kernel, CUDA and the open driver support PCI P2PDMA'),
    (loaded(modules=['nvme_rdma']), 'p2pdma', 'kernel, CUDA and the open driver support PCI P2PDMA'),
    (facts(cuda_version='12.4'), 'nvidia-fs', 'the open kernel modules are loaded; P2PDMA is not possible (CUDA 12.4'),
])
def test_decide_mode_auto(section, mode, reason):
    decided = gds_plan.decide_mode(section)
    assert decided['mode'] == mode and decided['reason'].startswith(reason)


def test_decide_mode_auto_unavailable_names_both_refusals():
    decided = gds_plan.decide_mode(facts(driver=dict(PROPRIETARY), nvidia_fs_version='2.26.6'))
    assert decided['mode'] == 'unavailable'
    assert decided['reason'].startswith('nvidia-fs: NVIDIA\'s proprietary kernel module is loaded')
    assert '. P2PDMA: ' in decided['reason']
    assert decided['blockers']['nvidia-fs'] and decided['blockers']['p2pdma']


@pytest.mark.parametrize('section', [facts(gpus=0), {}, None])
def test_decide_mode_without_a_gpu(section):
    assert gds_plan.decide_mode(section) == {
        'mode': 'unavailable', 'reason': 'no NVIDIA GPU: /proc/driver/nvidia/gpus is empty or missing', 'blockers': {}}


@pytest.mark.parametrize('fstype, mode', [('nfs4', 'unavailable'), ('xfs', 'p2pdma'), ('ext4', 'p2pdma')])
def test_decide_mode_by_filesystem(fstype, mode):
    decided = gds_plan.decide_mode(facts(), fstype)
    assert decided['mode'] == mode
    if mode == 'unavailable':
        assert decided['reason'].startswith('the checkpoint directory is on nfs4')


@pytest.mark.parametrize('want, section, mode, reason', [
    ('nvidia-fs', facts(), 'nvidia-fs', 'nvidia-fs asked and possible'),
    ('p2pdma', loaded(), 'p2pdma', 'p2pdma asked and possible'),
    ('p2pdma', facts(cuda_version='12.4'), 'unavailable', 'p2pdma asked: CUDA 12.4 is older than 12.8'),
    ('nvidia-fs', loaded(modules=[]), 'unavailable', 'nvidia-fs asked: nvidia_fs is loaded but'),
])
def test_decide_mode_asked(want, section, mode, reason):
    decided = gds_plan.decide_mode(section, 'xfs', want)
    assert decided['mode'] == mode and decided['reason'].startswith(reason)


# ----------------------------------------------------------------------------- platform checks
def _statuses(section):
    return dict((check['name'], check['status']) for check in gds_plan.platform_checks(section))


@pytest.mark.parametrize('mode, status', [('off', 'ok'), ('passthrough', 'ok'), ('translated', 'fail'), (None, 'warn')])
def test_iommu_check(mode, status):
    check = gds_plan.iommu_check({'mode': mode, 'evidence': 'group types: DMA-FQ'})
    assert check['status'] == status and 'group types: DMA-FQ' in check['detail']


def test_acs_check():
    bridges = [{'pci': '0000:02:00.0', 'acs': True, 'acs_p2p_redirect': False},
               {'pci': '0000:02:01.0', 'acs': True, 'acs_p2p_redirect': True}]
    check = gds_plan.acs_check({'pairs': [SWITCH_PAIR], 'bridges': bridges})
    assert check['status'] == 'fail' and 'at 0000:02:01.0:' in check['detail']
    assert gds_plan.acs_check({'pairs': [SWITCH_PAIR], 'bridges': bridges[:1]})['status'] == 'ok'
    assert gds_plan.acs_check({'pairs': [], 'bridges': bridges})['status'] == 'n/a'


@pytest.mark.parametrize('pairs, status, detail', [
    ([SWITCH_PAIR, FAR_PAIR], 'ok', '1 of 2 GPU and drive pairs share a PCIe switch, 1 cross root complexes'),
    ([FAR_PAIR], 'warn', 'every GPU and drive pair crosses root complexes (0000:18:00.0-nvme2)'),
    ([], 'n/a', 'no GPU and NVMe controller pair on PCI'),
])
def test_affinity_check(pairs, status, detail):
    check = gds_plan.affinity_check({'pairs': pairs})
    assert check['status'] == status and check['detail'].startswith(detail)


def test_platform_checks():
    assert _statuses(facts()) == {'iommu': 'ok', 'acs': 'ok', 'peer_affinity': 'ok'}
    assert _statuses(facts(gpus=0)) == {'iommu': 'n/a', 'acs': 'n/a', 'peer_affinity': 'n/a'}
    assert _statuses(facts(iommu=None, topology=None)) == {'iommu': 'warn', 'acs': 'n/a', 'peer_affinity': 'n/a'}


# ----------------------------------------------------------------------------- cufile_targets
def _targets(props=None, block=2 ** 20, ranks=8, depth=32, mode='nvidia-fs', policy='preferred', **kwargs):
    return gds_plan.cufile_targets(dict(CUFILE_DEFAULTS, **(props or {})), block, ranks, depth, mode, policy,
                                   **kwargs)


def test_cufile_minimums_are_raised():
    targets = _targets(block=64 * 2 ** 20, ranks=16, depth=256)
    assert targets['set'] == {DIRECT: 65536, PINNED: 16 * 256 * 65536, DEPTH: 256, COMPAT: True}
    assert '%s: 16384 -> 65536 (the checkpoint block size)' % DIRECT in targets['notes']


def test_cufile_minimums_are_never_lowered():
    targets = _targets({DIRECT: 131072})
    assert targets['set'] == {COMPAT: True}
    assert '%s: 131072 kept (>= 1024, the checkpoint block size)' % DIRECT in targets['notes']


@pytest.mark.parametrize('have', [True, '65536', 512])
def test_cufile_unusable_values_are_replaced(have):
    assert _targets({DIRECT: have})['set'][DIRECT] == 1024


def test_cufile_missing_values_are_nvidias_defaults():
    """None (a key of the wrong type in the file) and no properties at all read as NVIDIA's defaults."""
    assert _targets({DIRECT: None})['set'] == {COMPAT: True}
    assert gds_plan.cufile_targets(None, 2 ** 20, 8, 32, 'nvidia-fs', 'preferred')['set'] == {COMPAT: True}


def test_cufile_block_size_rounds_up_to_kib():
    assert _targets({DIRECT: 0}, block=4097)['set'][DIRECT] == 5


@pytest.mark.parametrize('policy, allow, expected', [
    ('required', None, False), ('preferred', None, True), ('required', True, True), ('preferred', False, False)])
def test_cufile_allow_compat_by_policy(policy, allow, expected):
    assert _targets(policy=policy, allow_compat=allow)['set'][COMPAT] is expected


@pytest.mark.parametrize('poll, expected', [(None, 'absent'), (False, False), (True, True)])
def test_cufile_poll_mode(poll, expected):
    assert _targets(poll_mode=poll)['set'].get('properties.use_poll_mode', 'absent') == expected


@pytest.mark.parametrize('mode, have, expected', [
    ('p2pdma', False, True), ('nvidia-fs', True, False), ('nvidia-fs', False, 'absent'),
    ('unavailable', True, 'absent')])
def test_cufile_p2pdma_key_by_mode(mode, have, expected):
    assert _targets({P2PDMA: have}, mode=mode)['set'].get(P2PDMA, 'absent') == expected


# ----------------------------------------------------------------------------- proof_verdict
def _stats(n, mib=0, enabled=True):
    return {'io_stats_enabled': enabled, 'writes': {'n': n, 'mib': mib}}


@pytest.mark.parametrize('mode, before, after, error, proven, detail', [
    ('nvidia-fs', _stats(10, 1), _stats(74, 257), None, 'dma', 'nvidia-fs counted 64 writes (256 MiB) for a 256 MiB'),
    ('nvidia-fs', _stats(10), _stats(10), None, 'compat', 'the 256 MiB cuFile write succeeded but nvidia-fs counted'),
    ('nvidia-fs', _stats(None), _stats(None, enabled=False), None, None, 'nvidia-fs IO stats are disabled'),
    ('nvidia-fs', None, _stats(10), None, None, 'the nvidia-fs write counters were not readable'),
    ('p2pdma', _stats(0), _stats(0), None, None, 'P2PDMA mode: nvidia-fs is not on the path'),
    ('nvidia-fs', _stats(0), _stats(0), 'cuFileWrite: -5', None, 'the cuFile write failed: cuFileWrite: -5'),
])
def test_proof_verdict(mode, before, after, error, proven, detail):
    verdict = gds_plan.proof_verdict(mode, before, after, 256 * 2 ** 20, error)
    assert verdict['proven'] == proven and verdict['detail'].startswith(detail)


# ----------------------------------------------------------------------------- gds_errors
def test_gds_errors_none_for_usable_inputs():
    assert gds_plan.gds_errors('required', 'auto', 2 ** 20, 8, 32, None) == []


@pytest.mark.parametrize('args, expected', [
    (('always', 'auto', 4096, 1, 1, None), "gds_policy: 'always' must be one of required, preferred"),
    (('required', 'dma', 4096, 1, 1, None), "gds_mode: 'dma' must be one of auto, nvidia-fs, p2pdma"),
    (('required', 'auto', 2 ** 32, 1, 1, None), 'gds_block_size: 4294967296 must be a whole number from 4096 to'),
    (('required', 'auto', 6144, 1, 1, None), 'gds_block_size: 6144 is not a multiple of 4096'),
    (('required', 'auto', 4096, True, 1, None), 'gds_ranks: True must be a whole number from 1 to 1024'),
    (('required', 'auto', 4096, 1, 0, None), 'gds_queue_depth: 0 must be a whole number from 1 to 65535'),
    (('required', 'auto', 4096, 1, 1, 'yes'), "gds_poll_mode: 'yes' must be true, false or null"),
])
def test_gds_errors_name_the_value_and_the_limit(args, expected):
    errors = gds_plan.gds_errors(*args)
    assert len(errors) == 1 and errors[0].startswith(expected), errors


# ----------------------------------------------------------------------------- override_files and role_plan
def test_a_file_a_user_named_is_edited_only_when_it_is_that_users():
    """Issue 31, finding 3: `env CUFILE_ENV_PATH_JSON=/etc/docker/daemon.json sleep 1d` (or the line in a dotfile)
    must not make root edit daemon.json; the training user's own file, named from its dotfile, is aligned."""
    sources = [{'source': 'process', 'path': '/proc/9/environ', 'value': '/etc/docker/daemon.json', 'trusted': False,
                'uid': 1000, 'target_uid': 0},
               {'source': 'file', 'path': '/home/t/.profile', 'value': '/home/t/cufile.json', 'trusted': False,
                'uid': 1000, 'target_uid': 1000},
               {'source': 'file', 'path': '/home/t/.bashrc', 'value': '/opt/missing.json'},  # older facts: untrusted
               {'source': 'file', 'path': '/etc/environment', 'value': '/opt/site.json', 'trusted': True}]
    gds = {'overrides': {'env_sources': sources, 'training_uid': 1000}}
    assert [item['path'] for item in gds_plan.override_files(gds)] == ['/home/t/cufile.json', '/opt/site.json']
    ignored = gds_plan.ignored_overrides(gds)
    assert [item['path'] for item in ignored] == ['/etc/docker/daemon.json', '/opt/missing.json']
    assert 'not the training user\'s (owner uid 0)' in ignored[0]['reason']
    gds['overrides']['training_uid'] = None  # no training user known: only what root named
    assert [item['path'] for item in gds_plan.override_files(gds)] == ['/opt/site.json']


def test_override_files_each_path_once():
    overrides = {'env_sources': [{'source': 'file', 'path': '/etc/environment', 'value': '/a.json', 'trusted': True},
                                 {'source': 'process', 'path': '/proc/7/environ', 'value': '/a.json',
                                  'trusted': True}],
                 'env_path_json': '/b.json', 'local_cufile_json': [{'path': '/job/local_cufile.json'}]}
    assert gds_plan.override_files({'overrides': overrides}) == [
        {'path': '/a.json', 'source': 'CUFILE_ENV_PATH_JSON=/a.json in /etc/environment'},
        {'path': '/b.json', 'source': 'CUFILE_ENV_PATH_JSON of the facts process'},
        {'path': '/job/local_cufile.json', 'source': 'DeepSpeed local_cufile.json under a job directory'},
    ]
    assert gds_plan.override_files(None) == [] and gds_plan.override_files({'overrides': None}) == []


def test_role_plan_reads_the_files_properties():
    section = loaded(cufile_json={'properties': dict(CUFILE_DEFAULTS, **{DIRECT: 131072, P2PDMA: True})})
    result = gds_plan.role_plan(section, 'xfs', 'auto', 'required', 2 ** 20, 8, 32)
    assert result['mode'] == 'nvidia-fs' and result['policy'] == 'required' and result['policy_failure'] is None
    assert result['cufile']['set'] == {COMPAT: False, P2PDMA: False}
    assert [check['name'] for check in result['checks']] == ['iommu', 'acs', 'peer_affinity']


@pytest.mark.parametrize('policy', ['required', 'preferred'])
def test_role_plan_policy_failure(policy):
    result = gds_plan.role_plan(facts(cuda_version=None, driver=PROPRIETARY), 'xfs', 'auto', policy, 2 ** 20, 8, 8)
    assert result['mode'] == 'unavailable'
    if policy == 'required':
        assert result['policy_failure'].startswith('gds_policy is required but GPUDirect Storage is not possible')
        assert result['reason'] in result['policy_failure'] and 'gds_policy: preferred' in result['policy_failure']
    else:
        assert result['policy_failure'] is None
