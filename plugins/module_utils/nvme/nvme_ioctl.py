# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe admin commands from Python, without nvme-cli: the SMART / Health Information log page, Identify
Controller and the Number of Queues feature read with the kernel's admin passthrough ioctl, their fixed binary
layouts decoded.

Why not nvme-cli: a sampler that reads every drive every second under load (the thermal validation) cannot start a
process per drive per sample; one ioctl on an open controller costs microseconds. nvme-cli stays the fallback
where the ioctl is refused (no CAP_SYS_ADMIN, a kernel without passthrough) and its JSON parsers stay the one
normalisation: :func:`smart_log_fields` and :func:`id_ctrl_fields` decode the bytes into the field names nvme-cli's
JSON uses, and :func:`read_smart_log` / :func:`read_id_ctrl` hand them to
:func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.nvme_cli.parse_smart_log` and
:func:`~ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.nvme_cli.parse_id_ctrl`, so both sources
give one shape (Celsius, named warning bits, minutes and seconds as the specification counts them).

Layouts: NVM Express Base Specification 1.4, Figure 194 (SMART / Health Information, log identifier 02h, 512
bytes) and Figure 247 (Identify Controller, CNS 01h, 4096 bytes); all integers little-endian. Get Features,
Number of Queues (feature 07h, Figure 293) has no data: the value is Dword 0 of the completion, which the kernel
writes back into the command's ``result``.
Standard library only, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import errno
import fcntl
import json
import os
import struct

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme.nvme_cli import (
    parse_get_feature_num_queues,
    parse_id_ctrl,
    parse_smart_log,
)

# struct nvme_passthru_cmd (linux/nvme_ioctl.h): opcode, flags, rsvd1, nsid, cdw2, cdw3, metadata, addr,
# metadata_len, data_len, cdw10..cdw15, timeout_ms, result - 72 bytes, naturally aligned (no padding).
PASSTHRU = struct.Struct('<BBHIIIQQII6III')
# _IOWR('N', 0x41, struct nvme_admin_cmd): read|write << 30, size << 16, type << 8, number
NVME_IOCTL_ADMIN_CMD = (3 << 30) | (PASSTHRU.size << 16) | (ord('N') << 8) | 0x41

OPC_GET_LOG_PAGE = 0x02
OPC_IDENTIFY = 0x06
OPC_GET_FEATURES = 0x0A
FID_NUM_QUEUES = 0x07
LID_SMART = 0x02
CNS_CONTROLLER = 0x01
NSID_ALL = 0xFFFFFFFF
SMART_LOG_BYTES = 512
ID_CTRL_BYTES = 4096
TIMEOUT_MS = 5000


class NvmeIoctlError(Exception):
    """The admin command could not be sent or the controller refused it (the message says which)."""

    def __init__(self, message, errno_value=None, status=None):
        super(NvmeIoctlError, self).__init__(message)
        self.errno = errno_value
        self.status = status


# --- decoding (pure) ------------------------------------------------------------------------------------------
def _uint(buf, offset, size):
    return int.from_bytes(bytes(buf[offset:offset + size]), 'little')


def _ascii(buf, offset, size):
    return bytes(buf[offset:offset + size]).split(b'\0', 1)[0].decode('ascii', 'replace').strip()


# (nvme-cli JSON name, offset, bytes) of the SMART / Health Information log page
_SMART_FIELDS = (
    ('critical_warning', 0, 1), ('temperature', 1, 2), ('avail_spare', 3, 1), ('spare_thresh', 4, 1),
    ('percent_used', 5, 1), ('endurance_grp_critical_warning_summary', 6, 1),
    ('data_units_read', 32, 16), ('data_units_written', 48, 16), ('host_read_commands', 64, 16),
    ('host_write_commands', 80, 16), ('controller_busy_time', 96, 16), ('power_cycles', 112, 16),
    ('power_on_hours', 128, 16), ('unsafe_shutdowns', 144, 16), ('media_errors', 160, 16),
    ('num_err_log_entries', 176, 16), ('warning_temp_time', 192, 4), ('critical_comp_time', 196, 4),
    ('thm_temp1_trans_count', 216, 4), ('thm_temp2_trans_count', 220, 4), ('thm_temp1_total_time', 224, 4),
    ('thm_temp2_total_time', 228, 4),
)
_SENSORS_OFFSET = 200  # temperature sensors 1-8, two bytes each, Kelvin, 0 = not implemented


def smart_log_fields(buf):
    """The SMART / Health Information log page (512 bytes) as nvme-cli's ``smart-log -o json`` names its fields
    (raw units: Kelvin, minutes, seconds, units of 1000 x 512 bytes). Raises ValueError for a short buffer."""
    if len(buf) < SMART_LOG_BYTES:
        raise ValueError('SMART log: %d bytes, the page has %d' % (len(buf), SMART_LOG_BYTES))
    fields = dict((name, _uint(buf, offset, size)) for name, offset, size in _SMART_FIELDS)
    for index in range(8):
        kelvin = _uint(buf, _SENSORS_OFFSET + 2 * index, 2)
        if kelvin:
            fields['temperature_sensor_%d' % (index + 1)] = kelvin
    return fields


def id_ctrl_fields(buf):
    """Identify Controller (4096 bytes) as nvme-cli's ``id-ctrl -o json`` names the fields the collection reads.
    Raises ValueError for a short buffer."""
    if len(buf) < ID_CTRL_BYTES:
        raise ValueError('Identify Controller: %d bytes, the structure has %d' % (len(buf), ID_CTRL_BYTES))
    return {
        'vid': _uint(buf, 0, 2), 'sn': _ascii(buf, 4, 20), 'mn': _ascii(buf, 24, 40), 'fr': _ascii(buf, 64, 8),
        'mdts': _uint(buf, 77, 1), 'cntlid': _uint(buf, 78, 2), 'wctemp': _uint(buf, 266, 2),
        'cctemp': _uint(buf, 268, 2), 'hctma': _uint(buf, 322, 2), 'mntmt': _uint(buf, 324, 2),
        'mxtmt': _uint(buf, 326, 2), 'sqes': _uint(buf, 512, 1), 'cqes': _uint(buf, 513, 1),
        'nn': _uint(buf, 516, 4), 'subnqn': _ascii(buf, 768, 256),
    }


def passthru(opcode, nsid, cdw10, addr, data_len, timeout_ms=TIMEOUT_MS):
    """The packed ``struct nvme_passthru_cmd`` (a bytearray: the kernel writes ``result`` back into it)."""
    return bytearray(PASSTHRU.pack(opcode, 0, 0, nsid, 0, 0, 0, addr, 0, data_len, cdw10, 0, 0, 0, 0, 0,
                                   timeout_ms, 0))


def get_log_page_cdw10(lid, length):
    """CDW10 of Get Log Page: the number of dwords, 0's based (lower 16 bits), and the log identifier."""
    return (((length // 4) - 1) & 0xFFFF) << 16 | lid


def num_queues_text(result):
    """Dword 0 of Get Features 07h as nvme-cli 2.x prints it, for :func:`parse_get_feature_num_queues`."""
    return 'get-feature:0x07 (Number of Queues), Current value:0x%08x\n' % result


# --- the ioctl ------------------------------------------------------------------------------------------------
def _send(fd, cmd, opcode):
    """The ioctl for the packed command ``cmd``; Dword 0 of the completion (``result``)."""
    try:
        status = fcntl.ioctl(fd, NVME_IOCTL_ADMIN_CMD, cmd, True)
    except OSError as exc:
        raise NvmeIoctlError('admin command 0x%02x: %s' % (opcode, os.strerror(exc.errno)), errno_value=exc.errno)
    if status:
        raise NvmeIoctlError('admin command 0x%02x: the controller answered status 0x%x' % (opcode, status),
                             status=status)
    return PASSTHRU.unpack(bytes(cmd))[-1]


def admin(fd, opcode, nsid, cdw10, length):
    """Send one admin command with a data-in buffer of ``length`` bytes on the open controller ``fd``; the bytes.
    Raises :class:`NvmeIoctlError` naming the errno (refused by the kernel) or the NVMe status (by the drive)."""
    data = ctypes.create_string_buffer(length)
    _send(fd, passthru(opcode, nsid, cdw10, ctypes.addressof(data), length), opcode)
    return data.raw


def admin_result(fd, opcode, nsid, cdw10):
    """Send one admin command without data on the open controller ``fd``; Dword 0 of its completion.
    Raises :class:`NvmeIoctlError` as :func:`admin` does."""
    return _send(fd, passthru(opcode, nsid, cdw10, 0, 0), opcode)


def _with_controller(path, work):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise NvmeIoctlError('%s: %s' % (path, os.strerror(exc.errno)), errno_value=exc.errno)
    try:
        return work(fd)
    finally:
        os.close(fd)


def read_smart_log(path):
    """``path`` (``/dev/nvme0``, or a namespace) -> :func:`parse_smart_log`'s dict, from one ioctl."""
    raw = _with_controller(path, lambda fd: admin(fd, OPC_GET_LOG_PAGE, NSID_ALL,
                                                  get_log_page_cdw10(LID_SMART, SMART_LOG_BYTES), SMART_LOG_BYTES))
    return parse_smart_log(json.dumps(smart_log_fields(raw)))


def read_id_ctrl(path):
    """``path`` -> :func:`parse_id_ctrl`'s dict, from one ioctl."""
    raw = _with_controller(path, lambda fd: admin(fd, OPC_IDENTIFY, 0, CNS_CONTROLLER, ID_CTRL_BYTES))
    return parse_id_ctrl(json.dumps(id_ctrl_fields(raw)))


def read_num_queues(path):
    """``path`` -> :func:`parse_get_feature_num_queues`'s dict (the current value, SEL 0), from one ioctl."""
    result = _with_controller(path, lambda fd: admin_result(fd, OPC_GET_FEATURES, 0, FID_NUM_QUEUES))
    return parse_get_feature_num_queues(num_queues_text(result))


def refused(exc):
    """Whether an :class:`NvmeIoctlError` means "use nvme-cli instead" (no permission, no passthrough, not an
    NVMe device) rather than a drive that answered with an error."""
    return exc.status is None and exc.errno in (errno.EPERM, errno.EACCES, errno.ENOTTY, errno.EINVAL,
                                                errno.EOPNOTSUPP)
