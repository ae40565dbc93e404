"""After converge and idempotence: both transports connected to one subsystem, what the target granted read back
(soft-RoCE's nvmet clamps the queue to 128, the subsystem's qid_max to 1 I/O queue), one multipath namespace per
drive over two paths, the policy, persistence and MTU on the initiator."""
from fabric_node import MTU_DROPIN, NQN, TARGET, UDEV_RULE, fabric, record, role

testinfra_hosts = ["ansible://init"]


def test_both_transports_are_live_with_what_the_target_granted(node):
    ctrls = fabric(node)
    assert sorted(ctrls) == ["rdma", "tcp"], node["controllers"]
    for transport, port in (("tcp", "4420"), ("rdma", "4421")):
        ctrl = ctrls[transport]
        assert ctrl["state"] == "live" and ctrl["subsysnqn"] == NQN
        assert "traddr=%s,trsvcid=%s" % (TARGET, port) in ctrl["address"]
        assert (ctrl["ctrl_loss_tmo"], ctrl["reconnect_delay"], ctrl["kato"]) == ("600", "10", "5")
        assert ctrl["queue_count"] == "2"  # qid_max 1 on the target: one I/O queue (+ the admin queue)
    # tcp: Little's Law, 140 MiB/s x (60 ms + RTT) / 1 MiB ~ 8.2 -> 16; rdma: 256 asked, 128 granted
    assert ctrls["tcp"]["sqsize"] == "15"
    assert ctrls["rdma"]["sqsize"] == "127"


def test_one_multipath_namespace_per_drive_over_two_paths(node):
    subsystem = node["subsystems"][NQN]
    assert len(subsystem["controllers"]) == 2
    assert len(subsystem["namespaces"]) == 2  # the target's two drives, each one nvmeXnY over both paths
    assert subsystem["iopolicy"] == "round-robin"  # kernel 6.1: no queue-depth policy (6.11+)


def test_persistence_and_the_nic(node):
    text = node["files"]["/etc/nvme/discovery.conf"]
    block = text[text.index("# BEGIN ai_storage.checkpoint_io nvmeof_rdma"):]
    assert ("--transport=tcp --traddr=10.77.0.1 --trsvcid=4420 --queue-size=16 --nr-io-queues=2 --ctrl-loss-tmo=600 "
            "--reconnect-delay=10 --keep-alive-tmo=5") in block
    assert "--transport=rdma --traddr=10.77.0.1 --trsvcid=4421 --queue-size=256" in block
    assert 'ATTR{subsysnqn}=="%s", ATTR{iopolicy}="round-robin"' % NQN in node["files"][UDEV_RULE]
    assert "MTUBytes=9000" in node["files"][MTU_DROPIN]
    assert node["mtu"] == 9000
    assert node["autoconnect"] == "enabled"
    data = record(node)
    assert data["mtu_before"] == {"eth1": 1500}
    assert sorted(t["name"] for t in data["connected"]) == ["lab-rdma", "lab-tcp"]
    assert UDEV_RULE in data["created"] and MTU_DROPIN in data["created"]


def test_the_summary_shows_each_connection_asked_and_granted(node):
    rc, out, recap, result = role()
    assert rc == 0, out[-3000:]
    assert recap["init"]["changed"] == 0, out[-3000:]
    rows = dict((c["name"], c) for c in result["connections"])
    tcp, rdma = rows["lab-tcp"], rows["lab-rdma"]
    assert tcp["transport"] == "tcp" and tcp["rtt_ms"] > 0
    assert (tcp["queue_size"], tcp["granted_queue_size"], tcp["queue_size_bound"]) == (16, 16, "littles_law")
    assert (rdma["queue_size"], rdma["granted_queue_size"]) == (256, 128)
    assert "queue_size 256 asked, 128 granted" in rdma["clamped"]
    assert all("nr_io_queues 2 asked, 1 granted" in c["clamped"] for c in (tcp, rdma))
    assert tcp["paths"] == rdma["paths"] == 2
    assert "lab-rdma: rdma, RTT" in out and "CLAMPED: queue_size 256 asked, 128 granted" in out
    assert any("NIC eth1 has no DCB support" in w for w in result["warnings"])  # soft-RoCE: the warning path
