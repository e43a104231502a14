"""torch.utils.data.DataLoader's arguments, which users bring to h5pack.Loader: refused with what the Loader
does instead (docs/python.md)."""

# torch.utils.data.DataLoader's arguments: what h5pack.Loader does instead.
_DATALOADER_ARGS = {
    "num_workers": "threads= (the reader's worker threads; default: the CPUs this process may use)",
    "shuffle": "order= ('chunk', the default, shuffles; 'random' like shuffle=True; 'sequential' not)",
    "pin_memory": "nothing: batches come pinned and are copied to the GPU by the reader (device=)",
    "transform": "crop=, output_size=, flip=, norm= (done by the reader, on the GPU with device='cuda')",
    "collate_fn": "nothing: batches are whole tensors already",
    "sampler": "order= and seed= (and rank=/world=, taken from torch.distributed when left out)",
    "batch_sampler": "batch_size= and drop_last=",
    "prefetch_factor": "prefetch= (batch buffers the reader fills ahead)",
    "persistent_workers": "nothing: the reader's threads live as long as the loader",
    "worker_init_fn": "nothing: there are no worker processes",
    "generator": "seed=",
}


def refuse(kwargs, api="h5pack.Loader"):
    """API: the class the user called (h5pack.Loader or h5pack.Patches), named in the message."""
    for name in kwargs:
        if name in _DATALOADER_ARGS:
            raise TypeError(f"{api} has no {name}= (a torch DataLoader argument): use {_DATALOADER_ARGS[name]}")
    if kwargs:
        raise TypeError(f"{api} got an unexpected keyword argument {next(iter(kwargs))!r}")
