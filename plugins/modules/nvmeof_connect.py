#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: nvmeof_connect
short_description: Connect NVMe-oF controllers sized by Little's Law with the measured round trip, and read back what was granted
version_added: 0.4.0
description:
  - For each connection (tcp or rdma, a subsystem or a discovery controller) measures the fabric's round trip from
    this node (TCP handshakes to the target's service port, the median of O(rtt_samples); a refused port answers
    in one round trip too, which is how an rdma port is timed), sizes the queue by Little's Law
    (bandwidth x (device latency + RTT) / block, a power of two within 16..1024) unless the connection names its own,
    bounds the I/O queues by the node's CPUs and the target's queue budget, and connects with C(nvme connect)
    (C(nvme connect-all) for a discovery controller).
  - After connecting, reads the controller back from C(/sys/class/nvme) (transport, address, C(sqsize),
    C(queue_count), state, timeouts) and reports what was asked against what was granted; a target that clamps
    (C(queue_size 256 > ctrl sqsize 128, clamping down)) shows as RV(connections[].clamped).
  - A connection that already exists is left as it is (reconnecting would drop I/O) and reported with its granted
    values.
  - With O(state=absent), disconnects the controllers of the named connections, refusing while a namespace of
    their subsystem is mounted or held unless O(force) names the subsystem's NQN.
author:
  - ai_storage checkpoint_io maintainers (@ai-storage)
requirements:
  - nvme-cli, the nvme-tcp / nvme-rdma kernel modules.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Measures the round trip and plans the sizes; connects and disconnects nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  connections:
    description:
      - The targets (the role's C(nvmeof_rdma_targets) items, checked by the role before this runs) with
        C(transport), C(address), C(service_id), C(nqn) or C(discovery), and optional C(queue_size),
        C(nr_io_queues), C(queue_budget), C(bandwidth_mib_s), C(device_latency_ms), C(host_traddr), C(name).
    type: list
    elements: raw
    required: true
  state:
    description: V(present) connects; V(absent) disconnects.
    type: str
    choices: [present, absent]
    default: present
  block_size_kib:
    description: The checkpoint's I/O size in KiB (Little's Law's block), a whole number from 4 to 65536.
    type: raw
    default: 1024
  bandwidth_mib_s:
    description: What a target delivers when a connection names no C(bandwidth_mib_s), MiB/s, 1 to 10000000.
    type: raw
    default: 3000
  device_latency_ms:
    description: The target drives' write latency when a connection names no C(device_latency_ms), ms, 0 to 60000.
    type: raw
    default: 1.0
  rtt_samples:
    description: Handshakes timed per connection, 1 to 100.
    type: raw
    default: 7
  ctrl_loss_tmo:
    description: Seconds before a lost controller is given up (-1 never, else 0 to 604800), passed to C(nvme connect).
    type: raw
  reconnect_delay:
    description: Seconds between reconnect attempts, 1 to 3600.
    type: raw
  keep_alive_tmo:
    description: Keep-alive timeout, seconds, 1 to 3600.
    type: raw
  hostnqn:
    description: The host NQN to connect as (default nvme-cli's, C(/etc/nvme/hostnqn)).
    type: str
  hostid:
    description: The host ID to connect as, a UUID (default C(/etc/nvme/hostid)).
    type: str
  iopolicy:
    description:
      - The native-multipath I/O policy to set on the subsystems of the connections (C(iopolicy) of
        C(/sys/class/nvme-subsystem/*)), read back after writing; V(null) leaves it.
    type: str
    choices: [numa, round-robin, queue-depth]
  planned:
    description:
      - What earlier runs asked for each connection, by RV(connections[].key_text) (the role's record); a connection
        that exists keeps it, so a round trip that moved a little does not rewrite the persisted sizes.
    type: dict
  force:
    description: Subsystem NQNs that O(state=absent) may disconnect although a namespace is mounted or held.
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: Connect a checkpoint target over RDMA, sized for 3 GB/s at 1 ms device latency
  ai_storage.checkpoint_io.nvmeof_connect:
    connections:
      - transport: rdma
        address: 192.168.50.10
        service_id: 4420
        nqn: nqn.2016-06.io.spdk:cnode1
        bandwidth_mib_s: 3000
        device_latency_ms: 1
    ctrl_loss_tmo: 600
'''

RETURN = r'''
connections:
  description: One entry per connection, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The connection's name (or transport address:port).
      type: str
      sample: ckpt-rdma
    transport:
      description: tcp or rdma.
      type: str
      sample: rdma
    address:
      description: The target address.
      type: str
      sample: 10.77.0.1
    service_id:
      description: The service id (port).
      type: str
      sample: '4421'
    nqn:
      description: The subsystem NQN (the discovery NQN for a discovery controller).
      type: str
      sample: nqn.2026-12.io.checkpoint-io.lab:target-data
    key_text:
      description: C(transport address:port nqn), the key of O(planned).
      type: str
      sample: rdma 10.77.0.1:4421 nqn.2026-12.io.checkpoint-io.lab:target-data
    rtt_ms:
      description: Median measured round trip in ms (null when the target did not answer).
      type: float
      sample: 0.42
    rtt_spread_ms:
      description: The lowest and the highest sample, ms.
      type: list
      elements: float
      sample: [0.31, 0.77]
    asked:
      description: >-
        queue_size (and queue_size_bound - inventory, littles_law, minimum or maximum), nr_io_queues (and
        nr_io_queues_bound - inventory, cpus or budget), the Little's Law depth, the RTT and device latency used;
        C(recorded) when an earlier run's values were kept.
      type: dict
      sample: {queue_size: 256, queue_size_bound: inventory, nr_io_queues: 2, nr_io_queues_bound: cpus, depth: 0.6}
    replanned:
      description: What this run would ask for a connection that exists (it keeps RV(connections[].asked)).
      type: dict
    granted:
      description: queue_size (sysfs sqsize + 1), nr_io_queues (queue_count - 1), state and timeouts as the kernel holds them.
      type: dict
      sample: {queue_size: 128, nr_io_queues: 1, state: live, ctrl_loss_tmo: '600', reconnect_delay: 10, keep_alive_tmo: 5}
    clamped:
      description: What the target granted below what was asked.
      type: list
      elements: str
      sample: ['queue_size 256 asked, 128 granted']
    controllers:
      description: The controllers (nvmeN) of this connection.
      type: list
      elements: str
      sample: [nvme4]
    subsystems:
      description: The subsystem NQNs behind those controllers.
      type: list
      elements: str
    paths:
      description: Controllers (paths) of those subsystems in all.
      type: int
      sample: 2
    state:
      description: connected, existing, would_connect, disconnected, would_disconnect, refused, absent or failed.
      type: str
      sample: connected
    error:
      description: Why a connection failed.
      type: str
subsystems:
  description: The subsystems of the connections after the run, by NQN.
  returned: always
  type: dict
  sample:
    nqn.2026-12.io.checkpoint-io.lab:target-data:
      name: nvme-subsys3
      iopolicy: round-robin
      paths: [{controller: nvme3, transport: tcp, address: '10.77.0.1:4420', state: live}]
      namespaces: [nvme3n1, nvme3n2]
cpus:
  description: The CPUs this node offers the I/O queues.
  returned: always
  type: int
  sample: 2
'''

import math
import os
import socket
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fabric import fabric_plan
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.blockdev import read_mounts
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import Context
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.sysfs import listdir, read_int, read_str
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import whole, whole_number_errors

CLASS = '/sys/class/nvme'
SUBSYS_CLASS = '/sys/class/nvme-subsystem'


def measure_rtt(address, port, samples, timeout=2.0):
    """Round trips (ms) of TCP handshakes to address:port; a refusal is an answer too (one round trip)."""
    times = []
    for dummy in range(samples):
        family = socket.AF_INET6 if ':' in address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        start = time.monotonic()
        try:
            sock.connect((address, int(port)))
            answered = True
        except ConnectionRefusedError:
            answered = True
        except OSError:
            answered = False
        elapsed = (time.monotonic() - start) * 1000.0
        sock.close()
        if answered:
            times.append(elapsed)
    return sorted(times)


def fabric_controllers():
    """Every fabric controller: {name: {transport, traddr, trsvcid, subsysnqn, sqsize, queue_count, state, ...}}."""
    result = {}
    for name in listdir(CLASS):
        base = os.path.join(CLASS, name)
        transport = read_str(os.path.join(base, 'transport'))
        if transport not in fabric_plan.TRANSPORTS:
            continue
        address = dict(item.split('=', 1) for item in (read_str(os.path.join(base, 'address')) or '').split(',')
                       if '=' in item)
        result[name] = {'transport': transport, 'traddr': address.get('traddr'), 'trsvcid': address.get('trsvcid'),
                        'subsysnqn': read_str(os.path.join(base, 'subsysnqn')),
                        'sqsize': read_int(os.path.join(base, 'sqsize')),
                        'queue_count': read_int(os.path.join(base, 'queue_count')),
                        'state': read_str(os.path.join(base, 'state')),
                        'ctrl_loss_tmo': read_str(os.path.join(base, 'ctrl_loss_tmo')),
                        'reconnect_delay': read_int(os.path.join(base, 'reconnect_delay')),
                        'kato': read_int(os.path.join(base, 'kato'))}
    return result


def subsystems(nqns, controllers):
    """{nqn: {name, iopolicy, paths: [{controller, transport, address, state}], namespaces}} from sysfs."""
    result = {}
    for name in listdir(SUBSYS_CLASS):
        base = os.path.join(SUBSYS_CLASS, name)
        nqn = read_str(os.path.join(base, 'subsysnqn'))
        if nqn not in nqns:
            continue
        entries = listdir(base)
        paths = [{'controller': c, 'transport': controllers.get(c, {}).get('transport'),
                  'address': '%s:%s' % (controllers.get(c, {}).get('traddr'), controllers.get(c, {}).get('trsvcid')),
                  'state': controllers.get(c, {}).get('state')}
                 for c in entries if c in controllers]
        result[nqn] = {'name': name, 'iopolicy': read_str(os.path.join(base, 'iopolicy')), 'paths': paths,
                       'namespaces': sorted(e for e in entries if e.startswith('nvme') and e not in controllers)}
    return result


def set_iopolicy(module, subsys, policy):
    """Write the policy where it differs and read it back; messages for the ones that did not take it."""
    errors, changed = [], False
    for nqn, info in sorted(subsys.items()):
        if info['iopolicy'] == policy:
            continue
        changed = True
        if module.check_mode:
            continue
        path = os.path.join(SUBSYS_CLASS, info['name'], 'iopolicy')
        try:
            with open(path, 'w') as handle:
                handle.write(policy)
        except OSError as exc:
            errors.append('%s: writing %s to %s failed (%s); this kernel may not offer it' % (nqn, policy, path, exc))
            continue
        info['iopolicy'] = read_str(path)
        if info['iopolicy'] != policy:
            errors.append('%s: %s reads %r after writing %r' % (nqn, path, info['iopolicy'], policy))
    return changed, errors


def matching(controllers, key):
    transport, address, service_id, nqn = key
    names = []
    for name, ctrl in sorted(controllers.items()):
        if (ctrl['transport'], ctrl['traddr'], ctrl['trsvcid']) != (transport, address, service_id):
            continue
        if nqn == fabric_plan.DISCOVERY_NQN:
            # a discovery controller's connections: every I/O controller behind that port
            if ctrl['subsysnqn'] != fabric_plan.DISCOVERY_NQN:
                names.append(name)
        elif ctrl['subsysnqn'] == nqn:
            names.append(name)
    return names


def in_use(ctrl_names):
    """Namespaces of these controllers' subsystems that are mounted or held (head and path devices)."""
    heads = set()
    for name in ctrl_names:
        for entry in listdir(os.path.join(CLASS, name)):
            if entry.startswith('nvme') and 'n' in entry[4:]:
                parts = entry.split('c', 1) if 'c' in entry else [entry]
                heads.add(entry)
                if len(parts) == 2:
                    heads.add('nvme%sn%s' % (parts[0][4:], parts[1].split('n', 1)[1]))
    busy = []
    mounts = read_mounts(Context())
    for head in sorted(heads):
        holders = listdir('/sys/block/%s/holders' % head)
        mounted = [m['mount_point'] for m in mounts if m['source'] == '/dev/' + head]
        if holders or mounted:
            uses = ['mounted on %s' % m for m in mounted] + ['held by %s' % h for h in holders]
            busy.append('%s (%s)' % (head, ', '.join(uses)))
    return busy


LIMITS = {'block_size_kib': (4, 65536), 'bandwidth_mib_s': (1, 10 ** 7), 'rtt_samples': (1, 100)}
OPTIONAL_LIMITS = {'ctrl_loss_tmo': (-1, 604800), 'reconnect_delay': (1, 3600), 'keep_alive_tmo': (1, 3600)}


def check_params(params):
    """Every problem of the options, each naming the value and the limit; numbers made ints/floats in params."""
    errors = []
    if not params['connections']:
        errors.append('connections: [] names no target; give at least one')
    for index, target in enumerate(params['connections']):
        errors += [e.replace('nvmeof_rdma_targets', 'connections') for e in fabric_plan.target_errors(target, index)]
    if not errors:
        errors += [e.replace('nvmeof_rdma_targets', 'connections')
                   for e in fabric_plan.duplicate_targets(params['connections'])]
    errors += whole_number_errors(params, LIMITS)
    for key, (low, high) in sorted(OPTIONAL_LIMITS.items()):
        value = params[key]
        if value is None:
            continue
        number = whole(value) if not (isinstance(value, int) and not isinstance(value, bool)) else value
        if number is None or not low <= number <= high:
            errors.append('%s: %r must be a whole number from %d to %d' % (key, value, low, high))
        params[key] = number
    latency = params['device_latency_ms']
    try:
        number = None if isinstance(latency, bool) or isinstance(latency, (list, dict)) else float(latency)
    except (TypeError, ValueError):
        number = None
    if number is None or math.isnan(number) or not 0 <= number <= 60000:
        errors.append('device_latency_ms: %r must be a number from 0 to 60000 (milliseconds)' % (latency,))
    params['device_latency_ms'] = number
    if params['hostnqn'] is not None:
        problem = fabric_plan.nqn_problem(params['hostnqn'], 'hostnqn')
        if problem:
            errors.append(problem)
    if params['hostid'] is not None and not fabric_plan.is_uuid(params['hostid']):
        errors.append('hostid: %r is not a UUID (8-4-4-4-12 hex digits, as nvme-cli writes /etc/nvme/hostid)'
                      % (params['hostid'],))
    for key, kept in sorted((params['planned'] or {}).items()):
        if not isinstance(kept, dict):
            errors.append('planned[%r]: %r is not a dict of queue_size and nr_io_queues' % (key, kept))
            continue
        for option, (low, high) in (('queue_size', (fabric_plan.QUEUE_SIZE_MIN, fabric_plan.QUEUE_SIZE_MAX)),
                                    ('nr_io_queues', (1, fabric_plan.NR_IO_QUEUES_MAX))):
            value = kept.get(option)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not low <= value <= high):
                errors.append('planned[%r].%s: %r must be a whole number from %d to %d'
                              % (key, option, value, low, high))
    for nqn in params['force']:
        problem = fabric_plan.nqn_problem(nqn, 'force')
        if problem:
            errors.append(problem)
    return errors


def plan(module, target, cpus, connections_per_target):
    params = module.params
    key = fabric_plan.target_key(target)
    entry = {'name': target.get('name') or '%s %s:%s' % key[:3], 'transport': key[0], 'address': key[1],
             'service_id': key[2], 'nqn': key[3], 'key': key, 'host_traddr': target.get('host_traddr')}
    samples = measure_rtt(key[1], key[2], params['rtt_samples'])
    if not samples:
        entry.update(state='failed', rtt_ms=None, rtt_spread_ms=[],
                     error='%s:%s did not answer %d TCP handshakes in 2 s each: check the address, the route '
                           'and the fabric NIC (the round trip sizes the queue)'
                           % (key[1], key[2], params['rtt_samples']))
        return entry
    rtt = samples[len(samples) // 2]
    entry.update(rtt_ms=round(rtt, 3), rtt_spread_ms=[round(samples[0], 3), round(samples[-1], 3)])
    asked = fabric_plan.queue_size_plan(target.get('bandwidth_mib_s') or params['bandwidth_mib_s'],
                                        target.get('device_latency_ms') if target.get('device_latency_ms')
                                        is not None else params['device_latency_ms'],
                                        rtt, params['block_size_kib'], asked=target.get('queue_size'))
    queues = fabric_plan.io_queues_plan(cpus, connections_per_target.get(key[1], 1), target.get('queue_budget'),
                                        target.get('nr_io_queues'))
    asked.update(queues)
    entry['asked'] = asked
    entry['queue_size'] = asked['queue_size']
    entry['nr_io_queues'] = queues['nr_io_queues']
    for option in fabric_plan.TIMEOUT_KEYS:
        entry[option] = params[option]
    return entry


def main():
    module = AnsibleModule(
        argument_spec=dict(
            connections=dict(type='list', elements='raw', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            block_size_kib=dict(type='raw', default=1024),
            bandwidth_mib_s=dict(type='raw', default=3000),
            device_latency_ms=dict(type='raw', default=1.0),
            rtt_samples=dict(type='raw', default=7),
            ctrl_loss_tmo=dict(type='raw'),
            reconnect_delay=dict(type='raw'),
            keep_alive_tmo=dict(type='raw'),
            hostnqn=dict(type='str'),
            hostid=dict(type='str'),
            iopolicy=dict(type='str', choices=['numa', 'round-robin', 'queue-depth']),
            force=dict(type='list', elements='str', default=[]),
            planned=dict(type='dict'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    errors = check_params(params)
    if errors:
        module.fail_json(msg='; '.join(errors), connections=[])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else (os.cpu_count() or 1)
    if params['state'] == 'absent':
        absent(module, cpus)
    present(module, cpus)


def present(module, cpus):
    params = module.params
    per_target = {}
    for target in params['connections']:
        per_target[target['address']] = per_target.get(target['address'], 0) + 1
    results = []
    changed = False
    controllers = fabric_controllers()
    for target in params['connections']:
        entry = plan(module, target, cpus, per_target)
        results.append(entry)
        if entry.get('state') == 'failed':
            continue
        names = matching(controllers, entry['key'])
        kept = (params['planned'] or {}).get(fabric_plan.key_text(entry['key']))
        if names and isinstance(kept, dict) and kept.get('queue_size'):
            # connected by an earlier run: what it asked then stays what is asked (and persisted), so a round trip
            # that moved a little does not rewrite the files; the plan of this run is shown beside it
            entry['replanned'] = entry['asked']
            entry['asked'] = dict(kept, recorded=True)
            entry['queue_size'], entry['nr_io_queues'] = kept['queue_size'], kept.get('nr_io_queues')
        if names:
            entry['state'] = 'existing'
        elif module.check_mode:
            entry['state'] = 'would_connect'
            changed = True
        else:
            argv = fabric_plan.connect_argv(entry, params['hostnqn'], params['hostid'])
            argv[0] = module.get_bin_path('nvme', required=True)
            rc, out, err = module.run_command(argv)
            entry['cmd'] = argv
            controllers = fabric_controllers()
            names = matching(controllers, entry['key'])
            if rc != 0 and not names:
                entry.update(state='failed',
                             error='%s failed (rc %d): %s' % (' '.join(argv), rc, (err or out).strip()[-400:]))
                continue
            entry['state'] = 'connected'
            changed = True
        entry['controllers'] = names
        if names:
            first = controllers[names[0]]
            entry['granted'] = fabric_plan.granted(entry['asked'], first)
            entry['granted'].update(state=first['state'], ctrl_loss_tmo=first['ctrl_loss_tmo'],
                                    reconnect_delay=first['reconnect_delay'], keep_alive_tmo=first['kato'])
            entry['clamped'] = entry['granted']['clamped']
        else:
            entry['granted'], entry['clamped'] = None, []
    nqns = set()
    for entry in results:
        entry['key_text'] = fabric_plan.key_text(entry['key'])
        entry['key'] = list(entry['key'])
        entry['subsystems'] = sorted(set(controllers[n]['subsysnqn'] for n in entry.get('controllers') or []
                                         if n in controllers))
        nqns.update(entry['subsystems'])
    subsys = subsystems(nqns, controllers)
    messages = ['%s: %s' % (e['name'], e['error']) for e in results if e.get('state') == 'failed']
    if params['iopolicy']:
        policy_changed, policy_errors = set_iopolicy(module, subsys, params['iopolicy'])
        changed = changed or policy_changed
        messages += policy_errors
    for entry in results:
        entry['paths'] = sum(len(subsys.get(nqn, {}).get('paths', [])) for nqn in entry['subsystems'])
    if messages:
        module.fail_json(msg='; '.join(messages), changed=changed, connections=results, subsystems=subsys, cpus=cpus)
    module.exit_json(changed=changed, connections=results, subsystems=subsys, cpus=cpus)


def absent(module, cpus):
    params = module.params
    controllers = fabric_controllers()
    results, changed, refused = [], False, []
    for target in params['connections']:
        key = fabric_plan.target_key(target)
        names = matching(controllers, key)
        entry = {'name': target.get('name') or '%s %s:%s' % key[:3], 'transport': key[0], 'address': key[1],
                 'service_id': key[2], 'nqn': key[3], 'key': list(key), 'controllers': names}
        results.append(entry)
        if not names:
            entry['state'] = 'absent'
            continue
        nqns = set(controllers[n]['subsysnqn'] for n in names)
        busy = in_use(names)
        if busy and not nqns <= set(params['force']):
            refused.append('%s: %s; unmount it first, or name %s in force'
                           % (entry['name'], ', '.join(busy), ' '.join(sorted(nqns))))
            entry['state'] = 'refused'
            continue
        if module.check_mode:
            entry['state'] = 'would_disconnect'
            continue
        nvme = module.get_bin_path('nvme', required=True)
        for name in names:
            rc, out, err = module.run_command([nvme, 'disconnect', '--device=%s' % name])
            if rc != 0:
                refused.append('%s: nvme disconnect --device=%s failed (rc %d): %s'
                               % (entry['name'], name, rc, (err or out).strip()))
        entry['state'] = 'disconnected'
        changed = True
    if refused:
        module.fail_json(msg='refused: ' + '; '.join(refused), changed=changed, connections=results, subsystems={},
                         cpus=cpus)
    module.exit_json(changed=changed, connections=results, subsystems={}, cpus=cpus)


if __name__ == '__main__':
    main()
