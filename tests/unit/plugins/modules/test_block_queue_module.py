# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End-to-end tests of the block_queue module on fake sysfs trees (and a fake kernel)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os

import pytest


from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import block_queue as bq
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import block_queue

from helpers import module_args

ORIGINAL = {'scheduler': 'none', 'nr_requests': 1023, 'read_ahead_kb': 128, 'max_sectors_kb': 512,
            'nomerges': 0, 'rq_affinity': 1}
TUNED = {'scheduler': 'none', 'nr_requests': 512, 'read_ahead': '1M', 'max_sectors_kb': 256, 'nomerges': 2,
         'rq_affinity': 2}


def write(path, text):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    with open(path, 'w') as f:
        f.write(text + '\n')


class Node(object):
    """A fake /sys with two lab data drives and a record path."""

    def __init__(self, base):
        self.sys = os.path.join(str(base), 'sys')
        self.record = os.path.join(str(base), 'var', 'lib', 'ai_storage_checkpoint_io', 'block_layer.json')
        for index in (1, 2):
            name = 'nvme%dn1' % index
            root = os.path.join(self.sys, 'block', name)
            values = {'scheduler': '[none] mq-deadline', 'nr_requests': '1023', 'read_ahead_kb': '128',
                      'max_sectors_kb': '512', 'max_hw_sectors_kb': '512', 'nomerges': '0', 'rq_affinity': '1'}
            for key, value in values.items():
                write(os.path.join(root, 'queue', key), value)
            for ctx in range(2):
                write(os.path.join(root, 'mq', str(ctx), 'nr_tags'), '1023')
            write(os.path.join(root, 'wwid'), 'nvme.1b36-DATA000%d-00000001' % index)
            write(os.path.join(root, 'nsid'), '1')
            write(os.path.join(root, 'device', 'serial'), ('DATA000%d' % index).ljust(20))
            write(os.path.join(root, 'device', 'model'), 'QEMU NVMe Ctrl')

    def queue(self, name='nvme1n1'):
        return os.path.join(self.sys, 'block', name, 'queue')

    def read(self, name='nvme1n1'):
        return bq.read_queue(self.sys, name)[0]

    def snapshot(self):
        """Every file content of the tree: proves check mode and refusals write nothing."""
        result = {}
        for top, _dirs, files in os.walk(os.path.dirname(self.sys)):
            for f in files:
                path = os.path.join(top, f)
                with open(path) as handle:
                    result[path] = handle.read()
        return result


class FakeKernel(object):
    """Kernel side effects measured on the lab (6.1): a scheduler write resets nr_requests."""

    def __init__(self, tags=1023, ignore=()):
        self.tags = tags
        self.ignore = ignore
        self.log = []

    def __call__(self, path, value):
        queue_dir, attr = os.path.split(path)
        self.log.append((os.path.basename(os.path.dirname(queue_dir)), attr, value))
        if attr in self.ignore:
            return  # accepted, silently not applied (like rq_affinity 3 on 6.1)
        if attr == 'scheduler':
            if value not in ('none', 'mq-deadline'):
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
            write(path, ' '.join('[%s]' % s if s == value else s for s in ('none', 'mq-deadline')))
            write(os.path.join(queue_dir, 'nr_requests'), str(self.tags if value == 'none' else 256))
            return
        if attr == 'nr_requests':
            with open(os.path.join(queue_dir, 'scheduler')) as f:
                active = bq.parse_scheduler(f.read())['active']
            if int(value) > (self.tags if active == 'none' else 2048):
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
            value = max(4, int(value))
        write(path, str(value))


@pytest.fixture
def node(tmp_path):
    return Node(tmp_path)


@pytest.fixture
def kernel(monkeypatch):
    fake = FakeKernel()
    monkeypatch.setattr(bq, 'write_attr', fake)
    return fake


def run(capsys, node, check=False, diff=False, **params):
    args = dict(params, sysfs_root=node.sys, state_dir=os.path.dirname(node.record), _ansible_check_mode=check,
                _ansible_diff=diff)
    args.setdefault('device', 'nvme1n1')
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            block_queue.main()
    out = json.loads(capsys.readouterr().out)
    return exc.value.code, out


# ------------------------------------------------------------------ check mode and diff
def test_check_mode_reports_the_change_and_writes_nothing(node, kernel, capsys):
    before = node.snapshot()
    rc, out = run(capsys, node, check=True, diff=True, **TUNED)
    assert rc == 0, out
    assert out['changed'] is True
    assert out['changed_keys'] == ['nr_requests', 'max_sectors_kb', 'read_ahead_kb', 'nomerges', 'rq_affinity']
    assert out['after']['read_ahead_kb'] == 1024
    assert out['diff']['before'] == {'scheduler': 'none', 'nr_requests': 1023, 'max_sectors_kb': 512,
                                     'read_ahead_kb': 128, 'nomerges': 0, 'rq_affinity': 1}
    assert out['diff']['after'] == {'scheduler': 'none', 'nr_requests': 512, 'max_sectors_kb': 256,
                                    'read_ahead_kb': 1024, 'nomerges': 2, 'rq_affinity': 2}
    assert out['diff']['before_header'].endswith('/block/nvme1n1/queue')
    assert kernel.log == []
    assert node.snapshot() == before
    assert not os.path.exists(node.record)
    assert out['recorded'] is False


# ------------------------------------------------------------------ apply, record, idempotence
def test_apply_records_originals_once_and_is_idempotent(node, kernel, capsys):
    rc, out = run(capsys, node, device='/dev/nvme1n1', **TUNED)
    assert rc == 0, out
    assert out['changed'] is True and out['recorded'] is True
    assert out['device'] == 'nvme1n1'
    assert out['wanted'] == {'scheduler': 'none', 'nr_requests': 512, 'read_ahead_kb': 1024,
                             'max_sectors_kb': 256, 'nomerges': 2, 'rq_affinity': 2}
    assert out['order'] == list(bq.ORDER)
    assert [w['attribute'] for w in out['writes']] == ['nr_requests', 'max_sectors_kb', 'read_ahead_kb',
                                                       'nomerges', 'rq_affinity']
    assert node.read() == dict(ORIGINAL, nr_requests=512, read_ahead_kb=1024, max_sectors_kb=256, nomerges=2,
                               rq_affinity=2)
    assert node.read('nvme2n1') == ORIGINAL  # the other drive is untouched
    with open(node.record) as f:
        record = json.load(f)['data']
    entry = record['devices']['wwid:nvme.1b36-DATA0001-00000001']
    assert entry['values'] == ORIGINAL and entry['serial'] == 'DATA0001' and entry['device'] == 'nvme1n1'
    assert out['original']['values'] == ORIGINAL
    with open(node.record) as f:
        first = f.read()

    rc, again = run(capsys, node, **TUNED)
    assert rc == 0 and again['changed'] is False, again
    assert again['writes'] == [] and again['changed_keys'] == [] and again['recorded'] is False

    # a later, different change never overwrites the recorded originals
    rc, third = run(capsys, node, nr_requests=256)
    assert rc == 0 and third['changed'] is True and third['recorded'] is False
    with open(node.record) as f:
        assert f.read() == first


def test_read_ahead_forms_are_accepted_alike(node, kernel, capsys):
    for value in ('1M', '1MiB', 1048576, '1024K'):
        rc, out = run(capsys, node, check=True, read_ahead=value)
        assert rc == 0 and out['wanted'] == {'read_ahead_kb': 1024}, out
    rc, out = run(capsys, node, check=True, read_ahead_kb=1024)
    assert rc == 0 and out['wanted'] == {'read_ahead_kb': 1024}


# ------------------------------------------------------------------ ordering with the fake kernel
def test_scheduler_is_written_before_nr_requests(node, kernel, capsys):
    rc, out = run(capsys, node, scheduler='mq-deadline', nr_requests=512)
    assert rc == 0, out
    assert [entry[1:] for entry in kernel.log] == [('scheduler', 'mq-deadline'), ('nr_requests', 512)]
    assert out['after'] == {'scheduler': 'mq-deadline', 'nr_requests': 512}
    assert node.read()['nr_requests'] == 512


def test_switching_back_rewrites_an_equal_nr_requests(node, kernel, capsys):
    run(capsys, node, scheduler='mq-deadline', nr_requests=512)
    del kernel.log[:]
    rc, out = run(capsys, node, scheduler='none', nr_requests=512)
    assert rc == 0, out
    # nr_requests already 512, but the switch to none resets it to 1023: it must be written again
    assert [entry[1:] for entry in kernel.log] == [('scheduler', 'none'), ('nr_requests', 512)]
    assert node.read()['nr_requests'] == 512
    assert out['changed_keys'] == ['scheduler']


def test_the_order_matters_proved_by_the_wrong_one(node, kernel, monkeypatch, capsys):
    """With the writes reversed (what sorted-key tools do), the read-back catches the reset."""
    real_plan = bq.plan

    def reversed_plan(*args, **kwargs):
        result = real_plan(*args, **kwargs)
        result['writes'] = list(reversed(result['writes']))
        return result

    monkeypatch.setattr(block_queue, 'plan', reversed_plan)
    rc, out = run(capsys, node, scheduler='mq-deadline', nr_requests=512)
    assert rc == 1
    assert 'nr_requests: wrote 512, the kernel kept 256' in out['msg']
    assert out['after']['nr_requests'] == 256


# ------------------------------------------------------------------ refusals before any change
def test_nr_requests_above_the_tag_depth_is_refused_with_both_numbers(node, kernel, capsys):
    before = node.snapshot()
    rc, out = run(capsys, node, scheduler='none', nr_requests=4096, read_ahead='1M')
    assert rc == 1
    assert '4096' in out['msg'] and '1023' in out['msg'] and 'scheduler none' in out['msg']
    assert out['errors'] and out['writes'] == []
    assert kernel.log == []
    assert node.snapshot() == before and not os.path.exists(node.record)


def test_nr_requests_above_2048_with_a_scheduler_is_refused(node, kernel, capsys):
    rc, out = run(capsys, node, scheduler='mq-deadline', nr_requests=4096)
    assert rc == 1 and '4096' in out['msg'] and '2048' in out['msg']
    assert kernel.log == []


@pytest.mark.parametrize('params, fragment', [
    ({'nr_requests': 0}, 'nr_requests 0 is below 4'),
    ({'nr_requests': 3}, 'silently clamp'),
    ({'scheduler': 'cfq'}, "unknown scheduler 'cfq'"),
    ({'read_ahead': '1X'}, "read_ahead: '1X' is not a size"),
    ({'read_ahead': '1MB'}, 'ambiguous'),
    ({'read_ahead': 1000}, 'not a whole number of KiB'),
    ({'read_ahead_kb': 1023}, 'not a multiple of the page size'),
    ({'max_sectors_kb': 1024}, 'max_sectors_kb 1024 is above max_hw_sectors_kb 512'),
    ({'nr_requests': 'many'}, 'nr_requests'),
    ({'nr_requests': True}, 'nr_requests must be an integer'),
    ({'nomerges': 3}, 'nomerges'),
    ({'rq_affinity': 5}, 'rq_affinity'),
    ({'read_ahead': '1M', 'read_ahead_kb': 1024}, 'mutually exclusive'),
    ({'device': '/dev/nvme9n1'}, 'no request queue'),
    ({'device': 'a/b'}, 'block device name'),
    ({'state': 'restored', 'nr_requests': 512}, 'state=restored takes no values'),
])
def test_bad_input_is_refused_before_any_change(node, kernel, capsys, params, fragment):
    before = node.snapshot()
    rc, out = run(capsys, node, **params)
    assert rc == 1, out
    assert out['failed'] is True
    assert fragment in out['msg']
    assert kernel.log == []
    assert node.snapshot() == before


def test_a_value_the_kernel_does_not_keep_fails(node, monkeypatch, capsys):
    monkeypatch.setattr(bq, 'write_attr', FakeKernel(ignore=('rq_affinity',)))
    rc, out = run(capsys, node, rq_affinity=2, nomerges=2)
    assert rc == 1
    assert 'rq_affinity: wrote 2, the kernel kept 1' in out['msg']
    assert out['after'] == {'nomerges': 2, 'rq_affinity': 1}
    # the originals were recorded before the first write, so the half-done change can be reverted
    assert out['original']['values'] == ORIGINAL


def test_a_kernel_einval_fails_with_the_error_and_what_was_written(node, kernel, capsys):
    rc, out = run(capsys, node, scheduler='kyber', read_ahead_kb=1024)  # kyber: valid name, not in this kernel
    assert rc == 1
    assert 'Invalid argument' in out['msg'] and 'kyber' in out['msg']
    assert 'written before the failure: nothing' in out['msg']
    assert node.read()['read_ahead_kb'] == 128  # stopped at the first failed write


def test_a_damaged_record_file_stops_the_module(node, kernel, capsys):
    write(node.record, 'garbage')
    rc, out = run(capsys, node, nr_requests=512)
    assert rc == 1 and 'not valid JSON' in out['msg']
    assert node.read()['nr_requests'] == 1023


# ------------------------------------------------------------------ restore
def test_restore_puts_back_the_originals_and_forgets_them(node, kernel, capsys):
    run(capsys, node, scheduler='mq-deadline', nr_requests=512, read_ahead='1M', nomerges=2)
    run(capsys, node, device='nvme2n1', nr_requests=256)
    assert node.read()['scheduler'] == 'mq-deadline'
    del kernel.log[:]

    rc, out = run(capsys, node, check=True, diff=True, state='restored')
    assert rc == 0 and out['changed'] is True and kernel.log == []
    assert out['diff']['after']['scheduler'] == 'none'

    rc, out = run(capsys, node, state='restored')
    assert rc == 0, out
    assert out['changed'] is True and out['restored'] is True
    assert node.read() == ORIGINAL
    # scheduler first: the switch back to none resets nr_requests to 1023, which is the original anyway
    assert [entry[1] for entry in kernel.log][0] == 'scheduler'
    with open(node.record) as f:
        assert list(json.load(f)['data']['devices']) == ['wwid:nvme.1b36-DATA0002-00000001']

    rc, out = run(capsys, node, state='restored')
    assert rc == 0 and out['changed'] is False and out['restored'] is False
    assert 'nothing to restore' in out['msg']

    rc, out = run(capsys, node, device='nvme2n1', state='restored')
    assert rc == 0 and out['changed'] is True
    assert node.read('nvme2n1') == ORIGINAL
    assert not os.path.exists(node.record)


def test_restore_finds_the_device_by_identity_after_a_rename(node, kernel, capsys, tmp_path):
    run(capsys, node, nr_requests=512)
    # after a reboot the same drive (same wwid) comes up as nvme2n1 and the other as nvme1n1
    os.rename(os.path.join(node.sys, 'block', 'nvme1n1'), os.path.join(node.sys, 'block', 'tmp'))
    os.rename(os.path.join(node.sys, 'block', 'nvme2n1'), os.path.join(node.sys, 'block', 'nvme1n1'))
    os.rename(os.path.join(node.sys, 'block', 'tmp'), os.path.join(node.sys, 'block', 'nvme2n1'))
    rc, out = run(capsys, node, device='nvme1n1', state='restored')
    assert rc == 0 and out['changed'] is False  # that is the other drive: nothing recorded for it
    rc, out = run(capsys, node, device='nvme2n1', state='restored')
    assert rc == 0 and out['changed'] is True
    assert node.read('nvme2n1')['nr_requests'] == 1023
