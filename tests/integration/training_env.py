"""The training environment the DeepSpeed tests run: lab/bootstrap.sh --tests makes one (CPU torch and DeepSpeed)
at ~/.cache/checkpoint_io_lab/train-venv and builds DeepSpeed's async_io op once into
~/.cache/checkpoint_io_lab/torch_extensions (CHECKPOINT_IO_TRAINING_PYTHON and TORCH_EXTENSIONS_DIR point
elsewhere). With CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 (the test command) a missing one fails the tests that need it;
elsewhere they skip saying why."""
import os

import pytest

CACHE = os.path.expanduser('~/.cache/checkpoint_io_lab')
EXTENSIONS = os.environ.get('TORCH_EXTENSIONS_DIR') or os.path.join(CACHE, 'torch_extensions')
TRAINING_PYTHON = os.environ.get('CHECKPOINT_IO_TRAINING_PYTHON') or os.path.join(CACHE, 'train-venv', 'bin', 'python')
REQUIRE = os.environ.get('CHECKPOINT_IO_REQUIRE_DEEPSPEED') == '1'


def training_python():
    """The training environment's Python, or the test fails (required) or skips, naming what is missing."""
    if not os.access(TRAINING_PYTHON, os.X_OK):
        if REQUIRE:
            pytest.fail('CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 but there is no training environment at %s: '
                        'lab/bootstrap.sh --tests makes it' % TRAINING_PYTHON)
        pytest.skip('no training environment at %s (lab/bootstrap.sh --tests makes it); set '
                    'CHECKPOINT_IO_REQUIRE_DEEPSPEED=1 to fail instead' % TRAINING_PYTHON)
    return TRAINING_PYTHON
