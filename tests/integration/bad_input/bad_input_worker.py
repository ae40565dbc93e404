# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs one module's bad-input cases in one process: ``python bad_input_worker.py IN.json OUT.json``.

IN: {"module", "tmp", "cases": [{"id", "args"}]}; every case runs the module's main() with its args (JSON, as
ansible hands them over) on a fake node under ``tmp``/env, its stdout captured, the env's files snapshotted before
and after. No command runs: AnsibleModule.run_command is replaced by a guard that records the command and answers
rc 1, every program the module looks up is a fake that runs nothing (fio), so an accepted bad value can only change
files under the scratch directory - where the snapshot sees it. OUT: [{"id", "rc", "result", "stdout", "traceback",
"changes", "commands"}].
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import io
import json
import os
import shutil
import signal
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
UNIT = os.path.join(ROOT, 'tests', 'unit')  # the fake node and helpers the tiers share
for path in (HERE, UNIT, os.path.join(ROOT, 'collections')):
    if path not in sys.path:
        sys.path.insert(0, path)

from ansible.module_utils import basic  # noqa: E402
from ansible.module_utils.testing import patch_module_args  # noqa: E402

from bad_input_lib import changes, make_scratch, materialize, snapshot  # noqa: E402
from checkpoint_io_fake_node import build_node, write  # noqa: E402

DS_CONFIG = '{"train_batch_size": 8, "aio": {"queue_depth": 8, "block_size": 1048576}}\n'
MDSTAT = 'Personalities : [raid0]\nunused devices: <none>\n'
FAKE_FIO = '#!/bin/sh\necho "$0 $*" >> "%s"\necho "bad-input harness: fio not run" >&2\nexit 1\n'
CASE_SECONDS = 30


def build_env(tmp):
    """The fake node and the scratch fixtures (a copy of the template made once); the placeholder values."""
    env = os.path.join(tmp, 'env')
    template = os.path.join(tmp, 'template')
    if not os.path.isdir(template):
        _build_template(template)
    if os.path.isdir(env):
        shutil.rmtree(env)
    shutil.copytree(template, env, symlinks=True)
    node = os.path.join(env, 'node')
    return {'tmp': env, 'sys': os.path.join(node, 'sys'), 'proc': os.path.join(node, 'proc'),
            'dev': os.path.join(node, 'dev'), 'etc': os.path.join(node, 'etc')}


def _build_template(env):
    os.makedirs(env)
    os.chmod(env, 0o755)
    make_scratch(env)
    node = build_node(os.path.join(env, 'node'))
    write(os.path.join(node.proc, 'mdstat'), MDSTAT)
    for name in ('ckpt', 'sweep', 'cwd'):
        os.makedirs(os.path.join(env, name))
    write(os.path.join(env, 'ds', 'ds_config.json'), DS_CONFIG)
    write(os.path.join(env, 'mdadm.conf'), '# mdadm.conf\nMAILADDR root\n')


def restore(env, template, diff):
    """Put the paths a case changed back as the template has them (what the case made goes)."""
    paths = sorted(set(line.split(' ', 1)[1] for line in diff), key=lambda path: path.count('/'))
    for path in reversed(paths):
        twin = os.path.join(template, os.path.relpath(path, env))
        if not os.path.lexists(twin) and os.path.lexists(path):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
    for path in paths:
        twin = os.path.join(template, os.path.relpath(path, env))
        if not os.path.lexists(twin):
            continue
        if os.path.isdir(twin) and not os.path.islink(twin):
            if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
                os.unlink(path)
            if not os.path.isdir(path):
                shutil.copytree(twin, path, symlinks=True)
            os.chmod(path, os.stat(twin).st_mode & 0o7777)
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        if os.path.islink(twin):
            os.symlink(os.readlink(twin), path)
        else:
            shutil.copy2(twin, path)


def settle(root, seconds=10.0):
    """Wait until nothing under ``root`` changes for half a second (at most ``seconds``)."""
    deadline = time.time() + seconds
    last = snapshot(root)
    while time.time() < deadline:
        time.sleep(0.5)
        now = snapshot(root)
        if now == last:
            return
        last = now


class Hung(Exception):
    pass


def _alarm(signum, frame):
    raise Hung('the case ran past %d s' % CASE_SECONDS)


def main():
    with open(sys.argv[1]) as handle:
        job = json.load(handle)
    tmp = job['tmp']
    module = importlib.import_module('ansible_collections.ai_storage.checkpoint_io.plugins.modules.' + job['module'])
    bin_dir = os.path.join(tmp, 'bin')
    log_dir = os.path.join(tmp, 'log')
    ansible_tmp = os.path.join(tmp, 'ansible_tmp')
    for path in (bin_dir, log_dir, ansible_tmp):
        if not os.path.isdir(path):
            os.makedirs(path)
    fio = os.path.join(bin_dir, 'fio')
    with open(fio, 'w') as handle:
        handle.write(FAKE_FIO % os.path.join(log_dir, 'fio.log'))
    os.chmod(fio, 0o755)
    commands = []

    def run_command(self, args, *more, **kwargs):
        commands.append(args if isinstance(args, str) else ' '.join(
            arg.decode('utf-8', 'replace') if isinstance(arg, bytes) else str(arg) for arg in args))
        return 1, '', 'bad-input harness: %s was not run' % (args if isinstance(args, str) else ' '.join(args))

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        return os.path.join(bin_dir, arg)

    basic.AnsibleModule.run_command = run_command
    basic.AnsibleModule.get_bin_path = get_bin_path
    signal.signal(signal.SIGALRM, _alarm)

    places = build_env(tmp)
    places['fio'] = fio
    out = []
    real_stdout = sys.stdout
    for case in job['cases']:
        args = materialize(case['args'], places['tmp'], places)
        args.update(_ansible_tmpdir=ansible_tmp, _ansible_remote_tmp=ansible_tmp, _ansible_check_mode=False,
                    _ansible_diff=False)
        del commands[:]
        env_root = places['tmp']
        started = time.time()
        before = snapshot(env_root)
        os.chdir(os.path.join(env_root, 'cwd'))
        buffer = io.StringIO()
        rc, tb = None, None
        sys.stdout = buffer
        signal.alarm(CASE_SECONDS)
        try:
            with patch_module_args(args):
                module.main()
            rc = 0
        except SystemExit as exc:
            rc = exc.code
        except BaseException:  # the point: any exception escaping main() is a traceback a user would see
            tb = traceback.format_exc()
        finally:
            signal.alarm(0)
            sys.stdout = real_stdout
            os.chdir(tmp)
        text = buffer.getvalue()
        try:
            result = json.loads(text) if text.strip() else None
        except ValueError:
            result = None
        if isinstance(result, dict) and result.get('job_id'):
            settle(env_root)  # the detached job the case started ends (its fio is the fake) before the next case
        after = snapshot(env_root)
        diff = changes(before, after)
        out.append({'id': case['id'], 'rc': rc, 'result': result, 'stdout': text[-4000:], 'traceback': tb,
                    'changes': diff, 'commands': list(commands), 'seconds': round(time.time() - started, 3),
                    'args': args})
        if diff:  # the next case starts from a clean node again
            restore(env_root, os.path.join(tmp, 'template'), diff)
    with open(sys.argv[2], 'w') as handle:
        json.dump(out, handle, default=repr)


if __name__ == '__main__':
    main()
