# -*- coding: utf-8 -*-
"""Whether a recorded measurement still holds (module_utils/common/remeasure.py): what it depended on, the decision
and its reason under each policy, and bad policies refused naming the value and the limit."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import remeasure as r

NOW = 1796500000.0  # 2026-12-06


def _facts(firmware='1.0', release='6.1.0-28-amd64', serial='DATA0001'):
    return {'nvme': {'controllers': [{'name': 'nvme0', 'serial': serial, 'model': 'QEMU NVMe Ctrl',
                                      'firmware': firmware}],
                     'namespaces': [{'name': 'nvme0n1', 'controllers': ['nvme0'], 'wwid': 'eui.01',
                                     'size_bytes': 1 << 30}]},
            'state': {'kernel': {'release': release},
                      'volume': {'mount_point': '/mnt/ckpt', 'md_uuid': 'a:b:c:d', 'holders': ['md127']}}}


def _recorded(facts=None, settings=None, age_s=3600):
    depends = r.depends_on(facts or _facts(), ['nvme0n1'], settings or {'ranks': 2, 'block_size': 1048576})
    return dict(r.stamp(depends, NOW - age_s), result=1)


def test_what_a_measurement_depends_on_names_drives_by_identity_not_kernel_name():
    deps = r.depends_on(_facts(), ['nvme0n1'], {'ranks': 2})
    assert deps == {'drives': [{'serial': 'DATA0001', 'model': 'QEMU NVMe Ctrl', 'firmware': '1.0',
                                'wwid': 'eui.01', 'size_bytes': 1 << 30}],
                    'kernel': '6.1.0-28-amd64', 'volume': {'mount_point': '/mnt/ckpt', 'md_uuid': 'a:b:c:d'},
                    'settings': {'ranks': 2}}
    # a namespace the facts do not know is kept by name (it cannot match a record silently)
    assert r.depends_on(_facts(), ['nvme9n1'])['drives'] == [
        {'serial': None, 'model': None, 'firmware': None, 'wwid': None, 'size_bytes': None, 'device': 'nvme9n1'}]


def test_a_record_nothing_changed_under_is_reused_and_says_when_it_was_measured():
    decision = r.decide(_recorded(), r.depends_on(_facts(), ['nvme0n1'], {'ranks': 2, 'block_size': 1048576}),
                        now=NOW, label='sweep')
    assert decision['reuse'] is True and decision['changed'] == [] and decision['age_s'] == 3600
    assert decision['reason'].startswith('reused: measured 2026-')
    assert '60 min ago' in decision['reason'] or '1.0 h ago' in decision['reason']
    assert r.line(decision, 123) == 'sweep: ' + decision['reason']


@pytest.mark.parametrize('facts, settings, words', [
    (_facts(firmware='2.0'), None, 'drive DATA0001 firmware "1.0" -> "2.0"'),
    (_facts(release='6.12.0'), None, 'kernel 6.1.0-28-amd64 -> 6.12.0'),
    (_facts(serial='DATA0009'), None, 'drive DATA0001 left'),
    (_facts(), {'ranks': 4, 'block_size': 1048576}, 'ranks 2 -> 4'),
])
def test_a_change_under_the_record_measures_again_naming_it(facts, settings, words):
    depends = r.depends_on(facts, ['nvme0n1'], settings or {'ranks': 2, 'block_size': 1048576})
    decision = r.decide(_recorded(), depends, now=NOW)
    assert decision['reuse'] is False and words in decision['reason'], decision


def test_the_policies_and_the_age():
    depends = r.depends_on(_facts(), ['nvme0n1'], {'ranks': 2, 'block_size': 1048576})
    old = _recorded(age_s=10 * 86400)
    assert 'is 10.0 days old, over checkpoint_io_remeasure_days 7' in r.decide(old, depends, now=NOW)['reason']
    assert r.decide(old, depends, 'changed', now=NOW)['reuse'] is True
    assert r.decide(old, depends, 'auto', 30, now=NOW)['reuse'] is True
    assert r.decide(_recorded(), depends, 'always', now=NOW)['reason'] == 'measured: checkpoint_io_remeasure is always'
    assert r.decide(_recorded(), depends, 'auto', 0, now=NOW)['reuse'] is False
    assert r.decide({}, depends, now=NOW)['reason'] == 'measured: none recorded'
    assert 'does not say what it depended on' in r.decide({'curve': []}, depends, now=NOW)['reason']
    own = r.decide(_recorded(), depends, now=NOW, measure_reason='its last verdict was throttling')
    assert own['reuse'] is False and own['reason'] == 'measured: its last verdict was throttling'
    future = dict(_recorded(), measured_at='2027-12-01T00:00:00Z')
    assert 'not a time in the past' in r.decide(future, depends, now=NOW)['reason']
    # bytes are said only for what was measured
    assert r.line(r.decide({}, depends, now=NOW, label='thermal'), 3 << 30) == \
        'thermal: measured: none recorded (3072 MiB written)'


def test_a_record_compares_equal_after_the_json_round_trip():
    depends = r.depends_on(_facts(), ['nvme0n1'], {'sizes': (1, 2), 'nested': {'b': 1, 'a': [1.5]}})
    assert r.decide(dict(r.stamp(depends, NOW - 60)), r.depends_on(_facts(), ['nvme0n1'],
                    {'sizes': [1, 2], 'nested': {'a': [1.5], 'b': 1}}), now=NOW)['reuse'] is True


@pytest.mark.parametrize('policy, days, words', [
    ('sometimes', 7, "checkpoint_io_remeasure is 'sometimes': it must be one of auto, always, changed"),
    ('auto', -1, 'checkpoint_io_remeasure_days is -1: it must be a whole number of days from 0 to 3650'),
    ('auto', 4000, 'from 0 to 3650'),
    ('auto', 1.5, 'whole number'),
    ('auto', 'x', 'whole number'),
    ('auto', True, 'whole number'),
])
def test_bad_policies_are_refused_naming_the_value_and_the_limit(policy, days, words):
    with pytest.raises(ValueError, match=None) as err:
        r.decide({}, {}, policy, days, now=NOW)
    assert words in str(err.value)
    assert r.role_input_errors({'x_remeasure': policy, 'x_remeasure_days': days}, 'x')
    assert r.role_input_errors({}, 'x') == []


def test_a_sweep_of_another_shape_is_what_a_new_shape_compares_with():
    """records.recorded_sweep(nearest=True): with no sweep of this directory, block size and rank count, the
    directory's newest sweep, so the decision names what changed (the ranks), not 'none recorded'."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import records
    old = dict(r.stamp(r.depends_on(_facts(), ['nvme0n1'], {'ranks': 1}), NOW - 7200), directory='/mnt/ckpt/c')
    new = dict(r.stamp(r.depends_on(_facts(), ['nvme0n1'], {'ranks': 4}), NOW - 60), directory='/mnt/ckpt/c')
    other = dict(r.stamp(r.depends_on(_facts(), ['nvme0n1'], {'ranks': 9}), NOW), directory='/elsewhere')
    facts = {'state': {'records': {'depth_sweep': {'/mnt/ckpt/c|1048576|1': old, '/mnt/ckpt/c|1048576|4': new,
                                                   '/elsewhere|1048576|9': other}}}}
    assert records.recorded_sweep(facts, '/mnt/ckpt/c', '1M', 2) == {}
    nearest = records.recorded_sweep(facts, '/mnt/ckpt/c/', '1M', 2, nearest=True)
    assert nearest is new
    assert records.recorded_sweep(facts, '/mnt/ckpt/c', '1M', 1, nearest=True) is old
    assert records.recorded_sweep(facts, '/nowhere', '1M', 1, nearest=True) == {}
    decision = r.decide(nearest, r.depends_on(_facts(), ['nvme0n1'], {'ranks': 2}), now=NOW, label='sweep')
    assert decision['reason'] == 'measured: ranks 4 -> 2'


def test_a_raw_drive_measurement_does_not_depend_on_the_volume():
    """The io_uring check reads the raw drives: the first run checks them before the xfs step made the volume, and
    the second run must not measure again because the volume exists now."""
    blank = _facts()
    blank['state']['volume'] = {'mount_point': None, 'md_uuid': None}
    before = r.depends_on(blank, ['nvme0n1'], {'mode': 'read'}, volume=False)
    assert before['volume'] is None
    decision = r.decide(r.stamp(before, NOW - 60), r.depends_on(_facts(), ['nvme0n1'], {'mode': 'read'}, volume=False),
                        now=NOW)
    assert decision['reuse'] is True
    assert r.decide(r.stamp(r.depends_on(blank, ['nvme0n1']), NOW - 60), r.depends_on(_facts(), ['nvme0n1']),
                    now=NOW)['changed'] == ['volume.md_uuid null -> "a:b:c:d"', 'volume.mount_point null -> "/mnt/ckpt"']


def test_a_nested_setting_is_named_by_its_path_and_a_long_list_is_cut():
    old = r.depends_on(_facts(), ['nvme0n1'], {'after': {'queue_depth': 32, 'block_size': 1048576,
                                                         'planned': {'per_rank': 32}}, 'ranks': 1})
    new = r.depends_on(_facts(), ['nvme0n1'], {'after': {'queue_depth': 16, 'block_size': 1048576,
                                                         'planned': {'per_rank': 16}}, 'ranks': 2})
    decision = r.decide(r.stamp(old, NOW - 60), new, now=NOW)
    # the top-level setting first, then the nested ones by depth
    assert decision['changed'] == ['ranks 1 -> 2', 'after.queue_depth 32 -> 16', 'after.planned.per_rank 32 -> 16']
    many = r.depends_on(_facts(), ['nvme0n1'], dict(('k%d' % i, i) for i in range(9)))
    none = r.depends_on(_facts(), ['nvme0n1'], {})
    assert r.decide(r.stamp(none, NOW - 60), many, now=NOW)['reason'].endswith('; and 3 more')
