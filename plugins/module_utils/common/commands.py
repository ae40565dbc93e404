# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The commands a module runs on a node to change it (md_array's mdadm and wipefs, xfs_format's wipefs and
mkfs.xfs): argument lists with LANG=C, each kept in ``commands`` (what check mode reports instead of running it),
a failure failing the module with the command and its output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.context import COMMAND_ENV


class Commands(object):
    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.commands = []

    def run(self, argv, check_rc=True):
        """Run ``argv`` now (read-only probes too); with ``check_rc`` a failure fails the module."""
        rc, out, err = self.module.run_command(argv, environ_update=dict(COMMAND_ENV))
        if check_rc and rc != 0:
            self.module.fail_json(msg='%s failed (rc=%d): %s' % (' '.join(argv), rc, (err or out).strip()),
                                  rc=rc, stdout=out, stderr=err, commands=self.commands)
        return rc, out, err

    def execute(self, argv):
        """A command that changes the node: recorded, and run unless in check mode."""
        self.commands.append(argv)
        if not self.module.check_mode:
            self.run(argv)
