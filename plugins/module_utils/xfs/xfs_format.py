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
import re

from ansible.module_utils.common.text.converters import to_native

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import identity
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs import xfs
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.commands import Commands
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.mount_options import check_path
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.wipefs import (
    WIPEFS_COLUMNS,
    describe_signature,
    norm_uuid,
    parse_wipefs_json,
)

OURS = 'xfs'
LOG_SIGNATURE = 'xfs_external_log'


def is_uuid(value):
    """Whether ``value`` is a UUID in any usual spelling (32 hex digits with or without - or :)."""
    raw = norm_uuid(value) if isinstance(value, str) else None
    return bool(raw and re.match(r'^[0-9a-f]{32}$', raw))


# What an mkfs.xfs argument other than a label is made of (-d su=1048576,sw=2,agsize=..., -l logdev=/dev/...).
_OPTION_RE = re.compile(r'^[A-Za-z0-9_=,./:+@%-]+$')


def option_problem(index, option, options):
    """Why one mkfs.xfs option may not be given, or None: the module sets the UUID and never forces."""
    if not isinstance(option, str) or not option or any(ch.isspace() or ord(ch) < 32 for ch in option):
        return 'options[%d]: %r is not one mkfs.xfs argument (no blanks or control characters)' % (index, option)
    label = index > 0 and options[index - 1] == '-L'
    if not label and not _OPTION_RE.match(option):
        return ('options[%d]: %r is not an mkfs.xfs argument (letters, digits and _=,./:+@%%- only; any text only as '
                'the label, after -L)' % (index, option))
    if option in ('-f', '--force'):
        return ('options[%d]: %r would let mkfs.xfs overwrite what it finds; the module erases only what force '
                'names, then runs mkfs.xfs without -f' % (index, option))
    if 'uuid=' in option:
        return 'options[%d]: %r sets the filesystem UUID, which is the option uuid' % (index, option)
    return None


class XfsFormat(Commands):
    def __init__(self, module):
        Commands.__init__(self, module)
        self.device = self.params['device']
        self.log_device = self.params['log_device']
        self.uuid = self.params['uuid']
        self.force = []
        errors = self.check_params()
        if errors:
            module.fail_json(msg='%s. Nothing was changed.' % '; '.join(errors))

    def check_params(self):
        """Every value checked before anything is read from the node (the messages name the option)."""
        params = self.params
        errors = []
        for key in ('device', 'log_device'):
            if key == 'device' or params[key] is not None:
                try:
                    check_path(params[key], key)
                except ValueError as exc:
                    errors.append(to_native(exc))
        if not is_uuid(self.uuid):
            errors.append('uuid: %r is not a UUID (32 hex digits, as mkfs.xfs -m uuid= takes them)' % (self.uuid,))
        drives = []
        if params['drive'] is not None and params['md_uuid'] is not None:
            errors.append('drive and md_uuid: give one (a drive target, or an md array with its members)')
        elif params['drive'] is not None:
            drives.append(self._expected(params['drive'], 'drive', errors))
        elif params['md_uuid'] is not None:
            if not is_uuid(params['md_uuid']):
                errors.append('md_uuid: %r is not a UUID (32 hex digits in any spelling)' % (params['md_uuid'],))
            if not params['members']:
                errors.append('members: %r names no member: an md target needs the identities of all its members'
                              % (params['members'],))
            for index, member in enumerate(params['members'] or []):
                drives.append(self._expected(member, 'members[%d]' % index, errors))
        else:
            errors.append('drive or md_uuid: give what the device must be - drive (a drive), or md_uuid with members '
                          '(an md array)')
        if (params['log_device'] is None) != (params['log_identity'] is None):
            errors.append('log_device and log_identity: give both (the log device and what it must be) or neither')
        elif params['log_identity'] is not None:
            drives.append(self._expected(params['log_identity'], 'log_identity', errors))
        options = params['options'] or []
        errors.extend(filter(None, (option_problem(index, option, options) for index, option in enumerate(options))))
        try:
            self.force = identity.force_names(params['force'], 'force')
        except ValueError as exc:
            errors.append(to_native(exc))
        stray = identity.unnamed(self.force, [drive for drive in drives if drive])
        if stray:
            errors.append('force names %s, which %s none of the drives this device is made of (drive, members, '
                          'log_identity)' % (', '.join(stray), 'is' if len(stray) == 1 else 'are'))
        return errors

    @staticmethod
    def _expected(value, name, errors):
        try:
            return identity.check_expected(value, name)
        except ValueError as exc:
            errors.append(to_native(exc))
            return None

    # --- what the devices must be ----------------------------------------------
    def pairs(self):
        """(path, expected) of every device the command writes: the target, then the external log device."""
        if self.params['md_uuid']:
            target = {'md_uuid': self.params['md_uuid'], 'members': self.params['members'] or []}
        else:
            target = self.params['drive']
        result = [(self.device, target, 'device %s' % self.device)]
        if self.log_device:  # checked first: it is the one a caller is least sure of
            result.insert(0, (self.log_device, self.params['log_identity'], 'log_device %s' % self.log_device))
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
        paths = [pair[0] for pair in self.pairs()]
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
            half_made = bool(mine) and self.half_made()
            result['half_made'] = half_made
            if mine and not half_made:
                result.update(action='none', uuid=self.uuid)
                result['diff'] = {'before_header': self.device, 'before': before, 'after_header': self.device,
                                  'after': before}
                return
            options = list(self.params['options'] or [])
            if half_made:
                # ours (the UUID this role chose) but mkfs.xfs never finished: made again, -f over our own signature
                before = before.rstrip('\n') + ' - half made: mkfs.xfs was stopped before it finished\n'
                options = ['-f'] + [opt for opt in options if opt != '-f']
            else:
                self.wipe_or_refuse(signatures)
            mkfs = self.module.get_bin_path('mkfs.xfs', required=True)
            self.execute([mkfs] + options + ['-m', 'uuid=' + self.uuid, self.device])
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

    def half_made(self):
        """True when the XFS with our UUID on the target is one whose mkfs.xfs was stopped before it finished (the
        primary superblock's in-progress flag, read past the page cache)."""
        try:
            return xfs.superblock_in_progress(xfs.read_start(self.device))
        except OSError as exc:
            self.module.fail_json(msg='%s: its superblock could not be read (%s)' % (self.device, to_native(exc)),
                                  commands=self.commands)

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
