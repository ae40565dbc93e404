# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""block_queue: validation, ordered plan, apply with read-back, and the record of originals."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import block_queue as bq

LAB_LIMITS = {
    'schedulers_available': ['none', 'mq-deadline'],
    'hw_tag_depth': 1023,
    'blk_mq': True,
    'max_hw_sectors_kb': 512,
    'page_size_kb': 4,
}
LAB_CURRENT = {'scheduler': 'none', 'nr_requests': 1023, 'read_ahead_kb': 128, 'max_sectors_kb': 512,
               'nomerges': 0, 'rq_affinity': 1}


def write(path, text):
    parent = os.path.dirname(str(path))
    if not os.path.isdir(parent):
        os.makedirs(parent)
    with open(str(path), 'w') as f:
        f.write(text + '\n')


def fake_queue(root, name='nvme1n1', scheduler='[none] mq-deadline', nr_requests=1023, tags=1023, mq=True,
               serial='DATA0001', wwid='nvme.1b36-4441544130303031-51454d55204e564d65204374726c-00000001'):
    """/sys/block/<name> of a lab data drive under ``root`` (a plain directory tree)."""
    base = os.path.join(str(root), 'block', name)
    values = {'scheduler': scheduler, 'nr_requests': str(nr_requests), 'read_ahead_kb': '128',
              'max_sectors_kb': '512', 'max_hw_sectors_kb': '512', 'nomerges': '0', 'rq_affinity': '1'}
    for key, value in values.items():
        write(os.path.join(base, 'queue', key), value)
    if mq:
        for index in range(2):
            write(os.path.join(base, 'mq', str(index), 'nr_tags'), str(tags))
    if wwid:
        write(os.path.join(base, 'wwid'), wwid)
    write(os.path.join(base, 'nsid'), '1')
    if serial:
        write(os.path.join(base, 'device', 'serial'), serial.ljust(20))
        write(os.path.join(base, 'device', 'model'), 'QEMU NVMe Ctrl')
    return os.path.join(base, 'queue')


class FakeKernel(object):
    """The kernel's side effects on a fake queue directory, as measured on the lab (6.1).

    Writing ``scheduler`` resets ``nr_requests`` (to the tag depth for none, to 256 for a
    scheduler); ``nr_requests`` above the tag depth with none, or above 2048 with a
    scheduler, is EINVAL; below 4 is clamped to 4; ``max_sectors_kb`` above the hw limit
    is EINVAL.
    """

    def __init__(self, tags=1023):
        self.tags = tags
        self.log = []

    def _active(self, queue_dir):
        with open(os.path.join(queue_dir, 'scheduler')) as f:
            return bq.parse_scheduler(f.read())['active']

    def __call__(self, path, value):
        queue_dir, attr = os.path.split(path)
        self.log.append((attr, value))
        if attr == 'scheduler':
            available = ['none', 'mq-deadline']
            if value not in available:
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
            write(path, ' '.join('[%s]' % s if s == value else s for s in available))
            write(os.path.join(queue_dir, 'nr_requests'), str(self.tags if value == 'none' else 256))
            return
        if attr == 'nr_requests':
            value = max(4, int(value))
            limit = self.tags if self._active(queue_dir) == 'none' else 2048
            if value > limit:
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        if attr == 'max_sectors_kb' and int(value) > 512:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        write(path, str(value))


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize('wanted, fragments', [
    ({'nr_requests': 4096}, ['4096', '1023', 'tag depth', 'scheduler none', 'EINVAL']),
    ({'scheduler': 'mq-deadline', 'nr_requests': 4096}, ['4096', '2048', 'mq-deadline']),
    ({'nr_requests': 3}, ['nr_requests 3', 'below 4', 'clamp']),
    ({'nr_requests': 0}, ['nr_requests 0', 'below 4']),
    ({'max_sectors_kb': 1024}, ['max_sectors_kb 1024', 'max_hw_sectors_kb 512']),
    ({'max_sectors_kb': 0}, ['max_sectors_kb 0', 'page size']),
    ({'read_ahead_kb': 1023}, ['read_ahead_kb 1023', 'page size', '1020']),
    ({'read_ahead_kb': -4}, ['negative']),
    ({'nomerges': 3}, ['nomerges 3', '0, 1, 2']),
    ({'rq_affinity': 3}, ['rq_affinity 3', '0, 1, 2']),
    ({'scheduler': 'cfq'}, ["unknown scheduler 'cfq'", 'none, mq-deadline']),
    ({'scheduler': 'deadline'}, ["unknown scheduler 'deadline'"]),
    ({'nr_requests': True}, ['nr_requests must be an integer', 'bool']),
    ({'nr_requests': '512'}, ['nr_requests must be an integer', 'str']),
    ({'read_ahead_kb': 1.5}, ['read_ahead_kb must be an integer', 'float']),
    ({'scheduler': 1}, ['scheduler must be a string']),
    ({'bogus': 1}, ["unknown queue attribute 'bogus'"]),
])
def test_validation_refuses_with_value_and_limit(wanted, fragments):
    errors = bq.validate(LAB_CURRENT, wanted, LAB_LIMITS, 'nvme1n1')
    assert len(errors) == 1, errors
    for fragment in fragments:
        assert fragment in errors[0]
    assert errors[0].startswith('nvme1n1: ')


def test_validation_reports_every_error_at_once():
    errors = bq.validate(LAB_CURRENT, {'nr_requests': 4096, 'max_sectors_kb': 4096, 'nomerges': 7},
                         LAB_LIMITS, 'nvme1n1')
    assert len(errors) == 3


@pytest.mark.parametrize('wanted', [
    {'nr_requests': 1023},
    {'nr_requests': 4},
    {'scheduler': 'mq-deadline', 'nr_requests': 2048},
    {'scheduler': 'kyber'},  # loaded on demand by the kernel
    {'max_sectors_kb': 512, 'read_ahead_kb': 0},
    {'max_sectors_kb': 4, 'read_ahead_kb': 1024, 'nomerges': 2, 'rq_affinity': 2},
])
def test_validation_accepts_values_within_the_limits(wanted):
    assert bq.validate(LAB_CURRENT, wanted, LAB_LIMITS, 'nvme1n1') == []


def test_the_limit_follows_the_scheduler_that_will_be_active():
    current = dict(LAB_CURRENT, scheduler='mq-deadline', nr_requests=256)
    # stays mq-deadline: 2048 is the limit
    assert bq.validate(current, {'nr_requests': 2000}, LAB_LIMITS) == []
    # switching to none: the tag depth is the limit
    errors = bq.validate(current, {'scheduler': 'none', 'nr_requests': 2000}, LAB_LIMITS)
    assert '2000' in errors[0] and '1023' in errors[0]


def test_bio_based_devices_are_refused():
    limits = dict(LAB_LIMITS, blk_mq=False, hw_tag_depth=None, schedulers_available=['none'])
    errors = bq.validate(dict(LAB_CURRENT, scheduler='none'), {'scheduler': 'mq-deadline', 'nr_requests': 64},
                         limits, 'md0')
    assert len(errors) == 2
    assert all('bio-based' in e for e in errors)


# ------------------------------------------------------------------ plan
def test_plan_orders_scheduler_first_and_max_sectors_before_read_ahead():
    wanted = {'rq_affinity': 2, 'read_ahead_kb': 1024, 'nomerges': 2, 'max_sectors_kb': 256,
              'nr_requests': 512, 'scheduler': 'mq-deadline'}
    result = bq.plan(LAB_CURRENT, wanted, LAB_LIMITS, 'nvme1n1')
    assert result['errors'] == []
    assert [w['attribute'] for w in result['writes']] == list(bq.ORDER)
    assert result['changed_keys'] == list(bq.ORDER)
    assert result['after'] == wanted


def test_plan_rewrites_nr_requests_after_a_scheduler_switch_even_when_equal():
    current = dict(LAB_CURRENT, scheduler='mq-deadline', nr_requests=512)
    result = bq.plan(current, {'scheduler': 'none', 'nr_requests': 512}, LAB_LIMITS)
    assert [w['attribute'] for w in result['writes']] == ['scheduler', 'nr_requests']
    assert 'resets' in result['writes'][1]['reason']
    assert result['changed_keys'] == ['scheduler']


def test_plan_warns_when_a_scheduler_switch_resets_an_unmanaged_nr_requests():
    result = bq.plan(LAB_CURRENT, {'scheduler': 'mq-deadline'}, LAB_LIMITS, 'nvme1n1')
    assert [w['attribute'] for w in result['writes']] == ['scheduler']
    assert 'resets nr_requests' in result['warnings'][0]


def test_plan_is_empty_when_everything_is_in_place():
    result = bq.plan(LAB_CURRENT, {'scheduler': 'none', 'nr_requests': 1023, 'read_ahead_kb': 128}, LAB_LIMITS)
    assert result['writes'] == [] and result['changed_keys'] == [] and result['errors'] == []


def test_plan_ignores_none_values_and_writes_nothing_on_errors():
    result = bq.plan(LAB_CURRENT, {'scheduler': None, 'nr_requests': 4096, 'read_ahead_kb': 1024}, LAB_LIMITS)
    assert result['errors'] and result['writes'] == []
    assert set(result['before']) == {'nr_requests', 'read_ahead_kb'}


# ------------------------------------------------------------------ read-ahead sizes
@pytest.mark.parametrize('value', ['1M', '1MiB', '1m', '1 MiB', 1048576, '1048576', '1024K', '1024KiB', 1048576.0])
def test_read_ahead_sizes_accepted_alike(value):
    assert bq.resolve_read_ahead(value) == 1024


@pytest.mark.parametrize('value, fragment', [
    ('1X', "'1X' is not a size"),
    ('1MB', 'ambiguous'),
    (0, 'not a size'),
    (-1, 'not a size'),
    (True, 'not a size'),
    ('1.5M', 'not a size'),
    (1000, 'not a whole number of KiB'),
    ([1], 'not a size'),
])
def test_read_ahead_nonsense_refused(value, fragment):
    with pytest.raises(ValueError) as exc:
        bq.resolve_read_ahead(value)
    assert fragment in str(exc.value)
    assert str(exc.value).startswith('read_ahead')


# ------------------------------------------------------------------ reading sysfs
def test_read_queue_of_a_lab_data_drive(tmp_path):
    fake_queue(tmp_path)
    current, limits = bq.read_queue(str(tmp_path), 'nvme1n1')
    assert current == LAB_CURRENT
    assert limits['hw_tag_depth'] == 1023 and limits['blk_mq'] is True
    assert limits['max_hw_sectors_kb'] == 512
    assert limits['schedulers_available'] == ['none', 'mq-deadline']
    assert limits['max_sched_nr_requests'] == 2048 and limits['min_nr_requests'] == 4


def test_read_queue_refuses_partitions_and_missing_devices(tmp_path):
    write(tmp_path / 'class' / 'block' / 'nvme1n1p1' / 'partition', '1')
    with pytest.raises(ValueError, match='partition'):
        bq.read_queue(str(tmp_path), 'nvme1n1p1')
    with pytest.raises(ValueError, match='no request queue'):
        bq.read_queue(str(tmp_path), 'nvme9n1')


def test_identity_prefers_wwid_then_serial(tmp_path):
    fake_queue(tmp_path)
    ident = bq.identity(str(tmp_path), 'nvme1n1')
    assert ident['serial'] == 'DATA0001' and ident['model'] == 'QEMU NVMe Ctrl'
    assert ident['key'] == 'wwid:' + ident['wwid']
    fake_queue(tmp_path, name='nvme2n1', serial='DATA0002', wwid=None)
    assert bq.identity(str(tmp_path), 'nvme2n1')['key'] == 'serial:DATA0002/nsid:1'
    fake_queue(tmp_path, name='nvme3n1', serial=None, wwid=None)
    assert bq.identity(str(tmp_path), 'nvme3n1')['key'] == 'name:nvme3n1'


@pytest.mark.parametrize('device, name', [('nvme1n1', 'nvme1n1'), ('/dev/nvme1n1', 'nvme1n1'), (' sdb ', 'sdb')])
def test_device_name(device, name):
    assert bq.device_name(device, '/fake/sys') == name


@pytest.mark.parametrize('device', ['', '/dev/', '/dev/disk/x', '..', None, 3])
def test_device_name_refuses_nonsense(device):
    with pytest.raises(ValueError):
        bq.device_name(device, '/fake/sys')


# ------------------------------------------------------------------ apply with a fake kernel
def test_apply_in_plan_order_survives_the_scheduler_reset(tmp_path):
    queue = fake_queue(tmp_path)
    kernel = FakeKernel()
    wanted = {'scheduler': 'mq-deadline', 'nr_requests': 512}
    current, limits = bq.read_queue(str(tmp_path), 'nvme1n1')
    planned = bq.plan(current, wanted, limits)
    outcome = bq.apply(queue, planned['writes'], wanted, writer=kernel)
    assert outcome['error'] is None
    assert outcome['after'] == wanted
    assert kernel.log == [('scheduler', 'mq-deadline'), ('nr_requests', 512)]


def test_apply_in_the_wrong_order_is_caught_by_the_read_back(tmp_path):
    """What kernel_settings-style sorted writes do: nr_requests first, then the scheduler resets it."""
    queue = fake_queue(tmp_path)
    wanted = {'scheduler': 'mq-deadline', 'nr_requests': 512}
    reversed_writes = [{'attribute': 'nr_requests', 'value': 512}, {'attribute': 'scheduler', 'value': 'mq-deadline'}]
    outcome = bq.apply(queue, reversed_writes, wanted, writer=FakeKernel())
    assert outcome['error'] == 'nr_requests: wrote 512, the kernel kept 256'
    assert outcome['done'] == ['nr_requests', 'scheduler']


def test_apply_surfaces_einval_and_stops(tmp_path):
    queue = fake_queue(tmp_path)
    wanted = {'nr_requests': 4096, 'read_ahead_kb': 1024}
    writes = [{'attribute': 'nr_requests', 'value': 4096}, {'attribute': 'read_ahead_kb', 'value': 1024}]
    outcome = bq.apply(queue, writes, wanted, writer=FakeKernel())
    assert 'Invalid argument' in outcome['error'] and 'EINVAL' in outcome['error']
    assert '4096' in outcome['error']
    assert outcome['done'] == []
    assert outcome['after'] == {'nr_requests': 1023, 'read_ahead_kb': 128}


def test_apply_catches_a_silent_clamp(tmp_path):
    queue = fake_queue(tmp_path)
    outcome = bq.apply(queue, [{'attribute': 'nr_requests', 'value': 2}], {'nr_requests': 2}, writer=FakeKernel())
    assert outcome['error'] == 'nr_requests: wrote 2, the kernel kept 4'


def test_apply_with_the_real_writer_on_plain_files(tmp_path):
    queue = fake_queue(tmp_path)
    wanted = {'read_ahead_kb': 1024, 'nomerges': 2}
    outcome = bq.apply(queue, [{'attribute': 'read_ahead_kb', 'value': 1024},
                               {'attribute': 'nomerges', 'value': 2}], wanted)
    assert outcome == {'done': ['read_ahead_kb', 'nomerges'], 'after': wanted, 'error': None}
    with open(os.path.join(queue, 'read_ahead_kb')) as f:
        assert f.read() == '1024\n'


# ------------------------------------------------------------------ the record
IDENT = {'name': 'nvme1n1', 'wwid': 'nvme.x-1', 'serial': 'DATA0001', 'model': 'QEMU NVMe Ctrl', 'nsid': 1,
         'key': 'wwid:nvme.x-1'}


def test_record_is_written_once_and_never_overwritten(tmp_path):
    sdir = str(tmp_path / 'var' / 'lib' / 'ai')
    path = os.path.join(sdir, 'block_layer.json')
    assert bq.record_originals(sdir, IDENT, LAB_CURRENT, now='2026-01-01T00:00:00Z') is True
    changed = dict(LAB_CURRENT, nr_requests=512)
    assert bq.record_originals(sdir, IDENT, changed, now='2026-01-02T00:00:00Z') is False
    data = bq.load_record(sdir)
    entry = data['devices']['wwid:nvme.x-1']
    assert entry['values'] == LAB_CURRENT
    assert entry['recorded_at'] == '2026-01-01T00:00:00Z'
    assert entry['serial'] == 'DATA0001' and entry['device'] == 'nvme1n1'
    assert data['schema_version'] == 1
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o644)
    assert sorted(os.listdir(sdir)) == ['.lock', 'block_layer.json']  # no temporary file left
    with open(path) as f:
        assert json.load(f)['checkpoint_io_record'] == 1  # the state store's layout


def test_record_adds_other_devices_and_drop_removes_the_file_at_the_end(tmp_path):
    sdir = str(tmp_path)
    path = str(tmp_path / 'block_layer.json')
    other = dict(IDENT, name='nvme2n1', key='wwid:nvme.x-2')
    bq.record_originals(sdir, IDENT, LAB_CURRENT)
    bq.record_originals(sdir, other, LAB_CURRENT)
    assert sorted(bq.load_record(sdir)['devices']) == ['wwid:nvme.x-1', 'wwid:nvme.x-2']
    assert bq.drop_record(sdir, 'wwid:nvme.x-1') is True
    assert bq.drop_record(sdir, 'wwid:nvme.x-1') is False
    assert list(bq.load_record(sdir)['devices']) == ['wwid:nvme.x-2']
    assert bq.drop_record(sdir, 'wwid:nvme.x-2') is True
    assert not os.path.exists(path)


def test_a_damaged_record_is_never_replaced(tmp_path):
    sdir = str(tmp_path)
    path = str(tmp_path / 'block_layer.json')
    write(path, '{not json')
    with pytest.raises(ValueError, match='not valid JSON'):
        bq.record_originals(sdir, IDENT, LAB_CURRENT)
    write(path, json.dumps({'something': 'else'}))
    with pytest.raises(ValueError, match='no "devices"'):
        bq.load_record(sdir)
    assert bq.load_record(str(tmp_path / 'missing')) == bq.empty_record()
