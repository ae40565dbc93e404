# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for udev rule templates. Documentation: udev_match.yml and udev_comment.yml beside this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import udev


def udev_match(value, what='value'):
    """``drive.serial | ai_storage.checkpoint_io.udev_match('serial')``: the value, or an error naming it."""
    try:
        return udev.match_value(value, what)
    except ValueError as exc:
        raise AnsibleFilterError('udev_match: %s' % exc)


def udev_comment(value):
    """``drive.model | ai_storage.checkpoint_io.udev_comment``: the value for a comment line."""
    return udev.comment(value)


class FilterModule(object):
    def filters(self):
        return {'udev_match': udev_match, 'udev_comment': udev_comment}
