# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe: nvme-cli output parsed, the admin ioctl, drive health and the drive sampler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
