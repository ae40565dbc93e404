# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report (records, documents, the HTML page) and the checkpoint planner."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
