# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVMe over Fabrics initiators: the arithmetic and the text of the role nvmeof_rdma (pure functions).

* :func:`target_errors` - one inventory target checked (transport, address, service id, NQN, sizes) with messages
  that name the value and the limit; :func:`nqn_problem` the NVMe Qualified Name rules.
* :func:`queue_size_plan` - Little's Law with the fabric's round trip: depth = bandwidth x (device latency + RTT) /
  block, rounded up to a power of two and held within the transports' 16..1024.
* :func:`io_queues_plan` - I/O queues per controller: no more than the node's CPUs, nor than the target's queue
  budget shared by the node's connections to it.
* :func:`granted` - what the kernel holds after connecting (sysfs sqsize is 0's based, queue_count counts the admin
  queue) against what was asked: a clamp per connection.
* :func:`duplicate_identities` - the hosts of a play that share a host NQN or host ID (cloned images).
* :func:`discovery_conf` / :func:`fabrics_ini` - the persistence text for nvme-cli 2.x (``/etc/nvme/discovery.conf``
  lines, read by ``nvme connect-all`` at boot) and 3.x (an ``nvme-fabrics.conf.d`` drop-in, INI).
* :func:`iopolicy_plan` - the native-multipath I/O policy a kernel offers for fabrics.

Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import math
import re
import uuid

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import udev

TRANSPORTS = ("tcp", "rdma")
QUEUE_SIZE_MIN = 16
QUEUE_SIZE_MAX = 1024
NQN_MAX_BYTES = 223
DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery"
DEFAULT_PORTS = {"tcp": 4420, "rdma": 4420}
DISCOVERY_PORTS = {"tcp": 8009, "rdma": 4420}
NR_IO_QUEUES_MAX = 1024
TIMEOUT_KEYS = ("ctrl_loss_tmo", "reconnect_delay", "keep_alive_tmo")
# nvme-cli's spelling of each connect option (command line, discovery.conf and the 3.x INI keys).
CLI_OPTION = {"queue_size": "queue-size", "nr_io_queues": "nr-io-queues", "ctrl_loss_tmo": "ctrl-loss-tmo",
              "reconnect_delay": "reconnect-delay", "keep_alive_tmo": "keep-alive-tmo"}
# queue-depth (kernel 6.11): paths chosen by the requests in flight on each, what a fabric whose paths differ in
# round trip needs; round-robin (4.x) before it; numa (the default) sends everything down one path per node.
IOPOLICY_QUEUE_DEPTH_KERNEL = (6, 11)
_NQN_DATE = re.compile(r"^nqn\.(\d{4})-(\d{2})\.[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9](:.+)?$")
_NQN_UUID = re.compile(r"^nqn\.2014-08\.org\.nvmexpress:uuid:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                       r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}"
                       r"[A-Za-z0-9])?)*$")
_PRINTABLE = re.compile(r"^[\x21-\x7e]+$")


def nqn_problem(nqn, what="nqn"):
    """None, or why ``nqn`` is not an NVMe Qualified Name (NVMe Base Specification, "NVMe Qualified Names"):
    ``nqn.yyyy-mm.<reverse domain>[:<string>]`` or the UUID form, at most 223 bytes, no blanks or controls."""
    if not isinstance(nqn, str) or not nqn:
        return "%s: %r is not an NQN; give nqn.yyyy-mm.<reverse domain>:<name>" % (what, nqn)
    size = len(nqn.encode("utf-8"))
    if size > NQN_MAX_BYTES:
        return "%s: %r is %d bytes; an NQN is at most %d" % (what, nqn, size, NQN_MAX_BYTES)
    if not _PRINTABLE.match(nqn):
        return "%s: %r has a blank, a control or a non-ASCII character; an NQN has none" % (what, nqn)
    unsafe = udev.MATCH_UNSAFE.search(nqn)
    if unsafe:
        return ("%s: %r holds %r: the collection writes NQNs into a udev rule and nvme-cli's files, where a quote, "
                "a backslash or * ? [ ] | would change what they mean; an NQN here has none"
                % (what, nqn, unsafe.group(0)))
    if nqn.startswith("nqn.2014-08.org.nvmexpress:uuid:"):
        if not _NQN_UUID.match(nqn):
            return "%s: %r: the UUID form is nqn.2014-08.org.nvmexpress:uuid:<8-4-4-4-12 hex digits>" % (what, nqn)
        return None
    match = _NQN_DATE.match(nqn)
    if not match or not 1 <= int(match.group(2)) <= 12:
        return ("%s: %r is not an NQN; give nqn.yyyy-mm.<reverse domain>:<name> (for example "
                "nqn.2016-06.io.spdk:cnode1)" % (what, nqn))
    return None


def is_uuid(text):
    """True for the 8-4-4-4-12 hex form of a UUID (a host ID)."""
    return isinstance(text, str) and re.match(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                                              r"[0-9a-fA-F]{12}$", text) is not None


def _whole(value, what, low, high):
    """(int, None) or (None, message): a whole number within low..high (bools refused)."""
    if isinstance(value, bool):
        return None, "%s: %r is not a whole number; give %d to %d" % (what, value, low, high)
    try:
        number = int(str(value).strip(), 10)
    except (TypeError, ValueError):
        return None, "%s: %r is not a whole number; give %d to %d" % (what, value, low, high)
    if not low <= number <= high:
        return None, "%s: %d is out of range; give %d to %d" % (what, number, low, high)
    return number, None


def address_problem(address, what="address"):
    """None, or why ``address`` is not an IP address or a host name."""
    if not isinstance(address, str) or not address:
        return "%s: %r is not an address; give an IPv4/IPv6 address or a host name" % (what, address)
    try:
        ipaddress.ip_address(address)
        return None
    except ValueError:
        pass
    if _HOSTNAME.match(address):
        return None
    return "%s: %r is not an address; give an IPv4/IPv6 address or a host name" % (what, address)


def target_errors(target, index=0):
    """Every problem of one inventory target (``nvmeof_rdma_targets`` item), each naming the value and the limit.

    A target: ``transport`` (tcp|rdma), ``address``, ``service_id`` (port, default 4420; 8009 for a tcp discovery
    controller), and either ``nqn`` (a subsystem) or ``discovery: true``; optional ``queue_size`` (16..1024, else
    sized by Little's Law), ``nr_io_queues`` (1..1024), ``queue_budget`` (the I/O queues the target grants this node
    in all, 1..65535), ``bandwidth_mib_s`` and ``device_latency_ms`` (what the target's drives deliver; else the
    role's defaults), ``name``.
    """
    where = "nvmeof_rdma_targets[%d]" % index
    if not isinstance(target, dict):
        return ["%s: %r is not a dict; give transport, address and nqn (or discovery: true)" % (where, target)]
    known = ("name", "transport", "address", "service_id", "nqn", "discovery", "queue_size", "nr_io_queues",
             "queue_budget", "bandwidth_mib_s", "device_latency_ms", "host_traddr")
    errors = ["%s: unknown key %r; known keys: %s" % (where, key, ", ".join(known))
              for key in sorted(target) if key not in known]
    transport = target.get("transport")
    if transport not in TRANSPORTS:
        errors.append("%s.transport: %r is not a fabric transport this role connects; give one of %s"
                      % (where, transport, ", ".join(TRANSPORTS)))
    problem = address_problem(target.get("address"), where + ".address")
    if problem:
        errors.append(problem)
    if target.get("host_traddr") is not None:
        problem = address_problem(target.get("host_traddr"), where + ".host_traddr")
        if problem:
            errors.append(problem)
    if target.get("service_id") is not None:
        errors.append(_whole(target["service_id"], where + ".service_id", 1, 65535)[1])
    discovery = target.get("discovery", False)
    if not isinstance(discovery, bool):
        errors.append("%s.discovery: %r is not true or false" % (where, discovery))
    elif discovery:
        if target.get("nqn") not in (None, DISCOVERY_NQN):
            errors.append("%s: a discovery controller has the well-known NQN %s, not %r; drop nqn or discovery"
                          % (where, DISCOVERY_NQN, target.get("nqn")))
    else:
        problem = nqn_problem(target.get("nqn"), where + ".nqn")
        if problem:
            errors.append(problem)
        elif target.get("nqn") == DISCOVERY_NQN:
            errors.append("%s.nqn: %s is the discovery NQN; set discovery: true for a discovery controller"
                          % (where, DISCOVERY_NQN))
    limits = (("queue_size", QUEUE_SIZE_MIN, QUEUE_SIZE_MAX), ("nr_io_queues", 1, NR_IO_QUEUES_MAX),
              ("queue_budget", 1, 65535), ("bandwidth_mib_s", 1, 10 ** 7), ("device_latency_ms", 0, 60000))
    for key, low, high in limits:
        if target.get(key) is not None:
            errors.append(_whole(target[key], "%s.%s" % (where, key), low, high)[1])
    return [error for error in errors if error]


def target_key(target):
    """(transport, address, service id, NQN): what names one connection."""
    transport = target["transport"]
    discovery = target.get("discovery", False)
    default = (DISCOVERY_PORTS if discovery else DEFAULT_PORTS)[transport]
    return (transport, target["address"], str(target.get("service_id") or default),
            DISCOVERY_NQN if discovery else target["nqn"])


def key_text(key):
    """One connection's key as text: ``transport address:port nqn``."""
    return "%s %s:%s %s" % tuple(key)


def duplicate_targets(targets):
    """Messages for targets named twice (same transport, address, service id and NQN)."""
    seen = {}
    errors = []
    for index, target in enumerate(targets):
        key = target_key(target)
        if key in seen:
            errors.append("nvmeof_rdma_targets[%d] repeats nvmeof_rdma_targets[%d] (%s %s:%s %s); name each "
                          "connection once" % ((index, seen[key]) + key))
        else:
            seen[key] = index
    return errors


def littles_law_depth(bandwidth_mib_s, device_latency_ms, rtt_ms, block_kib):
    """Requests in flight that keep ``bandwidth_mib_s`` moving when each takes device latency + RTT (float)."""
    if block_kib <= 0:
        raise ValueError("block size %r KiB: give a size above zero" % (block_kib,))
    seconds = (float(device_latency_ms) + float(rtt_ms)) / 1000.0
    return float(bandwidth_mib_s) * 1024.0 * seconds / float(block_kib)


def queue_size_plan(bandwidth_mib_s, device_latency_ms, rtt_ms, block_kib, asked=None,
                    low=QUEUE_SIZE_MIN, high=QUEUE_SIZE_MAX):
    """The queue size to ask for one connection, and why.

    ``asked`` (the inventory's own value) wins; else Little's Law, rounded up to a power of two (the kernel's
    tags and the targets' limits are powers of two) and held within ``low..high``. Returns {queue_size, depth,
    queue_size_bound: inventory|littles_law|minimum|maximum, rtt_ms, device_latency_ms}.
    """
    depth = littles_law_depth(bandwidth_mib_s, device_latency_ms, rtt_ms, block_kib)
    result = {"depth": round(depth, 2), "rtt_ms": round(float(rtt_ms), 3),
              "device_latency_ms": float(device_latency_ms)}
    if asked is not None:
        result.update(queue_size=int(asked), queue_size_bound="inventory")
        return result
    size = 1 << max(0, int(math.ceil(math.log(max(depth, 1.0), 2))))
    bound = "littles_law"
    if size < low:
        size, bound = low, "minimum"
    elif size > high:
        size, bound = high, "maximum"
    result.update(queue_size=size, queue_size_bound=bound)
    return result


def io_queues_plan(cpus, connections, budget=None, asked=None):
    """I/O queues per controller: the inventory's value, else one per CPU, never more than the target's queue
    budget shared by ``connections`` controllers of this node on it (at least 1). {nr_io_queues,
    nr_io_queues_bound}."""
    if asked is not None:
        value, bound = int(asked), "inventory"
    else:
        value, bound = max(1, int(cpus)), "cpus"
    if budget is not None:
        share = max(1, int(budget) // max(1, int(connections)))
        if share < value:
            value, bound = share, "budget"
    return {"nr_io_queues": value, "nr_io_queues_bound": bound}


def granted(asked, controller):
    """What one connection got: {queue_size, nr_io_queues, clamped: [...]} from the controller's sysfs facts
    (``sqsize`` is 0's based; ``queue_count`` counts the admin queue)."""
    sqsize = controller.get("sqsize")
    queue_count = controller.get("queue_count")
    got = {"queue_size": sqsize + 1 if isinstance(sqsize, int) else None,
           "nr_io_queues": queue_count - 1 if isinstance(queue_count, int) else None}
    clamped = []
    for key in ("queue_size", "nr_io_queues"):
        want, have = asked.get(key), got[key]
        if want is not None and have is not None and have < want:
            clamped.append("%s %d asked, %d granted" % (key, want, have))
    got["clamped"] = clamped
    return got


def duplicate_identities(identities):
    """Hosts that share a host NQN or a host ID: [{kind, value, hosts}] from {host: {hostnqn, hostid}}."""
    found = []
    for kind in ("hostnqn", "hostid"):
        owners = {}
        for host in sorted(identities):
            value = (identities[host] or {}).get(kind)
            if value:
                owners.setdefault(value, []).append(host)
        found += [{"kind": kind, "value": value, "hosts": hosts}
                  for value, hosts in sorted(owners.items()) if len(hosts) > 1]
    return found


def new_identity(seed=None):
    """A fresh (hostnqn, hostid) pair in the UUID form nvme-cli generates (``seed``: a UUID, for tests)."""
    value = str(uuid.UUID(seed) if seed else uuid.uuid4())
    return {"hostnqn": "nqn.2014-08.org.nvmexpress:uuid:%s" % value, "hostid": value}


def connect_options(connection):
    """The sizing and timeout options of one connection, in nvme-cli's spelling, in a fixed order."""
    return [(CLI_OPTION[key], connection[key]) for key in ("queue_size", "nr_io_queues") + TIMEOUT_KEYS
            if connection.get(key) is not None]


def connect_argv(connection, hostnqn=None, hostid=None):
    """``nvme connect`` (or ``nvme connect-all`` for a discovery controller) argv for one connection."""
    transport, address, service_id, nqn = connection["key"]
    discovery = nqn == DISCOVERY_NQN
    argv = ["nvme", "connect-all" if discovery else "connect", "--transport=%s" % transport,
            "--traddr=%s" % address, "--trsvcid=%s" % service_id]
    if not discovery:
        argv.append("--nqn=%s" % nqn)
    if connection.get("host_traddr"):
        argv.append("--host-traddr=%s" % connection["host_traddr"])
    if hostnqn:
        argv.append("--hostnqn=%s" % hostnqn)
    if hostid:
        argv.append("--hostid=%s" % hostid)
    argv += ["--%s=%s" % item for item in connect_options(connection)]
    return argv


BEGIN = "# BEGIN ai_storage.checkpoint_io nvmeof_rdma"
END = "# END ai_storage.checkpoint_io nvmeof_rdma"


def discovery_conf_lines(connections):
    """nvme-cli 2.x: one ``/etc/nvme/discovery.conf`` line per connection (``nvme connect-all``, run at boot by
    nvmf-autoconnect.service, connects through the target port's discovery controller with these options)."""
    lines = []
    for connection in connections:
        transport, address, service_id, dummy = connection["key"]
        words = ["--transport=%s" % transport, "--traddr=%s" % address, "--trsvcid=%s" % service_id]
        if connection.get("host_traddr"):
            words.append("--host-traddr=%s" % connection["host_traddr"])
        words += ["--%s=%s" % item for item in connect_options(connection)]
        lines.append(" ".join(words))
    return lines


def discovery_conf(text, connections):
    """``text`` (the file as found) with the role's block replaced (or appended), every other line kept."""
    kept, inside = [], False
    for line in (text or "").splitlines():
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END:
            inside = False
        elif not inside:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    block = [BEGIN] + discovery_conf_lines(connections) + [END] if connections else []
    lines = kept + ([""] if kept and block else []) + block
    return "\n".join(lines) + "\n" if lines else ""


def fabrics_ini(connections, hostnqn=None, hostid=None):
    """nvme-cli 3.x: an ``/etc/nvme/nvme-fabrics.conf.d`` drop-in (INI) with one [Subsystem] (or [Discovery
    Controller]) section per subsystem and one ``controller =`` line per path, its sizes inline."""
    lines = ["# Managed by ai_storage.checkpoint_io (role nvmeof_rdma); nvmeof_rdma_state: absent removes it."]
    if hostnqn:
        lines += ["[Host]", "hostnqn = %s" % hostnqn] + (["hostid = %s" % hostid] if hostid else [])
    sections = []
    for connection in connections:
        nqn = connection["key"][3]
        if nqn not in sections:
            sections.append(nqn)
    for nqn in sections:
        lines.append("")
        if nqn == DISCOVERY_NQN:
            lines.append("[Discovery Controller]")
        else:
            lines += ["[Subsystem]", "nqn = %s" % nqn]
        for connection in connections:
            if connection["key"][3] != nqn:
                continue
            transport, address, service_id, dummy = connection["key"]
            parts = ["transport=%s" % transport, "traddr=%s" % address, "trsvcid=%s" % service_id]
            if connection.get("host_traddr"):
                parts.append("host-traddr=%s" % connection["host_traddr"])
            parts += ["%s=%s" % item for item in connect_options(connection)]
            lines.append("controller = %s" % ";".join(parts))
    return "\n".join(lines) + "\n"


def summary(connection):
    """One connection as the summary shows it: {name, transport, rtt_ms, queue_size, granted_queue_size,
    nr_io_queues, granted_io_queues, paths, clamped, state, line}."""
    asked = connection.get("asked") or {}
    got = connection.get("granted") or {}
    item = {"name": connection.get("name"), "transport": connection.get("transport"),
            "rtt_ms": connection.get("rtt_ms"), "queue_size": asked.get("queue_size"),
            "queue_size_bound": asked.get("queue_size_bound"), "nr_io_queues_bound": asked.get("nr_io_queues_bound"),
            "granted_queue_size": got.get("queue_size"),
            "nr_io_queues": asked.get("nr_io_queues"), "granted_io_queues": got.get("nr_io_queues"),
            "paths": connection.get("paths"), "clamped": connection.get("clamped") or [],
            "state": connection.get("state")}
    rtt = "%.2f ms" % item["rtt_ms"] if item["rtt_ms"] is not None else "not measured"
    item["line"] = ("%s: %s, RTT %s, queue size %s -> %s (%s), I/O queues %s -> %s, %s path(s)%s [%s]"
                    % (item["name"], item["transport"], rtt, item["queue_size"], item["granted_queue_size"],
                       item["queue_size_bound"], item["nr_io_queues"], item["granted_io_queues"], item["paths"],
                       "; CLAMPED: " + ", ".join(item["clamped"]) if item["clamped"] else "", item["state"]))
    return item


def cli_generation(version_text):
    """2 or 3 from ``nvme version`` ("nvme version 2.3 (git 2.3)"); None when it says nothing readable."""
    match = re.search(r"nvme version (\d+)\.", version_text or "")
    return int(match.group(1)) if match else None


def kernel_tuple(release):
    match = re.match(r"^(\d+)\.(\d+)", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def iopolicy_plan(kernel_release, asked="auto"):
    """The native-multipath I/O policy for fabric subsystems: {iopolicy, reason}."""
    if asked != "auto":
        return {"iopolicy": asked, "reason": "the inventory asks for %s" % asked}
    kernel = kernel_tuple(kernel_release)
    if kernel and kernel >= IOPOLICY_QUEUE_DEPTH_KERNEL:
        return {"iopolicy": "queue-depth",
                "reason": "paths of different round trips (tcp and rdma, two ports) fill at different rates; "
                          "queue-depth sends each request down the path with the fewest in flight"}
    return {"iopolicy": "round-robin",
            "reason": "kernel %s has no queue-depth policy (6.11+); round-robin uses every path, numa (the "
                      "default) only one per NUMA node" % kernel_release}
