# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the io_uring engine profile (the io_uring_engine role). Each filter is documented in the YAML
file of its name beside this file; the logic is in module_utils/io_uring/engine_profile.py and engine_verify.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring import engine_profile as _engine
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.io_uring import engine_verify as _engine_verify


def _call(name, function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError('%s: %s' % (name, exc))


def engine_options_check(options):
    """``{...role variables...} | ai_storage.checkpoint_io.engine_options_check``: the list of problems."""
    if not isinstance(options, dict):
        raise AnsibleFilterError('engine_options_check: expected a dict of options, got %s' % type(options).__name__)
    return _engine.check_options(options)


def engine_memlock(value):
    """``io_uring_engine_memlock | ai_storage.checkpoint_io.engine_memlock``: {unlimited, bytes, kib, limits_value}."""
    return _call('engine_memlock', _engine.parse_memlock, value)


def engine_profile(facts, selection, options):
    """``ansible_facts.checkpoint_io | ai_storage.checkpoint_io.engine_profile(selection, options)``."""
    if not isinstance(options, dict):
        raise AnsibleFilterError('engine_profile: expected a dict of options, got %s' % type(options).__name__)
    return _call('engine_profile', _engine.build_profile, facts, selection, options)


def engine_fio_argv(profile, options=None, drives=None, fio='fio'):
    """``profile | ai_storage.checkpoint_io.engine_fio_argv(options, selection.selected)``: fio's argv."""
    return _call('engine_fio_argv', _engine_verify.fio_argv, profile, options or {}, drives, fio)


def engine_fio_verify(profile, fio_output, options=None, drives=None, block=None):
    """``profile | ai_storage.checkpoint_io.engine_fio_verify(result.stdout, options, drives, block)``."""
    return _call('engine_fio_verify', _engine_verify.verify_profile, profile, fio_output, options or {}, drives, block)


def engine_profile_file(document, existing=None):
    """``document | ai_storage.checkpoint_io.engine_profile_file(existing_text)``: what to write."""
    if not isinstance(document, dict):
        raise AnsibleFilterError('engine_profile_file: expected the profile dict, got %s' % type(document).__name__)
    return _engine.profile_file_document(document, existing)


class FilterModule(object):
    """io_uring engine profile filters."""

    def filters(self):
        return {
            'engine_options_check': engine_options_check,
            'engine_memlock': engine_memlock,
            'engine_profile': engine_profile,
            'engine_fio_argv': engine_fio_argv,
            'engine_fio_verify': engine_fio_verify,
            'engine_profile_file': engine_profile_file,
        }
