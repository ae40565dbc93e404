# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bad-input sweep's tables: per module and role, the base arguments of a run that would change something, and
per option what is special about it (see bad_input_lib.option_cases for the keys).

Keys of an option's entry: type (the kind of a raw option: size, depth, raw_bool; or an override), path (what a path
is for: dir, file, read, exec, root), range (low, high), el_range, elements, text (free text: odd strings are
accepted), el_text, null ('refuse' where null must be refused), accept {case: reason}, refuse {case: limit or None},
skip {case: reason}, limit {case: text}, expect_in {case: text the message must hold instead of naming the value},
known {case: 'file (owner): what happens'}, extra [{kind, value, expect, reason, limit, expect_in, with}], with
{option: value} (set for every case of the option; OMIT removes), names [words that name the option].

A case an entry names (accept, refuse, skip, known, limit, expect_in) always runs. The generic cases ansible-core's
validator refuses for the type the option's spec declares are not generated (bad_input_lib.VALIDATOR_KINDS; proven
per module and role entry point by tests/unit/test_argument_specs.py), and an entry accepts no such case: an
explicit null for a choice option without a null choice, or for a typed option with a default, is refused by
ansible-core, not taken as the default. (block_layer_scheduler's null, which its spec documents, is accepted here
as documented; ansible-core refuses it: the known gap of test_argument_specs.py.)

Placeholders in values: {tmp} the case scratch directory, {sys} {proc} {dev} {etc} the fake node's roots, {fio} a
fake fio that runs nothing, {file:KIND} and {state:RECORD:KIND} files with bad contents (bad_input_lib.CONTENTS).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.block import block_queue

from bad_input_lib import CONTENT_MARKS, KNOWN, LONG_PATH, OMIT

ROLE_OK = 'a legitimate value'

TEST_ROOT = {'type': 'path', 'path': 'root'}
FACTS_ROOT = dict(TEST_ROOT, **{'with': {'gather_subset': ['nvme', 'block', 'io_uring']}})
STATE_DIR_OPT = {
    'path': 'dir', 'names': ['state_dir', 'state directory'],
    'accept': {'missing': 'made when missing (root-owned, 0755), like the store always does'},
    # a state directory whose record holds what a strict JSON reader refuses: the file and the reason named
    'extra': [{'kind': 'record_' + kind, 'value': '{state:%(record)s:' + kind + '}',
               'expect_in': ['%(record)s.json', CONTENT_MARKS[kind]]}
              for kind in ('not_utf8', 'not_json', 'nan', 'infinity', 'dup_keys', 'huge_int')],
}


def state_dir_opt(record, with_args=None, **more):
    spec = dict(STATE_DIR_OPT)
    if with_args:
        spec['with'] = with_args
    spec['extra'] = [dict(extra, value=extra['value'] % {'record': record},
                          expect_in=[text % {'record': record} for text in extra['expect_in']])
                     for extra in STATE_DIR_OPT['extra']]
    spec.update(more)
    return spec


# One NVMe-oF target as the nvmeof_connect module and the nvmeof_rdma role take it.
FABRIC_TARGET = {'transport': 'tcp', 'address': '10.0.0.1', 'nqn': 'nqn.2026-12.io.example:ckpt'}
SIZE_OPT = {'type': 'size'}
HEARTBEAT = {'range': (30, 86400), 'null': 'refuse', 'with': {'background': True},
             'accept': {'zero': 'turns the heartbeat off (documented: the job then ends at its timeout)'}}
FIO_PATH = {'path': 'exec', 'names': ['fio_path', 'fio'],
            'accept': {'empty': 'empty: fio is looked up in the PATH, as when unset'}}
JOB_STORE = {'path': 'dir', 'null': 'refuse', 'with': {'background': True}, 'names': ['job_store', 'job store'],
             'accept': {'missing': 'made mode 0700'}}

# sample_drives and sample_interval of the writing modules (checkpoint_write, fastpersist_write)
SAMPLE_DRIVES = {
    'sample_drives': {'accept': {'empty': 'the default: no sampling'}, 'null': 'refuse',
                      'extra': [{'kind': 'not_nvme', 'value': ['sda'], 'expect_in': 'sda'},
                                {'kind': 'twice', 'value': ['nvme1n1', '/dev/nvme1n1'], 'expect_in': 'twice'},
                                {'kind': 'absent', 'value': ['nvme9n9'], 'expect_in': 'nvme9n9'}]},
    'sample_interval': {'range': (0.2, 3600), 'null': 'refuse', 'with': {'sample_drives': ['nvme1n1']}},
}
# The checkpoint directories of a module that writes the ranks' files in a run directory of its own
# (checkpoint_write, fastpersist_write: module_utils/common/scratch.py).
RUN_DIRECTORIES = {
    'elements': 'path', 'path': 'dir', 'names': ['directories', 'directory'],
    'accept': {'el_symlink': 'a symlink in a directory only root can write is followed (scratch.open_dir)',
               'el_other_writable': 'the files go in a root-only run directory made inside it',
               'el_colon': 'the writer gets /proc/<pid>/fd/N, never the path: a colon is a plain character'},
    'extra': [{'kind': 'duplicate', 'value': ['{tmp}/ckpt', '{tmp}/ckpt'], 'expect': 'accept',
               'reason': 'ranks share a directory'}],
}

# ------------------------------------------------------------------------------------------------------------------
MODULES = {
    'block_queue': {
        'base': {'device': 'nvme1n1', 'scheduler': 'none', 'nr_requests': 512, 'read_ahead': '1M',
                 'state_dir': '{tmp}/state', 'sysfs_root': '{sys}'},
        'control': 'accept',
        'options': {
            'device': {
                'names': ['device'],
                'extra': [{'kind': 'partition', 'value': 'nvme0n1p1', 'expect_in': 'is a partition'},
                          {'kind': 'traversal', 'value': '../nvme1n1'},
                          {'kind': 'bio_based', 'value': 'md0'},
                          {'kind': 'blanks', 'value': ' nvme1n1 ', 'expect': 'accept',
                           'reason': 'surrounding blanks are trimmed'}],
            },
            'scheduler': {'extra': [{'kind': 'bracketed', 'value': '[none]'}]},
            'nr_requests': {
                'range': (4, 1023), 'limit': {'huge': '4294967295'},
                'extra': [{'kind': 'below_min', 'value': 3, 'limit': '4'},
                          {'kind': 'above_tags', 'value': 1024, 'limit': '1023'},
                          {'kind': 'above_sched', 'value': 2049, 'limit': '2048',
                           'with': {'scheduler': 'mq-deadline'}}],
            },
            'read_ahead_kb': {
                'range': (0, 4294967295), 'with': {'read_ahead': OMIT},
                'extra': [{'kind': 'not_page', 'value': 6, 'limit': '4'},
                          {'kind': 'above_uint', 'value': 4294967296, 'limit': '4294967295'}],
            },
            'read_ahead': {
                'type': 'size', 'limit': {'huge': '4294967295'},
                'extra': [{'kind': 'not_kib', 'value': 512}, {'kind': 'not_page', 'value': '1K', 'limit': '4'}],
            },
            'max_sectors_kb': {'range': (4, 512), 'limit': {'huge': '4294967295'}},
            'nomerges': {},
            'rq_affinity': {},
            'state': {},
            'state_dir': state_dir_opt('block_layer', null='refuse'),
            'sysfs_root': TEST_ROOT,
        },
    },
    'checkpoint_io_facts': {
        'base': {'gather_subset': ['all'], 'sysfs_root': '{sys}', 'procfs_root': '{proc}', 'devfs_root': '{dev}',
                 'etc_root': '{etc}', 'fio_probe': False, 'use_nvme_cli': False, 'state_dir': '{tmp}/state',
                 'deepspeed_configs': ['{tmp}/ds/ds_config.json'], 'checkpoint_paths': ['/mnt/ckpt']},
        'control': 'accept',
        'options': {
            'gather_subset': {
                'accept': {'empty': 'an empty list gathers every section, as [all] does'},
                'extra': [{'kind': 'only_exclusions', 'value': ['!gds'], 'expect': 'accept',
                           'reason': 'documented: a list of exclusions starts from all'}],
            },
            'checkpoint_paths': {'elements': 'path', 'path': 'read', 'with': {'gather_subset': ['xfs']},
                                 'accept': {'empty': 'documented: empty gathers every XFS mount'}},
            'deepspeed_configs': {
                'elements': 'path', 'path': 'read', 'accept': {'empty': 'no DeepSpeed file to report'},
                'with': {'gather_subset': ['deepspeed']},
                'extra': [{'kind': 'el_content_' + kind, 'value': ['{file:%s}' % kind], 'expect': 'accept',
                           'reason': 'read-only facts: the file is reported with its error (deepspeed.files)'}
                          for kind in ('not_utf8', 'not_json', 'nan', 'infinity', 'huge_int', 'dup_keys',
                                       'top_list', 'empty')],
            },
            'gds_job_dirs': {'elements': 'path', 'path': 'read', 'accept': {'empty': 'no job directory'},
                             'with': {'gather_subset': ['gds']}},
            'deepspeed_python': {'path': 'read', 'with': {'gather_subset': ['deepspeed']},
                                 'accept': dict((kind, 'read-only facts: a Python that is not there or no Python is '
                                                       'reported (deepspeed.installed.error)')
                                                for kind in ('missing', 'directory', 'file'))},
            'training_user': {
                'text': True, 'with': {'gather_subset': ['io_uring']},
                'accept': dict((kind, 'read-only facts: an unknown user is reported (io_uring.training_user_uid '
                                      'null), the roles refuse it') for kind in
                               ('list', 'dict', 'empty', 'newline', 'nonascii', 'huge')),
            },
            'fio_probe': {}, 'use_nvme_cli': {}, 'merge': {},
            'sysfs_root': FACTS_ROOT, 'procfs_root': FACTS_ROOT, 'devfs_root': FACTS_ROOT, 'etc_root': FACTS_ROOT,
            'state_dir': state_dir_opt(
                'baseline', path='read', null='accept', with_args={'gather_subset': ['state']},
                accept=dict([('missing', 'read-only: a missing store is reported (exists false)')] +
                            [('record_' + kind, 'read-only facts: the record is reported in state.errors')
                             for kind in ('not_utf8', 'not_json', 'nan', 'infinity', 'dup_keys', 'huge_int')])),
        },
    },
    'checkpoint_io_lock': {
        'base': {'state': 'acquired', 'run_id': 'bad-input:1:1', 'owner': {'user': 'sweep'}, 'ttl': 600, 'wait': 0,
                 'state_dir': '{tmp}/state'},
        'control': 'accept',
        'options': {
            'state': {},
            'run_id': {'text': True, 'refuse': {'empty': None}, 'null': 'refuse',
                       'names': ['run_id']},
            'owner': {'accept': {'empty': 'no details about the run'}},
            'ttl': {'range': (60, 604800), 'null': 'refuse'},
            'wait': {'range': (0, 86400), 'null': 'refuse'},
            'take_over': {'text': True, 'accept': {'empty': 'no lease to take over'}},
            'state_dir': state_dir_opt('run_lease', null='refuse'),
        },
    },
    # the action's module file: its main() refuses to run on a node without the action (the plan is written on the
    # controller); the options are validated first, as everywhere
    'checkpoint_io_plan': {
        'base': {'inputs': {}},
        'control': 'refuse', 'control_expect_in': 'runs as an action plugin',
        'options': {
            'inputs': {'null': 'refuse', 'accept': {'empty': 'every input at its default'}},
            'settings': {'accept': {'empty': 'the roles\' defaults', 'null': 'the roles\' defaults'}},
            'gather': {'accept': {'empty': 'the whole gather', 'null': 'the whole gather'}},
            'report_dir': {'text': True, 'accept': {'null': 'checkpoint_io_report_dir of the inputs',
                                                    'empty': 'checkpoint_io_report_dir of the inputs'}},
            'record': {},
        },
    },
    'checkpoint_io_record': {
        'base': {'name': 'bad_input', 'data': {'a': 1}, 'writer': 'bad-input sweep', 'state_dir': '{tmp}/state'},
        'control': 'accept',
        'options': {
            'name': {
                'limit': {'huge': '64'}, 'names': ['name'],
                'extra': [{'kind': 'at_limit', 'value': 'a' * 64, 'expect': 'accept', 'reason': '64 characters'},
                          {'kind': 'past_limit', 'value': 'a' * 65, 'limit': '64'},
                          {'kind': 'traversal', 'value': '../passwd'},
                          {'kind': 'upper', 'value': 'Baseline'},
                          {'kind': 'reserved', 'value': 'run_lease', 'expect_in': 'run_lease'}],
            },
            'state': {},
            'data': {
                'accept': {'empty': 'an empty record'},
                'extra': [{'kind': 'nan', 'value': {'x': float('nan')}},
                          {'kind': 'infinity', 'value': {'x': float('inf')}},
                          {'kind': 'huge_int', 'value': {'x': 10 ** 400}, 'expect': 'accept',
                           'reason': 'JSON holds integers of any size'}],
            },
            'keep': {'extra': [{'kind': 'with_merge', 'value': True, 'with': {'merge': True},
                                'expect_in': 'mutually exclusive'}]},
            'merge': {},
            'writer': {'text': True},
            'state_dir': state_dir_opt('bad_input', null='refuse'),
        },
    },
    'checkpoint_job': {
        'base': {'job_id': 'bad-input.1', 'wait': 0, 'job_store': '{tmp}/jobs'},
        'control': 'refuse', 'control_expect_in': 'bad-input.1',
        'options': {
            'job_id': {'extra': [{'kind': 'traversal', 'value': '../../etc'}]},
            'wait': {'range': (0, 3600), 'null': 'refuse'},
            'max_runtime': {'range': (1, 604800),
                            'accept': {'null': 'no limit (documented): the worker still ends fio at the write\'s '
                                               'own timeout'}},
            'cancel': {},
            'reap': {},
            'until_finished': {},
            'state_dir': state_dir_opt('scratch', null='refuse'),
            'job_store': {'path': 'dir', 'null': 'refuse', 'names': ['job_store', 'job store', 'no job'],
                          'accept': {'missing': 'no such job: the store is not made by a poll',
                                     'spaces': ROLE_OK, 'nonascii': ROLE_OK, 'newline': ROLE_OK, 'colon': ROLE_OK}},
        },
    },
    'checkpoint_write': {
        'base': {'directories': ['{tmp}/ckpt'], 'ranks': 2, 'total_size': '2M', 'block_size': '64K',
                 'queue_depth': 4, 'fio_path': '{fio}', 'timeout': 60, 'job_store': '{tmp}/jobs'},
        'control': 'refuse', 'control_expect_in': 'fio',
        'options': {
            'directories': RUN_DIRECTORIES,
            'devices': {
                'elements': 'path', 'path': 'file', 'with': {'directories': OMIT, 'force_devices': ['x']},
                'names': ['devices', 'device'],
                'skip': {'el_spaces': 'a new file is no device', 'el_nonascii': 'as spaces',
                         'el_newline': 'as spaces', 'el_colon': 'as spaces'},
                'extra': [{'kind': 'fake_dev', 'value': ['{dev}/nvme1n1']},
                          {'kind': 'char_device', 'value': ['/dev/null'], 'expect_in': '/dev/null'}],
            },
            'force_devices': {'el_text': True, 'accept': {'empty': 'the default', 'null_element':
                                                          'only read with devices'},
                              'known': {}},
            'ranks': {'range': (1, 1024), 'null': 'refuse'},
            'shard_size': {'type': 'size', 'with': {'total_size': OMIT}, 'expect_in': {'huge': 'free space'}},
            'total_size': {'type': 'size', 'expect_in': {'huge': 'free space'}},
            'block_size': {'type': 'size', 'null': 'refuse',
                           'extra': [{'kind': 'not_4k', 'value': 1000, 'limit': '4096'}]},
            'queue_depth': {'range': (1, 65535), 'null': 'refuse'},
            'ioengine': {},
            'direct': {}, 'fsync': {}, 'keep_files': {}, 'background': {},
            'read_back': {'extra': [{'kind': 'with_runtime', 'value': True, 'with': {'runtime': 5},
                                     'expect_in': 'runtime 5'}]},
            'free_space_margin': {'range': (0, 1), 'null': 'refuse'},
            'progress_file': {'path': 'file', 'accept': {'symlink': 'the atomic writer replaces a symlink, never '
                                                                    'writes through it',
                                                         'empty': 'empty: no progress file, as when unset'}},
            'progress_interval': {'range': (0, 3600), 'null': 'refuse',
                                  'with': {'progress_file': '{tmp}/progress.json'}},
            'fio_path': FIO_PATH,
            'label': {'text': True},
            'timeout': {'range': (1, None), 'null': 'refuse'},
            'job_store': JOB_STORE,
            'heartbeat': HEARTBEAT,
            'state_dir': state_dir_opt('scratch', null='refuse'),
            # who each raw device must be: checked on the device's open descriptor, which the fake node (files
            # under {dev}, refused as not under /dev) never reaches; the list itself is tried here
            'expect': {'elements': 'dict', 'with': {'directories': OMIT, 'devices': ['{dev}/nvme1n1'],
                                                    'force_devices': ['nvme1n1']},
                       'accept': {'null': 'missing with devices: refused as the devices are anyway'},
                       'expect_in': {'empty': 'not under /dev'}},
            'expect.device': {'type': 'none'}, 'expect.serial': {'type': 'none'}, 'expect.wwid': {'type': 'none'},
            'expect.size_bytes': {'type': 'none'},
            'runtime': {'range': (1, 86400)},
            **SAMPLE_DRIVES,
        },
    },
    'fastpersist_write': {
        # Debian's python3 has no DeepSpeed: every value the module accepts ends in that refusal, nothing written
        'base': {'python': '/usr/bin/python3', 'directories': ['{tmp}/ckpt'], 'ranks': 2, 'total_size': '2M',
                 'aio': {'block_size': '64K'}, 'timeout': 60, 'state_dir': '{tmp}/state'},
        'control': 'refuse', 'control_expect_in': 'DeepSpeed cannot write here',
        'options': {
            'python': {'path': 'exec', 'names': ['python']},
            'directories': RUN_DIRECTORIES,
            'ranks': {'range': (1, 1024), 'null': 'refuse'},
            'total_size': {'type': 'size', 'null': 'refuse', 'expect_in': {'huge': 'free space'}},
            # the sections' keys are checked by the module (a dict with options would let ansible-core's own
            # validation raise on a list of non-dicts): each key's bad values here
            'aio': {'accept': {'empty': "DeepSpeed's defaults", 'null': 'as empty'},
                    'extra': [{'kind': 'unknown_key', 'value': {'blocksize': 4096}, 'expect_in': "'blocksize'"},
                              {'kind': 'not_4k', 'value': {'block_size': 1000}, 'expect_in': 'aio.block_size: 1000'},
                              {'kind': 'not_a_size', 'value': {'block_size': 'big'}, 'expect_in': 'aio.block_size'},
                              {'kind': 'depth_0', 'value': {'queue_depth': 0}, 'expect_in': 'aio.queue_depth: 0'},
                              {'kind': 'depth_text', 'value': {'queue_depth': 'deep'},
                               'expect_in': "aio.queue_depth: 'deep'"},
                              {'kind': 'threads_257', 'value': {'intra_op_parallelism': 257},
                               'expect_in': 'aio.intra_op_parallelism: 257'},
                              {'kind': 'not_bool', 'value': {'single_submit': 'maybe'},
                               'expect_in': "aio.single_submit: 'maybe'"}]},
            'writer': {'accept': {'empty': "DeepSpeed's defaults", 'null': 'as empty'},
                       'extra': [{'kind': 'unknown_key', 'value': {'type': 'FAST'}, 'expect_in': "'type'"},
                                 {'kind': 'tiny', 'value': {'io_buffer_size': 512},
                                  'expect_in': 'writer.io_buffer_size: 512'},
                                 {'kind': 'not_bool', 'value': {'io_buffer_double': 'maybe'},
                                  'expect_in': "writer.io_buffer_double: 'maybe'"}]},
            'read_back': {}, 'writer_path': {},
            'repeats': {'range': (1, 20), 'null': 'refuse'},
            **SAMPLE_DRIVES,
            'torch_extensions_dir': {'path': 'dir', 'names': ['torch_extensions_dir'],
                                     'accept': {'missing': 'DeepSpeed makes it (its parent is checked)'}},
            'free_space_margin': {'range': (0, 1), 'null': 'refuse'},
            'timeout': {'range': (1, None), 'null': 'refuse'},
            'label': {'text': True},
            'state_dir': state_dir_opt('scratch', null='refuse'),
        },
    },
    'deepspeed_aio': {
        'base': {'path': '{tmp}/ds/ds_config.json', 'aio': {'queue_depth': 16}, 'state_dir': '{tmp}/state'},
        'control': 'accept',
        'options': {
            'path': {
                'path': 'file', 'names': ['path', 'ds_config', '.json'],
                'extra': [{'kind': 'content_' + kind, 'value': '{file:%s}' % kind}
                          for kind in ('not_utf8', 'not_json', 'nan', 'infinity', 'huge_int', 'dup_keys',
                                       'top_list', 'empty')],
            },
            'aio': {'accept': {'empty': 'no value to set: only the clean-up', 'null': 'as empty'}},
            'aio.block_size': {'type': 'size', 'extra': [{'kind': 'not_4k', 'value': 1000, 'limit': '4096'}]},
            'aio.queue_depth': {'type': 'depth', 'range': (1, 65535)},
            'aio.intra_op_parallelism': {'type': 'depth', 'range': (1, 1024)},
            'aio.single_submit': {'type': 'raw_bool'},
            'aio.overlap_events': {'type': 'raw_bool'},
            'aio.use_gds': {'type': 'raw_bool'},
            'writer': {'accept': {'empty': 'no writer value to set', 'null': 'as empty'}},
            'writer.type': {'type': 'raw', 'extra': [{'kind': 'not_a_type', 'value': 'turbo',
                                                      'limit': 'FAST, PYTHON, MOCK'}]},
            'writer.io_buffer_size': {'type': 'size', 'extra': [{'kind': 'not_1k', 'value': 1536, 'limit': '1024'}]},
            'writer.io_buffer_double': {'type': 'raw_bool'},
            'writer.show_statistics': {'type': 'raw_bool'},
            'writer.decoupled': {'type': 'raw_bool'},
            'writer.io_multiplier': {'type': 'depth', 'range': (1, 64)},
            'writer.data_parallel': {'type': 'raw', 'extra': [{'kind': 'not_a_unit', 'value': 'rack',
                                                               'limit': 'REPLICA, SOCKET, MACHINE'}]},
            'thread_key': {},
            'remove_ignored_keys': {}, 'create': {}, 'backup': {},
            'state': {},
            'state_dir': state_dir_opt('deepspeed_aio', null='refuse'),
            'follow_symlinks': {},
        },
    },
    'cufile_config': {
        # a new cufile.json in the scratch directory: created from NVIDIA's documented defaults with the keys
        'base': {'path': '{tmp}/cufile.json', 'state_dir': '{tmp}/state',
                 'settings': {'properties.max_direct_io_size_kb': 16384, 'properties.allow_compat_mode': False}},
        'control': 'accept',
        'options': {
            'path': {
                'path': 'file', 'names': ['path', 'cuFile config', 'cufile', '.json'],
                'accept': {'missing': 'create (default true) makes the file (its directory must exist)'},
                # the generic long path is under / : with create (default true) the module makes its 21 directories
                # there, on the machine that runs the sweep; the same path under the scratch directory instead
                'skip': {'long_path': 'long_path_tmp: the same length under the scratch directory'},
                'extra': [{'kind': 'content_' + kind, 'value': '{file:%s}' % kind}
                          for kind in ('not_utf8', 'not_json', 'nan', 'infinity', 'huge_int', 'top_list', 'empty')]
                + [{'kind': 'content_dup_keys', 'value': '{file:dup_keys}', 'expect': 'accept',
                    'reason': 'documented (jsonc): the last of duplicate keys wins, as with json.loads'},
                   {'kind': 'symlink_followed', 'value': '{tmp}/flink', 'with': {'follow_symlinks': True},
                    'expect': 'accept', 'reason': 'documented: follow_symlinks changes the target, keeps the link'},
                   {'kind': 'long_path_tmp', 'value': '{tmp}/' + LONG_PATH, 'expect_in': 'PATH_MAX'},
                   {'kind': 'missing_no_create', 'value': '{tmp}/new.json', 'with': {'create': False},
                    'expect_in': 'new.json'},
                   {'kind': 'restored_missing', 'value': '{tmp}/new.json',
                    'with': {'state': 'restored', 'settings': OMIT}, 'expect': 'accept',
                    'reason': 'nothing recorded for it: nothing to restore'}],
            },
            'settings': {
                'null': 'refuse',
                'accept': {'empty': 'no key to set: a missing file is created from NVIDIA\'s defaults, an existing '
                                    'one is left as it is'},
                'extra': [{'kind': 'not_dotted', 'value': {'max_direct_io_size_kb': 16384}},
                          {'kind': 'empty_part', 'value': {'properties..max_direct_io_size_kb': 16384}},
                          {'kind': 'space_in_key', 'value': {'properties.max direct': 1}},
                          {'kind': 'negative', 'value': {'properties.max_direct_io_size_kb': -1}, 'limit': '0'},
                          {'kind': 'float_for_int', 'value': {'properties.max_direct_io_size_kb': 1.5}},
                          {'kind': 'str_for_int', 'value': {'properties.max_direct_io_size_kb': '16384'}},
                          {'kind': 'bool_for_int', 'value': {'properties.max_direct_io_size_kb': True}},
                          {'kind': 'int_for_bool', 'value': {'properties.allow_compat_mode': 1}},
                          {'kind': 'str_for_bool', 'value': {'properties.allow_compat_mode': 'false'}},
                          {'kind': 'nan', 'value': {'properties.x_ratio': float('nan')}},
                          {'kind': 'infinity', 'value': {'properties.x_ratio': float('inf')}},
                          {'kind': 'null_value', 'value': {'properties.use_poll_mode': None}},
                          {'kind': 'list_value', 'value': {'properties.use_poll_mode': [True]}},
                          {'kind': 'dict_value', 'value': {'properties.use_poll_mode': {'a': 1}}},
                          {'kind': 'huge_int', 'value': {'properties.max_direct_io_size_kb': 2 ** 64}},
                          {'kind': 'parent_not_object', 'value': {'properties.max_direct_io_size_kb.x': 1},
                           'expect_in': 'properties.max_direct_io_size_kb'},
                          {'kind': 'unknown_key', 'value': {'properties.some_new_key': 4}, 'expect': 'accept',
                           'reason': 'documented: any dotted key is set (NVIDIA adds keys in new releases)'},
                          {'kind': 'with_restored', 'value': {'properties.use_poll_mode': True},
                           'with': {'state': 'restored'}, 'expect_in': 'restored'}],
            },
            'create': {}, 'follow_symlinks': {}, 'backup': {},
            'state': {},
            'state_dir': state_dir_opt('cufile_config', null='refuse'),
        },
    },
    'gds_path_proof': {
        # no NVIDIA GPU on the machine the sweep runs on: past the checks of the values it exits with proven null
        'base': {'directory': '{tmp}/ckpt', 'mode': 'nvidia-fs', 'size': 1048576, 'block_size': 1048576, 'gpu': 0,
                 'timeout': 60, 'state_dir': '{tmp}/state'},
        'control': 'accept',
        'options': {
            'directory': {'path': 'dir', 'null': 'refuse', 'names': ['directory'],
                          'accept': {'other_writable': 'the file goes in a root-only run directory made inside it',
                                     'symlink': 'a symlink in a directory only root can write is followed '
                                                '(scratch.open_dir)'},
                          },
            'mode': {},
            'size': {'range': (1048576, 68719476736), 'null': 'refuse',
                     'extra': [{'kind': 'below_min', 'value': 1048575, 'limit': '1048576'},
                               {'kind': 'at_max', 'value': 68719476736, 'expect': 'accept', 'reason': '64 GiB'},
                               {'kind': 'above_max', 'value': 68719476737, 'limit': '68719476736'}]},
            'block_size': {'range': (4096, 67108864), 'null': 'refuse',
                           'extra': [{'kind': 'not_4k', 'value': 5000, 'limit': '4096'},
                                     {'kind': 'below_min', 'value': 2048, 'limit': '4096'},
                                     {'kind': 'above_max', 'value': 67108864 + 4096, 'limit': '67108864'}]},
            'gpu': {'range': (0, 1023), 'null': 'refuse',
                    'extra': [{'kind': 'above_max', 'value': 1024, 'limit': '1023'}]},
            'timeout': {'range': (1, 86400), 'null': 'refuse',
                        'extra': [{'kind': 'above_max', 'value': 86401, 'limit': '86400'}]},
            'state_dir': state_dir_opt('scratch', null='refuse'),
        },
    },
    'nvmeof_connect': {
        # absent of a connection this machine does not have: nothing to disconnect, no command run
        'base': {'connections': [{'transport': 'tcp', 'address': '127.0.0.1', 'service_id': 4420,
                                  'nqn': 'nqn.2026-12.io.example:ckpt'}], 'state': 'absent'},
        'control': 'accept',
        'options': {
            'connections': {'elements': 'raw', 'null': 'refuse',
                            'extra': [{'kind': 'transport_fc', 'value': [dict(FABRIC_TARGET, transport='fc')],
                                       'expect_in': "'fc' is not a fabric transport"},
                                      {'kind': 'queue_size_0', 'value': [dict(FABRIC_TARGET, queue_size=0)],
                                       'expect_in': 'give 16 to 1024'},
                                      {'kind': 'queue_size_2000', 'value': [dict(FABRIC_TARGET, queue_size=2000)],
                                       'expect_in': 'give 16 to 1024'},
                                      {'kind': 'bad_nqn', 'value': [dict(FABRIC_TARGET, nqn='nqn.bad')],
                                       'expect_in': "'nqn.bad' is not an NQN"}]},
            'state': {},
            'block_size_kib': {'type': 'raw', 'range': (4, 65536), 'null': 'refuse'},
            'bandwidth_mib_s': {'type': 'raw', 'range': (1, 10 ** 7), 'null': 'refuse'},
            'device_latency_ms': {'type': 'raw', 'null': 'refuse'},
            'rtt_samples': {'type': 'raw', 'range': (1, 100), 'null': 'refuse'},
            'ctrl_loss_tmo': {'type': 'raw', 'range': (-1, 604800), 'accept': {'null': 'nvme-cli\'s default'}},
            'reconnect_delay': {'type': 'raw', 'range': (1, 3600), 'accept': {'null': 'nvme-cli\'s default'}},
            'keep_alive_tmo': {'type': 'raw', 'range': (1, 3600), 'accept': {'null': 'nvme-cli\'s default'}},
            'hostnqn': {'accept': {'null': 'nvme-cli\'s /etc/nvme/hostnqn'}},
            'hostid': {'accept': {'null': 'nvme-cli\'s /etc/nvme/hostid'}},
            'iopolicy': {},
            'force': {'elements': 'str', 'accept': {'empty': 'the default: nothing forced'}, 'null': 'refuse'},
            'planned': {'accept': {'null': 'the default: no earlier run', 'empty': 'no earlier run'},
                        'extra': [{'kind': 'not_a_dict', 'value': {'tcp 10.0.0.1:4420 nqn.2026-12.io.example:ckpt': 7},
                                   'expect_in': 'is not a dict'},
                                  {'kind': 'queue_size_str',
                                   'value': {'tcp 10.0.0.1:4420 nqn.2026-12.io.example:ckpt': {'queue_size': 'abc'}},
                                   'expect_in': "'abc' must be a whole number from 16 to 1024"},
                                  {'kind': 'queue_size_huge',
                                   'value': {'tcp 10.0.0.1:4420 nqn.2026-12.io.example:ckpt': {'queue_size': 4096}},
                                   'expect_in': '4096 must be a whole number from 16 to 1024'}]},
        },
    },
    'checkpoint_compression': {
        # a small file measured as opaque bytes (read only): the control passes; no command is run
        'base': {'paths': ['{tmp}/afile'], 'roots': ['{tmp}'], 'sample_bytes': 65536, 'time_budget': 30,
                 'codecs': ['zlib'], 'cores': 1, 'write_bandwidth': 1000},
        'control': 'accept',
        'options': {
            'paths': {'elements': 'path', 'path': 'read', 'null': 'refuse', 'names': ['paths'],
                      'extra': [{'kind': 'outside_roots', 'value': ['/etc/hostname'], 'expect_in': 'outside the roots'},
                                {'kind': 'fifo_dir', 'value': ['/dev/null'], 'expect_in': '/dev/null',
                                 'with': {'roots': ['/dev']}}]},
            'previous': {'elements': 'path', 'path': 'read', 'names': ['previous'],
                         'accept': {'empty': 'the default: no delta measured'},
                         'extra': [{'kind': 'two_for_one', 'value': ['{tmp}/afile', '{tmp}/afile'],
                                    'expect_in': '2 paths for 1'}]},
            'roots': {'elements': 'path', 'path': 'read', 'names': ['roots'],
                      'accept': {'null': 'the default: the paths themselves'}},
            'sample_bytes': {'range': (65536, 1073741824), 'null': 'refuse',
                             'extra': [{'kind': 'below_min', 'value': 65535, 'limit': '65536'},
                                       {'kind': 'above_max', 'value': 1073741825, 'limit': '1073741824'}]},
            'time_budget': {'range': (1, 3600), 'null': 'refuse',
                            'extra': [{'kind': 'zero', 'value': 0, 'limit': '1'},
                                      {'kind': 'above_max', 'value': 3601, 'limit': '3600'}]},
            'codecs': {},
            'cores': {'range': (0, 4096), 'null': 'refuse',
                      'extra': [{'kind': 'all', 'value': 0, 'expect': 'accept', 'reason': '0: every core'},
                                {'kind': 'above_max', 'value': 4097, 'limit': '4096'}]},
            'write_bandwidth': {'accept': {'null': 'the default: no write bound in the projection'},
                                'refuse': {'str': None},
                                'extra': [{'kind': 'zero', 'value': 0, 'limit': '10000000'},
                                          {'kind': 'negative', 'value': -5, 'limit': '10000000'},
                                          {'kind': 'inf', 'value': 'inf', 'limit': '10000000'},
                                          {'kind': 'above_max', 'value': 10000001, 'limit': '10000000'},
                                          {'kind': 'digits', 'value': '2048.5', 'expect': 'accept',
                                           'reason': 'MiB/s as a numeric string (templated)'}]},
        },
    },
    'md_array': {
        'base': {'name': 'ckpt', 'members': ['/dev/nvme1n1', '/dev/nvme2n1'], 'chunk': '512K',
                 'identities': [{'serial': 'DATA0001'}, {'serial': 'DATA0002'}],
                 'conf_file': '{tmp}/mdadm.conf', 'devfs_root': '{dev}', 'sysfs_root': '{sys}',
                 'procfs_root': '{proc}'},
        # the fake node's drives are files: the module's identity check refuses them, after the values' checks
        'control': 'refuse', 'control_expect_in': 'not a block device',
        'options': {
            'name': {
                'limit': {'huge': '32'},
                'extra': [{'kind': 'at_limit', 'value': 'a' * 32, 'expect': 'refuse',
                           'expect_in': 'not a block device'},
                          {'kind': 'past_limit', 'value': 'a' * 33, 'limit': '32'},
                          {'kind': 'multibyte_past_limit', 'value': u'\u00e9' * 17, 'limit': '32'},
                          {'kind': 'slash', 'value': 'a/b'}, {'kind': 'dot', 'value': '.x'},
                          {'kind': 'space', 'value': 'a b'}, {'kind': 'colon', 'value': 'host:ckpt'}],
            },
            'state': {},
            'members': {
                'elements': 'path', 'path': 'file', 'null': 'refuse',
                'skip': {'el_spaces': 'no such device, refused as missing', 'el_nonascii': 'as spaces',
                         'el_newline': 'as spaces', 'el_colon': 'as spaces'},
                'extra': [{'kind': 'one_member', 'value': ['/dev/nvme1n1'], 'limit': 'two'},
                          {'kind': 'twice', 'value': ['/dev/nvme1n1', '/dev/nvme1n1']}],
            },
            'level': {},
            'identities': {'elements': 'dict', 'null': 'refuse', 'refuse': {'empty': None},
                           'extra': [{'kind': 'one_short', 'value': [{'serial': 'DATA0001'}]},
                                     {'kind': 'no_key', 'value': [{}, {}]},
                                     {'kind': 'wrong_serial',
                                      'value': [{'serial': 'DATA0002'}, {'serial': 'DATA0001'}]},
                                     {'kind': 'unknown_key',
                                      'value': [{'serail': 'DATA0001'}, {'serial': 'DATA0002'}]}]},
            'chunk': {'type': 'size', 'null': 'refuse',
                      'extra': [{'kind': 'not_power_of_two', 'value': '3M'},
                                {'kind': 'below_min', 'value': '2K', 'limit': '4'}]},
            'metadata': {'extra': [{'kind': 'yaml_float', 'value': 1.2, 'expect': 'accept',
                                    'reason': 'YAML 1.2 is the string 1.2'}]},
            'uuid': {'extra': [{'kind': 'not_uuid', 'value': 'not-a-uuid'}]},
            'force': {}, 'persist': {}, 'update_initramfs': {},
            'conf_file': {'path': 'file', 'null': 'refuse'},
            'devfs_root': TEST_ROOT, 'procfs_root': TEST_ROOT, 'sysfs_root': TEST_ROOT,
        },
    },
    'checkpoint_dir': {
        # the training user's directory below a root-owned base, made through no link (issue 31, finding 1)
        'base': {'path': '{tmp}/ckpt', 'base': '{tmp}', 'owner': 'root'},
        'control': 'accept',
        'options': {
            'path': {'path': 'dir', 'null': 'refuse',
                     'accept': {'missing': "made below the base: the directories on the way root's, mode 0755",
                                'other_writable': 'the directory asked for: its mode set to the one asked, by '
                                                  'descriptor'},
                     'extra': [{'kind': 'outside', 'value': '/etc/ckpt', 'expect_in': 'nor below it'},
                               {'kind': 'dotdot', 'value': '{tmp}/../etc', 'expect_in': 'holds . or ..'}]},
            'base': {'path': 'dir', 'null': 'refuse',
                     'refuse': {'spaces': None, 'nonascii': None, 'newline': None, 'colon': None}},
            'owner': {'extra': [{'kind': 'no_such_user', 'value': 'no-such-user-31', 'expect_in': 'no-such-user-31'}]},
            'group': {'accept': {'empty': "the owner's primary group", 'null': "the owner's primary group"},
                      'extra': [{'kind': 'no_such_group', 'value': 'no-such-group-31',
                                 'expect_in': 'no-such-group-31'}]},
            'mode': {'extra': [{'kind': 'not_octal', 'value': '0759'},
                               {'kind': 'yaml_number', 'value': 488, 'expect': 'accept',
                                'reason': 'the number YAML makes of an unquoted 0750'}]},
        },
    },
    'fleet_report': {
        # runs on the controller (delegate_to: localhost); reads a fact cache, writes the report's four files
        'base': {'cache_dir': '{tmp}/adir', 'out_dir': '{tmp}/report'},
        'control': 'accept',
        'options': {
            'cache_dir': {'path': 'read', 'null': 'refuse',
                          'refuse': {'missing': None, 'file': None, 'long_name': None, 'long_path': None},
                          'accept': {'other_writable': 'only read: each file is parsed as JSON, nothing run'}},
            'cache_prefix': {'text': True, 'accept': {'null': 'the default (no prefix)'}},
            'out_dir': {'path': 'dir', 'null': 'refuse',
                        'accept': {'missing': 'made (0755) like any report directory'}},
            'name': {'limit': {'huge': '100'},
                     'accept': {'null': 'the default (fleet_report)', 'nonascii': None},
                     'extra': [{'kind': 'slash', 'value': 'a/b'}, {'kind': 'dotdot', 'value': '..'},
                               {'kind': 'space', 'value': 'a b'}]},
            'title': {'text': True, 'accept': {'null': 'the default title'}},
            'targets': {'type': 'dict', 'accept': {'empty': 'the role defaults'},
                        'extra': [{'kind': 'unknown', 'value': {'block_layer_schedular': 'none'},
                                   'expect_in': 'block_layer_schedular'}]},
            'plan': {'type': 'dict', 'accept': {'empty': 'no plan'},
                     'extra': [{'kind': 'window_zero', 'value': {'checkpoint': 'llama3-8b', 'ranks_per_node': 8,
                                                                 'window_s': 0}, 'expect_in': 'window_s'}]},
            'previous': {'path': 'read', 'accept': {'null': 'no previous report', 'missing': 'no previous report'}},
            'verify_dir': {'path': 'read', 'accept': {'null': 'no verification reports'},
                           'refuse': {'missing': None, 'file': None, 'long_name': None, 'long_path': None}},
            'compression_dir': {'path': 'read', 'accept': {'null': 'no compression results'},
                                'refuse': {'missing': None, 'file': None, 'long_name': None, 'long_path': None}},
            'run_dir': {'path': 'read', 'accept': {'null': 'no run documents'},
                        'refuse': {'missing': None, 'file': None, 'long_name': None, 'long_path': None}},
            'stale_hours': {'type': 'float', 'range': (0, 87600), 'accept': {'null': 'the default (24)'}},
            'outlier_fraction': {'type': 'float', 'range': (0, 1), 'accept': {'null': 'the default (0.8)'}},
            'workers': {'range': (0, 64), 'accept': {'null': 'the default (one per CPU)'}},
        },
    },
    'queue_depth_sweep': {
        'base': {'directory': '{tmp}/sweep', 'fio_path': '{fio}', 'depths': [1, 2], 'runtime_per_point': 1,
                 'size_per_point': '1M', 'scratch_size': '1M', 'block_size': '64K', 'repeats': 1,
                 'job_store': '{tmp}/jobs'},
        'control': 'refuse', 'control_expect_in': 'fio',
        'options': {
            'directory': {'path': 'dir', 'accept': {
                'symlink': 'a symlink in a directory only root can write is followed (scratch.open_dir)',
                'other_writable': 'the scratch files go in a root-only run directory made inside it',
                'colon': 'fio gets /proc/self/fd/N, never the path: a colon is a plain character'}},
            'block_size': {'type': 'size', 'null': 'refuse',
                           'extra': [{'kind': 'not_4k', 'value': 1000, 'limit': '4096'}]},
            'depths': {'elements': 'int', 'el_range': (1, 65535), 'null': 'refuse',
                       'extra': [{'kind': 'duplicate', 'value': [2, 2]}]},
            'ioengine': {},
            'direct': {}, 'exhaustive': {}, 'background': {}, 'search': {},
            'runtime_per_point': {'range': (1, None), 'null': 'refuse'},
            'ramp_per_point': {'range': (0, 3600), 'null': 'refuse'},
            'size_per_point': {'type': 'size', 'null': 'refuse'},
            'scratch_size': {'type': 'size', 'null': 'refuse'},
            'free_space_margin': {'range': (0, 1), 'null': 'refuse'},
            'fraction': {'range': (0, 1), 'null': 'refuse'},
            'plateau_gain': {'range': (0, 1), 'null': 'refuse'},
            'plateau_points': {'range': (1, None), 'null': 'refuse'},
            'ranks_per_drive': {'range': (1, None), 'with': {'nr_requests': 64}},
            'ranks': {'range': (1, 1024), 'null': 'refuse'},
            'repeats': {'range': (1, 20), 'null': 'refuse'},
            'nr_requests': {'range': (1, None)},
            'fio_path': FIO_PATH,
            'timeout': {'range': (1, None), 'null': 'refuse'},
            'label': {'text': True},
            'job_store': JOB_STORE,
            'heartbeat': HEARTBEAT,
            'state_dir': state_dir_opt('scratch', null='refuse'),
        },
    },
    'engine_verify': {
        'base': {'profile': {'drives': [{'name': 'nvme1n1', 'device': '/dev/nvme1n1', 'block_size_bytes': 1048576,
                                         'iodepth': 4, 'fio_options': {'ioengine': 'io_uring', 'iodepth': 4,
                                                                       'bs': 1048576, 'direct': 1}}]},
                 'options': {'verify_mode': 'read', 'verify_runtime': 1, 'verify_size': '8M'},
                 'drives': [{'name': 'nvme1n1', 'mount_points': [], 'size_bytes': 67108864}],
                 'fio_path': '{fio}', 'timeout': 60, 'state_dir': '{tmp}/state'},
        'control': 'refuse', 'control_expect_in': 'fio',
        'options': {
            'profile': {'refuse': {'empty': None},
                        'extra': [{'kind': 'drives_not_list', 'value': {'drives': 'nvme1n1'}},
                                  {'kind': 'no_drives', 'value': {'drives': []}}]},
            'options': {'accept': {'empty': 'the role\'s defaults'},
                        'names': ['options', 'io_uring_engine_verify'],
                        'extra': [{'kind': 'bad_mode', 'value': {'verify_mode': 'bogus'}},
                                  {'kind': 'zero_runtime', 'value': {'verify_mode': 'read', 'verify_runtime': 0}},
                                  {'kind': 'bad_size', 'value': {'verify_mode': 'read', 'verify_size': '1X'}}]},
            'drives': {'elements': 'dict', 'accept': {'empty': 'read mode: the profile names the drives'},
                       'null': 'refuse'},
            'fio_path': FIO_PATH,
            'timeout': {'range': (1, None), 'null': 'refuse'},
            'state_dir': state_dir_opt('scratch', null='refuse'),
        },
    },
    'xfs_format': {
        'base': {'device': '/dev/nvme1n1', 'drive': {'serial': 'DATA0001'},
                 'uuid': '0b7e6c1e-3c55-4d7a-a0f1-6a4c2d9e8b13', 'options': ['-L', 'checkpoints'],
                 'sysfs_root': '{sys}'},
        # the fake node's drives are files: the module's identity check refuses them, after the values' checks
        'control': 'refuse', 'control_expect_in': 'cannot be opened',
        'options': {
            'device': {'path': 'file', 'names': ['device', 'drive']},
            'drive': {'accept': {'null': 'with md_uuid instead'}, 'refuse': {'empty': None},
                      'extra': [{'kind': 'serial_list', 'value': {'serial': ['DATA0001']}},
                                {'kind': 'unknown_key', 'value': {'serail': 'DATA0001'}}]},
            'force': {'type': 'raw', 'accept': {'null': 'names none'},
                      'extra': [{'kind': 'true', 'value': True, 'expect_in': 'force'},
                                {'kind': 'unknown_drive', 'value': ['NO-SUCH-SERIAL']}]},
            'log_device': {'type': 'path', 'path': 'file', 'accept': {'null': 'an internal log'},
                           'with': {'log_identity': {'serial': 'DATA0002'}}},
            'log_identity': {'accept': {'null': 'no log device'}, 'with': {'log_device': '/dev/nvme2n1'}},
            'md_uuid': {'accept': {'null': 'a drive'},
                        'with': {'drive': OMIT, 'members': [{'serial': 'DATA0002'}, {'serial': 'DATA0003'}]},
                        'extra': [{'kind': 'not_uuid', 'value': 'not-a-uuid'}]},
            'members': {'elements': 'dict', 'accept': {'null': 'a drive'},
                        'with': {'drive': OMIT, 'md_uuid': 'e78a7203:e730df8e:32ae8ffc:b4fc9ee8'}},
            'options': {'accept': {'empty': 'mkfs.xfs defaults'}, 'null': 'refuse',
                        'extra': [{'kind': 'own_uuid', 'value': ['-m', 'uuid=11111111-2222-3333-4444-555555555555']},
                                  {'kind': 'force_flag', 'value': ['-f']}]},
            'state': {},
            'sysfs_root': TEST_ROOT,
            'uuid': {'extra': [{'kind': 'not_uuid', 'value': 'not-a-uuid'}]},
        },
    },
}


# ------------------------------------------------------------------------------------------------------------------
# The shared checkpoint_io_* variables (plugins/module_utils/common/inputs.py): the preflight role checks them first.
def inputs_spec(name):
    """The table entry of one shared variable from its kind in inputs.SPEC; None for a kind this table does not
    know (the completeness test then names the variable)."""
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import SPEC
    if name not in SPEC:
        return None
    kind, default, limits, _doc = SPEC[name]
    if name in INPUT_OVERRIDES:
        return INPUT_OVERRIDES[name]
    null = {'null': 'accept'}
    if kind == 'int':
        return dict(null, type='int', range=limits[:2])
    if kind == 'depth':
        return dict(null, type='depth', range=limits[:2],
                    extra=[{'kind': 'auto', 'value': 'auto', 'expect': 'accept', 'reason': 'the depth sweep'}])
    if kind == 'number':
        return dict(null, type='float', range=limits[:2])
    if kind == 'bool':
        return dict(null, type='bool')
    if kind == 'size':
        return dict(null, type='size')
    if kind == 'choice':
        return dict(null, type='choice', choices=list(limits))
    if kind == 'str':
        return dict(null, type='text', refuse={'list': None, 'dict': None, 'empty': None})
    if kind == 'path':
        return dict(null, type='path', path='dir', accept={'missing': 'made on the first write'})
    if kind == 'paths':
        return dict(null, type='list', elements='path', path='dir', accept={'empty': 'no path: the plays decide'})
    if kind == 'dict':
        return dict(null, type='dict', accept={'empty': 'an empty selection: refused by the roles\' drive selection'})
    return None


TEXT_OK = dict((kind, ROLE_OK) for kind in ('newline', 'nonascii', 'huge'))
INPUT_OVERRIDES = {
    'checkpoint_io_training_user': {
        'null': 'accept', 'type': 'text',
        'refuse': {'list': None, 'dict': None, 'empty': None, 'newline': None, 'huge': '32'},
        'accept': {'nonascii': 'a user name is looked up on the node (refused there when missing)'}},
    'checkpoint_io_checkpoint_dir': {
        'null': 'accept', 'type': 'text',
        'refuse': {'list': None, 'dict': None, 'empty': None},
        'extra': [{'kind': 'relative', 'value': 'relative/ckpt'}]},
    'checkpoint_io_hosts': {'null': 'accept', 'type': 'text', 'refuse': {'list': None, 'dict': None, 'empty': None}},
    'checkpoint_io_report_dir': {'null': 'accept', 'type': 'text',
                                 'refuse': {'list': None, 'dict': None, 'empty': None}},
    'checkpoint_io_lock_take_over': {'null': 'accept', 'type': 'text',
                                     'refuse': {'list': None, 'dict': None, 'empty': None}},
    'checkpoint_io_checkpoint_paths': {'null': 'accept', 'type': 'list', 'elements': 'path', 'path': 'read',
                                       'accept': {'empty': 'every XFS mount'}},
    'checkpoint_io_deepspeed_configs': {'null': 'accept', 'type': 'list', 'elements': 'path', 'path': 'file',
                                        'accept': {'empty': 'no DeepSpeed file'}},
    'checkpoint_io_deepspeed_python': {'null': 'accept', 'type': 'text',
                                       'refuse': {'list': None, 'dict': None, 'empty': None},
                                       'extra': [{'kind': 'relative', 'value': 'bin/python'}]},
    'checkpoint_io_data_drives': {
        'null': 'accept', 'type': 'dict',
        'accept': {'empty': 'the first play of tune_checkpoint_nodes refuses it against the node\'s facts, naming the '
                            'variable (selection_problems), before any role runs'},
        'extra': [{'kind': 'typo_key', 'value': {'serial': ['DATA0001']}, 'expect_in': 'serial'},
                  {'kind': 'serials_str', 'value': {'serials': 'DATA0001'}, 'expect': 'accept',
                   'reason': 'a single serial: the selection takes a string as a list of one'}]},
    'checkpoint_io_drive_endurance': {
        'null': 'accept', 'type': 'dict',
        'accept': {'empty': 'no rating: the summary gives the bytes alone'},
        'extra': [{'kind': 'typo_key', 'value': {'default': {'tbwx': 600}}, 'expect_in': 'tbw, dwpd'},
                  {'kind': 'both', 'value': {'default': {'tbw': 600, 'dwpd': 1}}, 'expect_in': 'not both'},
                  {'kind': 'negative', 'value': {'DATA0001': {'tbw': -1}}, 'expect_in': 'DATA0001'},
                  {'kind': 'neither', 'value': {'default': {'warranty_years': 5}}, 'expect_in': 'give tbw'},
                  {'kind': 'bad_capacity', 'value': {'default': {'dwpd': 1, 'capacity': 'lots'}},
                   'expect_in': 'capacity'}]},
    'checkpoint_io_verify_total_size': {
        'type': 'size', 'null': 'accept',
        'accept': {'huge': 'a size: the verification refuses it where it does not fit in checkpoint_io_verify_free_share '
                           'of the free space (checkpoint_shape, asked)'}},
    'checkpoint_io_serial': {
        'type': 'raw', 'null': 'accept', 'accept': {'list': 'one host per batch'},
        'extra': [{'kind': 'zero', 'value': 0}, {'kind': 'zero_percent', 'value': '0%'},
                  {'kind': 'above_100_percent', 'value': '101%'}, {'kind': 'empty_list', 'value': []},
                  {'kind': 'negative_batch', 'value': [1, -1]}, {'kind': 'float', 'value': 1.5},
                  {'kind': 'canary', 'value': [1, '100%'], 'expect': 'accept', 'reason': 'a canary host, then all'}]},
}


# The shared variables are tried in full against module_utils/common/inputs.py in-process (target "inputs",
# test_bad_input_inputs.py); through the roles that take them (ansible-playbook, one host per case) a few cases per
# variable show the wiring: the role's argument spec and the preflight role's check refuse them, naming them.
WIRING_KINDS = ('list', 'huge', 'other', 'el_relative', 'typo_key', 'above_100_percent', 'relative', 'negative')


def shared(names, wiring=True, **more):
    """Entries of the shared variables ``names`` (``more``: entries that differ in this role); ``wiring``: only the
    WIRING_KINDS cases (at most two) of each."""
    out = {}
    for name in names:
        spec = inputs_spec(name)
        if spec is not None:
            out[name] = dict(spec, wiring=WIRING_KINDS, wiring_count=1) if wiring else spec
    out.update(more)
    return out


def _preflight_names():
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.inputs import SPEC
    return list(SPEC)


DATA_DRIVES = {
    'null': 'refuse', 'refuse': {'empty': None},
    'extra': [{'kind': 'typo_key', 'value': {'serial': ['DATA0001']}, 'expect_in': 'serial'},
              {'kind': 'serials_empty', 'value': {'serials': []}},
              {'kind': 'serials_null', 'value': {'serials': None}},
              {'kind': 'serials_null_element', 'value': {'serials': [None]}},
              {'kind': 'serials_nested', 'value': {'serials': [['DATA0001']]}},
              {'kind': 'serials_newline', 'value': {'serials': ['DATA\n0001']}},
              {'kind': 'serials_unknown', 'value': {'serials': ['NO-SUCH-SERIAL']}},
              {'kind': 'models_bad_regex', 'value': {'models': ['[']}},
              {'kind': 'models_dict', 'value': {'models': {'a': 1}}},
              {'kind': 'devices_nonascii', 'value': {'devices': [u'/dev/nvme\u00e91n1']}},
              {'kind': 'devices_partition', 'value': {'devices': ['/dev/nvme0n1p1']}},
              {'kind': 'devices_os_drive', 'value': {'devices': ['/dev/nvme0n1']}},
              {'kind': 'devices_relative', 'value': {'devices': ['../nvme1n1']}}],
}
# The selection is one filter (selection.py) in every role: the full set of its cases runs through block_layer, a
# few through the other roles that take it (their wiring).
DATA_DRIVES_WIRING = dict(DATA_DRIVES, extra=[extra for extra in DATA_DRIVES['extra']
                                              if extra['kind'] in ('typo_key', 'serials_unknown', 'devices_os_drive')])
# The roles that declare the selection without suboptions (ansible/ansible PR 81631): its keys are checked by the
# selection (selection.py), whose cases run through block_layer.
DRIVES_DICT = {'checkpoint_io_data_drives': DATA_DRIVES_WIRING}
STATE_NULL = {'null': 'refuse'}
ROLE_PATH_FILE = {'type': 'path', 'path': 'file', 'null': 'refuse'}
ROLE_MOUNTS = {'elements': 'str', 'accept': {'empty': 'the default: none'}, 'null': 'refuse',
               'extra': [{'kind': 'el_relative', 'value': ['relative/mnt']}]}
ROLE_HOLDERS = {'elements': 'str', 'accept': {'empty': 'the default: none'}, 'null': 'refuse',
                'extra': [{'kind': 'el_slash', 'value': ['md/127']}]}

# Roles of other files run at most CAP generic cases per variable through ansible-playbook besides the ones the
# argument spec refuses and their own table's cases: each host that passes the spec costs the role's validation
# tasks and their module runs (the xfs role gathers facts twice per host). BAD_INPUT_CAP=0 runs only those (a quick
# sweep), BAD_INPUT_ALL=1 every case.
CAP = int(os.environ.get('BAD_INPUT_CAP', '1'))

ROLES = {
    'block_layer': {
        # its first task: the block_layer_inputs filter over the role's variables (module_utils/block/block_queue.py)
        'first_check': (
            lambda values: block_queue.role_input_errors(
                dict((key, value) for key, value in values.items() if key in block_queue.ROLE_VARIABLES),
                [key for key in values if key.startswith('block_layer_')]),
            "block_layer : Check the role's variables against their types and limits before anything is gathered "
            "or changed", 'block_layer on the host: %s. Nothing was changed.'),
        'base': {'checkpoint_io_data_drives': {'devices': ['/dev/nvme1n1']}, 'checkpoint_io_state_dir': '{tmp}/state',
                 'block_layer_udev_rule_path': '{tmp}/udev/99-ckpt.rules',
                 'block_layer_modprobe_file': '{tmp}/modprobe/ckpt.conf'},
        'validate_tags': ['block_layer_validate'],
        'entries': {'main': {'options': {
            'checkpoint_io_data_drives': DATA_DRIVES,
            'block_layer_state': STATE_NULL,
            'block_layer_scheduler': {'choices': ['none', 'mq-deadline', 'kyber', 'bfq'],
                                      'accept': {'null': 'null leaves the scheduler as found'}},
            'block_layer_nr_requests': {'range': (4, 1023), 'limit': {'huge': '4294967295'}},
            'block_layer_read_ahead': {'type': 'size', 'limit': {'huge': '4294967295'},
                                       'accept': {'null': 'null leaves it as found'}},
            'block_layer_max_sectors_kb': {'range': (4, 512), 'limit': {'huge': '4294967295'}},
            'block_layer_nomerges': {'accept': {'null': 'null leaves it as found'}},
            'block_layer_rq_affinity': {'accept': {'null': 'null leaves it as found'}},
            'block_layer_persist': {'null': 'refuse'},
            'block_layer_udev_rule_path': dict(
                ROLE_PATH_FILE, extra=[{'kind': 'not_rules', 'value': '{tmp}/x.conf', 'limit': '.rules'}]),
            'block_layer_nvme_io_queue_depth': {'range': (2, 4095)},
            'block_layer_modprobe_file': dict(
                ROLE_PATH_FILE, extra=[{'kind': 'not_conf', 'value': '{tmp}/x.rules', 'limit': '.conf'}]),
            'block_layer_reboot_ok': {'null': 'refuse'},
            'block_layer_reboot_timeout': {'range': (1, 86400), 'null': 'refuse'},
            'block_layer_allow_mounted_by': ROLE_MOUNTS,
            'block_layer_allow_held_by': ROLE_HOLDERS,
            # a variable the role does not have (a '+' entry: no option of the spec)
            '+block_layer_nr_request': {'type': 'none', 'extra': [
                {'kind': 'misspelt', 'value': 512, 'expect_in': 'block_layer_nr_request is not a variable'}]},
        }}},
    },
    'io_uring_engine': {
        'base': {'checkpoint_io_data_drives': {'devices': ['/dev/nvme1n1']}, 'checkpoint_io_state_dir': '{tmp}/state',
                 'io_uring_engine_training_user': 'trainer',
                 'io_uring_engine_sysctl_file': '{tmp}/sysctl/90-io-uring.conf',
                 'io_uring_engine_limits_file': '{tmp}/limits/90-io-uring.conf',
                 'io_uring_engine_profile_file': '{tmp}/profile/engine_profile.json'},
        'validate_tags': ['io_uring_engine_validate'], 'cap': CAP,
        'entries': {'main': {'options': dict(DRIVES_DICT, **{
            'io_uring_engine_state': STATE_NULL,
            'io_uring_engine_training_user': {'null': 'refuse',
                                              'extra': [{'kind': 'no_such_user', 'value': 'no-such-user-bad-input'}]},
            'io_uring_engine_io_uring_disabled': {'accept': {'null': 'null leaves it as found'}},
            'io_uring_engine_io_uring_group': {'accept': {'null': 'null leaves it as found'},
                                               'extra': [{'kind': 'no_such_group', 'value': 'no-such-group-bad'}]},
            'io_uring_engine_add_user_to_group': {'null': 'refuse'},
            'io_uring_engine_sysctl_file': ROLE_PATH_FILE,
            'io_uring_engine_memlock': {'type': 'size', 'accept': {'null': 'null: not managed'},
                                        'extra': [{'kind': 'unlimited', 'value': 'unlimited', 'expect': 'accept',
                                                   'reason': 'documented'},
                                                  {'kind': 'auto', 'value': 'auto', 'expect': 'accept',
                                                   'reason': 'documented: a bound from the engine profile'},
                                                  {'kind': 'below_need', 'value': '4K'}]},
            'io_uring_engine_allow_shared_group': {'null': 'refuse'},
            'io_uring_engine_ranks': {'range': (1, 1024), 'accept': {'null': 'checkpoint_io_ranks, else 8'}},
            'io_uring_engine_rank_queue_depth': {
                'type': 'depth', 'range': (1, 65535), 'accept': {'null': 'checkpoint_io_queue_depth, else 8'},
                'extra': [{'kind': 'auto', 'value': 'auto', 'expect': 'accept', 'reason': 'counted as 256'}]},
            'io_uring_engine_limits_file': ROLE_PATH_FILE,
            'io_uring_engine_install_packages': {'null': 'refuse'},
            'io_uring_engine_packages': {'accept': {'empty': 'nothing to install', 'null': 'the default packages'}},
            'io_uring_engine_target_depth': {'range': (1, 4096), 'null': 'refuse'},
            'io_uring_engine_block_size': {'type': 'size', 'null': 'refuse'},
            'io_uring_engine_sqpoll': {'null': 'refuse'}, 'io_uring_engine_registerfiles': {'null': 'refuse'},
            'io_uring_engine_fixedbufs': {'null': 'refuse'},
            'io_uring_engine_cpus_per_drive': {'range': (1, 64), 'null': 'refuse'},
            'io_uring_engine_exclude_cpus': {'elements': 'int', 'el_range': (0, 8191),
                                             'accept': {'empty': 'the default: none'}, 'null': 'refuse'},
            'io_uring_engine_profile_file': ROLE_PATH_FILE,
            'io_uring_engine_allow_mounted_by': ROLE_MOUNTS,
            'io_uring_engine_allow_held_by': ROLE_HOLDERS,
            'io_uring_engine_verify': {'null': 'refuse'}, 'io_uring_engine_verify_fail': {'null': 'refuse'},
            'io_uring_engine_verify_mode': STATE_NULL,
            'io_uring_engine_verify_runtime': {'range': (1, 600), 'null': 'refuse'},
            'io_uring_engine_verify_size': {'type': 'size', 'null': 'refuse'},
            'io_uring_engine_remeasure': STATE_NULL,
            'io_uring_engine_remeasure_days': {'range': (0, 3650), 'null': 'refuse'},
        })}},
    },
    'deepspeed_config': {
        'base': {'checkpoint_io_data_drives': {'devices': ['/dev/nvme1n1']}, 'checkpoint_io_state_dir': '{tmp}/state',
                 'deepspeed_config_files': ['{tmp}/ds/ds_config.json'], 'deepspeed_config_use_gds': False},
        'validate_tags': ['deepspeed_config_validate'], 'cap': CAP,
        'entries': {'main': {'options': {
            'deepspeed_config_state': STATE_NULL,
            'deepspeed_config_files': {'elements': 'path', 'path': 'file', 'null': 'refuse',
                                       'extra': [{'kind': 'el_content_' + kind, 'value': ['{file:%s}' % kind]}
                                                 for kind in ('not_utf8', 'not_json', 'nan', 'dup_keys')]},
            'deepspeed_config_create': {'null': 'refuse'}, 'deepspeed_config_follow_symlinks': {'null': 'refuse'},
            'deepspeed_config_block_size': {'type': 'size', 'null': 'refuse',
                                            'extra': [{'kind': 'not_4k', 'value': '1000', 'limit': '4096'}]},
            'deepspeed_config_queue_depth': {'type': 'depth', 'range': (1, 65535),
                                             'accept': {'null': 'the one default depth (module_utils/plan/depth.py)'},
                                             'extra': [{'kind': 'auto_no_dir', 'value': 'auto',
                                                        'expect_in': 'deepspeed_config_checkpoint_dir'}]},
            'deepspeed_config_intra_op_parallelism': {'range': (1, 1024), 'null': 'refuse'},
            'deepspeed_config_single_submit': {'null': 'refuse'}, 'deepspeed_config_overlap_events': {'null': 'refuse'},
            'deepspeed_config_use_gds': {'type': 'raw', 'null': 'refuse',
                                         'extra': [{'kind': 'auto', 'value': 'auto', 'expect': 'accept',
                                                    'reason': 'documented'}]},
            'deepspeed_config_thread_key': STATE_NULL,
            'deepspeed_config_backup': {'null': 'refuse'},
            'deepspeed_config_python': {'type': 'path', 'path': 'exec',
                                        'accept': {'null': 'not known: the writer section is left alone (auto)'}},
            'deepspeed_config_writer': STATE_NULL,
            'deepspeed_config_writer_io_buffer_size': {'type': 'size', 'null': 'refuse',
                                                       'extra': [{'kind': 'auto', 'value': 'auto', 'expect': 'accept',
                                                                  'reason': 'documented'},
                                                                 {'kind': 'not_1k', 'value': '1536', 'limit': '1024'}]},
            'deepspeed_config_writer_block_size': {'type': 'size', 'null': 'refuse',
                                                   'extra': [{'kind': 'auto', 'value': 'auto', 'expect': 'accept',
                                                              'reason': 'documented'},
                                                             {'kind': 'aio', 'value': 'aio', 'expect': 'accept',
                                                              'reason': 'documented'},
                                                             {'kind': 'not_4k', 'value': '1000', 'limit': '4096'}]},
            'deepspeed_config_writer_io_buffer_double': {'null': 'refuse'},
            'deepspeed_config_remeasure': STATE_NULL,
            'deepspeed_config_remeasure_days': {'range': (0, 3650), 'null': 'refuse'},
            'deepspeed_config_writer_data_parallel': STATE_NULL,
            'deepspeed_config_writer_memlock': {'type': 'size', 'null': 'refuse',
                                                'extra': [{'kind': 'auto', 'value': 'auto', 'expect': 'accept',
                                                           'reason': 'documented'},
                                                          {'kind': 'unlimited', 'value': 'unlimited',
                                                           'expect': 'accept', 'reason': 'documented'}]},
            'deepspeed_config_ranks': {'range': (1, 1024), 'null': 'refuse'},
            'deepspeed_config_rank_drives': {'type': 'raw', 'null': 'refuse', 'accept': {},
                                             'extra': [{'kind': 'empty_list', 'value': []}]},
            'deepspeed_config_drives': {'accept': {'null': 'the selected data drives'}, 'refuse': {'empty': None}},
            'deepspeed_config_allow_mounted_by': ROLE_MOUNTS,
            'deepspeed_config_allow_held_by': ROLE_HOLDERS,
            'deepspeed_config_alignment': STATE_NULL,
            'deepspeed_config_saturation_factor': {'range': (1, 1024), 'null': 'refuse'},
            'deepspeed_config_checkpoint_dir': {'type': 'path', 'path': 'dir',
                                                'accept': {'null': 'only needed with queue_depth auto'}},
            'deepspeed_config_sweep_depths': {'elements': 'int', 'el_range': (1, 65535), 'null': 'refuse'},
            'deepspeed_config_sweep_runtime': {'range': (1, 3600), 'null': 'refuse'},
            'deepspeed_config_sweep_ramp': {'range': (0, 3600), 'null': 'refuse'},
            'deepspeed_config_sweep_size_per_point': {'type': 'size', 'null': 'refuse'},
            'deepspeed_config_sweep_scratch_size': {'type': 'size', 'null': 'refuse'},
            'deepspeed_config_sweep_fraction': {'range': (0, 1), 'null': 'refuse'},
            'deepspeed_config_sweep_repeats': {'range': (1, 20), 'null': 'refuse'},
            'deepspeed_config_sweep_poll': {'range': (0, 3600), 'null': 'refuse'},
            'deepspeed_config_sweep_plateau_points': {'range': (1, 1024), 'null': 'refuse'},
            'deepspeed_config_sweep_search': {'choices': ['physics', 'walk'], 'null': 'refuse'},
            'deepspeed_config_resweep': {'null': 'refuse'},
        }},
            # the thermal play's rewrite of this run's section: any depth in range needs deepspeed_config_result
            'backoff': {'base': {'deepspeed_config_backoff_depth': 4},
                        'options': {'deepspeed_config_backoff_depth': {'range': (1, 65535), 'null': 'refuse'}}},
        },
    },
    'thermal_validate': {
        'base': {'checkpoint_io_state_dir': '{tmp}/state', 'thermal_validate_dirs': ['{tmp}/adir']},
        'validate_tags': ['thermal_validate_validate'], 'cap': CAP,
        'entries': {'main': {'options': {
            'thermal_validate_state': STATE_NULL,
            'thermal_validate_dirs': {
                'elements': 'path', 'path': 'dir', 'null': 'refuse',
                'accept': {'empty': 'the default: the checkpoint volume the xfs role made',
                           'el_other_writable': 'the write goes in a root-only run directory made inside it',
                           'el_spaces': 'a legitimate name', 'el_nonascii': 'a legitimate name',
                           'el_newline': 'fio gets /proc/self/fd/N, never the path',
                           'el_colon': 'fio gets /proc/self/fd/N, never the path'}},
            'thermal_validate_ranks': {'range': (1, 1024), 'null': 'refuse'},
            'thermal_validate_queue_depth': {'range': (1, 65535), 'accept': {'null': 'the ds_config\'s depth'}},
            'thermal_validate_block_size': {'type': 'size', 'accept': {'null': 'the ds_config\'s block size'},
                                            'extra': [{'kind': 'not_4k', 'value': '1000', 'limit': '4096'}]},
            'thermal_validate_deepspeed_configs': {'elements': 'path', 'path': 'read', 'null': 'refuse',
                                                   'accept': {'empty': 'the default: depth 8, block 1M'}},
            'thermal_validate_ioengine': STATE_NULL,
            'thermal_validate_duration': {'range': (1, 86400), 'null': 'refuse'},
            'thermal_validate_max_size': {'type': 'size', 'null': 'refuse'},
            'thermal_validate_free_share': {'range': (0, 0.9), 'null': 'refuse'},
            'thermal_validate_interval': {'range': (0.2, 3600), 'null': 'refuse'},
            'thermal_validate_hot_margin_c': {'range': (0, 50), 'null': 'refuse'},
            'thermal_validate_approach_margin_c': {'range': (5, 100), 'null': 'refuse'},
            'thermal_validate_rise_c': {'range': (0, 50), 'null': 'refuse'},
            'thermal_validate_drop_fraction': {'range': (0, 1), 'null': 'refuse'},
            'thermal_validate_backoff': {'null': 'refuse'},
            'thermal_validate_remeasure': STATE_NULL,
            'thermal_validate_remeasure_days': {'range': (0, 3650), 'null': 'refuse'},
            'thermal_validate_failure': STATE_NULL,
            'thermal_validate_poll': {'range': (1, 600), 'null': 'refuse'},
            'thermal_validate_report_dir': {'null': 'refuse', 'accept': {'nonascii': 'a legitimate name'}},
        }}},
    },
    'gds': {
        'base': {'checkpoint_io_state_dir': '{tmp}/state', 'gds_checkpoint_dir': '{tmp}/ckpt',
                 'gds_cufile_path': '{tmp}/cufile.json', 'gds_modprobe_file': '{tmp}/modprobe/nvidia-fs.conf',
                 'gds_modules_load_file': '{tmp}/modules-load/nvidia-fs.conf'},
        'validate_tags': ['gds_validate'], 'cap': CAP,
        'entries': {'main': {'options': dict(shared(
            ['checkpoint_io_state_dir'], checkpoint_io_state_dir=dict(
                inputs_spec('checkpoint_io_state_dir'), wiring=WIRING_KINDS, wiring_count=1)), **{
            'gds_state': STATE_NULL,
            'gds_policy': STATE_NULL,
            'gds_mode': STATE_NULL,
            'gds_block_size': {'type': 'size', 'null': 'refuse',
                               'extra': [{'kind': 'not_4k', 'value': '1000', 'limit': '4096'},
                                         {'kind': 'above_max', 'value': '3G', 'limit': '2147483648'},
                                         {'kind': 'at_max', 'value': '2G', 'expect': 'accept', 'reason': '2 GiB'}]},
            'gds_ranks': {'range': (1, 1024), 'null': 'refuse'},
            'gds_queue_depth': {'range': (1, 65535), 'null': 'refuse'},
            'gds_checkpoint_dir': {'type': 'path', 'path': 'dir',
                                   'accept': {'null': 'documented: neither the filesystem checked nor the path proven',
                                              'other_writable': 'the proof writes in a root-only run directory '
                                                                'made inside it',
                                              'symlink': 'a symlink in a directory only root can write is followed '
                                                         '(gds_path_proof: scratch.open_dir)',
                                              'missing': 'documented: on a first run the xfs role makes it later; '
                                                         'the path is proven on the next run (said in gds_result)',
                                              'file': 'not a directory: the path is not proven, and gds_result '
                                                      'says so'}},
            'gds_manage_cufile': {'null': 'refuse'},
            'gds_cufile_path': dict(ROLE_PATH_FILE, accept={'missing': 'documented: created from NVIDIA\'s defaults '
                                                                       '(its directory exists)'}),
            'gds_poll_mode': {'accept': {'null': 'documented: keeps the file\'s value'}},
            'gds_allow_compat_mode': {'accept': {'null': 'documented: follows the policy'}},
            'gds_job_dirs': {'elements': 'path', 'path': 'read', 'null': 'refuse',
                             'accept': {'empty': 'the default: no job directory searched'}},
            'gds_training_user': {'accept': {'null': 'the default: no user\'s start-up files searched'},
                                  'extra': [{'kind': 'no_such_user', 'value': 'no-such-user-bad-input'}]},
            'gds_align_overrides': {'null': 'refuse'},
            'gds_install_packages': {'null': 'refuse',
                                     'extra': [{'kind': 'without_repo', 'value': True,
                                                'expect_in': 'gds_package_repo'}]},
            'gds_package_repo': {'accept': {'null': 'the default: no repository (nothing installed)'},
                                 'extra': [{'kind': 'no_url', 'value': {'name': 'cuda'}},
                                           {'kind': 'ftp_url', 'value': {'name': 'cuda', 'url': 'ftp://x/cuda'}},
                                           {'kind': 'name_space', 'value': {'name': 'cu da', 'url': 'https://x/'}},
                                           {'kind': 'unsigned', 'value': {'name': 'cuda', 'url': 'https://x/cuda'},
                                            'expect_in': 'key_url'},
                                           {'kind': 'ok', 'value': {'name': 'cuda', 'url': 'https://x/cuda',
                                                                    'key_url': 'https://x/cuda/key.asc'},
                                            'expect': 'accept', 'reason': 'a name, an https url and its key'},
                                           {'kind': 'local', 'value': {'name': 'cuda', 'url': 'file:///srv/cuda'},
                                            'expect': 'accept', 'reason': 'a local repository needs no key'}]},
            'gds_cuda_package_version': {'null': 'refuse',
                                         'with': {'gds_install_packages': True,
                                                  'gds_package_repo': {'name': 'cuda', 'url': 'file:///srv/cuda'}},
                                         'extra': [{'kind': 'dotted', 'value': '12.8'},
                                                   {'kind': 'space', 'value': '12-8 evil'}]},
            'gds_packages': {'null': 'refuse',
                             'with': {'gds_install_packages': True,
                                      'gds_package_repo': {'name': 'cuda', 'url': 'file:///srv/cuda'}},
                             'extra': [{'kind': 'no_mode', 'value': {'nvidia-fs': ['nvidia-gds-12-8']}},
                                       {'kind': 'not_list', 'value': {'nvidia-fs': 5, 'p2pdma': 5}}]},
            'gds_nvidia_fs_options': {'null': 'refuse', 'accept': {'empty': 'the default: no option'},
                                      'extra': [{'kind': 'bad_name', 'value': {'Rw-Stats': 1}},
                                                {'kind': 'value_newline',  # a second modprobe.d directive
                                                 'value': {'rw_stats_enabled': '1\ninstall nvidia_fs /bin/true'}},
                                                {'kind': 'value_space', 'value': {'rw_stats_enabled': '1 x=2'}},
                                                {'kind': 'ok', 'value': {'rw_stats_enabled': 1}, 'expect': 'accept',
                                                 'reason': 'a module parameter'}]},
            'gds_modprobe_file': dict(
                ROLE_PATH_FILE,
                extra=[{'kind': 'not_conf', 'value': '{tmp}/modprobe/x.rules', 'limit': '.conf'}]),
            'gds_modules_load_file': dict(
                ROLE_PATH_FILE,
                extra=[{'kind': 'not_conf', 'value': '{tmp}/modules-load/x.rules', 'limit': '.conf'}]),
            'gds_verify': {'null': 'refuse'},
            'gds_verify_size': {'type': 'size', 'null': 'refuse',
                                'extra': [{'kind': 'below_min', 'value': '512K', 'limit': '1M'},
                                          {'kind': 'above_max', 'value': '65G', 'limit': '64G'},
                                          {'kind': 'at_max', 'value': '64G', 'expect': 'accept',
                                           'reason': '64 GiB'}]},
            'gds_verify_gpu': {'range': (0, 1023), 'null': 'refuse',
                               'extra': [{'kind': 'above_max', 'value': 1024, 'limit': '1023'}]},
        })}},
    },
    'xfs': {
        'base': {'checkpoint_io_data_drives': {'devices': ['/dev/nvme1n1', '/dev/nvme2n1']},
                 'checkpoint_io_state_dir': '{tmp}/state', 'xfs_mdadm_conf': '{tmp}/mdadm.conf',
                 'xfs_mount_point': '{tmp}/mnt/checkpoints'},
        'validate_tags': ['xfs_validate'], 'cap': CAP,
        'entries': {
            'main': {'options': dict(DRIVES_DICT, **{
                'xfs_state': STATE_NULL,
                'xfs_force': {'type': 'raw', 'accept': {'null': 'no force'},
                              'extra': [{'kind': 'true', 'value': True, 'expect_in': 'xfs_force'},
                                        {'kind': 'unknown_drive', 'value': ['NO-SUCH-SERIAL']}]},
                'xfs_raid_level': STATE_NULL,
                'xfs_md_name': {'null': 'refuse', 'limit': {'huge': '32'},
                                'extra': [{'kind': 'past_limit', 'value': 'a' * 33, 'limit': '32'},
                                          {'kind': 'multibyte_past_limit', 'value': u'\u00e9' * 17, 'limit': '32'},
                                          {'kind': 'slash', 'value': 'a/b'}, {'kind': 'space', 'value': 'a b'}]},
                'xfs_md_metadata': STATE_NULL,
                'xfs_chunk': {'type': 'size', 'null': 'refuse',
                              'extra': [{'kind': 'not_power_of_two', 'value': '3M'},
                                        {'kind': 'below_min', 'value': '2K'}]},
                'xfs_mdadm_conf': ROLE_PATH_FILE,
                'xfs_update_initramfs': {'null': 'refuse'},
                'xfs_agcount': {'range': (2, None), 'accept': {'null': 'one per I/O queue'}},
                'xfs_log_device': {'type': 'path', 'path': 'file', 'accept': {'null': 'an internal log'},
                                   'extra': [{'kind': 'member', 'value': '/dev/nvme1n1'}]},
                'xfs_log_size': {'type': 'size', 'accept': {'null': 'mkfs.xfs chooses'}},
                'xfs_label': {'null': 'refuse', 'limit': {'huge': '12'},
                              'extra': [{'kind': 'at_limit', 'value': 'a' * 12, 'expect': 'accept',
                                         'reason': '12 bytes'},
                                        {'kind': 'past_limit', 'value': 'a' * 13, 'limit': '12'},
                                        {'kind': 'multibyte_past_limit', 'value': u'\u00e9' * 7, 'limit': '12'}]},
                'xfs_mount_point': {'null': 'refuse', 'extra': [{'kind': 'relative', 'value': 'mnt/ckpt'},
                                                                {'kind': 'os_dir', 'value': '/var'},
                                                                {'kind': 'root', 'value': '/'}]},
                'xfs_mount_options': {'refuse': {'empty': None}, 'null': 'refuse',
                                      'extra': [{'kind': 'el_removed', 'value': ['nobarrier']},
                                                {'kind': 'el_logbufs', 'value': ['logbufs=9']}]},
                'xfs_fstab_options': {'accept': {'empty': 'no fstab-only option'}, 'null': 'refuse',
                                      'extra': [{'kind': 'el_mount_option', 'value': ['noatime']}]},
                'xfs_checkpoint_dir': {'accept': {'null': 'the mount point'},
                                       'extra': [{'kind': 'outside', 'value': '/tmp/elsewhere'}]},
                'xfs_training_user': {'null': 'refuse',
                                      'extra': [{'kind': 'no_such_user', 'value': 'no-such-user-bi'}]},
                'xfs_training_group': {'accept': {'null': 'the user\'s primary group'},
                                       'extra': [{'kind': 'no_such_group', 'value': 'no-such-group-bi'}]},
                'xfs_checkpoint_dir_mode': {'null': 'refuse', 'extra': [{'kind': 'not_octal', 'value': '0999'},
                                                                        {'kind': 'world_writable', 'value': '0777'}]},
            })},
            'own_volume': {'options': {'xfs_checkpoint_dir': {'type': 'path', 'path': 'read', 'null': 'accept'}}},
        },
    },
    'preflight': {
        'base': {'checkpoint_io_state_dir': '{tmp}/state'},
        'entries': {
            'main': {'options': shared(_preflight_names())},
            'release': {'preflight_first': True, 'options': shared(['checkpoint_io_state_dir'])},
            'renew': {'preflight_first': True, 'options': shared(['checkpoint_io_state_dir', 'checkpoint_io_lock_ttl'])},
        },
    },
    'fleet_report': {
        # the cache source: every task runs on the controller (delegate_to: localhost), no host is contacted
        'base': {'fleet_report_source': 'cache', 'fleet_report_cache_dir': '{tmp}/adir',
                 'fleet_report_dir': '{tmp}/report'},
        'validate_tags': ['fleet_report_validate'], 'cap': CAP,
        'entries': {'main': {'options': {
            'fleet_report_source': {},
            'fleet_report_cache_dir': {'path': 'read', 'null': 'refuse',
                                       'refuse': {'missing': None, 'file': None, 'long_name': None,
                                                  'long_path': None}},
            'fleet_report_cache_prefix': {'text': True, 'accept': {'null': 'no prefix'}},
            'fleet_report_dir': {'path': 'dir', 'null': 'refuse',
                                 'accept': {'missing': 'made (0755) like any report directory',
                                            'relative': 'under the directory ansible-playbook runs in'}},
            'fleet_report_name': {'limit': {'huge': '100'}, 'accept': {'nonascii': None},
                                  'extra': [{'kind': 'slash', 'value': 'a/b'}, {'kind': 'space', 'value': 'a b'}]},
            'fleet_report_title': {'text': True, 'accept': {'null': 'the module\'s default title'}},
            'fleet_report_previous': {'path': 'read', 'accept': {'null': 'no previous report',
                                                                 'missing': 'no previous report'}},
            'fleet_report_verify_dir': {'path': 'read', 'accept': {'null': 'the verify directory beside the report'},
                                        'refuse': {'missing': None, 'file': None, 'long_name': None,
                                                   'long_path': None}},
            'fleet_report_compression_dir': {'path': 'read',
                                             'accept': {'null': 'the compression directory beside the report'},
                                             'refuse': {'missing': None, 'file': None, 'long_name': None,
                                                        'long_path': None}},
            'fleet_report_run_dir': {'path': 'read', 'accept': {'null': 'the run directory beside the report'},
                                     'refuse': {'missing': None, 'file': None, 'long_name': None, 'long_path': None}},
            'fleet_report_targets': {'type': 'dict', 'accept': {'empty': 'the role defaults'}},
            'fleet_report_plan': {'type': 'dict', 'accept': {'empty': 'no plan'},
                                  'extra': [{'kind': 'unknown_preset', 'value': {'checkpoint': 'llama3-9b',
                                             'ranks_per_node': 8, 'window_s': 60}, 'expect_in': 'llama3-9b'}]},
            'fleet_report_stale_hours': {'range': (0, 87600), 'null': 'refuse'},
            'fleet_report_outlier_fraction': {'range': (0, 1), 'null': 'refuse'},
        }}},
    },
    'nvmeof_rdma': {
        # no targets: past the validation the role does nothing (the lab's nvmeof_rdma scenario connects for real)
        'base': {'checkpoint_io_state_dir': '{tmp}/state', 'nvmeof_rdma_udev_rule': '{tmp}/udev/71-x.rules',
                 'nvmeof_rdma_dropin': '{tmp}/nvme/60-x.conf'},
        'validate_tags': ['nvmeof_rdma_validate'], 'cap': CAP,
        'entries': {'main': {'options': {
            'nvmeof_rdma_state': STATE_NULL,
            'nvmeof_rdma_targets': {'null': 'refuse', 'accept': {'empty': 'the default: no targets, nothing done'},
                                    'extra': [{'kind': 'transport_fc', 'value': [dict(FABRIC_TARGET, transport='fc')],
                                               'expect_in': "'fc' is not a fabric transport"},
                                              {'kind': 'queue_size_2000',
                                               'value': [dict(FABRIC_TARGET, queue_size=2000)],
                                               'expect_in': 'give 16 to 1024'},
                                              {'kind': 'bad_nqn', 'value': [dict(FABRIC_TARGET, nqn='nqn.bad')],
                                               'expect_in': "'nqn.bad' is not an NQN"}]},
            'nvmeof_rdma_bandwidth_mib_s': {'range': (1, 10000000), 'null': 'refuse'},
            'nvmeof_rdma_device_latency_ms': {'range': (0, 60000), 'null': 'refuse'},
            'nvmeof_rdma_block_size_kib': {'range': (4, 65536), 'null': 'refuse'},
            'nvmeof_rdma_rtt_samples': {'range': (1, 100), 'null': 'refuse'},
            'nvmeof_rdma_ctrl_loss_tmo': {'range': (-1, 604800), 'null': 'refuse'},
            'nvmeof_rdma_reconnect_delay': {'range': (1, 3600), 'null': 'refuse'},
            'nvmeof_rdma_keep_alive_tmo': {'range': (1, 3600), 'null': 'refuse'},
            'nvmeof_rdma_persist': {'null': 'refuse'},
            'nvmeof_rdma_dropin': ROLE_PATH_FILE,
            'nvmeof_rdma_identity': STATE_NULL,
            'nvmeof_rdma_iopolicy': STATE_NULL,
            'nvmeof_rdma_udev_rule': ROLE_PATH_FILE,
            'nvmeof_rdma_mtu': {'range': (0, 9216), 'null': 'refuse',
                                'extra': [{'kind': 'below_ipv6_min', 'value': 1000, 'limit': '1280'}]},
            'nvmeof_rdma_pfc_priority': {'range': (0, 7), 'null': 'refuse'},
            'nvmeof_rdma_force': {'elements': 'str', 'null': 'refuse',
                                  'accept': {'empty': 'the default: nothing forced'}},
        }}},
    },
    'verify_checkpoint_write': {
        'base': {'checkpoint_io_state_dir': '{tmp}/state', 'checkpoint_io_verify_dirs': ['{tmp}/ckpt']},
        'entries': {
            'main': {'options': shared([
                'checkpoint_io_deepspeed_configs', 'checkpoint_io_alignment', 'checkpoint_io_verify_dirs',
                'checkpoint_io_verify_ranks', 'checkpoint_io_verify_total_size', 'checkpoint_io_verify_free_share',
                'checkpoint_io_verify_repeats', 'checkpoint_io_verify_ioengine', 'checkpoint_io_verify_engine',
                'checkpoint_io_verify_restore', 'checkpoint_io_verify_timeout', 'checkpoint_io_verify_poll',
                'checkpoint_io_verify_min_fraction', 'checkpoint_io_deepspeed_python',
                'checkpoint_io_report_dir', 'checkpoint_io_state_dir', 'checkpoint_io_remeasure',
                'checkpoint_io_remeasure_days'])},
            # the playbooks run these two only outside check mode: their argument spec and the preflight role run
            'baseline': {'preflight_first': True, 'argspec_only': True, 'options': shared([
                'checkpoint_io_data_drives', 'checkpoint_io_xfs', 'checkpoint_io_deepspeed_configs',
                'checkpoint_io_verify_dirs', 'checkpoint_io_verify_ranks', 'checkpoint_io_verify_total_size',
                'checkpoint_io_verify_free_share', 'checkpoint_io_verify_repeats', 'checkpoint_io_verify_ioengine',
                'checkpoint_io_verify_restore', 'checkpoint_io_verify_timeout', 'checkpoint_io_verify_poll',
                'checkpoint_io_state_dir'])},
            'settings_before': {'preflight_first': True, 'argspec_only': True,
                                'options': shared(['checkpoint_io_state_dir'])},
        },
    },
}

# ------------------------------------------------------------------------------------------------------------------
# Action plugins: the arguments they read themselves (their modules' options are swept in MODULES).
ACTIONS = {
    'checkpoint_io_lock': {
        'base': {'state': 'acquired', 'wait': 0, 'state_dir': '{tmp}/state'},
        'options': {
            'owner': {'type': 'dict', 'accept': {'empty': 'no details', 'null': 'the action fills it in'},
                      'extra': [{'kind': 'int', 'value': 5},
                                {'kind': 'nested', 'value': {'user': ['x']}, 'expect': 'accept',
                                 'reason': 'details are free'}]},
            'run_id': {'type': 'text', 'refuse': {'empty': None},
                       'accept': {'null': 'the action names the run'}},
            'take_over': {'type': 'text', 'accept': {'empty': 'no lease to take over', 'null': 'unset'}},
            'state': {'type': 'choice', 'choices': ['acquired', 'released'],
                      'accept': {'null': 'the default (acquired)'}},
        },
    },
    # the wait loop's switch (a value that is no boolean waits once; the module refuses it, naming it)
    'checkpoint_job': {
        'base': {'job_id': 'bad-input.1', 'wait': 0, 'job_store': '{tmp}/jobs'},
        'options': {'until_finished': {'type': 'bool'}},
    },
    'checkpoint_io_facts': {
        'base': {'gather_subset': ['state'], 'state_dir': '{tmp}/state'},
        'options': {'merge': {'type': 'bool'}},
    },
    # the plan: decided from a state-only gather of this machine (no drives: the plan's problems say so)
    'checkpoint_io_plan': {
        'base': {'inputs': {'checkpoint_io_report_dir': '{tmp}/reports'}, 'report_dir': '{tmp}/reports',
                 'gather': {'gather_subset': ['state'], 'state_dir': '{tmp}/state'}},
        # check mode writes <report_dir>/plan/<host>.json (what a check run is for): each case by its own file
        'check_mode_output': 'reports/plan',
        'options': {
            'inputs': {'type': 'dict', 'null': 'refuse', 'accept': {'empty': 'every input at its default'}},
            'settings': {'type': 'dict', 'accept': {'empty': 'the roles\' defaults', 'null': 'the roles\' defaults'}},
            'gather': {'type': 'dict', 'accept': {'empty': 'the whole gather', 'null': 'the whole gather'}},
            'report_dir': {'type': 'text', 'accept': {'null': 'checkpoint_io_report_dir of the inputs',
                                                      'empty': 'checkpoint_io_report_dir of the inputs',
                                                      'nonascii': 'a directory name', 'newline': 'a directory name'}},
            'record': {'type': 'bool'},
        },
    },
}


# ------------------------------------------------------------------------------------------------------------------
# Known failures of files owned elsewhere, measured against the shared working tree at the end of the issue 12
# sweep: each runs as xfail(strict=True) and turns into a failure once fixed (then delete its line). Owners: (A)
# checkpoint_write, queue_depth_sweep, checkpoint_job, engine_verify; (B) md_array, xfs_format, the xfs role;
# (C) deepspeed_aio, inputs.py, the io_uring_engine and deepspeed_config roles.
KNOWN_FAILURES = {
    'module:md_array/identities/wrong_serial':
        'md_array.py (B): refused naming identities[0] but not showing the serial: the fake /dev of these cases '
        'has no block devices, so the member fails "is not a block device" before its serial is compared '
        '(tests/integration/plugins/modules/test_md_array.py checks the wrong-drive message on loop devices)',
}
KNOWN.update(KNOWN_FAILURES)
