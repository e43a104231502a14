"""Exact resume and the distributed agreement check of h5pack.Loader (docs/python.md, "Resume").

A Loader's stream is a pure function of its order fingerprint (h5pack_info.order_fingerprint: the file's
geometry, seed, order, window, world, batch size, drop_last, echo, augmentation settings) and the position
(epoch, batch, echo) of the next delivery. state_dict() saves both; load_state_dict() checks the first and
reopens the reader at the second (h5pack_config.start_epoch/start_batch/start_echo).
"""
import json
import os

from ._convert import int_option

FORMAT = "h5pack.Loader"
VERSION = 1


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
        "order": names(_lib.ORDERS, cfg.order), "world": int(cfg.world), "batch_size": int(cfg.batch_size),
        "drop_last": int(bool(cfg.drop_last)), "echo": int(cfg.echo),
        "echo_mode": names(_lib.ECHO_MODES, cfg.echo_mode) if cfg.echo > 1 else "-",
        "crop": names(_lib.CROPS, cfg.crop), "flip": int(bool(cfg.random_flip)),
        "crop_padding": int(cfg.random_crop_padding),
        "window": int(info.window) if cfg.order == _lib.ORDERS["chunk"] else "-",
    }
    if cfg.patch_size:  # patches of images in tiles: what decides the windows or the draws
        s["patch"] = int(cfg.patch_size)
        s["patch_mode"] = names(_lib.PATCH_MODES, cfg.patch_mode)
        s["overlap"] = int(cfg.patch_overlap) if cfg.patch_mode == _lib.PATCH_MODES["sliding"] else "-"
        s["patches_per_epoch"] = int(cfg.patches_per_epoch) if cfg.patch_mode == _lib.PATCH_MODES["random"] else "-"
    if cfg.crop == _lib.CROPS["random_resized"]:
        s["scale"] = f"({cfg.scale_min!r}, {cfg.scale_max!r})"
        s["ratio"] = f"({cfg.ratio_min!r}, {cfg.ratio_max!r})"
    return s


def make_state(epoch, batch, echo, fingerprint, own_settings):
    """The state dict: the position of the next delivery, the fingerprint, the settings, a version."""
    return {"format": FORMAT, "version": VERSION, "epoch": int(epoch), "batch": int(batch), "echo": int(echo),
            "fingerprint": fingerprint_text(fingerprint), "settings": dict(own_settings)}


def check_state(sd, fingerprint, own_settings, path):
    """(epoch, batch, echo) of SD after checking that it belongs to a loader with this fingerprint;
    ValueError naming what differs otherwise."""
    if not isinstance(sd, dict) or sd.get("format") != FORMAT:
        raise ValueError(f"{path}: not an h5pack.Loader state dict (no \"format\": \"{FORMAT}\")")
    if sd.get("version") != VERSION:
        raise ValueError(f"{path}: state dict version {sd.get('version')!r}, this h5pack reads version {VERSION}")
    for key, bits in (("epoch", 64), ("batch", 64), ("echo", 32)):  # h5pack_config.start_KEY's width
        try:
            int_option(sd.get(key), f"state dict {key}", 0, (1 << bits) - 1)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
    own = fingerprint_text(fingerprint)
    if sd.get("fingerprint") != own:
        saved = sd.get("settings") or {}
        diff = [f"{k}: saved {saved.get(k, '?')!r}, now {v!r}" for k, v in own_settings.items() if saved.get(k) != v]
        why = "; ".join(diff) if diff else "the settings listed agree: another h5pack version or algorithm"
        raise ValueError(f"{path}: the state dict was saved by a loader with another order (fingerprint "
                         f"{sd.get('fingerprint')}, this loader's is {own}): {why}. Resuming would not continue "
                         f"the same stream; open the loader with the saved settings")
    return sd["epoch"], sd["batch"], sd["echo"]


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
    for job_rank, (fp, loader_rank, _) in enumerate(gathered):
        groups.setdefault(fp, []).append(job_rank)
        shares.setdefault(loader_rank, []).append(job_rank)
    if len(groups) > 1:
        ours = fingerprint_text(fingerprint)
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
