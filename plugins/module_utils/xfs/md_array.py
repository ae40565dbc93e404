# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""md RAID on a node: :class:`MdArray`, the ``md_array`` module's array (mdadm --create, --detail, --stop, the
members re-identified and held, the intent record before ``mdadm`` so the next run resumes, mdadm.conf). The pure
parsers of /proc/mdstat, ``mdadm --export`` and mdadm.conf lines are :mod:`md`'s."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import stat
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common import identity
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.atomic_file import write_atomic
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.commands import Commands
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.wipefs import (
    WIPEFS_COLUMNS,
    describe_signature,
    norm_uuid,
    parse_wipefs_json,
)
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs_layout import md_kib, parse_chunk
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.xfs_plan import MD_NAME_RE
from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.xfs.md import (
    check_conf_file,
    colon_uuid,
    name_matches,
    parse_export,
    parse_mdstat,
    update_conf,
)


class MdArray(Commands):
    """The md_array module's work. Every mdadm command that writes a member (create, assemble, zero-superblock)
    and every wipefs runs while the members are open and re-identified (:func:`identity.pinned`): the kernel
    names the role chose at fact time are checked against the expected identities (O(identities)) in this
    process, immediately before the command."""

    def __init__(self, module):
        Commands.__init__(self, module)
        self.name = self.params['name']
        self.device = '/dev/md/%s' % (self.name,)
        self.force = []
        errors = self.check_params()
        if errors:
            module.fail_json(msg='%s. Nothing was changed.' % '; '.join(errors))
        self.expected = dict(zip(self.params['members'] or [], self.params['identities'] or []))
        self.mdadm = module.get_bin_path('mdadm', required=True)

    def check_params(self):
        """Every value checked before anything is read from the node: the messages name the option, the value and
        the limit."""
        params = self.params
        errors = []
        if not isinstance(self.name, str) or not MD_NAME_RE.match(self.name):
            errors.append('name: %r must be 1 to 32 ASCII letters, digits, ".", "_" or "-", a letter or digit first '
                          '(the array becomes /dev/md/<name>)' % (self.name,))
        members = params['members'] or []
        for member in members:
            if not isinstance(member, str) or not member.startswith('/') or '\n' in member or '\0' in member:
                errors.append('members: %r is not an absolute device path' % (member,))
        twice = sorted(set(member for member in members if members.count(member) > 1))
        if twice:
            errors.append('members: %s is given twice' % ', '.join(twice))
        if params['state'] == 'present' and len(members) < 2:
            errors.append('members: %r - a RAID0 array needs at least two members, got %d'
                          % (params['members'], len(members)))
        try:
            parse_chunk(params['chunk'], 'chunk')
        except ValueError as exc:
            errors.append(to_native(exc))
        wanted = norm_uuid(params['uuid']) if params['uuid'] is not None else None
        if params['uuid'] is not None and not (wanted and re.match(r'^[0-9a-f]{32}$', wanted)):
            errors.append("uuid: %r is not a UUID (32 hex digits in any of mdadm's or blkid's spellings)"
                          % (params['uuid'],))
        try:
            check_conf_file(params['conf_file'])
        except ValueError as exc:
            errors.append(to_native(exc))
        given = params['identities']
        if given is not None:
            if len(given) != len(members):
                errors.append('identities: %r gives %d identities for %d members (%s); give one per member, in the '
                              'same order' % (given, len(given), len(members), ', '.join(members) or 'none'))
            for index, expected in enumerate(given):
                try:
                    identity.check_expected(expected, 'identities[%d]' % index)
                except ValueError as exc:
                    errors.append(to_native(exc))
        try:
            self.force = identity.force_names(params['force'], 'force')
        except ValueError as exc:
            errors.append(to_native(exc))
        stray = identity.unnamed(self.force, [ident for ident in given or [] if isinstance(ident, dict)])
        if stray:
            errors.append('force names %s, which %s none of the members (by their serial or WWID in identities)'
                          % (', '.join(stray), 'is' if len(stray) == 1 else 'are'))
        return errors

    def pinned(self, members):
        """The members open and re-identified while the block runs (fails the module, nothing changed, when one is
        not the expected drive or no identity was given)."""
        missing = [member for member in members if member not in self.expected]
        if missing:
            self.module.fail_json(msg='identities are required to write %s: the module re-identifies every member '
                                      'before mdadm or wipefs writes it. Nothing was changed.' % ', '.join(missing),
                                  commands=self.commands)
        order = self.params['members'] or []
        return identity.pinned([(self.path(member), self.expected[member],
                                 'member %s (identities[%d])' % (member, order.index(member)))
                                for member in members], self.params['sysfs_root'])

    def forced(self, member, found):
        """The entry of O(force) that names the member (by the serial or WWID just read), or None."""
        return identity.named_by(found, self.force)

    # --- environment -------------------------------------------------------
    def path(self, dev_path):
        """A /dev path under devfs_root (tests); unchanged on real nodes."""
        root = self.params['devfs_root']
        if root != '/dev' and dev_path.startswith('/dev/'):
            return os.path.join(root, dev_path[len('/dev/'):])
        return dev_path

    def kernel_name(self, dev_path):
        """The kernel name of a device path (a block device by its device number, whatever link leads to it)."""
        real = os.path.realpath(self.path(dev_path))
        try:
            info = os.stat(real)
        except OSError:
            return None
        if stat.S_ISBLK(info.st_mode):
            name = identity.name_of_dev(info.st_rdev, self.params['sysfs_root'])
            if name:
                return name
        return os.path.basename(real)

    def mdstat(self):
        try:
            with open(os.path.join(self.params['procfs_root'], 'mdstat')) as handle:
                return parse_mdstat(handle.read())
        except (IOError, OSError):
            return {}

    def sys_block(self, name, *parts):
        return os.path.join(self.params['sysfs_root'], 'class', 'block', name, *parts)

    def holders(self, name):
        try:
            return sorted(os.listdir(self.sys_block(name, 'holders')))
        except (IOError, OSError):
            return []

    def size_bytes(self, kernel):
        try:
            with open(self.sys_block(kernel, 'size')) as handle:
                return int(handle.read().strip()) * 512
        except (IOError, OSError, ValueError):
            return None

    def detail(self, path):
        rc, out, dummy = self.run([self.mdadm, '--detail', '--export', path], check_rc=False)
        return parse_export(out) if rc == 0 else None

    def sys_uuid(self, kernel):
        try:
            with open(self.sys_block(kernel, 'md', 'uuid')) as handle:
                return handle.read().strip()
        except (IOError, OSError):
            return None

    def examine(self, member):
        rc, out, dummy = self.run([self.mdadm, '--examine', '--export', member], check_rc=False)
        info = parse_export(out) if rc == 0 else {}
        return info if info.get('MD_UUID') else None

    def signatures(self, members):
        wipefs = self.module.get_bin_path('wipefs', required=True)
        dummy, out, dummy_err = self.run([wipefs, '--no-act', '--json', '--output', WIPEFS_COLUMNS] + members)
        try:
            return parse_wipefs_json(out)
        except ValueError as exc:
            self.module.fail_json(msg=to_native(exc))

    def locate(self, arrays, kernel_members=None):
        """Kernel name of this array when it runs, or None.

        /dev/md/<name> first; else the md device whose UUID is O(uuid); else the running array made of exactly
        ``kernel_members`` whose superblock name is O(name). An initramfs that assembles arrays with an older
        copy of mdadm.conf names them /dev/md/<host>:<name> or /dev/md127, so the link alone is not enough.
        """
        running = sorted(name for name, array in arrays.items() if array.get('state') == 'active')
        kernel = self.kernel_name(self.device)
        if kernel in running:
            return kernel
        wanted = norm_uuid(self.params['uuid'])
        if wanted:
            for name in running:
                if norm_uuid(self.sys_uuid(name)) == wanted:
                    return name
        if kernel_members:
            for name in running:
                if sorted(arrays[name].get('members') or []) == sorted(kernel_members):
                    info = self.detail('/dev/' + name) or {}
                    if name_matches(info.get('MD_NAME'), self.name):
                        return name
        return None

    def active(self, kernel_members=None):
        """{kernel_name, path, level, chunk_bytes, members, uuid, md_name, metadata, size_bytes} of the running
        array, or None."""
        arrays = self.mdstat()
        kernel = self.locate(arrays, kernel_members)
        if not kernel:
            return None
        info = self.detail('/dev/' + kernel) or {}
        array = arrays[kernel]
        return {'kernel_name': kernel, 'path': '/dev/' + kernel, 'level': array.get('level'),
                'chunk_bytes': array.get('chunk_bytes'), 'members': array.get('members') or [],
                'uuid': info.get('MD_UUID'), 'md_name': info.get('MD_NAME'), 'metadata': info.get('MD_METADATA'),
                'size_bytes': self.size_bytes(kernel)}

    # --- present -----------------------------------------------------------
    def mismatches(self, current, kernel_members, chunk):
        problems = []
        if current['level'] != 'raid0':
            problems.append('level %s (asked raid0)' % current['level'])
        if current['chunk_bytes'] != chunk:
            problems.append('chunk %s bytes (asked %d)' % (current['chunk_bytes'], chunk))
        if sorted(current['members']) != sorted(kernel_members):
            problems.append('members %s (asked %s)' % (', '.join(current['members']), ', '.join(kernel_members)))
        wanted = self.params['uuid']
        if wanted and norm_uuid(current['uuid']) != norm_uuid(wanted):
            problems.append('UUID %s (asked %s)' % (current['uuid'], wanted))
        return problems

    def assemblable(self, members):
        """The common superblock of the members when they hold one RAID0 array named ``name``; else None."""
        infos = [self.examine(member) for member in members]
        if not all(infos):
            return None
        uuids = set(norm_uuid(info.get('MD_UUID')) for info in infos)
        first = infos[0]
        if len(uuids) != 1 or not name_matches(first.get('MD_NAME'), self.name):
            return None
        if first.get('MD_LEVEL') != 'raid0' or first.get('MD_DEVICES') != str(len(members)):
            return None
        if self.params['uuid'] and norm_uuid(self.params['uuid']) not in uuids:
            return None
        return first

    def present(self, result):
        members = self.params['members'] or []
        try:
            chunk = parse_chunk(self.params['chunk'], 'chunk')
        except ValueError as exc:
            self.module.fail_json(msg=to_native(exc))
        kernel_members = []
        for member in members:
            kernel = self.kernel_name(member)
            if not kernel:
                self.module.fail_json(msg='members: %s does not exist' % member)
            if kernel in kernel_members:
                self.module.fail_json(msg='members: %s is given twice (%s)' % (kernel, ', '.join(members)))
            kernel_members.append(kernel)
        result.update(chunk_bytes=chunk, members=kernel_members, level='raid0', metadata=self.params['metadata'])

        current = self.active(kernel_members)
        before = self.describe(current)
        if current:
            problems = self.mismatches(current, kernel_members, chunk)
            if problems:
                self.module.fail_json(msg='%s (%s) already exists with %s; nothing was changed. Stop it first '
                                      '(state=absent) to make it again.'
                                      % (self.device, current['kernel_name'], '; '.join(problems)), **result)
            self.finish(result, current, 'none', before)
            return

        arrays = self.mdstat()
        for array_name, array in sorted(arrays.items()):
            taken = sorted(set(array.get('members') or []) & set(kernel_members))
            if taken:
                self.module.fail_json(msg='%s: already a member of the running array %s; nothing was changed'
                                      % (', '.join(taken), array_name), **result)
        for kernel in kernel_members:
            holders = self.holders(kernel)
            if holders:
                self.module.fail_json(msg='%s has holders (%s): it is in use; nothing was changed'
                                      % (kernel, ', '.join(holders)), **result)

        try:
            with self.pinned(members) as found_ids:
                action = self.assemble_or_create(result, members, kernel_members, found_ids, chunk)
        except identity.IdentityError as exc:
            self.module.fail_json(msg=to_native(exc), **result)

        if self.module.check_mode:
            result.update(action=action, changed=True)
            result['diff'] = [{'before_header': self.device, 'before': before,
                               'after_header': self.device,
                               'after': 'raid0, chunk %s, members %s (%s)\n'
                                        % (md_kib(chunk), ', '.join(kernel_members), action)}]
            self.persist(result, None)
            return
        self.settle()
        current = self.active(kernel_members)
        if not current:
            self.module.fail_json(msg='%s is not running after mdadm --%s' % (self.device, action[:-1]
                                  if action == 'created' else 'assemble'), **result)
        problems = self.mismatches(current, kernel_members, chunk)
        if problems:
            if action == 'assembled':
                self.run([self.mdadm, '--stop', current['path']], check_rc=False)
            again = ' (stopped again)' if action == 'assembled' else ''
            self.module.fail_json(msg='%s %s with %s%s' % (self.device, action, '; '.join(problems), again),
                                  **result)
        self.finish(result, current, action, before)

    def assemble_or_create(self, result, members, kernel_members, found_ids, chunk):
        """Assemble the members' array of ours, or create it (members open and re-identified meanwhile)."""
        result['identities'] = found_ids
        found = self.assemblable(members)
        if found:
            uuid = found.get('MD_UUID')
            self.execute([self.mdadm, '--assemble', self.device, '--uuid=' + colon_uuid(uuid)] + members)
            return 'assembled'
        signatures = self.signatures(members)
        result['signatures'] = signatures
        carrying = []
        for member, kernel, ident in zip(members, kernel_members, found_ids):
            own = [sig for sig in signatures if sig.get('device') in (kernel, member, os.path.basename(member))]
            if own:
                carrying.append((member, ident, own))
        refused = [(member, ident, sigs) for member, ident, sigs in carrying if not self.forced(member, ident)]
        if refused:
            found = '; '.join('%s (%s) carries %s' % (member, identity.describe(ident),
                                                      ', '.join(describe_signature(sig) for sig in sigs))
                              for member, ident, sigs in refused)
            names = ', '.join(ident.get('serial') or ident.get('wwid') or '?' for dummy, ident, dummy2 in refused)
            self.module.fail_json(msg='refusing to create %s: %s. Nothing was changed; force: [%s] (the serials or '
                                      'WWIDs of these drives) erases these signatures (wipefs --all) and what they '
                                      'hold.' % (self.device, found, names), **result)
        wipefs = self.module.get_bin_path('wipefs', required=True) if carrying else None
        for member, dummy, dummy2 in carrying:
            self.execute([wipefs, '--all', member])
        uuid = ['--uuid=' + colon_uuid(self.params['uuid'])] if self.params['uuid'] else []
        self.execute([self.mdadm, '--create', self.device, '--run', '--metadata=' + self.params['metadata'],
                      '--level=raid0', '--raid-devices=%d' % len(members), '--chunk=' + md_kib(chunk),
                      '--name=' + self.name] + uuid + members)
        return 'created'

    def settle(self):
        udevadm = self.module.get_bin_path('udevadm')
        if udevadm:
            self.run([udevadm, 'settle', '--timeout=30'], check_rc=False)

    @staticmethod
    def describe(current):
        if not current:
            return 'absent\n'
        return '%s, chunk %s, members %s\n' % (current['level'], md_kib(current['chunk_bytes'] or 0),
                                               ', '.join(current['members']))

    def finish(self, result, current, action, before):
        result.update(kernel_name=current['kernel_name'], path=current['path'], uuid=current['uuid'],
                      md_name=current['md_name'],
                      metadata=current['metadata'] or self.params['metadata'], size_bytes=current['size_bytes'],
                      members=current['members'], chunk_bytes=current['chunk_bytes'], level=current['level'],
                      action=action)
        if action != 'none':
            result['changed'] = True
        result['diff'] = [{'before_header': self.device, 'before': before, 'after_header': self.device,
                           'after': self.describe(current)}]
        self.persist(result, current)

    # --- mdadm.conf --------------------------------------------------------
    def read_conf(self):
        try:
            with open(self.params['conf_file']) as handle:
                return handle.read()
        except (IOError, OSError):
            return ''

    def write_conf(self, text):
        path = self.params['conf_file']
        directory = os.path.dirname(path) or '.'
        if not os.path.isdir(directory):
            os.makedirs(directory)
        write_atomic(path, text, mode=0o644, keep_mode=True, mover=self.module.atomic_move)

    def persist(self, result, current):
        """Keep (or, with current=None in state absent, remove) the ARRAY line."""
        if not self.params['persist']:
            return
        state = self.params['state']
        if state == 'present':
            if current:
                line = 'ARRAY %s metadata=%s UUID=%s name=%s' % (
                    self.device, current['metadata'] or self.params['metadata'], colon_uuid(current['uuid']),
                    current['md_name'])
                uuid = current['uuid']
            else:  # check mode, array not made yet
                line = 'ARRAY %s metadata=%s UUID=<assigned by mdadm --create> name=<hostname>:%s' % (
                    self.device, self.params['metadata'], self.name)
                uuid = None
        else:
            line, uuid = None, result.get('uuid') or self.params['uuid']
        before = self.read_conf()
        after = update_conf(before, self.device, uuid, line, self.name)
        result['conf_line'] = line
        if after == before:
            return
        result['conf_changed'] = True
        result['changed'] = True
        result['diff'].append({'before_header': self.params['conf_file'], 'before': before,
                               'after_header': self.params['conf_file'], 'after': after})
        if self.module.check_mode or (state == 'present' and not current):
            return
        self.write_conf(after)
        if self.params['update_initramfs']:
            tool = self.module.get_bin_path('update-initramfs', required=True)
            self.commands.append([tool, '-u'])
            self.run([tool, '-u'])
            result['initramfs_updated'] = True

    # --- absent ------------------------------------------------------------
    def absent(self, result):
        given = [self.kernel_name(member) for member in self.params['members'] or []]
        current = self.active([name for name in given if name])
        before = self.describe(current)
        result['diff'] = [{'before_header': self.device, 'before': before, 'after_header': self.device,
                           'after': 'absent\n'}]
        wanted = self.params['uuid']
        if current:
            if wanted and norm_uuid(current['uuid']) != norm_uuid(wanted):
                self.module.fail_json(msg='%s has UUID %s, not %s: not stopping someone else\'s array'
                                      % (self.device, current['uuid'], wanted), **result)
            result.update(uuid=current['uuid'], md_name=current['md_name'], kernel_name=current['kernel_name'],
                          path=current['path'], members=current['members'], chunk_bytes=current['chunk_bytes'],
                          level=current['level'])
            self.execute([self.mdadm, '--stop', current['path']])
            result['action'] = 'stopped'
        if self.force:
            self.zero_superblocks(result, current, wanted)
        if self.commands:
            result['changed'] = True
        self.persist(result, None)

    def zero_superblocks(self, result, current, wanted):
        """Erase this array's md superblock from the members O(force) names (after re-identifying each), and from
        nothing else: a member named in force whose superblock has another UUID keeps it."""
        array_uuid = norm_uuid(current['uuid']) if current else norm_uuid(wanted)
        members = [member for member in self.params['members'] or []
                   if current or os.path.exists(self.path(member))]
        for member in members:
            try:
                with self.pinned([member]) as found:
                    if not self.forced(member, found[0]):
                        continue
                    info = self.examine(member)
                    if not info:
                        continue
                    same = norm_uuid(info.get('MD_UUID')) == array_uuid if array_uuid else \
                        name_matches(info.get('MD_NAME'), self.name)
                    if same:
                        self.execute([self.mdadm, '--zero-superblock', member])
                        result['action'] = 'stopped' if current else 'absent'
                        result['uuid'] = result['uuid'] or info.get('MD_UUID')
            except identity.IdentityError as exc:
                state = 'stopped' if current else 'not running'
                self.module.fail_json(msg='%s (the array was %s)' % (to_native(exc), state), **result)
