# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeepSpeed facts: the effective ``aio`` section of each ds_config.json given."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import (
    aio_defaults,
    analyze_config_text,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.sysfs import read_text

MAX_CONFIG_BYTES = 16 * 1024 * 1024


def read_bytes(path, limit):
    try:
        with open(path, 'rb') as handle:
            return handle.read(limit)
    except (IOError, OSError):
        return b''


def config_facts(path):
    facts = {'path': path, 'exists': os.path.isfile(path)}
    if not facts['exists']:
        facts.update(analyze_config_text('{}'))
        facts['parse_error'] = 'file not found'
        return facts
    text = read_text(path, limit=MAX_CONFIG_BYTES)
    if text is None:
        facts.update(analyze_config_text('{}'))
        facts['parse_error'] = 'file not readable'
        return facts
    if u'\ufffd' in text:  # read_text replaces bytes that are not UTF-8: DeepSpeed's json.load would refuse them
        data = read_bytes(path, MAX_CONFIG_BYTES)
        try:
            data.decode('utf-8')
        except UnicodeDecodeError as exc:
            facts.update(analyze_config_text('{}'))
            facts['parse_error'] = 'not UTF-8 text (byte 0x%02x at offset %d)' % (
                bytearray(data[exc.start:exc.start + 1])[0], exc.start)
            return facts
    facts.update(analyze_config_text(text))
    return facts


def collect(ctx, paths):
    """The ``deepspeed`` section."""
    configs = [config_facts(path) for path in paths]
    return {
        'aio_defaults': aio_defaults(),
        'configs': configs,
        'errors': ['%s: %s' % (c['path'], c['parse_error']) for c in configs if c['parse_error']],
    }
