"""Revert: refused while a fabric namespace is mounted (naming it and the force), then every connection the role
made disconnected, discovery.conf's block, the udev rule and the MTU drop-in gone, the MTU back, the record gone."""
from fabric_node import MTU_DROPIN, NQN, STATE, UDEV_RULE, fabric, read_node, role

testinfra_hosts = ["ansible://init"]


def test_revert_is_refused_while_a_fabric_namespace_is_mounted(host, node):
    head = node["subsystems"][NQN]["namespaces"][0]
    host.check_output("mkfs.ext4 -q -F /dev/%s && mkdir -p /mnt/fabric && mount /dev/%s /mnt/fabric" % (head, head))
    try:
        rc, out, recap, _result = role("-e", "nvmeof_rdma_state=absent")
        assert rc != 0
        assert "%s (mounted on /mnt/fabric); unmount it first, or name %s in force" % (head, NQN) in out, out[-3000:]
        assert len(fabric(read_node(host))) == 2
    finally:
        host.check_output("umount /mnt/fabric")


def test_revert_disconnects_and_puts_back_what_it_changed(host):
    rc, out, recap, _result = role("-e", "nvmeof_rdma_state=absent")
    assert rc == 0, out[-3000:]
    after = read_node(host)
    assert fabric(after) == {}
    assert "# BEGIN ai_storage.checkpoint_io nvmeof_rdma" not in after["files"]["/etc/nvme/discovery.conf"]
    assert after["files"][UDEV_RULE] is None and after["files"][MTU_DROPIN] is None
    assert after["mtu"] == 1500
    assert after["files"][STATE + "/nvmeof_rdma.json"] is None
    rc, out, recap, _result = role("-e", "nvmeof_rdma_state=absent")
    assert rc == 0 and recap["init"]["changed"] == 0, out[-3000:]
