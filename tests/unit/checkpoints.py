"""Real checkpoints for the compression tests and benchmark, made here with the CPU torch the tests install: a small
MLP trained a few Adam steps, saved at two consecutive steps as torch.save files (BF16 weights, FP32 Adam state),
safetensors files (the format written here: an 8-byte little-endian header length, a JSON header, the bytes) and a
DeepSpeed ZeRO-shaped directory (global_step<N>/mp_rank_00_model_states.pt, zero_pp_rank_0_mp_rank_00_optim_states.pt).

The checkpoints are made in a child interpreter (``python checkpoints.py DIR HIDDEN``): ansible-core replaces
sys.intern when its module_utils are imported, and torch.optim (torch._dynamo) refuses to import after that. The child
writes manifest.json (the paths, the bytes of each class of storages as torch.load sees them) and, per step, the
tensors' bits as numpy arrays (weights_u16.npz, state_f32.npz) for the tests' own arithmetic.
"""
import importlib.util
import json
import os
import struct
import subprocess
import sys

import pytest

REQUIRE = os.environ.get('CHECKPOINT_IO_REQUIRE_DEEPSPEED') == '1'


def import_torch():
    """torch, or a skip (a failure naming lab/bootstrap.sh --tests where CHECKPOINT_IO_REQUIRE_DEEPSPEED=1)."""
    try:
        import torch
    except ImportError as exc:
        if REQUIRE:
            pytest.fail('CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 but torch cannot be imported (%s): lab/bootstrap.sh --tests '
                        'installs it' % exc, pytrace=False)
        pytest.skip('torch is not importable (%s); set CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 to fail instead' % exc)
    return torch


def import_numpy():
    """numpy (installed with torch and deepspeed by lab/bootstrap.sh --tests), or a skip of the calling test module (a
    failure where CHECKPOINT_IO_REQUIRE_DEEPSPEED=1)."""
    try:
        import numpy
    except ImportError as exc:
        if REQUIRE:
            pytest.fail('CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 but numpy cannot be imported (%s): lab/bootstrap.sh --tests '
                        'installs it with torch and deepspeed' % exc, pytrace=False)
        pytest.skip('numpy is not importable (%s); set CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 to fail instead' % exc,
                    allow_module_level=True)
    return numpy


SAFETENSORS_DTYPE = {'bfloat16': 'BF16', 'float16': 'F16', 'float32': 'F32', 'int64': 'I64', 'float64': 'F64'}


def write_safetensors(path, tensors):
    """A safetensors file of {name: tensor} (contiguous, little-endian bytes, in name order)."""
    import torch
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        tensor = tensors[name].detach().contiguous()
        data = tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b''
        header[name] = {'dtype': SAFETENSORS_DTYPE[str(tensor.dtype).rsplit('.', maxsplit=1)[-1]], 'shape': list(tensor.shape),
                        'data_offsets': [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as handle:
        handle.write(struct.pack('<Q', len(text)) + text + b''.join(blobs))


def require_torch():
    """Skip (or fail where CHECKPOINT_IO_REQUIRE_DEEPSPEED=1) when torch is not installed, without importing it."""
    if importlib.util.find_spec('torch') is None:
        import_torch()


def make_checkpoints(directory, hidden=512, steps=(3, 4), seed=0):
    """{step: {'torch', 'weights', 'state', 'deepspeed' (paths), 'torch_bytes' {class: bytes of the storages},
    'tensors': {'bf16': {name: uint16 array}, 'fp32': {name: float32 array}}}} made by a child interpreter."""
    import numpy
    require_torch()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(directory), str(hidden), str(seed)]
                          + [str(step) for step in steps], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, 'making the checkpoints failed: %s' % (proc.stdout + proc.stderr)[-3000:]
    with open(os.path.join(str(directory), 'manifest.json')) as handle:
        out = dict((int(step), entry) for step, entry in json.load(handle).items())
    for entry in out.values():
        base = os.path.dirname(entry['torch'])
        with numpy.load(os.path.join(base, 'weights_u16.npz')) as bf16, \
                numpy.load(os.path.join(base, 'state_f32.npz')) as fp32:
            entry['tensors'] = {'bf16': dict((k, bf16[k]) for k in bf16.files),
                                'fp32': dict((k, fp32[k]) for k in fp32.files)}
    return out


def _storage_bytes(torch, saved):
    """{class: bytes} of the distinct storages of a torch.load result."""
    seen, out, stack = set(), {}, [saved]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, torch.Tensor):
            storage = item.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                cls = {torch.bfloat16: 'bf16', torch.float32: 'fp32'}.get(item.dtype, 'opaque')
                out[cls] = out.get(cls, 0) + storage.nbytes()
    return out


def _make(directory, hidden, steps, seed):
    import numpy
    import torch
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(128, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, hidden),
                                torch.nn.GELU(), torch.nn.Linear(hidden, 128))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    out = {}
    for step in range(1, max(steps) + 1):
        batch = torch.randn(64, 128)
        loss = ((model(batch) - batch.flip(1)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step not in steps:
            continue
        weights = dict((name, value.detach().to(torch.bfloat16)) for name, value in model.state_dict().items())
        state = {}
        for index, (name, _param) in enumerate(model.named_parameters()):
            for key in ('exp_avg', 'exp_avg_sq'):
                state['%s.%s' % (name, key)] = optimizer.state_dict()['state'][index][key].clone()
        base = os.path.join(str(directory), 'step%d' % step)
        os.makedirs(base)
        entry = {'torch': os.path.join(base, 'checkpoint.pt'), 'weights': os.path.join(base, 'model.safetensors'),
                 'state': os.path.join(base, 'optimizer.safetensors'),
                 'deepspeed': os.path.join(base, 'ds', 'global_step%d' % step),
                 }
        torch.save({'model': weights, 'optimizer': optimizer.state_dict(), 'step': step}, entry['torch'])
        write_safetensors(entry['weights'], weights)
        write_safetensors(entry['state'], state)
        os.makedirs(entry['deepspeed'])
        torch.save({'module': weights}, os.path.join(entry['deepspeed'], 'mp_rank_00_model_states.pt'))
        torch.save({'optimizer_state_dict': {'state': state}},
                   os.path.join(entry['deepspeed'], 'zero_pp_rank_0_mp_rank_00_optim_states.pt'))
        with open(os.path.join(os.path.dirname(entry['deepspeed']), 'latest'), 'w') as handle:
            handle.write('global_step%d' % step)
        entry['torch_bytes'] = _storage_bytes(torch, torch.load(entry['torch'], weights_only=True))
        numpy.savez(os.path.join(base, 'weights_u16.npz'),
                    **dict((k, v.view(torch.int16).numpy().view(numpy.uint16)) for k, v in weights.items()))
        numpy.savez(os.path.join(base, 'state_f32.npz'), **dict((k, v.numpy()) for k, v in state.items()))
        out[step] = entry
    with open(os.path.join(str(directory), 'manifest.json'), 'w') as handle:
        json.dump(out, handle)


if __name__ == '__main__':
    _make(sys.argv[1], int(sys.argv[2]), tuple(int(s) for s in sys.argv[4:]), int(sys.argv[3]))
