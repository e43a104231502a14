"""PyTorch users' habits that h5pack.Loader meets (docs/python.md): torch dtypes for dtype=, and
DataLoader's arguments refused with the Loader's equivalent."""
import torch

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


def refuse_dataloader_args(kwargs, api="h5pack.Loader"):
    """API: the class the user called (h5pack.Loader or h5pack.Patches), named in the message."""
    for name in kwargs:
        if name in _DATALOADER_ARGS:
            raise TypeError(f"{api} has no {name}= (a torch DataLoader argument): use {_DATALOADER_ARGS[name]}")
    if kwargs:
        raise TypeError(f"{api} got an unexpected keyword argument {next(iter(kwargs))!r}")


_TORCH_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
                 torch.uint8: "uint8"}


def dtype_name(dtype):
    """torch.float16 -> "float16"; names pass through (checked later)."""
    if isinstance(dtype, torch.dtype):
        if dtype not in _TORCH_DTYPES:
            raise ValueError(f"dtype={dtype}: the reader writes torch.float32, float16, bfloat16 or uint8")
        return _TORCH_DTYPES[dtype]
    return dtype
