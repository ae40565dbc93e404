"""After converge and idempotence: /etc/cufile.json created from NVIDIA's documented defaults with the checkpoint's
keys, read back from the node; the records; nvidia_fs untouched (no GPU, mode unavailable)."""
from gds_node import BLOCK_KIB, CUFILE, DEPTH, LOCAL, MODPROBE, MODULES_LOAD, RANKS, flat, record

# NVIDIA's documented defaults (GDS Configuration Guide), typed here independently of module_utils/gds/gds.py
DEFAULTS = {
    "properties.max_direct_io_size_kb": 16384, "properties.max_device_cache_size_kb": 131072,
    "properties.max_device_pinned_mem_size_kb": 33554432, "properties.per_buffer_cache_size_kb": 1024,
    "properties.use_poll_mode": False, "properties.poll_mode_max_size_kb": 4, "properties.allow_compat_mode": True,
    "properties.force_compat_mode": False, "properties.use_pci_p2pdma": False,
    "fs.generic.posix_unaligned_writes": False, "execution.max_io_threads": 4, "execution.max_io_queue_depth": 128,
    "execution.parallel_io": True, "execution.min_io_threshold_size_kb": 8192,
    "execution.max_request_parallelism": 4, "profile.cufile_stats": 0,
}


def test_the_lab_node_has_no_nvidia_gpu(node):
    assert node["nvidia_gpus"] is False


def test_cufile_json_is_created_with_the_checkpoint_keys(node):
    text = node["files"][CUFILE]
    assert text is not None and node["modes"][CUFILE] == "0o644"
    assert text.startswith("// cuFile configuration made by ai_storage.checkpoint_io (role gds)")
    values = flat(text)
    expected = dict(DEFAULTS)
    expected.update({
        "properties.max_direct_io_size_kb": BLOCK_KIB,
        "properties.max_device_pinned_mem_size_kb": RANKS * DEPTH * BLOCK_KIB,
        "execution.max_io_queue_depth": DEPTH,
        "properties.allow_compat_mode": True,  # preferred: a node without DMA keeps working through the CPU
    })
    assert values == expected
    assert node["backups"] == []  # nothing existed, nothing to back up


def test_the_records_say_what_was_found(node):
    cufile = record(node, "cufile_config")
    entry = cufile["files"][CUFILE]
    assert entry["existed"] is False and entry["original"] is None
    assert entry["written"] == node["files"][CUFILE]
    gds = record(node, "gds")
    assert gds["nvidia_fs_loaded"] is False and gds["cufile_path"] == CUFILE


def test_nvidia_fs_is_not_touched_without_a_gpu(node):
    assert node["nvidia_fs_loaded"] is False
    assert node["files"][MODPROBE] is None and node["files"][MODULES_LOAD] is None


def test_the_overrides_are_reported_not_changed(node):
    assert flat(node["files"][LOCAL])["execution.max_io_queue_depth"] == 32
