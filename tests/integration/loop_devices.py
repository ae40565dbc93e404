"""Real block devices for the unit tests: loop devices of the test host (root, losetup) over sparse files."""
import contextlib
import os
import subprocess

from helpers import require_tool


@contextlib.contextmanager
def loop_devices(directory, count, size, direct_io=False):
    """``count`` loop devices of ``size`` bytes over sparse files in ``directory`` (blank: all zeros), detached
    afterwards, whatever the test did."""
    devices = []
    try:
        for index in range(count):
            image = os.path.join(str(directory), 'disk%d.img' % index)
            with open(image, 'wb') as handle:
                handle.truncate(size)
            argv = [require_tool('losetup'), '--find', '--show'] + (['--direct-io=on'] if direct_io else [])
            devices.append(subprocess.check_output(argv + [image], universal_newlines=True).strip())
        yield devices
    finally:
        for device in devices:
            subprocess.call(['losetup', '--detach', device])


@contextlib.contextmanager
def xfs_checkpoint_dir(directory, size):
    """An XFS on one loop device of ``size`` bytes, mounted in ``directory``/mnt with a checkpoint directory
    ``ckpt`` in it: yields (the checkpoint directory, the loop device's kernel name); unmounted afterwards."""
    with loop_devices(directory, 1, size) as (device,):
        subprocess.check_call([require_tool('mkfs.xfs'), '-q', '-f', device])
        mount = os.path.join(str(directory), 'mnt')
        os.mkdir(mount)
        subprocess.check_call(['mount', device, mount])
        try:
            ckpt = os.path.join(mount, 'ckpt')
            os.mkdir(ckpt)
            yield ckpt, os.path.basename(device)
        finally:
            subprocess.call(['umount', mount])
