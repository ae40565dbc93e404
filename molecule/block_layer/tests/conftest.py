# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers of the block_layer verifier: read the lab node's real /sys, run playbooks of this scenario."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared"))
from labplay import run_playbook as _run_playbook  # noqa: E402  (the shared runner of every scenario)

OS_SERIAL = "OS0001"
DATA_SERIALS = ("DATA0001", "DATA0002")
ATTRS = ("scheduler", "nr_requests", "read_ahead_kb", "max_sectors_kb", "nomerges", "rq_affinity")
# The lab's kernel defaults (bookworm 6.1, QEMU NVMe) and what converge sets (molecule.yml group_vars).
LAB_DEFAULTS = {"scheduler": "none", "nr_requests": 1023, "read_ahead_kb": 128, "max_sectors_kb": 512,
                "nomerges": 0, "rq_affinity": 1}
TUNED = {"scheduler": "none", "nr_requests": 512, "read_ahead_kb": 1024, "max_sectors_kb": 256,
         "nomerges": 2, "rq_affinity": 2}
RULE = "/etc/udev/rules.d/99-ai-storage-checkpoint-io-block.rules"
RECORD = "/var/lib/ai_storage_checkpoint_io/block_layer.json"
SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sysfs(host, path):
    return host.file(path).content_string.strip()


def namespaces(host):
    """{serial: namespace block device} of every NVMe controller, read from /sys/class/nvme (one round trip)."""
    out = host.check_output(
        'for c in /sys/class/nvme/nvme*; do n=$(ls -d "$c/$(basename "$c")"n* 2>/dev/null | head -n1); '
        'printf "%s %s\\n" "$(cat "$c/serial")" "${n##*/}"; done')
    result = {}
    for line in out.splitlines():
        fields = line.split()
        assert len(fields) == 2, "controller without namespace: %r" % line
        result[fields[0]] = fields[1]
    return result


def queues(host, names):
    """{name: the six managed attributes of /sys/block/<name>/queue}, typed like the facts (one round trip)."""
    paths = ["/sys/block/%s/queue/%s" % (name, attr) for name in names for attr in ATTRS]
    result = dict((name, {}) for name in names)
    for line in host.check_output("grep -H . " + " ".join(paths)).splitlines():
        path, _sep, text = line.partition(":")
        name, attr = path.split("/")[3], path.split("/")[5]
        text = text.strip()
        if attr == "scheduler":
            active = [t[1:-1] for t in text.split() if t.startswith("[")]
            result[name][attr] = active[0] if active else text
        else:
            result[name][attr] = int(text)
    return result


def queue(host, name):
    return queues(host, [name])[name]


def all_queues(host, names):
    """{serial: queue} of every NVMe drive of the node."""
    by_name = queues(host, list(names.values()))
    return dict((serial, by_name[name]) for serial, name in names.items())


def run_playbook(inventory, name, *extra):
    """ansible-playbook of this scenario against Molecule's inventory; returns (rc, combined output)."""
    rc, output, dummy = _run_playbook(os.path.join(SCENARIO, name), *extra, inventory=inventory, timeout=900)
    return rc, output


@pytest.fixture(scope="session")
def playbook(request):
    """Run a playbook of this scenario with the inventory testinfra got (--ansible-inventory), else Molecule's."""
    inventory = (getattr(request.config.option, "ansible_inventory", None)
                 or os.environ.get("MOLECULE_INVENTORY_FILE"))
    assert inventory, "no inventory: run through molecule verify"

    def run(name, *extra):
        return run_playbook(inventory, name, *extra)

    return run


@pytest.fixture(scope="module")
def names(host):
    return namespaces(host)
