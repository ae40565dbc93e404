# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkpoint write/read bandwidth with DeepSpeed FastPersist (deepspeed.io.FastFileWriter), N ranks at once, by
hand, without Ansible: the fastpersist_write module's own script (plugins/module_utils/deepspeed/fastpersist.py) in
run directories this bench makes (docs/deepspeed-fastpersist.md):

    TORCH_EXTENSIONS_DIR=/var/cache/ds_ops .venv/bin/python tests/bench/ds_fastpersist.py < run.json

stdin: {"directories": [...], "ranks": N, "total_bytes": B, "aio": {...}, "writer": {...}, "read_back": bool,
"label": str}, or "ds_config": a path instead of aio/writer; optional "path" (fast_file_writer |
checkpoint_writer_factory), "read_buffer_size", "torch_extensions_dir". stdout: the script's JSON with "label".
Exit: as the script's (0 ok, 1 a rank failed, 2 bad input, 3 DeepSpeed or async_io unusable).
"""
import json
import os
import secrets
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'collections'))

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.deepspeed import fastpersist  # noqa: E402


def main():
    out = os.fdopen(os.dup(1), 'w')  # the real stdout, for the JSON only
    os.dup2(2, 1)
    try:
        cfg = json.loads(sys.stdin.read())
        dirs = [os.path.abspath(d) for d in cfg['directories']]
        ranks, total = int(cfg['ranks']), int(cfg['total_bytes'])
        if not dirs or ranks < 1 or total < ranks:
            raise ValueError('need a directory, ranks >= 1, total_bytes >= ranks')
    except (ValueError, KeyError, TypeError) as exc:
        sys.stderr.write('ds_fastpersist: bad input JSON: %s\n' % exc)
        return fastpersist.EXIT_INPUT
    # a 0700 run directory in each directory, made (never reused), removed with what is in it
    name = '.ds_fastpersist.%d.%s' % (os.getpid(), secrets.token_hex(4))
    made = []
    try:
        for directory in sorted(set(dirs[r % len(dirs)] for r in range(ranks))):
            os.mkdir(os.path.join(directory, name), 0o700)
            made.append(os.path.join(directory, name))
        cfg = dict(cfg, files=[os.path.join(dirs[r % len(dirs)], name, 'rank%05d.pt' % r) for r in range(ranks)],
                   bytes_per_rank=total // ranks)
        code, result = fastpersist.run(cfg)
    finally:
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
    result['label'] = cfg.get('label')
    out.write(json.dumps(result, indent=1, sort_keys=True, default=str) + '\n')
    out.flush()
    return code


if __name__ == '__main__':
    sys.exit(main())
