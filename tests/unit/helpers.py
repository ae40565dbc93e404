"""Small helpers shared by the unit tests."""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19 (tests/core_matrix.sh): the arguments a module reads at start-up
    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes

    @contextlib.contextmanager
    def patch_module_args(args):
        saved = basic._ANSIBLE_ARGS  # pylint: disable=protected-access
        basic._ANSIBLE_ARGS = to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': args}))  # pylint: disable=protected-access
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved  # pylint: disable=protected-access

from testenv import FIXTURES, ROOT


def fixture(kind, name):
    """The text of tests/unit/fixtures/<kind>/<name>."""
    with open(os.path.join(FIXTURES, kind, name)) as handle:
        return handle.read()


def subset(actual, expected):
    """Assert every key of ``expected`` has that value in ``actual``."""
    for key, value in expected.items():
        assert actual[key] == value, "%s: %r != %r" % (key, actual[key], value)


@contextlib.contextmanager
def module_args(args):
    """Run a module's main() with ``args`` as its parameters (ansible-core 2.19's patch_module_args, or the same
    done by hand before 2.19)."""
    with patch_module_args(args):
        yield


TOOLS_LIST = os.path.join(os.path.dirname(FIXTURES), '..', '..', 'lab', 'tools.txt')


def listed_tools():
    """The tools of lab/tools.txt (what lab/bootstrap.sh installs)."""
    with open(TOOLS_LIST) as handle:
        return set(line.split()[0] for line in handle if line.strip() and not line.startswith('#'))


def require_tool(name):
    """The path of a host tool a test runs; the test fails naming it (and lab/bootstrap.sh) when it is missing."""
    assert name in listed_tools(), '%s is not in lab/tools.txt: add it there so lab/bootstrap.sh installs it' % name
    path = shutil.which(name)
    if path is None:
        pytest.fail('%s is not installed on this machine: run lab/bootstrap.sh (it installs every tool of '
                    'lab/tools.txt)' % name, pytrace=False)
    return path


FIO = shutil.which('fio') or 'fio'


def fio_works(directory, engine, direct):
    require_tool('fio')
    path = os.path.join(str(directory), 'probe')
    try:
        proc = subprocess.run([FIO, '--name=probe', '--filename=%s' % path, '--rw=write', '--bs=4096',
                               '--size=65536', '--ioengine=%s' % engine, '--direct=%d' % direct],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, check=False)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return proc.returncode == 0 and b'err=' not in proc.stderr


def fio_capabilities(base):
    """{'ioengine', 'direct'} the host's tmp filesystem and kernel accept (io_uring and O_DIRECT when they work)."""
    engine = 'io_uring' if fio_works(base, 'io_uring', 0) else 'psync'
    return {'ioengine': engine, 'direct': fio_works(base, engine, 1)}


def checkpoint_dirs(tmp_path, count=2):
    """``count`` empty directories ckpt0, ckpt1, ... under ``tmp_path`` (a pathlib path): their paths."""
    result = []
    for index in range(count):
        path = tmp_path / ('ckpt%d' % index)
        path.mkdir()
        result.append(str(path))
    return result


def run_fio_module(capsys, main, params):
    """(exit code, JSON result) of a fio module's main() with ``params`` (fio_path defaults to the host's fio)."""
    params.setdefault('fio_path', require_tool('fio'))
    with module_args(params):
        with pytest.raises(SystemExit) as exc:
            main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def run_module(capsys, main, args):
    """(exit code, JSON result) of a module's main() with ``args``; a failure must be a fail_json message, never a
    traceback."""
    with module_args(args):
        with pytest.raises(SystemExit) as exc:
            main()
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert 'Traceback' not in captured.out + captured.err
    assert 'exception' not in out, out.get('exception')
    return exc.value.code, out


def poll_job(capsys, store, job_id, **params):
    """(exit code, JSON result) of one checkpoint_job poll of ``job_id`` in ``store``."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.modules import checkpoint_job
    params.update(job_id=job_id, job_store=store)
    with module_args(params):
        with pytest.raises(SystemExit) as exc:
            checkpoint_job.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def run_playbook(playbook, *args):
    """ansible-playbook of this venv on this machine (localhost, connection local, linear, the checkout's
    ansible.cfg): returns (rc, stdout + stderr)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STRATEGY="linear",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR="1")
    binary = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    # in a directory of its own: a relative checkpoint_io_report_dir (the plans among the reports) lands there
    with tempfile.TemporaryDirectory(prefix="run_playbook.") as cwd:
        proc = subprocess.run([binary, "-i", "localhost,", "-c", "local", str(playbook)] + list(args),
                              env=dict(env, PWD=cwd), cwd=cwd, capture_output=True, text=True, check=False,
                              timeout=300)
    return proc.returncode, proc.stdout + proc.stderr
