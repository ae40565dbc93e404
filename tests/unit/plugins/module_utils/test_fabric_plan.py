"""module_utils/fabric/fabric_plan.py: Little's Law with the round trip, the I/O queue budget, granted vs asked, shared
identities, the NQN rules and the persistence text of both nvme-cli generations (hand-computed cases)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fabric import fabric_plan as fp

NQN = "nqn.2016-06.io.spdk:cnode1"


def conn(transport="rdma", address="10.0.0.5", port="4420", nqn=NQN, **extra):
    item = {"key": (transport, address, port, nqn)}
    item.update(extra)
    return item


# --- Little's Law --------------------------------------------------------------------------------------------------

def test_depth_is_bandwidth_times_latency_plus_rtt_over_block():
    # 3000 MiB/s x (1 ms + 0.5 ms) / 1 MiB = 4.5 requests in flight
    assert fp.littles_law_depth(3000, 1.0, 0.5, 1024) == pytest.approx(4.5)
    # 128 KiB blocks: eight times as many
    assert fp.littles_law_depth(3000, 1.0, 0.5, 128) == pytest.approx(36.0)


def test_the_round_trip_moves_the_queue_size():
    # 12 GiB/s at 128 KiB: 0.1 ms device -> 9.8 -> 16; +2 ms RTT: 12288 x 1024 x 0.0021 / 128 = 206.44 -> 256
    near = fp.queue_size_plan(12288, 0.1, 0.0, 128)
    far = fp.queue_size_plan(12288, 0.1, 2.0, 128)
    assert (near["depth"], near["queue_size"], near["queue_size_bound"]) == (9.83, 16, "littles_law")
    assert (far["depth"], far["queue_size"], far["queue_size_bound"]) == (206.44, 256, "littles_law")


def test_queue_size_is_held_within_the_transport_limits():
    assert fp.queue_size_plan(10, 0.1, 0.0, 1024)["queue_size"] == 16
    assert fp.queue_size_plan(10, 0.1, 0.0, 1024)["queue_size_bound"] == "minimum"
    big = fp.queue_size_plan(100000, 10.0, 10.0, 4)
    assert (big["queue_size"], big["queue_size_bound"]) == (1024, "maximum")


def test_the_inventory_queue_size_wins():
    plan = fp.queue_size_plan(3000, 1.0, 0.5, 1024, asked=256)
    assert (plan["queue_size"], plan["queue_size_bound"]) == (256, "inventory")


def test_zero_block_is_refused():
    with pytest.raises(ValueError, match="block size 0 KiB"):
        fp.littles_law_depth(1, 1, 1, 0)


def test_io_queues_are_bounded_by_cpus_and_the_budget():
    assert fp.io_queues_plan(128, 1) == {"nr_io_queues": 128, "nr_io_queues_bound": "cpus"}
    # a 128-core host with 4 controllers on a target granting 64 queues in all: 16 each
    assert fp.io_queues_plan(128, 4, budget=64) == {"nr_io_queues": 16, "nr_io_queues_bound": "budget"}
    assert fp.io_queues_plan(2, 8, budget=4) == {"nr_io_queues": 1, "nr_io_queues_bound": "budget"}
    assert fp.io_queues_plan(64, 1, asked=8) == {"nr_io_queues": 8, "nr_io_queues_bound": "inventory"}


# --- granted -------------------------------------------------------------------------------------------------------

def test_granted_reads_sqsize_as_zeros_based_and_queue_count_with_the_admin_queue():
    got = fp.granted({"queue_size": 256, "nr_io_queues": 2}, {"sqsize": 127, "queue_count": 2})
    assert got == {"queue_size": 128, "nr_io_queues": 1,
                   "clamped": ["queue_size 256 asked, 128 granted", "nr_io_queues 2 asked, 1 granted"]}
    assert fp.granted({"queue_size": 16, "nr_io_queues": 2}, {"sqsize": 15, "queue_count": 3})["clamped"] == []


def test_summary_line_shows_asked_granted_and_the_clamp():
    entry = {"name": "a", "transport": "rdma", "rtt_ms": 0.42, "state": "connected", "paths": 2,
             "asked": {"queue_size": 256, "queue_size_bound": "inventory", "nr_io_queues": 2,
                       "nr_io_queues_bound": "cpus"},
             "granted": {"queue_size": 128, "nr_io_queues": 2}, "clamped": ["queue_size 256 asked, 128 granted"]}
    line = fp.summary(entry)["line"]
    assert line == ("a: rdma, RTT 0.42 ms, queue size 256 -> 128 (inventory), I/O queues 2 -> 2, 2 path(s); "
                    "CLAMPED: queue_size 256 asked, 128 granted [connected]")


# --- identities ----------------------------------------------------------------------------------------------------

def test_shared_identities_name_their_hosts():
    same = {"hostnqn": "nqn.2014-08.org.nvmexpress:uuid:9356be8d-2745-4ca0-a890-f74440813eb5", "hostid": "x"}
    found = fp.duplicate_identities({"b": same, "a": same, "c": {"hostnqn": "other", "hostid": "y"}, "d": None})
    assert found == [{"kind": "hostnqn", "value": same["hostnqn"], "hosts": ["a", "b"]},
                     {"kind": "hostid", "value": "x", "hosts": ["a", "b"]}]


def test_new_identity_is_the_uuid_form_and_derivable():
    seed = "0a9a954d-94a6-5316-8fff-5743c34767b3"
    assert fp.new_identity(seed) == {"hostnqn": "nqn.2014-08.org.nvmexpress:uuid:" + seed, "hostid": seed}
    assert fp.nqn_problem(fp.new_identity()["hostnqn"]) is None


# --- inputs --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("nqn", [NQN, "nqn.2014-08.org.nvmexpress:uuid:9356be8d-2745-4ca0-a890-f74440813eb5",
                                 "nqn.2026-12.io.checkpoint-io.lab:target-data"])
def test_good_nqns(nqn):
    assert fp.nqn_problem(nqn) is None


@pytest.mark.parametrize("nqn, message", [
    ("nqn.bad", "is not an NQN"),
    ("iqn.2016-06.io.spdk:cnode1", "is not an NQN"),
    ("nqn.2016-13.io.spdk:x", "is not an NQN"),
    ("nqn.2016-06.io.spdk:has space", "a blank"),
    ("nqn.2014-08.org.nvmexpress:uuid:not-a-uuid", "the UUID form"),
    ("nqn.2016-06.io.spdk:" + "x" * 210, "bytes; an NQN is at most 223"),
    ("", "is not an NQN"),
    (None, "is not an NQN"),
    # issue 31, finding 2: learned from a discovery controller, written into a udev rule
    ('nqn.2016-06.io.spdk:a",RUN+="/bin/x', "holds '\"'"),
    ("nqn.2016-06.io.spdk:a\\b", "holds '\\\\'"),
    ("nqn.2016-06.io.spdk:cnode*", "holds '*'"),
])
def test_bad_nqns(nqn, message):
    assert message in fp.nqn_problem(nqn)


def test_target_errors_name_each_value_and_limit():
    assert fp.target_errors({"transport": "rdma", "address": "10.0.0.5", "nqn": NQN}) == []
    assert fp.target_errors({"transport": "tcp", "address": "fabric.example.com", "discovery": True}) == []
    errors = fp.target_errors({"transport": "fc", "address": "not an address!", "service_id": 70000,
                               "nqn": "nqn.bad", "queue_size": 2000, "nr_io_queues": 0, "colour": "red"}, 3)
    assert errors == [
        "nvmeof_rdma_targets[3]: unknown key 'colour'; known keys: name, transport, address, service_id, nqn, "
        "discovery, queue_size, nr_io_queues, queue_budget, bandwidth_mib_s, device_latency_ms, host_traddr",
        "nvmeof_rdma_targets[3].transport: 'fc' is not a fabric transport this role connects; give one of tcp, rdma",
        "nvmeof_rdma_targets[3].address: 'not an address!' is not an address; give an IPv4/IPv6 address or a host "
        "name",
        "nvmeof_rdma_targets[3].service_id: 70000 is out of range; give 1 to 65535",
        "nvmeof_rdma_targets[3].nqn: 'nqn.bad' is not an NQN; give nqn.yyyy-mm.<reverse domain>:<name> (for "
        "example nqn.2016-06.io.spdk:cnode1)",
        "nvmeof_rdma_targets[3].queue_size: 2000 is out of range; give 16 to 1024",
        "nvmeof_rdma_targets[3].nr_io_queues: 0 is out of range; give 1 to 1024",
    ]
    assert fp.target_errors({"transport": "tcp", "address": "10.0.0.5", "nqn": NQN, "queue_size": 0}) == [
        "nvmeof_rdma_targets[0].queue_size: 0 is out of range; give 16 to 1024"]
    flag = {"transport": "tcp", "address": "10.0.0.5", "nqn": NQN, "queue_size": True}
    assert "is not a whole number" in fp.target_errors(flag)[0]
    discovery = {"transport": "tcp", "address": "10.0.0.5", "nqn": fp.DISCOVERY_NQN}
    assert "set discovery: true" in fp.target_errors(discovery)[0]
    assert "is not a dict" in fp.target_errors("rdma://10.0.0.5")[0]


def test_a_target_named_twice_is_refused():
    one = {"transport": "rdma", "address": "10.0.0.5", "nqn": NQN}
    assert fp.duplicate_targets([one, dict(one, service_id=4420)]) == [
        "nvmeof_rdma_targets[1] repeats nvmeof_rdma_targets[0] (rdma 10.0.0.5:4420 %s); name each connection once"
        % NQN]
    assert fp.duplicate_targets([one, dict(one, transport="tcp")]) == []


# --- persistence: nvme-cli 2.x and 3.x -----------------------------------------------------------------------------

def test_discovery_conf_keeps_other_lines_and_replaces_the_role_block():
    found = "# Used for extracting default parameters for discovery\n--transport=tcp --traddr=10.9.9.9\n"
    first = fp.discovery_conf(found, [conn(queue_size=128, nr_io_queues=8, ctrl_loss_tmo=600)])
    assert first == (found + "\n" + fp.BEGIN + "\n"
                     "--transport=rdma --traddr=10.0.0.5 --trsvcid=4420 --queue-size=128 --nr-io-queues=8 "
                     "--ctrl-loss-tmo=600\n" + fp.END + "\n")
    second = fp.discovery_conf(first, [conn(queue_size=64)])
    assert second.count(fp.BEGIN) == 1 and "--queue-size=64" in second and "--queue-size=128" not in second
    assert fp.discovery_conf(second, []) == found


def test_fabrics_ini_has_one_section_per_subsystem_and_a_controller_line_per_path():
    text = fp.fabrics_ini([conn(queue_size=128, reconnect_delay=10),
                           conn("tcp", port="4421", queue_size=16, keep_alive_tmo=5),
                           conn("tcp", port="8009", nqn=fp.DISCOVERY_NQN)],
                          hostnqn="nqn.2014-08.org.nvmexpress:uuid:9356be8d-2745-4ca0-a890-f74440813eb5",
                          hostid="9356be8d-2745-4ca0-a890-f74440813eb5")
    assert text.splitlines()[1:] == [
        "[Host]",
        "hostnqn = nqn.2014-08.org.nvmexpress:uuid:9356be8d-2745-4ca0-a890-f74440813eb5",
        "hostid = 9356be8d-2745-4ca0-a890-f74440813eb5",
        "",
        "[Subsystem]",
        "nqn = %s" % NQN,
        "controller = transport=rdma;traddr=10.0.0.5;trsvcid=4420;queue-size=128;reconnect-delay=10",
        "controller = transport=tcp;traddr=10.0.0.5;trsvcid=4421;queue-size=16;keep-alive-tmo=5",
        "",
        "[Discovery Controller]",
        "controller = transport=tcp;traddr=10.0.0.5;trsvcid=8009",
    ]


def test_connect_argv():
    assert fp.connect_argv(conn(queue_size=128, nr_io_queues=4, host_traddr="10.0.0.2"), "nqn.h", "id") == [
        "nvme", "connect", "--transport=rdma", "--traddr=10.0.0.5", "--trsvcid=4420", "--nqn=" + NQN,
        "--host-traddr=10.0.0.2", "--hostnqn=nqn.h", "--hostid=id", "--queue-size=128", "--nr-io-queues=4"]
    assert fp.connect_argv(conn("tcp", port="8009", nqn=fp.DISCOVERY_NQN))[:2] == ["nvme", "connect-all"]


def test_cli_generation_and_iopolicy():
    assert fp.cli_generation("nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)") == 2
    assert fp.cli_generation("nvme version 3.0") == 3
    assert fp.cli_generation("garbage") is None
    assert fp.iopolicy_plan("6.1.0-50-amd64")["iopolicy"] == "round-robin"
    assert fp.iopolicy_plan("6.12.118-amd64")["iopolicy"] == "queue-depth"
    assert fp.iopolicy_plan("6.1.0", "numa") == {"iopolicy": "numa", "reason": "the inventory asks for numa"}
