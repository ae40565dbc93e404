# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compression readiness reads only inside its roots, even when a directory is swapped while it reads (issue 31,
finding 10)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import checkpoint_formats


def test_a_directory_swapped_for_a_link_after_the_walk_is_not_followed(tmp_path):
    root = tmp_path / 'ckpt'
    (root / 'step').mkdir(parents=True)
    (root / 'step' / 'rank0.bin').write_bytes(b'\0' * 64)
    outside = tmp_path / 'secret' / 'step'
    outside.mkdir(parents=True)
    (outside / 'rank0.bin').write_bytes(b'root only\n')
    layout, found, refused = checkpoint_formats.find_files(str(root), [str(root)])
    assert layout == 'directory' and [rel for rel, _real in found] == ['step/rank0.bin'] and not refused
    real = found[0][1]
    fd, size = checkpoint_formats.open_regular(real)
    os.close(fd)
    assert size == 64
    # the user who owns ckpt/ swaps step/ for a link out of the roots between the walk and the open
    os.rename(str(root / 'step'), str(root / 'old'))
    os.symlink(str(outside), str(root / 'step'))
    with pytest.raises(checkpoint_formats.CheckpointError, match='not followed'):
        checkpoint_formats.open_regular(real)


def test_the_last_component_as_a_link_is_refused_naming_it(tmp_path):
    (tmp_path / 'target').write_bytes(b'x')
    os.symlink(str(tmp_path / 'target'), str(tmp_path / 'link'))
    with pytest.raises(checkpoint_formats.CheckpointError, match='is a symlink: not followed'):
        checkpoint_formats.open_regular(str(tmp_path / 'link'))
