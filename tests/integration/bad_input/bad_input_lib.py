# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bad-input sweep's machinery: generic bad values per option type, the case model, the checks of an outcome.

A case is one option of one module or role given one bad value. What is tried comes from the option's type (the
module's real argument_spec, the role's meta/argument_specs.yml, module_utils/common/inputs.py) through GENERIC; the tables
(bad_input_tables.py) only say, per option, what is special: the kind of a raw or path option, the limits, the
cases that are legitimately accepted (with the reason), extra cases, and the known failures of files owned
elsewhere. An option without an entry in its table fails the completeness test, so a new option gets cases.

Values that name files are written as placeholders, made real by :func:`materialize` in the case's scratch area:
``{tmp}`` (the scratch directory), ``{file:KIND}`` (a file holding CONTENTS[KIND]), ``{state:RECORD:KIND}`` (a state
directory whose record RECORD holds CONTENTS[KIND] in the store's envelope).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import math
import os
import re
import stat

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size

# --- generic bad values per type ------------------------------------------------------------------------------------
HUGE_INT = 2 ** 64
LONG_NAME = 'n' * 256                       # one path component past NAME_MAX (255 bytes)
LONG_PATH = '/'.join(['d' * 200] * 21)      # past PATH_MAX (4096 bytes)

# (kind, value) per option type. 'path' and 'dir' cases depend on what the path is for (PATH_KINDS).
GENERIC = {
    'int': [('str', 'abc'), ('list', [8]), ('dict', {'n': 8}), ('bool', True), ('null', None), ('float', 1.5),
            ('zero', 0), ('negative', -1), ('huge', HUGE_INT)],
    'float': [('str', 'abc'), ('list', [0.5]), ('bool', True), ('null', None), ('nan', 'nan'), ('inf', 'inf'),
              ('negative', -1.0), ('huge', 1e308)],
    'bool': [('str', 'maybe'), ('int', 2), ('list', [True]), ('null', None)],
    'str': [('list', ['a']), ('dict', {'a': 1}), ('empty', ''), ('null', None), ('newline', 'a\nb'),
            ('nonascii', u'\u00e9\u20ac'), ('huge', 'x' * 5000)],
    'choice': [('other', 'nonsense'), ('upper', None), ('list', None), ('null', None), ('empty', '')],
    'int_choice': [('other', 3), ('str', 'abc'), ('bool', True), ('null', None), ('list', [0])],
    'list': [('dict', {'a': 1}), ('empty', []), ('null', None), ('null_element', [None])],
    'dict': [('str', 'abc'), ('list', [1]), ('empty', {}), ('null', None)],
    'size': [('zero', 0), ('negative', -1), ('float', 1.5), ('bool', True), ('str', 'abc'), ('si', '1MB'),
             ('suffix', '1X'), ('huge', '9999999999T'), ('list', [1]), ('dict', {'a': 1}), ('null', None),
             ('nan', float('nan'))],
    'raw': [('list', [1]), ('dict', {'a': 1}), ('null', None), ('bool', True), ('str', 'abc')],
}
# Elements of lists, tried as a one-element list ('el_<kind>').
ELEMENTS = {
    'int': [('str', 'abc'), ('zero', 0), ('negative', -1), ('float', 1.5), ('bool', True), ('huge', HUGE_INT)],
    'str': [('list', ['a']), ('empty', ''), ('newline', 'a\nb'), ('nonascii', u'\u00e9')],
}
# --- what ansible-core's validator refuses --------------------------------------------------------------------------
# The generic cases whose refusal is ansible-core's own argument-spec check (ArgumentSpecValidator, run by
# AnsibleModule for a module and by the validate_argument_spec task for a role entry point) for an option whose real
# spec (a module's argument_spec, a role's meta/argument_specs.yml) declares the type the case assumes. They are
# not generated for such an option: tests/unit/test_argument_specs.py proves instead, per module and role entry
# point, that every option is typed and that ansible-core's validator refuses the very value the sweep would have
# tried for each of these kinds, naming the option. Every case an option's table entry names (accept, refuse, skip,
# known, limit, expect_in) and every curated (extra) case stays, as does every option with suboptions: there
# ansible-core 2.19's validator crashes on a list given for a dict (set_fallbacks over the value) and refuses a
# string element of a list of dicts in words that name nothing, so what the user sees is the module's.
#
# What ansible-core converts instead of refusing is the collection's own check and stays here: True or '16' for an
# int, 2.0 for an int (it becomes 2), True, 'nan' or 'inf' for a float, a list or a dict for a str or a path (it
# becomes their text, with a warning), null for a str or a path (it becomes ''), null for an optional option
# without a default (it stays unset), an empty list, dict or string, 'a,b' for a list, 'k=v' for a dict, [True]
# for a list of ints, [None] for a list of strings, zero, negative and huge numbers, newlines and non-ASCII text,
# sizes, paths, file contents, and every raw option (a role that does not type an option checks it in its own
# validate tasks).
#
# {the sweep's kind of the option (derive_kind): (the type its spec must declare, {case kind: why ansible-core
# refuses it})}.
VALIDATOR_KINDS = {
    'int': ('int', {'str': "check_type_int: 'abc' is no int", 'list': 'check_type_int: a list is no int',
                    'dict': 'check_type_int: a dict is no int', 'float': 'check_type_int: 1.5 is no whole number'}),
    'float': ('float', {'str': "check_type_float: 'abc' is no float", 'list': 'check_type_float: a list'}),
    'bool': ('bool', {'str': "check_type_bool: 'maybe' is no boolean", 'int': 'check_type_bool: 2 is no boolean',
                      'list': 'check_type_bool: a list'}),
    'choice': ('str', {'other': 'choices', 'upper': 'choices (they are case-sensitive)',
                       'list': 'choices (a list is compared as its text)', 'empty': "choices ('' is none of them)"}),
    'int_choice': ('int', {'other': 'choices (3 is none of them)', 'str': "check_type_int: 'abc' is no int",
                           'list': 'check_type_int: a list is no int'}),
    'list': ('list', {'dict': 'check_type_list: a dict is no list'}),
    'dict': ('dict', {'str': "check_type_dict: 'abc' is neither JSON nor k=v", 'list': 'check_type_dict: a list'}),
}
# null, where the option is required or its spec has a default other than null (ansible-core passes null over only
# for an optional option without one): the type's converter refuses None for these types. A choice option refuses
# null whatever its type where null is not one of its choices.
VALIDATOR_NULL_TYPES = ('int', 'float', 'bool', 'list', 'dict')
# The one-element lists of a list option, by its spec's `elements` (an element that does not convert).
VALIDATOR_ELEMENT_KINDS = {
    'int': {'el_str': "check_type_int: 'abc'", 'el_float': 'check_type_int: 1.5',
            'null_element': 'check_type_int: None'},
    'dict': {'el_list': 'check_type_dict: a list', 'el_empty': "check_type_dict: ''",
             'el_newline': "check_type_dict: 'a\\nb'", 'el_nonascii': 'check_type_dict: a word',
             'null_element': 'check_type_dict: None'},
}
# The one-element lists of a list option with `choices` (its elements must be among them).
VALIDATOR_LIST_CHOICE_KINDS = {'el_list': 'choices', 'el_empty': 'choices', 'el_newline': 'choices',
                               'el_nonascii': 'choices', 'null_element': 'choices'}


def validator_kinds(info, kind):
    """{case kind: why} of the generic cases ansible-core's validator refuses for an option of the sweep's
    ``kind`` whose real spec is ``info`` (empty where the spec does not declare the type the kind assumes)."""
    if kind not in VALIDATOR_KINDS or info.get('options'):
        return {}
    declared = info.get('type') or 'str'
    wanted, kinds = VALIDATOR_KINDS[kind]
    if declared != wanted or (kind in ('choice', 'int_choice') and not info.get('choices')):
        return {}
    kinds = dict(kinds)
    if kind in ('choice', 'int_choice') and None not in info['choices']:
        kinds['null'] = 'choices (null is none of them)'
    elif declared in VALIDATOR_NULL_TYPES and (info.get('required') or info.get('default') is not None):
        kinds['null'] = 'check_type_%s: None (the option %s)' % (
            declared, 'is required' if info.get('required') else 'has a default')
    if kind == 'list':
        kinds.update(VALIDATOR_ELEMENT_KINDS.get(info.get('elements'), {}))
        if info.get('choices'):
            kinds.update(VALIDATOR_LIST_CHOICE_KINDS)
    return kinds


def left_to_validator(info, kind, spec):
    """The generic case kinds not generated for an option (ansible-core's validator refuses them), less the ones
    its table entry ``spec`` names (those stay cases of the sweep)."""
    named = set()
    for key in ('accept', 'refuse', 'skip', 'known', 'limit', 'expect_in'):
        named.update(spec.get(key) or {})
    return tuple(sorted(case_kind for case_kind in validator_kinds(info, kind) if case_kind not in named))


# Paths, by what the path is for. dir: a directory the collection writes into (or makes); file: a file it writes;
# read: a file or directory it only reads; exec: a program; root: a test-only root (sysfs_root...).
PATH_CASES = [
    ('empty', ''), ('relative', 'relative/x'), ('missing', '{tmp}/missing/x'), ('directory', '{tmp}/adir'),
    ('file', '{tmp}/afile'), ('symlink', None), ('other_writable', '{tmp}/world'), ('spaces', '{tmp}/with space'),
    ('nonascii', u'{tmp}/\u00fcn\u00ef'), ('newline', '{tmp}/new\nline'), ('colon', '{tmp}/a:b'),
    ('long_name', '{tmp}/' + LONG_NAME), ('long_path', '/' + LONG_PATH), ('list', ['{tmp}/adir']), ('null', None),
]
# File contents a reader may meet.
CONTENTS = {
    'not_utf8': b'{"aio": {"queue_depth": 8}, "note": "\xff\xfe"}\n',
    'not_json': b'{"aio": {"queue_depth": 8},\n',
    'nan': b'{"aio": {"queue_depth": NaN}}\n',
    'infinity': b'{"aio": {"queue_depth": Infinity}}\n',
    'huge_int': b'{"aio": {"queue_depth": 1' + b'0' * 5000 + b'}}\n',
    'dup_keys': b'{"aio": {"queue_depth": 8, "queue_depth": 64}}\n',
    'top_list': b'[1, 2]\n',
    'empty': b'',
}
# What a refusal of each content says (besides naming the file).
CONTENT_MARKS = {'not_utf8': 'UTF-8', 'not_json': 'JSON', 'nan': 'NaN', 'infinity': 'Infinity', 'huge_int': 'digits',
                 'dup_keys': 'twice', 'top_list': 'list', 'empty': 'JSON'}


# --- the case model -------------------------------------------------------------------------------------------------
class Case(object):
    """One bad value for one option of one target (module:NAME, role:NAME[/entry], inputs)."""

    def __init__(self, target, option, kind, value, expect='refuse', reason=None, limit=None, with_args=None,
                 known=None, expect_in=None, names=None, curated=False):
        self.target, self.option, self.kind, self.value = target, option, kind, value
        self.expect = expect            # refuse | accept (no traceback, anything else goes) | control
        self.reason = reason            # why an accepted case is fine
        self.limit = limit              # text the refusal must show (the limit), where there is one
        self.with_args = with_args or {}  # other options this case sets (or removes: OMIT)
        self.known = known              # 'file (owner): what happens' for a known failure elsewhere
        self.expect_in = expect_in      # a refusal that names the value its own way: text it must contain
        self.names = names              # words that name the option in a message (default: the option)
        self.curated = curated          # a case of the option's own table entry (not a generic one of its type)

    @property
    def id(self):
        return '%s/%s/%s' % (self.target, self.option, self.kind)

    def param(self):
        known = self.known or KNOWN.get(self.id)
        marks = [pytest.mark.xfail(strict=True, reason='known failure: %s' % known)] if known else []
        return pytest.param(self, id=self.id, marks=marks)


OMIT = '__bad_input_omit__'
# {case id: 'file (owner): what happens'}: failing cases of files owned elsewhere (bad_input_tables.KNOWN_FAILURES
# fills it); they run as xfail(strict=True), so each turns into a failure once it is fixed.
KNOWN = {}


def set_option(args, option, value):
    """``args`` with ``option`` (``a.b`` for a suboption) set to ``value`` (OMIT removes it)."""
    args = json.loads(json.dumps(args))
    parts = option.split('.')
    holder = args
    for part in parts[:-1]:
        if isinstance(holder.get(part), list) and holder[part] and isinstance(holder[part][0], dict):
            holder = holder[part][0]  # a suboption of a list of dicts: its first element
            continue
        if not isinstance(holder.get(part), dict):
            holder[part] = {}
        holder = holder[part]
    if value == OMIT:
        holder.pop(parts[-1], None)
    else:
        holder[parts[-1]] = value
    return args


def build_args(base, case):
    args = dict(base)
    for key, value in case.with_args.items():
        args = set_option(args, key, value)
    return set_option(args, case.option, case.value)


# --- scratch fixtures -----------------------------------------------------------------------------------------------
def make_scratch(tmp):
    """The fixed fixtures path cases point at: a directory, a file, symlinks to both, a world-writable directory,
    directories with a space, non-ASCII and a colon in their names, the content files."""
    tmp = str(tmp)
    for name in ('adir', 'with space', u'\u00fcn\u00ef', 'new\nline', 'a:b', 'world', 'files', 'elsewhere'):
        path = os.path.join(tmp, name)
        if not os.path.isdir(path):
            os.makedirs(path)
    os.chmod(os.path.join(tmp, 'world'), 0o777)
    with open(os.path.join(tmp, 'afile'), 'w') as handle:
        handle.write('not a directory\n')
    with open(os.path.join(tmp, 'elsewhere', 'target.json'), 'w') as handle:
        handle.write('{"aio": {"queue_depth": 8}}\n')
    for name, target in (('alink', 'adir'), ('flink', os.path.join('elsewhere', 'target.json'))):
        path = os.path.join(tmp, name)
        if not os.path.lexists(path):
            os.symlink(target, path)
    for kind, data in CONTENTS.items():
        with open(os.path.join(tmp, 'files', kind + '.json'), 'wb') as handle:
            handle.write(data)
    return tmp


def _state_dir(tmp, record, kind):
    path = os.path.join(tmp, 'state_%s_%s' % (record, kind))
    if not os.path.isdir(path):
        os.makedirs(path)
        os.chmod(path, 0o755)
        data = CONTENTS[kind]
        if kind not in ('not_json', 'empty', 'top_list'):
            data = (b'{"checkpoint_io_record": 1, "name": "' + record.encode() + b'", "written_at": "x", '
                    b'"writer": "x", "data": ' + data.strip() + b'}\n')
        with open(os.path.join(path, record + '.json'), 'wb') as handle:
            handle.write(data)
    return path


_PLACEHOLDER = re.compile(r'\{(tmp|file:[a-z_0-9]+|state:[a-z_0-9]+:[a-z_0-9]+)\}')


def materialize(value, tmp, places=None):
    """``value`` with its placeholders made real in the scratch area ``tmp`` (``places``: more placeholders, such
    as the fake node's roots {sys}, {proc}, {dev}, {etc} and the fake {fio})."""
    if isinstance(value, list):
        return [materialize(item, tmp, places) for item in value]
    if isinstance(value, dict):
        return dict((key, materialize(item, tmp, places)) for key, item in value.items())
    if not isinstance(value, str) or '{' not in value:
        return value
    for key, real in (places or {}).items():
        if key != 'tmp':
            value = value.replace('{%s}' % key, real)

    def real(match):
        token = match.group(1)
        if token == 'tmp':
            return tmp
        if token.startswith('file:'):
            return os.path.join(tmp, 'files', token[5:] + '.json')
        _state, record, kind = token.split(':')
        return _state_dir(tmp, record, kind)
    return _PLACEHOLDER.sub(real, value)


# --- nothing changed ------------------------------------------------------------------------------------------------
def snapshot(*roots, **kwargs):
    """{path: (type, mode, uid, size, mtime_ns, inode, link target or content digest)} of every entry under roots.

    contents=True adds a digest of every regular file (a rewrite that kept size and time shows too); without it a
    write shows through the file's mtime (nanoseconds), size or inode, which every write changes."""
    contents = kwargs.get('contents', False)
    seen = {}
    for root in roots:
        if not os.path.lexists(root):
            seen[root] = None
            continue
        for base, dirs, files in os.walk(root):
            for name in dirs + files:
                path = os.path.join(base, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                extra = None
                if stat.S_ISLNK(st.st_mode):
                    extra = os.readlink(path)
                elif contents and stat.S_ISREG(st.st_mode):
                    try:
                        with open(path, 'rb') as handle:
                            extra = hashlib.sha1(handle.read()).hexdigest()
                    except (IOError, OSError):
                        extra = 'unreadable'
                seen[path] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid,
                              st.st_size if not stat.S_ISDIR(st.st_mode) else 0, st.st_mtime_ns, st.st_ino, extra)
            try:  # a directory a background job removes while it is read
                st = os.lstat(base)
            except OSError:
                continue
            seen[base] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid)
    return seen


def changes(before, after):
    """The paths that differ between two snapshots (made, removed or changed)."""
    out = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) != after.get(path):
            what = 'made' if path not in before else 'removed' if path not in after else 'changed'
            out.append('%s %s' % (what, path))
    return out


# --- the checks of an outcome ---------------------------------------------------------------------------------------
TRACEBACK_MARKERS = ('Traceback (most recent call last)', 'MODULE FAILURE', 'Unexpected failure during module '
                     'execution', 'An exception occurred during task execution',
                     'Module result deserialization failed')
# ansible-core's argument spec message for a list element that is not a dict names neither the option nor the value
ANSIBLE_UNNAMED = re.compile(r'dictionary requested, could not parse JSON or key=value')
# Python's own words for a crash: a message made of them is an error that escaped, not an explanation.
CRASH_MARKERS = ('is not iterable', 'object has no attribute', 'unsupported operand type', 'is not subscriptable',
                 'not supported between instances of', 'invalid literal for int() with base',
                 'could not convert string to float', "codec can't decode", 'list index out of range',
                 'takes no keyword arguments', 'missing 1 required positional argument', "'NoneType' object",
                 'argument after ** must be a mapping', 'Exceeds the limit (4300 digits)')
# ansible-core's own argument spec messages name the option and the type, not always the value.
ANSIBLE_TYPE_MESSAGE = re.compile(r"argument '[^']+' is of type \S+ and we were unable to convert to|Elements value "
                                  r"for option '[^']+' is of type|value of \S+ must be one of|missing required "
                                  r"arguments|are mutually exclusive|is required|must be one (or more )?of", re.S)


def _value_forms(value):
    """Texts that show ``value`` in a message."""
    if value is None:  # ansible hands a null str or path option over as ''
        return ['None', 'null', 'missing', 'required', 'unset', 'not set', 'empty', 'NoneType', "''"]
    if isinstance(value, bool):  # ansible turns a bool given to a float option into 1.0 / 0.0
        return [str(value), str(value).lower(), 'bool', '%.1f' % value]
    if isinstance(value, float) and math.isnan(value):
        return ['nan', 'NaN']
    if isinstance(value, (int, float)):
        forms = [repr(value), str(value), '%g' % value]
        if isinstance(value, float) and value.is_integer():
            forms.append(str(int(value)))
        return forms
    if isinstance(value, str):
        if value == '':
            return ["''", '""', 'empty', 'missing', 'required']
        forms = [value, repr(value), repr(value)[1:-1], json.dumps(value)[1:-1], value.strip()]
        try:  # a size is shown as given or in bytes
            forms.append(str(parse_size(value)))
        except ValueError:
            pass
        if len(value) > 60:
            forms += [value[:40], repr(value)[1:41], str(len(value)), str(len(value.encode('utf-8')))]
        return [form for form in forms if form]
    if isinstance(value, (list, dict)):
        forms = [str(value), repr(value), json.dumps(value), type(value).__name__]
        if not value:
            forms += ['none', 'empty', 'no ', 'nothing']
        if isinstance(value, dict):
            for item in value.values():
                forms += _value_forms(item)
        if isinstance(value, list):
            for item in value:
                forms += _value_forms(item)
        if isinstance(value, dict):
            forms += list(value)
        return forms
    return [str(value)]


def names_value(message, value):
    return any(form in message for form in _value_forms(value))


def _escapes(outcome):
    """The problems that mean an error escaped: a traceback, a module failure, Python's own crash message."""
    problems = []
    text = outcome.get('text') or ''
    exception = outcome.get('exception')
    if outcome.get('traceback'):
        problems.append('a traceback reached the user: %s' % outcome['traceback'][-1500:])
    elif any(marker in text for marker in TRACEBACK_MARKERS):
        problems.append('the output holds a traceback marker: %s' % text[-1500:])
    elif exception and 'Traceback' in str(exception):
        problems.append('the result has an exception with a traceback: %s' % str(exception)[-800:])
    msg = outcome.get('msg') or ''
    crash = [marker for marker in CRASH_MARKERS if marker in msg]
    if crash:
        problems.append('the message is a Python error (%s), not an explanation: %s' % (crash[0], msg[:600]))
    return problems


def check_refusal(case, real_value, outcome):
    """The problems of a refusal: [] when the target failed naming the option and the value (and the limit), with no
    traceback and nothing changed. ``outcome``: {failed, msg, text (all output), changed, changes, traceback}."""
    problems = _escapes(outcome)
    msg = outcome.get('msg') or ''
    if not outcome.get('failed'):
        problems.append('accepted (rc ok), expected a refusal; result: %s' % (outcome.get('summary') or msg)[:600])
        return problems
    if outcome.get('changed'):
        problems.append('failed but reported changed')
    if outcome.get('changes'):
        problems.append('changed files although refused: %s' % '; '.join(outcome['changes'][:8]))
    if case.expect_in is not None:
        for text in case.expect_in if isinstance(case.expect_in, list) else [case.expect_in]:
            if text not in msg:
                problems.append('the message lacks %r: %s' % (text, msg[:600]))
        return problems
    names = case.names or [case.option.split('.')[-1]]
    if ANSIBLE_UNNAMED.search(msg):  # ansible-core's own words for a list element that is no dict name nothing
        return problems
    if not any(name in msg for name in names):
        problems.append('the message does not name the option %s: %s' % (' / '.join(names), msg[:600]))
    ansible_type = ANSIBLE_TYPE_MESSAGE.search(msg) is not None
    if not ansible_type and not names_value(msg, real_value):
        problems.append('the message does not show the value %r: %s' % (real_value, msg[:600]))
    if case.limit is not None and str(case.limit) not in msg:
        problems.append('the message does not show the limit %s: %s' % (case.limit, msg[:600]))
    return problems


def check_accepted(case, outcome):
    """An accepted case: no traceback or crash reached the user, whatever else happened."""
    return _escapes(outcome)


def check(case, real_value, outcome):
    if case.expect == 'refuse':
        return check_refusal(case, real_value, outcome)
    return check_accepted(case, outcome)


# --- cases from an option's type and its table entry ----------------------------------------------------------------
def _path_cases(path_kind, required):
    """(kind, value, expect) of the path cases for a path used as ``path_kind``."""
    refuse, accept, skip = 'refuse', 'accept', None
    table = {
        # a directory the collection writes into or makes
        'dir': {'empty': refuse, 'relative': refuse, 'missing': refuse, 'directory': skip, 'file': refuse,
                'symlink': ('{tmp}/alink', refuse), 'other_writable': refuse, 'spaces': accept, 'nonascii': accept,
                'newline': accept, 'colon': accept, 'long_name': refuse, 'long_path': refuse, 'list': refuse},
        # a file the collection writes or edits
        'file': {'empty': refuse, 'relative': refuse, 'missing': refuse, 'directory': refuse, 'file': skip,
                 'symlink': ('{tmp}/flink', refuse), 'other_writable': skip,
                 'spaces': ('{tmp}/with space/x.json', accept), 'nonascii': (u'{tmp}/\u00fcn\u00ef/x.json', accept),
                 'newline': ('{tmp}/new\nline/x.json', accept), 'colon': ('{tmp}/a:b/x.json', accept),
                 'long_name': refuse, 'long_path': refuse, 'list': refuse},
        # a path only read (facts): what is there is reported
        'read': {'empty': refuse, 'relative': refuse, 'missing': accept, 'directory': accept, 'file': accept,
                 'symlink': ('{tmp}/flink', accept), 'other_writable': accept, 'spaces': accept, 'nonascii': accept,
                 'newline': accept, 'colon': accept, 'long_name': accept, 'long_path': accept, 'list': refuse},
        # a program
        'exec': {'empty': refuse, 'relative': refuse, 'missing': refuse, 'directory': refuse, 'file': refuse,
                 'symlink': ('{tmp}/flink', refuse), 'other_writable': skip, 'spaces': refuse, 'nonascii': refuse,
                 'newline': refuse, 'colon': refuse, 'long_name': refuse, 'long_path': refuse, 'list': refuse},
        # a test-only root (sysfs_root...): whatever it holds is read
        'root': dict((kind, accept) for kind, _value in PATH_CASES if kind != 'null'),
    }[path_kind]
    out = []
    for kind, value in PATH_CASES:
        if kind == 'null':
            continue
        entry = table.get(kind)
        if entry is None:
            continue
        if isinstance(entry, tuple):
            value, entry = entry
        out.append((kind, value, entry))
    return out


def _range_expect(kind, value, low, high):
    """refuse/accept and the limit shown for a number case against [low, high]."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return 'refuse', None
    if isinstance(value, float) and math.isnan(value):
        return 'refuse', None
    if low is not None and value < low:
        return 'refuse', low
    if high is not None and value > high:
        return 'refuse', high
    return 'accept', None


def derive_kind(info, spec):
    if spec.get('type'):
        return spec['type']
    kind = info.get('type') or 'str'
    if kind == 'int' and info.get('choices'):
        return 'int_choice'
    if kind == 'str' and info.get('choices'):
        return 'choice'
    if kind == 'str' and spec.get('text'):
        return 'text'
    return kind


def _fmt_limit(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) >= 1 else str(value)
    return str(value)


def _generic(target, option, info, spec, kind):
    """(case kind, value, expect, limit) of every generic case of an option of the sweep's ``kind``."""
    required = bool(info.get('required'))
    low, high = (spec.get('range') or (None, None))[:2]
    raw = []          # (case kind, value, expect, limit)
    if kind in ('int', 'depth'):
        for case_kind, value in GENERIC['int']:
            if case_kind in ('zero', 'negative', 'huge'):
                expect, limit = _range_expect(case_kind, value, low, high)
                raw.append((case_kind, value, expect, limit))
            else:
                raw.append((case_kind, value, 'refuse', None))
        if kind == 'depth' or info.get('type') == 'raw':
            raw.append(('nan', float('nan'), 'refuse', None))
            raw.append(('digits', '16', 'accept', None))
    elif kind == 'float':
        for case_kind, value in GENERIC['float']:
            limit = None
            if case_kind in ('negative', 'huge'):
                expect, limit = _range_expect(case_kind, float(value), low, high)
            elif case_kind == 'inf':  # 'not a finite number' says it all: no limit asked for
                expect, limit = 'refuse', None
            else:
                expect = 'refuse'
            raw.append((case_kind, value, expect, limit))
    elif kind in ('bool', 'raw_bool'):
        raw.extend((k, v, 'refuse', None) for k, v in GENERIC['bool'])
    elif kind in ('str', 'text'):
        for case_kind, value in GENERIC['str']:
            raw.append((case_kind, value, 'accept' if kind == 'text' else 'refuse', None))
    elif kind == 'choice':
        choices = [c for c in info.get('choices') or spec.get('choices') or [] if c is not None]
        first = str(choices[0]) if choices else 'x'
        for case_kind, value in GENERIC['choice']:
            if case_kind == 'upper':
                value = first.upper() if first.upper() != first else first + 'X'
            elif case_kind == 'list':
                value = [first]
            raw.append((case_kind, value, 'refuse', None))
    elif kind == 'int_choice':
        raw.extend((k, v, 'refuse', None) for k, v in GENERIC['int_choice'])
    elif kind == 'size':
        for case_kind, value in GENERIC['size']:
            raw.append((case_kind, value, 'refuse', spec.get('max') if case_kind == 'huge' else None))
    elif kind == 'list':
        for case_kind, value in GENERIC['list']:
            raw.append((case_kind, value, 'refuse', None))
        elements = spec.get('elements') or info.get('elements') or 'str'
        if elements == 'int':
            el_low, el_high = (spec.get('el_range') or (None, None))
            for case_kind, value in ELEMENTS['int']:
                if case_kind in ('zero', 'negative', 'huge'):
                    expect, limit = _range_expect(case_kind, value, el_low, el_high)
                else:
                    expect, limit = 'refuse', None
                raw.append(('el_' + case_kind, [value], expect, limit))
        elif elements == 'path':
            for case_kind, value, expect in _path_cases(spec.get('path', 'dir'), False):
                raw.append(('el_' + case_kind, [value], expect, None))
        else:
            el_text = spec.get('el_text')
            for case_kind, value in ELEMENTS['str']:
                raw.append(('el_' + case_kind, [value], 'accept' if el_text else 'refuse', None))
    elif kind == 'dict':
        raw.extend((k, v, 'refuse', None) for k, v in GENERIC['dict'])
    elif kind == 'path':
        for case_kind, value, expect in _path_cases(spec.get('path', 'dir'), required):
            raw.append((case_kind, value, expect, None))
        raw.append(('null', None, 'refuse', None))
    elif kind == 'raw':
        raw.extend((k, v, 'refuse', None) for k, v in GENERIC['raw'])
    elif kind == 'none':
        pass
    else:
        raise AssertionError('%s %s: unknown kind %r' % (target, option, kind))
    return raw


def validator_cases(target, option, info, spec):
    """[(case kind, value)] of the generic cases of one option that the sweep leaves to ansible-core's validator
    (left_to_validator): the values it would have tried (tests/unit/test_argument_specs.py runs them)."""
    kind = derive_kind(info, spec)
    dropped = set(left_to_validator(info, kind, spec))
    return [(case_kind, value) for case_kind, value, _expect, _limit in _generic(target, option, info, spec, kind)
            if case_kind in dropped]


def option_cases(target, option, info, spec):
    """Every Case of one option: the generic ones of its kind (less the ones left to ansible-core's validator),
    shaped by its table entry ``spec``."""
    kind = derive_kind(info, spec)
    required = bool(info.get('required'))
    validators = set(left_to_validator(info, kind, spec))
    raw = [item for item in _generic(target, option, info, spec, kind) if item[0] not in validators]
    accept = spec.get('accept') or {}
    refuse = spec.get('refuse') or {}
    skip = spec.get('skip') or {}
    known = spec.get('known') or {}
    limits = spec.get('limit') or {}
    expect_in = spec.get('expect_in') or {}
    names = spec.get('names')
    with_args = spec.get('with') or {}
    cases = []
    seen = set()
    for case_kind, value, expect, limit in raw:
        if case_kind in skip:
            continue
        reason = None
        if case_kind == 'null':
            if required:
                expect = 'refuse'
            elif spec.get('null', 'accept') == 'accept':
                expect, reason = 'accept', 'null: the option is unset (its default)'
            else:
                expect = 'refuse'
        if expect == 'accept' and reason is None:
            reason = 'a legitimate value'
        if case_kind in accept:
            expect, reason, limit = 'accept', accept[case_kind], None
        if case_kind in refuse:
            expect, limit = 'refuse', refuse[case_kind]
        if case_kind in limits:
            limit = limits[case_kind]
        cases.append(Case(target, option, case_kind, value, expect=expect, reason=reason,
                          limit=_fmt_limit(limit) if limit is not None else None, with_args=with_args,
                          known=known.get(case_kind), expect_in=expect_in.get(case_kind), names=names))
        seen.add(case_kind)
    for extra in spec.get('extra') or []:
        extra = dict(extra)
        case_kind = extra.pop('kind')
        value = extra.pop('value')
        extra_with = dict(with_args, **extra.pop('with', {}))
        expect, reason, limit = extra.pop('expect', 'refuse'), extra.pop('reason', None), extra.pop('limit', None)
        if case_kind in accept:
            expect, reason, limit = 'accept', accept[case_kind], None
        if case_kind in refuse:
            expect, limit = 'refuse', refuse[case_kind]
        cases.append(Case(target, option, case_kind, value, expect=expect, reason=reason, limit=limit,
                          with_args=extra_with, known=known.get(case_kind),
                          expect_in=expect_in.get(case_kind, extra.pop('expect_in', None)), names=names,
                          curated=True))
        assert not extra, '%s %s %s: unknown keys %s' % (target, option, case_kind, extra)
        seen.add(case_kind)
    if spec.get('wiring'):  # a few cases show the wiring (a refusal where there is one); the full set runs elsewhere
        chosen = [case for kind in spec['wiring'] for case in cases if case.kind == kind][:spec.get('wiring_count', 2)]
        cases = chosen or [case for case in cases if case.expect == 'refuse'][:1] or cases[:1]
    kinds = [case.kind for case in cases]
    assert len(kinds) == len(set(kinds)), '%s %s: a case kind twice: %s' % (
        target, option, sorted(set(kind for kind in kinds if kinds.count(kind) > 1)))
    for table in (accept, refuse, skip, known, limits, expect_in):
        unknown = set(table) - seen - set(skip)
        assert not unknown, '%s %s: the table names cases it does not have: %s' % (target, option, sorted(unknown))
    return cases
