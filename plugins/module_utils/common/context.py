# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Context every collector reads through (roots, commands, binaries) and
small helpers shared by the collectors (library search, error trimming)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import glob
import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import nvme_ioctl
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import join_root, read_text

COMMAND_ENV = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}
DEFAULT_TIMEOUT_S = 60
_ERR_TRIM = 400
# NVMe admin commands the facts send with the passthrough ioctl (nvme_ioctl), by the name nvme_facts gives them
NVME_ADMIN_READERS = {
    'smart-log': nvme_ioctl.read_smart_log,
    'id-ctrl': nvme_ioctl.read_id_ctrl,
    'num-queues': nvme_ioctl.read_num_queues,
}


def trim(text, limit=_ERR_TRIM):
    text = (text or '').strip()
    if len(text) > limit:
        return text[:limit] + '...'
    return text


class Context(object):
    """Roots, command runner and binary lookup shared by all collectors.

    ``which(name, opt_dirs)`` returns a path or None; ``runner(argv, cwd)``
    returns (rc, stdout, stderr).  With a module both default to the
    module's get_bin_path / run_command; tests pass fakes.
    ``admin_reader(log, dev_path)`` answers :meth:`nvme_admin` (tests); without
    it the NVMe admin ioctl is sent only when devfs_root is the real /dev.
    """

    def __init__(self, module=None, sysfs_root='/sys', procfs_root='/proc', devfs_root='/dev',
                 etc_root='/etc', which=None, runner=None, environ=None, tmpdir=None,
                 lib_dirs=None, cuda_globs=None, timeout_s=DEFAULT_TIMEOUT_S, admin_reader=None, boot_root='/boot',
                 run_root=None):
        self.module = module
        self.sysfs_root = sysfs_root
        self.procfs_root = procfs_root
        self.devfs_root = devfs_root
        self.etc_root = etc_root
        self.boot_root = boot_root
        # /run (a tmpfs, emptied at boot) where the facts keep what holds for a boot (the io_uring probe); None: nothing kept
        self.run_root = run_root
        self.environ = os.environ if environ is None else environ
        self.tmpdir = tmpdir
        self.timeout_s = timeout_s
        # Where shared libraries and CUDA tools are searched when ldconfig does not know them.
        self.lib_dirs = lib_dirs if lib_dirs is not None else [
            '/lib', '/lib64', '/usr/lib', '/usr/lib64', '/usr/local/lib', '/usr/local/lib64',
            '/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu',
            '/lib/aarch64-linux-gnu', '/usr/lib/aarch64-linux-gnu',
        ]
        self.cuda_globs = cuda_globs if cuda_globs is not None else ['/usr/local/cuda*', '/usr/local/cuda']
        self._which = which
        self._runner = runner
        self._admin_reader = admin_reader
        self._bin_cache = {}
        self.cache = {}

    @property
    def check_mode(self):
        return bool(self.module is not None and getattr(self.module, 'check_mode', False))

    # --- paths ----------------------------------------------------------------
    def sys(self, *parts):
        return os.path.join(self.sysfs_root, *parts)

    def proc(self, *parts):
        return os.path.join(self.procfs_root, *parts)

    def dev(self, *parts):
        return os.path.join(self.devfs_root, *parts)

    def etc(self, *parts):
        return os.path.join(self.etc_root, *parts)

    def etc_is_real(self):
        return os.path.normpath(self.etc_root) == '/etc'

    def under_etc_root(self, path):
        """Map an absolute /etc/... path into etc_root (for tests); other paths unchanged."""
        if path.startswith('/etc/') and not self.etc_is_real():
            return join_root(self.etc_root, path[len('/etc'):])
        return path

    # --- commands -------------------------------------------------------------
    def which(self, name, opt_dirs=None):
        key = (name, tuple(opt_dirs or ()))
        if key in self._bin_cache:
            return self._bin_cache[key]
        path = None
        try:
            if self._which is not None:
                path = self._which(name, opt_dirs)
            elif self.module is not None:
                path = self.module.get_bin_path(name, required=False, opt_dirs=opt_dirs or [])
        except Exception:
            path = None
        self._bin_cache[key] = path
        return path

    def run(self, argv, cwd=None, timeout_s=None):
        """Run argv with LANG=C; returns {rc, stdout, stderr, error}.

        ``error`` is None on success, else a short human string (rc != 0,
        timeout, exception).  A ``timeout(1)`` wrapper bounds every command so
        one dead controller cannot hang fact gathering.
        """
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        full = list(argv)
        timeout_bin = self.which('timeout') if timeout_s else None
        if timeout_bin:
            full = [timeout_bin, '-k', '5', str(int(timeout_s))] + full
        try:
            if self._runner is not None:
                rc, out, err = self._runner(full, cwd)
            else:
                # handle_exceptions=False: an exec failure must not fail_json from a worker thread
                rc, out, err = self.module.run_command(full, cwd=cwd, environ_update=dict(COMMAND_ENV),
                                                       check_rc=False, handle_exceptions=False)
        except Exception as e:  # run_command may raise on exec failures in some versions
            return {'rc': None, 'stdout': '', 'stderr': '', 'error': '%s: %s' % (argv[0], e)}
        out = out or ''
        err = err or ''
        error = None
        name = os.path.basename(argv[0])
        if timeout_bin and rc in (124, 137):
            error = '%s timed out after %ss' % (' '.join([name] + list(argv[1:])), timeout_s)
        elif rc != 0:
            error = '%s failed (rc=%s): %s' % (' '.join([name] + list(argv[1:])), rc, trim(err or out))
        return {'rc': rc, 'stdout': out, 'stderr': err, 'error': error}

    def read_text(self, path):
        return read_text(path)

    # --- NVMe admin commands ---------------------------------------------------------
    def nvme_admin(self, log, dev_path):
        """One NVMe admin command (``log``: a key of NVME_ADMIN_READERS) sent with the passthrough ioctl on the
        controller ``dev_path``: its parsed dict, the shape nvme_cli's parser of the same log gives.

        Raises :class:`nvme_ioctl.NvmeIoctlError`; ``nvme_ioctl.refused(exc)`` is true where nvme-cli is to be
        asked instead, which includes a devfs_root other than /dev (a test's fixture tree holds no controller).
        """
        if self._admin_reader is not None:
            return self._admin_reader(log, dev_path)
        reader = NVME_ADMIN_READERS.get(log)
        if reader is None:
            raise nvme_ioctl.NvmeIoctlError('%s: no admin ioctl reader' % log, errno_value=errno.EOPNOTSUPP)
        if os.path.normpath(self.devfs_root) != '/dev':
            raise nvme_ioctl.NvmeIoctlError('devfs_root %s is not /dev: no admin ioctl' % self.devfs_root,
                                            errno_value=errno.EOPNOTSUPP)
        return reader(dev_path)


def ld_so_conf_dirs(ctx, depth_limit=8):
    """The library directories ``/etc/ld.so.conf`` names, its ``include`` globs followed (``depth_limit`` deep), as
    ldconfig reads them to build its cache: read directly, not through ``ldconfig -p`` (a process, about a second
    on a slow node, for a directory list). Paths under the root the context's /etc sits in; cached per run."""
    if 'ld_so_conf' in ctx.cache:
        return ctx.cache['ld_so_conf']
    root = os.path.dirname(os.path.normpath(ctx.etc_root)) or '/'
    dirs = []

    def under_root(path):
        return os.path.join(root, path.lstrip('/'))

    def read(path, depth):
        if depth > depth_limit:
            return
        try:
            with open(path, encoding='utf-8', errors='replace') as handle:
                lines = handle.read().splitlines()
        except (IOError, OSError):
            return
        for line in lines:
            line = line.split('#', 1)[0].strip()
            if not line or line.startswith('hwcap'):
                continue
            if line.startswith('include') and line[7:8].isspace():
                for pattern in line[8:].split():
                    pattern = pattern if pattern.startswith('/') else '/etc/' + pattern
                    for included in sorted(glob.glob(under_root(pattern))):
                        read(included, depth + 1)
                continue
            for directory in line.replace(',', ' ').replace(':', ' ').split():
                if directory.startswith('/') and under_root(directory) not in dirs:
                    dirs.append(under_root(directory))
    read(ctx.etc('ld.so.conf'), 0)
    ctx.cache['ld_so_conf'] = dirs
    return dirs


def find_library(ctx, stem, extra_globs=None):
    """Paths of ``<stem>.so*`` in the directories ldconfig caches (ld_so_conf_dirs, then ctx.lib_dirs: the trusted
    ones) and ``extra_globs``, in that order."""
    found = []
    patterns = [os.path.join(d, stem + '.so*') for d in ld_so_conf_dirs(ctx) + list(ctx.lib_dirs)]
    for pattern in patterns + list(extra_globs or []):
        for path in sorted(glob.glob(pattern)):
            if path not in found:
                found.append(path)
    return found
