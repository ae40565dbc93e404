"""The lab's drive models, measured inside a real guest: knees where the profiles put them, throttle and fail-io.

One bookworm node, two data drives with different models (knee2: 40 ms per request, 40 MiB/s ceiling, so the knee
is at 1.6 MiB in flight, depth 2 on a grid of powers of two; knee8: 80 ms, 70 MiB/s, knee at 5.6, depth 8).
fio io_uring 1 MiB O_DIRECT sequential writes run inside the guest on both drives at once, at each depth,
REPEATS times (interleaved); the curve's knee (the smallest depth whose doubling gains less than KNEE_GAIN,
medians) must be the profile's knee depth, the plateau within TOLERANCE of the model's ceiling, the points below
the knee within LITTLE_LOW..LITTLE_HIGH of Little's Law (depth x 1 MiB / latency), and every point's repeats within SPREAD of
its median, two outliers of five allowed (OUTLIERS). Then ``nvmelab.py throttle`` and
``fail-io`` must change what fio measures.
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = [sys.executable, os.path.join(ROOT, "lab", "nvmelab.py")]
DEPTHS = (1, 2, 4, 8, 16)
REPEATS = 5
RUNTIME_S = 3
RAMP_S = 2                 # spends the rate filter's burst bucket (0.5 s at the ceiling) before fio measures
# Each repeat within SPREAD of the median of its point, except at most OUTLIERS per point: a stall of the
# emulating CPU under TCG reads low (about 1 run in 30 here), and below knee8's knee a run at depth 4 now and
# then reads ~0.7x the others (measured in clean-clone runs: 43-46 with one 33; 34/47/32/45/47). The median of
# five stands with two such runs (the knee and the plateau are read from medians); the test prints all five.
SPREAD = 0.15
OUTLIERS = 2
KNEE_GAIN = 1.25           # the knee: the smallest depth whose doubling gains less than 25% (2x below a knee)
TOLERANCE = 0.15           # the plateau vs the model's ceiling (both ways)
LITTLE_LOW, LITTLE_HIGH = 0.75, 1.10   # below the knee, the share of depth x 1 MiB / latency measured
PROFILES = {"data1": "knee2", "data2": "knee8"}


def lab(*args, check=True, timeout=900):
    """nvmelab.py ARGS; a command still running after TIMEOUT s fails the test at once, with what it printed."""
    try:
        return subprocess.run(LAB + list(args), check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("nvmelab.py %s still ran after %d s; it printed:\n%s\n%s" % (
            " ".join(args), timeout, exc.output or "", host_load())) from None


def host_load():
    """The host's load and its busiest processes: these curves assume the lab runs alone (run-all.sh), and a
    guest starved by another lab's nodes beside it stalls for minutes (CI, 2026-12-05: a 5 s fio still ran after
    125 s while a second clean-clone run's nodes shared the 2 cores)."""
    ps = subprocess.run(["ps", "-eo", "pcpu=,etime=,args=", "--sort=-pcpu"], stdout=subprocess.PIPE,
                        universal_newlines=True, check=False).stdout.splitlines()[:6]
    return "host load average %s; the busiest processes (%%CPU, elapsed, command):\n%s" % (
        " ".join("%.2f" % v for v in os.getloadavg()), "\n".join(line[:200] for line in ps))


@pytest.fixture(scope="module")
def node():
    with tempfile.TemporaryDirectory(prefix="drive-models-") as tmp:
        state = os.path.join(tmp, "lab")
        # One vCPU: the emulated CPU on one host core leaves the other to QEMU's I/O and nbdkit (less jitter).
        up = lab("up", "--state-dir", state, "--node", "node1:bookworm", "--cpus", "1",
                 *["--drive-model=%s:%s" % item for item in sorted(PROFILES.items())], check=False)
        try:
            assert up.returncode == 0, up.stdout
            with open(os.path.join(state, "state.json")) as handle:
                info = json.load(handle)["nodes"][0]
            yield {"state": state, "drives": dict((d["id"], d) for d in info["drives"] if not d["os_drive"])}
        finally:
            lab("down", "--state-dir", state, check=False)


def guest(node, command, check=True, timeout=300):
    proc = lab("ssh", "--state-dir", node["state"], "node1", "--", "sh", "-c", shlex.quote(command), check=False,
               timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stdout
    return proc


def device_of(node, serial):
    out = guest(node, "for b in /sys/block/nvme*n*; do echo $(cat $b/device/serial) /dev/${b##*/}; done")
    for line in out.stdout.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == serial:
            return words[1]
    raise AssertionError("no namespace with serial %s on the node:\n%s" % (serial, out.stdout))


def fio(node, devices, depth, runtime=RUNTIME_S, check=True):
    """{device: MiB/s} of one fio run with one 1 MiB sequential-write job per device, all at once."""
    jobs = " ".join("--name=%s --filename=%s" % (os.path.basename(dev), dev) for dev in devices)
    cmd = ("fio --output-format=json --ioengine=io_uring --direct=1 --rw=write --bs=1M --iodepth=%d "
           "--time_based --runtime=%d --ramp_time=%d %s" % (depth, runtime, RAMP_S, jobs))
    # fio's own time plus the guest's start-up and the drives' flush under TCG (seconds); a hung write fails here
    proc = guest(node, cmd + " 2>/dev/null", check=check, timeout=RAMP_S + runtime + 120)
    doc = json.loads(proc.stdout[proc.stdout.index("{"):])
    errors = [job["error"] for job in doc["jobs"] if job.get("error")]
    if errors:
        assert not check, "fio job errors %s:\n%s" % (errors, proc.stdout[-2000:])
        return None, errors
    return dict(("/dev/" + job["jobname"], job["write"]["bw_bytes"] / 1048576.0) for job in doc["jobs"]), doc


@pytest.fixture(scope="module")
def devices(node):
    return dict((dev_id, device_of(node, d["serial"])) for dev_id, d in node["drives"].items())


@pytest.fixture(scope="module")
def curves(node, devices):
    """{drive id: {depth: [MiB/s per repeat]}}, repeats interleaved across depths."""
    out = dict((dev_id, dict((d, []) for d in DEPTHS)) for dev_id in devices)
    for dummy in range(REPEATS):
        for depth in DEPTHS:
            bw, _doc = fio(node, list(devices.values()), depth)
            for dev_id, dev in devices.items():
                out[dev_id][depth].append(bw[dev])
    print("\ndepth curves (MiB/s, %d repeats of %d s):" % (REPEATS, RUNTIME_S))
    for dev_id, curve in sorted(out.items()):
        print("  %s %s: %s" % (dev_id, PROFILES[dev_id], ", ".join(
            "QD%d %s" % (d, "/".join("%.0f" % v for v in curve[d])) for d in DEPTHS)))
    return out


@pytest.mark.parametrize("dev_id", sorted(PROFILES))
def test_repeats_agree(curves, dev_id):
    for depth, values in curves[dev_id].items():
        med = statistics.median(values)
        off = [v for v in values if abs(v - med) > SPREAD * med]
        assert len(off) <= OUTLIERS, (dev_id, depth, values)


@pytest.mark.parametrize("dev_id", sorted(PROFILES))
def test_knee_where_the_profile_puts_it(node, curves, dev_id):
    model = node["drives"][dev_id]["model"]
    medians = dict((d, statistics.median(v)) for d, v in curves[dev_id].items())
    knee = min(d for d in DEPTHS[:-1] if medians[2 * d] < KNEE_GAIN * medians[d])
    assert knee == min(d for d in DEPTHS if d >= model["knee_depth"]), (dev_id, model["knee_depth"], medians)
    # The plateau, read at the deepest point (where the rate filter's burst bucket is spent at once).
    ceiling = model["ceiling_mib_s"]
    plateau = medians[DEPTHS[-1]]
    assert abs(plateau - ceiling) <= TOLERANCE * ceiling, (dev_id, plateau, ceiling)
    # Below the knee bandwidth follows Little's Law, depth x 1 MiB / latency, less the emulation's own latency
    # per request (a few ms to 15 ms at 4 in flight under TCG, measured): LITTLE_LOW..LITTLE_HIGH of it.
    for depth in (d for d in DEPTHS if d * 1000.0 / model["latency"] < model["ceiling_mib_s"]):
        expected = depth * 1000.0 / model["latency"]
        assert LITTLE_LOW * expected <= medians[depth] <= LITTLE_HIGH * expected, (dev_id, depth, medians[depth])


def test_throttle_changes_what_fio_measures(node, devices, curves):
    dev = devices["data2"]
    ceiling = node["drives"]["data2"]["model"]["ceiling_mib_s"]
    lab("throttle", "--state-dir", node["state"], "node1", "data2", "50%")
    try:
        throttled = fio(node, [dev], 16, runtime=4)[0][dev]
    finally:
        lab("throttle", "--state-dir", node["state"], "node1", "data2", "off")
    restored = fio(node, [dev], 16, runtime=4)[0][dev]
    print("\nthrottle data2: 50%% -> %.0f MiB/s, off -> %.0f MiB/s (ceiling %.0f)" % (throttled, restored, ceiling))
    assert abs(throttled - 0.5 * ceiling) <= TOLERANCE * 0.5 * ceiling
    assert abs(restored - ceiling) <= TOLERANCE * ceiling


def test_fail_io_makes_writes_fail(node, devices, curves):
    dev = devices["data1"]
    lab("fail-io", "--state-dir", node["state"], "node1", "data1", "on")
    try:
        bw, errors = fio(node, [dev], 4, runtime=2, check=False)
    finally:
        lab("fail-io", "--state-dir", node["state"], "node1", "data1", "off")
    assert bw is None, "fio wrote %s while data1 should fail every write" % bw
    # nbdkit's EIO reaches the guest as an NVMe media error (Write Fault): ENODATA, or EIO.
    assert set(errors) <= {5, 61}, errors
    assert "critical medium error, dev %s" % os.path.basename(dev) in guest(node, "dmesg").stdout
    # Cleared: writes succeed again, at the model's speed.
    assert fio(node, [dev], 2, runtime=2)[0][dev] > 0


def test_plain_drive_cannot_be_throttled(node):
    proc = lab("throttle", "--state-dir", node["state"], "node1", "os", "50%", check=False)
    assert proc.returncode != 0 and "plain drive" in proc.stdout
    proc = lab("throttle", "--state-dir", node["state"], "node1", "data2", "150%", check=False)
    assert proc.returncode != 0 and "(0, 100]" in proc.stdout
