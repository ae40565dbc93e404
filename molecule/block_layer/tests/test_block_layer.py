# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The block_layer role on a real kernel: tuned after a reboot, OS drive untouched, refusals change nothing,
the revert brings back what was found. Tests run in file order; the revert comes last."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from labplay import record_data

from conftest import (
    DATA_SERIALS,
    LAB_DEFAULTS,
    OS_SERIAL,
    RECORD,
    RULE,
    TUNED,
    all_queues,
    queue,
    sysfs,
)


def test_the_node_was_rebooted_after_converge(host):
    before = host.file("/var/tmp/block_layer_boot_id_before_reboot")
    assert before.exists, "side_effect did not run"
    assert before.content_string.strip() != sysfs(host, "/proc/sys/kernel/random/boot_id")


def test_data_drives_are_tuned_after_the_reboot(host, names):
    found = all_queues(host, names)
    for serial in DATA_SERIALS:
        assert found[serial] == TUNED, serial


def test_os_drive_queue_was_not_touched(host, names):
    assert queue(host, names[OS_SERIAL]) == LAB_DEFAULTS


def test_udev_rule_matches_each_data_drive_by_wwid_scheduler_first(host, names):
    rule = host.file(RULE)
    assert rule.exists and rule.user == "root" and rule.mode == 0o644
    lines = [line for line in rule.content_string.splitlines() if line and not line.startswith("#")]
    assert len(lines) == len(DATA_SERIALS)
    wwids = set(sysfs(host, "/sys/block/%s/wwid" % names[serial]) for serial in DATA_SERIALS)
    seen = set()
    for line in lines:
        assert line.startswith('ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ATTR{wwid}=="')
        seen.add(re.search(r'ATTR\{wwid\}=="([^"]+)"', line).group(1))
        attrs = re.findall(r'ATTR\{queue/([a-z_]+)\}="([^"]+)"', line)
        assert [a for a, _v in attrs] == ["scheduler", "nr_requests", "max_sectors_kb", "read_ahead_kb",
                                          "nomerges", "rq_affinity"]
        assert dict(attrs) == dict((k, str(v)) for k, v in TUNED.items())
    assert seen == wwids
    assert sysfs(host, "/sys/block/%s/wwid" % names[OS_SERIAL]) not in rule.content_string


def test_record_holds_the_original_values_of_the_data_drives_only(host, names):
    record = host.file(RECORD)
    assert record.exists and record.mode == 0o644
    data = record_data(record.content_string, "block_layer")
    by_serial = dict((entry["serial"], entry) for entry in data["devices"].values())
    assert sorted(by_serial) == sorted(DATA_SERIALS)
    for serial in DATA_SERIALS:
        entry = by_serial[serial]
        assert entry["values"] == LAB_DEFAULTS
        assert entry["wwid"] == sysfs(host, "/sys/block/%s/wwid" % names[serial])


def test_nr_requests_above_the_tag_depth_fails_and_changes_nothing(host, names, playbook):
    before = all_queues(host, names)
    rc, out = playbook("refuse_nr_requests.yml")
    assert rc != 0, out
    assert "nr_requests 4096 is above the hardware tag depth 1023" in out, out
    assert all_queues(host, names) == before


def test_unknown_scheduler_is_refused_before_any_change(host, names, playbook):
    before = all_queues(host, names)
    rc, out = playbook("refuse_scheduler.yml")
    assert rc != 0, out
    assert "block_layer_scheduler" in out and "cfq" in out and "mq-deadline" in out, out
    assert all_queues(host, names) == before


def test_read_ahead_that_is_not_a_size_is_refused_before_any_change(host, names, playbook):
    before = all_queues(host, names)
    rc, out = playbook("refuse_read_ahead.yml")
    assert rc != 0, out
    assert "read_ahead: '1X' is not a size" in out, out
    assert all_queues(host, names) == before


def test_revert_restores_the_values_found_and_removes_the_rule(host, names, playbook):
    rc, out = playbook("revert.yml")
    assert rc == 0, out
    found = all_queues(host, names)
    for serial in DATA_SERIALS + (OS_SERIAL,):
        assert found[serial] == LAB_DEFAULTS, serial
    assert not host.file(RULE).exists
    assert not host.file(RECORD).exists

    rc, out = playbook("revert.yml")
    assert rc == 0, out
    assert re.search(r"node1\s*:\s*ok=\d+\s+changed=0\s", out), out
