"""checkpoint_compression's measurement next to ZipNN on the same files: ratios and throughputs side by side.

Makes real checkpoints with torch (tests/unit/checkpoints.py: an MLP trained a few Adam steps, BF16 weights and FP32
Adam state as safetensors, two consecutive steps), then for each file, REPS times: the module's own measurement
(module_utils/compression/compression.measure on the file, every byte sampled) and ZipNN's compress() of the same tensor bytes
(the safetensors data section), and the same for the XOR of the two steps' weights (the delta). Prints the ratios, the
throughput medians with their spread (min-max over the repeats) and how close the module's BF16 estimates are to the
ratio ZipNN reaches.

ZipNN is installed for the benchmark only, never by it (it pulls in its own torch):

    python3 -m venv --system-site-packages /tmp/zipnn-venv && /tmp/zipnn-venv/bin/pip install zipnn numpy zstandard
    /tmp/zipnn-venv/bin/python tests/bench/compression_vs_zipnn.py [--hidden 2048] [--reps 3] [--threads N]

Throughput is MiB/s of checkpoint bytes over wall time with --threads threads for both (default: every core this
process may use); it depends on the machine, the ratios do not.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'collections'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'unit'))

from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.compression import compression  # noqa: E402
from checkpoints import make_checkpoints  # noqa: E402

MIB = 2 ** 20
DTYPES = {'bf16': 'bfloat16', 'fp32': 'float32'}


def tensor_bytes(path):
    """The data section of a safetensors file (the tensors' bytes, in the file's order)."""
    fd, size = compression.open_regular(path)
    try:
        tensors = compression.parse_safetensors(fd, size, path)
        return b''.join(compression._pread(fd, t['length'], t['offset']) for t in tensors)  # pylint: disable=W0212
    finally:
        os.close(fd)


def zipnn_run(zipnn_cls, data, cls, threads, reps):
    """(ratio, [MiB/s per repeat]) of ZipNN compressing ``data`` of ``cls``; the round trip checked once (ZipNN
    0.5.4's compress() reorders a byte input in place: it is given a copy)."""
    coder = zipnn_cls(input_format='byte', bytearray_dtype=DTYPES[cls], threads=threads)
    speeds, size = [], None
    for _rep in range(reps):
        work = bytearray(data)   # ZipNN's byte input is reordered in place: each repeat gets its own copy
        start = time.perf_counter()
        packed = coder.compress(work)
        speeds.append(len(data) / MIB / (time.perf_counter() - start))
        size = len(packed)
    assert bytes(coder.decompress(packed)) == data, 'ZipNN round trip differs'
    return len(data) / size, speeds


def module_run(paths, previous, cls, threads, reps, codecs):
    """({codec: (ratio, [MiB/s])}, bound ratio, {stream: entropy}) of the module on the file(s)."""
    speeds, last = dict((c, []) for c in codecs), None
    for _rep in range(reps):
        result = compression.measure(paths, [os.path.dirname(p) for p in paths + (previous or [])], 2 ** 30, 3600,
                                     codecs, threads, previous=previous)
        last = (result['delta'] or {}).get('classes', {}).get(cls) if previous else result['classes'][cls]
        for codec in codecs:
            speeds[codec].append(last['codecs'][codec]['pool_mib_s'])
    return (dict((c, (last['codecs'][c]['ratio'], speeds[c])) for c in codecs), last['bound_ratio'],
            dict((name, s['entropy_bits']) for name, s in last['streams'].items()))


def spread(values):
    return '%8.1f (%.1f-%.1f)' % (statistics.median(values), min(values), max(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--hidden', type=int, default=2048, help='MLP width (2048: 9 MiB of BF16 weights)')
    parser.add_argument('--reps', type=int, default=3)
    parser.add_argument('--threads', type=int, default=0, help='0: every core this process may use')
    args = parser.parse_args()
    if args.reps < 3:
        parser.error('--reps %d: at least 3 repeats, for a spread' % args.reps)
    try:
        from zipnn import ZipNN
    except ImportError as exc:
        raise SystemExit('zipnn is not importable (%s): install it in a venv of its own, see this file\'s '
                         'docstring' % exc)
    threads = compression.usable_cores(args.threads)[1]
    codecs = [c for c in compression.CODECS if compression.available_codecs().get(c)]
    with tempfile.TemporaryDirectory(prefix='compression-bench-') as tmp:
        ckpts = make_checkpoints(tmp, hidden=args.hidden)
        rows, closeness = [], []
        cases = [('BF16 weights', 'bf16', [ckpts[4]['weights']], None),
                 ('FP32 Adam state', 'fp32', [ckpts[4]['state']], None),
                 ('BF16 weights, XOR delta', 'bf16', [ckpts[4]['weights']], [ckpts[3]['weights']])]
        for label, cls, paths, previous in cases:
            data = tensor_bytes(paths[0])
            if previous:
                data = compression.xor(data, tensor_bytes(previous[0]))
            z_ratio, z_speeds = zipnn_run(ZipNN, data, cls, threads, args.reps)
            measured, bound, entropies = module_run(paths, previous, cls, threads, args.reps, codecs)
            rows.append((label, len(data), 'ZipNN', z_ratio, spread(z_speeds)))
            rows.append((label, len(data), 'module bound (8/H)', bound, ''))
            for codec in codecs:
                ratio, speeds = measured[codec]
                rows.append((label, len(data), 'module %s' % codec, ratio, spread(speeds)))
                if cls == 'bf16':
                    closeness.append((label, codec, ratio, z_ratio, 100.0 * (ratio - z_ratio) / z_ratio))
            closeness.append((label, '8/H bound', bound, z_ratio, 100.0 * (bound - z_ratio) / z_ratio)
                             if cls == 'bf16' else None)
            shown = ', '.join('%s %.3f' % kv for kv in sorted(entropies.items()))
            print('%s: stream entropies (bits/byte) %s' % (label, shown))
    print()
    print('threads %d, %d repeats; MiB/s = median (min-max) of checkpoint bytes per wall second' % (threads, args.reps))
    print('| file | MiB | tool | ratio | MiB/s |')
    print('| --- | ---: | --- | ---: | ---: |')
    for label, size, tool, ratio, speed in rows:
        print('| %s | %.1f | %s | %.4f | %s |' % (label, size / MIB, tool, ratio, speed.strip()))
    print()
    print('| BF16 file | module estimate | estimate | ZipNN ratio | difference |')
    print('| --- | --- | ---: | ---: | ---: |')
    for entry in [c for c in closeness if c]:
        print('| %s | %s | %.4f | %.4f | %+.1f%% |' % entry)


if __name__ == '__main__':
    main()
