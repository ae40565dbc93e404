# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fact collectors of checkpoint_io_facts, one file per layer (the layout of ansible's own module_utils/facts):
node_facts.py orchestrates them, fact_merge.py merges a subset gather into the host's facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The fact schema and its sections, in gather order (light: filters import them without the collectors).
SCHEMA_VERSION = 1
SUBSETS = ('nvme', 'block', 'thermal', 'io_uring', 'xfs', 'gds', 'deepspeed', 'state')
