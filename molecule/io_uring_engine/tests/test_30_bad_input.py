"""Bad input is refused before any change, with the value and the limit in the message."""
import json
import os
import tempfile

import pytest

from conftest import ansible_playbook, read_node

CASES = {
    "disabled_3": ["io_uring_engine_io_uring_disabled: 3 is outside 0..2"],
    "missing_group": ["group 'nosuchgroup' does not exist", "io_uring_engine_io_uring_disabled is 1"],
    "memlock_1X": ["io_uring_engine_memlock: '1X' is not a size"],
    # issue 12: negative values and values below what the profile pins (8 x 8 x 1 MiB + 2 x 16 x 1 MiB)
    "memlock_negative": ["io_uring_engine_memlock: -1 is negative"],
    "memlock_too_low": ["io_uring_engine_memlock: '64M' is 67108864 bytes, below the 100663296 bytes the profile pins"],
    # the outsider is in iouring-shared (prepare.yml): every member could use io_uring
    "shared_group": ["the io_uring group iouring-shared", "has other members besides trainer: outsider",
                     "io_uring_engine_allow_shared_group: true"],
    "depth_0": ["io_uring_engine_target_depth: 0 is outside 1..4096"],
    "depth_4097": ["io_uring_engine_target_depth: 4097 is outside 1..4096"],
    "unknown_user": ["io_uring_engine_training_user: user 'nosuchuser' does not exist"],
}
VALIDATION_TASKS = ("Validating arguments against arg spec", "Refuse bad input before any change")


@pytest.fixture(scope="module")
def outcome(host):
    handle, results = tempfile.mkstemp(suffix=".json", prefix="io_uring_engine_bad_input_")
    os.close(handle)
    before = read_node(host)
    try:
        rc, output, recap = ansible_playbook("bad_input.yml", "-e", "io_uring_engine_bad_input_results=" + results)
        with open(results) as stream:
            outcomes = json.load(stream)
    finally:
        os.unlink(results)
    return before, read_node(host), rc, output, outcomes


def test_the_playbook_ran_every_case(outcome):
    before, after, rc, output, outcomes = outcome
    assert rc == 0, output
    assert sorted(outcomes) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_value_is_refused_by_validation_with_its_value(outcome, case):
    result = outcome[4][case]
    assert result["accepted"] is False, result
    assert result["task"].startswith(VALIDATION_TASKS), result
    for fragment in CASES[case]:
        assert fragment in result["msg"], result


def test_nothing_changed_on_the_node(outcome):
    before, after = outcome[0], outcome[1]
    for key in ("io_uring_disabled", "io_uring_group", "files", "modes", "profile_dir_exists", "group"):
        assert after[key] == before[key], key
    for user in ("trainer", "outsider"):
        assert after[user]["groups"] == before[user]["groups"]
        assert after[user]["ulimit_l"] == before[user]["ulimit_l"]
    assert all(text is None for text in after["files"].values())
