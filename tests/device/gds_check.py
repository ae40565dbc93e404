"""The device machine's GDS check (run by gds_check.sh): the collection's gds facts and plan on this machine, and
a cuFile write from GPU memory with the nvidia-fs counters read before and after. Standard library only (ctypes
for libcuda and libcufile); writes only in a temporary directory it removes."""
import ctypes
import ctypes.util
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds import gds_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.facts import gds_facts
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.gds.gds import parse_nvidia_fs_stats

SIZE = 256 * 2 ** 20
BLOCK = 2 ** 20
PROVED, NOT_PROVED = [], []


def runner(argv, cwd):
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          check=False)
    return proc.returncode, proc.stdout, proc.stderr


def which(name, dirs):
    return shutil.which(name, path=os.pathsep.join(list(dirs or []) + [os.environ.get('PATH', '')]))


def stats():
    try:
        with open('/proc/driver/nvidia-fs/stats') as handle:
            return parse_nvidia_fs_stats(handle.read())
    except OSError:
        return None


def facts_and_plan(directory):
    ctx = Context(runner=runner, which=which)
    gds = gds_facts.collect(ctx)
    shown = dict((key, gds.get(key)) for key in (
        'gpus', 'gpu_pci', 'driver', 'kernel', 'cuda_version', 'libcufile_path', 'libcufile_version',
        'nvidia_fs_loaded', 'nvidia_fs_version', 'nvidia_fs_modules', 'rw_stats_enabled', 'iommu', 'path',
        'path_reason', 'errors'))
    shown['topology_pairs'] = [(p['gpu'], p['nvme'], p['relation']) for p in (gds.get('topology') or {}).get('pairs', [])]
    print(json.dumps(shown, indent=2, default=str))
    plan = gds_plan.role_plan(gds, None, 'auto', 'preferred', BLOCK, 8, 8)
    print('mode: %s (%s)' % (plan['mode'], plan['reason']))
    for check in plan['checks']:
        print('check %s: %s - %s' % (check['name'], check['status'], check['detail']))
    print('cufile.json keys: %s' % json.dumps(plan['cufile']['set']))
    (PROVED if gds['gpus'] else NOT_PROVED).append('facts: %d GPU(s) seen, path %s' % (gds['gpus'], gds['path']))
    return gds, plan


def gdsio_proof(gdsio, mode, directory):
    before = stats()
    path = os.path.join(directory, 'proof')
    argv = [gdsio, '-f', path, '-d', '0', '-w', '1', '-s', str(SIZE), '-i', str(BLOCK), '-x', '0', '-I', '1']
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=240, check=False)
    print(proc.stdout[-1500:])
    error = None if proc.returncode == 0 else 'gdsio rc %d' % proc.returncode
    return gds_plan.proof_verdict(mode, before, stats(), SIZE, error)


class Descr(ctypes.Structure):
    _fields_ = [('type', ctypes.c_int), ('fd', ctypes.c_void_p), ('fs_ops', ctypes.c_void_p)]


class FileError(ctypes.Structure):
    _fields_ = [('err', ctypes.c_int), ('cu_err', ctypes.c_int)]


def _cufile_library():
    names = [ctypes.util.find_library('cufile')] + sorted(glob.glob(os.path.join(
        sys.prefix, 'lib', 'python3*', 'site-packages', 'nvidia', 'cufile', 'lib', 'libcufile.so*')))
    for name in [n for n in names if n]:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def ctypes_proof(mode, directory):
    """cuFileWrite of SIZE bytes from cuMemAlloc'd memory; (verdict dict) or raises RuntimeError."""
    cuda = ctypes.CDLL('libcuda.so.1')
    cufile = _cufile_library()
    if cufile is None:
        raise RuntimeError('libcufile not found (install the nvidia-cufile wheel or gds-tools)')
    ctx, ptr = ctypes.c_void_p(), ctypes.c_uint64()
    for call, args in (('cuInit', (0,)), ('cuDevicePrimaryCtxRetain', (ctypes.byref(ctx), 0)),
                       ('cuCtxSetCurrent', (ctx,)), ('cuMemAlloc_v2', (ctypes.byref(ptr), ctypes.c_size_t(SIZE))),
                       ('cuMemsetD8_v2', (ptr, ctypes.c_ubyte(0x5a), ctypes.c_size_t(SIZE)))):
        status = getattr(cuda, call)(*args)
        if status != 0:
            raise RuntimeError('%s returned CUresult %d' % (call, status))
    cufile.cuFileDriverOpen.restype = FileError
    cufile.cuFileHandleRegister.restype = FileError
    cufile.cuFileWrite.restype = ctypes.c_ssize_t
    cufile.cuFileWrite.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_longlong,
                                   ctypes.c_longlong]
    opened = cufile.cuFileDriverOpen()
    if opened.err != 0:
        raise RuntimeError('cuFileDriverOpen: error %d (cu %d)' % (opened.err, opened.cu_err))
    fd = os.open(os.path.join(directory, 'proof'), os.O_CREAT | os.O_RDWR | os.O_EXCL | getattr(os, 'O_DIRECT', 0),
                 0o600)
    try:
        descr, handle = Descr(1, fd, None), ctypes.c_void_p()  # CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1
        registered = cufile.cuFileHandleRegister(ctypes.byref(handle), ctypes.byref(descr))
        if registered.err != 0:
            raise RuntimeError('cuFileHandleRegister: error %d (cu %d)' % (registered.err, registered.cu_err))
        before = stats()
        written = cufile.cuFileWrite(handle, ctypes.c_void_p(ptr.value), SIZE, 0, 0)
        after = stats()
        cufile.cuFileHandleDeregister(handle)
    finally:
        os.close(fd)
    error = None if written == SIZE else 'cuFileWrite returned %d of %d bytes' % (written, SIZE)
    on_disk = os.path.getsize(os.path.join(directory, 'proof'))
    print('cuFileWrite returned %d; %d bytes on disk' % (written, on_disk))
    return gds_plan.proof_verdict(mode, before, after, SIZE, error)


def proof(gds, plan, directory):
    if not gds['gpus']:
        NOT_PROVED.append('the cuFile path: no NVIDIA GPU on this machine')
        return
    mode = plan['mode'] if plan['mode'] != 'unavailable' else 'nvidia-fs'
    gdsio = which('gdsio', sorted(glob.glob('/usr/local/cuda*/gds/tools')))
    try:
        verdict = gdsio_proof(gdsio, mode, directory) if gdsio else ctypes_proof(mode, directory)
    except (OSError, RuntimeError, subprocess.SubprocessError, AttributeError) as exc:
        NOT_PROVED.append('the cuFile write could not run: %s' % exc)
        return
    print('proof: %s - %s' % (verdict['proven'], verdict['detail']))
    if verdict['proven'] == 'dma':
        PROVED.append('the DMA path: %s' % verdict['detail'])
    elif verdict['proven'] == 'compat':
        PROVED.append('the write ran in compatibility mode (no DMA): %s' % verdict['detail'])
    else:
        NOT_PROVED.append('the DMA path: %s' % verdict['detail'])


def main():
    directory = tempfile.mkdtemp(prefix='gds_check.', dir=(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None))
    try:
        gds, plan = facts_and_plan(directory)
        proof(gds, plan, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print('== PROVED on this machine')
    for line in PROVED or ['nothing']:
        print('  - ' + line)
    print('== NOT PROVED on this machine')
    for line in NOT_PROVED or ['nothing']:
        print('  - ' + line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
