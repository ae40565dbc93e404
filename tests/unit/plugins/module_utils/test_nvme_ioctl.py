# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/nvme/nvme_ioctl.py: the binary layouts of the SMART log and Identify Controller decoded into nvme-cli's
field names and normalised by the same parsers; the passthrough command as the kernel expects it; a device that
is no NVMe controller refused with an error that says to fall back to nvme-cli."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import struct

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.nvme import nvme_cli, nvme_ioctl


def smart_page():
    """A SMART / Health Information page written field by field at the specification's offsets."""
    page = bytearray(512)
    page[0] = 0x02                                   # critical warning: temperature
    struct.pack_into('<H', page, 1, 345)             # composite temperature, Kelvin (72 C)
    page[3], page[4], page[5] = 100, 10, 3           # spare, spare threshold, percentage used
    page[32:48] = (123456789).to_bytes(16, 'little')                 # data units read
    page[48:64] = (2 ** 70 + 5).to_bytes(16, 'little')               # data units written (past 64 bits)
    page[128:144] = (4321).to_bytes(16, 'little')                    # power-on hours
    page[144:160] = (7).to_bytes(16, 'little')                       # unsafe shutdowns
    page[160:176] = (2).to_bytes(16, 'little')                       # media errors
    page[176:192] = (9).to_bytes(16, 'little')                       # error log entries
    struct.pack_into('<II', page, 192, 12, 1)        # warning / critical composite temperature time, minutes
    struct.pack_into('<HHH', page, 200, 340, 0, 350)  # sensors 1-3 (sensor 2 not implemented)
    struct.pack_into('<IIII', page, 216, 5, 1, 300, 20)  # TMT1/TMT2 transitions, total seconds
    return page


def test_the_smart_page_decodes_to_nvme_clis_names_and_the_same_normalised_values():
    fields = nvme_ioctl.smart_log_fields(smart_page())
    assert fields['critical_warning'] == 2 and fields['temperature'] == 345
    assert fields['data_units_written'] == 2 ** 70 + 5 and fields['warning_temp_time'] == 12
    assert fields['temperature_sensor_1'] == 340 and 'temperature_sensor_2' not in fields
    assert fields['thm_temp1_trans_count'] == 5 and fields['thm_temp2_total_time'] == 20
    parsed = nvme_cli.parse_smart_log(json.dumps(fields))
    assert parsed['errors'] == {}
    assert parsed['temperature_c'] == 72 and parsed['sensors_c'] == [67, 77]
    assert parsed['critical_warning_bits']['temperature_threshold'] is True
    assert parsed['critical_warning_bits']['available_spare'] is False
    assert (parsed['warning_temp_time_min'], parsed['critical_comp_time_min']) == (12, 1)
    assert (parsed['thm_temp1_trans_count'], parsed['thm_temp1_total_time_s']) == (5, 300)
    assert (parsed['power_on_hours'], parsed['media_errors'], parsed['available_spare_pct']) == (4321, 2, 100)
    # the same drive as nvme-cli 2.x prints it gives the same result
    cli = dict(fields, critical_warning={'value': 2, 'temp_threshold': 1})
    assert nvme_cli.parse_smart_log(json.dumps(cli)) == parsed


def test_identify_controller_decodes_the_thermal_and_queue_fields():
    page = bytearray(4096)
    struct.pack_into('<H', page, 0, 0x1B36)
    page[4:24] = b'DATA0001'.ljust(20, b' ')
    page[24:64] = b'QEMU NVMe Ctrl'.ljust(40, b' ')
    page[64:72] = b'8.2.2   '
    page[77] = 7
    struct.pack_into('<HH', page, 266, 343, 373)      # WCTEMP 70 C, CCTEMP 100 C
    struct.pack_into('<HHH', page, 322, 1, 273 + 20, 273 + 80)   # HCTMA, MNTMT, MXTMT
    page[512], page[513] = 0x66, 0x44
    struct.pack_into('<I', page, 516, 256)
    page[768:768 + 26] = b'nqn.2019-08.org.qemu:DATA1'
    parsed = nvme_cli.parse_id_ctrl(json.dumps(nvme_ioctl.id_ctrl_fields(page)))
    assert parsed['errors'] == {}
    assert (parsed['serial'], parsed['model'], parsed['firmware']) == ('DATA0001', 'QEMU NVMe Ctrl', '8.2.2')
    assert (parsed['wctemp_c'], parsed['cctemp_c'], parsed['mntmt_c'], parsed['mxtmt_c']) == (70, 100, 20, 80)
    assert parsed['hctma'] is True and parsed['mdts_bytes'] == 128 * 4096
    assert (parsed['sqes_min_bytes'], parsed['cqes_min_bytes'], parsed['nn']) == (64, 16, 256)
    assert parsed['subnqn'] == 'nqn.2019-08.org.qemu:DATA1' and parsed['vendor_id'] == 0x1B36


def test_short_buffers_are_refused():
    with pytest.raises(ValueError, match='SMART log: 100 bytes, the page has 512'):
        nvme_ioctl.smart_log_fields(bytearray(100))
    with pytest.raises(ValueError, match='Identify Controller: 512 bytes'):
        nvme_ioctl.id_ctrl_fields(bytearray(512))


def test_the_passthrough_command_is_the_kernels_struct():
    # linux/nvme_ioctl.h: struct nvme_passthru_cmd is 72 bytes; NVME_IOCTL_ADMIN_CMD is 0xC0484E41
    assert nvme_ioctl.PASSTHRU.size == 72 and nvme_ioctl.NVME_IOCTL_ADMIN_CMD == 0xC0484E41
    cmd = nvme_ioctl.passthru(nvme_ioctl.OPC_GET_LOG_PAGE, nvme_ioctl.NSID_ALL,
                              nvme_ioctl.get_log_page_cdw10(nvme_ioctl.LID_SMART, 512), 0x1000, 512)
    fields = nvme_ioctl.PASSTHRU.unpack(bytes(cmd))
    assert fields[0] == 0x02 and fields[3] == 0xFFFFFFFF and fields[7] == 0x1000 and fields[9] == 512
    assert fields[10] == (127 << 16) | 0x02   # 128 dwords, 0's based, log identifier 02h


def test_a_device_that_is_no_nvme_controller_says_to_fall_back(tmp_path):
    with pytest.raises(nvme_ioctl.NvmeIoctlError) as exc:
        nvme_ioctl.read_smart_log('/dev/null')
    assert exc.value.status is None and nvme_ioctl.refused(exc.value)
    with pytest.raises(nvme_ioctl.NvmeIoctlError) as exc:
        nvme_ioctl.read_id_ctrl(str(tmp_path / 'absent'))
    assert str(exc.value) == '%s: No such file or directory' % (tmp_path / 'absent')
    assert not nvme_ioctl.refused(exc.value)
