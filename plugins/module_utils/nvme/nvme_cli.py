# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parsers for nvme-cli (and smartctl -j) output.

Each ``parse_*`` function takes the text of ONE command's output and returns a
dict with stable snake_case keys. They never raise: missing fields are
``None``; unusable input (empty, truncated, not JSON) gives every field
``None`` and ``errors['_input']``; a wrongly typed field is ``None`` with
``errors[<field>]`` while the other fields are still parsed.

Layouts are detected from the data, never from an nvme-cli version:

* nvme-cli 1.x JSON (``"key" : value``, 128-bit counters as floats such as
  ``1765656.0``, ``UsedBytes``/``PhysicalSize`` int32 overflow
  ``-2147483648``, the misspelt ``critical_warrning``);
* 2.0-2.10 ``nvme list -o json``: flat ``Devices[]`` with ``DevicePath``
  (2.10+ also ``GenericPath``; 2.13 flat again);
* nested ``Devices[].Subsystems[].Controllers[].Namespaces[]`` (2.11 default,
  ``-v`` elsewhere; ``NameSpace`` without ``/dev/``), including NVMe-oF
  native multipath (namespaces under ``Subsystems[].Namespaces[]``,
  controllers with empty ``Namespaces`` and ``Paths[]`` carrying ``ANAState``);
* ``nvme ocp smart-add-log`` (OCP C0h log: thermal throttling events, PLP);
* smart-log ``critical_warning`` as an int or as the object
  ``{value, available_spare, temp_threshold, reliability_degraded, ro,
  vmbu_failed, pmr_ro}``; all values possibly strings (2.1.1) or floats.

Units: smart-log/id-ctrl temperatures are Kelvin and are returned in Celsius;
``warning_temp_time``/``critical_comp_time`` are minutes,
``thm_temp{1,2}_total_time`` seconds; ``data_units_*`` count units of 1000
512-byte blocks (512,000 bytes), as in the NVMe specification.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    convert,
    kelvin_to_celsius,
    load_json_document,
    to_count,
    to_bool,
    to_int,
)

SMART_LOG_KEYS = (
    "critical_warning", "critical_warning_bits", "temperature_c", "sensors_c",
    "available_spare_pct", "available_spare_threshold_pct", "percentage_used",
    "media_errors", "num_err_log_entries", "power_on_hours", "unsafe_shutdowns",
    "data_units_written", "data_units_read", "warning_temp_time_min",
    "critical_comp_time_min", "thm_temp1_trans_count", "thm_temp2_trans_count",
    "thm_temp1_total_time_s", "thm_temp2_total_time_s",
)
SMARTCTL_KEYS = ("model", "serial", "firmware", "smart_passed") + SMART_LOG_KEYS
ID_CTRL_KEYS = (
    "model", "serial", "firmware", "vendor_id", "mdts", "mdts_bytes", "wctemp_c",
    "cctemp_c", "mntmt_c", "mxtmt_c", "hctma", "sqes_min_bytes", "cqes_min_bytes",
    "nn", "subnqn",
)
NVME_LIST_KEYS = ("layout", "devices")
LIST_DEVICE_KEYS = (
    "device", "generic_path", "controller", "subsystem", "subsystem_nqn", "model",
    "serial", "firmware", "nsid", "size_bytes", "used_bytes", "sector_size",
    "transport", "address", "paths",
)
NUM_QUEUES_KEYS = ("submission_queues", "completion_queues", "raw")
OCP_SMART_ADD_LOG_KEYS = (
    "physical_media_written_bytes", "physical_media_read_bytes",
    "thermal_throttling_events", "throttling_status", "capacitor_health_pct",
    "plp_start_count", "percent_free_blocks", "incomplete_shutdowns",
    "pcie_correctable_errors", "log_page_version",
)

# critical_warning bit -> (our name, nvme-cli 2.x object key)
_WARNING_BITS = (
    (0, "available_spare", "available_spare"),
    (1, "temperature_threshold", "temp_threshold"),
    (2, "reliability_degraded", "reliability_degraded"),
    (3, "read_only", "ro"),
    (4, "volatile_backup_failed", "vmbu_failed"),
    (5, "pmr_read_only", "pmr_ro"),
)

# output key -> accepted source keys (nvme-cli names first, smartctl names next)
_SMART_COUNTERS = (
    ("available_spare_pct", ("avail_spare", "available_spare")),
    ("available_spare_threshold_pct", ("spare_thresh", "available_spare_threshold")),
    ("percentage_used", ("percent_used", "percentage_used")),
    ("media_errors", ("media_errors",)),
    ("num_err_log_entries", ("num_err_log_entries",)),
    ("power_on_hours", ("power_on_hours",)),
    ("unsafe_shutdowns", ("unsafe_shutdowns",)),
    ("data_units_written", ("data_units_written",)),
    ("data_units_read", ("data_units_read",)),
    ("warning_temp_time_min", ("warning_temp_time",)),
    ("critical_comp_time_min", ("critical_comp_time",)),
    ("thm_temp1_trans_count", ("thm_temp1_trans_count",)),
    ("thm_temp2_trans_count", ("thm_temp2_trans_count",)),
    ("thm_temp1_total_time_s", ("thm_temp1_total_time",)),
    ("thm_temp2_total_time_s", ("thm_temp2_total_time",)),
)

_SENSOR_KEY_RE = re.compile(r"^temperature_sensor_(\d+)$")
_NS_NAME_RE = re.compile(r"n(\d+)$")
_PATH_NAME_RE = re.compile(r"^nvme(\d+)c\d+n(\d+)$")
_INT32_OVERFLOW = -2147483648
_MPSMIN_BYTES = 4096

_FEATURE_HEADER_RE = re.compile(r"get-feature:\s*(0x[0-9a-fA-F]+|\d+)", re.IGNORECASE)
_CURRENT_VALUE_RE = re.compile(r"Current value:\s*(0x[0-9a-fA-F]+|\d+)", re.IGNORECASE)


# ---------------------------------------------------------------- helpers
def _blank(keys):
    result = dict.fromkeys(keys)
    result["errors"] = {}
    return result


def _load_object(text, result):
    """JSON object from ``text``, or ``None`` with ``errors['_input']`` set."""
    obj, error = load_json_document(text)
    if error is None and not isinstance(obj, dict):
        error = "expected a JSON object, got %s" % type(obj).__name__
    if error is not None:
        result["errors"]["_input"] = error
        return None
    return obj


def _text(value, name):
    """Stripped string; ``None`` for an empty one (nvme-cli pads with spaces)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError("%s: %r is not text" % (name, value))
    text = str(value).strip()
    return text or None


def _pick(obj, keys):
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def _field(obj, keys, coercer, errors, name):
    return convert(_pick(obj, keys), coercer, errors, name)


# ---------------------------------------------------------------- smart-log
def _warning_from_object(obj, errors):
    if "value" in obj:
        return convert(obj["value"], to_count, errors, "critical_warning")
    value = 0
    for bit, _name, key in _WARNING_BITS:
        flag = convert(obj.get(key, 0), to_bool, errors, "critical_warning")
        if flag is None:
            return None
        value |= int(flag) << bit
    return value


def _critical_warning(log, errors):
    """Return ``(value, bits)``; accepts an int, a string or the 2.x object."""
    raw = _pick(log, ("critical_warning", "critical_warrning"))
    if isinstance(raw, dict):
        value = _warning_from_object(raw, errors)
    else:
        value = convert(raw, to_count, errors, "critical_warning")
    if value is not None and value > 0xFF:
        errors["critical_warning"] = "critical_warning: %r is not a byte" % (value,)
        value = None
    if value is None:
        return None, None
    bits = dict((name, bool(value >> bit & 1)) for bit, name, _key in _WARNING_BITS)
    return value, bits


def _kelvin(value, name):
    return kelvin_to_celsius(value) if value is not None else None


def _nvme_sensors(log, errors):
    """``temperature_sensor_N`` (Kelvin) present and non-zero, in N order."""
    found = []
    for key, raw in log.items():
        match = _SENSOR_KEY_RE.match(key)
        if match:
            found.append((int(match.group(1)), key, raw))
    sensors = []
    for _index, key, raw in sorted(found):
        celsius = convert(raw, _kelvin, errors, key)
        if celsius is not None:
            sensors.append(celsius)
    return sensors


def _smart_common(log, result):
    errors = result["errors"]
    result["critical_warning"], result["critical_warning_bits"] = _critical_warning(log, errors)
    for name, keys in _SMART_COUNTERS:
        result[name] = _field(log, keys, to_count, errors, name)


def parse_smart_log(text):
    """Parse ``nvme smart-log <dev> -o json`` (any nvme-cli, 1.x to 2.x).

    Returns ``{critical_warning: int, critical_warning_bits: {available_spare,
    temperature_threshold, reliability_degraded, read_only,
    volatile_backup_failed, pmr_read_only: bool}, temperature_c: int,
    sensors_c: [int], available_spare_pct, available_spare_threshold_pct,
    percentage_used, media_errors, num_err_log_entries, power_on_hours,
    unsafe_shutdowns, data_units_written, data_units_read,
    warning_temp_time_min, critical_comp_time_min, thm_temp1_trans_count,
    thm_temp2_trans_count, thm_temp1_total_time_s, thm_temp2_total_time_s,
    errors: {}}``.

    ``temperature`` and ``temperature_sensor_N`` are Kelvin in the log and
    Celsius here (0 K = not reported -> ``None``/left out of ``sensors_c``).
    Accepts ``critical_warrning`` (1.x misspelling seen in the wild) and
    ``percent_used``/``percentage_used``, ``avail_spare``/``available_spare``,
    ``spare_thresh``/``available_spare_threshold``.
    """
    result = _blank(SMART_LOG_KEYS)
    log = _load_object(text, result)
    if log is None:
        return result
    _smart_common(log, result)
    result["temperature_c"] = convert(log.get("temperature"), _kelvin, result["errors"], "temperature_c")
    result["sensors_c"] = _nvme_sensors(log, result["errors"])
    return result


def _celsius(value, name):
    number = to_int(value, name)
    if number < -273:
        raise ValueError("%s: %r is below absolute zero" % (name, value))
    return number


def _smartctl_sensors(raw, errors):
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors["sensors_c"] = "temperature_sensors: %r is not a list" % (raw,)
        return None
    sensors = []
    for index, value in enumerate(raw):
        celsius = convert(value, _celsius, errors, "sensors_c[%d]" % index)
        if celsius is not None and celsius != 0:
            sensors.append(celsius)
    return sensors


def _smart_passed(doc, errors):
    status = doc.get("smart_status")
    if not isinstance(status, dict):
        return None
    return convert(status.get("passed"), to_bool, errors, "smart_passed")


def parse_smartctl_json(text):
    """Parse ``smartctl -a -j`` / ``-A -j`` / ``-x -j`` of an NVMe device.

    Returns the keys of :func:`parse_smart_log` plus ``model``, ``serial``,
    ``firmware`` and ``smart_passed`` (bool). smartctl already reports
    CELSIUS (``temperature``, ``temperature_sensors[]``) and uses its own
    names (``available_spare``, ``percentage_used``); its JSON has NO thermal
    throttle counters (smartmontools#583), so ``thm_temp*`` come out
    ``None`` (they are read only if a smartctl ever prints them): use :func:`parse_smart_log` for thermal facts. When the health
    section is absent (``smartctl --info -j``) the health fields are ``None``
    and ``errors['nvme_smart_health_information_log']`` says so.
    """
    result = _blank(SMARTCTL_KEYS)
    doc = _load_object(text, result)
    if doc is None:
        return result
    errors = result["errors"]
    result["model"] = convert(doc.get("model_name"), _text, errors, "model")
    result["serial"] = convert(doc.get("serial_number"), _text, errors, "serial")
    result["firmware"] = convert(doc.get("firmware_version"), _text, errors, "firmware")
    result["smart_passed"] = _smart_passed(doc, errors)
    log = doc.get("nvme_smart_health_information_log")
    if not isinstance(log, dict):
        errors["nvme_smart_health_information_log"] = (
            "section absent (smartctl run without -A/-a/-x, or not an NVMe device)"
            if log is None else "section is not an object")
        return result
    _smart_common(log, result)
    result["temperature_c"] = convert(log.get("temperature"), _celsius, errors, "temperature_c")
    result["sensors_c"] = _smartctl_sensors(log.get("temperature_sensors"), errors)
    return result


# ---------------------------------------------------------------- id-ctrl
def _mdts_bytes(mdts):
    """MDTS is 2^mdts units of CAP.MPSMIN (assumed 4 KiB); 0 = no limit."""
    if mdts is None or mdts == 0:
        return None
    return (1 << mdts) * _MPSMIN_BYTES


def _entry_size(value):
    """SQES/CQES bits 3:0 = log2 of the required (minimum) entry size."""
    if value is None or value & 0xF == 0:
        return None
    return 1 << (value & 0xF)


def parse_id_ctrl(text):
    """Parse ``nvme id-ctrl <dev> -o json`` (nvme-cli 1.x and 2.x).

    Returns ``{model, serial, firmware, vendor_id, mdts, mdts_bytes, wctemp_c,
    cctemp_c, mntmt_c, mxtmt_c, hctma, sqes_min_bytes, cqes_min_bytes, nn,
    subnqn, errors: {}}``.

    * ``mdts`` raw; ``mdts_bytes`` = 2^mdts x 4096 (CAP.MPSMIN assumed 4 KiB,
      true for all but exotic controllers); mdts 0 = no limit -> ``None``.
    * ``wctemp``/``cctemp``/``mntmt``/``mxtmt`` Kelvin -> Celsius; 0 = not
      reported -> ``None``.
    * ``hctma``: bit 0 (host-controlled thermal management supported), bool.
    * ``sqes``/``cqes`` (e.g. 102 = 0x66, 68 = 0x44) -> minimum entry sizes
      64 and 16 bytes. Hex strings (``"0x66"``) are accepted too.
    * Text fields are stripped of nvme-cli's space padding; empty -> ``None``.
    """
    result = _blank(ID_CTRL_KEYS)
    ctrl = _load_object(text, result)
    if ctrl is None:
        return result
    errors = result["errors"]
    result["model"] = convert(ctrl.get("mn"), _text, errors, "model")
    result["serial"] = convert(ctrl.get("sn"), _text, errors, "serial")
    result["firmware"] = convert(ctrl.get("fr"), _text, errors, "firmware")
    result["subnqn"] = convert(ctrl.get("subnqn"), _text, errors, "subnqn")
    result["vendor_id"] = convert(ctrl.get("vid"), to_count, errors, "vendor_id")
    result["nn"] = convert(ctrl.get("nn"), to_count, errors, "nn")
    result["mdts"] = convert(ctrl.get("mdts"), to_count, errors, "mdts")
    result["mdts_bytes"] = _mdts_bytes(result["mdts"])
    for key in ("wctemp", "cctemp", "mntmt", "mxtmt"):
        result[key + "_c"] = convert(ctrl.get(key), _kelvin, errors, key + "_c")
    hctma = convert(ctrl.get("hctma"), to_count, errors, "hctma")
    result["hctma"] = None if hctma is None else bool(hctma & 1)
    sqes = convert(ctrl.get("sqes"), to_count, errors, "sqes_min_bytes")
    cqes = convert(ctrl.get("cqes"), to_count, errors, "cqes_min_bytes")
    result["sqes_min_bytes"] = _entry_size(sqes)
    result["cqes_min_bytes"] = _entry_size(cqes)
    return result


# ---------------------------------------------------------------- get-feature 0x7
def parse_get_feature_num_queues(text):
    """Parse ``nvme get-feature <dev> -f 7 [-H]`` (Number of Queues).

    Accepts the 2.x form ``get-feature:0x07 (Number of Queues), Current
    value:0x00070007`` and the 1.x form ``get-feature:0x7 (...), Current
    value:0x70007``; ``-H`` detail lines and trailing text are ignored.
    The value is ``(NCQA-1) << 16 | (NSQA-1)`` (both 0's-based).

    Returns ``{submission_queues: (raw & 0xffff) + 1, completion_queues:
    (raw >> 16) + 1, raw: int, errors: {}}``. Output of another feature id
    gives ``errors['_input']``.
    """
    result = _blank(NUM_QUEUES_KEYS)
    if not isinstance(text, str) or not text.strip():
        result["errors"]["_input"] = "empty input" if isinstance(text, str) or text is None else "input is not text"
        return result
    header = _FEATURE_HEADER_RE.search(text)
    if header and to_int(header.group(1)) != 7:
        result["errors"]["_input"] = "output is for feature %s, not 0x7 (Number of Queues)" % header.group(1)
        return result
    match = _CURRENT_VALUE_RE.search(text)
    if not match:
        result["errors"]["_input"] = "no 'Current value:' in get-feature output"
        return result
    raw = to_int(match.group(1))
    if raw > 0xFFFFFFFF:
        result["errors"]["_input"] = "Current value %s is wider than 32 bits" % match.group(1)
        return result
    result["raw"] = raw
    result["submission_queues"] = (raw & 0xFFFF) + 1
    result["completion_queues"] = (raw >> 16) + 1
    return result


# ---------------------------------------------------------------- nvme list
def _dev_path(name):
    if name is None:
        return None
    return name if name.startswith("/") else "/dev/" + name


def _nsid_from_name(name):
    match = _NS_NAME_RE.search(name or "")
    return int(match.group(1)) if match else None


def _list_size(entry, key, errors, label):
    """A size in bytes; the 1.x int32 overflow (and any negative) -> None + error."""
    raw = entry.get(key)
    if raw is None:
        return None
    try:
        value = to_int(raw, label)
    except ValueError as exc:
        errors[label] = str(exc)
        return None
    if value < 0:
        hint = " (nvme-cli 1.x int32 overflow)" if value == _INT32_OVERFLOW else ""
        errors[label] = "%s: %d is negative%s; reported as None" % (label, value, hint)
        return None
    return value


def _namespace_sizes(entry, record, errors, prefix):
    record["sector_size"] = convert(entry.get("SectorSize"), to_count, errors, prefix + "sector_size")
    record["used_bytes"] = _list_size(entry, "UsedBytes", errors, prefix + "used_bytes")
    size = _list_size(entry, "PhysicalSize", errors, prefix + "size_bytes")
    lba_count = convert(entry.get("MaximumLBA"), to_count, errors, prefix + "maximum_lba")
    if size is None and lba_count is not None and record["sector_size"]:
        # nvme-cli's MaximumLBA is the namespace size in blocks (nsze).
        size = lba_count * record["sector_size"]
        errors.pop(prefix + "size_bytes", None)
    record["size_bytes"] = size


def _flat_device(entry, errors, prefix):
    record = dict.fromkeys(LIST_DEVICE_KEYS)
    record["device"] = convert(entry.get("DevicePath"), _text, errors, prefix + "device")
    record["generic_path"] = convert(entry.get("GenericPath"), _text, errors, prefix + "generic_path")
    record["model"] = convert(entry.get("ModelNumber"), _text, errors, prefix + "model")
    record["serial"] = convert(entry.get("SerialNumber"), _text, errors, prefix + "serial")
    record["firmware"] = convert(entry.get("Firmware"), _text, errors, prefix + "firmware")
    nsid = convert(entry.get("NameSpace", entry.get("NSID")), to_count, errors, prefix + "nsid")
    record["nsid"] = nsid if nsid is not None else _nsid_from_name(record["device"])
    _namespace_sizes(entry, record, errors, prefix)
    record["paths"] = []
    return record


def _controller_info(ctrl, errors, prefix):
    transport = convert(ctrl.get("Transport"), _text, errors, prefix + "transport")
    return {
        "controller": convert(ctrl.get("Controller"), _text, errors, prefix + "controller"),
        "transport": transport.lower() if transport else None,
        "address": convert(ctrl.get("Address"), _text, errors, prefix + "address"),
        "model": convert(ctrl.get("ModelNumber"), _text, errors, prefix + "model"),
        "serial": convert(ctrl.get("SerialNumber"), _text, errors, prefix + "serial"),
        "firmware": convert(ctrl.get("Firmware"), _text, errors, prefix + "firmware"),
        "path_entries": [p for p in _as_list(ctrl.get("Paths"), errors, prefix + "paths") if isinstance(p, dict)],
    }


def _as_list(value, errors, label):
    if value is None:
        return []
    if isinstance(value, list):
        return value
    errors[label] = "%s: expected a list, got %s" % (label, type(value).__name__)
    return []


def _path_record(ctrl, ana_state):
    return {"controller": ctrl["controller"], "transport": ctrl["transport"],
            "address": ctrl["address"], "ana_state": ana_state}


def _path_serves(path_name, head_name):
    """Does path ``nvme<S>c<C>n<N>`` belong to namespace head ``nvme<S>n<N>``?"""
    if not path_name or not head_name:
        return True
    match = _PATH_NAME_RE.match(path_name)
    if not match:
        return True
    return head_name == "nvme%sn%s" % match.groups()


def _head_paths(head_name, controllers):
    paths = []
    for ctrl in controllers:
        if not ctrl["path_entries"]:
            paths.append(_path_record(ctrl, None))
            continue
        for entry in ctrl["path_entries"]:
            if _path_serves(entry.get("Path"), head_name):
                paths.append(_path_record(ctrl, entry.get("ANAState")))
    return paths


def _common(paths, key):
    values = set(path[key] for path in paths)
    return values.pop() if len(values) == 1 else None


def _nested_namespace(entry, subsystem, errors, prefix):
    record = dict.fromkeys(LIST_DEVICE_KEYS)
    name = convert(entry.get("NameSpace"), _text, errors, prefix + "device")
    generic = convert(entry.get("Generic"), _text, errors, prefix + "generic_path")
    record["device"] = _dev_path(name)
    record["generic_path"] = _dev_path(generic)
    record["subsystem"] = subsystem["name"]
    record["subsystem_nqn"] = subsystem["nqn"]
    nsid = convert(entry.get("NSID"), to_count, errors, prefix + "nsid")
    record["nsid"] = nsid if nsid is not None else _nsid_from_name(name)
    _namespace_sizes(entry, record, errors, prefix)
    return record


def _fill_from_controller(record, ctrl):
    for key in ("model", "serial", "firmware"):
        record[key] = ctrl[key]


def _subsystem_devices(subsys, errors, prefix, devices):
    info = {
        "name": convert(subsys.get("Subsystem"), _text, errors, prefix + "subsystem"),
        "nqn": convert(subsys.get("SubsystemNQN"), _text, errors, prefix + "subsystem_nqn"),
    }
    controllers = []
    for ctrl_raw in _as_list(subsys.get("Controllers"), errors, prefix + "controllers"):
        if not isinstance(ctrl_raw, dict):
            continue
        ctrl = _controller_info(ctrl_raw, errors, prefix)
        controllers.append(ctrl)
        for ns in _as_list(ctrl_raw.get("Namespaces"), errors, prefix + "namespaces"):
            if not isinstance(ns, dict):
                continue
            label = "devices[%d]." % len(devices)
            record = _nested_namespace(ns, info, errors, label)
            _fill_from_controller(record, ctrl)
            record["controller"] = ctrl["controller"]
            record["transport"] = ctrl["transport"]
            record["address"] = ctrl["address"]
            record["paths"] = [_path_record(ctrl, _single_ana_state(ctrl))]
            devices.append(record)
    for ns in _as_list(subsys.get("Namespaces"), errors, prefix + "namespaces"):
        if not isinstance(ns, dict):
            continue
        record = _nested_namespace(ns, info, errors, "devices[%d]." % len(devices))
        head = (record["device"] or "").rsplit("/", 1)[-1]
        record["paths"] = _head_paths(head, controllers)
        if controllers:
            _fill_from_controller(record, controllers[0])
        for key in ("controller", "transport", "address"):
            record[key] = _common(record["paths"], key)
        devices.append(record)


def _single_ana_state(ctrl):
    states = [entry.get("ANAState") for entry in ctrl["path_entries"]]
    return states[0] if len(states) == 1 else None


PATH_NODE_RE = re.compile(r"^nvme\d+c\d+n\d+$")


def parse_nvme_list(text):
    """Parse ``nvme list -o json`` or ``nvme list -v -o json``, any nvme-cli.

    Returns ``{layout: "flat"|"nested"|"empty", devices: [...], errors: {}}``
    with one device dict per namespace block device::

        {device: "/dev/nvme0n1", generic_path: "/dev/ng0n1" or None,
         controller: "nvme0" or None, subsystem: "nvme-subsys0" or None,
         subsystem_nqn, model, serial, firmware, nsid: int,
         size_bytes: int, used_bytes: int or None, sector_size: int,
         transport: "pcie"/"tcp"/"rdma"/"fc"/... or None, address: str or None,
         paths: [{controller, transport, address, ana_state}]}

    * flat (``Devices[].DevicePath``, 1.x-2.10, 2.13): no controller,
      subsystem or transport information -> ``None``; ``paths`` is ``[]``;
      1.x output without ``NameSpace`` takes ``nsid`` from the device name.
    * nested (``Devices[].Subsystems[]``, 2.11 default / ``-v``; in 1.x ``-v`` each ``Devices[]`` entry is the
      subsystem itself, with its ``Controllers[]`` and ``Namespaces[]``): a
      namespace under a controller has that controller as its one path; a
      namespace under the subsystem (native multipath, NVMe-oF) lists every
      controller path with its ``ANAState``; its ``controller``/``transport``/
      ``address`` are set only when all its paths agree, else ``None``.
    * Native-multipath path nodes (``nvme0c1n1``: a controller's path, size 0 in 1.x) are left out.
    * ``{"Devices": []}`` and ``{}`` -> layout ``"empty"``, ``devices`` ``[]``.
    * Negative sizes (1.x int32 overflow ``-2147483648``) -> ``None`` plus an
      error; ``size_bytes`` then falls back to ``MaximumLBA x SectorSize``.

    Unusable input: ``layout`` and ``devices`` are ``None`` and
    ``errors['_input']`` says why.
    """
    result = _blank(NVME_LIST_KEYS)
    doc = _load_object(text, result)
    if doc is None:
        return result
    errors = result["errors"]
    if "Devices" not in doc:
        if doc:
            errors["_input"] = "no 'Devices' key: not nvme list JSON"
            return result
        result["layout"], result["devices"] = "empty", []
        return result
    entries = doc["Devices"]
    if not isinstance(entries, list):
        errors["_input"] = "'Devices' is %s, not a list" % type(entries).__name__
        return result
    devices, nested = [], False
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            errors["Devices[%d]" % index] = "not an object"
            continue
        if "Subsystems" in entry:
            nested = True
            for s_index, subsys in enumerate(_as_list(entry["Subsystems"], errors, "Devices[%d].Subsystems" % index)):
                if isinstance(subsys, dict):
                    _subsystem_devices(subsys, errors, "Devices[%d].Subsystems[%d]." % (index, s_index), devices)
        elif "DevicePath" not in entry and ("Controllers" in entry or "Subsystem" in entry):
            # nvme-cli 1.x `nvme list -v -o json`: each Devices[] entry is a subsystem (no HostNQN wrapper)
            nested = True
            _subsystem_devices(entry, errors, "Devices[%d]." % index, devices)
        else:
            devices.append(_flat_device(entry, errors, "devices[%d]." % len(devices)))
    # A native-multipath path node (nvme<X>c<Y>n<Z>, size 0 in 1.x's flat list) is a controller's path to a
    # namespace, not a namespace: the namespace is its head (nvme<X>n<Z>).
    devices = [device for device in devices if not PATH_NODE_RE.match((device.get("device") or "").rsplit("/", 1)[-1])]
    result["devices"] = devices
    result["layout"] = "nested" if nested else ("flat" if devices else "empty")
    return result


# ---------------------------------------------------------------- OCP C0 log
def _wide_counter(log, key, errors, name):
    """OCP 128-bit counters: ``{"hi": h, "lo": l}`` or ``<key>_hi``/``<key>_lo``."""
    raw = log.get(key)
    if isinstance(raw, dict):
        hi, lo = raw.get("hi", 0), raw.get("lo")
    else:
        hi, lo = log.get(key + "_hi", 0), log.get(key + "_lo", raw)
    if lo is None:
        return None
    hi = convert(hi, to_count, errors, name)
    lo = convert(lo, to_count, errors, name)
    if hi is None or lo is None:
        return None
    return hi << 64 | lo


def parse_ocp_smart_add_log(text):
    """Parse ``nvme ocp smart-add-log <dev> -o json`` (OCP Datacenter NVMe
    SSD spec, log page C0h; keys with spaces as nvme-cli prints them).

    Returns ``{physical_media_written_bytes, physical_media_read_bytes,
    thermal_throttling_events, throttling_status, capacitor_health_pct,
    plp_start_count, percent_free_blocks, incomplete_shutdowns,
    pcie_correctable_errors, log_page_version, errors: {}}``. The 128-bit
    media counters (bytes) may be ``{"hi","lo"}`` objects or ``_hi``/``_lo``
    float pairs.
    """
    result = _blank(OCP_SMART_ADD_LOG_KEYS)
    log = _load_object(text, result)
    if log is None:
        return result
    errors = result["errors"]
    result["physical_media_written_bytes"] = _wide_counter(
        log, "Physical media units written", errors, "physical_media_written_bytes")
    result["physical_media_read_bytes"] = _wide_counter(
        log, "Physical media units read", errors, "physical_media_read_bytes")
    for name, key in (
        ("thermal_throttling_events", "Number of Thermal throttling events"),
        ("throttling_status", "Current throttling status"),
        ("capacitor_health_pct", "Capacitor health"),
        ("plp_start_count", "PLP start count"),
        ("percent_free_blocks", "Percent free blocks"),
        ("incomplete_shutdowns", "Incomplete shutdowns"),
        ("pcie_correctable_errors", "PCIe correctable error count"),
        ("log_page_version", "Log page version"),
    ):
        result[name] = convert(log.get(key), to_count, errors, name)
    return result
