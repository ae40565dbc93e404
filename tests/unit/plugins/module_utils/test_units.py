# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from testenv import REAL_WORLD

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import (
    convert,
    kelvin_to_celsius,
    load_json_document,
    parse_size,
    to_bool,
    to_count,
    to_int,
)

MIB = 1024 * 1024


@pytest.mark.parametrize("value, expected", [
    (1048576, MIB),
    (1048576.0, MIB),
    ("1048576", MIB),
    ("1M", MIB),
    ("1MiB", MIB),
    ("1m", MIB),
    ("1mib", MIB),
    ("1 MiB", MIB),
    (" 1M ", MIB),
    ("512K", 512 * 1024),
    ("512k", 512 * 1024),
    ("4KiB", 4096),
    ("4096B", 4096),
    ("1G", 1024 ** 3),
    ("1GiB", 1024 ** 3),
    ("2T", 2 * 1024 ** 4),
    ("8M", 8 * MIB),
])
def test_parse_size_accepts(value, expected):
    assert parse_size(value) == expected


@pytest.mark.parametrize("value", [
    "1X", "", "M", "-1M", "1.5M", "1,024", "0", 0, "0M", -4096, 1.5, True, False,
    None, [1], {"size": 1}, "1 M B", "one", "1e6", "0x100000",
])
def test_parse_size_refuses(value):
    with pytest.raises(ValueError) as exc:
        parse_size(value, name="block_size")
    message = str(exc.value)
    assert message.startswith("block_size: ")
    assert repr(value) in message


def test_parse_size_error_says_what_is_accepted():
    with pytest.raises(ValueError) as exc:
        parse_size("1X", name="block_size")
    assert str(exc.value) == (
        "block_size: '1X' is not a size; use bytes (1048576) or a binary suffix "
        "(512K, 1M, 1MiB, 1G, 1GiB, 1T); sizes must be whole and above zero")


@pytest.mark.parametrize("value, hint", [("1MB", "1M"), ("4kB", "4K"), ("2gb", "2G"), ("1TB", "1T")])
def test_parse_size_refuses_ambiguous_si_suffixes(value, hint):
    with pytest.raises(ValueError) as exc:
        parse_size(value, name="block_size")
    assert "ambiguous" in str(exc.value)
    assert hint in str(exc.value)


@pytest.mark.parametrize("kelvin, celsius", [
    (357, 84), (273, 0), (324, 51), ("310", 37), (310.0, 37), (None, None), (0, None), ("0", None),
])
def test_kelvin_to_celsius(kelvin, celsius):
    assert kelvin_to_celsius(kelvin) == celsius


@pytest.mark.parametrize("kelvin", ["hot", -5, 310.5, True, [310]])
def test_kelvin_to_celsius_refuses(kelvin):
    with pytest.raises(ValueError):
        kelvin_to_celsius(kelvin)


@pytest.mark.parametrize("value, expected", [
    (5, 5), (-3, -3), (1765656.0, 1765656), ("42", 42), (" 42 ", 42), ("0x66", 102),
    ("0X44", 68), ("310.0", 310), ("-2147483648", -2147483648),
])
def test_to_int(value, expected):
    result = to_int(value)
    assert result == expected
    assert isinstance(result, int) and not isinstance(result, bool)


@pytest.mark.parametrize("value", [True, None, 1.5, "hot", "", "1e3", [], {}, float("nan"), float("inf")])
def test_to_int_refuses(value):
    with pytest.raises(ValueError):
        to_int(value, "field")


def test_to_count_refuses_negative():
    assert to_count("7") == 7
    with pytest.raises(ValueError):
        to_count(-1, "used_bytes")


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), (1, True), (0, False), ("true", True), ("False", False),
    ("1", True), ("0", False), ("Enabled", True), ("disabled", False), ("yes", True), ("off", False),
])
def test_to_bool(value, expected):
    assert to_bool(value) is expected


@pytest.mark.parametrize("value", [2, "maybe", None, 1.0, []])
def test_to_bool_refuses(value):
    with pytest.raises(ValueError):
        to_bool(value)


def test_convert_records_error_and_keeps_going():
    errors = {}
    assert convert("hot", to_int, errors, "temperature_c") is None
    assert convert(None, to_int, errors, "absent") is None
    assert convert("12", to_int, errors, "ok") == 12
    assert list(errors) == ["temperature_c"]
    assert "'hot'" in errors["temperature_c"]


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('fio: io_u error on file /x: Input/output error\n{"a": 1}\n', {"a": 1}),
    ('[root@h ~]# nvme list -o json\n{"Devices": []}\ntrailing noise\n', {"Devices": []}),
    ('  {"a": [1, 2]}', {"a": [1, 2]}),
    ("[1, 2]", [1, 2]),
])
def test_load_json_document(text, expected):
    assert load_json_document(text) == (expected, None)


@pytest.mark.parametrize("text", [
    None, "", "   \n", "not json at all", '{"a": 1,', b"\xff\xfe", 42,
    '{\n  "outer": {\n    "x": 1\n  },\n  "cut',  # truncated: inner objects must not be returned
])
def test_load_json_document_failures(text):
    obj, error = load_json_document(text)
    assert obj is None
    assert error


def test_every_real_world_sample_is_exercised():
    """Each third-party sample in ../shared/real-world-outputs is named by some test here."""
    if not os.path.isdir(REAL_WORLD):
        pytest.skip("real-world outputs folder absent: %s" % REAL_WORLD)
    here = os.path.dirname(os.path.abspath(__file__))
    sources = []
    for name in sorted(os.listdir(here)):
        if name.startswith("test_") and name.endswith(".py"):
            with open(os.path.join(here, name)) as handle:
                sources.append(handle.read())
    text = "\n".join(sources)
    missing = [name for name in sorted(os.listdir(REAL_WORLD)) if name != "README.txt" and name not in text]
    assert missing == []
