"""Refused before anything is connected or changed: the host NQN the cloned lab image gives both nodes, and bad
targets (unknown transport, queue size out of range, a malformed NQN)."""
import json

from fabric_node import read_node, role

testinfra_hosts = ["ansible://init"]
TARGET = {"transport": "tcp", "address": "10.77.0.1", "service_id": 4420,
          "nqn": "nqn.2026-12.io.checkpoint-io.lab:target-data"}


def test_a_host_nqn_shared_by_two_hosts_is_refused_naming_them(host):
    before = read_node(host)
    targets = json.dumps({"nvmeof_rdma_targets": [TARGET]})
    rc, out, recap, _result = role("--check", "-e", "nvmeof_hosts=all", "-e", targets)
    assert rc != 0
    assert "is shared by init, target" in out, out[-3000:]
    assert recap["init"]["failed"] == 1 and recap["target"]["failed"] == 1
    assert read_node(host)["files"] == before["files"]


def test_fix_gives_the_second_host_a_fresh_identity_in_check_mode(host):
    targets = json.dumps({"nvmeof_rdma_targets": [TARGET], "nvmeof_rdma_identity": "fix"})
    rc, out, recap, _result = role("--check", "--diff", "-e", "nvmeof_hosts=all", "-e", targets)
    assert rc == 0, out[-3000:]
    # init sorts first and keeps its identity; target would get a fresh one
    assert "Give this host a fresh identity" in out
    assert "changed: [target] => (item=hostnqn)" in out or "changed: [target] => (item={'key': 'hostnqn'" in out


BAD = [({"transport": "fc"}, "transport: 'fc' is not a fabric transport this role connects; give one of tcp, rdma"),
       ({"queue_size": 0}, "queue_size: 0 is out of range; give 16 to 1024"),
       ({"queue_size": 2000, "service_id": 4421}, "queue_size: 2000 is out of range; give 16 to 1024"),
       ({"nqn": "nqn.bad", "service_id": 4422}, "is not an NQN; give nqn.yyyy-mm.<reverse domain>:<name>")]


def test_bad_targets_are_refused_before_any_connect(host):
    """One run with four bad targets (and a good one): every problem named at once, nothing connected."""
    before = read_node(host)
    targets = [TARGET] + [dict(TARGET, **bad) for bad, _message in BAD]
    rc, out, recap, _result = role("-e", json.dumps({"nvmeof_rdma_targets": targets}))
    assert rc != 0
    for index, (_bad, message) in enumerate(BAD, start=1):
        assert "nvmeof_rdma_targets[%d]." % index in out and message in out, (message, out[-3000:])
    assert recap["init"]["changed"] == 0
    after = read_node(host)
    assert after["controllers"] == before["controllers"] and after["files"] == before["files"]
