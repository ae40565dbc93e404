# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils is arranged by layer (docs/architecture.md) and no file in it is over 500 lines of code:
lines holding a token other than a comment, counted with tokenize; blank lines, comments and statement-level string
literals (docstrings) are not code."""

import io
import os
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE_UTILS = os.path.join(ROOT, 'plugins', 'module_utils')
MAX_CODE_LINES = 500
NOT_CODE = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def code_lines(source):
    """The number of lines of ``source`` that hold code."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = set()
    statement_start = True
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == tokenize.NEWLINE:
            statement_start = True
        elif tok.type not in NOT_CODE:
            if statement_start and tok.type == tokenize.STRING:
                j = i + 1
                while j < len(tokens) and tokens[j].type in (tokenize.STRING, tokenize.NL, tokenize.COMMENT):
                    j += 1
                if j == len(tokens) or tokens[j].type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                    i = j  # a string that is a whole statement: a docstring
                    continue
            statement_start = False
            lines.update(range(tok.start[0], tok.end[0] + 1))
        i += 1
    return len(lines)


def module_utils_files():
    for folder, dirs, files in os.walk(MODULE_UTILS):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(folder, name)


def test_code_lines_counts_code_only():
    source = '"""doc\nstring"""\n\n# comment\nx = (1,\n     2)  # trailing\n\n\ndef f():\n    """doc"""\n    return """a\nb"""\n'
    assert code_lines(source) == 5


def test_no_module_utils_file_over_500_lines_of_code():
    counts = {os.path.relpath(path, ROOT): code_lines(open(path, encoding='utf-8').read())
              for path in module_utils_files()}
    assert counts
    over = ['%s: %d lines of code (at most %d)' % (path, count, MAX_CODE_LINES)
            for path, count in sorted(counts.items()) if count > MAX_CODE_LINES]
    assert not over, '\n'.join(over)


def test_module_utils_by_layer():
    # Only packages at the top: each layer's parsers, planning and helpers live in its subpackage.
    top = sorted(name for name in os.listdir(MODULE_UTILS) if name.endswith('.py'))
    assert top == [], 'module_utils files outside a layer package: %s' % ', '.join(top)
    for folder, dirs, files in os.walk(MODULE_UTILS):
        if folder != MODULE_UTILS and os.path.basename(folder) != '__pycache__':
            assert '__init__.py' in files, '%s is not a package' % os.path.relpath(folder, ROOT)
