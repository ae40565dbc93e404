"""Real checkpoints for the compression tests and benchmark, made here with the CPU torch the tests install: a small
MLP trained a few Adam steps, saved at two consecutive steps as torch.save files (BF16 weights, FP32 Adam state),
safetensors files (the format written here: an 8-byte little-endian header length, a JSON header, the bytes) and a
DeepSpeed ZeRO-shaped directory (global_step<N>/mp_rank_00_model_states.pt, zero_pp_rank_0_mp_rank_00_optim_states.pt).
"""
import json
import os
import struct

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


SAFETENSORS_DTYPE = {'bfloat16': 'BF16', 'float16': 'F16', 'float32': 'F32', 'int64': 'I64', 'float64': 'F64'}


def write_safetensors(path, tensors):
    """A safetensors file of {name: tensor} (contiguous, little-endian bytes, in name order)."""
    torch = import_torch()
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        tensor = tensors[name].detach().contiguous()
        data = tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b''
        header[name] = {'dtype': SAFETENSORS_DTYPE[str(tensor.dtype).split('.')[-1]], 'shape': list(tensor.shape),
                        'data_offsets': [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as handle:
        handle.write(struct.pack('<Q', len(text)) + text + b''.join(blobs))


def make_checkpoints(directory, hidden=512, steps=(3, 4), seed=0):
    """{step: {'torch': path, 'weights': safetensors path, 'state': safetensors path (Adam exp_avg, exp_avg_sq),
    'deepspeed': global_step directory, 'tensors': {'bf16': {name: tensor}, 'fp32': {name: tensor}}}}."""
    torch = import_torch()
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
                 'tensors': {'bf16': weights, 'fp32': state}}
        torch.save({'model': weights, 'optimizer': optimizer.state_dict(), 'step': step}, entry['torch'])
        write_safetensors(entry['weights'], weights)
        write_safetensors(entry['state'], state)
        os.makedirs(entry['deepspeed'])
        torch.save({'module': weights}, os.path.join(entry['deepspeed'], 'mp_rank_00_model_states.pt'))
        torch.save({'optimizer_state_dict': {'state': state}},
                   os.path.join(entry['deepspeed'], 'zero_pp_rank_0_mp_rank_00_optim_states.pt'))
        with open(os.path.join(os.path.dirname(entry['deepspeed']), 'latest'), 'w') as handle:
            handle.write('global_step%d' % step)
        out[step] = entry
    return out
