# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""io_uring availability: kernel.io_uring_disabled / io_uring_group, RLIMIT_MEMLOCK
(the module's own and the one pam_limits gives the training user), liburing, and a
tiny fio io_uring job (reads of /dev/zero, nothing written) that proves the engine really runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import platform

try:
    import resource
except ImportError:  # pragma: no cover - not on Linux
    resource = None

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.verify.fio import parse_fio_json
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import find_library, trim
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import boot_cache
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import (
    listdir,
    read_int,
    read_lines,
    read_str,
    to_int,
)

UNLIMITED = 'unlimited'
# pam_limits priorities: a lower number wins; equal numbers: the later line wins.
_PRIO_USER, _PRIO_GROUP, _PRIO_ALL = 0, 1, 3


# --- users and groups -------------------------------------------------------------
def _passwd_entries(ctx):
    for line in read_lines(ctx.etc('passwd')):
        fields = line.split(':')
        if len(fields) >= 4 and not line.startswith('#'):
            yield fields


def _group_entries(ctx):
    for line in read_lines(ctx.etc('group')):
        fields = line.split(':')
        if len(fields) >= 3 and not line.startswith('#'):
            yield fields


def lookup_user(ctx, name):
    """{name, uid, gid, gids, groups} from <etc_root>/passwd + group; NSS fallback on the real /etc."""
    user = None
    for fields in _passwd_entries(ctx):
        if fields[0] == name:
            user = {'name': name, 'uid': to_int(fields[2], base=10), 'gid': to_int(fields[3], base=10)}
            break
    groups = {}
    if user is not None:
        for fields in _group_entries(ctx):
            gid = to_int(fields[2], base=10)
            members = fields[3].split(',') if len(fields) > 3 and fields[3] else []
            if gid == user['gid'] or name in members:
                groups[gid] = fields[0]
    elif ctx.etc_is_real():
        user, groups = _nss_user(name)
    if user is None:
        return None
    user['gids'] = sorted(g for g in set(list(groups) + [user['gid']]) if g is not None)
    user['groups'] = sorted(set(groups.values()))
    return user


def _nss_user(name):
    try:
        import grp
        import pwd
        pw = pwd.getpwnam(name)
    except (ImportError, KeyError):
        return None, {}
    user = {'name': name, 'uid': pw.pw_uid, 'gid': pw.pw_gid}
    groups = {}
    try:
        for gid in os.getgrouplist(name, pw.pw_gid):
            try:
                groups[gid] = grp.getgrgid(gid).gr_name
            except KeyError:
                groups[gid] = str(gid)
    except (AttributeError, OSError):
        pass
    return user, groups


def current_user_name():
    try:
        import pwd
        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return None


# --- kernel switches ------------------------------------------------------------------
def allowed_for_user(disabled, group, user):
    """(allowed, reason) for kernel.io_uring_disabled semantics (Linux 6.6+)."""
    if disabled is None:
        return True, 'kernel.io_uring_disabled is absent (kernel before 6.6): io_uring is allowed for everyone'
    if disabled == 0:
        return True, 'kernel.io_uring_disabled=0: io_uring is allowed for everyone'
    if disabled == 2:
        return False, 'kernel.io_uring_disabled=2: io_uring is disabled for everyone'
    if disabled == 1:
        if user is None:
            return None, 'kernel.io_uring_disabled=1 and the user is unknown: cannot tell'
        if user['uid'] == 0:
            return True, 'kernel.io_uring_disabled=1: allowed for %s (uid 0, CAP_SYS_ADMIN)' % user['name']
        if group is not None and group >= 0 and group in user['gids']:
            return True, 'kernel.io_uring_disabled=1: allowed, %s is in kernel.io_uring_group %d' % (
                user['name'], group)
        return False, ('kernel.io_uring_disabled=1: %s is neither privileged nor in kernel.io_uring_group (%s)'
                       % (user['name'], group))
    return None, 'kernel.io_uring_disabled=%s is not a known value' % disabled


# --- RLIMIT_MEMLOCK -------------------------------------------------------------------
def _rlimit_value(value):
    if resource is not None and value == resource.RLIM_INFINITY:
        return UNLIMITED
    return int(value)


def module_memlock():
    """The module process's own (soft, hard) RLIMIT_MEMLOCK in bytes or 'unlimited'."""
    if resource is None:
        return None, None
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    except (ValueError, OSError):
        return None, None
    return _rlimit_value(soft), _rlimit_value(hard)


def _limit_value(text):
    """memlock value of limits.conf (KiB) -> bytes or 'unlimited'; None when invalid."""
    word = text.strip().lower()
    if word in ('unlimited', 'infinity', '-1'):
        return UNLIMITED
    number = to_int(word, base=10)
    if number is None or number < 0:
        return None
    return number * 1024


def limits_files(ctx):
    """limits.conf then limits.d/*.conf in name order (pam_limits reading order)."""
    files = [ctx.etc('security', 'limits.conf')]
    directory = ctx.etc('security', 'limits.d')
    files.extend(os.path.join(directory, name) for name in sorted(listdir(directory)) if name.endswith('.conf'))
    return files


def _domain_priority(domain, user):
    if domain == user['name']:
        return _PRIO_USER
    if domain.startswith('@') and domain[1:] in user['groups']:
        return _PRIO_GROUP
    if domain == '*':
        return _PRIO_ALL
    return None


def configured_memlock(ctx, user):
    """pam_limits memlock for ``user``: {soft, hard, soft_source, hard_source} (None = not configured)."""
    result = {'soft': None, 'hard': None, 'soft_source': None, 'hard_source': None}
    if user is None:
        return result
    prio = {'soft': None, 'hard': None}
    for path in limits_files(ctx):
        for number, line in enumerate(read_lines(path), 1):
            line = line.split('#', 1)[0].strip()
            fields = line.split()
            if len(fields) != 4 or fields[2].lower() != 'memlock':
                continue
            domain, kind, _item, value = fields
            level = _domain_priority(domain, user)
            value = _limit_value(value)
            if level is None or value is None:
                continue
            kinds = ('soft', 'hard') if kind == '-' else (kind,)
            for which in kinds:
                if which not in prio:
                    continue
                if prio[which] is None or level <= prio[which]:
                    prio[which] = level
                    result[which] = value
                    result[which + '_source'] = '%s:%d' % (path, number)
    return result


# --- fio and liburing -------------------------------------------------------------------
def fio_version(ctx, path):
    res = ctx.run([path, '--version'])
    if res['error']:
        return None
    text = res['stdout'].strip()
    return text[4:] if text.startswith('fio-') else (text or None)


def _fio_job_ok(parsed):
    """(ok, error) from parse_fio_json output: a job without error that moved bytes (the probe reads)."""
    jobs = parsed.get('jobs') if isinstance(parsed, dict) else None
    if not jobs:
        errs = parsed.get('errors') if isinstance(parsed, dict) else None
        return False, 'fio JSON has no job results%s' % (': %s' % errs if errs else '')
    for job in jobs:
        error = job.get('error')
        if error:
            return False, 'fio job error %s' % error
        moved = 0
        for side in ('read', 'write'):
            stats = job.get(side) or {}
            moved += stats.get('io_bytes') or stats.get('bytes') or 0
        if not moved:
            return False, 'fio job moved no bytes'
    return True, None


# io_uring reads of /dev/zero: io_uring_setup() and real submissions, and nothing written anywhere, ever (check mode
# included): --readonly makes fio refuse any write, the file is a character device (nothing to lay out), and the
# output goes to stdout.
PROBE_ARGV = ['--name=probe', '--ioengine=io_uring', '--filename=/dev/zero', '--readonly', '--rw=read',
              '--size=1M', '--bs=4k', '--output-format=json']


def run_fio_probe(ctx, path):
    """Run 1 MiB of io_uring reads of /dev/zero (writes nothing); (works, error, stderr warning)."""
    res = ctx.run([path] + PROBE_ARGV, cwd='/', timeout_s=60)
    if res['error']:
        return False, res['error'], None
    try:
        parsed = parse_fio_json(res['stdout'])
    except Exception as e:  # parser promises not to raise
        return False, 'fio output not parsed: %s' % e, None
    ok, error = _fio_job_ok(parsed)
    warning = None
    if res['stderr'].strip():
        # fio may warn on stderr with rc 0: keep it visible.
        warning = 'fio probe stderr (rc=0): %s' % trim(res['stderr'])
    return ok, error, warning


PROBE_CACHE = 'io_uring_probe'


def probe_fio(ctx, fio_path, fio_probe):
    """fio's version and the probe (works, error, warning, cached), from this boot's earlier gather where its key
    (the boot, fio's file, the user, the kernel's io_uring switches) still holds (boot_cache)."""
    key = boot_cache.key_for(ctx, fio_path, read_str(ctx.proc('sys', 'kernel', 'io_uring_disabled')),
                             read_str(ctx.proc('sys', 'kernel', 'io_uring_group')))
    cached = boot_cache.read(ctx, PROBE_CACHE, key)
    if cached is not None and (cached.get('probed') or not fio_probe):
        verdict = [cached.get(k) if fio_probe else None for k in ('works', 'error', 'warning')]
        return tuple([cached.get('version')] + verdict + [True])
    version = fio_version(ctx, fio_path)
    if not fio_probe:
        boot_cache.write(ctx, PROBE_CACHE, key, {'version': version, 'probed': False})
        return version, None, None, None, False
    works, error, warning = run_fio_probe(ctx, fio_path)
    boot_cache.write(ctx, PROBE_CACHE, key, {'version': version, 'probed': True, 'works': works, 'error': error,
                                             'warning': warning})
    return version, works, error, warning, False


def collect(ctx, training_user=None, fio_probe=True):
    """The ``io_uring`` section."""
    errors = []
    release = read_str(ctx.proc('sys', 'kernel', 'osrelease')) or platform.release() or None
    disabled = read_int(ctx.proc('sys', 'kernel', 'io_uring_disabled'))
    group = read_int(ctx.proc('sys', 'kernel', 'io_uring_group'))
    name = training_user or current_user_name()
    user = lookup_user(ctx, name) if name else None
    if name and user is None:
        errors.append('user %s not found in %s/passwd' % (name, ctx.etc_root))
    allowed, reason = allowed_for_user(disabled, group, user)

    soft, hard = module_memlock()
    configured = configured_memlock(ctx, user)

    fio_path = ctx.which('fio')
    works, probe_error, version, cached = None, None, None, False
    if fio_path:
        version, works, probe_error, warning, cached = probe_fio(ctx, fio_path, fio_probe)
        if warning:
            errors.append(warning)
    elif fio_probe:
        probe_error = 'fio not found in PATH'

    liburing = find_library(ctx, 'liburing')
    return {
        'kernel_release': release,
        'io_uring_disabled': disabled,
        'io_uring_group': group,
        'training_user': name,
        'training_user_uid': user['uid'] if user else None,
        'training_user_groups': user['groups'] if user else [],
        'allowed_for_user': allowed,
        'allowed_reason': reason,
        'memlock': {
            'module_soft_bytes': soft,
            'module_hard_bytes': hard,
            'configured_soft_bytes': configured['soft'],
            'configured_hard_bytes': configured['hard'],
            'configured_soft_source': configured['soft_source'],
            'configured_hard_source': configured['hard_source'],
        },
        'fio_path': fio_path,
        'fio_version': version,
        'fio_io_uring_works': works,
        'fio_probe_error': probe_error,
        'fio_probe_cached': cached,
        'liburing': bool(liburing),
        'liburing_path': liburing[0] if liburing else None,
        'errors': errors,
    }
