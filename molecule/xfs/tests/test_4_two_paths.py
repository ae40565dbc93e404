"""One namespace reached through two block devices, on the lab node's real kernel: nvmet exports one file-backed
namespace through two NVMe/TCP subsystems on 127.0.0.1 with the same serial and model and no NGUID/UUID, and the
node connects to both. The kernel cannot merge them into one native-multipath head (two subsystems), so it shows
two block devices with one WWID: what a dual-ported drive or an NVMe-oF namespace looks like without native
multipath. Before issue 12 the role planned `mdadm --create ... <both devices>` (RAID0 over the same blocks twice,
measured with the old role in check mode); now every path is refused, whatever selected it, and nothing changes.
"""
import json

import pytest

from xfs_node import playbook

NQN = "nqn.2026-12.io.lab:dual-"
SERIAL = "FABRIC0001"
SETUP = r"""
set -e
modprobe -a nvmet nvmet-tcp nvme-tcp nvme-fabrics
truncate -s 64M /var/tmp/fabric0.img
C=/sys/kernel/config/nvmet
mkdir -p $C/ports/1
echo tcp > $C/ports/1/addr_trtype; echo ipv4 > $C/ports/1/addr_adrfam
echo 127.0.0.1 > $C/ports/1/addr_traddr; echo 4420 > $C/ports/1/addr_trsvcid
for i in a b; do
    nqn=@NQN@$i
    mkdir -p $C/subsystems/$nqn
    echo 1 > $C/subsystems/$nqn/attr_allow_any_host
    echo @SERIAL@ > $C/subsystems/$nqn/attr_serial
    echo "Lab dual port" > $C/subsystems/$nqn/attr_model
    mkdir -p $C/subsystems/$nqn/namespaces/1
    echo /var/tmp/fabric0.img > $C/subsystems/$nqn/namespaces/1/device_path
    echo 00000000-0000-0000-0000-000000000000 > $C/subsystems/$nqn/namespaces/1/device_uuid
    echo 1 > $C/subsystems/$nqn/namespaces/1/enable
    ln -s $C/subsystems/$nqn $C/ports/1/subsystems/$nqn
    nvme connect -t tcp -a 127.0.0.1 -s 4420 -n $nqn >/dev/null
done
udevadm settle --timeout=60
""".replace("@NQN@", NQN).replace("@SERIAL@", SERIAL)
TEARDOWN = r"""
for ctrl in /sys/class/nvme/nvme*; do
    case "$(cat $ctrl/subsysnqn)" in @NQN@*) nvme disconnect -d $(basename $ctrl) >/dev/null;; esac
done
C=/sys/kernel/config/nvmet
for i in a b; do
    nqn=@NQN@$i
    rm -f $C/ports/1/subsystems/$nqn
    [ -d $C/subsystems/$nqn ] || continue
    echo 0 > $C/subsystems/$nqn/namespaces/1/enable
    rmdir $C/subsystems/$nqn/namespaces/1 $C/subsystems/$nqn
done
rmdir $C/ports/1 2>/dev/null || true
rm -f /var/tmp/fabric0.img
""".replace("@NQN@", NQN)
PATHS = r"""
python3 - <<'PY'
import hashlib, json, os, re
out = {}
for name in sorted(os.listdir("/sys/block")):
    base = "/sys/block/" + name
    if re.match(r"^nvme[0-9]+n[0-9]+$", name) and open(base + "/device/subsysnqn").read().startswith("@NQN@"):
        out[name] = open(base + "/wwid").read().strip()
holders = sorted(h for ns in out for h in os.listdir("/sys/block/%s/holders" % ns))
digest = hashlib.sha256(open("/var/tmp/fabric0.img", "rb").read()).hexdigest()
print(json.dumps({"paths": out, "holders": holders, "digest": digest, "mdstat": open("/proc/mdstat").read()}))
PY
""".replace("@NQN@", NQN)


@pytest.fixture(scope="module")
def two_paths(host):
    host.run(TEARDOWN)
    host.check_output(SETUP)
    try:
        yield json.loads(host.check_output(PATHS))
    finally:
        host.run(TEARDOWN)


@pytest.mark.parametrize("selection", [{"serials": [SERIAL]}, {"models": ["^Lab dual"]}], ids=["serial", "model"])
def test_both_paths_of_one_namespace_are_refused_and_nothing_changes(host, two_paths, selection):
    paths = sorted(two_paths["paths"])
    assert len(paths) == 2 and len(set(two_paths["paths"].values())) == 1, two_paths  # two devices, one WWID
    wwid = two_paths["paths"][paths[0]]
    rc, out, dummy = playbook(json.dumps({"checkpoint_io_data_drives": selection,
                                          "checkpoint_io_state_dir": "/var/lib/ai_storage_checkpoint_io_two_paths",
                                          "xfs_mount_point": "/mnt/two_paths", "xfs_checkpoint_dir": "/mnt/two_paths",
                                          "xfs_md_name": "twopaths"}))
    assert rc != 0
    assert ("checkpoint_io_data_drives matches a namespace the node reaches through more than one block device: "
            "/dev/%s and /dev/%s are one namespace reached through 2 block devices (the same WWID %s)"
            % (paths[0], paths[1], wwid)) in out
    assert "nvme_core.multipath=Y" in out and "Nothing was changed" in out
    after = json.loads(host.check_output(PATHS))
    assert after == two_paths  # no holder, the same bytes, the same arrays
