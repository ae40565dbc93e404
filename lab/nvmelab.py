# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVMe lab: Debian nodes under QEMU with emulated NVMe controllers.

Each node runs a real Debian kernel (``-kernel``/``-initrd`` taken from its image), its root filesystem on a virtio
disk, with one OS NVMe drive (mounted on /boot, in fstab) and N data NVMe drives, each behind its own PCIe root port
(so it can be hot-removed), reachable over SSH on a 127.0.0.1 port, and with a QMP socket for fault injection.

Starts: each release's machine boots once without NVMe controllers and is saved (QMP ``migrate`` to a file; QEMU
7.2 refuses to save a machine with an NVMe controller), cached beside its image under a key of the image, QEMU's
version, memory, CPUs, accelerator and kernel arguments. A node then starts from that state (``-incoming``) and its
controllers are hot-added on empty root ports: 2.4 s to ready for bookworm against 16 s for a cold boot, 3.6-3.9 s
against 30 s for trixie (TCG, this project's machines). A restored node takes the time from its RTC, a machine id
and host entropy of its own. ``reboot`` is a real reboot either way. NVMELAB_START=cold boots every node from
scratch (controllers on the command line); fabric nodes (a second NIC) always do.

    nvmelab.py build  [--release bookworm|trixie]
    nvmelab.py up     --state-dir DIR --node node1:bookworm [--node node2:trixie] [drive options]
                      [--neighbour-drives N [--neighbour-size SIZE]]
    nvmelab.py down   --state-dir DIR
    nvmelab.py status --state-dir DIR
    nvmelab.py ssh    --state-dir DIR NODE -- COMMAND...
    nvmelab.py critical-warning --state-dir DIR NODE DRIVE_ID VALUE
    nvmelab.py hot-remove --state-dir DIR NODE DRIVE_ID [--wait]
    nvmelab.py hot-add --state-dir DIR NODE DRIVE_ID [--wait]         (a drive hot-removed before, same serial)
    nvmelab.py tool --state-dir DIR NODE TOOL hide|restore            (nvme, fio, ...: absent from the node)
    nvmelab.py sysctl --state-dir DIR NODE KEY=VALUE                  (sysctl -w on the node)
    nvmelab.py reboot --state-dir DIR NODE [--hard]
    nvmelab.py throttle --state-dir DIR NODE DRIVE_ID PERCENT|off      (drive-model drives)
    nvmelab.py fail-io --state-dir DIR NODE DRIVE_ID on|off             (drive-model drives)
    nvmelab.py models                                                   (the named drive models)
    nvmelab.py fabric-target --state-dir DIR NODE [--nqn NQN] [--qid-max N] (export NODE's data drives: nvmet)
    nvmelab.py link-delay --state-dir DIR NODE MS                      (netem delay on NODE's fabric NIC; 0: off)

Drive models (``up --drive-model SPEC``, repeatable): a data drive served by nbdkit (Debian's package) behind the
emulated NVMe controller instead of a plain file, so that it behaves like a drive with physics: every request
takes a fixed service time (``latency``, nbdkit's delay filter) and the drive moves at most ``ceiling`` bytes per
second (the rate filter), so a stream of 1 MiB writes at depth d gets ``min(d x 1 MiB / latency, ceiling)``:
Little's Law up to the knee at ``ceiling x latency / 1 MiB`` in flight, flat past it, latency growing with depth.
``throttle`` lowers a drive's ceiling while it runs (the rate filter's rate file: a throttled drive, live);
``fail-io`` makes its writes fail (the error filter's error file: the guest sees NVMe media errors). SPEC is a
profile name from DRIVE_MODELS (``models`` lists them) or ``key=value,...`` (latency, ceiling, read_latency,
parallel, mdts), optionally prefixed ``data2:`` for one drive; without a prefix it applies to every data drive.
The OS drive, and every drive without a model, is a plain file (bounded by the emulating CPU, not physics).

Neighbour drives (``up --neighbour-drives N``): extra plain NVMe drives (ids ``nbr1``..., serials ``NBR0001``...)
that are not data drives: the inventory leaves them out of ``checkpoint_io_data_drives`` and names them in
``checkpoint_io_lab_neighbour_serials``, so a test can put a filesystem and a file on one and prove that nothing
the collection does reaches it. Faults for the fault suite: ``hot-remove`` / ``hot-add`` (the drive leaves the
PCIe root port and comes back with the same serial and bytes), ``tool ... hide`` (the tool's binary renamed
away on the node, ``restore`` puts it back), ``sysctl``, ``critical-warning``, ``reboot``, ``fail-io``.

A fabric (``up --fabric``, two nodes): each node gets a second virtio NIC (the fabric NIC, MAC 52:54:00:fa:b0:0N,
address 10.77.0.N/24) joined to the other node's by a point-to-point UDP socket on 127.0.0.1 (no host networking),
and a soft-RoCE device ``rxe0`` on it (rdma_rxe, set up at every boot by the node's lab-rxe.service: the lab's
stand-in for a RoCE NIC). ``fabric-target`` makes a node an NVMe-oF target: one nvmet subsystem with its data
drives as namespaces, listening over tcp (4420) and rdma (4421) on its fabric address; ``--qid-max`` limits the
I/O queues the subsystem grants (a target's queue budget). ``link-delay`` puts a tc netem delay on a node's fabric
NIC, so the round trip the initiator measures is real. On fabric nodes nvmf-autoconnect.service is left unmasked and
the node boots to default.target (the unit's WantedBy), so a reboot reconnects the way a real initiator does.

The accelerator: KVM where QEMU can use it (``-accel kvm -cpu host``), else TCG (``-accel tcg``, multi-threaded but
for trixie, whose 6.12 kernel panics under multi-threaded TCG). ``up`` decides once per process: /dev/kvm must open
read-write and a paused QEMU on KVM must start and quit (on some hosts /dev/kvm opens and QEMU still aborts
resetting the vCPU); its log line says which and why, and state.json keeps both (``accel``, ``accel_reason``).
NVMELAB_ACCEL=kvm (fail unless KVM works), tcg (no probe) or auto (the default). Boot timeouts are TCG's either way.

Images are cached under $CHECKPOINT_IO_LAB_CACHE (default ~/.cache/checkpoint_io_lab) by a key made from
their recipe (release, package list, customisation, lab SSH key), so a changed recipe builds a new image.
Every ``up`` gives each node fresh copy-on-write overlays over the cached image (or the saved machine's disk) and
/boot, and fresh sparse data drives: runs never share state. A reboot of a node keeps its disks (the QEMU process lives on).
"""

import argparse
import contextlib
import errno
import fcntl
import hashlib
import json
import math
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

RECIPE_VERSION = 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASES = {
    # multi-threaded TCG panics the 6.12 kernel of trixie ("Oops: int3" in set_next_task_fair): single thread.
    "bookworm": {"tcg_thread": "multi", "boot_timeout": 240},
    "trixie": {"tcg_thread": "single", "boot_timeout": 420},
    # bookworm with a training environment: CPU torch and DeepSpeed in /opt/train-venv (the versions of
    # requirements-deepspeed.txt, installed offline from wheels the host gathers), DeepSpeed's async_io and utils ops
    # built when the image is built (natively, in the image's chroot: minutes, not hours under TCG) into root's op
    # cache. numpy 2.x needs x86-64-v2 (SSSE3, SSE4.x, POPCNT), which QEMU's default qemu64 model lacks: its
    # nodes get those flags; the ops are built for x86-64-v2 without AVX (DEEPSPEED_PORTABLE_PATCH), so they
    # load on the emulated CPU and the host's CPU alike. Memory: a rank holds its shard as a state dict.
    "bookworm-deepspeed": {"suite": "bookworm", "tcg_thread": "multi", "boot_timeout": 240,
                           "cpu": "qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt", "root_size": "8G", "memory_min": 4096,
                           "packages": ["python3-venv", "python3-dev", "g++", "libaio-dev"], "training_env": True},
}
TRAINING_PYTHON = "/opt/train-venv/bin/python"
PACKAGES = [
    "linux-image-amd64", "systemd-sysv", "udev", "dbus", "openssh-server", "python3", "nvme-cli", "fio",
    "xfsprogs", "e2fsprogs", "kmod", "iproute2", "procps", "mdadm", "rdma-core", "liburing2", "util-linux",
]
# The accelerator: KVM where QEMU can use it, else TCG (accelerator()). NVMELAB_ACCEL=kvm|tcg|auto (default auto).
ACCEL_ENV = "NVMELAB_ACCEL"
ACCEL_CHOICES = ("auto", "kvm", "tcg")
# The probe: a paused machine of the lab's kind on KVM, quit at once. /dev/kvm can open and still be unusable (on
# this project's machines QEMU aborts resetting the vCPU: "failed to set MSR 0x10a to 0x69"), so QEMU is asked.
KVM_PROBE_ARGV = ["qemu-system-x86_64", "-machine", "q35", "-accel", "kvm", "-cpu", "host", "-nodefaults",
                  "-display", "none", "-S", "-monitor", "stdio"]
KVM_PROBE_TIMEOUT_S = 20
OS_SERIAL = "OS0001"
NEIGHBOUR_SERIAL = "NBR%04d"
HIDDEN_SUFFIX = ".nvmelab-hidden"
# The node's machine: the root filesystem on a virtio disk and ROOT_PORTS PCIe root ports for the NVMe controllers
# (the OS drive, which holds /boot, then the data and neighbour drives). QEMU 7.2 cannot save a machine that has an
# NVMe controller ("State blocked by non-migratable device"), so each release's machine boots once without them,
# is saved (saved_state(), cached beside the image) and every node starts from that state in seconds, its
# controllers hot-added on the empty root ports. NVMELAB_START=cold boots every node from scratch instead (the
# controllers then on the command line); a fabric node (a second NIC) or one with more drives than ports always does.
ROOT_PORTS = 8
LAYOUT_VERSION = 1
START_ENV = "NVMELAB_START"
START_CHOICES = ("saved", "cold")
BOOT_FS_SIZE = "256M"
# Named drive models: a fixed service time per request and a byte-rate ceiling, so that a 1 MiB write stream at
# depth d gets min(d x 1 MiB / latency, ceiling): Little's Law up to the knee at ceiling x latency / 1 MiB. The
# knee is set by bytes in flight, not by a request count, so the guest's merging and splitting of requests (at
# max_sectors_kb, at MDTS) does not move it; `parallel` (nbdkit's worker threads, the drive's internal
# parallelism) stays above the knee and below the 16 requests QEMU's NBD client keeps in flight per drive
# (MAX_NBD_REQUESTS in its block/nbd.c). Ceilings stay well below what the emulating CPU can move (~1.3 GiB/s
# for a plain drive under TCG here).
DRIVE_MODELS = {
    # Each ceiling sits 20-30% below depth x 1 MiB / latency at its knee (on a grid of powers of two), so the knee
    # point is on the plateau and the emulation's own latency (5-15 ms per request under TCG at 8 in flight,
    # measured) does not push it off the corner.
    "knee2": {"latency": 40.0, "ceiling": 40.0, "help": "40 ms per request, 40 MiB/s ceiling: knee at depth 2"},
    "knee8": {"latency": 80.0, "ceiling": 70.0, "help": "80 ms per request, 70 MiB/s ceiling: knee at depth 8"},
    # Little's Law puts this knee at 9.6 MiB in flight, below the 15 requests the drive serves at once. Its
    # ceiling sits 40% below 16 x 1 MiB / latency: with 75 MiB/s (25% below), two drives in RAID0 + XFS reached
    # only 0.70-0.85 of their ceiling at 16 in flight per drive (the demo's sweeps, 2026-12-01: the guest's and
    # the emulation's own latency on top of the 160 ms), which moved the array's knee a full step past the model's.
    "knee16": {"latency": 160.0, "ceiling": 60.0, "help": "160 ms per request, 60 MiB/s ceiling: knee at depth 16"},
}
MODEL_KEYS = ("latency", "read_latency", "parallel", "ceiling", "mdts")
MODEL_DEFAULTS = {"mdts": 9, "parallel": 15}
MAX_NBD_REQUESTS = 16
LOG_FILTER = os.environ.get("NVMELAB_NBD_LOG", "").split() if os.environ.get("NVMELAB_NBD_LOG") else []
# The rate filter's bucket, in seconds at the rate: 0.1 made depth-8 runs dip by 25% (measured); a run with a
# ramp (fio ramp_time) spends the burst before it measures.
BURSTINESS_S = 0.5
# The node's kernel command line. Under TCG every emulated cycle counts, so the boot skips what a lab node never
# uses: the console gets warnings only (a serial console writes each character through the emulation), systemd
# reaches multi-user.target, and services and modules no test needs are masked (measured: two nodes booting at
# once, SSH after 76-79 s with the full boot; see lab/README or tests/README for the numbers with these).
KERNEL_ARGS = [
    "rw", "console=ttyS0,115200", "net.ifnames=0", "panic=-1", "quiet", "systemd.show_status=false",
    "mitigations=off", "systemd.unit=multi-user.target",
    "systemd.mask=e2scrub_reap.service", "systemd.mask=nvmf-autoconnect.service",
    "systemd.mask=apt-daily.timer", "systemd.mask=apt-daily-upgrade.timer", "systemd.mask=man-db.timer",
    "systemd.mask=e2scrub_all.timer", "systemd.mask=fstrim.timer", "systemd.mask=modprobe@drm.service",
    "systemd.mask=modprobe@efi_pstore.service", "systemd.mask=modprobe@fuse.service",
    "modprobe.blacklist=pcspkr,iTCO_wdt,iTCO_vendor_support,cfg80211,kvm,kvm_amd,kvm_intel,drm,intel_pmc_bxt,"
    "vmw_vsock_vmci_transport,vmw_vmci,vsock_loopback",
]
# Run on every node once it answers on SSH (node_setup()). A restored node's clock stands where the saved
# machine's stopped, and its machine id and random pool are the saved machine's: it takes the time from its RTC,
# a machine id (journald keys its files by it) and host entropy. Then the NVMe drives (hot-added after a restore)
# must each list a namespace, and the OS drive is mounted on /boot.
NODE_SETUP_SCRIPT = r"""
set -e
if [ -n "%(restored)s" ]; then
    date -s "@$(cat /sys/class/rtc/rtc0/since_epoch)" >/dev/null
    echo %(entropy)s > /dev/urandom
    echo %(machine_id)s > /etc/machine-id
    systemctl restart systemd-journald
fi
deadline=$(( $(date +%%s) + %(timeout)d ))
while :; do
    missing=""
    for want in %(serials)s; do
        found=""
        for c in /sys/class/nvme/nvme*; do
            [ -r "$c/serial" ] || continue
            read -r serial < "$c/serial" || true
            [ "$serial" = "$want" ] && ls -d "$c"/nvme*n* >/dev/null 2>&1 && found=1
        done
        [ -n "$found" ] || missing="$missing $want"
    done
    [ -z "$missing" ] && break
    if [ "$(date +%%s)" -ge "$deadline" ]; then echo "no NVMe namespace for$missing after %(timeout)d s" >&2; exit 1; fi
    sleep 0.5
done
udevadm settle
os=""
for c in /sys/class/nvme/nvme*; do
    read -r serial < "$c/serial" || true
    [ "$serial" = %(os)s ] && os=$(basename "$(ls -d "$c"/nvme*n* | head -n 1)")
done
grep -q '[[:space:]]/boot[[:space:]]' /etc/fstab || echo 'UUID=%(boot_uuid)s /boot ext4 defaults,nofail 0 2' >> /etc/fstab
mountpoint -q /boot || mount "/dev/$os" /boot
"""
DRIVES_TIMEOUT = 180
SAVED_SSH_TIMEOUT = 120
# The fabric between two nodes (``up --fabric``): addresses, MACs, the target's subsystem and ports.
FABRIC_NET = "10.77.0.%d"
FABRIC_MAC = "52:54:00:fa:b0:%02x"
FABRIC_NQN = "nqn.2026-12.io.checkpoint-io.lab:%s-data"
FABRIC_PORTS = {"tcp": 4420, "rdma": 4421}
AUTOCONNECT_MASK = "systemd.mask=nvmf-autoconnect.service"
DEFAULT_UNIT = "systemd.unit=multi-user.target"
# The node's side of the fabric, run over SSH after every ``up``: the fabric NIC's static address (systemd-networkd,
# matched by MAC) and a soft-RoCE device on it at every boot. Kept in the node's overlay, so a reboot keeps both.
FABRIC_NODE_SCRIPT = r"""
set -eu
mac=%(mac)s
cat > /etc/systemd/network/05-fabric.network <<END
[Match]
MACAddress=$mac

[Network]
Address=%(addr)s/24
LinkLocalAddressing=no
END
cat > /usr/local/sbin/lab-rxe <<'END'
#!/bin/sh
# lab: the soft-RoCE device rxe0 on the fabric NIC (the NIC found by its MAC)
dev=$(ip -o link | awk -v mac="$1" '$0 ~ mac {sub(":", "", $2); print $2; exit}')
modprobe rdma_rxe
rdma link show rxe0/1 >/dev/null 2>&1 || rdma link add rxe0 type rxe netdev "$dev"
END
chmod 755 /usr/local/sbin/lab-rxe
cat > /etc/systemd/system/lab-rxe.service <<END
[Unit]
Description=lab: soft-RoCE device on the fabric NIC
After=systemd-networkd.service
Before=nvmf-autoconnect.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/lab-rxe $mac

[Install]
WantedBy=multi-user.target
END
systemctl daemon-reload
dev=$(ip -o link | awk -v mac="$mac" '$0 ~ mac {sub(":", "", $2); print $2; exit}')
# systemd-networkd takes the fabric NIC over from the DHCP file now (the role asks networkctl which file manages
# it); a node still booting under TCG can time networkctl out, so it is retried, and the address is also set by hand
for i in 1 2 3 4 5; do
  networkctl reload 2>/dev/null && networkctl reconfigure "$dev" 2>/dev/null && break
  sleep 5
done
ip link set dev "$dev" up
ip addr replace %(addr)s/24 dev "$dev"
for i in $(seq 30); do networkctl status --no-pager "$dev" 2>/dev/null | grep -q 05-fabric.network && break; sleep 1; done
systemctl enable --now lab-rxe.service >/dev/null 2>&1
echo "$dev"
"""
# A node as an NVMe-oF target (nvmet configfs): one subsystem, its data drives (found by serial) as namespaces,
# ports over tcp and rdma on the fabric address.
FABRIC_TARGET_SCRIPT = r"""
set -eu
modprobe -a nvmet nvmet-tcp nvmet-rdma
# the array's side of the fabric takes jumbo frames (the initiator's MTU is the role's to set)
ip link set dev "$(ip -o -4 addr show | awk '$4 ~ /^%(addr)s\// {print $2; exit}')" mtu 9000
cd /sys/kernel/config/nvmet
sub=subsystems/%(nqn)s
mkdir -p "$sub"
echo 1 > "$sub/attr_allow_any_host"
[ -z "%(qid_max)s" ] || echo %(qid_max)s > "$sub/attr_qid_max"
n=0
for serial in %(serials)s; do
  n=$((n + 1))
  dev=
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/transport")" = pcie ] && [ "$(tr -d ' ' < "$c/serial")" = "$serial" ] || continue
    dev=/dev/$(ls "$c" | grep -m1 -E '^nvme[0-9]+n[0-9]+$')
  done
  [ -n "$dev" ] || { echo "no drive with serial $serial" >&2; exit 1; }
  mkdir -p "$sub/namespaces/$n"
  echo 0 > "$sub/namespaces/$n/enable"
  echo "$dev" > "$sub/namespaces/$n/device_path"
  echo 1 > "$sub/namespaces/$n/enable"
done
id=0
for port in %(ports)s; do
  id=$((id + 1)); trtype=${port%%%%:*}; svc=${port#*:}
  mkdir -p ports/$id
  if [ ! -e "ports/$id/subsystems/%(nqn)s" ]; then
    echo ipv4 > ports/$id/addr_adrfam; echo "$trtype" > ports/$id/addr_trtype
    echo %(addr)s > ports/$id/addr_traddr; echo "$svc" > ports/$id/addr_trsvcid
    ln -s "/sys/kernel/config/nvmet/$sub" ports/$id/subsystems/
  fi
done
echo %(nqn)s
"""
SSH_OPTS = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            "-o", "BatchMode=yes", "-o", "ConnectTimeout=5"]

CUSTOMIZE = r"""
set -e
root="$1"
echo lab-node > "$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 lab-node\n' > "$root/etc/hosts"
printf 'UUID=%(uuid)s / ext4 defaults,errors=remount-ro 0 1\n' > "$root/etc/fstab"
mkdir -p "$root/etc/systemd/network" "$root/root/.ssh"
printf '[Match]\nName=e*\n\n[Network]\nDHCP=yes\n' > "$root/etc/systemd/network/10-lab.network"
chroot "$root" systemctl enable systemd-networkd ssh
chroot "$root" systemctl mask systemd-networkd-wait-online.service
cp "%(pubkey)s" "$root/root/.ssh/authorized_keys"
chmod 700 "$root/root/.ssh"; chmod 600 "$root/root/.ssh/authorized_keys"
printf 'UseDNS no\nPermitRootLogin prohibit-password\n' > "$root/etc/ssh/sshd_config.d/lab.conf"
rm -f "$root/etc/machine-id"; touch "$root/etc/machine-id"
"""


# The training environment of a release with "training_env", run in the image's chroot at build time: "$1" the
# root, "$2" the wheels training_wheels() gathered (every distribution pinned, no index reached). Then DeepSpeed's
# op builder is made portable (DEEPSPEED_PORTABLE_PATCH, appended to its builder.py) and the ops FastFileWriter uses
# are built into root's op cache with the venv's own ninja (another ninja's log makes torch rebuild everything).
DEEPSPEED_HOOK = r"""
set -e
root="$1"
mkdir -p "$root/tmp/wheels"
cp "$2"/* "$root/tmp/wheels/"
chroot "$root" python3 -m venv /opt/train-venv
chroot "$root" env -u PIP_FIND_LINKS /opt/train-venv/bin/pip install -q --no-index --find-links /tmp/wheels \
  -r /tmp/wheels/requirements.txt
builder=$(chroot "$root" /opt/train-venv/bin/python -c 'import deepspeed.ops.op_builder.builder as b; print(b.__file__)' 2>/dev/null | tail -n 1)
[ -n "$builder" ] && cat "$2/portable_patch.py" >> "$root$builder"
chroot "$root" env PATH=/opt/train-venv/bin:/usr/bin:/bin HOME=/root /opt/train-venv/bin/python -c '
from deepspeed.ops.op_builder import AsyncIOBuilder
from deepspeed.ops.op_builder.utils import UtilsBuilder
AsyncIOBuilder().load()
UtilsBuilder().load()
print("ops built")
'
rm -rf "$root/tmp/wheels"
"""
# Appended to DeepSpeed's op_builder/builder.py in the image: its builder compiles with -march=native and the SIMD
# width of the CPU it runs on, and both are part of what torch compares before it reuses a built op. The image is
# built on one CPU and its nodes run on another (TCG's model, or a KVM host's): one portable target for both.
DEEPSPEED_PORTABLE_PATCH = """

# ai_storage.checkpoint_io lab image (lab/nvmelab.py): ops built at image build time for x86-64-v2 without AVX, so
# that they load unchanged on the node's CPU, whichever it is.
OpBuilder.cpu_arch = lambda self: '-march=x86-64-v2'
OpBuilder.simd_width = lambda self: '-D__SCALAR__'
"""


def training_wheels(dest):
    """The wheels of the image's training environment, gathered on the host into ``dest`` with
    requirements.txt beside them: every distribution of the host's training environment (lab/bootstrap.sh --tests
    makes it from requirements-deepspeed.txt: the CPU torch first) at its version, deepspeed built into a wheel
    there (its setup.py imports torch, so an isolated build would fetch a CUDA torch)."""
    train = os.path.expanduser("~/.cache/checkpoint_io_lab/train-venv")
    pip = os.path.join(train, "bin", "pip")
    if not os.access(pip, os.X_OK):
        die("the deepspeed image installs the packages of the training environment lab/bootstrap.sh --tests makes "
            "(%s): run it first" % train)
    os.makedirs(dest)
    freeze = subprocess.run([pip, "freeze", "--all"], check=True, capture_output=True, text=True).stdout.split()
    pins = [line for line in freeze if "==" in line and not line.startswith("pip==")]
    others = [line for line in pins if not line.startswith("deepspeed==")]
    deepspeed = [line for line in pins if line.startswith("deepspeed==")]
    if not deepspeed:
        die("no deepspeed in %s: run lab/bootstrap.sh --tests" % train)
    log("gathering the training environment's wheels (%d distributions)" % len(pins))
    subprocess.run([pip, "download", "-q", "--no-deps", "-d", dest] + others, check=True)
    subprocess.run([pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dest] + deepspeed, check=True)
    with open(os.path.join(dest, "requirements.txt"), "w") as handle:
        handle.write("\n".join(pins) + "\n")


def node_memory(release, args):
    """MiB of memory a node of ``release`` gets: --memory, at least what the release needs."""
    return max(args.memory, RELEASES[release].get("memory_min", 0))


def log(msg):
    sys.stderr.write("[nvmelab] %s\n" % msg)
    sys.stderr.flush()


def die(msg, code=2):
    log("error: " + msg)
    sys.exit(code)


def cache_dir():
    path = os.environ.get("CHECKPOINT_IO_LAB_CACHE") or os.path.expanduser("~/.cache/checkpoint_io_lab")
    os.makedirs(path, exist_ok=True)
    return path


def lab_key():
    """The lab's SSH key pair, made once per cache (it is baked into the images)."""
    key = os.path.join(cache_dir(), "id_ed25519")
    if not os.path.exists(key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "checkpoint-io-lab", "-f", key],
                       check=True)
    return key


def host_mirror():
    """The Debian mirror this machine's apt already uses (so the lab reaches what the host reaches)."""
    env = os.environ.get("CHECKPOINT_IO_LAB_MIRROR")
    if env:
        return env
    candidates = []
    for path in ["/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"]:
        try:
            with open(path) as handle:
                for line in handle:
                    words = line.split()
                    if words[:1] == ["URIs:"]:
                        candidates.extend(words[1:])
                    elif words[:1] == ["deb"]:
                        candidates.extend(w for w in words[1:] if "://" in w)
        except OSError:
            continue
    for uri in candidates:
        if uri.rstrip("/").endswith("/debian"):
            return uri
    die("no Debian mirror found in /etc/apt sources; set CHECKPOINT_IO_LAB_MIRROR")


def recipe(release):
    pubkey = lab_key() + ".pub"
    with open(pubkey) as handle:
        pub = handle.read()
    spec = dict(RELEASES[release])
    if spec.get("training_env"):
        with open(os.path.join(ROOT, "requirements-deepspeed.txt")) as handle:
            spec["requirements"] = handle.read()
        spec["hook"] = DEEPSPEED_HOOK + DEEPSPEED_PORTABLE_PATCH
    text = json.dumps({"v": RECIPE_VERSION, "release": release, "packages": PACKAGES,
                       "customize": CUSTOMIZE, "pubkey": pub, "spec": spec}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def image_paths(release):
    key = recipe(release)
    base = os.path.join(cache_dir(), "%s-%s" % (release, key))
    return {"dir": base, "image": os.path.join(base, "root.raw"), "kernel": os.path.join(base, "vmlinuz"),
            "initrd": os.path.join(base, "initrd.img"), "meta": os.path.join(base, "image.json"), "key": key}


def build(release):
    """Build (or reuse) the cached image for a release; returns its paths and metadata."""
    if release not in RELEASES:
        die("unknown release %r; choose from %s" % (release, ", ".join(sorted(RELEASES))))
    paths = image_paths(release)
    if os.path.exists(paths["meta"]):
        with open(paths["meta"]) as handle:
            paths.update(json.load(handle))
        return paths
    for tool in ("mmdebstrap", "mkfs.ext4", "qemu-system-x86_64", "qemu-img"):
        if not shutil.which(tool):
            die("%s is not installed (apt-get install mmdebstrap qemu-system-x86 qemu-utils e2fsprogs)" % tool)
    spec = RELEASES[release]
    root_uuid = str(uuid.uuid4())
    work = tempfile.mkdtemp(prefix="nvmelab-%s-" % release, dir=cache_dir())
    tree = os.path.join(work, "tree")
    hook = os.path.join(work, "customize.sh")
    with open(hook, "w") as handle:
        handle.write(CUSTOMIZE % {"uuid": root_uuid, "pubkey": lab_key() + ".pub"})
    hooks = ["--customize-hook=sh %s \"$1\"" % hook]
    if spec.get("training_env"):
        wheels = os.path.join(work, "wheels")
        training_wheels(wheels)
        ds_hook = os.path.join(work, "deepspeed.sh")
        with open(ds_hook, "w") as handle:
            handle.write(DEEPSPEED_HOOK)
        with open(os.path.join(wheels, "portable_patch.py"), "w") as handle:
            handle.write(DEEPSPEED_PORTABLE_PATCH)
        hooks.append("--customize-hook=sh %s \"$1\" %s" % (ds_hook, wheels))
    mirror = host_mirror()
    log("building %s image %s from %s (%s)" % (release, paths["key"], mirror, "about ten minutes: DeepSpeed's ops are "
                                               "built" if spec.get("training_env") else "a minute or two"))
    start = time.time()
    try:
        subprocess.run(["mmdebstrap", "--variant=minbase", "--mode=root",
                        "--include=" + ",".join(PACKAGES + spec.get("packages", []))] + hooks
                       + ["--skip=cleanup/apt/lists", spec.get("suite", release), tree, mirror],
                       check=True, stdin=subprocess.DEVNULL)
        boot = os.path.join(tree, "boot")
        kernels = sorted(f for f in os.listdir(boot) if f.startswith("vmlinuz-"))
        initrds = sorted(f for f in os.listdir(boot) if f.startswith("initrd.img-"))
        if not kernels or not initrds:
            die("no kernel/initrd in the %s image's /boot" % release)
        os.makedirs(work + "/out")
        shutil.copy(os.path.join(boot, kernels[-1]), work + "/out/vmlinuz")
        shutil.copy(os.path.join(boot, initrds[-1]), work + "/out/initrd.img")
        subprocess.run(["mkfs.ext4", "-q", "-F", "-U", root_uuid, "-L", "labroot", "-d", tree,
                        work + "/out/root.raw", spec.get("root_size", "3G")], check=True)
        meta = {"release": release, "root_uuid": root_uuid, "kernel_version": kernels[-1][len("vmlinuz-"):],
                "built_seconds": round(time.time() - start, 1), "recipe": paths["key"]}
        with open(work + "/out/image.json", "w") as handle:
            json.dump(meta, handle, indent=2)
        if os.path.exists(paths["dir"]):
            shutil.rmtree(paths["dir"])
        os.rename(work + "/out", paths["dir"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log("built %s in %.0f s" % (release, time.time() - start))
    paths.update(meta)
    return paths


def parse_ms(text, key):
    text = str(text).strip().lower()
    try:
        if text.endswith("ms"):
            return float(text[:-2])
        if text.endswith("s"):
            return float(text[:-1]) * 1000.0
        return float(text)
    except ValueError:
        die("drive model: %s=%r is not a duration (e.g. 20ms)" % (key, text))


def parse_model(spec):
    """``(drive_id or None, model)`` of one --drive-model SPEC; dies with the bad value and the limit."""
    drive, sep, body = spec.partition(":")
    if not sep:
        drive, body = None, spec
    if body in DRIVE_MODELS:
        model = dict((k, v) for k, v in DRIVE_MODELS[body].items() if k != "help")
        model["profile"] = body
    else:
        model = {"profile": "custom"}
        for item in filter(None, body.split(",")):
            key, eq, value = item.partition("=")
            if not eq or key not in MODEL_KEYS:
                die("drive model %r: %r is neither a profile (%s) nor key=value with a key of %s"
                    % (spec, item, ", ".join(sorted(DRIVE_MODELS)), ", ".join(MODEL_KEYS)))
            if key in ("latency", "read_latency"):
                model[key] = parse_ms(value, key)
            elif key == "ceiling":
                model[key] = parse_gib(value) / float(1 << 20)
            else:
                try:
                    model[key] = int(value)
                except ValueError:
                    die("drive model %r: %s=%r is not an integer" % (spec, key, value))
    for key, value in MODEL_DEFAULTS.items():
        model.setdefault(key, value)
    if "latency" not in model or "ceiling" not in model:
        die("drive model %r: give latency=MS and ceiling=SIZE per second (or a profile: %s)"
            % (spec, ", ".join(sorted(DRIVE_MODELS))))
    model.setdefault("read_latency", model["latency"])
    if not 0.1 <= model["latency"] <= 1000 or not 0 <= model["read_latency"] <= 1000:
        die("drive model %r: latency %.1f ms is outside 0.1..1000 ms" % (spec, model["latency"]))
    if not 1 <= model["parallel"] < MAX_NBD_REQUESTS:
        die("drive model %r: parallel %d is outside 1..%d (QEMU's NBD client keeps at most %d requests in flight)"
            % (spec, model["parallel"], MAX_NBD_REQUESTS - 1, MAX_NBD_REQUESTS))
    if not 8 <= model["mdts"] <= 10:
        die("drive model %r: mdts %d is outside 8..10 (a 1 MiB write must stay one request)" % (spec, model["mdts"]))
    if not 1 <= model["ceiling"] <= 1024:
        die("drive model %r: ceiling %.0f MiB/s is outside 1..1024 MiB/s" % (spec, model["ceiling"]))
    # The knee in 1 MiB writes in flight: Little's Law, depth = ceiling x latency / request size.
    knee = model["ceiling"] * model["latency"] / 1000.0
    if knee > model["parallel"]:
        die("drive model %r: its knee (%.1f MiB in flight) is above parallel %d: raise parallel or lower latency"
            " x ceiling" % (spec, knee, model["parallel"]))
    model["ceiling_mib_s"] = round(model["ceiling"], 1)
    model["knee_depth"] = max(1, int(math.ceil(knee - 1e-9)))
    return drive, model


def drive_models(specs, count):
    """{data drive id: model} for the data drives of one node (a prefixed spec overrides an unprefixed one)."""
    models = {}
    ids = ["data%d" % i for i in range(1, count + 1)]
    parsed = [parse_model(spec) + (spec,) for spec in specs or []]
    # Unprefixed specs first (every drive), then the prefixed ones (one drive each), so those win.
    for drive, model, spec in sorted(parsed, key=lambda item: item[0] is not None):
        if drive is not None and drive not in ids:
            die("drive model %r: no data drive %r (data drives: %s)" % (spec, drive, ", ".join(ids)))
        for dev_id in ids if drive is None else [drive]:
            models[dev_id] = model
    return models


def rate_bits(mib_s):
    return int(mib_s * (1 << 20) * 8)


def start_model_server(ndir, dev_id, path, model):
    """Start nbdkit for one data drive; returns the drive's ``model`` record (sockets, control files)."""
    base = os.path.join(ndir, dev_id)
    rec = dict(model, socket=base + ".nbd.sock", pidfile=base + ".nbdkit.pid", rate_file=base + ".rate",
               error_file=base + ".fail-io", log=base + ".nbdkit.log")
    for stale in (rec["error_file"], rec["rate_file"], rec["socket"]):
        if os.path.exists(stale):
            os.unlink(stale)
    write_atomic(rec["rate_file"], "%d\n" % rate_bits(model["ceiling"]))
    # Filters from the client inwards: error (fail-io), rate (ceiling, throttle), delay (latency); NVMELAB_NBD_LOG
    # ("--filter=log logfile=FILE") adds nbdkit's request log innermost, for looking at what the guest sends.
    argv = ["nbdkit", "--unix", rec["socket"], "--pidfile", rec["pidfile"], "--threads", str(model["parallel"]),
            "--filter=error", "--filter=rate", "--filter=delay"] + LOG_FILTER[:1] + ["file", path] + LOG_FILTER[1:]
    argv += ["delay-write=%gms" % model["latency"], "delay-read=%gms" % model["read_latency"],
             "rate=%d" % rate_bits(model["ceiling"]), "rate-file=%s" % rec["rate_file"],
             "burstiness=%g" % BURSTINESS_S,
             "error=EIO", "error-pwrite-rate=100%", "error-pwrite-file=%s" % rec["error_file"],
             "error-zero-rate=100%", "error-zero-file=%s" % rec["error_file"]]
    if not shutil.which("nbdkit"):
        die("nbdkit is not installed (lab/bootstrap.sh installs it: apt-get install nbdkit)")
    with open(rec["log"], "w") as log_handle:
        subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=log_handle, stderr=log_handle)
    deadline = time.time() + 10
    while not os.path.exists(rec["socket"]) and time.time() < deadline:
        time.sleep(0.05)
    if not os.path.exists(rec["socket"]):
        die("nbdkit for %s did not listen on %s; see %s" % (dev_id, rec["socket"], rec["log"]))
    return rec


def write_atomic(path, text):
    tmp = path + ".new"
    with open(tmp, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


@contextlib.contextmanager
def file_lock(path):
    """An exclusive flock on ``path`` (made if missing) while the block runs."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def port_lock():
    """Held from choosing a node's ports until its QEMU has bound them (-daemonize returns after that): two labs
    booting at once (run-all.sh runs some scenarios side by side) cannot both be given one free port."""
    return file_lock(os.path.join(cache_dir(), "ports.lock"))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def parse_node(spec):
    name, dummy, release = spec.partition(":")
    release = release or "bookworm"
    if not name or release not in RELEASES:
        die("bad --node %r: use NAME[:%s]" % (spec, "|".join(sorted(RELEASES))))
    return name, release


def kernel_args(node):
    """The node's kernel command line: a fabric node keeps nvmf-autoconnect.service (the initiator reconnects at
    boot from what nvme-cli's config files say) and boots to default.target, which that unit is wanted by."""
    dropped = (AUTOCONNECT_MASK, DEFAULT_UNIT) if node.get("fabric") else ()
    return [arg for arg in KERNEL_ARGS if arg not in dropped]


def requested_accel(requested):
    """The NVMELAB_ACCEL value (None or empty: auto) as one of ACCEL_CHOICES; ValueError naming a bad one."""
    wanted = (requested or "auto").strip().lower()
    if wanted not in ACCEL_CHOICES:
        raise ValueError("%s=%r: give one of %s" % (ACCEL_ENV, requested, ", ".join(ACCEL_CHOICES)))
    return wanted


def choose_accel(requested, device_error, probe):
    """The accelerator and why, from what was found (pure): ``requested`` the NVMELAB_ACCEL value (None: auto),
    ``device_error`` None when /dev/kvm opened read-write, else why not; ``probe`` None when QEMU was not asked,
    else (returncode, output, timed_out) of KVM_PROBE_ARGV. Returns ("kvm"|"tcg", reason); ValueError for a bad
    request or for kvm asked where it cannot run."""
    wanted = requested_accel(requested)
    if wanted == "tcg":
        return "tcg", "%s=tcg" % ACCEL_ENV
    if device_error:
        why = "kvm unusable: %s" % device_error
    elif probe is None:
        why = "kvm unusable: QEMU was not asked"
    elif probe[2]:
        why = "kvm unusable: QEMU's KVM probe did not quit within %d s" % KVM_PROBE_TIMEOUT_S
    else:
        returncode, output = probe[0], probe[1] or ""
        # the monitor's banner and prompt ("QEMU 7.2.22 monitor ...", "(qemu) ") are not QEMU's message
        lines = [line.replace("(qemu)", "").strip() for line in output.splitlines()]
        lines = [line for line in lines if line and not line.startswith("QEMU ")]
        errors = [line for line in lines if "error" in line.lower()]
        if returncode == 0 and not errors:
            return "kvm", "QEMU runs a paused machine on /dev/kvm"
        if returncode is not None and returncode < 0:
            try:
                how = "killed by %s" % signal.Signals(-returncode).name
            except ValueError:
                how = "killed by signal %d" % -returncode
        else:
            how = "exit %s" % returncode
        first = (errors or lines or ["no message"])[0]
        why = "kvm unusable: %s (QEMU's KVM probe: %s)" % (first, how)
    if wanted == "kvm":
        raise ValueError("%s=kvm, but %s" % (ACCEL_ENV, why))
    return "tcg", why


def open_kvm(path="/dev/kvm"):
    """None when ``path`` opens read-write, else why not."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError as err:
        return "no %s" % path if err.errno == errno.ENOENT else "%s: %s" % (path, err.strerror)
    os.close(fd)
    return None


def run_kvm_probe():
    """(returncode, output, timed_out) of KVM_PROBE_ARGV with "quit" on its monitor."""
    try:
        proc = subprocess.run(KVM_PROBE_ARGV, input="quit\n", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=KVM_PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return None, "", True
    except OSError as err:
        return 127, "%s: %s" % (KVM_PROBE_ARGV[0], err.strerror), False
    return proc.returncode, proc.stdout, False


_ACCEL = {}


def accelerator(environ=None, opener=open_kvm, prober=run_kvm_probe):
    """("kvm"|"tcg", reason), decided once per process (the probe costs a QEMU start); dies on a bad request."""
    if "verdict" not in _ACCEL:
        requested = (os.environ if environ is None else environ).get(ACCEL_ENV)
        device_error = probe = None
        try:
            if requested_accel(requested) != "tcg":  # a bad value fails before anything is probed
                device_error = opener()
                probe = None if device_error else prober()
            _ACCEL["verdict"] = choose_accel(requested, device_error, probe)
        except ValueError as err:
            die(str(err))
    return _ACCEL["verdict"]


def accel_argv(release, accel):
    """QEMU's accelerator arguments for a node of ``release`` (under TCG its CPU model where the release names one)."""
    if accel == "kvm":
        return ["-accel", "kvm", "-cpu", "host"]
    cpu = RELEASES[release].get("cpu")
    return ["-accel", "tcg,thread=%s" % RELEASES[release]["tcg_thread"]] + (["-cpu", cpu] if cpu else [])


def drive_plan(node, args):
    """The node's NVMe drives, one per PCIe root port from rp1: the OS drive (its /boot), the data drives (plain
    files or drive models), the neighbour drives. Each record keeps what a hot-add needs to plug it."""
    disks = [("os", OS_SERIAL, node["boot_overlay"], "qcow2", {})]
    models = node.get("models", {})
    for i, path in enumerate(node["data_files"], start=1):
        dev_id = "data%d" % i
        model = models.get(dev_id)
        disks.append((dev_id, "DATA%04d" % i, path, "raw",
                      {"max_ioqpairs": args.max_ioqpairs, "mdts": model["mdts"] if model else args.mdts}))
    for i, path in enumerate(node.get("neighbour_files", []), start=1):
        disks.append(("nbr%d" % i, NEIGHBOUR_SERIAL % i, path, "raw", {}))
    return [{"id": dev_id, "serial": serial, "os_drive": dev_id == "os", "backing": path, "model": models.get(dev_id),
             "neighbour": dev_id.startswith("nbr"), "format": fmt, "bus": "rp%d" % slot, "props": props}
            for slot, (dev_id, serial, path, fmt, props) in enumerate(disks, start=1)]


def qemu_argv(node, image, ndir, args, drives=None):
    """QEMU's command line for a node: the machine (root disk, NICs, ``ports`` empty PCIe root ports) and, for a
    cold boot, ``drives`` (drive_plan()) on their ports. Without ``drives`` the machine is the one saved_state()
    saves and a restore loads: its NVMe controllers are hot-added once it runs."""
    argv = (["qemu-system-x86_64", "-name", node["name"], "-machine", "q35"]
            + accel_argv(node["release"], node.get("accel", "tcg"))
            + ["-m", str(node_memory(node["release"], args)), "-smp", str(args.cpus), "-nodefaults", "-display", "none",
               "-serial", "file:%s" % os.path.join(ndir, "console.log"),
               "-kernel", image["kernel"], "-initrd", image["initrd"],
               "-append", "root=UUID=%s %s" % (image["root_uuid"], " ".join(kernel_args(node))),
               "-netdev", "user,id=net0,hostfwd=tcp:127.0.0.1:%d-:22" % node["ssh_port"],
               "-device", "virtio-net-pci,netdev=net0",
               "-drive", "file=%s,if=none,id=drv-root,format=qcow2" % node["os_overlay"],
               "-device", "virtio-blk-pci,id=root,drive=drv-root",
               "-qmp", "unix:%s,server=on,wait=off" % node["qmp"],
               "-pidfile", node["pidfile"], "-daemonize"])
    fabric = node.get("fabric")
    if fabric:
        # The fabric NIC: a point-to-point UDP socket to the peer's QEMU on the loopback (no host networking).
        argv += ["-netdev", "socket,id=fab0,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d"
                 % (fabric["peer_port"], fabric["port"]),
                 "-device", "virtio-net-pci,netdev=fab0,mac=%s" % fabric["mac"]]
    # One PCIe root port per controller: a controller on a root port can be hot-added and hot-removed.
    for slot in range(1, max(ROOT_PORTS, len(drives or [])) + 1):
        argv += ["-device", "pcie-root-port,id=rp%d,bus=pcie.0,chassis=%d,slot=%d" % (slot, slot, slot)]
    for drive in drives or []:
        model = drive["model"]
        # A drive model's bytes go through nbdkit (latency, parallelism, ceiling, faults); cache=none keeps the
        # host's page cache out of the guest's view of it.
        source = ("file=nbd+unix:///?socket=%s,cache=none" % model["socket"]) if model else ("file=%s" % drive["backing"])
        props = "".join(",%s=%s" % item for item in sorted(drive["props"].items()))
        argv += ["-drive", "%s,if=none,id=drv-%s,format=%s" % (source, drive["id"], drive["format"]),
                 "-device", "nvme,id=%s,serial=%s,drive=drv-%s,bus=%s%s"
                 % (drive["id"], drive["serial"], drive["id"], drive["bus"], props)]
    return argv


def ssh_argv(node, command=None):
    argv = ["ssh", "-i", node["identity_file"], "-p", str(node["ssh_port"]), "-l", "root"] + SSH_OPTS
    argv.append("127.0.0.1")
    if command:
        argv += command
    return argv


def ssh_ok(node):
    proc = subprocess.run(ssh_argv(node, ["true"]), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=30, check=False)
    return proc.returncode == 0


def wait_ssh(node, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not pid_alive(read_pid(node["pidfile"])):
            raise RuntimeError("%s: QEMU exited during boot; see %s" % (node["name"], node["console"]))
        try:
            if ssh_ok(node):
                return
        except subprocess.TimeoutExpired:
            pass
        time.sleep(2)
    raise RuntimeError("%s: no SSH on port %d after %d s; see %s"
                       % (node["name"], node["ssh_port"], timeout, node["console"]))


def read_pid(pidfile):
    try:
        with open(pidfile) as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def pid_alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie is not alive
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def qmp(node, command, arguments=None):
    """One QMP command over the node's socket; returns its 'return' value."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(node["qmp"])
    reader = sock.makefile("r")

    def send(obj):
        sock.sendall((json.dumps(obj) + "\n").encode())
        while True:
            reply = json.loads(reader.readline())
            if "return" in reply or "error" in reply:
                return reply

    try:
        json.loads(reader.readline())  # greeting
        send({"execute": "qmp_capabilities"})
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        reply = send(msg)
    finally:
        sock.close()
    if "error" in reply:
        raise RuntimeError("QMP %s failed: %s" % (command, reply["error"].get("desc")))
    return reply["return"]


def state_file(state_dir):
    return os.path.join(state_dir, "state.json")


def load_state(state_dir):
    try:
        with open(state_file(state_dir)) as handle:
            return json.load(handle)
    except OSError:
        die("no lab in %s (run 'up' first)" % state_dir)


def registry():
    """Every state dir with nodes up, so that `down --all` can stop them (CI's trap uses it). Each entry holds the
    state dir and the run that started it (``NVMELAB_RUN``, set by tests/run-all.sh), so a run's trap stops its own
    labs and not those of another run on the same machine."""
    path = os.path.join(cache_dir(), "running")
    os.makedirs(path, exist_ok=True)
    return path


def registry_entry(state_dir):
    return os.path.join(registry(), hashlib.sha256(state_dir.encode()).hexdigest()[:16])


def save_state(state_dir, state):
    with open(registry_entry(state_dir), "w") as handle:
        handle.write("%s\n%s\n" % (state_dir, os.environ.get("NVMELAB_RUN", "")))
    tmp = state_file(state_dir) + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(state, handle, indent=2)
    os.replace(tmp, state_file(state_dir))


def write_inventory(state_dir, state):
    lines = ["# Written by lab/nvmelab.py: the lab's nodes. OS drive serial %s is never a data drive." % OS_SERIAL,
             "all:", "  children:", "    checkpoint_nodes:", "      hosts:"]
    for node in state["nodes"]:
        data = [d["serial"] for d in node["drives"] if not d["os_drive"] and not d.get("neighbour")]
        neighbours = [d["serial"] for d in node["drives"] if d.get("neighbour")]
        lines += [
            "        %s:" % node["name"],
            "          ansible_host: 127.0.0.1",
            "          ansible_port: %d" % node["ssh_port"],
            "          ansible_user: root",
            "          ansible_ssh_private_key_file: %s" % node["identity_file"],
            "          ansible_ssh_common_args: '%s'" % " ".join(SSH_OPTS[:8]),
            "          ansible_python_interpreter: /usr/bin/python3",
            "          checkpoint_io_lab_release: %s" % node["release"],
            "          checkpoint_io_lab_os_serial: %s" % OS_SERIAL,
            "          checkpoint_io_lab_data_serials: %s" % json.dumps(data),
            "          checkpoint_io_lab_neighbour_serials: %s" % json.dumps(neighbours),
            "          checkpoint_io_data_drives:",
            "            serials: %s" % json.dumps(data),
        ]
        # What each drive model promises (tests and the demo compare what they measure with it).
        keys = ("profile", "latency", "parallel", "mdts", "ceiling_mib_s", "knee_depth")
        models = dict((d["serial"], dict((k, d["model"][k]) for k in keys)) for d in node["drives"] if d.get("model"))
        lines.append("          checkpoint_io_lab_drive_models: %s" % json.dumps(models, sort_keys=True))
        if node.get("fabric"):
            lines += ["          checkpoint_io_lab_fabric_addr: %s" % node["fabric"]["addr"],
                      "          checkpoint_io_lab_fabric_netdev: %s" % node["fabric"].get("netdev", "")]
    path = os.path.join(state_dir, "inventory.yml")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def up(args):
    state_dir = os.path.abspath(args.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    if os.path.exists(state_file(state_dir)):
        down_dir(state_dir)
    specs = [parse_node(s) for s in (args.node or ["node1:bookworm"])]
    if len(set(name for name, release in specs)) != len(specs):
        die("node names must be unique")
    if args.data_drives < 2:
        die("--data-drives %d: a node needs at least 2 data drives" % args.data_drives)
    if not 0 <= args.neighbour_drives <= 4:
        die("--neighbour-drives %d: give 0 to 4" % args.neighbour_drives)
    if args.fabric and len(specs) != 2:
        die("--fabric joins two nodes (a target and an initiator): give exactly two --node")
    models = drive_models(args.drive_model, args.data_drives)
    accel, why = accelerator()  # before the image build: a bad NVMELAB_ACCEL fails at once
    log("accelerator: %s (%s)" % (accel, why))
    start_mode = requested_start(os.environ.get(START_ENV))
    images = {rel: build(rel) for rel in sorted(set(release for name, release in specs))}
    state = {"nodes": [], "state_dir": state_dir, "accel": accel, "accel_reason": why}
    try:
        saved = {}
        cold_why = cold_reason(start_mode, args)
        if cold_why:
            log("every node boots cold: %s" % cold_why)
        else:
            saved = dict((rel, saved_state(image, accel, args)) for rel, image in images.items())
        with port_lock():
            fabric_ports = [free_udp_port() for dummy in specs] if args.fabric else []
            start_nodes(specs, images, saved, state, state_dir, args, fabric_ports, models)
        for node in state["nodes"]:
            if node["start"]["mode"] == "saved":
                finish_restore(node)
        for node in state["nodes"]:
            timeout = RELEASES[node["release"]]["boot_timeout"] * len(state["nodes"])
            wait_ssh(node, timeout if node["start"]["mode"] == "cold" else SAVED_SSH_TIMEOUT)
            node["start"]["ssh_s"] = round(time.time() - node["start"]["at"], 1)
            node_setup(node, images[node["release"]])
            node["start"]["ready_s"] = round(time.time() - node["start"]["at"], 1)
            log("%s ready in %.1f s (%s; SSH after %.1f s)" % (
                node["name"], node["start"]["ready_s"],
                "from the saved state" if node["start"]["mode"] == "saved" else "a cold boot", node["start"]["ssh_s"]))
            if node.get("fabric"):
                node["fabric"]["netdev"] = fabric_node_setup(node)
            save_state(state_dir, state)
    except BaseException:
        log("boot failed: stopping what was started")
        down_dir(state_dir)
        raise
    inv = write_inventory(state_dir, state)
    if args.instance_config:
        write_instance_config(args.instance_config, state)
    print(inv)


def requested_start(requested):
    """The NVMELAB_START value (None or empty: saved) as one of START_CHOICES; dies naming a bad one."""
    wanted = (requested or "saved").strip().lower()
    if wanted not in START_CHOICES:
        die("%s=%r: give one of %s" % (START_ENV, requested, ", ".join(START_CHOICES)))
    return wanted


def cold_reason(start_mode, args):
    """Why the nodes of an ``up`` boot cold (None: they start from their release's saved state)."""
    if start_mode == "cold":
        return "%s=cold" % START_ENV
    if args.fabric:
        return "a fabric node has a second NIC, which the saved machine has not"
    drives = 1 + args.data_drives + args.neighbour_drives
    if drives > ROOT_PORTS:
        return "%d NVMe drives, more than the saved machine's %d PCIe root ports" % (drives, ROOT_PORTS)
    return None


def overlay(path, backing, backing_format):
    """A fresh qcow2 copy-on-write overlay at ``path`` over ``backing``."""
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", backing_format, "-b", backing, path], check=True)
    return path


def boot_disk(image):
    """The OS NVMe drive's bytes, made once per image: an ext4 /boot holding the release's kernel and initrd
    (the node boots them with -kernel; the drive is what the OS has mounted, for the tests that prove the collection
    leaves it alone). Returns (path, filesystem UUID)."""
    path = os.path.join(image["dir"], "boot.raw")
    meta = os.path.join(image["dir"], "boot.json")
    with file_lock(os.path.join(image["dir"], "boot.lock")):
        if not os.path.exists(meta):
            fs_uuid = str(uuid.uuid4())
            work = tempfile.mkdtemp(prefix="boot-", dir=image["dir"])
            try:
                tree = os.path.join(work, "tree")
                os.makedirs(tree)
                shutil.copy(image["kernel"], os.path.join(tree, "vmlinuz-" + image["kernel_version"]))
                shutil.copy(image["initrd"], os.path.join(tree, "initrd.img-" + image["kernel_version"]))
                subprocess.run(["mkfs.ext4", "-q", "-F", "-U", fs_uuid, "-L", "labboot", "-d", tree,
                                os.path.join(work, "boot.raw"), BOOT_FS_SIZE], check=True, stdout=subprocess.DEVNULL)
                os.replace(os.path.join(work, "boot.raw"), path)
                write_atomic(meta, json.dumps({"uuid": fs_uuid}) + "\n")
            finally:
                shutil.rmtree(work, ignore_errors=True)
    with open(meta) as handle:
        return path, json.load(handle)["uuid"]


_QEMU_VERSION = {}


def qemu_version():
    if "v" not in _QEMU_VERSION:
        proc = subprocess.run(["qemu-system-x86_64", "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, check=False)
        _QEMU_VERSION["v"] = (proc.stdout.splitlines() or ["unknown"])[0]
    return _QEMU_VERSION["v"]


def saved_key(image, accel, args):
    """What a saved machine depends on: a restore needs the same QEMU, devices, memory, CPUs and accelerator."""
    text = json.dumps({"v": LAYOUT_VERSION, "image": image["key"], "qemu": qemu_version(), "ports": ROOT_PORTS,
                       "accel": accel_argv(image["release"], accel), "memory": node_memory(image["release"], args), "cpus": args.cpus,
                       "kernel_args": KERNEL_ARGS}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def saved_state(image, accel, args):
    """The release's machine booted once and saved (QMP migrate to a file), cached beside its image by
    saved_key(): {dir, disk, state, meta...}. Made under a lock, so labs starting side by side make it once."""
    base = os.path.join(image["dir"], "booted-%s" % saved_key(image, accel, args))
    paths = {"dir": base, "disk": os.path.join(base, "disk.qcow2"), "state": os.path.join(base, "state.bin"),
             "meta": os.path.join(base, "saved.json")}
    with file_lock(base + ".lock"):
        if not os.path.exists(paths["meta"]):
            save_booted(image, accel, args, paths)
    with open(paths["meta"]) as handle:
        paths.update(json.load(handle))
    return paths


def save_booted(image, accel, args, paths):
    """Boot the release's machine (no NVMe controller), wait for SSH, drop the guest's page cache, then stop it and
    migrate its state to a file; the disk it booted on becomes the read-only base of every node started from it."""
    work = tempfile.mkdtemp(prefix="booting-", dir=image["dir"])
    node = {"name": "saved-" + image["release"], "release": image["release"], "accel": accel, "dir": work,
            "qmp": os.path.join(work, "qmp.sock"), "pidfile": os.path.join(work, "qemu.pid"),
            "console": os.path.join(work, "console.log"), "identity_file": lab_key(),
            "os_overlay": overlay(os.path.join(work, "disk.qcow2"), image["image"], "raw")}
    log("saving a booted %s machine (once per image, QEMU and machine: %s)" % (image["release"], paths["dir"]))
    start = time.time()
    try:
        with port_lock():
            node["ssh_port"] = free_port()
            subprocess.run(qemu_argv(node, image, work, args), check=True, stdin=subprocess.DEVNULL)
        wait_ssh(node, RELEASES[image["release"]]["boot_timeout"])
        boot_s = time.time() - start
        ssh_script(node, "sync; echo 3 > /proc/sys/vm/drop_caches")
        saving = time.time()
        qmp(node, "stop")
        qmp(node, "migrate", {"uri": "exec:cat > %s" % shlex.quote(os.path.join(work, "state.bin"))})
        deadline = time.time() + 300
        while True:
            status = qmp(node, "query-migrate").get("status")
            if status == "completed":
                break
            if status in ("failed", "cancelled") or time.time() > deadline:
                raise RuntimeError("saving the %s machine: migration %s" % (image["release"], status or "timed out"))
            time.sleep(0.1)
        meta = {"release": image["release"], "qemu": qemu_version(), "cold_boot_s": round(boot_s, 1),
                "save_s": round(time.time() - saving, 1), "state_bytes": os.path.getsize(os.path.join(work, "state.bin"))}
        stop_node(node)
        os.chmod(os.path.join(work, "disk.qcow2"), 0o444)  # the base of every node's overlay: never written again
        write_atomic(os.path.join(work, "saved.json"), json.dumps(meta, indent=2) + "\n")
        shutil.rmtree(paths["dir"], ignore_errors=True)
        os.rename(work, paths["dir"])
    except BaseException:
        stop_node(node)
        shutil.rmtree(work, ignore_errors=True)
        raise
    log("saved the %s machine: SSH after %.1f s, saved in %.1f s (%d MiB)"
        % (image["release"], meta["cold_boot_s"], meta["save_s"], meta["state_bytes"] >> 20))


def start_nodes(specs, images, saved, state, state_dir, args, fabric_ports, models):
    """Start each node of specs (its overlays, data files, drive-model servers, QEMU): from its release's saved
    state where ``saved`` has one (QEMU loads it in the background: finish_restore() completes it), else a cold
    boot. Recorded in state as it goes, so that `down` stops what was started."""
    for name, release in specs:
        ndir = os.path.join(state_dir, name)
        shutil.rmtree(ndir, ignore_errors=True)
        os.makedirs(ndir)
        image = images[release]
        from_saved = saved.get(release)
        root = (overlay(os.path.join(ndir, "os.qcow2"), from_saved["disk"], "qcow2") if from_saved
                else overlay(os.path.join(ndir, "os.qcow2"), image["image"], "raw"))
        boot = overlay(os.path.join(ndir, "boot.qcow2"), boot_disk(image)[0], "raw")
        data_files = sparse_files(ndir, "data", args.data_drives, args.data_size)
        neighbour_files = sparse_files(ndir, "nbr", args.neighbour_drives, args.neighbour_size)
        node = {"name": name, "release": release, "ssh_port": free_port(), "dir": ndir,
                "qmp": os.path.join(ndir, "qmp.sock"), "pidfile": os.path.join(ndir, "qemu.pid"),
                "console": os.path.join(ndir, "console.log"), "identity_file": lab_key(),
                "os_overlay": root, "boot_overlay": boot, "data_files": data_files,
                "neighbour_files": neighbour_files, "kernel_version": image["kernel_version"],
                "accel": state.get("accel", "tcg"), "models": {},
                "start": {"mode": "saved" if from_saved else "cold"}}
        if args.fabric:
            index = len(state["nodes"])
            node["fabric"] = {"port": fabric_ports[index], "peer_port": fabric_ports[1 - index],
                              "mac": FABRIC_MAC % (index + 1), "addr": FABRIC_NET % (index + 1)}
        state["nodes"].append(node)
        save_state(state_dir, state)  # from here on, `down` stops what this node started
        for dev_id, model in sorted(models.items()):
            node["models"][dev_id] = start_model_server(ndir, dev_id, data_files[int(dev_id[4:]) - 1], model)
            save_state(state_dir, state)
        node["drives"] = drive_plan(node, args)
        if from_saved:
            argv = qemu_argv(node, image, ndir, args) + ["-incoming", "exec:cat %s" % shlex.quote(from_saved["state"])]
        else:
            argv = qemu_argv(node, image, ndir, args, node["drives"])
        with open(os.path.join(ndir, "qemu.argv"), "w") as handle:
            handle.write(" ".join(argv) + "\n")
        node["start"]["at"] = time.time()
        subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
        save_state(state_dir, state)
        log("started %s (%s, kernel %s, %s) ssh port %d"
            % (name, release, image["kernel_version"], "from the saved state" if from_saved else "cold boot",
               node["ssh_port"]))


def finish_restore(node, timeout=120):
    """Wait until QEMU has loaded the saved state, run the machine, and hot-add its NVMe controllers."""
    deadline = time.time() + timeout
    status = None
    while True:
        if not pid_alive(read_pid(node["pidfile"])):
            raise RuntimeError("%s: QEMU exited loading the saved state (%s=cold boots without it; deleting the "
                               "booted-* directory beside the image saves it again)" % (node["name"], START_ENV))
        try:
            status = qmp(node, "query-status").get("status")
        except (OSError, ValueError, RuntimeError):
            status = None  # the monitor is not up yet
        if status and status != "inmigrate":
            break
        if time.time() > deadline:
            raise RuntimeError("%s: the saved state did not load within %d s (status %s)"
                               % (node["name"], timeout, status))
        time.sleep(0.05)
    if status != "running":
        qmp(node, "cont")
    node["start"]["restored_s"] = round(time.time() - node["start"]["at"], 1)
    for drive in node["drives"]:
        attach(node, drive)


def attach(node, drive, backend=None):
    """Hot-add a drive's NVMe controller on its root port: a block node over its bytes (a file, or the nbdkit
    server of its drive model; ``backend`` names one that exists) and the controller with its serial and
    properties."""
    if backend is None:
        backend = "hp-%s-%d" % (drive["id"], int(time.time() * 1000))
        model = drive.get("model")
        source = ({"driver": "nbd", "server": {"type": "unix", "path": model["socket"]}} if model
                  else {"driver": "file", "filename": drive["backing"]})
        qmp(node, "blockdev-add", {"driver": drive["format"], "node-name": backend, "file": source})
    qmp(node, "device_add", dict({"driver": "nvme", "id": drive["id"], "serial": drive["serial"], "drive": backend,
                                  "bus": drive["bus"]}, **drive.get("props", {})))
    return backend


def node_setup(node, image):
    """After a node answers on SSH: a restored node gets the time, a machine id and entropy of its own; every node
    waits for its NVMe drives (each serial with a namespace) and mounts the OS drive on /boot (fstab too, so a
    reboot mounts it again)."""
    restored = node["start"]["mode"] == "saved"
    ssh_script(node, NODE_SETUP_SCRIPT % {
        "restored": "1" if restored else "",
        "machine_id": uuid.uuid4().hex, "entropy": os.urandom(64).hex(),
        "serials": " ".join(d["serial"] for d in node["drives"]), "os": OS_SERIAL,
        "boot_uuid": boot_disk(image)[1], "timeout": DRIVES_TIMEOUT})


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ssh_script(node, script):
    """Run a shell script on a node as root; its stdout (stripped), or RuntimeError with its stderr."""
    proc = subprocess.run(ssh_argv(node, ["sh", "-s"]), input=script, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300, check=False)
    if proc.returncode:
        raise RuntimeError("%s: script failed (rc %d): %s" % (node["name"], proc.returncode, proc.stderr.strip()))
    return proc.stdout.strip()


def fabric_node_setup(node):
    """The fabric NIC's address and the soft-RoCE device on a node; returns the NIC's name there."""
    fabric = node["fabric"]
    netdev = ssh_script(node, FABRIC_NODE_SCRIPT % {"mac": fabric["mac"], "addr": fabric["addr"]})
    log("%s: fabric NIC %s at %s, rxe0 on it" % (node["name"], netdev, fabric["addr"]))
    return netdev


def fabric_target(node, nqn, qid_max):
    """Export a fabric node's data drives with nvmet over tcp and rdma; returns what an inventory names."""
    if not node.get("fabric"):
        die("%s has no fabric NIC: start the lab with up --fabric" % node["name"])
    serials = [d["serial"] for d in node["drives"] if not d["os_drive"] and not d.get("neighbour")]
    nqn = nqn or FABRIC_NQN % node["name"]
    ports = " ".join("%s:%d" % item for item in sorted(FABRIC_PORTS.items()))
    ssh_script(node, FABRIC_TARGET_SCRIPT % {"nqn": nqn, "qid_max": qid_max or "", "serials": " ".join(serials),
                                             "ports": ports, "addr": node["fabric"]["addr"]})
    result = {"nqn": nqn, "address": node["fabric"]["addr"], "ports": FABRIC_PORTS, "namespaces": len(serials),
              "qid_max": qid_max}
    log("%s exports %s (%d namespaces) on %s tcp:%d rdma:%d"
        % (node["name"], nqn, len(serials), result["address"], FABRIC_PORTS["tcp"], FABRIC_PORTS["rdma"]))
    return result


def link_delay(node, delay_ms):
    """A netem delay (ms) on the node's fabric NIC, 0 to remove it."""
    if not node.get("fabric"):
        die("%s has no fabric NIC: start the lab with up --fabric" % node["name"])
    dev = node["fabric"]["netdev"]
    if delay_ms:
        ssh_script(node, "tc qdisc replace dev %s root netem delay %gms" % (dev, delay_ms))
    else:
        ssh_script(node, "tc qdisc del dev %s root 2>/dev/null || true" % dev)
    log("%s: %s netem delay %g ms" % (node["name"], dev, delay_ms))


def sparse_files(ndir, prefix, count, size):
    """Fresh sparse drive files PREFIX1.raw ... PREFIXcount.raw of ``size`` in the node's directory."""
    paths = []
    for i in range(1, count + 1):
        path = os.path.join(ndir, "%s%d.raw" % (prefix, i))
        with open(path, "wb") as handle:
            handle.truncate(parse_gib(size))
        paths.append(path)
    return paths


def write_instance_config(path, state):
    """Molecule's instance config (its delegated driver reads login details from it)."""
    lines = []
    for node in state["nodes"]:
        lines += ["- instance: %s" % node["name"], "  address: 127.0.0.1", "  user: root",
                  "  port: %d" % node["ssh_port"], "  identity_file: %s" % node["identity_file"]]
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def parse_gib(text):
    units = {"G": 1 << 30, "M": 1 << 20}
    text = str(text).strip().upper().rstrip("IB").rstrip("B")
    if text[-1:] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def stop_node(node, grace=15):
    pid = read_pid(node["pidfile"])
    if not pid_alive(pid):
        return
    try:
        qmp(node, "quit")
    except (OSError, RuntimeError, ValueError):
        pass
    deadline = time.time() + grace
    while pid_alive(pid) and time.time() < deadline:
        time.sleep(0.2)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)


def stop_model_servers(node):
    for rec in node.get("models", {}).values():
        pid = read_pid(rec["pidfile"])
        if pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
            deadline = time.time() + 5
            while pid_alive(pid) and time.time() < deadline:
                time.sleep(0.1)
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        for path in (rec["socket"], rec["pidfile"], rec["rate_file"], rec["error_file"]):
            try:
                os.unlink(path)
            except OSError:
                pass


def down_dir(state_dir, keep_files=False):
    try:
        with open(state_file(state_dir)) as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        state = {}
    for node in state.get("nodes", []):
        stop_node(node)
        stop_model_servers(node)
        log("stopped %s" % node["name"])
        if not keep_files:
            for path in [node["os_overlay"], node.get("boot_overlay", "")] + node["data_files"] + node.get("neighbour_files", []):
                try:
                    os.unlink(path)
                except OSError:
                    pass
    for path in (state_file(state_dir), registry_entry(state_dir)):
        try:
            os.unlink(path)
        except OSError:
            pass


def down_all():
    """Stop every registered lab; where ``NVMELAB_RUN`` is set, only the labs that run started."""
    run = os.environ.get("NVMELAB_RUN", "")
    for entry in sorted(os.listdir(registry())):
        with open(os.path.join(registry(), entry)) as handle:
            lines = handle.read().splitlines()
        state_dir, owner = (lines + ["", ""])[:2]
        if run and owner != run:
            continue
        log("down %s" % state_dir)
        down_dir(state_dir)


def find_node(state, name):
    for node in state["nodes"]:
        if node["name"] == name:
            return node
    die("no node %r (nodes: %s)" % (name, ", ".join(n["name"] for n in state["nodes"])))


def model_of(node, drive_id, what):
    drive = find_drive(node, drive_id)
    if not drive.get("model"):
        die("%s %s is a plain drive: %s needs a drive model (up --drive-model ...)" % (node["name"], drive["id"], what))
    return drive, drive["model"]


def throttle(node, drive_id, value):
    """Cap a model drive at PERCENT of its ceiling (``off``: back to its own ceiling), live."""
    drive, model = model_of(node, drive_id, "throttle")
    if value == "off":
        mib_s = model["ceiling"]
    else:
        try:
            pct = float(value.rstrip("%"))
        except ValueError:
            pct = -1
        if not 0 < pct <= 100:
            die("throttle %r: give a percentage in (0, 100] of the drive's ceiling, or off" % value)
        mib_s = model["ceiling_mib_s"] * pct / 100.0
    write_atomic(model["rate_file"], "%d\n" % rate_bits(mib_s))
    log("%s %s ceiling %.1f MiB/s (model: %.1f)" % (node["name"], drive["id"], mib_s, model["ceiling_mib_s"]))


def fail_io(node, drive_id, value):
    """Make a model drive's writes (and write-zeroes) fail with EIO (``on``) or succeed again (``off``)."""
    drive, model = model_of(node, drive_id, "fail-io")
    if value == "on":
        write_atomic(model["error_file"], "fail-io\n")
    else:
        try:
            os.unlink(model["error_file"])
        except OSError:
            pass
    log("%s %s writes %s" % (node["name"], drive["id"], "fail with EIO" if value == "on" else "succeed"))


def guest_controllers(node):
    """{serial: has a namespace} of the NVMe controllers the node's kernel lists now (None: no SSH answer)."""
    script = ("for c in /sys/class/nvme/nvme*; do [ -e \"$c/serial\" ] || continue; "
              "n=$(ls -d \"$c\"/nvme*n* 2>/dev/null | head -n 1); echo \"$(cat \"$c/serial\") ${n:+ns}\"; done")
    try:
        proc = subprocess.run(ssh_argv(node, [script]), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        return None
    return dict((words[0], len(words) > 1) for words in (line.split() for line in proc.stdout.splitlines()) if words)


def wait_guest_drive(node, drive, present, timeout=180):
    """Wait until the node's kernel lists (``present``) or no longer lists the drive's serial (with a namespace)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        seen = guest_controllers(node)
        if seen is not None and bool(seen.get(drive["serial"])) == present:
            return
        time.sleep(1)
    state = "does not list" if present else "still lists"
    die("%s: the node's kernel %s %s (%s) after %d s" % (node["name"], state, drive["id"], drive["serial"], timeout))


def plugged(node, dev_id):
    """Whether QEMU has the device now (a device_del completes once the guest lets it go)."""
    return any(entry["name"] == dev_id for entry in qmp(node, "qom-list", {"path": "/machine/peripheral"}))


def hot_remove(node, drive_id, wait):
    """device_del a data or neighbour drive: the guest sees its controller leave the PCIe root port."""
    drive = find_drive(node, drive_id)
    if drive["os_drive"]:
        die("%s is the OS drive of %s: refusing to remove it" % (drive["id"], node["name"]))
    qmp(node, "device_del", {"id": drive["id"]})
    log("%s: device_del %s requested" % (node["name"], drive["id"]))
    if wait:
        deadline = time.time() + 120
        while plugged(node, drive["id"]) and time.time() < deadline:
            time.sleep(0.5)
        wait_guest_drive(node, drive, present=False)
        log("%s: %s (%s) is gone" % (node["name"], drive["id"], drive["serial"]))


def hot_add(node, drive_id, wait):
    """Plug a hot-removed drive back: the same serial, root port and bytes (its nbdkit server or file)."""
    drive = find_drive(node, drive_id)
    if drive["os_drive"]:
        die("%s is the OS drive of %s: it is never removed, so never added" % (drive["id"], node["name"]))
    if plugged(node, drive["id"]):
        die("%s %s is plugged in: hot-remove it first" % (node["name"], drive["id"]))
    legacy = [b for b in qmp(node, "query-block") if b.get("device") == "drv-" + drive["id"]]
    if legacy and not legacy[0].get("qdev"):
        attach(node, drive, "drv-" + drive["id"])  # the -drive backend outlived its device
    else:
        # QEMU deletes a -drive backend with its device: a new one over the same bytes (an earlier hot-add's
        # backend, detached by a later hot-remove, goes first).
        for entry in qmp(node, "query-named-block-nodes"):
            if entry.get("node-name", "").startswith("hp-%s-" % drive["id"]):
                try:
                    qmp(node, "blockdev-del", {"node-name": entry["node-name"]})
                except RuntimeError:
                    pass
        attach(node, drive)
    log("%s: device_add %s (%s) on %s" % (node["name"], drive["id"], drive["serial"], drive["bus"]))
    if wait:
        wait_guest_drive(node, drive, present=True)
        log("%s: %s (%s) is back" % (node["name"], drive["id"], drive["serial"]))


def tool(node, name, action):
    """Make a tool absent from the node (its binaries renamed NAME.nvmelab-hidden) or put it back."""
    if not name or "/" in name or not all(c.isalnum() or c in "._-+" for c in name):
        die("tool %r: give a command name (nvme, fio, ...)" % name)
    dirs = "/usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin"
    if action == "hide":
        script = ('for d in %s; do [ -L "$d" ] && continue; [ -e "$d/%s" ] && mv "$d/%s" "$d/%s%s"; done; '
                  '! command -v %s' % (dirs, name, name, name, HIDDEN_SUFFIX, name))
    else:
        script = ('for d in %s; do [ -L "$d" ] && continue; [ -e "$d/%s%s" ] && mv "$d/%s%s" "$d/%s"; done; '
                  'command -v %s' % (dirs, name, HIDDEN_SUFFIX, name, HIDDEN_SUFFIX, name, name))
    proc = subprocess.run(ssh_argv(node, [script]), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=60, check=False)
    if proc.returncode != 0:
        die("%s: tool %s %s failed: %s" % (node["name"], name, action, proc.stdout.strip()))
    log("%s: %s %s" % (node["name"], name, "is absent" if action == "hide" else "is back at " + proc.stdout.strip()))


def set_sysctl(node, assignment):
    key, eq, value = assignment.partition("=")
    if not eq or not key or not all(c.isalnum() or c in "._-/" for c in key) or not value.strip():
        die("sysctl %r: give KEY=VALUE (kernel.io_uring_disabled=2)" % assignment)
    proc = subprocess.run(ssh_argv(node, ["sysctl", "-w", "%s=%s" % (key, value.strip())]), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=60,
                          check=False)
    if proc.returncode != 0:
        die("%s: sysctl -w %s failed: %s" % (node["name"], assignment, proc.stdout.strip()))
    log("%s: %s" % (node["name"], proc.stdout.strip()))


def find_drive(node, drive_id):
    for drive in node["drives"]:
        if drive_id in (drive["id"], drive["serial"]):
            return drive
    die("no drive %r on %s (drives: %s)" % (drive_id, node["name"], ", ".join(d["id"] for d in node["drives"])))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("build", help="build (or reuse) the cached image of a release")
    p.add_argument("--release", action="append", choices=sorted(RELEASES))
    p = sub.add_parser("up", help="boot nodes, wait for SSH, write inventory.yml")
    p.add_argument("--state-dir", required=True)
    p.add_argument("--node", action="append", help="NAME[:RELEASE], repeatable (default node1:bookworm)")
    p.add_argument("--data-drives", type=int, default=2)
    p.add_argument("--data-size", default="4G")
    p.add_argument("--max-ioqpairs", type=int, default=8)
    p.add_argument("--mdts", type=int, default=7)
    p.add_argument("--memory", type=int, default=2048)
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--instance-config", help="also write Molecule's instance_config.yml here")
    p.add_argument("--neighbour-drives", type=int, default=0,
                   help="extra plain drives (nbr1..., serials NBR0001...) that are not data drives")
    p.add_argument("--neighbour-size", default="256M")
    p.add_argument("--drive-model", action="append",
                   help="[DRIVE:]PROFILE or [DRIVE:]latency=MS,ceiling=SIZE[,parallel=N,read_latency=MS,mdts=N]"
                        " (repeatable; profiles: %s)" % ", ".join(sorted(DRIVE_MODELS)))
    p.add_argument("--fabric", action="store_true",
                   help="join the two nodes by a private fabric link (10.77.0.N, soft-RoCE rxe0 on it)")
    p = sub.add_parser("fabric-target", help="export a fabric node's data drives with nvmet (tcp 4420, rdma 4421)")
    p.add_argument("--state-dir", required=True)
    p.add_argument("node")
    p.add_argument("--nqn", help="the subsystem NQN (default %s)" % (FABRIC_NQN % "NODE"))
    p.add_argument("--qid-max", type=int, help="the most I/O queues the subsystem grants a controller")
    p = sub.add_parser("link-delay", help="tc netem delay on a node's fabric NIC (0 removes it)")
    p.add_argument("--state-dir", required=True)
    p.add_argument("node")
    p.add_argument("delay_ms", type=float)
    p = sub.add_parser("down", help="stop every node and remove its disks")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--state-dir")
    group.add_argument("--all", action="store_true",
                       help="every lab started from this cache (where NVMELAB_RUN is set: that run's)")
    p = sub.add_parser("status", help="show nodes")
    p.add_argument("--state-dir", required=True)
    p = sub.add_parser("ssh", help="run a command on a node")
    p.add_argument("--state-dir", required=True)
    p.add_argument("node")
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("critical-warning", help="set a drive's smart_critical_warning (0 clears)")
    p.add_argument("--state-dir", required=True)
    p.add_argument("node")
    p.add_argument("drive")
    p.add_argument("value", type=int)
    for cmd, what in (("hot-remove", "device_del a data or neighbour drive"),
                      ("hot-add", "plug a hot-removed drive back (same serial, bytes and root port)")):
        p = sub.add_parser(cmd, help=what)
        p.add_argument("--state-dir", required=True)
        p.add_argument("node")
        p.add_argument("drive")
        p.add_argument("--wait", action="store_true", help="return once the node's kernel agrees")
    p = sub.add_parser("tool", help="make a tool absent from a node (hide) or put it back (restore)")
    p.add_argument("--state-dir", required=True)
    p.add_argument("node")
    p.add_argument("tool")
    p.add_argument("action", choices=["hide", "restore"])
    p = sub.add_parser("sysctl", help="sysctl -w KEY=VALUE on a node")
    p.add_argument("--state-dir", required=True)
    p.add_argument("node")
    p.add_argument("assignment", metavar="KEY=VALUE")
    p = sub.add_parser("reboot", help="reboot a node and wait for SSH")
    p.add_argument("--state-dir", required=True)
    p.add_argument("node")
    p.add_argument("--hard", action="store_true", help="QMP system_reset instead of a clean reboot")
    p.add_argument("--timeout", type=int, help="seconds to wait for SSH (default: the release's boot timeout)")
    for cmd, choice_help in (("throttle", "PERCENT of the drive model's ceiling, or off"),
                             ("fail-io", "on or off")):
        p = sub.add_parser(cmd, help="%s a drive-model data drive: %s" % (cmd, choice_help))
        p.add_argument("--state-dir", required=True)
        p.add_argument("node")
        p.add_argument("drive")
        p.add_argument("value", help=choice_help)
    sub.add_parser("models", help="list the named drive models")
    args = parser.parse_args(argv)

    if args.cmd == "models":
        for name, model in sorted(DRIVE_MODELS.items()):
            print("%-10s %s" % (name, model["help"]))
        return 0

    if args.cmd == "build":
        for rel in args.release or ["bookworm"]:
            print(json.dumps(build(rel)))
        return 0
    if args.cmd == "up":
        up(args)
        return 0
    if args.cmd == "down" and args.all:
        down_all()
        return 0
    state_dir = os.path.abspath(args.state_dir)
    if args.cmd == "down":
        down_dir(state_dir)
        return 0
    state = load_state(state_dir)
    if args.cmd == "status":
        for node in state["nodes"]:
            alive = pid_alive(read_pid(node["pidfile"]))
            print("%-10s %-9s port %-6d %s"
                  % (node["name"], node["release"], node["ssh_port"], "running" if alive else "stopped"))
        return 0
    node = find_node(state, args.node)
    if args.cmd == "ssh":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        return subprocess.call(ssh_argv(node, command or None))
    if args.cmd == "critical-warning":
        drive = find_drive(node, args.drive)
        # The absolute path: a partial one ("data1") is ambiguous, the controller's NVMe bus has the same name.
        qmp(node, "qom-set", {"path": "/machine/peripheral/" + drive["id"], "property": "smart_critical_warning",
                              "value": args.value})
        log("%s %s smart_critical_warning=%d" % (node["name"], drive["id"], args.value))
        return 0
    if args.cmd == "hot-remove":
        hot_remove(node, args.drive, args.wait)
        return 0
    if args.cmd == "hot-add":
        hot_add(node, args.drive, args.wait)
        return 0
    if args.cmd == "tool":
        tool(node, args.tool, args.action)
        return 0
    if args.cmd == "sysctl":
        set_sysctl(node, args.assignment)
        return 0
    if args.cmd == "throttle":
        throttle(node, args.drive, args.value)
        return 0
    if args.cmd == "fail-io":
        if args.value not in ("on", "off"):
            die("fail-io %r: give on or off" % args.value)
        fail_io(node, args.drive, args.value)
        return 0
    if args.cmd == "fabric-target":
        print(json.dumps(fabric_target(node, args.nqn, args.qid_max)))
        return 0
    if args.cmd == "link-delay":
        link_delay(node, args.delay_ms)
        return 0
    if args.cmd == "reboot":
        if args.hard:
            qmp(node, "system_reset")
        else:
            subprocess.call(ssh_argv(node, ["systemctl", "reboot"]), stdin=subprocess.DEVNULL)
        time.sleep(5)
        wait_ssh(node, args.timeout or RELEASES[node["release"]]["boot_timeout"])
        log("%s is back" % node["name"])
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
