"""io_uring_engine_state: absent puts back what ANY run changed (issue 12: a second run with another group adds
to the record), and a second revert changes nothing."""
from labplay import record_data

from conftest import (FILES, GROUP, OUTSIDER, RECORD_FILE, SECOND_GROUP, TRAINING_USER, ansible_playbook,
                      read_node)


def test_a_second_run_with_another_group_is_added_to_the_record(host):
    rc, output, recap = ansible_playbook("converge.yml", "-e", "io_uring_engine_io_uring_group=" + SECOND_GROUP,
                                         "-e", "io_uring_engine_verify=false")
    assert rc == 0, output
    node = read_node(host)
    assert SECOND_GROUP in node[TRAINING_USER]["groups"] and GROUP in node[TRAINING_USER]["groups"]
    assert int(node["io_uring_group"]) == node["second_group"]["gid"]
    record = record_data(node["files"][RECORD_FILE], "io_uring_engine")
    assert record["group_additions"] == [{"user": TRAINING_USER, "group": GROUP},
                                         {"user": TRAINING_USER, "group": SECOND_GROUP}]
    # the first run's values stay the values found before ANY change
    assert record["sysctl"] == {"io_uring_disabled": 0, "io_uring_group": -1}


def test_revert_restores_the_values_found(host):
    before = read_node(host)
    record = record_data(before["files"][RECORD_FILE], "io_uring_engine")
    rc, output, recap = ansible_playbook("revert.yml")
    assert rc == 0, output
    after = read_node(host)
    assert int(after["io_uring_disabled"]) == record["sysctl"]["io_uring_disabled"] == 0
    assert int(after["io_uring_group"]) == record["sysctl"]["io_uring_group"] == -1
    for path in FILES:
        assert after["files"][path] is None, path
    assert after["profile_dir_exists"] is False
    assert GROUP not in after[TRAINING_USER]["groups"]
    assert SECOND_GROUP not in after[TRAINING_USER]["groups"]
    assert after[TRAINING_USER]["ulimit_l"]["out"].strip() == after[OUTSIDER]["ulimit_l"]["out"].strip()
    # io_uring_disabled=0 again: the outsider may use io_uring too
    assert after[OUTSIDER]["fio"]["rc"] == 0 and after[OUTSIDER]["fio"]["job_error"] == 0, after[OUTSIDER]["fio"]

    rc, output, recap = ansible_playbook("revert.yml")
    assert rc == 0, output
    assert all(counters["changed"] == 0 for counters in recap.values()), output
