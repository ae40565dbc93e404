# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A checkpoint written and read back by DeepSpeed itself: FastPersist's FastFileWriter, one process per rank.

Not imported by the modules: the fastpersist_write module runs this file's source as a script with the training
environment's Python (which has torch and DeepSpeed; the controller's and Ansible's Python need neither), and
``tests/bench/ds_fastpersist.py`` runs :func:`run` by hand. Only the standard library is imported at the top.

Input (JSON, in the file named by the first argument, else on stdin): ``files`` (one path per rank, in a
directory the caller made and only root can write: the module
gives ``/proc/<its pid>/fd/<N>/rank_<r>.pt`` of its own run directories), ``bytes_per_rank``, ``aio`` and
``writer`` (partial sections, completed by DeepSpeed's own parsers exactly as a ds_config's are), ``read_back``,
``repeats`` (runs in the same processes, 1 to 20: start-up paid once; each run truncates and writes the file
again), optional ``path`` (``fast_file_writer`` | ``checkpoint_writer_factory``), ``read_buffer_size``,
``torch_extensions_dir``. stdout: one JSON object (everything DeepSpeed, ninja and the C++ ops print goes to stderr).
Exit status: 0 ok, 1 a rank failed (the JSON says which and why), 2 bad input, 3 DeepSpeed or its async_io op
unusable here.

What each rank does: a state dict of ``bytes_per_rank`` bytes saved with ``torch.save`` through FastFileWriter
(the aio handle's block size and queue depth; the writer's pinned buffer, halved when double-buffered), closed,
fsynced (the write's time ends when the data is on media), its pages dropped from the page cache
(``posix_fadvise`` DONTNEED on the file: the node's other cached files keep theirs); once every rank has written,
each reads its file back with the aio handle (O_DIRECT; the unaligned tail with a plain read) and, after the first
run, checks the bytes (CRC against a plain read) and the tensors (``torch.load``), untimed (the later runs save the
same state dict: the check would read each file twice more). The ranks start together (a barrier).

DeepSpeed 0.19.8 on a host without an accelerator (docs/deepspeed-fastpersist.md): the CPU accelerator has no utils
op, DeepSpeed's generic ``UtilsBuilder`` is used in its place; the ds_config path (``CheckpointWriterFactory``) needs
``Tensor.pin_memory()`` (an accelerator), so there the buffer comes from the aio handle's own allocator (``mlock``:
the locked-memory limit must cover it, checked first: a failed ``mlock`` is a C++ abort).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import threading
import time
import zlib

GIB = float(1 << 30)
EXIT_RANK, EXIT_INPUT, EXIT_DEEPSPEED = 1, 2, 3
PATHS = ('fast_file_writer', 'checkpoint_writer_factory')
MAX_REPEATS = 20


class Unusable(Exception):
    """DeepSpeed or its async_io op cannot run here (exit status 3)."""


def load_ops():
    """Load (JIT-build on first use) async_io and the utils op FastFileWriter needs: (aio op, seconds, accelerator)."""
    from deepspeed.accelerator import get_accelerator
    from deepspeed.ops.op_builder import AsyncIOBuilder
    import deepspeed.io.fast_file_writer as ffw
    times = {}
    start = time.time()
    try:  # a pre-built op (DS_BUILD_AIO=1) loads directly; otherwise JIT (is_compatible + ninja + c++)
        aio = AsyncIOBuilder().load()
    except Exception as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if 'compatible' in msg:
            msg = msg.replace(' None', '') + ' (needs libaio-dev: libaio.h + libaio.so with io_submit, a C++ compiler)'
        raise Unusable('async_io: ' + msg)
    times['async_io_s'] = round(time.time() - start, 3)
    start = time.time()
    try:
        ffw.UtilsBuilder().load()
    except ValueError:
        # The CPU accelerator maps UtilsBuilder to NotImplementedBuilder ("not implemented on CPU backend");
        # the generic OpBuilder version builds fine, so FastFileWriter is handed that one.
        from deepspeed.ops.op_builder.utils import UtilsBuilder
        ffw.UtilsBuilder = UtilsBuilder
        ffw.UtilsBuilder().load()
    times['utils_s'] = round(time.time() - start, 3)
    return aio, times, get_accelerator().device_name()


def resolve_config(cfg):
    """(aio, writer, notes) as DeepSpeed's own parsers make them from the partial sections given."""
    from deepspeed.runtime.swap_tensor.aio_config import get_aio_config
    from deepspeed.runtime.model_checkpointing.config import get_checkpoint_config
    notes = []
    if cfg.get('ds_config'):
        with open(cfg['ds_config']) as handle:
            params = json.load(handle)
    else:
        params = {'aio': cfg.get('aio') or {}, 'checkpoint': {'writer': cfg.get('writer') or {}}}
    aio = dict(get_aio_config(params))
    checkpoint = get_checkpoint_config(params)
    writer = checkpoint.get('writer')
    if writer is None:
        notes.append('the ds_config has no checkpoint.writer (DeepSpeed would not use FastPersist); the writer\'s '
                     'defaults are used')
        writer = get_checkpoint_config({'checkpoint': {'writer': {}}})['writer']
    elif writer['type'] != 'FAST':
        notes.append('checkpoint.writer.type is %s (not FastPersist); FAST is measured' % writer['type'])
    writer = dict(writer, io_buffer_size=int(writer['io_buffer_size']))  # the docs' example is 64e6, a float
    writer['checkpoint_serialization'] = bool(checkpoint.get('checkpoint_serialization', True))
    if aio.get('use_gds'):
        notes.append('use_gds ignored: the CPU aio handle writes')
    return aio, writer, notes


def buffer_errors(aio, writer):
    """The writer's buffer must be a positive multiple of the handle's alignment or DeepSpeed stops the save with a
    bare AssertionError."""
    halves = 2 if writer['io_buffer_double'] else 1
    align = halves * 512 * aio['intra_op_parallelism']
    if writer['io_buffer_size'] <= 0 or writer['io_buffer_size'] % align:
        return ['writer.io_buffer_size %s is not a positive multiple of %d (%d x 512 x intra_op_parallelism %d)'
                % (writer['io_buffer_size'], align, halves, aio['intra_op_parallelism'])]
    return []


def make_state_dict(torch, nbytes, rank):
    """About ``nbytes`` of int32 data in 4 tensors (arange: cheap and not all zeros) and a uint8 remainder."""
    count = nbytes // 4
    sizes = [count // 4] * 3 + [count - 3 * (count // 4)]
    state = dict(('t%d' % k, torch.arange(s, dtype=torch.int32).add_(rank * 7919 + k)) for k, s in enumerate(sizes))
    if nbytes % 4:
        state['tail'] = torch.full((nbytes % 4,), 0x5A + rank, dtype=torch.uint8)
    return state


def o_direct_problem(directory):
    """Why O_DIRECT cannot write in ``directory`` (one page-aligned 4 KiB write of a probe file), or None."""
    import mmap
    name = os.path.join(directory, '.odirect_probe')
    try:
        fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_DIRECT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return 'open(O_DIRECT): %s' % exc.strerror
    try:
        buf = mmap.mmap(-1, 4096)
        buf.write(b'\x01' * 4096)
        os.write(fd, buf)
        return None
    except OSError as exc:
        return 'write(O_DIRECT): %s' % exc.strerror
    finally:
        os.close(fd)
        os.unlink(name)


def check_memlock(nbytes):
    """A failed mlock inside DeepSpeed's allocator is a C++ abort: refuse clearly first (raising the soft limit to
    the hard one where that is enough)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    unlimited = resource.RLIM_INFINITY
    if soft == unlimited or soft >= nbytes:
        return
    if hard == unlimited or hard >= nbytes:
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (hard, hard))
        return
    with open('/proc/self/status') as handle:  # CAP_IPC_LOCK (bit 14) bypasses RLIMIT_MEMLOCK
        cap_eff = int([line for line in handle if line.startswith('CapEff:')][0].split()[1], 16)
    if not (cap_eff >> 14) & 1:
        raise RuntimeError('needs %d bytes of locked memory, RLIMIT_MEMLOCK is %d (raise ulimit -l or LimitMEMLOCK)'
                           % (nbytes, soft))


def _writer_calls(job, rank, path, aio, handle, handles, torch):
    """(open_writer, close_writer) of the path asked: the ds_config's factory, or FastFileWriter on a locked
    buffer from the aio handle."""
    writer = job['writer']
    if job['path'] == 'checkpoint_writer_factory':
        # What FastCheckpointEngine does on an accelerator node (its buffer from Tensor.pin_memory()).
        from deepspeed.runtime.model_checkpointing.writer_factory import CheckpointWriterFactory
        from deepspeed.runtime.model_checkpointing.data_parallel_writer_factory import DataParallelWriterConfig
        import dataclasses  # its fields differ across releases (0.19.8 adds local_rank, pure_dp)
        given = dict(world_size=job['ranks'], rank=rank, global_rank=rank, local_rank=rank, pure_dp=True)
        dp_config = DataParallelWriterConfig(**dict((f.name, given[f.name])
                                                    for f in dataclasses.fields(DataParallelWriterConfig)))
        factory = CheckpointWriterFactory(dict(writer, type='FAST'), dict(aio, use_gds=False), dp_config)
        return (lambda: factory.create_writer(path, optimize_dp_state=False)), (lambda _w: factory.release_writer())
    from deepspeed.io import FastFileWriter, FastFileWriterConfig
    pinned = handle.new_cpu_locked_tensor(writer['io_buffer_size'], torch.empty(0, dtype=torch.uint8))
    handles.append((handle, pinned))
    config = FastFileWriterConfig(dnvme_handle=handle, pinned_tensor=pinned, double_buffer=writer['io_buffer_double'],
                                  num_parallel_writers=1, writer_rank=0, global_rank=rank)
    return (lambda: FastFileWriter(path, config)), (lambda w: w.close())


def _read_buffer(job, size, handle, handles, torch):
    """The locked buffer a rank reads its file back into (allocated once per rank, whatever the repeats)."""
    align = 4096 * job['aio']['intra_op_parallelism']
    aligned = size - size % align
    chunk = max(align, min(job['read_buffer_size'], aligned) // align * align)
    rbuf = handle.new_cpu_locked_tensor(chunk, torch.empty(0, dtype=torch.uint8))
    handles.append((handle, rbuf))
    return rbuf


def _read_back(job, path, size, handle, rbuf, torch, state, check):
    """The restore read of one rank's file: (seconds, crc matches a plain read, torch.load gives the tensors);
    ``check`` false (the later runs, which save the same state dict again): the read timed, nothing compared
    (None, None) - the comparison reads the file twice more."""
    # O_DIRECT reads need offset, length and address aligned to the logical block size (4096 covers 4Kn drives);
    # each of the intra_op threads reads length / intra_op_parallelism bytes.
    align = 4096 * job['aio']['intra_op_parallelism']
    aligned = size - size % align
    chunk = rbuf.numel()
    crc, seconds, offset = 0, 0.0, 0
    while offset < aligned:
        count = min(chunk, aligned - offset)
        view = rbuf.narrow(0, 0, count)
        start = time.perf_counter()
        rc = handle.sync_pread(view, path, offset)  # the count of completed ops, -1 on an error
        seconds += time.perf_counter() - start
        if rc < 0:
            raise RuntimeError('aio sync_pread failed at offset %d (rc=%d)' % (offset, rc))
        if check:
            crc = zlib.crc32(view.numpy(), crc)  # untimed
        offset += count
    if size > aligned:  # the tail cannot be read with O_DIRECT
        start = time.perf_counter()
        fd = os.open(path, os.O_RDONLY)
        try:
            tail = os.pread(fd, size - aligned, aligned)
        finally:
            os.close(fd)
        seconds += time.perf_counter() - start
        crc = zlib.crc32(tail, crc)
    if not check:
        return seconds, None, None
    plain = 0
    with open(path, 'rb') as handle_file:  # in pieces: the file is the size of a rank's shard
        for piece in iter(lambda: handle_file.read(64 << 20), b''):
            plain = zlib.crc32(piece, plain)
    crc_ok = crc == plain
    back = torch.load(path, map_location='cpu', weights_only=True)
    load_ok = back.keys() == state.keys() and all(torch.equal(back[k], state[k]) for k in state)
    return seconds, crc_ok, load_ok


def rank_main(rank, job, barrier, queue):
    """One rank's process: write its file, wait for the others, read it back; its result on ``queue``."""
    res = {'rank': rank, 'file': job['files'][rank]}
    handles = []
    try:
        import torch
        aio_op = load_ops()[0]  # built by the parent: a cached load
        path, aio = job['files'][rank], job['aio']
        handle = aio_op.aio_handle(block_size=aio['block_size'], queue_depth=aio['queue_depth'],
                                   single_submit=aio['single_submit'], overlap_events=aio['overlap_events'],
                                   intra_op_parallelism=aio['intra_op_parallelism'])
        check_memlock(job['writer']['io_buffer_size'] + job['read_buffer_size'] + (1 << 20))
        state = make_state_dict(torch, job['bytes_per_rank'], rank)
        res['payload_bytes'] = sum(t.numel() * t.element_size() for t in state.values())
        open_writer, close_writer = _writer_calls(job, rank, path, aio, handle, handles, torch)
        res['runs'] = []
        rbuf = None
        for repeat in range(job['repeats']):
            if repeat:
                os.truncate(path, 0)  # a new checkpoint each time: its blocks allocated again, as a save's are
            run = {}
            barrier.wait()  # every rank and the parent: start together
            start = time.perf_counter()
            writer = open_writer()
            torch.save(state, f=writer, _use_new_zipfile_serialization=job['writer']['checkpoint_serialization'])
            close_writer(writer)  # drains the buffer, writes the unaligned tail with buffered I/O
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
                run['write_s'] = time.perf_counter() - start
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # this file's pages only
            finally:
                os.close(fd)
            run['bytes'] = os.stat(path).st_size
            stats = getattr(writer, '_stats', None) or {}
            run['writer_stats'] = dict((k, stats.get(k)) for k in (
                'aio_bytes', 'slow_bytes', 'write', 'write_secs', 'aio_write_secs', 'fill_buffer_secs'))
            del writer
            barrier.wait()  # every rank has written: the reads do not overlap a write
            if job['read_back']:
                rbuf = rbuf if rbuf is not None else _read_buffer(job, run['bytes'], handle, handles, torch)
                # the bytes and tensors compared after the first run (the later ones save the same state dict)
                run['read_s'], run['read_crc_ok'], run['load_ok'] = _read_back(
                    job, path, run['bytes'], handle, rbuf, torch, state, check=repeat == 0)
            res['runs'].append(run)
            res.update(run)  # the rank's last run at its top level
    except BaseException as exc:  # reported, never hangs the others
        res['error'] = '%s: %s' % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else '')
        barrier.abort()
    finally:
        for owner, tensor in handles:
            owner.free_cpu_locked_tensor(tensor)
        queue.put(res)


def _wait_all(barrier, procs):
    """The parent's barrier wait; a rank process that died (a C++ abort) breaks the barrier for all."""
    out = {}

    def wait():
        try:
            out['ok'] = barrier.wait() is not None
        except threading.BrokenBarrierError:
            out['ok'] = False
    thread = threading.Thread(target=wait)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
        if any(p.exitcode not in (None, 0) for p in procs):
            barrier.abort()
    return out.get('ok', False)


def check_input(cfg):
    """The job from the input document; ValueError naming what is wrong."""
    if not isinstance(cfg, dict):
        raise ValueError('the input is not a JSON object')
    files = cfg.get('files')
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and f.startswith('/') for f in files):
        raise ValueError('files: %r is not a non-empty list of absolute paths' % (files,))
    nbytes = cfg.get('bytes_per_rank')
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
        raise ValueError('bytes_per_rank: %r is not a positive integer' % (nbytes,))
    path = cfg.get('path')
    if path not in (None,) + PATHS:
        raise ValueError('path: %r is not one of %s' % (path, ', '.join(PATHS)))
    read_buffer = cfg.get('read_buffer_size', 256 << 20)
    if isinstance(read_buffer, bool) or not isinstance(read_buffer, int) or read_buffer < 4096:
        raise ValueError('read_buffer_size: %r is not an integer of at least 4096' % (read_buffer,))
    repeats = cfg.get('repeats', 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= MAX_REPEATS:
        raise ValueError('repeats: %r is not an integer from 1 to %d' % (repeats, MAX_REPEATS))
    return {'files': files, 'ranks': len(files), 'bytes_per_rank': nbytes, 'path': path,
            'read_back': bool(cfg.get('read_back', True)), 'read_buffer_size': read_buffer, 'repeats': repeats}


def run(cfg):
    """(exit status, result) of one checkpoint written by every rank at once (and read back)."""
    try:
        job = check_input(cfg)
    except ValueError as exc:
        return EXIT_INPUT, {'errors': ['bad input: %s' % exc]}
    if cfg.get('torch_extensions_dir'):
        os.environ['TORCH_EXTENSIONS_DIR'] = cfg['torch_extensions_dir']
    try:
        import torch
        import deepspeed
    except Exception as exc:  # ImportError and what a broken install raises
        return EXIT_DEEPSPEED, {'errors': ['cannot import torch and deepspeed: %s' % str(exc).splitlines()[0]]}
    try:
        aio, writer, notes = resolve_config(cfg)
    except (OSError, ValueError, AssertionError, KeyError) as exc:
        return EXIT_INPUT, {'errors': ['the aio or writer section is refused by DeepSpeed: %s' % exc]}
    errors = buffer_errors(aio, writer)
    if errors:
        return EXIT_INPUT, {'aio': aio, 'writer': writer, 'errors': errors}
    try:
        op_load, accelerator = load_ops()[1:]
    except Unusable as exc:
        return EXIT_DEEPSPEED, {'errors': ['DeepSpeed\'s async_io op is unusable: %s' % exc]}
    default_path = 'fast_file_writer' if accelerator == 'cpu' else 'checkpoint_writer_factory'
    job.update(aio=aio, writer=writer, path=job['path'] or default_path)
    result = {'deepspeed_version': deepspeed.__version__, 'torch_version': torch.__version__,
              'accelerator': accelerator, 'path': job['path'], 'aio': aio, 'writer': writer, 'ranks': job['ranks'],
              'op_load': op_load, 'notes': notes, 'errors': []}
    for directory in sorted(set(os.path.dirname(f) for f in job['files'])):
        problem = o_direct_problem(directory)
        if problem:
            result['errors'].append('O_DIRECT does not work in %s (%s): FastFileWriter needs it' % (directory, problem))
            return EXIT_RANK, result
    import multiprocessing
    ctx = multiprocessing.get_context('spawn')
    barrier, queue = ctx.Barrier(job['ranks'] + 1), ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(rank, job, barrier, queue)) for rank in range(job['ranks'])]
    for proc in procs:
        proc.start()
    for _repeat in range(job['repeats']):  # each run: the start, then every write done
        if not (_wait_all(barrier, procs) and _wait_all(barrier, procs)):
            break
    per_rank = []
    for rank, proc in enumerate(procs):  # collected before the join (the queue's feeder); a dead rank tolerated
        while proc.is_alive() or not queue.empty():
            try:
                per_rank.append(queue.get(timeout=0.5))
            except Exception:  # queue.Empty: look again
                pass
        proc.join()
        if proc.exitcode:
            result['errors'].append('rank %d: its process exited with %s' % (rank, proc.exitcode))
    per_rank.sort(key=lambda r: r['rank'])
    result['per_rank'] = per_rank
    result['errors'] += ['rank %d: %s' % (r['rank'], r['error']) for r in per_rank if 'error' in r]
    result['errors'] += ['rank %d: what was read back is not what was written' % r['rank'] for r in per_rank
                         if any(run.get('load_ok') is False or run.get('read_crc_ok') is False
                                for run in r.get('runs') or [r])]
    if len(per_rank) == job['ranks'] and not result['errors'] and \
            all(len(r.get('runs') or []) == job['repeats'] for r in per_rank):
        result['runs'] = []
        for index in range(job['repeats']):  # MLPerf Storage's rule per run: the slowest rank's time
            runs = [r['runs'][index] for r in per_rank]
            nbytes = sum(r['bytes'] for r in runs)
            run = {'total_bytes': nbytes, 'write_s': max(r['write_s'] for r in runs),
                   'write_gib_s': nbytes / GIB / max(r['write_s'] for r in runs)}
            if job['read_back']:
                run.update(read_s=max(r['read_s'] for r in runs), read_gib_s=nbytes / GIB / max(r['read_s'] for r in runs))
            result['runs'].append(run)
        result.update(result['runs'][-1])  # the last run at the top level
        result['total_payload_bytes'] = sum(r['payload_bytes'] for r in per_rank)
    return (EXIT_RANK if result['errors'] else 0), result


def main():
    out = os.fdopen(os.dup(1), 'w')  # the real stdout, for the JSON only
    os.dup2(2, 1)  # everything else (DeepSpeed's logs, ninja, the C++ ops) to stderr; the ranks inherit it
    try:
        if len(sys.argv) > 1:  # the input in a file (the module's run directory), else on stdin
            with open(sys.argv[1]) as handle:
                cfg = json.load(handle)
        else:
            cfg = json.loads(sys.stdin.read())
    except ValueError as exc:
        code, result = EXIT_INPUT, {'errors': ['bad input: not JSON: %s' % exc]}
    else:
        code, result = run(cfg)
    out.write(json.dumps(result, sort_keys=True, default=str) + '\n')
    out.flush()
    return code


if __name__ == '__main__':
    raise SystemExit(main())  # a script the training Python runs, not a module
