"""io_uring_engine_state: absent puts back what the role found, and a second revert changes nothing."""
from labplay import record_data

from conftest import FILES, GROUP, OUTSIDER, RECORD_FILE, TRAINING_USER, ansible_playbook, read_node


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
    assert after[TRAINING_USER]["ulimit_l"]["out"].strip() == after[OUTSIDER]["ulimit_l"]["out"].strip()
    # io_uring_disabled=0 again: the outsider may use io_uring too
    assert after[OUTSIDER]["fio"]["rc"] == 0 and after[OUTSIDER]["fio"]["job_error"] == 0, after[OUTSIDER]["fio"]

    rc, output, recap = ansible_playbook("revert.yml")
    assert rc == 0, output
    assert all(counters["changed"] == 0 for counters in recap.values()), output
