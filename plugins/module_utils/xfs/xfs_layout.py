# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checkpoint volume's sizes and XFS allocation groups: md chunk and headroom, the array's size, the AG count
and size mkfs.xfs accepts for the stripe. Pure arithmetic, used by :mod:`xfs_plan`."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.common.units import parse_size


KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
TIB = 1024 * GIB

BLOCK_SIZE = 4096                     # XFS data block size the plan assumes (mkfs.xfs default)
CHUNK_MIN = 4 * KIB                   # md and XFS: a stripe unit is at least one page
STRIPE_WIDTH_MAX = 2 * GIB - 1        # mkfs.xfs: "stripe width (2147483648) is too large"
XFS_MIN_AGCOUNT = 2                   # mkfs.xfs: "Filesystem must have at least 2 superblocks"
XFS_MAX_AGCOUNT = 2 ** 32 - 1         # xfs_agnumber_t
XFS_AG_MIN_BYTES = 16 * MIB           # XFS_AG_MIN_BYTES
XFS_AG_MAX_BLOCKS = (TIB - 1) // BLOCK_SIZE   # XFS_AG_MAX_BLOCKS for 4 KiB blocks (1 TiB - 1 block)
INTERNAL_LOG_AG_MIN_BYTES = 128 * MIB  # 64 MiB minimum log (xfsprogs >= 5.15) + AG headers, with headroom


# ---------------------------------------------------------------- sizes
def is_power_of_two(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0 and value & (value - 1) == 0


def human_bytes(value):
    """``1048576`` -> ``'1 MiB (1048576 bytes)'``; exact binary units only."""
    if not isinstance(value, int) or isinstance(value, bool):
        return repr(value)
    for unit, size in (('TiB', TIB), ('GiB', GIB), ('MiB', MIB), ('KiB', KIB)):
        if value >= size and value % size == 0:
            return '%d %s (%d bytes)' % (value // size, unit, value)
    return '%d bytes' % value


def parse_chunk(value, name='xfs_chunk'):
    """The md chunk (= XFS stripe unit) in bytes: a power of two, at least 4 KiB.

    Raises ValueError naming ``name``, the value and the limit.
    """
    size = parse_size(value, name)
    if size < CHUNK_MIN:
        raise ValueError('%s: %r is %s, below the minimum %s (one page): md and XFS stripe units are at '
                         'least 4K' % (name, value, human_bytes(size), human_bytes(CHUNK_MIN)))
    if not is_power_of_two(size):
        raise ValueError('%s: %r is %s, not a power of two: use 64K, 128K, 256K, 512K, 1M, 2M, 4M...'
                         % (name, value, human_bytes(size)))
    return size


def md_kib(chunk_bytes):
    """The chunk as mdadm's ``--chunk`` argument (``1024K``)."""
    return '%dK' % (chunk_bytes // KIB)


def md_headroom_bytes(member_bytes):
    """mdadm 4.x (metadata 1.1/1.2) data offset headroom: 128 MiB, halved while
    1024 x headroom exceeds the member, never below 1 MiB."""
    headroom = 128 * MIB
    while headroom * 1024 > member_bytes and headroom > MIB:
        headroom //= 2
    return headroom


def estimate_md_size(member_sizes, chunk_bytes):
    """Usable size of an md RAID0 before it exists: each member minus the
    data offset (headroom + 1 MiB of superblock and bad-block log), rounded
    down to whole chunks. Only for planning before the array exists (check
    mode); the real size is read from the array once it is made."""
    total = 0
    for size in member_sizes:
        usable = size - md_headroom_bytes(size) - MIB
        total += max(0, usable // chunk_bytes * chunk_bytes)
    return total


# ---------------------------------------------------------------- allocation groups
def ag_bounds(size_bytes, internal_log=True):
    """(lowest, highest) agcount XFS allows on ``size_bytes`` with this role's AG size limits."""
    dblocks = size_bytes // BLOCK_SIZE
    ag_min = (INTERNAL_LOG_AG_MIN_BYTES if internal_log else XFS_AG_MIN_BYTES) // BLOCK_SIZE
    low = max(XFS_MIN_AGCOUNT, -(-dblocks // XFS_AG_MAX_BLOCKS))
    high = dblocks // ag_min
    return low, high


def mkfs_agcount(dblocks, agsize):
    """The agcount mkfs.xfs makes for ``-d agsize``: a last partial AG smaller
    than 16 MiB is dropped (and the filesystem shortened), a larger one kept."""
    count, rest = divmod(dblocks, agsize)
    if rest >= XFS_AG_MIN_BYTES // BLOCK_SIZE:
        count += 1
    return count


def choose_agsize(dblocks, agcount, su_blocks=0, sw=1, internal_log=True):
    """AG size in blocks giving exactly ``agcount`` AGs, or None.

    Aligned to the stripe unit, never a multiple of the stripe width when there
    is more than one member (else every AG header lands on the same member),
    within the AG size limits (the last AG may be partial, down to XFS's 16 MiB,
    except when it holds the internal log). Larger candidates come first, so
    nothing of the device is dropped when possible.
    """
    if agcount < 1 or dblocks < 1:
        return None
    ag_min = (INTERNAL_LOG_AG_MIN_BYTES if internal_log else XFS_AG_MIN_BYTES) // BLOCK_SIZE
    base = -(-dblocks // agcount)
    if su_blocks:
        up = -(-base // su_blocks) * su_blocks
        down = base // su_blocks * su_blocks
        steps = 2 * max(sw, 1) + 2
        candidates = [up + k * su_blocks for k in range(steps)] + [down - k * su_blocks for k in range(steps)]
    else:
        candidates = [base, base - 1, base + 1]
    for agsize in candidates:
        if agsize < ag_min or agsize > XFS_AG_MAX_BLOCKS:
            continue
        if su_blocks and sw > 1 and agsize % (su_blocks * sw) == 0:
            continue
        if mkfs_agcount(dblocks, agsize) != agcount:
            continue
        rest = dblocks % agsize
        if internal_log and agcount == 2 and rest and rest < ag_min:
            continue  # the internal log goes in AG agcount / 2: with two AGs, the partial last one
        return agsize
    return None


def auto_agcount(members, queues_per_drive, low, high):
    """``members x queues_per_drive`` brought within [low, high], a multiple of
    ``members`` where the bounds allow it."""
    wanted = members * queues_per_drive
    if wanted > high:
        wanted = high - high % members if high - high % members >= max(low, 1) else high
    if wanted < low:
        rounded = -(-low // members) * members
        wanted = rounded if rounded <= high else low
    return wanted


def auto_layout(members, queues_per_drive, low, high, dblocks, su_blocks=0, sw=1, internal_log=True):
    """(agcount, agsize_blocks) for the automatic rule: :func:`auto_agcount`, or
    the nearest count (multiples of ``members`` first) that mkfs.xfs lays out
    exactly with the stripe alignment. (None, None) when there is none."""
    wanted = auto_agcount(members, queues_per_drive, low, high)
    counts = sorted(range(max(low, wanted - 64), min(high, wanted + 64) + 1),
                    key=lambda n: (n % members != 0, abs(n - wanted), -n))
    for count in counts:
        agsize = choose_agsize(dblocks, count, su_blocks, sw, internal_log)
        if agsize is not None:
            return count, agsize
    return None, None
