# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The measuring modules against a hostile training user and against being killed (issue 12).

Real parts throughout: the host's fio, a real loop device standing in for the OS drive, a real non-root user
(``nobody``, by setuid in a forked child) who owns the checkpoint directory, real signals, and a real
``ansible`` ad-hoc ``async`` run. Each case checks the node afterwards: the "OS drive" byte-identical, the user's
files and symlinks untouched, no run directory, no state store record and no fio process left.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify import fio_job
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch, state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import scratch_reap
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio_runner import descendants
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import (
    checkpoint_job,
    checkpoint_write,
    engine_verify,
    queue_depth_sweep,
)

from testenv import COLLECTIONS, ROOT
from helpers import module_args, poll_job, require_tool, run_fio_module

MIB = 1024 * 1024
NOBODY = pwd.getpwnam('nobody')
# The names the modules wrote by path before issue 12: a user who plants them redirects root's fio.
OLD_SWEEP_NAME = '.queue_depth_sweep.%d.%d.scratch'
OLD_ENGINE_NAME = '.ai-storage-checkpoint-io-engine-verify.%s'


# --- the node -------------------------------------------------------------------------------------------------------
@pytest.fixture
def os_drive(tmp_path):
    """A 64 MiB loop device standing in for the OS drive (root's, mode 0660: the user cannot write it)."""
    image = tmp_path / 'os.img'
    with open(str(image), 'wb') as handle:
        handle.truncate(64 * MIB)
    device = subprocess.check_output([require_tool('losetup'), '--find', '--show', str(image)],
                                     universal_newlines=True).strip()
    try:
        yield device
    finally:
        subprocess.call(['losetup', '--detach', device])


@pytest.fixture
def ckpt():
    """A checkpoint directory the training user (nobody) owns, under a root-owned directory nobody can traverse."""
    base = tempfile.mkdtemp(prefix='ckpt-attack-', dir='/tmp')
    os.chmod(base, 0o755)
    path = os.path.join(base, 'checkpoints')
    os.mkdir(path, 0o755)
    os.chown(path, NOBODY.pw_uid, NOBODY.pw_gid)
    try:
        yield path
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def state(tmp_path_factory):
    return str(tmp_path_factory.mktemp('state'))


def fork_as_user(func, *args):
    """Start ``func(*args)`` as the training user (nobody) in a forked child; its pid."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY.pw_gid)
            os.setuid(NOBODY.pw_uid)
            func(*args)
            code = 0
        finally:
            os._exit(code)
    return pid


def as_user(func, *args):
    """Run ``func(*args)`` as the training user; its exit status."""
    return os.waitpid(fork_as_user(func, *args), 0)[1]


def digest(device):
    """sha256 of the whole device, read past the page cache."""
    fd = os.open(device, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        sha = hashlib.sha256()
        while True:
            chunk = os.read(fd, 4 * MIB)
            if not chunk:
                return sha.hexdigest()
            sha.update(chunk)
    finally:
        os.close(fd)


def plant(ckpt, device):
    """The user's traps and files: the shard and scratch names root's fio used to open by path."""
    def work():
        os.symlink(device, os.path.join(ckpt, 'rank_0.ckpt'))
        os.symlink('/nonexistent/dangling', os.path.join(ckpt, 'rank_1.ckpt'))
        with open(os.path.join(ckpt, 'rank_2.ckpt'), 'wb') as handle:
            handle.write(b'the training user\'s own checkpoint\n' * 1000)
        for rank in range(4):
            os.symlink(device, os.path.join(ckpt, OLD_SWEEP_NAME % (os.getppid(), rank)))
        os.symlink(device, os.path.join(ckpt, OLD_ENGINE_NAME % 'loopdrive'))
    assert as_user(work) == 0


def snapshot(ckpt):
    """Every entry of the directory: owner, inode, type, and the symlink's target or the file's content hash."""
    found = {}
    for name in sorted(os.listdir(ckpt)):
        path = os.path.join(ckpt, name)
        info = os.lstat(path)
        if os.path.islink(path):
            what = os.readlink(path)
        elif os.path.isfile(path):
            with open(path, 'rb') as handle:
                what = hashlib.sha256(handle.read()).hexdigest()
        else:
            what = 'dir'
        found[name] = (info.st_uid, info.st_ino, info.st_mode, what)
    return found


def fio_processes(pids):
    return [pid for pid in pids if _comm(pid) == 'fio']


def _comm(pid):
    try:
        with open('/proc/%d/comm' % pid) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def holders_of(path):
    """Processes (not this one) with a file at or under ``path`` open, or the device ``path`` itself."""
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            fds = os.listdir('/proc/%s/fd' % name)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink('/proc/%s/fd/%s' % (name, fd))
            except OSError:
                continue
            if target == path or target.startswith(path.rstrip('/') + '/'):
                found.append(int(name))
                break
    return found


def assert_node_clean(ckpt, device, before_hash, before_entries, state_dir):
    assert digest(device) == before_hash, 'the OS drive stand-in was written'
    assert snapshot(ckpt) == before_entries, 'the user\'s files or symlinks changed, or a run directory stayed'
    assert fio_processes(descendants(os.getpid())) == []
    assert holders_of(ckpt) == [] and holders_of(device) == []
    assert state_store.read_record(state_dir, 'scratch') is None


def wait_job(capsys, store, job_id, state_dir, limit=120):
    deadline = time.time() + limit
    while time.time() < deadline:
        rc, out = poll_job(capsys, store, job_id, wait=0.5, state_dir=state_dir)
        if rc != 0 or out['finished']:
            return rc, out
    raise AssertionError('job %s did not finish' % job_id)


ENGINE = {'ioengine': 'io_uring', 'direct': True}


# --- the symlink attack ----------------------------------------------------------------------------------------------
def test_planted_symlinks_redirect_nothing_and_the_users_files_stay(ckpt, os_drive, state, tmp_path, capsys):
    plant(ckpt, os_drive)
    before_hash, before = digest(os_drive), snapshot(ckpt)
    store = str(tmp_path / 'jobs')

    rc, out = run_fio_module(capsys, checkpoint_write.main, dict(
        directories=[ckpt], ranks=3, shard_size='8M', queue_depth=4, state_dir=state, label='attacked', **ENGINE))
    assert rc == 0, out
    assert out['total_bytes'] == 24 * MIB
    assert [c['path'] for c in out['safety']['writable_components']] == ['/tmp', ckpt]
    assert out['safety']['writable_components'][1]['writable_by'] == ['its owner uid %d' % NOBODY.pw_uid]
    assert 'O_CREAT|O_EXCL|O_NOFOLLOW' in out['safety']['made_safe_by']
    assert_node_clean(ckpt, os_drive, before_hash, before, state)

    rc, started = run_fio_module(capsys, checkpoint_write.main, dict(
        directories=[ckpt], ranks=3, shard_size='8M', queue_depth=4, state_dir=state, background=True,
        job_store=store, label='attacked', **ENGINE))
    assert rc == 0, started
    rc, done = wait_job(capsys, store, started['job_id'], state)
    assert rc == 0 and done['result']['total_bytes'] == 24 * MIB, done
    assert_node_clean(ckpt, os_drive, before_hash, before, state)

    rc, out = run_fio_module(capsys, queue_depth_sweep.main, dict(
        directory=ckpt, depths=[1, 2], ranks=2, repeats=1, runtime_per_point=1, size_per_point='8M',
        scratch_size='8M', exhaustive=True, state_dir=state, **ENGINE))
    assert rc == 0, out
    assert_node_clean(ckpt, os_drive, before_hash, before, state)

    rc, started = run_fio_module(capsys, queue_depth_sweep.main, dict(
        directory=ckpt, depths=[1], ranks=2, repeats=1, runtime_per_point=1, size_per_point='8M',
        scratch_size='8M', state_dir=state, background=True, job_store=store, **ENGINE))
    assert rc == 0, started
    rc, done = wait_job(capsys, store, started['job_id'], state)
    assert rc == 0 and done['result']['curve'], done
    assert_node_clean(ckpt, os_drive, before_hash, before, state)


def test_the_engine_check_scratch_write_cannot_be_redirected(ckpt, os_drive, state, capsys):
    plant(ckpt, os_drive)
    before_hash, before = digest(os_drive), snapshot(ckpt)
    profile = {'drives': [{'name': 'loopdrive', 'device': os_drive, 'block_size_bytes': MIB, 'iodepth': 4,
                           'fio_options': {'ioengine': 'io_uring', 'iodepth': 4, 'bs': MIB, 'direct': 1}}]}
    options = {'verify_mode': 'scratch_write', 'allow_mounted_by': [ckpt], 'verify_runtime': 1,
               'verify_size': '8M'}
    drives = [{'name': 'loopdrive', 'mount_points': [ckpt], 'size_bytes': 64 * MIB}]
    rc, out = run_fio_module(capsys, engine_verify.main, dict(profile=profile, options=options, drives=drives,
                                                              state_dir=state, timeout=60))
    assert rc == 0, out
    job = json.loads(out['stdout'])['jobs'][0]
    assert job['jobname'] == 'loopdrive' and job['write']['io_bytes'] > 0
    assert out['safety']['run_dirs'][0].startswith(ckpt + '/.checkpoint_io.engine_verify.')
    assert_node_clean(ckpt, os_drive, before_hash, before, state)


def _race(ckpt, device, seconds, victim):
    """As the user: for ``seconds``, rename every run directory of the collection away and plant a symlink to the
    OS drive in its place, and replace every shard or scratch name root's fio ever used with a symlink to it."""
    count = 0
    end = time.time() + seconds
    names = ['rank_%d.ckpt' % n for n in range(4)] + [OLD_SWEEP_NAME % (victim, n) for n in range(4)]
    while time.time() < end:
        for name in os.listdir(ckpt):
            if name.startswith('.checkpoint_io.') and not os.path.islink(os.path.join(ckpt, name)):
                try:
                    os.rename(os.path.join(ckpt, name), os.path.join(ckpt, '.moved.%d' % count))
                    count += 1
                    os.symlink(device, os.path.join(ckpt, name))
                except OSError:
                    pass
        for name in names:
            path = os.path.join(ckpt, name)
            if not os.path.islink(path):
                try:
                    os.unlink(path)
                except OSError:
                    pass
                try:
                    os.symlink(device, path)
                except OSError:
                    pass


def test_a_user_racing_the_run_redirects_nothing(ckpt, os_drive, state, tmp_path, capsys):
    """The user keeps renaming the run directory away (planting a symlink to the OS drive under its name) and
    replacing every shard name with a symlink while the writes run: nothing reaches the OS drive, and the run
    directory, wherever it was renamed to, is removed; everything left in the directory is the user's."""
    before_hash = digest(os_drive)
    store = str(tmp_path / 'jobs')
    attacker = fork_as_user(_race, ckpt, os_drive, 120, os.getpid())
    try:
        time.sleep(0.3)
        results = []
        for params in (dict(ranks=4, shard_size='8M'), dict(ranks=4, shard_size='8M', background=True)):
            rc, out = run_fio_module(capsys, checkpoint_write.main, dict(
                directories=[ckpt], queue_depth=4, state_dir=state, job_store=store, **dict(params, **ENGINE)))
            if params.get('background') and rc == 0:
                rc, out = wait_job(capsys, store, out['job_id'], state)
            results.append((rc, out))
        rc, out = run_fio_module(capsys, queue_depth_sweep.main, dict(
            directory=ckpt, depths=[1], ranks=2, repeats=1, runtime_per_point=1, size_per_point='8M',
            scratch_size='8M', state_dir=state, **ENGINE))
        results.append((rc, out))
    finally:
        os.kill(attacker, signal.SIGKILL)
        os.waitpid(attacker, 0)
    # The runs themselves succeed: renaming the run directory or planting symlinks changes nothing they open.
    assert [rc for rc, out in results] == [0, 0, 0], [out.get('msg') for rc, out in results]
    assert digest(os_drive) == before_hash, 'the OS drive stand-in was written'
    # What is left is the user's, except a run directory the user renamed away in the microseconds between its
    # mkdir and its open: the run made another and reported it; it stays empty (root, 0700) where the user put it.
    swapped = sum(len((out.get('safety') or (out.get('result') or {}).get('safety') or {}).get('swapped_run_dirs', []))
                  for rc, out in results)
    left = dict((name, os.lstat(os.path.join(ckpt, name))) for name in os.listdir(ckpt))
    roots = [name for name, info in left.items() if info.st_uid != NOBODY.pw_uid]
    assert len(roots) <= swapped, (roots, swapped)
    for name in roots:
        assert stat.S_ISDIR(left[name].st_mode) and stat.S_IMODE(left[name].st_mode) == 0o700
        assert os.listdir(os.path.join(ckpt, name)) == []
    assert not [name for name in left if name.startswith('.moved.') and name not in roots], left
    assert fio_processes(descendants(os.getpid())) == [] and holders_of(ckpt) == []
    assert state_store.read_record(state, 'scratch') is None


# --- fio ends with the module ------------------------------------------------------------------------------------------
SLOW = dict(ranks=2, shard_size='2G', block_size='4K', queue_depth=1, ioengine='psync', direct=True)


def start_module(tmp_path, name, args, new_group=False):
    """The module as Ansible runs it: its own Python process reading its arguments from a file."""
    path = tmp_path / ('%s.args.json' % name)
    path.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': args}))
    return subprocess.Popen([sys.executable, '-m', 'ansible_collections.ai_storage.checkpoint_io.plugins.modules.%s'
                             % name, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=COLLECTIONS), start_new_session=new_group)


def wait_for_fio(proc, limit=30):
    deadline = time.time() + limit
    while time.time() < deadline:
        found = fio_processes(descendants(proc.pid))
        if found:
            return found
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError('fio never started')


def gone(pids, limit=15):
    deadline = time.time() + limit
    while time.time() < deadline:
        if not [pid for pid in pids if scratch.process_start(pid)]:
            return True
        time.sleep(0.05)
    return False


def run_dirs(directory):
    return [name for name in os.listdir(directory) if name.startswith('.checkpoint_io.')]


def test_a_timeout_ends_real_fio_and_removes_the_shards(tmp_path, state, capsys):
    target = tmp_path / 'ckpt'
    target.mkdir()
    rc, out = run_fio_module(capsys, checkpoint_write.main, dict(directories=[str(target)], timeout=1,
                                                                 state_dir=state, **SLOW))
    assert rc == 1 and out['msg'] == 'fio ran past timeout 1 s and was killed', out
    assert os.listdir(str(target)) == []
    assert fio_processes(descendants(os.getpid())) == [] and holders_of(str(target)) == []
    assert state_store.read_record(state, 'scratch') is None


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_the_module_ends_fio_and_removes_the_shards(tmp_path, state, sig):
    target = tmp_path / 'ckpt'
    target.mkdir()
    proc = start_module(tmp_path, 'checkpoint_write', dict(directories=[str(target)], timeout=300,
                                                           state_dir=state, fio_path=shutil.which('fio'), **SLOW))
    fio = wait_for_fio(proc)
    os.kill(proc.pid, sig)
    stdout, stderr = proc.communicate(timeout=60)
    out = json.loads(stdout)
    assert out['failed'] and out['msg'].startswith('checkpoint write terminated by signal %d' % sig), out
    assert gone(fio)
    assert os.listdir(str(target)) == [] and holders_of(str(target)) == []
    assert state_store.read_record(state, 'scratch') is None


def test_a_sweep_killed_by_sigterm_ends_fio_and_removes_its_scratch(tmp_path, state):
    target = tmp_path / 'ckpt'
    target.mkdir()
    proc = start_module(tmp_path, 'queue_depth_sweep', dict(
        directory=str(target), depths=[1], block_size='4K', scratch_size='2G', ioengine='psync', timeout=300,
        state_dir=state, fio_path=shutil.which('fio')))
    fio = wait_for_fio(proc)
    os.kill(proc.pid, signal.SIGTERM)
    out = json.loads(proc.communicate(timeout=60)[0])
    assert out['failed'] and 'terminated by signal 15' in out['msg'], out
    assert gone(fio) and os.listdir(str(target)) == []
    assert state_store.read_record(state, 'scratch') is None


@pytest.mark.parametrize('whole_group', [True, False])
def test_a_sigkilled_module_takes_fio_with_it_and_the_reaper_cleans_up(tmp_path, state, capsys, whole_group):
    """SIGKILL of the module's process group (Ansible's async wrapper on timeout) or of the module alone: fio
    dies with it (same process group, --thread, PR_SET_PDEATHSIG); the run directory it could not remove stays
    recorded, and the reaper (checkpoint_job reap, run by the preflight role) removes it."""
    target = tmp_path / 'ckpt'
    target.mkdir()
    proc = start_module(tmp_path, 'checkpoint_write', dict(directories=[str(target)], timeout=300,
                                                           state_dir=state, fio_path=shutil.which('fio'), **SLOW),
                        new_group=True)
    fio = wait_for_fio(proc)
    if whole_group:
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert gone(fio), 'fio outlived the module'
    left = run_dirs(str(target))
    assert len(left) == 1 and list(state_store.read_record(state, 'scratch')) == [str(target / left[0])]
    with module_args(dict(reap=True, state_dir=state, job_store=str(tmp_path / 'jobs'))):
        with pytest.raises(SystemExit):
            checkpoint_job.main()
    reaped = json.loads(capsys.readouterr().out)
    assert reaped['changed'] is True and reaped['reaped']['errors'] == []
    assert [r['run_dir'] for r in reaped['reaped']['run_dirs']] == [str(target / left[0])]
    assert 'is gone' in reaped['reaped']['run_dirs'][0]['reason']
    assert os.listdir(str(target)) == [] and state_store.read_record(state, 'scratch') is None


def test_ansible_async_timeout_leaves_no_fio(tmp_path, state):
    """A foreground write under a real ``ansible`` ad-hoc ``async`` (-B 3): the wrapper SIGKILLs the module's
    process group at 3 s; fio goes with it, and the next run's reaper removes the run directory."""
    target = tmp_path / 'ckpt'
    target.mkdir()
    args = dict(directories=[str(target)], timeout=300, state_dir=state, **SLOW)
    # TMPDIR: the SIGKILLed module never removes its AnsiballZ payload directory (ansible's, in the module's
    # temporary directory): this test's own, not the machine's /tmp
    module_tmp = tmp_path / 'module_tmp'
    module_tmp.mkdir()
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_PYTHON_INTERPRETER=sys.executable,
               ANSIBLE_NOCOLOR='1', TMPDIR=str(module_tmp))
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible')
    proc = subprocess.run([binary, 'localhost', '-i', 'localhost,', '-c', 'local', '-m',
                           'ai_storage.checkpoint_io.checkpoint_write', '-a', json.dumps(args), '-B', '3', '-P', '1'],
                          env=env, capture_output=True, text=True, timeout=180, check=False)
    # the wrapper's own word, or (on a loaded machine, the controller's poll running out first) the controller's
    said = proc.stdout + proc.stderr
    words = ('Timeout exceeded', 'timed out', 'did not complete within the requested time')
    assert any(text in said for text in words), said
    deadline = time.time() + 15
    while holders_of(str(target)) and time.time() < deadline:
        time.sleep(0.1)
    assert holders_of(str(target)) == [], 'fio outlived the async timeout'
    left = run_dirs(str(target))
    assert len(left) == 1
    removed = scratch_reap.reap(state)
    assert [r['run_dir'] for r in removed['reaped']] == [str(target / left[0])]
    assert os.listdir(str(target)) == [] and state_store.read_record(state, 'scratch') is None


def test_the_reaper_cancels_a_job_of_a_dead_run_and_keeps_the_current_runs(tmp_path, state, capsys):
    """A background write started under run A still runs when run B takes the lease: the reaper cancels it and
    removes its shards; a job of B itself is kept."""
    store = str(tmp_path / 'jobs')
    target = tmp_path / 'ckpt'
    target.mkdir()
    owner = {'run_id': 'run-A', 'controller': 'ctl', 'controller_pid': 1, 'user': 'root', 'playbook': 'x'}
    state_store.acquire_run(state, owner, ttl=600)
    rc, started = run_fio_module(capsys, checkpoint_write.main, dict(
        directories=[str(target)], timeout=300, state_dir=state, background=True, job_store=store, **SLOW))
    assert rc == 0, started
    session = fio_job.load(started['job_id'], store)['session']
    state_store.acquire_run(state, dict(owner, run_id='run-B'), ttl=600, take_over='run-A')
    with module_args(dict(reap=True, state_dir=state, job_store=store, _ansible_check_mode=True)):
        with pytest.raises(SystemExit):
            checkpoint_job.main()
    checked = json.loads(capsys.readouterr().out)
    assert checked['changed'] is True and checked['reaped']['jobs'][0]['action'] == 'cancelled'
    assert fio_job.session_members(session) and run_dirs(str(target))  # check mode: nothing done
    with module_args(dict(reap=True, state_dir=state, job_store=store)):
        with pytest.raises(SystemExit):
            checkpoint_job.main()
    reaped = json.loads(capsys.readouterr().out)
    assert reaped['reaped']['run'] == 'run-B'
    assert [(j['job_id'], j['action']) for j in reaped['reaped']['jobs']] == [(started['job_id'], 'cancelled')]
    assert fio_job.session_members(session) == []
    assert os.listdir(str(target)) == [] and os.listdir(store) == []
    assert state_store.read_record(state, 'scratch') is None
    # A job of the run that holds the lease is its own: kept.
    rc, mine = run_fio_module(capsys, checkpoint_write.main, dict(
        directories=[str(target)], timeout=300, state_dir=state, background=True, job_store=store, **SLOW))
    with module_args(dict(reap=True, state_dir=state, job_store=store)):
        with pytest.raises(SystemExit):
            checkpoint_job.main()
    reaped = json.loads(capsys.readouterr().out)
    assert reaped['changed'] is False and reaped['reaped']['jobs'][0]['action'] == 'kept'
    assert reaped['reaped']['kept'][0]['run_dir'].startswith(str(target))
    poll_job(capsys, store, mine['job_id'], cancel=True, state_dir=state)
    assert os.listdir(str(target)) == [] and state_store.read_record(state, 'scratch') is None
