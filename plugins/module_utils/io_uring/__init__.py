# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The io_uring engine: node access (memlock, group) and the engine profile with its verification."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
