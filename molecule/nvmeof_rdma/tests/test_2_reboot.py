"""The initiator rebooted: nvmf-autoconnect reconnects both transports from discovery.conf with the same sizes and
timeouts, the udev rule sets the policy again, systemd-networkd the MTU."""
from fabric_node import NQN, fabric, lab, read_node

testinfra_hosts = ["ansible://init"]


def test_connections_policy_and_mtu_come_back_after_a_reboot(host):
    before = read_node(host)
    lab("reboot", "init")
    after = None
    for _attempt in range(30):  # nvmf-autoconnect runs once the fabric NIC has its address
        after = read_node(host)
        if len(fabric(after)) == 2 and all(c["state"] == "live" for c in fabric(after).values()):
            break
        host.run("sleep 2")
    ctrls, old = fabric(after), fabric(before)
    assert sorted(ctrls) == ["rdma", "tcp"], after["controllers"]
    for transport in ("tcp", "rdma"):
        for key in ("sqsize", "queue_count", "ctrl_loss_tmo", "reconnect_delay", "kato", "subsysnqn"):
            assert ctrls[transport][key] == old[transport][key], (transport, key)
    assert after["subsystems"][NQN]["iopolicy"] == "round-robin"
    assert len(after["subsystems"][NQN]["controllers"]) == 2
    assert after["mtu"] == 9000
