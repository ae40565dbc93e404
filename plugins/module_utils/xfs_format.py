# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The xfs_format module's work on a node: make (or erase) the checkpoint volume's XFS on a device that is first
re-identified, in this process, and held open while ``wipefs`` and ``mkfs.xfs`` run.

The target is a drive (checked against its expected WWID/serial/size) or an md array (its md UUID and the
identities of exactly its members); an external log device is checked like a drive. Signatures are read with
``wipefs --no-act`` (it lists every one; blkid reports nothing when there are two). The filesystem UUID is given
by the caller (chosen and recorded before ``mkfs.xfs -m uuid=`` runs), so an XFS with that UUID is the caller's
own: a run interrupted after mkfs finds it and keeps it; anything else on the device is foreign and only erased
when ``force`` names the drive by serial or WWID.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_native

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils import identity
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.commands import Commands
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.wipefs import (
    WIPEFS_COLUMNS,
    describe_signature,
    norm_uuid,
    parse_wipefs_json,
)

OURS = 'xfs'
LOG_SIGNATURE = 'xfs_external_log'


class XfsFormat(Commands):
    def __init__(self, module):
        Commands.__init__(self, module)
        self.device = self.params['device']
        self.log_device = self.params['log_device']
        try:
            self.force = identity.force_names(self.params['force'], 'force')
        except ValueError as exc:
            module.fail_json(msg='%s. Nothing was changed.' % exc)
        if norm_uuid(self.params['uuid']) is None or len(norm_uuid(self.params['uuid'])) != 32:
            module.fail_json(msg='uuid: %r is not a UUID (32 hex digits, as mkfs.xfs -m uuid= takes them)'
                             % (self.params['uuid'],))
        self.uuid = self.params['uuid']

    # --- what the devices must be ----------------------------------------------
    def pairs(self):
        """(path, expected) of every device the command writes: the target, then the external log device."""
        if self.params['md_uuid']:
            target = {'md_uuid': self.params['md_uuid'], 'members': self.params['members'] or []}
        else:
            target = self.params['drive']
        result = [(self.device, target)]
        if self.log_device:
            result.append((self.log_device, self.params['log_identity']))
        return result

    def target_forced(self):
        """The force entries that cover the target: the drive, or every member of the md array; None when not
        covered (an md array needs all its members named: formatting it overwrites them all)."""
        drives = self.params['members'] if self.params['md_uuid'] else [self.params['drive']]
        names = [identity.named_by(drive, self.force) for drive in drives]
        return names if names and all(names) else None

    def log_forced(self):
        return identity.named_by(self.params['log_identity'], self.force)

    # --- commands ----------------------------------------------------------------
    def probe(self):
        """{path: [signature]} of the target and the log device (wipefs --no-act, read-only)."""
        wipefs = self.module.get_bin_path('wipefs', required=True)
        paths = [path for path, dummy in self.pairs()]
        dummy, out, dummy_err = self.run([wipefs, '--no-act', '--json', '--output', WIPEFS_COLUMNS] + paths)
        try:
            signatures = parse_wipefs_json(out)
        except ValueError as exc:
            self.module.fail_json(msg=to_native(exc), commands=self.commands)
        result = {}
        for path, kernel in zip(paths, self.kernel_names):
            result[path] = [sig for sig in signatures if sig.get('device') in (path, os.path.basename(path), kernel)]
        return result

    # --- present -----------------------------------------------------------------
    def present(self, result):
        with identity.pinned(self.pairs(), self.params['sysfs_root']) as found:
            self.kernel_names = [item if isinstance(item, str) else item['name'] for item in found]
            result['identities'] = [item for item in found if isinstance(item, dict)]
            signatures = self.probe()
            result['signatures'] = signatures
            target = signatures[self.device]
            mine = [sig for sig in target if sig.get('type') == OURS and norm_uuid(sig.get('uuid')) ==
                    norm_uuid(self.uuid)]
            before = self.describe(signatures)
            if mine:
                result.update(action='none', uuid=self.uuid)
                result['diff'] = {'before_header': self.device, 'before': before, 'after_header': self.device,
                                  'after': before}
                return
            self.wipe_or_refuse(signatures)
            mkfs = self.module.get_bin_path('mkfs.xfs', required=True)
            self.execute([mkfs] + list(self.params['options'] or []) + ['-m', 'uuid=' + self.uuid, self.device])
            result.update(action='created', changed=True)
            after = 'xfs (UUID %s)\n' % self.uuid
            result['diff'] = {'before_header': self.device, 'before': before, 'after_header': self.device,
                              'after': after}
            if self.module.check_mode:
                return
            made = self.probe()[self.device]
            if not any(sig.get('type') == OURS and norm_uuid(sig.get('uuid')) == norm_uuid(self.uuid)
                       for sig in made):
                self.module.fail_json(msg='%s: mkfs.xfs ran but wipefs finds no XFS with UUID %s on it (%s)'
                                      % (self.device, self.uuid, self.describe({self.device: made}).strip()),
                                      **result)
            result['uuid'] = self.uuid

    def wipe_or_refuse(self, signatures):
        """Erase what force names (wipefs --all), refuse what it does not; nothing is run before every device
        has been decided."""
        wipe = []
        refused = []
        target = signatures[self.device]
        if target:
            if self.target_forced():
                wipe.append(self.device)
            else:
                refused.append('%s (%s) carries %s' % (self.device, self.what_target(),
                                                       ', '.join(describe_signature(s) for s in target)))
        if self.log_device and signatures[self.log_device]:
            if self.log_forced():
                wipe.append(self.log_device)
            else:
                refused.append('the log device %s (%s) carries %s'
                               % (self.log_device, identity.describe(self.params['log_identity']),
                                  ', '.join(describe_signature(s) for s in signatures[self.log_device])))
        if refused:
            self.module.fail_json(msg='refusing to format %s: %s. Not formatted, nothing was changed; force naming '
                                      'the drives by serial or WWID erases these signatures and what they hold'
                                  % (self.device, '; '.join(refused)), commands=self.commands,
                                  signatures=signatures)
        wipefs = self.module.get_bin_path('wipefs', required=True) if wipe else None
        for path in wipe:
            self.execute([wipefs, '--all', path])

    def what_target(self):
        if self.params['md_uuid']:
            return 'md UUID %s over %s' % (self.params['md_uuid'], '; '.join(
                identity.describe(m) for m in self.params['members'] or []))
        return identity.describe(self.params['drive'])

    # --- absent ------------------------------------------------------------------
    def absent(self, result):
        """Erase the XFS signature with O(uuid) from the target (and the external log's signature from the log
        device), and nothing else."""
        with identity.pinned(self.pairs(), self.params['sysfs_root']) as found:
            self.kernel_names = [item if isinstance(item, str) else item['name'] for item in found]
            result['identities'] = [item for item in found if isinstance(item, dict)]
            signatures = self.probe()
            result['signatures'] = signatures
            before = self.describe(signatures)
            wipefs = self.module.get_bin_path('wipefs', required=True)
            erase = [(self.device, sig) for sig in signatures[self.device]
                     if sig.get('type') == OURS and norm_uuid(sig.get('uuid')) == norm_uuid(self.uuid)]
            if self.log_device and erase:
                erase += [(self.log_device, sig) for sig in signatures[self.log_device]
                          if sig.get('type') == LOG_SIGNATURE]
            for path, sig in erase:
                self.execute([wipefs, '--offset', sig.get('offset'), path])
            left = dict((path, [sig for sig in sigs if (path, sig) not in erase]) for path, sigs in signatures.items())
            result['diff'] = {'before_header': self.device, 'before': before, 'after_header': self.device,
                              'after': self.describe(left)}
            if erase:
                result.update(action='erased', changed=True)

    @staticmethod
    def describe(signatures):
        lines = []
        for path in sorted(signatures):
            sigs = signatures[path]
            lines.append('%s: %s' % (path, ', '.join(describe_signature(s) for s in sigs) if sigs else 'blank'))
        return '\n'.join(lines) + '\n'
