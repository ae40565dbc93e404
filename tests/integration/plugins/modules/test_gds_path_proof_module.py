# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gds_path_proof end to end with a stand-in gdsio (a script in the test's tmp dir) and a stand-in
/proc/driver/nvidia-fs/stats: no GPU or nvidia-fs is needed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import stat
import sys

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import state_store
from ansible_collections.ai_storage.checkpoint_io.plugins.modules import gds_path_proof

from helpers import run_module

MIB = 2 ** 20
GPUS = '/proc/driver/nvidia/gpus'
STATS_ENABLED = '''GDS Version: 1.13.1.3
NVFS statistics(ver: 4.0)
NVFS Driver(version: 2.22.3)
Mellanox PeerDirect Supported: False
IO stats: Enabled, peer IO stats: Disabled
Logging level: info

Active Shadow-Buffer (MiB): 0
Active Process: 0
Reads				: n=0 ok=0 err=0 readMiB=0 io_state_err=0
Writes				: n=%(n)d ok=%(n)d err=0 writeMiB=%(mib)d io_state_err=0 pg-cache=0 pg-cache-fail=0 pg-cache-eio=0
Mmap				: n=0 ok=0 err=0 munmap=0
'''
STATS_DISABLED = '''GDS Version: 1.14.0.31
NVFS statistics(ver: 4.0)
NVFS Driver(version: 2.25.7)
Mellanox PeerDirect Supported: False
IO stats: Disabled, peer IO stats: Disabled
Logging level: info

Reads                : err=0 io_state_err=0
Writes               : err=0 io_state_err=0 pg-cache=0 pg-cache-fail=0 pg-cache-eio=0
'''

# The stand-in gdsio: writes -s bytes of data to the -f name (a /proc/self/fd/<n> name of a descriptor the module
# passes down), records what it did in LOG (outside the run directory), and, with BUMP, moves the nvidia-fs write
# counters of the stand-in stats file as a DMA write would (one request per -i bytes).
GDSIO = r'''#!%(python)s
import json, os, re, sys, time
LOG, STATS, BUMP, RC, SAY, SLEEP = %(log)r, %(stats)r, %(bump)r, %(rc)r, %(say)r, %(sleep)r
args = sys.argv[1:]
opt = dict(zip(args[0::2], args[1::2]))
name, size, block = opt['-f'], int(opt['-s']), int(opt['-i'])
if SLEEP:
    time.sleep(SLEEP)
written = 0
if RC == 0:
    fd = os.open(name, os.O_WRONLY)
    try:
        chunk = b'\xa5' * min(block, size)
        while written < size:
            written += os.write(fd, chunk[:size - written])
        os.fsync(fd)
        info = os.fstat(fd)
    finally:
        os.close(fd)
    if BUMP:
        with open(STATS) as f:
            text = f.read()
        match = re.search(r'Writes\s+: n=(\d+) ok=(\d+) err=0 writeMiB=(\d+)', text)
        n = int(match.group(1)) + (size + block - 1) // block
        mib = int(match.group(3)) + size // 2 ** 20
        line = 'Writes\t\t\t\t: n=%%d ok=%%d err=0 writeMiB=%%d' %% (n, n, mib)
        text = text[:match.start()] + line + text[match.end():]
        with open(STATS, 'w') as f:
            f.write(text)
    record = {'argv': sys.argv, 'real': os.path.realpath(name), 'written': written, 'st_size': info.st_size,
              'st_mode': info.st_mode, 'st_uid': info.st_uid}
else:
    record = {'argv': sys.argv, 'rc': RC}
with open(LOG, 'a') as f:
    f.write(json.dumps(record) + '\n')
if SAY:
    print(SAY)
sys.exit(RC)
'''


class Node(object):
    """A checkpoint directory, a state directory, a stand-in stats file and gdsio, all under tmp_path."""

    def __init__(self, base):
        self.base = str(base)
        self.directory = os.path.join(self.base, 'ckpt')
        os.mkdir(self.directory)
        self.state_dir = os.path.join(self.base, 'state')
        os.mkdir(self.state_dir, 0o700)
        os.chmod(self.state_dir, 0o700)
        self.stats = os.path.join(self.base, 'nvidia-fs-stats')
        self.log = os.path.join(self.base, 'gdsio.log')
        self.gdsio = os.path.join(self.base, 'bin', 'gdsio')
        os.mkdir(os.path.dirname(self.gdsio))

    def set_stats(self, text):
        with open(self.stats, 'w') as f:
            f.write(text)

    def make_gdsio(self, bump=False, rc=0, say='IoType: WRITE XferType: GPUD Threads: 1', sleep=0):
        with open(self.gdsio, 'w') as f:
            f.write(GDSIO % dict(python=sys.executable, log=self.log, stats=self.stats, bump=bump, rc=rc, say=say,
                                 sleep=sleep))
        os.chmod(self.gdsio, 0o755)
        return self.gdsio

    def runs(self):
        """What the stand-in gdsio recorded, one dict per run."""
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def left(self):
        """Everything left under the checkpoint directory."""
        return sorted(os.listdir(self.directory))


@pytest.fixture
def node(tmp_path, monkeypatch):
    node = Node(tmp_path)
    node.set_stats(STATS_ENABLED % dict(n=10, mib=10))
    node.make_gdsio()
    monkeypatch.setattr(gds_path_proof, 'listdir', lambda path: ['0000:18:00.0'] if path == GPUS else [])
    monkeypatch.setattr(gds_path_proof, 'STATS', node.stats)
    monkeypatch.setattr(gds_path_proof, 'gdsio_path', lambda module: node.gdsio)
    yield node
    # Whatever a test did, no run directory is left or stays recorded.
    assert node.left() == []
    if os.path.isdir(node.state_dir):
        assert not state_store.read_record(node.state_dir, 'scratch')


def run(capsys, node, check=False, **params):
    args = dict(params, _ansible_check_mode=check)
    args.setdefault('directory', node.directory)
    args.setdefault('state_dir', node.state_dir)
    args.setdefault('mode', 'nvidia-fs')
    args.setdefault('size', 4 * MIB)
    return run_module(capsys, gds_path_proof.main, args)


def assert_really_written(node, out, size):
    """The stand-in gdsio wrote ``size`` bytes to a file in a root-only run directory under the checkpoint
    directory, through the descriptor the module passed (a /proc/self/fd name); the run is gone now."""
    runs = node.runs()
    assert len(runs) == 1, runs
    record = runs[0]
    assert record['argv'][1:] == out['cmd'][1:]
    assert record['written'] == size and record['st_size'] == size
    assert stat.S_IMODE(record['st_mode']) == 0o600 and record['st_uid'] == os.geteuid()
    run_dir = os.path.dirname(record['real'])
    assert os.path.dirname(run_dir) == os.path.realpath(node.directory), record['real']
    assert os.path.basename(record['real']) == 'proof'
    assert not os.path.exists(run_dir) and not os.path.exists(record['real'])


# --- nothing can be proven ----------------------------------------------------------------------------------------
def test_no_gpu(capsys, node, monkeypatch):
    monkeypatch.setattr(gds_path_proof, 'listdir', lambda path: [])
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['proven'] is None and out['changed'] is False
    assert 'no NVIDIA GPU' in out['detail'] and GPUS in out['detail']
    assert out['cmd'] == [] and node.runs() == []


def test_the_gpu_list_is_read_from_proc(capsys, node, monkeypatch):
    seen = []

    def listdir(path):
        seen.append(path)
        return []
    monkeypatch.setattr(gds_path_proof, 'listdir', listdir)
    run(capsys, node)
    assert seen == [GPUS]


def test_mode_unavailable(capsys, node):
    rc, out = run(capsys, node, mode='unavailable')
    assert rc == 0, out
    assert out['proven'] is None and out['changed'] is False and 'unavailable' in out['detail']
    assert out['cmd'] == [] and node.runs() == []


def test_gdsio_missing(capsys, node, monkeypatch):
    monkeypatch.setattr(gds_path_proof, 'gdsio_path', lambda module: None)
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['proven'] is None and out['changed'] is False
    assert out['detail'].startswith('gdsio not found') and '/usr/local/cuda*/gds/tools' in out['detail']
    assert out['cmd'] == [] and node.runs() == []


def test_gdsio_is_searched_in_path_and_the_cuda_tools(capsys, node, monkeypatch, tmp_path):
    """The real gdsio_path: not in PATH nor a CUDA tools directory -> not found; in PATH -> run."""
    monkeypatch.undo()
    monkeypatch.setattr(gds_path_proof, 'listdir', lambda path: ['0000:18:00.0'] if path == GPUS else [])
    monkeypatch.setattr(gds_path_proof, 'STATS', node.stats)
    globbed = []
    monkeypatch.setattr(gds_path_proof.glob, 'glob', lambda pattern: globbed.append(pattern) or [])
    empty = tmp_path / 'empty_bin'
    empty.mkdir()
    monkeypatch.setenv('PATH', str(empty))
    rc, out = run(capsys, node)
    assert rc == 0 and out['proven'] is None and out['detail'].startswith('gdsio not found'), out
    assert globbed == ['/usr/local/cuda*/gds/tools']
    monkeypatch.setenv('PATH', os.path.dirname(node.gdsio))
    rc, out = run(capsys, node)
    assert rc == 0 and out['cmd'][0] == node.gdsio, out
    assert_really_written(node, out, 4 * MIB)


def test_check_mode_runs_nothing(capsys, node):
    before = os.stat(node.stats).st_mtime_ns
    rc, out = run(capsys, node, check=True)
    assert rc == 0, out
    assert out['proven'] is None and out['changed'] is False and out['detail'].startswith('check mode')
    assert '4 MiB' in out['detail']
    assert out['cmd'] == [] and out['stats_before'] is None and out['stats_after'] is None
    assert node.runs() == [] and os.stat(node.stats).st_mtime_ns == before
    assert not os.path.exists(state_store.record_path(node.state_dir, 'scratch'))


# --- a cuFile write -----------------------------------------------------------------------------------------------
def test_counters_moved_prove_dma(capsys, node):
    node.make_gdsio(bump=True)
    rc, out = run(capsys, node, size=8 * MIB, block_size=MIB, gpu=1)
    assert rc == 0, out
    assert out['proven'] == 'dma' and out['changed'] is True
    assert out['detail'] == ('nvidia-fs counted 8 writes (8 MiB) for a 8 MiB cuFile write: the DMA path is used')
    assert out['stats_before']['n'] == 10 and out['stats_before']['mib'] == 10
    assert out['stats_after']['n'] == 18 and out['stats_after']['mib'] == 18
    cmd = out['cmd']
    assert cmd[0] == node.gdsio
    assert re.match(r'^/proc/self/fd/[0-9]+$', cmd[cmd.index('-f') + 1])
    assert cmd[cmd.index('-d') + 1] == '1' and cmd[cmd.index('-w') + 1] == '1'
    assert cmd[cmd.index('-s') + 1] == str(8 * MIB) and cmd[cmd.index('-i') + 1] == str(MIB)
    assert cmd[cmd.index('-x') + 1] == '0' and cmd[cmd.index('-I') + 1] == '1'
    assert 'XferType: GPUD' in out['output']
    assert_really_written(node, out, 8 * MIB)


def test_counters_still_prove_compat(capsys, node):
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['proven'] == 'compat' and out['changed'] is True
    assert 'counted no write' in out['detail'] and 'compatibility mode' in out['detail']
    assert out['stats_before'] == out['stats_after'] and out['stats_after']['n'] == 10
    assert_really_written(node, out, 4 * MIB)


def test_io_stats_disabled_prove_nothing(capsys, node):
    node.set_stats(STATS_DISABLED)
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['proven'] is None
    assert 'rw_stats_enabled' in out['detail'] and 'disabled' in out['detail']
    assert out['stats_after']['n'] is None
    assert_really_written(node, out, 4 * MIB)


def test_no_nvidia_fs_stats_prove_nothing(capsys, node):
    os.unlink(node.stats)
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['proven'] is None and 'rw_stats_enabled' in out['detail']
    assert out['stats_before'] is None and out['stats_after'] is None
    assert_really_written(node, out, 4 * MIB)


def test_p2pdma_mode_proves_nothing(capsys, node):
    node.make_gdsio(bump=True)
    rc, out = run(capsys, node, mode='p2pdma')
    assert rc == 0, out
    assert out['proven'] is None and 'P2PDMA' in out['detail']
    assert_really_written(node, out, 4 * MIB)


def test_gdsio_failing(capsys, node):
    node.make_gdsio(rc=1, say='cuFileHandleRegister failed: GPUDirect Storage not supported on current file')
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['proven'] is None and out['changed'] is False
    assert out['detail'] == ('the cuFile write failed: gdsio exited with 1: cuFileHandleRegister failed: '
                             'GPUDirect Storage not supported on current file')
    assert 'cuFileHandleRegister failed' in out['output']
    assert len(node.runs()) == 1 and node.runs()[0]['rc'] == 1


def test_gdsio_printing_an_error_fails_even_with_rc_0(capsys, node):
    node.make_gdsio(say='Error: IO failed: Input/output error')
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert out['proven'] is None and out['changed'] is False
    assert out['detail'].startswith('the cuFile write failed: gdsio exited with 0: Error: IO failed')


def test_gdsio_past_its_timeout_is_ended(capsys, node):
    node.make_gdsio(sleep=30)
    rc, out = run(capsys, node, timeout=1)
    assert rc == 0, out
    assert out['proven'] is None and out['changed'] is False
    assert out['detail'] == 'the cuFile write failed: gdsio ran past 1 s and was ended'
    assert node.runs() == []


# --- inputs -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('params, fragments', [
    ({'size': 1000}, ['size: 1000 must be a whole number from 1048576 to 68719476736']),
    ({'size': 64 * 1024 * MIB + 1}, ['size: 68719476737 must be a whole number from 1048576 to 68719476736']),
    ({'block_size': 1024}, ['block_size: 1024 must be a whole number from 4096 to 67108864', 'block_size: 1024 is not a multiple']),
    ({'block_size': 128 * MIB}, ['block_size: 134217728 must be a whole number from 4096 to 67108864']),
    ({'block_size': 5000}, ['block_size: 5000 is not a multiple of 4096']),
    ({'gpu': -1}, ['gpu: -1 must be a whole number from 0 to 1023']),
    ({'timeout': 0}, ['timeout: 0 must be a whole number from 1 to 86400']),
    ({'size': 0, 'block_size': 0}, ['size: 0 must be', 'block_size: 0 must be']),
])
def test_bad_inputs_fail_naming_the_value_and_limit(capsys, node, params, fragments):
    rc, out = run(capsys, node, **params)
    assert rc == 1
    assert out['msg'].startswith('gds_path_proof: ')
    for fragment in fragments:
        assert fragment in out['msg'], out['msg']
    assert out['proven'] is None and out['cmd'] == [] and node.runs() == []


def test_a_missing_directory_fails_with_nothing_written(capsys, node):
    missing = os.path.join(node.directory, 'nope')
    rc, out = run(capsys, node, directory=missing)
    assert rc == 1
    assert missing in out['msg'] and out['msg'].endswith('nothing was written'), out['msg']
    assert node.runs() == []


def test_a_directory_others_can_write_gets_a_root_only_run_directory(capsys, node):
    """A world-writable (sticky) checkpoint directory: the file is written in a run directory only root can write,
    made under it and removed afterwards."""
    os.chmod(node.directory, 0o1777)
    rc, out = run(capsys, node)
    assert rc == 0, out
    assert_really_written(node, out, 4 * MIB)


def test_a_bad_state_dir_fails_with_nothing_written(capsys, node):
    rc, out = run(capsys, node, state_dir='relative/state')
    assert rc == 1
    assert "'relative/state'" in out['msg'] and 'absolute path' in out['msg'], out['msg']
    assert out['msg'].endswith('nothing was written') and node.runs() == []


def test_check_mode_refuses_a_bad_state_dir_as_the_run_would(capsys, node):
    """Every other module that makes run directories (checkpoint_write, checkpoint_job, engine_verify,
    queue_depth_sweep) checks state_dir first with scratch.check_state_dir; gds_path_proof does not, so check mode
    reports a run that the real run then refuses."""
    rc, out = run(capsys, node, check=True, state_dir='relative/state')
    assert rc == 1, out
    assert 'state_dir' in out['msg'] and "'relative/state'" in out['msg']
