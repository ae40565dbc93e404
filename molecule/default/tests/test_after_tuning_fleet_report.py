"""The fleet report of the lab fleet after the tune run (converge, idempotence): playbooks/fleet_report.yml gathers
every layer's facts live on node1 and node2 into a real ansible.builtin.jsonfile fact cache (the cache plugin is
configured for this one run by environment, as an operator's ansible.cfg would), then builds the report again from
that cache alone, for hosts whose address answers nothing (TEST-NET-1): no host is contacted. The report is checked
against the nodes' real state read here, and the cache and the verification's reports are kept in
tests/output/lab_fleet/ (CHECKPOINT_IO_LAB_FLEET overrides) for the browser tests (tests/run-all.sh step
browser-lab after this scenario): the page an operator opens for the lab fleet, in headless Chromium.

Its name sorts it before test_checkpoint_pipeline.py, whose revert tests take the deepspeed_config role's aio
section and sweep record away: this file reads the fleet as the tune run left it."""
import csv
import gzip
import json
import lzma
import os
import shutil

import pytest

from labplay import node_script, run_playbook

SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(SCENARIO))
PLAYBOOK = os.path.join(ROOT, "playbooks", "fleet_report.yml")
KEEP = os.environ.get("CHECKPOINT_IO_LAB_FLEET", os.path.join(ROOT, "tests", "output", "lab_fleet"))
# the browser tests' plan (tests/browser/conftest.py LAB_PLAN): MLPerf's Llama3-8B shape, 4 ranks a node
PLAN = {"checkpoint": "llama3-8b", "ranks_per_node": 4, "window_s": 60, "mtbf_hours": 20000}
NODES = ("node1", "node2")
DATA_SERIALS = {"DATA0001", "DATA0002"}


def _reports():
    return os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "reports")


def _fresh(path):
    """An empty directory at ``path`` (a previous run's copy removed: tests/output is this test's own)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def _nodes(report_json):
    """The report's summary and {host: node} of its JSON Lines (beside it)."""
    with open(report_json) as handle:
        doc = json.load(handle)
    assert doc["schema"] == "ai_storage.checkpoint_io.fleet_report" and doc["schema_version"] == 2, doc.keys()
    with lzma.open(os.path.join(os.path.dirname(report_json), doc["files"]["nodes"]), "rt", encoding="utf-8") as lines:
        return doc, dict((n["host"], n) for n in map(json.loads, lines))


# Read on the node: its kernel and each namespace's controller serial and queue settings (what the report shows).
READ_DRIVES = node_script("""
out = {"kernel": os.uname().release, "drives": {}}
for ctrl in glob.glob("/sys/class/nvme/nvme*"):
    serial = read(ctrl + "/serial").strip()
    for ns in glob.glob(ctrl + "/nvme*n*"):
        name = os.path.basename(ns)
        queue = "/sys/block/%s/queue/" % name
        words = read(queue + "scheduler").split()
        out["drives"][name] = {"serial": serial, "scheduler": [w.strip("[]") for w in words if w.startswith("[")][0],
                               "nr_requests": int(read(queue + "nr_requests")),
                               "read_ahead_kb": int(read(queue + "read_ahead_kb"))}
print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def lab_fleet():
    """The report built live (the facts into a jsonfile cache), then again from the cache alone."""
    keep = _fresh(KEEP)
    cache = os.path.join(keep, "cache")
    rc, out, _recap = run_playbook(PLAYBOOK, "-e", json.dumps({"fleet_report_plan": PLAN}), env={
        "ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": cache,
        "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "0"})
    assert rc == 0, out[-4000:]
    assert "2 nodes, 4 data drives" in out and "fleet_report.html" in out, out[-2000:]
    doc, live = _nodes(os.path.join(_reports(), "fleet", "fleet_report.json"))
    verify = os.path.join(_reports(), "verify")
    shutil.copytree(verify, os.path.join(keep, "verify"))
    runs = os.path.join(_reports(), "run")
    shutil.copytree(runs, os.path.join(keep, "run"))
    # the same report from the jsonfile cache alone: hosts at an address that answers nothing
    inventory = os.path.join(keep, "unreachable.ini")
    with open(inventory, "w") as handle:
        handle.write("[checkpoint_nodes]\n" + "".join("%s ansible_host=192.0.2.1\n" % n for n in NODES))
    cached_dir = os.path.join(keep, "from_cache")
    rc, out, recap = run_playbook(PLAYBOOK, "-e", json.dumps({
        "fleet_report_source": "cache", "fleet_report_cache_dir": cache, "fleet_report_dir": cached_dir,
        "fleet_report_verify_dir": verify, "fleet_report_run_dir": runs, "fleet_report_plan": PLAN}),
        inventory=inventory)
    assert rc == 0 and all(r["unreachable"] == 0 for r in recap.values()), out[-4000:]
    _doc, cached = _nodes(os.path.join(cached_dir, "fleet_report.json"))
    with gzip.open(os.path.join(cached_dir, "fleet_report_nodes.csv.gz"), "rt", encoding="utf-8", newline="") as rows:
        assert sorted(r["host"] for r in csv.DictReader(rows)) == list(NODES)
    drive_rows = [d for node in cached.values() for d in node["drives"]]
    return {"doc": doc, "live": live, "cached": cached, "cache": cache, "verify": verify, "drive_rows": drive_rows}


def test_the_fleet_and_the_cache(lab_fleet):
    doc = lab_fleet["doc"]
    assert sorted(lab_fleet["live"]) == list(NODES) and doc["fleet"]["nodes"] == 2, doc["fleet"]
    assert doc["fleet"]["drives"] == 4, doc["fleet"]           # the data drives; the OS drives apart
    assert doc["plan"] and "error" not in doc["plan"] and doc["plan"]["line"], doc["plan"]
    # a real jsonfile cache: one file per host, written by Ansible's cache plugin
    names = os.listdir(lab_fleet["cache"])
    assert all(any(name.endswith(n) for name in names) for n in NODES), names
    assert sum(1 for r in lab_fleet["drive_rows"] if r["serial"] in DATA_SERIALS) == 4, lab_fleet["drive_rows"]
    keys = ("kernel", "data_drives", "bw_before", "bw_after", "curve", "thermal", "drifted", "sweep_ceiling_mib_s",
            "drives")
    for name in NODES:
        assert dict((k, lab_fleet["cached"][name].get(k)) for k in keys) == dict(
            (k, lab_fleet["live"][name].get(k)) for k in keys), name


def test_the_node_as_the_report_shows_it(host, lab_fleet):
    name = host.backend.get_hostname()
    node = lab_fleet["live"][name]
    with open(os.path.join(lab_fleet["verify"], name + ".json")) as handle:
        measured = json.load(handle)
    # the verification's own medians, before and after, as the report shows them
    assert node["bw_after"] == round(measured["after"]["throughput_gib_s"]["median"], 3), (node, measured)
    before = measured["before"]["throughput_gib_s"]
    assert node["bw_before"] == round(before["median"] if isinstance(before, dict) else before, 3), node
    # the depth sweep deepspeed_config ran (of depths 1, 4, 16 the physics search measures the first, the last and
    # what it needs between) and the thermal validation's series, per data drive
    depths = [p[0] for p in node["curve"]]
    assert depths[0] == 1 and depths[-1] == 16 and set(depths) <= {1, 4, 16}, node["curve"]
    assert node["sweep_ceiling_mib_s"] > 0 and node["latency_ms"] > 0, node
    series = node["thermal"]["d"]     # whole degrees: the first, then the changes (fleet_report.thermal_compact)
    assert len(series) == 2 and all(len(s) >= 2 for s in series.values()), node["thermal"]
    # right after the tune run nothing drifts: "what would tune_checkpoint_nodes.yml change" is nothing
    assert node["drifted"] == 0 and node["drift"] == [], node["drift"]
    assert node["status"] in ("ok", "warning"), (node["status"], node["findings"])
    # every drive as the node's sysfs has it
    real = json.loads(host.check_output(READ_DRIVES))
    assert node["kernel"] == real["kernel"] and node["data_drives"] == 2
    drives = dict((d["name"], d) for d in node["drives"])
    assert set(drives) == set(real["drives"]), (sorted(drives), sorted(real["drives"]))
    for ns, sysfs in real["drives"].items():
        assert drives[ns]["serial"] == sysfs["serial"], (ns, drives[ns], sysfs)
        if sysfs["serial"] in DATA_SERIALS:
            assert (drives[ns]["scheduler"], drives[ns]["nr_requests"], drives[ns]["read_ahead_kb"]) == (
                sysfs["scheduler"], sysfs["nr_requests"], sysfs["read_ahead_kb"]), (drives[ns], sysfs)


def test_the_last_run_reused_its_measurements_and_wrote_next_to_nothing(host, lab_fleet):
    """The last tune run was idempotence's, with nothing changed (issue 34): its run document (reports/run/, read
    through the fleet report's run_dir) says it reused the sweep, the thermal validation, the verification and the
    io_uring check, and the block layer's counters say it wrote almost nothing to the data drives."""
    name = host.backend.get_hostname()
    node = lab_fleet["live"][name]
    with open(os.path.join(_reports(), "run", name + ".json")) as handle:
        run = json.load(handle)
    decisions = dict((label, d["reuse"]) for label, d in run["measurements"].items())
    assert decisions == {"sweep": True, "thermal": True, "verification": True, "io_uring_check": True}, \
        [d["line"] for d in run["measurements"].values()]
    assert node["reused"] == 4 and node["run_written_gib"] is not None and node["run_written_gib"] < 0.01, node
    data = [d for d in node["drives"] if d["serial"] in DATA_SERIALS]
    assert len(data) == 2 and all(d["run_bytes"] is not None and d["run_bytes"] < 8 << 20 for d in data), data
    assert lab_fleet["doc"]["fleet"]["run_writes"]["reused_nodes"] == 2, lab_fleet["doc"]["fleet"]["run_writes"]


def test_check_mode_writes_nothing(lab_fleet, tmp_path):
    """--check gathers and reports (the summary shown) but writes no report, and removes the run's directory of
    host documents (TMPDIR points the controller's temporary files into an empty directory to see it)."""
    out_dir = os.path.join(str(tmp_path), "report")
    scratch = _fresh(os.path.join(str(tmp_path), "tmp"))
    rc, out, _recap = run_playbook(PLAYBOOK, "--check", "-e", json.dumps({
        "fleet_report_dir": out_dir, "fleet_report_plan": PLAN}), env={"TMPDIR": scratch})
    assert rc == 0, out[-4000:]
    assert "2 nodes, 4 data drives" in out and "(check mode: not written)" in out, out[-2000:]
    assert not os.path.exists(out_dir)
    assert [n for n in os.listdir(scratch) if n.startswith("fleet_report")] == [], os.listdir(scratch)
