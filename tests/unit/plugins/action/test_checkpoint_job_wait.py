# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""checkpoint_job's action plugin: one task waits until the job has ended only where no host waits for another's
loop, and each wait's progress line is shown (the plays print it with no task of their own)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from types import SimpleNamespace

from ansible_collections.ai_storage.checkpoint_io.plugins.action import checkpoint_job as action
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import job_progress


def test_the_loop_is_made_only_when_every_host_of_the_batch_has_a_fork():
    assert action.loops(None, ['node1'], 5)
    assert action.loops(None, ['n%d' % i for i in range(5)], 5)
    assert not action.loops(None, ['n%d' % i for i in range(6)], 5)   # the sixth would wait unpolled
    assert not action.loops(None, ['node1'], None)                     # forks unknown: one wait per task
    assert action.loops(True, ['n%d' % i for i in range(50)], 5)       # asked
    assert not action.loops('no', ['node1'], 5)
    assert not action.loops('maybe', ['node1'], 5)                     # waits once; the module refuses it


class _Plugin(action.ActionModule):
    """The action with the module replaced by a list of what its waits return."""

    def __init__(self, args, answers):
        task = SimpleNamespace(args=args, async_val=0, check_mode=False, diff=False, action='checkpoint_job',
                               environment=None, no_log=False, delegate_to=None, become=False)
        self._task = task
        self._play_context = SimpleNamespace(check_mode=False, become=False)
        self._connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
        self._answers = list(answers)
        self.calls = []

    def _execute_module(self, module_name=None, module_args=None, task_vars=None, **kwargs):
        self.calls.append(dict(module_args))
        return dict(self._answers.pop(0))


RUNNING = dict(changed=False, job_id='after.x', finished=False, progress={}, progress_line='after 1/3: 5.0 s, ...')


def _run(monkeypatch, args, answers, batch, forks=5):
    shown = []
    monkeypatch.setattr(action.display, 'display', lambda msg, *a, **k: shown.append(msg))
    monkeypatch.setattr(action.context, 'CLIARGS', {'forks': forks})
    monkeypatch.setattr(action.ActionBase, 'run', lambda self, tmp=None, task_vars=None: {})
    plugin = _Plugin(args, answers)
    result = plugin.run(None, {'ansible_play_batch': batch, 'inventory_hostname': 'node1'})
    return plugin, result, shown


def test_one_task_waits_until_the_job_ends_showing_each_wait(monkeypatch):
    end = dict(changed=False, job_id='after.x', finished=True, result={'throughput_gib_s': 1.0})
    plugin, result, shown = _run(monkeypatch, {'job_id': 'after.x', 'wait': 5}, [RUNNING, RUNNING, end], ['node1'])
    assert len(plugin.calls) == 3
    assert result['finished'] and result['result'] == {'throughput_gib_s': 1.0} and result['polls'] == 3
    assert shown == ['node1: after 1/3: 5.0 s, ...'] * 2


def test_a_fleet_larger_than_the_forks_waits_once_per_task(monkeypatch):
    plugin, result, shown = _run(monkeypatch, {'job_id': 'after.x'}, [RUNNING], ['n%d' % i for i in range(9)])
    assert len(plugin.calls) == 1 and not result['finished'] and result['polls'] == 1
    assert shown == ['node1: after 1/3: 5.0 s, ...']


def test_a_failed_wait_ends_the_loop_with_its_message(monkeypatch):
    failed = dict(failed=True, finished=True, msg='after.x: the write ran past max_runtime 60 s')
    plugin, result, shown = _run(monkeypatch, {'job_id': 'after.x'}, [RUNNING, failed], ['node1'])
    assert len(plugin.calls) == 2 and result['failed'] and 'max_runtime' in result['msg']


def test_a_reap_is_one_call(monkeypatch):
    reaped = dict(changed=False, job_id=None, finished=True, reaped={})
    plugin, result, shown = _run(monkeypatch, {'reap': True}, [reaped], ['node1'], forks=1)
    assert len(plugin.calls) == 1 and 'polls' not in result and shown == []


def test_a_bad_until_finished_reaches_the_module_which_refuses_it(monkeypatch):
    refused = dict(failed=True, msg="argument 'until_finished' is of type <class 'str'> ...")
    plugin, result, shown = _run(monkeypatch, {'job_id': 'after.x', 'until_finished': 'maybe'}, [refused], ['node1'])
    assert result['failed'] and plugin.calls == [{'job_id': 'after.x', 'until_finished': 'maybe'}]


def test_the_lines_a_person_reads():
    assert job_progress.write_line('after 1/3', {'elapsed_s': 12.5, 'bytes_written': 3 * 1073741824,
                                                 'total_bytes': 64 * 1073741824, 'bw_bytes_so_far': 257698037}) \
        == 'after 1/3: 12.5 s, 3.00 of 64.00 GiB written, 245.8 MiB/s so far'
    sampled = job_progress.write_line('thermal', {'elapsed_s': 3, 'bytes_written': 0, 'total_bytes': 1073741824,
                                                  'bw_bytes_so_far': 0,
                                                  'drives': {'nvme1n1': {'bw_bytes': 73400320, 'temp_c': 49.85}}})
    assert sampled.endswith('; nvme1n1 70.0 MiB/s 49.85 C')
    restoring = job_progress.write_line('after 1/3', {'elapsed_s': 30, 'bytes_written': 1073741824, 'done': True,
                                                      'total_bytes': 1073741824, 'phase': 'restore',
                                                      'restore_elapsed_s': 4.25})
    assert restoring == 'after 1/3: written, 1.00 GiB reading back (the restore read), 4.2 s'
    assert job_progress.sweep_line({'elapsed_s': 35.4, 'depth': 8, 'repeat': 1, 'repeats': 1,
                                    'last_bw_bytes': 52428800,
                                    'points': [{'depth': 1, 'bw_bytes': 12 * 1048576}]}) \
        == ('queue-depth sweep, 35 s: depth 8 per rank, run 1 of 1, last run 50.0 MiB/s; medians so far '
            '(depth: bandwidth) 1: 12.0 MiB/s')
    assert job_progress.sweep_line({'elapsed_s': 1, 'depth': None}) == (
        'queue-depth sweep, 1 s: writing the scratch files; medians so far (depth: bandwidth) none')
    assert job_progress.line('queue_depth_sweep', None, {}).startswith('queue-depth sweep')
    assert job_progress.line('checkpoint_write', None, None) == 'write: 0.0 s, 0.00 of 0.00 GiB written, 0.0 MiB/s so far'
