# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkpoint write/read bandwidth with DeepSpeed FastPersist (deepspeed.io.FastFileWriter), N ranks at once.

The groundwork of the verification's DeepSpeed engine and of the side-by-side with ds_nvme_tune
(docs/deepspeed-fastpersist.md): run by hand with the training environment's Python, e.g.
    TORCH_EXTENSIONS_DIR=/var/cache/ds_ops python tests/bench/ds_fastpersist.py < run.json

stdin: {"directories": [...], "ranks": N, "total_bytes": B, "aio": {block_size, queue_depth,
  intra_op_parallelism, single_submit, overlap_events}, "writer": {io_buffer_size, io_buffer_double},
  "read_back": bool, "drop_caches": bool, "label": str}; or "ds_config": path instead of aio/writer.
  Optional: "path" (fast_file_writer | checkpoint_writer_factory), "read_buffer_size" (256 MiB),
  "torch_extensions_dir". Missing values get DeepSpeed's defaults via DeepSpeed's own parsers.
stdout: one JSON object. Everything DeepSpeed/ninja/the C++ ops print goes to stderr (fd 1 redirected).
Exit: 0 ok, 1 a rank failed (JSON still printed), 2 bad input, 3 DeepSpeed/async_io unusable.
Python 3.9+, only torch + deepspeed (async_io is JIT-built: needs libaio-dev, ninja, a C++ compiler).
"""
import json
import multiprocessing as mp
import os
import secrets
import sys
import threading
import time
import zlib

GIB = float(1 << 30)


def die(code, msg):
    sys.stderr.write("ds_fastpersist: %s\n" % msg)
    sys.exit(code)


def load_ops():
    """Load (JIT-build on first use) async_io (+pin_memory) and the utils op FastFileWriter needs."""
    from deepspeed.accelerator import get_accelerator
    from deepspeed.ops.op_builder import AsyncIOBuilder
    import deepspeed.io.fast_file_writer as ffw
    times = {}
    t = time.time()
    try:  # a pre-built op (DS_BUILD_AIO=1) loads directly; otherwise JIT (is_compatible + ninja + c++)
        aio = AsyncIOBuilder().load()
    except Exception as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        if "compatible" in msg:
            msg = msg.replace(" None", "") + " (needs libaio-dev: libaio.h + libaio.so with io_submit, a C++ compiler)"
        raise RuntimeError("async_io: " + msg)
    times["async_io_s"] = round(time.time() - t, 3)
    t = time.time()
    try:
        ffw.UtilsBuilder().load()
    except ValueError:
        # CPU accelerator maps UtilsBuilder to NotImplementedBuilder ("not implemented on CPU backend");
        # the generic OpBuilder version builds fine, so hand that one to FastFileWriter.
        from deepspeed.ops.op_builder.utils import UtilsBuilder
        ffw.UtilsBuilder = UtilsBuilder
        ffw.UtilsBuilder().load()
    times["utils_s"] = round(time.time() - t, 3)
    return aio, times, get_accelerator().device_name()


def resolve_config(cfg):
    """Return (aio, writer, notes) exactly as DeepSpeed's own parsers would produce them."""
    from deepspeed.runtime.swap_tensor.aio_config import get_aio_config
    from deepspeed.runtime.model_checkpointing.config import get_checkpoint_config
    notes = []
    if cfg.get("ds_config"):
        with open(cfg["ds_config"]) as f:
            params = json.load(f)
    else:
        params = {"aio": cfg.get("aio") or {}, "checkpoint": {"writer": cfg.get("writer") or {}}}
    aio = dict(get_aio_config(params))
    ck = get_checkpoint_config(params)
    writer = ck.get("writer")
    if writer is None:
        notes.append("ds_config has no checkpoint.writer (DeepSpeed would not use FastPersist); using writer defaults")
        writer = get_checkpoint_config({"checkpoint": {"writer": {}}})["writer"]
    elif writer["type"] != "FAST":
        notes.append("checkpoint.writer.type is %s (not FastPersist); benchmarking FAST anyway" % writer["type"])
    writer = dict(writer, io_buffer_size=int(writer["io_buffer_size"]))  # doc example is 64e6 (a float)
    writer["checkpoint_serialization"] = bool(ck.get("checkpoint_serialization", True))
    if aio.get("use_gds"):
        notes.append("use_gds ignored: this benchmark uses the CPU aio handle")
    return aio, writer, notes


def make_state_dict(torch, nbytes, rank):
    """~nbytes of int32 data in 4 tensors (arange: cheap and not all zeros) + a uint8 remainder."""
    n = nbytes // 4
    sizes = [n // 4] * 3 + [n - 3 * (n // 4)]
    sd = {"t%d" % k: torch.arange(s, dtype=torch.int32).add_(rank * 7919 + k) for k, s in enumerate(sizes)}
    if nbytes % 4:
        sd["tail"] = torch.full((nbytes % 4,), 0x5A + rank, dtype=torch.uint8)
    return sd


def o_direct_ok(dir_fd):
    """Probe O_DIRECT with one page-aligned 4 KiB write in our private run directory."""
    import mmap
    name = ".odirect_probe"
    try:
        fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_DIRECT | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    except OSError as e:
        return False, "open(O_DIRECT): %s" % e.strerror
    try:
        buf = mmap.mmap(-1, 4096)  # page aligned
        buf.write(b"\x01" * 4096)
        os.write(fd, buf)
        return True, None
    except OSError as e:
        return False, "write(O_DIRECT): %s" % e.strerror
    finally:
        os.close(fd)
        os.unlink(name, dir_fd=dir_fd)


def check_memlock(nbytes):
    """mlock() failure inside DeepSpeed's allocator is a C++ assert (SIGABRT); fail clearly instead."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    inf = resource.RLIM_INFINITY
    if soft == inf or soft >= nbytes:
        return
    if hard == inf or hard >= nbytes:
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (hard if hard != inf else inf, hard))
        return
    with open("/proc/self/status") as f:  # CAP_IPC_LOCK (bit 14) bypasses RLIMIT_MEMLOCK
        cap_eff = int([ln for ln in f if ln.startswith("CapEff:")][0].split()[1], 16)
    if not (cap_eff >> 14) & 1:
        raise RuntimeError("need %d bytes of locked memory but RLIMIT_MEMLOCK is %d (raise ulimit -l / LimitMEMLOCK)"
                           % (nbytes, soft))


def rank_main(rank, job, barrier, queue):
    res = {"rank": rank, "directory": job["dirs"][rank % len(job["dirs"])]}
    handles = []
    try:
        import torch
        aio_op = load_ops()[0]  # cached .so by now
        dname, dev_ino = job["rundirs"][res["directory"]]
        # Re-open our run directory without following symlinks and check it is the one the parent made;
        # then address files through /proc/self/fd so a swapped path component cannot redirect I/O.
        dfd = os.open(os.path.join(res["directory"], dname), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        st = os.fstat(dfd)
        if (st.st_dev, st.st_ino) != tuple(dev_ino):
            raise RuntimeError("run directory changed under us")
        fname = "rank%05d.pt" % rank
        res["file"] = os.path.join(res["directory"], dname, fname)
        path = "/proc/self/fd/%d/%s" % (dfd, fname) if os.path.isdir("/proc/self/fd") else res["file"]
        a, w = job["aio"], job["writer"]
        handle = aio_op.aio_handle(block_size=a["block_size"], queue_depth=a["queue_depth"],
                                   single_submit=a["single_submit"], overlap_events=a["overlap_events"],
                                   intra_op_parallelism=a["intra_op_parallelism"])
        check_memlock(w["io_buffer_size"] + job["read_buffer_size"] + (1 << 20))
        sd = make_state_dict(torch, job["bytes_per_rank"], rank)
        res["payload_bytes"] = sum(t.numel() * t.element_size() for t in sd.values())

        if job["path"] == "checkpoint_writer_factory":
            # What FastCheckpointEngine does on an accelerator node (buffer from Tensor.pin_memory()).
            from deepspeed.runtime.model_checkpointing.writer_factory import CheckpointWriterFactory
            from deepspeed.runtime.model_checkpointing.data_parallel_writer_factory import DataParallelWriterConfig
            import dataclasses  # its fields differ across releases (0.19.8 adds local_rank, pure_dp)
            kw = dict(world_size=job["ranks"], rank=rank, global_rank=rank, local_rank=rank, pure_dp=True)
            dp = DataParallelWriterConfig(**{f.name: kw[f.name] for f in dataclasses.fields(DataParallelWriterConfig)})
            factory = CheckpointWriterFactory(dict(w, type="FAST"), dict(a, use_gds=False), dp)

            def open_writer():
                return factory.create_writer(path, optimize_dp_state=False)

            def close_writer(unused):
                factory.release_writer()
        else:
            from deepspeed.io import FastFileWriter, FastFileWriterConfig
            # CPU host: page-locked buffer from the aio handle's own allocator (mlock), not pin_memory().
            pinned = handle.new_cpu_locked_tensor(w["io_buffer_size"], torch.empty(0, dtype=torch.uint8))
            handles.append((handle, pinned))
            wcfg = FastFileWriterConfig(dnvme_handle=handle, pinned_tensor=pinned, double_buffer=w["io_buffer_double"],
                                        num_parallel_writers=1, writer_rank=0, global_rank=rank)

            def open_writer():
                return FastFileWriter(path, wcfg)

            def close_writer(writer):
                writer.close()

        barrier.wait()  # all ranks + parent: start writing together
        t0 = time.perf_counter()
        writer = open_writer()
        torch.save(sd, f=writer, _use_new_zipfile_serialization=w["checkpoint_serialization"])
        close_writer(writer)  # drains the double buffer, writes the unaligned tail with buffered I/O, fsyncs
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        os.fsync(dfd)  # the new directory entry
        res["write_s"] = time.perf_counter() - t0
        res["bytes"] = os.stat(path).st_size
        res["writer_stats"] = {k: writer._stats.get(k) for k in  # slow_bytes: unaligned tail, buffered write
                               ("aio_bytes", "slow_bytes", "write", "write_secs", "aio_write_secs", "fill_buffer_secs")}
        del writer
        barrier.wait()  # writes done; parent syncs / drops caches
        barrier.wait()  # parent done

        if job["read_back"]:
            # O_DIRECT reads need offset/length/address aligned to the device's logical block size
            # (4096 covers 4Kn drives); each of the intra_op threads gets length/intra_op bytes.
            align = 4096 * a["intra_op_parallelism"]
            size = res["bytes"]
            aligned = size - size % align
            chunk = max(align, min(job["read_buffer_size"], aligned) // align * align)
            rbuf = handle.new_cpu_locked_tensor(chunk, torch.empty(0, dtype=torch.uint8))
            handles.append((handle, rbuf))
            crc, secs, off = 0, 0.0, 0
            while off < aligned:
                n = min(chunk, aligned - off)
                view = rbuf.narrow(0, 0, n)
                t0 = time.perf_counter()
                rc = handle.sync_pread(view, path, off)  # returns count of completed ops, -1 on error
                secs += time.perf_counter() - t0
                if rc < 0:
                    raise RuntimeError("aio sync_pread failed at offset %d (rc=%d)" % (off, rc))
                crc = zlib.crc32(view.numpy(), crc)  # untimed
                off += n
            if size > aligned:  # the tail cannot be read with O_DIRECT
                t0 = time.perf_counter()
                fd = os.open(path, os.O_RDONLY)
                tail = os.pread(fd, size - aligned, aligned)
                os.close(fd)
                secs += time.perf_counter() - t0
                crc = zlib.crc32(tail, crc)
            res["read_s"] = secs
            # Untimed checks: the aio bytes match a plain read, and torch.load gives back the tensors.
            with open(path, "rb") as f:
                res["read_crc_ok"] = (crc == zlib.crc32(f.read()))
            back = torch.load(path, map_location="cpu", weights_only=True)
            res["load_ok"] = back.keys() == sd.keys() and all(torch.equal(back[k], sd[k]) for k in sd)
        os.close(dfd)
    except BaseException as e:  # report, never hang the others
        res["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        barrier.abort()
    finally:
        for h, t in handles:
            h.free_cpu_locked_tensor(t)
        queue.put(res)


def wait_all(barrier, procs):
    """Parent's barrier wait that aborts the barrier if a rank process dies (e.g. a C++ abort)."""
    out = {}

    def wait():
        try:
            out["ok"] = barrier.wait() is not None
        except threading.BrokenBarrierError:
            out["ok"] = False
    th = threading.Thread(target=wait)
    th.start()
    while th.is_alive():
        th.join(0.2)
        if any(p.exitcode not in (None, 0) for p in procs):
            barrier.abort()
    return out.get("ok", False)


def drop_caches():
    os.sync()
    if os.geteuid() != 0:
        return False, "not root: page cache not dropped"
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1")
        return True, None
    except OSError as e:
        return False, "write /proc/sys/vm/drop_caches failed: %s" % e.strerror


def main():
    out = os.fdopen(os.dup(1), "w")  # real stdout for our JSON only
    os.dup2(2, 1)  # everything else (DeepSpeed logs, ninja, C++ couts) -> stderr; children inherit this
    try:
        cfg = json.loads(sys.stdin.read())
        dirs = [os.path.abspath(d) for d in cfg["directories"]]
        ranks, total = int(cfg["ranks"]), int(cfg["total_bytes"])
        if not dirs or ranks < 1 or total < ranks:
            raise ValueError("need >=1 directory, ranks >= 1, total_bytes >= ranks")
    except (ValueError, KeyError, TypeError) as e:
        die(2, "bad input JSON: %s" % e)
    if cfg.get("torch_extensions_dir"):
        os.environ["TORCH_EXTENSIONS_DIR"] = cfg["torch_extensions_dir"]
    try:
        import torch
        import deepspeed
    except Exception as e:  # ImportError and friends from a broken install
        die(3, "cannot import torch/deepspeed: %s" % str(e).splitlines()[0])
    try:
        aio_cfg, writer_cfg, notes = resolve_config(cfg)
    except (OSError, ValueError, AssertionError, KeyError) as e:
        die(2, "bad DeepSpeed config: %s" % e)
    nbuf = 2 if writer_cfg["io_buffer_double"] else 1  # Double_IO_Buffer splits it in two aligned halves
    align = nbuf * 512 * aio_cfg["intra_op_parallelism"]
    if writer_cfg["io_buffer_size"] <= 0 or writer_cfg["io_buffer_size"] % align:
        die(2, "writer.io_buffer_size must be a positive multiple of %d (%d x 512 x intra_op_parallelism)"
            % (align, nbuf))
    try:
        op_times, accel = load_ops()[1:]
    except Exception as e:
        die(3, "DeepSpeed async_io op unusable: %s" % str(e).splitlines()[0])
    path = cfg.get("path") or ("fast_file_writer" if accel == "cpu" else "checkpoint_writer_factory")

    result = {"label": cfg.get("label"), "deepspeed_version": deepspeed.__version__, "torch_version": torch.__version__,
              "accelerator": accel, "path": path, "aio": aio_cfg, "writer": writer_cfg, "ranks": ranks,
              "op_load": op_times, "notes": notes, "errors": []}
    used = sorted(set(dirs[i % len(dirs)] for i in range(ranks)))
    rundirs, parent_fds = {}, {}
    name = ".ds_fastpersist.%d.%s" % (os.getpid(), secrets.token_hex(4))
    rc = 0
    try:
        for d in used:
            pfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            parent_fds[d] = pfd
            os.mkdir(name, 0o700, dir_fd=pfd)
            sfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=pfd)
            st = os.fstat(sfd)
            rundirs[d] = (name, (st.st_dev, st.st_ino))
            ok, why = o_direct_ok(sfd)
            os.close(sfd)
            result.setdefault("o_direct", {})[d] = ok if ok else why
            if not ok:
                raise RuntimeError("O_DIRECT not supported in %s (%s); FastFileWriter needs it" % (d, why))
        job = {"dirs": dirs, "rundirs": rundirs, "ranks": ranks, "bytes_per_rank": total // ranks,
               "aio": aio_cfg, "writer": writer_cfg, "path": path, "read_back": bool(cfg.get("read_back", True)),
               "read_buffer_size": int(cfg.get("read_buffer_size", 256 << 20))}
        ctx = mp.get_context("spawn")
        barrier, queue = ctx.Barrier(ranks + 1), ctx.Queue()
        procs = [ctx.Process(target=rank_main, args=(r, job, barrier, queue)) for r in range(ranks)]
        for p in procs:
            p.start()
        if wait_all(barrier, procs) and wait_all(barrier, procs):  # start, then all writes done
            dropped, why = drop_caches() if (job["read_back"] and cfg.get("drop_caches")) else (False, "not requested")
            result["page_cache_dropped"], result["page_cache_note"] = dropped, why
            wait_all(barrier, procs)
        per_rank = []
        for r, p in enumerate(procs):  # collect before join (queue feeder), tolerate dead ranks
            while p.is_alive() or not queue.empty():
                try:
                    per_rank.append(queue.get(timeout=0.5))
                except Exception:
                    pass
            p.join()
            if p.exitcode:
                result["errors"].append("rank %d process exited with code %s" % (r, p.exitcode))
        per_rank.sort(key=lambda r: r["rank"])
        result["per_rank"] = per_rank
        result["errors"] += ["rank %d: %s" % (r["rank"], r["error"]) for r in per_rank if "error" in r]
        result["errors"] += ["rank %d: read-back mismatch" % r["rank"] for r in per_rank
                             if r.get("load_ok") is False or r.get("read_crc_ok") is False]
        if len(per_rank) == ranks and not result["errors"]:
            nbytes = sum(r["bytes"] for r in per_rank)
            result["total_bytes"] = nbytes
            result["total_payload_bytes"] = sum(r["payload_bytes"] for r in per_rank)
            result["write_gib_s"] = round(nbytes / GIB / max(r["write_s"] for r in per_rank), 4)
            if job["read_back"]:
                result["read_gib_s"] = round(nbytes / GIB / max(r["read_s"] for r in per_rank), 4)
    except Exception as e:
        result["errors"].append("%s: %s" % (type(e).__name__, e))
    finally:
        for d, pfd in parent_fds.items():  # remove what we created, relative to the parent fds
            try:
                sfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=pfd)
                for f in os.listdir(sfd):
                    os.unlink(f, dir_fd=sfd)
                os.close(sfd)
                os.rmdir(name, dir_fd=pfd)
            except OSError as e:
                result["errors"].append("cleanup %s: %s" % (d, e))
            os.close(pfd)
    if result["errors"]:
        rc = 1
    out.write(json.dumps(result, indent=1, default=str) + "\n")
    out.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
