# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared helpers of every layer: units, sysfs and commands, the atomic writer, the state store and its records,
drive identity and selection, the shared inputs, safe paths (scratch, owned_dir, config_file), udev, PCI, wipefs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
