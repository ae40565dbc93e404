# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fact schema's version and its sections, in gather order (light: filters import them without the
collectors)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

SCHEMA_VERSION = 1
SUBSETS = ('nvme', 'block', 'thermal', 'io_uring', 'xfs', 'gds', 'deepspeed', 'state')
