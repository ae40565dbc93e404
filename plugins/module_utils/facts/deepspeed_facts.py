# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeepSpeed facts: the effective ``aio`` section of each ds_config.json given."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed.deepspeed import (
    aio_defaults,
    analyze_config_text,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.config_file import ConfigFileError, open_config


def config_facts(path):
    """The aio section of one ds_config, read the way deepspeed_aio would open it for a rewrite
    (config_file.open_config): no link followed that another user planted to a file not theirs, no hard-linked file,
    no directory others can write without the sticky bit. Root never reads a file through a user's link."""
    facts = {'path': path, 'exists': os.path.isfile(path)}
    if not os.path.lexists(path):
        facts.update(analyze_config_text('{}'))
        facts['parse_error'] = 'file not found'
        return facts
    try:
        config = open_config(path, follow_symlinks=True, what='ds_config')
    except ConfigFileError as exc:
        facts.update(analyze_config_text('{}'))
        facts['parse_error'] = str(exc)
        return facts
    try:
        data = config.data
    finally:
        config.close()
    if data is None:
        facts.update(analyze_config_text('{}'))
        facts['parse_error'] = 'file not readable'
        return facts
    facts.update(analyze_config_text(data.decode('utf-8')))
    return facts


def collect(ctx, paths):
    """The ``deepspeed`` section."""
    configs = [config_facts(path) for path in paths]
    return {
        'aio_defaults': aio_defaults(),
        'configs': configs,
        'errors': ['%s: %s' % (c['path'], c['parse_error']) for c in configs if c['parse_error']],
    }
