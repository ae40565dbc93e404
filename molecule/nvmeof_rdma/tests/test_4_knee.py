"""The fabric's round trip is part of the depth a checkpoint write needs: a depth sweep on a fabric namespace (fio,
1 MiB O_DIRECT writes, both paths) with the link as it is and with 100 ms of netem delay on the target's side. The
target's drives are knee8 models (80 ms per request, 70 MiB/s): at a low depth the bandwidth falls with the longer
round trip (Little's Law: depth x 1 MiB / (80 ms + RTT)), and the knee (the first depth within 20% of the best)
moves deeper."""
import json

from fabric_node import NQN, lab

testinfra_hosts = ["ansible://init"]
DEPTHS = [1, 2, 4, 8, 16]
FIO = ("fio --name=knee --filename=/dev/%s --rw=write --bs=1M --direct=1 --ioengine=libaio --iodepth=%d "
       "--time_based --runtime=3 --ramp_time=1 --offset=%dM --size=512M --output-format=json")


def sweep(host, head):
    """MiB/s per depth (each depth writes its own 512 MiB stretch of the namespace)."""
    result = {}
    for index, depth in enumerate(DEPTHS):
        doc = json.loads(host.check_output(FIO % (head, depth, 512 * index)))
        result[depth] = doc["jobs"][0]["write"]["bw"] / 1024.0
    return result


def knee(curve):
    best = max(curve.values())
    return min(depth for depth, bandwidth in curve.items() if bandwidth >= 0.8 * best)


def test_the_knee_moves_deeper_when_the_link_delay_grows(host, node):
    head = node["subsystems"][NQN]["namespaces"][1]
    plain = sweep(host, head)
    lab("link-delay", "target", "100")
    try:
        delayed = sweep(host, head)
    finally:
        lab("link-delay", "target", "0")
    print("depth sweep on %s, MiB/s: plain %s, +100 ms %s" % (head, plain, delayed))
    assert delayed[2] < 0.75 * plain[2], (plain, delayed)
    assert knee(delayed) > knee(plain), (plain, delayed)
