# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one state store on a node: what it made, found and measured there.

One directory (``checkpoint_io_state_dir``, default :data:`STATE_DIR`), one JSON file per record
(``<name>.json``), one layout::

    {"checkpoint_io_record": 1, "name": "xfs", "written_at": "2026-12-02T01:02:03Z", "writer": "xfs role",
     "data": {...}}

Records written by versions before the layout (bare JSON, no ``checkpoint_io_record`` key) are read as their data
and get the layout on their next write. A record of a newer schema is refused, never rewritten.

Writes go through :func:`update` (read, change, write under an exclusive flock on ``<dir>/.lock``, through the one
atomic writer), so two writers on one node cannot lose each other's change. A whole run (a playbook) holds the run
lease (:func:`acquire_run`): a second run on the node waits for it or is refused with the holder's name.

The directory must be a real directory owned by root and writable by no one else: records steer destructive steps
(the xfs role's volume), so a directory another user could write to, or a symlink, is refused.

Records are strict JSON both ways: a record that is not UTF-8, not JSON, holds NaN or Infinity, a key twice or a
number of more than MAX_DIGITS digits is refused naming the file (never rewritten), and data that JSON cannot
represent (NaN, Infinity, keys that are not strings) is refused before anything is written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import errno
import fcntl
import json
import math
import os
import re
import stat
import time
from contextlib import contextmanager

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_json_atomic

STATE_DIR = '/var/lib/ai_storage_checkpoint_io'
SCHEMA_VERSION = 1
ENVELOPE_KEY = 'checkpoint_io_record'
LOCK_FILE = '.lock'
RUN_LEASE = 'run_lease'
NAME_RE = re.compile(r'^[a-z][a-z0-9_]{0,63}$')
MAX_DIGITS = 64
PATH_MAX = 4096


class StateError(Exception):
    """A state directory or record the store refuses to use; the message says which and what to do."""


def utc_now(now=None):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now if now is not None else time.time()))


def check_name(name):
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise StateError('record name %r is not valid: lower-case letters, digits and _ (1-64, a letter first)'
                         % (name,))
    return name


def record_path(state_dir, name):
    return os.path.join(state_dir, check_name(name) + '.json')


def check_dir_param(state_dir, option='state_dir'):
    """A module's ``state_dir`` option checked before the module does anything: a string holding an absolute path
    below / (at most PATH_MAX bytes) that is not a symlink, a file, someone else's or writable by others
    (:func:`check_dir`). Returns whether it exists (a missing one is made on the first write)."""
    if not isinstance(state_dir, str) or not state_dir.strip():
        raise StateError('%s: %r is not a directory path; give an absolute path such as %s (or leave it unset)'
                         % (option, state_dir, STATE_DIR))
    if '\0' in state_dir or not os.path.isabs(state_dir) or os.path.normpath(state_dir) == '/':
        raise StateError('%s: %r is not an absolute path below / (the state directory must not depend on the '
                         'directory the module runs in)' % (option, state_dir))
    if len(state_dir.encode('utf-8', 'surrogateescape')) >= PATH_MAX:
        raise StateError('%s: the path is %d bytes long, above the %d bytes a path may have (%r...)'
                         % (option, len(state_dir.encode('utf-8', 'surrogateescape')), PATH_MAX - 1, state_dir[:60]))
    return check_dir(state_dir)


def json_problem(value, where='data'):
    """What JSON cannot represent in ``value`` (NaN, Infinity, a key that is not a string, an object that is not
    a JSON type), as a message naming where it is; None when it is plain JSON."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return '%s is %r, which JSON cannot represent' % (where, value)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return '%s has the key %r, not a string (JSON keys are strings)' % (where, key)
            problem = json_problem(item, '%s.%s' % (where, key))
            if problem:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            problem = json_problem(item, '%s[%d]' % (where, index))
            if problem:
                return problem
        return None
    if value is None or isinstance(value, (str, bool, int, float)):
        return None
    return '%s is a %s, not a JSON value' % (where, type(value).__name__)


def _no_duplicates(pairs):
    keys = [key for key, _value in pairs]
    twice = sorted(set(key for key in keys if keys.count(key) > 1))
    if twice:
        raise ValueError('the key %s appears twice in one object' % ', '.join(repr(key) for key in twice))
    return dict(pairs)


def _no_constant(name):
    raise ValueError('%s is not a JSON number' % name)


def _bounded_int(text):
    if len(text.lstrip('-')) > MAX_DIGITS:
        raise ValueError('a number of %d digits (records hold none above %d)' % (len(text.lstrip('-')), MAX_DIGITS))
    return int(text)


def _finite_float(text):
    value = float(text)
    if math.isinf(value):
        raise ValueError('%s is out of range for a number' % text)
    return value


def loads_finite(text):
    """JSON text to an object; ValueError for NaN, Infinity and a number beyond a float's range (1e999), the
    checks of :func:`loads_strict` that cost little: what the fleet report decodes a fact cache with (a key twice in
    one object, which ansible's encoder never writes, and the digits of a number, bounded by Python's own int limit,
    are left to json; their hooks triple the decoding of a fleet's facts)."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)


def loads_strict(text):
    """JSON text to an object; ValueError for what :func:`json.loads` lets through but JSON is not (NaN, Infinity,
    a number beyond a float's range such as 1e999), a key twice in one object, and numbers of more than MAX_DIGITS
    digits."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant, parse_int=_bounded_int,
                      parse_float=_finite_float)


def check_dir(state_dir, uid=None):
    """Refuse a state directory that is a symlink, not a directory, not owned by ``uid`` (default: us) or writable
    by group or others. Returns False when it does not exist."""
    uid = os.geteuid() if uid is None else uid
    try:
        st = os.lstat(state_dir)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return False
        raise StateError('cannot look at the state directory %s: %s' % (state_dir, exc))
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise StateError('the state directory %s is a symlink or not a directory: move it aside (the collection '
                         'keeps what it made on the node there)' % state_dir)
    if st.st_uid != uid or st.st_mode & 0o022:
        raise StateError('the state directory %s is owned by uid %d with mode %04o: it must be owned by uid %d and '
                         'writable by no one else (chown/chmod it, or move it aside)'
                         % (state_dir, st.st_uid, st.st_mode & 0o7777, uid))
    return True


def ensure_dir(state_dir):
    if not os.path.isabs(state_dir):
        raise StateError('the state directory %r must be an absolute path' % (state_dir,))
    if not check_dir(state_dir):
        parent = os.path.dirname(state_dir.rstrip('/'))
        if parent and not os.path.isdir(parent):
            os.makedirs(parent, 0o755)
        try:
            os.mkdir(state_dir, 0o755)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise StateError('cannot make the state directory %s: %s' % (state_dir, exc))
        os.chmod(state_dir, 0o755)
        check_dir(state_dir)


def envelope(name, data, writer, now=None):
    return {ENVELOPE_KEY: SCHEMA_VERSION, 'name': check_name(name), 'written_at': utc_now(now),
            'writer': writer, 'data': data}


def unwrap(doc, path):
    """(data, meta) of a record document; a bare legacy document is its own data (schema 0)."""
    if isinstance(doc, dict) and ENVELOPE_KEY in doc:
        version = doc[ENVELOPE_KEY]
        if not isinstance(version, int) or version < 1:
            raise StateError('%s: %s is %r, not a schema version; fix or move the file aside'
                             % (path, ENVELOPE_KEY, version))
        if version > SCHEMA_VERSION:
            raise StateError('%s was written by a newer version of the collection (record schema %d, this one reads '
                             'up to %d): upgrade the collection on the controller' % (path, version, SCHEMA_VERSION))
        if 'data' not in doc:
            raise StateError('%s has no data; fix or move the file aside' % path)
        return doc['data'], {'schema': version, 'written_at': doc.get('written_at'), 'writer': doc.get('writer')}
    return doc, {'schema': 0, 'written_at': None, 'writer': None}


def _read_file(path):
    """The text of a regular file, never through a symlink; None when absent."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, 'O_NONBLOCK', 0))
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        if exc.errno == errno.ELOOP:
            raise StateError('%s is a symlink: the state store never reads through one; move it aside' % path)
        raise StateError('cannot read %s: %s' % (path, exc))
    with os.fdopen(fd, 'rb') as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise StateError('%s is not a regular file; move it aside' % path)
        data = handle.read()
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise StateError('%s is not UTF-8 text (byte 0x%02x at offset %d); fix or move it aside'
                         % (path, bytearray(data[exc.start:exc.start + 1])[0], exc.start))


def read_record(state_dir, name, with_meta=False):
    """The data of record ``name`` (None when there is none); with_meta: (data, meta)."""
    path = record_path(state_dir, name)
    text = _read_file(path)
    if text is None:
        return (None, None) if with_meta else None
    try:
        doc = loads_strict(text)
    except ValueError as exc:
        raise StateError('%s is not valid JSON (%s); fix or move it aside' % (path, exc))
    data, meta = unwrap(doc, path)
    return (data, meta) if with_meta else data


def read_all(state_dir):
    """Every record of the directory: {dir, exists, records: {name: data}, meta: {name: meta}, errors: [...]}."""
    out = {'dir': state_dir, 'exists': False, 'schema_version': SCHEMA_VERSION, 'records': {}, 'meta': {},
           'errors': []}
    try:
        if not check_dir(state_dir):
            return out
        names = sorted(os.listdir(state_dir))
    except (StateError, OSError) as exc:
        out['errors'].append(str(exc))
        return out
    out['exists'] = True
    for entry in names:
        name = entry[:-5] if entry.endswith('.json') else None
        if not name or not NAME_RE.match(name):
            continue
        try:
            data, meta = read_record(state_dir, name, with_meta=True)
        except StateError as exc:
            out['errors'].append(str(exc))
            continue
        out['records'][name] = data
        out['meta'][name] = meta
    return out


@contextmanager
def locked(state_dir, timeout=60.0, sleep=time.sleep, clock=time.monotonic):
    """Exclusive flock on ``<state_dir>/.lock`` for one read-modify-write (seconds, never a whole run)."""
    ensure_dir(state_dir)
    path = os.path.join(state_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise StateError('cannot open the lock file %s: %s' % (path, exc))
    try:
        deadline = clock() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except (IOError, OSError) as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise StateError('cannot lock %s: %s' % (path, exc))
                if clock() >= deadline:
                    raise StateError('%s stayed locked by another writer for %.0f s; a collection module on this '
                                     'node is stuck (look for it with: fuser -v %s)' % (path, timeout, path))
                sleep(0.2)
        yield
    finally:
        os.close(fd)


def update(state_dir, name, change, writer, now=None):
    """Apply ``change(data or None) -> new data or None`` to record ``name`` under the lock.

    None removes the record. Returns (changed, before, after). A record whose data does not change is not
    rewritten (its written_at stays).
    """
    check_name(name)
    if check_dir(state_dir):
        read_record(state_dir, name)  # a damaged record is refused before the lock file is made
    with locked(state_dir):
        before = read_record(state_dir, name)
        after = change(copy.deepcopy(before))
        if after == before:
            return False, before, before
        path = record_path(state_dir, name)
        if after is None:
            os.unlink(path)
        else:
            problem = json_problem(after)
            if problem:
                raise StateError('record %s: %s; nothing was written' % (name, problem))
            write_json_atomic(path, envelope(name, after, writer, now), mode=0o644)
        return True, before, after


def write_record(state_dir, name, data, writer, keep=False, now=None):
    """Set record ``name`` to ``data``; keep=True keeps an existing record (first write wins)."""
    return update(state_dir, name, lambda old: old if keep and old is not None else data, writer, now)


def remove_record(state_dir, name):
    return update(state_dir, name, lambda old: None, writer=None)


# --- the run lease ------------------------------------------------------------------------------------------------

def lease_holder(state_dir, now=None):
    """The live run lease of the node, or None (absent or expired)."""
    now = time.time() if now is None else now
    lease = read_record(state_dir, RUN_LEASE) if check_dir(state_dir) else None
    if not isinstance(lease, dict) or lease.get('expires', 0) <= now:
        return None
    return lease


def describe_lease(lease, now=None):
    now = time.time() if now is None else now
    return ('run %s (%s on controller %s, pid %s, playbook %s) since %s, lease until %s (%d s left)'
            % (lease.get('run_id'), lease.get('user'), lease.get('controller'), lease.get('controller_pid'),
               lease.get('playbook'), utc_now(lease.get('acquired', now)), utc_now(lease.get('expires', now)),
               max(0, int(lease.get('expires', now) - now))))


def held_message(lease, now=None):
    """What a run refused by ``lease`` is told: who holds the node and the two ways on."""
    return ('another checkpoint_io run holds this node: %s. Wait for it to finish (or set checkpoint_io_lock_wait '
            'to wait up to that many seconds); if that run is dead, run again with checkpoint_io_lock_take_over=%s'
            % (describe_lease(lease, now), lease.get('run_id')))


def acquire_run(state_dir, owner, ttl, wait=0.0, take_over=None, now=time.time, sleep=time.sleep):
    """Take the node's run lease for ``owner`` ({run_id, controller, controller_pid, user, playbook}).

    The same run_id renews it. Another live lease: wait up to ``wait`` seconds for it to end, then StateError naming
    its holder. ``take_over``: the run_id of a lease known dead (its controller process is gone), taken at once.
    Returns (changed, lease, previous holder or None).
    """
    deadline = now() + wait
    waited = None
    while True:
        start = now()

        def take(old):
            if isinstance(old, dict) and old.get('expires', 0) > start and old.get('run_id') != owner['run_id'] \
                    and old.get('run_id') != take_over:
                raise _Held(old)
            acquired = old['acquired'] if isinstance(old, dict) and old.get('run_id') == owner['run_id'] else start
            return dict(owner, acquired=acquired, expires=start + ttl)
        try:
            changed, before, after = update(state_dir, RUN_LEASE, take, writer='checkpoint_io_lock')
            return changed, after, waited or (before if before and before.get('run_id') != owner['run_id'] else None)
        except _Held as held:
            waited = held.lease
            if now() >= deadline:
                raise StateError(held_message(held.lease, start))
            sleep(min(5.0, max(0.1, deadline - now())))


def release_run(state_dir, run_id):
    """Give the lease back if ``run_id`` holds it; (changed, lease as it was)."""
    if not check_dir(state_dir):
        return False, None
    changed, before = update(state_dir, RUN_LEASE,
                             lambda old: None if isinstance(old, dict) and old.get('run_id') == run_id else old,
                             writer='checkpoint_io_lock')[:2]
    return changed, before


class _Held(Exception):
    def __init__(self, lease):
        Exception.__init__(self, 'held')
        self.lease = lease
