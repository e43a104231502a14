"""Exact and elastic resume, and the distributed agreement check of h5pack.Loader (docs/python.md, "Resume").

A Loader's stream is a pure function of its order fingerprint (h5pack_info.order_fingerprint: the file's
geometry, seed, order, window, drop_last, echo, augmentation settings) and of the global batch (batch_size x
world); how the global batch is split into ranks changes nothing (docs/reader.md, "Orders"). state_dict()
saves the fingerprint and the position of the next delivery twice: as this job's (epoch, batch, echo), and
as the position in the epoch's order of its first sample ("sample", counted over the whole job) with the
global batch that produced it. load_state_dict() checks the state (its format, its check value, the file,
the fingerprint) and reopens the reader at that sample (h5pack_config.start_sample): with the same global
batch the stream continues exactly, with another the rest of the epoch is shared among this job's ranks.
"""
import hashlib
import json
import os

from ._convert import int_option

FORMAT = "h5pack.Loader"
VERSION = 2  # 2: elastic (sample, global_batch, file, check); 1: (epoch, batch, echo) of one world only
_U64 = (1 << 64) - 1


def fingerprint_text(value):
    """The fingerprint as the 16 hex digits h5pack-stats prints."""
    return f"{int(value):016x}"


def settings(cfg, info):
    """What the fingerprint hashes, by name (to explain a mismatch): plain ints and strings."""
    from . import _lib

    names = lambda table, v: {n: k for k, n in table.items()}.get(v, str(v))  # noqa: E731
    s = {
        "n_samples": int(info.n_samples), "samples_per_chunk": int(info.samples_per_chunk),
        "image_shape": f"{info.channels}x{info.height}x{info.width}", "seed": int(cfg.seed),
        "order": names(_lib.ORDERS, cfg.order), "drop_last": int(bool(cfg.drop_last)), "echo": int(cfg.echo),
        "echo_mode": names(_lib.ECHO_MODES, cfg.echo_mode) if cfg.echo > 1 else "-",
        "crop": names(_lib.CROPS, cfg.crop), "flip": int(bool(cfg.random_flip)),
        "crop_padding": int(cfg.random_crop_padding),
        "window": int(info.window) if cfg.order == _lib.ORDERS["chunk"] else "-",
    }
    if cfg.patch_size:  # patches of images in tiles: what decides the windows or the draws (and the split)
        s["world"], s["batch_size"] = int(cfg.world), int(cfg.batch_size)
        s["patch"] = int(cfg.patch_size)
        s["patch_mode"] = names(_lib.PATCH_MODES, cfg.patch_mode)
        s["overlap"] = int(cfg.patch_overlap) if cfg.patch_mode == _lib.PATCH_MODES["sliding"] else "-"
        s["patches_per_epoch"] = int(cfg.patches_per_epoch) if cfg.patch_mode == _lib.PATCH_MODES["random"] else "-"
    if cfg.crop == _lib.CROPS["random_resized"]:
        s["scale"] = f"({cfg.scale_min!r}, {cfg.scale_max!r})"
        s["ratio"] = f"({cfg.ratio_min!r}, {cfg.ratio_max!r})"
    return s


def start_of(sample, n_samples, global_batch, batches_per_epoch, drop_last):
    """Where the rest of an epoch from stream position SAMPLE starts in a job of GLOBAL_BATCH:
    (batch, origin), the library's h5pack_order_start (reader/plan/order_layout.c), or None when nothing
    of the epoch is left (the next one starts from its batch 0)."""
    rest = n_samples - sample
    left = rest // global_batch if drop_last else -(-rest // global_batch)
    if left <= 0:
        return None
    batch = batches_per_epoch - left
    return batch, sample - batch * global_batch


def _check_value(sd):
    """The check value of a state: a hash of every other field, so that an edited or damaged state is told."""
    body = json.dumps({k: v for k, v in sd.items() if k != "check"}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def make_state(position, fingerprint, own_settings, job, file_facts):
    """The state dict. POSITION: (epoch, batch, echo, sample) of the next delivery; JOB: (world, batch_size);
    FILE_FACTS: (samples, bytes or None)."""
    epoch, batch, echo, sample = position
    world, batch_size = job
    sd = {"format": FORMAT, "version": VERSION, "epoch": int(epoch), "batch": int(batch), "echo": int(echo),
          "sample": int(sample), "global_batch": int(world) * int(batch_size), "world": int(world),
          "batch_size": int(batch_size), "fingerprint": fingerprint_text(fingerprint),
          "settings": dict(own_settings), "file": {"samples": int(file_facts[0]), "bytes": file_facts[1]}}
    sd["check"] = _check_value(sd)
    return sd


def _check_format(sd, path):
    if not isinstance(sd, dict) or sd.get("format") != FORMAT:
        raise ValueError(f"{path}: not an h5pack.Loader state dict (no \"format\": \"{FORMAT}\")")
    version = sd.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise ValueError(f"{path}: the state dict was saved by a newer h5pack (state version {version}); this one "
                         f"reads versions up to {VERSION}: load it with that h5pack or a later one")
    if version == 1:
        raise ValueError(f"{path}: the state dict was saved by an earlier h5pack (state version 1), whose order this "
                         f"one does not reproduce (its fingerprint {sd.get('fingerprint')} hashed another algorithm): "
                         f"the interrupted epoch cannot be continued exactly; start it again (set_epoch({sd.get('epoch')!r}))")
    if version != VERSION:
        raise ValueError(f"{path}: state dict version {version!r}, this h5pack reads version {VERSION}")
    if sd.get("check") != _check_value(sd):
        raise ValueError(f"{path}: the state dict is damaged or was edited (its check value {sd.get('check')!r} does "
                         f"not match its fields): save a new one with state_dict() rather than changing one")


def _check_fields(sd, path):
    for key, lo, hi in (("epoch", 0, _U64), ("batch", 0, _U64), ("echo", 0, (1 << 32) - 1), ("sample", 0, _U64),
                        ("global_batch", 1, _U64), ("world", 1, (1 << 32) - 1), ("batch_size", 1, _U64)):
        try:  # h5pack_config's widths: ctypes would wrap anything outside them silently
            int_option(sd.get(key), f"state dict {key}", lo, hi)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
    if sd["global_batch"] != sd["world"] * sd["batch_size"]:
        raise ValueError(f"{path}: state dict global_batch {sd['global_batch']} is not world x batch_size "
                         f"({sd['world']} x {sd['batch_size']})")


def _check_file(sd, file_facts, path):
    saved = sd.get("file")
    if not isinstance(saved, dict):
        raise ValueError(f"{path}: the state dict names no file (\"file\")")
    samples, size = file_facts
    if saved.get("samples") != samples or (size is not None and saved.get("bytes") not in (None, size)):
        raise ValueError(f"{path}: the state dict was saved for another file ({saved.get('samples')} samples, "
                         f"{saved.get('bytes')} bytes; this one has {samples} samples, {size} bytes)")


def _check_fingerprint(sd, fingerprint, own_settings, path):
    own = fingerprint_text(fingerprint)
    if sd.get("fingerprint") == own:
        return
    saved = sd.get("settings") or {}
    diff = [f"{k}: saved {saved.get(k, '?')!r}, now {v!r}" for k, v in own_settings.items() if saved.get(k) != v]
    why = "; ".join(diff) if diff else "the settings listed agree: another h5pack version or algorithm"
    raise ValueError(f"{path}: the state dict was saved by a loader with another order (fingerprint "
                     f"{sd.get('fingerprint')}, this loader's is {own}): {why}. Resuming would not continue "
                     f"the same stream; open the loader with the saved settings (world, batch_size, threads, "
                     f"prefetch and device may differ)")


def check_state(sd, fingerprint, own_settings, file_facts, echo_factor, path, elastic=True):
    """(epoch, sample, echo, global_batch) of SD after checking that it is whole, of this file and of a loader
    with this fingerprint; ValueError naming what is wrong otherwise. ELASTIC: a stream of whole images, whose
    sample counts the file's images (patches resume by batch, in the same world)."""
    _check_format(sd, path)
    _check_fields(sd, path)
    _check_file(sd, file_facts, path)
    _check_fingerprint(sd, fingerprint, own_settings, path)
    if sd["echo"] >= echo_factor or (elastic and sd["sample"] > file_facts[0]):
        raise ValueError(f"{path}: state dict position (echo {sd['echo']}, sample {sd['sample']}) outside a run of "
                         f"echo {echo_factor} over {file_facts[0]} samples")
    return sd["epoch"], sd["sample"], sd["echo"], sd["global_batch"]


def elastic_start(epoch, sample, echo, saved_global_batch, global_batch, n_samples):
    """Where a job of GLOBAL_BATCH continues a state saved at (EPOCH, SAMPLE, ECHO) by a job of
    SAVED_GLOBAL_BATCH: the same position with the same global batch; with another, a batch echoed part-way
    is left (its samples were delivered) and the rest of the epoch starts at the next one's first sample."""
    if saved_global_batch != global_batch and echo > 0:
        sample, echo = min(n_samples, sample + saved_global_batch), 0
    return epoch, sample, echo


def _distributed():
    """torch.distributed when it is usable and initialised, else None."""
    try:
        import torch.distributed as dist
    except ImportError:  # a torch built without distributed support
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def _env_int(name):
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else None
    except ValueError:
        raise ValueError(f"${name}={value!r}: expected an integer (as torchrun sets it)") from None


def job_rank_world(rank, world, torch_job=True):
    """RANK and WORLD as given, else the job's: torch.distributed's when initialised (TORCH_JOB: only the
    PyTorch front-end asks torch), else $RANK and $WORLD_SIZE (torchrun, SLURM wrappers), else 0 and 1."""
    if rank is not None and world is not None:
        return rank, world
    dist = _distributed() if torch_job else None
    if dist is not None:
        job_rank, job_world = dist.get_rank(), dist.get_world_size()
    else:
        job_rank, job_world = _env_int("RANK"), _env_int("WORLD_SIZE")
        if job_world is not None and job_world < 1 and world is None:
            raise ValueError(f"$WORLD_SIZE={job_world}: the job's ranks must be at least 1 (or pass world=)")
        if job_rank and job_world is None and world is None and rank is None:
            raise ValueError(f"$RANK={job_rank} is set but $WORLD_SIZE is not: set both (torchrun does), or pass "
                             f"rank= and world=")
    rank, world_given = (rank if rank is not None else (job_rank or 0)), world
    world = world if world is not None else (job_world or 1)
    if world_given is None and isinstance(rank, int) and rank >= world:  # world=1 by default: say where from
        raise ValueError(f"rank={rank} needs world= (or $WORLD_SIZE, or torch.distributed): the world is {world}")
    return rank, world


def job_gpu(current, count):
    """The GPU a rank uses: $LOCAL_RANK (torchrun) when set and below COUNT, else CURRENT (what
    torch.cuda.set_device chose)."""
    local = _env_int("LOCAL_RANK")
    return local if local is not None and 0 <= local < count else current


def settings_differing(gathered_settings):
    """"NAME: ranks [..] V, ranks [..] W" for each setting whose value is not the same on every rank."""
    parts = []
    for name in sorted({k for s in gathered_settings for k in s}):
        values = {}
        for job_rank, s in enumerate(gathered_settings):
            values.setdefault(repr(s.get(name)), []).append(job_rank)
        if len(values) > 1:
            parts.append(f"{name}: " + ", ".join(f"ranks {ranks} {v}" for v, ranks in values.items()))
    return "; ".join(parts)


def distributed_check(fingerprint, path, rank, world, settings=None):
    """When torch.distributed is initialised and the loader's WORLD is the job's (and above 1): all ranks'
    fingerprints and loader ranks (all_gather_object, once); raises RuntimeError naming the ranks whose
    order differs, or the processes that opened the same RANK (their shares would be the same).
    The decision depends on nothing that differs between ranks (not the rank: a permutation of ranks, or
    rank=LOCAL_RANK on several nodes by mistake, would send only some ranks into the collective). A
    loader of world 1 (validation on rank 0 alone, say) shares no order with the others and joins none.
    SETTINGS (name -> value: what the order depends on) name the settings that differ in the error.
    Returns the number of ranks checked (0: none)."""
    dist = _distributed()
    if dist is None or world != dist.get_world_size() or world == 1:
        return 0
    gathered = [None] * world
    dist.all_gather_object(gathered, (fingerprint_text(fingerprint), int(rank), dict(settings or {})))
    groups, shares = {}, {}
    for job_rank, (fp, loader_rank, their) in enumerate(gathered):
        # the fingerprint leaves the split out (a checkpoint loads into any): one job's ranks split alike
        key = fp if "batch_size" not in their else f"{fp} (batch_size {their['batch_size']})"
        groups.setdefault(key, []).append(job_rank)
        shares.setdefault(loader_rank, []).append(job_rank)
    if len(groups) > 1:
        mine, ours = settings or {}, fingerprint_text(fingerprint)
        ours = ours if "batch_size" not in mine else f"{ours} (batch_size {mine['batch_size']})"
        listing = "; ".join(f"ranks {ranks}: {fp}" for fp, ranks in groups.items())
        others = sorted(r for fp, ranks in groups.items() if fp != ours for r in ranks)
        differing = settings_differing([s for _, _, s in gathered])
        differing = f" Differing: {differing}." if differing else " (no setting the loaders report differs: the file?)"
        raise RuntimeError(f"{path}: the ranks' h5pack.Loader orders differ (order_fingerprint {listing}); rank "
                           f"{dist.get_rank()} disagrees with ranks {others}.{differing} Every rank must open the file with "
                           f"the same seed, order, window (or cache: the window follows it when left out), world, "
                           f"batch_size, drop_last, echo and augmentation settings (only rank, threads and "
                           f"prefetch may differ)")
    same = {r: procs for r, procs in shares.items() if len(procs) > 1}
    if same:
        listing = "; ".join(f"ranks {procs} all opened rank={r}" for r, procs in sorted(same.items()))
        raise RuntimeError(f"{path}: {listing}: their shares of each epoch would be the same batches. Give each "
                           f"process its own rank= (torch.distributed's rank, not LOCAL_RANK), or leave rank= "
                           f"and world= out to take the job's")
    return world


def dumps(sd):
    """SD as JSON (a check that it is plain data)."""
    return json.dumps(sd, sort_keys=True)
