"""module_utils/nvme/nvme_ioctl.py against nvme-cli on a real kernel: one bookworm node, its idle data drives' SMART log
and Identify Controller read both ways must agree field by field, once normalised by nvme_cli's parsers (the OS
drive is left out: it is read while the test runs, so its data-unit counters move between the two reads). The time
per read of each way is printed (not asserted: a ratio in the log, never a threshold)."""
import json
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = [sys.executable, os.path.join(ROOT, "lab", "nvmelab.py")]
UTILS = os.path.join(ROOT, "plugins", "module_utils")
PKG = "/tmp/checkpoint_io_pkg"
MODULE_UTILS = PKG + "/ansible_collections/ai_storage/checkpoint_io/plugins/module_utils"
COMPARE = r"""
import glob, json, subprocess, sys, time
sys.path.insert(0, '@PKG@')
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import nvme_cli, nvme_ioctl
out = {}
for ctrl in sorted(c for c in glob.glob('/dev/nvme[0-9]*') if c[len('/dev/nvme'):].isdigit()):
    def cli(*args):
        return subprocess.run(['nvme'] + list(args) + [ctrl, '-o', 'json'], capture_output=True, text=True).stdout
    smart, ident = nvme_ioctl.read_smart_log(ctrl), nvme_ioctl.read_id_ctrl(ctrl)
    start = time.perf_counter()
    for _ in range(100):
        nvme_ioctl.read_smart_log(ctrl)
    ioctl_ms = (time.perf_counter() - start) * 10
    start = time.perf_counter()
    for _ in range(10):
        cli('smart-log')
    cli_ms = (time.perf_counter() - start) * 100
    by_cli = {'smart': nvme_cli.parse_smart_log(cli('smart-log')), 'id': nvme_cli.parse_id_ctrl(cli('id-ctrl'))}
    out[ctrl] = {'serial': ident['serial'], 'ioctl': {'smart': smart, 'id': ident}, 'cli': by_cli,
                 'ioctl_ms': ioctl_ms, 'cli_ms': cli_ms}
print(json.dumps(out))
"""


def lab(*args, check=True, **kwargs):
    return subprocess.run(LAB + list(args), check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=900, **kwargs)


@pytest.fixture(scope="module")
def readings():
    with tempfile.TemporaryDirectory(prefix="nvme-ioctl-") as tmp:
        state = os.path.join(tmp, "lab")
        up = lab("up", "--state-dir", state, "--node", "node1:bookworm", check=False)
        try:
            assert up.returncode == 0, up.stdout
            files = subprocess.run(["tar", "-C", UTILS, "-cf", "-", "nvme/nvme_ioctl.py", "nvme/nvme_cli.py",
                                    "common/units.py"],
                                   check=True, stdout=subprocess.PIPE).stdout
            dirs = [PKG + "/ansible_collections", PKG + "/ansible_collections/ai_storage",
                    PKG + "/ansible_collections/ai_storage/checkpoint_io",
                    PKG + "/ansible_collections/ai_storage/checkpoint_io/plugins", MODULE_UTILS,
                    MODULE_UTILS + "/nvme", MODULE_UTILS + "/common"]
            copy = subprocess.run(LAB + ["ssh", "--state-dir", state, "node1", "--",
                                         "mkdir -p %s && tar -C %s -xf - && touch %s" % (
                                             MODULE_UTILS, MODULE_UTILS, " ".join(d + "/__init__.py" for d in dirs))],
                                  input=files, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                                  check=False)
            assert copy.returncode == 0, copy.stdout
            run = lab("ssh", "--state-dir", state, "node1", "--", "python3 -", input=COMPARE.replace("@PKG@", PKG))
            yield json.loads(run.stdout[run.stdout.index("{"):])
        finally:
            lab("down", "--state-dir", state, check=False)


def test_the_ioctl_and_nvme_cli_agree_field_by_field(readings):
    data = dict((ctrl, r) for ctrl, r in readings.items() if r["serial"].startswith("DATA"))
    assert len(data) >= 2, readings.keys()
    for ctrl, reading in sorted(readings.items()):
        print("%s (%s): ioctl %.2f ms per SMART read, nvme smart-log %.1f ms: %.0fx" % (
            ctrl, reading["serial"], reading["ioctl_ms"], reading["cli_ms"], reading["cli_ms"] / reading["ioctl_ms"]))
    for ctrl, reading in sorted(data.items()):
        for page in ("smart", "id"):
            assert reading["ioctl"][page]["errors"] == {}, (ctrl, page, reading["ioctl"][page])
            assert reading["ioctl"][page] == reading["cli"][page], (ctrl, page)
        assert reading["ioctl"]["id"]["wctemp_c"] and reading["ioctl"]["smart"]["temperature_c"]
