# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compression readiness filter (documented in compression_line.yml beside this file); the logic is in
module_utils/compression/compression.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import compression as _compression


def compression_line(result):
    """``result | ai_storage.checkpoint_io.compression_line``: one line of a checkpoint_compression result."""
    try:
        return _compression.summary_line(result)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError('compression_line: %s' % exc)


class FilterModule(object):
    """Compression readiness filters."""

    def filters(self):
        return {'compression_line': compression_line}
