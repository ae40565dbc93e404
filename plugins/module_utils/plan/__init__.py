# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's plan (node.py: node_plan, plan_lines), its per-rank queue depth (depth.py: the one default, the policy)
and one section per layer (layers.py). Kept empty so that importing depth.py (inputs.py does, for the default) loads
nothing else."""
