# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeepSpeed facts: the effective ``aio`` section of each ds_config.json given."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import writer as ds_writer
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


# Run by the training environment's Python in isolated mode (-I: no user site, no current directory on the path):
# the versions from the installed distributions' metadata, without importing torch or DeepSpeed (seconds saved).
VERSION_PROBE = (
    'import json, importlib.metadata as m\n'
    'def v(name):\n'
    '    try:\n'
    '        return m.version(name)\n'
    '    except Exception:\n'
    '        return None\n'
    'print(json.dumps({"deepspeed": v("deepspeed"), "torch": v("torch")}))\n'
)


def installed(ctx, python):
    """DeepSpeed and torch as the training environment's ``python`` has them (its ``importlib.metadata``): {python,
    version, torch_version, fastpersist, error}. Without ``python`` nothing is run and nothing is known."""
    found = {'python': python, 'version': None, 'torch_version': None, 'fastpersist': None, 'error': None}
    if not python:
        found['error'] = 'no training Python given (checkpoint_io_deepspeed_python)'
        return found
    if not os.path.isabs(python) or not os.access(python, os.X_OK) or not os.path.isfile(python):
        found['error'] = '%s is not an executable file (an absolute path)' % python
        return found
    res = ctx.run([python, '-I', '-c', VERSION_PROBE], cwd='/', timeout_s=60)
    try:
        data = json.loads(res['stdout'].strip().splitlines()[-1]) if not res['error'] and res['stdout'].strip() else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        found['error'] = '%s could not read its packages: %s' % (python, res['error'] or 'no answer')
        return found
    found['version'] = data.get('deepspeed') if isinstance(data.get('deepspeed'), str) else None
    found['torch_version'] = data.get('torch') if isinstance(data.get('torch'), str) else None
    found['fastpersist'] = ds_writer.has_fastpersist(found['version'])
    if found['version'] is None:
        found['error'] = 'DeepSpeed is not installed for %s' % python
    return found


def collect(ctx, paths, python=None):
    """The ``deepspeed`` section."""
    configs = [config_facts(path) for path in paths]
    return {
        'aio_defaults': aio_defaults(),
        'configs': configs,
        'installed': installed(ctx, python),
        'errors': ['%s: %s' % (c['path'], c['parse_error']) for c in configs if c['parse_error']],
    }
