"""The lab's accelerator choice (lab/nvmelab.py): KVM where QEMU can use it, else TCG with the reason; both outcomes
from what the probe found, without starting QEMU (the probe's effects are injected)."""
import importlib.util
import os
import types

import pytest

# the repository root: three folders up from this file's (tests/unit/lab)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SPEC = importlib.util.spec_from_file_location("nvmelab", os.path.join(ROOT, "lab", "nvmelab.py"))
nvmelab = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(nvmelab)

# What QEMU 7.2 printed on this project's machine (/dev/kvm opens; the vCPU reset aborts), monitor prompt included.
MSR_ABORT = ("QEMU 7.2.22 monitor - type 'help' for more information\n"
             "(qemu) qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n"
             "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion failed.\n")


@pytest.fixture(autouse=True)
def _fresh_verdict(monkeypatch):
    monkeypatch.setattr(nvmelab, "_ACCEL", {})


def test_kvm_when_the_device_opens_and_qemu_runs_on_it():
    assert nvmelab.choose_accel(None, None, (0, "QEMU 7.2.22 monitor\n(qemu) quit\n", False)) == (
        "kvm", "QEMU runs a paused machine on /dev/kvm")
    assert nvmelab.choose_accel("auto", None, (0, "", False))[0] == "kvm"
    assert nvmelab.choose_accel(" KVM ", None, (0, "", False))[0] == "kvm"


@pytest.mark.parametrize("device_error, probe, reason", [
    ("no /dev/kvm", None, "kvm unusable: no /dev/kvm"),
    ("/dev/kvm: Permission denied", None, "kvm unusable: /dev/kvm: Permission denied"),
    (None, (-6, MSR_ABORT, False),
     "kvm unusable: qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69 (QEMU's KVM probe: killed by SIGABRT)"),
    (None, (1, "qemu-system-x86_64: -accel kvm: failed to initialize kvm: Operation not permitted\n", False),
     "kvm unusable: qemu-system-x86_64: -accel kvm: failed to initialize kvm: Operation not permitted "
     "(QEMU's KVM probe: exit 1)"),
    (None, (1, "", False), "kvm unusable: no message (QEMU's KVM probe: exit 1)"),
    (None, (0, "(qemu) qemu-system-x86_64: error: something went wrong\n", False),
     "kvm unusable: qemu-system-x86_64: error: something went wrong (QEMU's KVM probe: exit 0)"),
    (None, (None, "", True), "kvm unusable: QEMU's KVM probe did not quit within 20 s"),
])
def test_tcg_with_the_reason_when_kvm_cannot_run(device_error, probe, reason):
    assert nvmelab.choose_accel(None, device_error, probe) == ("tcg", reason)


def test_kvm_asked_where_it_cannot_run_fails_naming_why():
    with pytest.raises(ValueError, match=r"NVMELAB_ACCEL=kvm, but kvm unusable: "
                                         r"qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69"):
        nvmelab.choose_accel("kvm", None, (-6, MSR_ABORT, False))


def test_a_bad_request_names_the_value_and_the_choices():
    with pytest.raises(ValueError, match=r"NVMELAB_ACCEL='Fast': give one of auto, kvm, tcg"):
        nvmelab.choose_accel("Fast", None, None)


def test_kvm_asked_where_there_is_no_device_fails_naming_why():
    with pytest.raises(ValueError, match=r"NVMELAB_ACCEL=kvm, but kvm unusable: /dev/kvm: Permission denied"):
        nvmelab.choose_accel("kvm", "/dev/kvm: Permission denied", None)


def test_tcg_asked_never_probes():
    def boom():
        raise AssertionError("probed")
    assert nvmelab.accelerator({"NVMELAB_ACCEL": "tcg"}, opener=boom, prober=boom) == ("tcg", "NVMELAB_ACCEL=tcg")


def test_the_probe_runs_once_per_process_and_qemu_is_asked_only_when_the_device_opens():
    calls = []

    def opener():
        calls.append("open")
        return None

    def prober():
        calls.append("probe")
        return (0, "", False)
    assert nvmelab.accelerator({}, opener=opener, prober=prober)[0] == "kvm"
    assert nvmelab.accelerator({}, opener=opener, prober=prober)[0] == "kvm"
    assert calls == ["open", "probe"]
    nvmelab._ACCEL.clear()
    assert nvmelab.accelerator({}, opener=lambda: "no /dev/kvm",
                               prober=lambda: pytest.fail("probed without a device"))[0] == "tcg"


def test_a_bad_request_dies_with_the_message(capsys):
    with pytest.raises(SystemExit) as exited:
        nvmelab.accelerator({"NVMELAB_ACCEL": "gpu"}, opener=lambda: pytest.fail("opened /dev/kvm"),
                            prober=lambda: pytest.fail("probed"))
    assert exited.value.code == 2
    assert "NVMELAB_ACCEL='gpu': give one of auto, kvm, tcg" in capsys.readouterr().err


def test_kvm_asked_where_qemu_aborts_dies_with_the_reason(capsys):
    with pytest.raises(SystemExit) as exited:
        nvmelab.accelerator({"NVMELAB_ACCEL": "kvm"}, opener=lambda: None, prober=lambda: (-6, MSR_ABORT, False))
    assert exited.value.code == 2
    assert "NVMELAB_ACCEL=kvm, but kvm unusable: qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" in (
        capsys.readouterr().err)


def test_open_kvm_names_a_missing_device(tmp_path):
    assert nvmelab.open_kvm(str(tmp_path / "kvm")) == "no %s" % (tmp_path / "kvm")
    device = tmp_path / "opens"
    device.write_text("")
    assert nvmelab.open_kvm(str(device)) is None


@pytest.mark.parametrize("release, accel, expected", [
    ("bookworm", "tcg", ["-accel", "tcg,thread=multi"]),
    ("trixie", "tcg", ["-accel", "tcg,thread=single"]),  # multi-threaded TCG panics trixie's 6.12 kernel
    ("bookworm", "kvm", ["-accel", "kvm", "-cpu", "host"]),
    ("trixie", "kvm", ["-accel", "kvm", "-cpu", "host"]),
    # numpy 2.x, under the image's torch, needs x86-64-v2, which TCG's default qemu64 lacks
    ("bookworm-deepspeed", "tcg", ["-accel", "tcg,thread=multi", "-cpu", "qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt"]),
    ("bookworm-deepspeed", "kvm", ["-accel", "kvm", "-cpu", "host"]),
])
def test_qemu_argv_follows_the_verdict(tmp_path, release, accel, expected):
    node = {"name": "node1", "release": release, "accel": accel, "ssh_port": 2222, "qmp": str(tmp_path / "qmp"),
            "pidfile": str(tmp_path / "pid"), "os_overlay": str(tmp_path / "os.qcow2"),
            "boot_overlay": str(tmp_path / "boot.qcow2"),
            "data_files": [str(tmp_path / "data1"), str(tmp_path / "data2")]}
    image = {"kernel": "vmlinuz", "initrd": "initrd.img", "root_uuid": "u"}
    args = types.SimpleNamespace(memory=2048, cpus=2, max_ioqpairs=8, mdts=7)
    drives = nvmelab.drive_plan(node, args)
    argv = nvmelab.qemu_argv(node, image, str(tmp_path), args, drives)
    at = argv.index("-accel")
    assert argv[at:at + len(expected)] == expected
    assert argv.count("-accel") == 1 and ("-cpu" in argv) == (accel == "kvm" or release == "bookworm-deepspeed")
    # a rank holds its shard as a state dict: the training image's nodes get at least 4 GiB
    assert argv[argv.index("-m") + 1] == ("4096" if release == "bookworm-deepspeed" else "2048")
    assert [drive["serial"] for drive in drives] == ["OS0001", "DATA0001", "DATA0002"]


# --- starts: the saved machine and the cold boot (pure parts; the lab tiers run both for real) ---

def lab_args(**over):
    base = dict(memory=2048, cpus=2, max_ioqpairs=8, mdts=7, fabric=False, data_drives=2, neighbour_drives=0)
    base.update(over)
    return types.SimpleNamespace(**base)


def test_a_node_starts_from_the_saved_machine_unless_it_cannot():
    assert nvmelab.cold_reason("saved", lab_args()) is None
    assert nvmelab.cold_reason("saved", lab_args(neighbour_drives=4, data_drives=3)) is None  # 8 drives, 8 ports
    assert "cold" in nvmelab.cold_reason("cold", lab_args())
    assert "second NIC" in nvmelab.cold_reason("saved", lab_args(fabric=True))
    assert "9 NVMe drives" in nvmelab.cold_reason("saved", lab_args(data_drives=8))


def test_a_bad_start_request_names_the_value_and_the_choices(capsys):
    assert nvmelab.requested_start(None) == "saved" and nvmelab.requested_start(" Cold ") == "cold"
    with pytest.raises(SystemExit):
        nvmelab.requested_start("warm")
    assert "NVMELAB_START='warm': give one of saved, cold" in capsys.readouterr().err


def test_the_saved_machine_has_no_nvme_controller_and_a_cold_one_has_them_on_its_ports(tmp_path):
    node = {"name": "node1", "release": "bookworm", "accel": "tcg", "ssh_port": 2222, "qmp": "q", "pidfile": "p",
            "os_overlay": "os.qcow2", "boot_overlay": "boot.qcow2", "data_files": ["d1", "d2"],
            "neighbour_files": ["n1"]}
    image = {"kernel": "vmlinuz", "initrd": "initrd.img", "root_uuid": "u"}
    drives = nvmelab.drive_plan(node, lab_args())
    assert [(d["id"], d["serial"], d["bus"]) for d in drives] == [
        ("os", "OS0001", "rp1"), ("data1", "DATA0001", "rp2"), ("data2", "DATA0002", "rp3"), ("nbr1", "NBR0001", "rp4")]
    assert drives[1]["props"] == {"max_ioqpairs": 8, "mdts": 7} and drives[0]["os_drive"]
    saved = nvmelab.qemu_argv(node, image, str(tmp_path), lab_args())
    cold = nvmelab.qemu_argv(node, image, str(tmp_path), lab_args(), drives)
    ports = [a for a in saved if a.startswith("pcie-root-port")]
    assert len(ports) == nvmelab.ROOT_PORTS and [a for a in cold if a.startswith("pcie-root-port")] == ports
    assert not [a for a in saved if a.startswith("nvme")]
    assert "virtio-blk-pci,id=root,drive=drv-root" in saved  # the root disk: the same in both
    assert "nvme,id=data1,serial=DATA0001,drive=drv-data1,bus=rp2,max_ioqpairs=8,mdts=7" in cold
    assert cold[:len(saved)] == saved  # a cold machine is the saved one plus its controllers


def test_the_saved_machine_key_follows_what_a_restore_needs(monkeypatch):
    monkeypatch.setitem(nvmelab._QEMU_VERSION, "v", "QEMU emulator version 7.2.22")
    image = {"key": "k", "release": "bookworm"}
    key = nvmelab.saved_key(image, "tcg", lab_args())
    assert key == nvmelab.saved_key(image, "tcg", lab_args(data_drives=3))  # drives are hot-added: not in it
    for other in (nvmelab.saved_key(image, "kvm", lab_args()), nvmelab.saved_key(image, "tcg", lab_args(cpus=1)),
                  nvmelab.saved_key(image, "tcg", lab_args(memory=4096)),
                  nvmelab.saved_key(dict(image, key="k2"), "tcg", lab_args())):
        assert other != key
    monkeypatch.setitem(nvmelab._QEMU_VERSION, "v", "QEMU emulator version 8.2.2")
    assert nvmelab.saved_key(image, "tcg", lab_args()) != key
