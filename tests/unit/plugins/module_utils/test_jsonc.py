# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""module_utils/common/jsonc.py: JSON with comments (cufile.json) parsed, and keys set in it without touching the rest."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import random
import re

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.jsonc import (
    JsoncError,
    get,
    parse,
    remove_keys,
    set_values,
)

# Written for these tests in the layout of the /etc/cufile.json that GDS installs: comments above keys, keys
# commented out, wide and uneven indentation, " : " separators, trailing commas before comment-only lines.
SAMPLE = """{
            // NOTE : Application can override custom configuration via export CUFILE_ENV_PATH_JSON=<filepath>
            // e.g : export CUFILE_ENV_PATH_JSON="/home/<xxx>/cufile.json"

            "logging": {
                            // log directory, if not enabled will create log file under current working directory
                            //"dir": "/home/<xxxx>",

                            // NOTICE|ERROR|WARN|INFO|DEBUG|TRACE in decreasing order of severity
                            "level": "ERROR"
            },

            "profile": {
                            // nvtx profiling on/off
                            "nvtx": false,
                            // cufile stats level(0-3)
                            "cufile_stats": 0
            },

            "execution" : {
                    // max number of workitems in the queue;
                    "max_io_queue_depth": 128,
                    // max number of host threads per gpu to spawn for parallel IO
                    "max_io_threads" : 4,
                    /* enable support for parallel IO;
                       "parallel_io" : false disables it */
                    "parallel_io" : true,
                    // minimum IO threshold before splitting the IO
                    "min_io_threshold_size_kb" : 8192,
                    // maximum parallelism for a single request
                    "max_request_parallelism" : 4
            },

            "properties": {
                            // max IO chunk size (parameter should be multiples of 64K) used by cuFileRead/Write
                            "max_direct_io_size_kb" : 16384,
                            // device memory size for reserving bounce buffers for the entire GPU
                            "max_device_cache_size_kb" : 131072,
                            // limit on maximum device memory size that can be pinned for a given process
                            "max_device_pinned_mem_size_kb" : 33554432,
                            // true or false (true will enable asynchronous io submission to nvidia-fs driver)
                            // "use_poll_mode" : false,
                            // maximum IO request size (in KB) within or equal to which library will poll
                            "poll_mode_max_size_kb": 4,
                            // allow compat mode, this will enable use of cuFile posix read/writes
                            "allow_compat_mode": true,
                            // client-side rdma addr list for user-space file-systems (e.g ["10.0.1.0", "10.0.2.0"])
                            "rdma_dev_addr_list": [ ],
                            /* docs: "http://docs.nvidia.com/gpudirect-storage//configuration-guide" */
                            "doc_url": "http://x//y/*not a comment*/",
            },

            "fs": {
                    "generic": {

                            // for unaligned writes, setting it to true will use posix write internally
                            "posix_unaligned_writes" : false
                    },

                    "beegfs" : {
                            // IO threshold for read/write (param should be 4K aligned)
                            "posix_gds_min_kb" : 0,
                            // To restrict the IO to selected IP list, when nvidia-fs is in compat mode
                            //"rdma_dev_addr_list" : [ "172.172.1.240", "172.172.1.241"]
                    }
            },

            "denylist": {
                            // specify list of vendor driver modules to deny for nvidia-fs (e.g. ["nvme" , "nvme_rdma"])
                            "drivers":  [ ],
                            "devices": [ ],
                            "mounts": [ ],
                            "filesystems": [ ]
            }
}
"""

SAMPLE_COMMENTS = re.findall(r"//[^\n]*|/\*.*?\*/", SAMPLE, re.S)


def _comments_kept(text, comments):
    return [comment for comment in comments if comment not in text]


def _expect_error(text, lineno, colno, words):
    with pytest.raises(JsoncError) as caught:
        parse(text)
    message = str(caught.value)
    assert (caught.value.lineno, caught.value.colno) == (lineno, colno), message
    assert message.startswith("line %d column %d: expected " % (lineno, colno))
    assert words in message


def _replaced(text, old, new):
    assert text.count(old) == 1, old
    return text.replace(old, new)


# ------------------------------------------------------------------------------------------------ parse
def test_parse_sample():
    doc = parse(SAMPLE)
    assert list(doc) == ["logging", "profile", "execution", "properties", "fs", "denylist"]
    assert doc["logging"] == {"level": "ERROR"}
    assert doc["execution"]["max_io_queue_depth"] == 128
    assert doc["execution"]["parallel_io"] is True
    assert doc["properties"]["max_direct_io_size_kb"] == 16384
    assert doc["properties"]["allow_compat_mode"] is True
    assert doc["properties"]["rdma_dev_addr_list"] == []
    assert doc["properties"]["doc_url"] == "http://x//y/*not a comment*/"
    assert "use_poll_mode" not in doc["properties"]   # commented out
    assert doc["fs"] == {"generic": {"posix_unaligned_writes": False}, "beegfs": {"posix_gds_min_kb": 0}}
    assert doc["profile"]["nvtx"] is False and doc["profile"]["cufile_stats"] == 0


@pytest.mark.parametrize("text", [
    '{"a": 1, "b": [1, 2.5, -3e2, "x", true, false, null], "c": {"d": {}}, "e": []}',
    '[1, {"a": "\\u00e9\\n\\"\\\\"}, []]',
    '"just a string"',
    '-0.0',
    '{"a": 1, "a": 2}',
    '{"a": {"x": 1}, "b": 2, "a": 3}',
    '{"caf\u00e9": "\u00fcn\u00efcode"}',
    ' \t\r\n{}\r\n',
])
def test_parse_agrees_with_json_loads(text):
    assert parse(text) == json.loads(text)


@pytest.mark.parametrize("text, expected", [
    ('// c\n{"a": 1}', {"a": 1}),
    ('{"a": 1} // c', {"a": 1}),
    ('{"a": 1} // c\n', {"a": 1}),
    ('/* c */{/* c */"a"/* c */:/* c */1/* c */,/* c */"b"//c\n://c\n[//c\n2/**/,/**/]/**/}/**/', {"a": 1, "b": [2]}),
    ('{"a": 1,}', {"a": 1}),
    ('{"a": [1, 2,],}', {"a": [1, 2]}),
    ('{"a": [1, 2, ] , }', {"a": [1, 2]}),
    ('{"a": "// not a comment"}', {"a": "// not a comment"}),
    ('{"a": "/* not */ a comment"}', {"a": "/* not */ a comment"}),
    ('{"a\\"//": "x\\\\"}', {'a"//': "x\\"}),
    ('{/* multi\n line\n */ "a": 1}', {"a": 1}),
    ('{"a": 1 /* ** / * */}', {"a": 1}),
    ('\ufeff{"a": 1}', {"a": 1}),
])
def test_parse_comments_and_trailing_commas(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("text, lineno, colno, words", [
    ("", 1, 1, "found end of text"),
    ("   \n  // only a comment\n", 3, 1, "expected a value"),
    ('{\n  "a": 1,\n  "b": ', 3, 8, "expected a value, found end of text"),
    ('{\n  "a": 1\n', 3, 1, "expected ',' or '}', found end of text"),
    ('{\n  "a": [1, 2\n}', 3, 1, "expected ',' or ']', found '}'"),
    ('{\n  "a": 1 /* never closed\n  "b": 2\n}', 2, 10, "'*/'"),
    ('{\n  "a": tru\n}', 2, 8, "found 'tru'"),
    ('{"a": NaN}', 1, 7, "found 'NaN'"),
    ('{"a": Infinity}', 1, 7, "found 'Infinity'"),
    ('{"a": -Infinity}', 1, 7, "found '-Infinity'"),
    ('{"a": 1e999}', 1, 7, "expected a finite number"),
    ('{"a": 01}', 1, 8, "found '1'"),
    ('{"a": .5}', 1, 7, "expected a value"),
    ('{"a": \'x\'}', 1, 7, "found \"'\""),
    ('{"a" 1}', 1, 6, "expected ':'"),
    ('{a: 1}', 1, 2, "expected a string key or '}'"),
    ('{"a": 1,,}', 1, 9, "expected a string key or '}', found ','"),
    ('{,}', 1, 2, "expected a string key"),
    ('[,]', 1, 2, "expected a value"),
    ('{"a": 1 "b": 2}', 1, 9, "expected ',' or '}'"),
    ('{"a": 1}\n{"b": 2}', 2, 1, "expected end of text"),
    ('{"a": 1} / x', 1, 10, "expected end of text, found '/'"),
    ('{"a": "abc', 1, 7, "closing the string"),
    ('{"a": "ab\ncd"}', 1, 10, "expected a string character or escape"),
    ('{"a": "\\q"}', 1, 8, "expected a string character or escape"),
    ('{"a": "\\u12"}', 1, 9, "expected a string character or escape"),
])
def test_parse_errors_name_line_and_column(text, lineno, colno, words):
    _expect_error(text, lineno, colno, words)


def test_parse_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse("{")


def test_parse_refuses_bytes():
    with pytest.raises(TypeError):
        parse(b'{"a": 1}')


def test_parse_too_deep_is_jsonc_error():
    with pytest.raises(JsoncError, match="too deep"):
        parse("[" * 100000 + "]" * 100000)


# ------------------------------------------------------------------------------------------------ get
@pytest.mark.parametrize("dotted, expected", [
    ("execution.max_io_queue_depth", 128),
    ("fs.generic.posix_unaligned_writes", False),
    ("fs.generic", {"posix_unaligned_writes": False}),
    ("properties.use_poll_mode", None),
    ("logging.level.x", None),
    ("nothing.at.all", None),
])
def test_get(dotted, expected):
    assert get(SAMPLE, dotted) == expected
    assert get(parse(SAMPLE), dotted) == expected


def test_get_default():
    assert get(SAMPLE, "properties.use_poll_mode", default=True) is True


# ------------------------------------------------------------------------------------------------ set: replace
@pytest.mark.parametrize("values, old, new", [
    ({"properties.max_direct_io_size_kb": 32768},
     '"max_direct_io_size_kb" : 16384,', '"max_direct_io_size_kb" : 32768,'),
    ({"execution.max_io_queue_depth": 512},
     '"max_io_queue_depth": 128,', '"max_io_queue_depth": 512,'),
    ({"properties.allow_compat_mode": False},
     '"allow_compat_mode": true,', '"allow_compat_mode": false,'),
    ({"fs.generic.posix_unaligned_writes": True},
     '"posix_unaligned_writes" : false\n', '"posix_unaligned_writes" : true\n'),
    ({"logging.level": "DEBUG"}, '"level": "ERROR"', '"level": "DEBUG"'),
    ({"logging.level": None}, '"level": "ERROR"', '"level": null'),
    ({"properties.rdma_dev_addr_list": ["10.0.1.0", "10.0.2.0"]},
     '"rdma_dev_addr_list": [ ],', '"rdma_dev_addr_list": ["10.0.1.0", "10.0.2.0"],'),
    ({"fs.generic": {"posix_unaligned_writes": True, "x": [1]}},
     '"generic": {\n\n                            // for unaligned writes, setting it to true will use posix write '
     'internally\n                            "posix_unaligned_writes" : false\n                    },',
     '"generic": {"posix_unaligned_writes": true, "x": [1]},'),
    ({"properties.doc_url": 'C:\\dir "quoted"\n\t//x'},
     '"doc_url": "http://x//y/*not a comment*/",', '"doc_url": "C:\\\\dir \\"quoted\\"\\n\\t//x",'),
])
def test_replace_changes_only_the_value(values, old, new):
    out = set_values(SAMPLE, values)
    assert out == _replaced(SAMPLE, old, new)
    for dotted, value in values.items():
        assert get(out, dotted) == value


def test_replace_several_keys_at_once():
    values = {
        "properties.max_direct_io_size_kb": 4096,
        "properties.max_device_pinned_mem_size_kb": 1048576,
        "execution.max_io_queue_depth": 256,
        "properties.allow_compat_mode": False,
    }
    expected = _replaced(SAMPLE, '"max_direct_io_size_kb" : 16384', '"max_direct_io_size_kb" : 4096')
    expected = _replaced(expected, ': 33554432', ': 1048576')
    expected = _replaced(expected, '"max_io_queue_depth": 128', '"max_io_queue_depth": 256')
    expected = _replaced(expected, '"allow_compat_mode": true', '"allow_compat_mode": false')
    assert set_values(SAMPLE, values) == expected


def test_replace_matches_an_escaped_key_in_the_text():
    assert set_values('{"a\\u0062": 1}', {"ab": 2}) == '{"a\\u0062": 2}'


def test_duplicate_key_sets_the_last_one():
    out = set_values('{"a": 1, "a": 2}', {"a": 3})
    assert out == '{"a": 1, "a": 3}'
    assert parse(out) == {"a": 3}


# ------------------------------------------------------------------------------------------------ set: insert
def test_insert_after_comment_line_and_trailing_comma():
    # properties ends with `"doc_url": "...",` - a trailing comma: no second comma, the new member keeps the style.
    out = set_values(SAMPLE, {"properties.use_poll_mode": True})
    old = '"doc_url": "http://x//y/*not a comment*/",\n'
    assert out == _replaced(SAMPLE, old, old + ' ' * 28 + '"use_poll_mode": true,\n')
    assert get(out, "properties.use_poll_mode") is True
    assert '// "use_poll_mode" : false,' in out


def test_insert_trailing_comma_before_comment_only_lines():
    out = set_values(SAMPLE, {"fs.beegfs.posix_gds_direct": False})
    old = '"posix_gds_min_kb" : 0,\n'
    assert out == _replaced(SAMPLE, old, old + ' ' * 28 + '"posix_gds_direct": false,\n')


def test_insert_adds_the_comma_after_the_value():
    out = set_values(SAMPLE, {"execution.max_batch_io_size": 128})
    assert out == _replaced(SAMPLE, '"max_request_parallelism" : 4\n',
                            '"max_request_parallelism" : 4,\n' + ' ' * 20 + '"max_batch_io_size": 128\n')


@pytest.mark.parametrize("text, expected", [
    ('{\n  "a": 1 // one\n}', '{\n  "a": 1, // one\n  "b": 2\n}'),
    ('{\n  "a": 1 /* one */ // two\n}', '{\n  "a": 1, /* one */ // two\n  "b": 2\n}'),
    ('{\n  "a": 1, // one\n}', '{\n  "a": 1, // one\n  "b": 2,\n}'),
    ('{\n  "a": 1 /* one\n  two */\n}', '{\n  "a": 1, /* one\n  two */\n  "b": 2\n}'),
    ('{\n  "a": 1\n  // "b": 0\n}', '{\n  "a": 1,\n  "b": 2\n  // "b": 0\n}'),
    ('{\n  "a": 1 }', '{\n  "a": 1,\n  "b": 2\n}'),
    ('{\n\t"a": 1\n}', '{\n\t"a": 1,\n\t"b": 2\n}'),
    ('{\r\n  "a": 1 // one\r\n}\r\n', '{\r\n  "a": 1, // one\r\n  "b": 2\r\n}\r\n'),
])
def test_insert_comma_before_comment(text, expected):
    assert set_values(text, {"b": 2}) == expected


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', '{"a": 1, "b": 2}'),
    ('{"a": 1,}', '{"a": 1, "b": 2,}'),
    ('{"a": 1 /* one */}', '{"a": 1, "b": 2 /* one */}'),
    ('{ "x": {"a": 1} }', '{ "x": {"a": 1}, "b": 2 }'),
])
def test_insert_into_one_line_object_stays_on_the_line(text, expected):
    assert set_values(text, {"b": 2}) == expected


@pytest.mark.parametrize("text, expected", [
    ('{}', '{\n    "b": 2\n}'),
    ('{ }', '{\n    "b": 2\n}'),
    ('{\n}', '{\n    "b": 2\n}'),
    ('{ // empty\n}', '{ // empty\n    "b": 2\n}'),
    ('{\n  "x": {\n  },\n  "y": 0\n}', '{\n  "x": {\n    "b": 2\n  },\n  "y": 0\n}'),
    ('{\n  "x": {},\n  "y": 0\n}', '{\n  "x": {\n    "b": 2\n  },\n  "y": 0\n}'),
    ('{\n\t"x": {}\n}', '{\n\t"x": {\n\t\t"b": 2\n\t}\n}'),
])
def test_insert_into_empty_object(text, expected):
    path = "x.b" if '"x"' in text else "b"
    assert set_values(text, {path: 2}) == expected


def test_insert_into_empty_object_of_sample():
    out = set_values(SAMPLE, {"fs.lustre.posix_gds_min_kb": 0})
    pad = ' ' * 20  # fs' members; theirs are 8 deeper than fs: the step for the new object's member
    new = '\n' + pad + '},\n' + pad + '"lustre": {\n' + pad + ' ' * 8 + '"posix_gds_min_kb": 0\n' + pad + '}'
    assert out == _replaced(SAMPLE, '\n' + pad + '}\n            },', new + '\n            },')


def test_insert_creates_nested_objects():
    out = set_values(SAMPLE, {"rdma.qos.traffic_class": 3})
    pad = ' ' * 12
    old = '"filesystems": [ ]\n            }\n'
    new = old[:-1] + ',\n' + pad + '"rdma": {\n' + pad * 2 + '"qos": {\n' + pad * 3 + '"traffic_class": 3\n' \
        + pad * 2 + '}\n' + pad + '}\n'
    assert out == _replaced(SAMPLE, old, new)
    assert get(out, "rdma") == {"qos": {"traffic_class": 3}}


def test_insert_two_paths_sharing_a_new_object():
    out = set_values('{\n  "a": 1\n}', {"x.y.p": 1, "x.y.q": [1, 2], "x.z": {"k": True}})
    assert out == ('{\n  "a": 1,\n  "x": {\n    "y": {\n      "p": 1,\n      "q": [1, 2]\n    },\n'
                   '    "z": {"k": true}\n  }\n}')


def test_insert_into_one_line_object_creates_one_line_objects():
    assert set_values('{"a": {"b": 1}}', {"a.c.d": 2}) == '{"a": {"b": 1, "c": {"d": 2}}}'


@pytest.mark.parametrize("key", ['we"ird', "back\\slash", "tab\there", "new\nline", "caf\u00e9", "//x", "/*y*/", " "])
def test_insert_key_needing_escapes(key):
    out = set_values(SAMPLE, {"profile." + key: 'v"\\//'})
    assert parse(out)["profile"][key] == 'v"\\//'
    assert set_values(out, {"profile." + key: 'v"\\//'}) is out
    assert not _comments_kept(out, SAMPLE_COMMENTS)


# ------------------------------------------------------------------------------------------------ unchanged, idempotent
def test_unchanged_text_is_the_same_object():
    values = {
        "properties.max_direct_io_size_kb": 16384,
        "execution.max_io_queue_depth": 128,
        "properties.allow_compat_mode": True,
        "properties.rdma_dev_addr_list": [],
        "fs.generic": {"posix_unaligned_writes": False},
        "logging.level": "ERROR",
    }
    assert set_values(SAMPLE, values) is SAMPLE
    assert set_values(SAMPLE, {}) is SAMPLE


def test_equal_numbers_are_unchanged():
    text = '{"a": 1.0, "b": 1e3, "c": [1, 2]}'
    assert set_values(text, {"a": 1, "b": 1000, "c": (1, 2)}) is text


@pytest.mark.parametrize("text, values, expected", [
    ('{"a": 0}', {"a": False}, '{"a": false}'),
    ('{"a": true}', {"a": 1}, '{"a": 1}'),
    ('{"a": [1]}', {"a": [True]}, '{"a": [true]}'),
    ('{"a": {"b": false}}', {"a": {"b": 0}}, '{"a": {"b": 0}}'),
    ('{"a": "1"}', {"a": 1}, '{"a": 1}'),
    ('{"a": [1]}', {"a": {"0": 1}}, '{"a": {"0": 1}}'),
    ('{"a": {"b": 1}}', {"a": {"b": 1, "c": 2}}, '{"a": {"b": 1, "c": 2}}'),
])
def test_booleans_are_not_numbers(text, values, expected):
    assert set_values(text, values) == expected


@pytest.mark.parametrize("values", [
    {"properties.use_poll_mode": True, "properties.max_direct_io_size_kb": 8192},
    {"execution.max_io_queue_depth": 64, "fs.generic.posix_unaligned_writes": True, "fs.lustre.x": 1},
    {"new.deep.er.key": "v", "new.other": [1, {"a": None}], "profile.nvtx": True},
    {"properties.allow_compat_mode": False, "denylist.drivers": ["nvme", "nvme_rdma"]},
])
def test_idempotent(values):
    once = set_values(SAMPLE, values)
    assert once != SAMPLE
    assert set_values(once, values) is once
    assert not _comments_kept(once, SAMPLE_COMMENTS)
    for dotted, value in values.items():
        assert get(once, dotted) == value


# ------------------------------------------------------------------------------------------------ set: refusals
@pytest.mark.parametrize("dotted, words", [
    ("logging.level.x", "'logging.level' is not an object"),
    ("properties.rdma_dev_addr_list.x", "'properties.rdma_dev_addr_list' is not an object"),
    ("profile.nvtx.on.off", "'profile.nvtx' is not an object"),
])
def test_path_through_non_object(dotted, words):
    with pytest.raises(JsoncError) as caught:
        set_values(SAMPLE, {dotted: 1})
    assert dotted in str(caught.value) and words in str(caught.value)


@pytest.mark.parametrize("text", ["", "  // nothing\n", "[]", '[{"a": 1}]', '"s"', "1", "null"])
def test_top_level_must_be_an_object(text):
    with pytest.raises(JsoncError):
        set_values(text, {"a": 1})
    with pytest.raises(JsoncError):
        set_values(text, {})


@pytest.mark.parametrize("dotted", ["", ".", "a.", ".a", "a..b", None, 3])
def test_invalid_paths(dotted):
    with pytest.raises(JsoncError, match="invalid key path"):
        set_values(SAMPLE, {dotted: 1})
    with pytest.raises(JsoncError, match="invalid key path"):
        get(SAMPLE, dotted)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), object(), {1j: 2}, {"a": set()}])
def test_values_must_be_json(value):
    with pytest.raises(JsoncError, match="'profile.nvtx'"):
        set_values(SAMPLE, {"profile.nvtx": value})


def test_bad_text_is_refused_by_set_values():
    with pytest.raises(JsoncError, match="line 3 column 1"):
        set_values('{\n  "a": 1\n', {"a": 2})


# ------------------------------------------------------------------------------------------------ random documents
KEYS = ["a", "b", "max_io", "use_poll_mode", 'q"k', "s\\k", "\u00fcber", "u//rl", "c/*x*/"]
STRINGS = ["", "x", "http://x//y", "/* not a comment */", 'q"uote', "back\\slash", "tab\t", "\u00fcn\u00ef"]


class _Doc(object):
    """Renders a random value as JSON with random whitespace, comments and trailing commas, and remembers the
    comments it wrote."""

    def __init__(self, rng):
        self.rng = rng
        self.comments = []

    def gap(self):
        kind = self.rng.randrange(7)
        if kind < 3:
            return self.rng.choice(["", " ", "\n", "\n    ", "\t", "\r\n  "])
        text = "%s comment %d %s" % (self.rng.choice(["", "x", "{", "}", '"', ","]), len(self.comments),
                                     self.rng.choice(["", "//", "/*", "*"]))
        comment = "// " + text if kind < 5 else "/* " + text.replace("*/", "") + " */"
        self.comments.append(comment)
        return self.rng.choice(["", " ", "\n  "]) + comment + ("\n" if kind < 5 else self.rng.choice(["", "\n"]))

    def render(self, value):
        if isinstance(value, dict):
            items = [self.gap() + json.dumps(key) + self.gap() + ":" + self.gap() + self.render(child)
                     for key, child in value.items()]
            return "{" + self._join(items) + "}"
        if isinstance(value, list):
            return "[" + self._join([self.gap() + self.render(child) for child in value]) + "]"
        return json.dumps(value, ensure_ascii=self.rng.random() < 0.5)

    def _join(self, items):
        out = self.gap()
        for index, item in enumerate(items):
            out += ("," + self.gap() if index else "") + item
        trailing = "," if items and self.rng.random() < 0.3 else ""
        return out + self.gap() + trailing + self.gap()


def _random_scalar(rng):
    return rng.choice([rng.randrange(-5, 100000), rng.random(), True, False, None, rng.choice(STRINGS),
                       [rng.randrange(9)], {}])


def _random_object(rng, depth):
    value = {}
    for _count in range(rng.randrange(4)):
        key = rng.choice(KEYS)
        value[key] = _random_object(rng, depth + 1) if depth < 2 and rng.random() < 0.4 else _random_scalar(rng)
    return value


def _apply(doc, keys, value):
    """Set keys in doc like set_values should; False when the path crosses a non-object."""
    for key in keys[:-1]:
        doc = doc.setdefault(key, {})
        if not isinstance(doc, dict):
            return False
    doc[keys[-1]] = copy.deepcopy(value)
    return True


def _random_values(rng, expected):
    """Paths (none a prefix of another) and values; applies them to ``expected``."""
    values = {}
    for _count in range(rng.randrange(1, 5)):
        keys = [rng.choice(KEYS) for _index in range(rng.randrange(1, 4))]
        dotted = ".".join(keys)
        if any(other == dotted or (other + ".").startswith(dotted + ".") or dotted.startswith(other + ".")
               for other in values):
            continue
        if isinstance(get(expected, dotted), (dict, list)):  # replacing it would drop the comments inside
            continue
        trial = copy.deepcopy(expected)
        value = _random_scalar(rng)
        if _apply(trial, keys, value):
            values[dotted] = value
            _apply(expected, keys, value)
    return values


@pytest.mark.parametrize("seed", range(400))
def test_random_documents(seed):
    rng = random.Random(seed)
    original = _random_object(rng, 0)
    doc = _Doc(rng)
    text = doc.gap() + doc.render(original) + doc.gap()
    assert parse(text) == original
    expected = copy.deepcopy(original)
    values = _random_values(rng, expected)
    out = set_values(text, values)
    assert parse(out) == expected
    assert not _comments_kept(out, doc.comments)
    assert set_values(out, values) is out
    assert set_values(text, {}) is text


def test_remove_keys_takes_the_member_its_comma_and_its_line_and_keeps_every_other_character():
    text = ('{\n    // a comment\n    "p": {\n        "a": 1, // on a\n        "b": 2,\n        "c": 3\n    },\n'
            '    "e": {"x": 1, "y": true}\n}\n')
    assert remove_keys(text, ['p.b']) == text.replace('        "b": 2,\n', '')
    assert remove_keys(text, ['p.c']) == text.replace('"b": 2,\n        "c": 3\n', '"b": 2\n')
    assert remove_keys(text, ['e.y']) == text.replace('"x": 1, "y": true', '"x": 1')
    assert remove_keys(text, ['e.x']) == text.replace('{"x": 1, "y": true}', '{"y": true}')
    assert remove_keys('{"a": 1}', ['a']) == '{}'
    assert remove_keys(text, ['p.nope', 'nope.x']) is text
    assert parse(remove_keys(text, ['p.a', 'p.b', 'p.c']))['p'] == {}
