"""detred.torch.distributed: reproducible gradient reduction for torch.distributed (docs/PYTHON.md, "Collectives").

detred's NCCL collectives (include/detred/nccl/*.hpp) on PyTorch CUDA tensors, with their element-wise contract:
every output element is the sum of the P ranks' values in rank order, ``method="tree"`` in the canonical order over
the ranks (float accumulation, one rounding to the tensor's type), ``method="exact"`` correctly rounded; the bits
never depend on NCCL's algorithm, protocol, channels or the message size. Three ways in:

- ``new_communicator(group)``: an NCCL communicator of detred's for a ``torch.distributed`` process group (rank 0's
  NCCL unique id travels through the group with ``broadcast_object_list``). Collective.
- DDP: ``model.register_comm_hook(AllReduceState(comm), allreduce_hook)`` replaces DDP's bucket all-reduce.
- FSDP2: ``model.set_custom_reduce_scatter(ReduceScatter(comm))`` replaces FSDP2's gradient reduce-scatter.

``all_reduce_micro_batches`` reduces M micro-batch gradients split over the ranks in one global order: the same bits
for every rank count that splits the M rows evenly (tree) and for every split (exact).

Calls run on the current CUDA stream, asynchronously; tensors must be contiguous CUDA float32, bfloat16 or float16
tensors on the communicator's device. Ranks whose calls differ (sizes, types, methods) get NaN outputs, never a hang;
``Communicator.synchronize()`` or the next call raises ValueError, and the communicator must then be closed.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
import torch.distributed as dist

from .. import _nccl  # imported after torch: PyTorch has loaded the NCCL library this module binds to

__all__ = [
    "AllReduceState",
    "Communicator",
    "ReduceScatter",
    "all_gather_into_tensor",
    "all_reduce",
    "all_reduce_micro_batches",
    "allreduce_hook",
    "new_communicator",
    "reduce_scatter_tensor",
]

Communicator = _nccl.Communicator


def new_communicator(group: Optional[dist.ProcessGroup] = None,
                     device: Optional[torch.device | int] = None) -> Communicator:
    """A detred communicator over the ranks of ``group`` (default: the world), on ``device`` (default: the current
    CUDA device). Collective: every rank of the group calls it."""
    group = group if group is not None else dist.group.WORLD
    rank, size = dist.get_rank(group), dist.get_world_size(group)
    if device is None:
        device = torch.cuda.current_device()
    device = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    if device.type != "cuda":
        raise ValueError(f"device: expected a CUDA device, got {device}")
    index = device.index if device.index is not None else torch.cuda.current_device()
    box = [_nccl.unique_id() if rank == 0 else None]
    dist.broadcast_object_list(box, src=dist.get_global_rank(group, 0), group=group)
    return _nccl.Communicator(box[0], size, rank, index)


def all_reduce(tensor: torch.Tensor, comm: Communicator, *, method: str = "tree") -> torch.Tensor:
    """In place: every element becomes the rank-order sum of the ranks' values (see the module's contract)."""
    comm.all_reduce(tensor, tensor, method=method)
    return tensor


def reduce_scatter_tensor(output: torch.Tensor, input: torch.Tensor, comm: Communicator, *,
                          method: str = "tree") -> torch.Tensor:
    """``output`` (n elements) = shard ``comm.rank`` of the rank-order sum of ``input`` (comm.size * n elements)."""
    comm.reduce_scatter(input, output, method=method)
    return output


def all_gather_into_tensor(output: torch.Tensor, input: torch.Tensor, comm: Communicator) -> torch.Tensor:
    """``output`` = every rank's ``input``, in rank order."""
    comm.all_gather(input, output)
    return output


def all_reduce_micro_batches(grads: torch.Tensor, out: torch.Tensor, comm: Communicator, *,
                             method: str = "tree") -> torch.Tensor:
    """``out`` = the reduce of the ranks' micro-batch gradient rows (``grads``: [rows, n] on each rank; global row g
    = rank * rows + k) in global order: the same bits for every rank count P that splits the M = P * rows rows
    evenly (tree: the canonical tree over M), and for every split (exact)."""
    comm.all_reduce_micro_batches(grads, out, method=method)
    return out


class AllReduceState:
    """The state of ``allreduce_hook``: the communicator, the method and whether to average (DDP's default: divide
    the rank-order sum by the number of ranks, an element-wise division that keeps the result deterministic)."""

    def __init__(self, comm: Communicator, method: str = "tree", average: bool = True):
        self.comm, self.method, self.average = comm, method, average


def allreduce_hook(state, bucket):
    """A DDP communication hook (``model.register_comm_hook(state, allreduce_hook)``; ``state`` an AllReduceState,
    ``bucket`` a ``dist.GradBucket``; returns a ``torch.futures.Future`` of the bucket's tensor): the bucket's flat
    gradient all-reduced by detred in place, then divided by the rank count when ``state.average``. The argument
    check runs on the device (no host round trip); a mismatch is raised by a later call or
    ``state.comm.synchronize()``. The parameters carry no
    annotations: DDP compares them with its own types, which postponed annotations would turn into strings."""
    buffer = bucket.buffer()
    state.comm.all_reduce(buffer, buffer, method=state.method)
    if state.average:
        buffer.div_(state.comm.size)
    future = torch.futures.Future(devices=[buffer.device])
    future.set_result(buffer)
    return future


class ReduceScatter:
    """FSDP2's reduce-scatter protocol (``FSDPModule.set_custom_reduce_scatter``) with detred's element-wise
    contract. ``op`` SUM gives the rank-order sum, AVG that sum divided by the rank count; other ops raise
    ValueError (set ``model.set_gradient_divide_factor(1.0)`` or ``set_force_sum_reduction_for_comms(True)``)."""

    def __init__(self, comm: Communicator, method: str = "tree"):
        self.comm, self.method = comm, method

    def allocate(self, size: Sequence[int], *, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        return torch.empty(*size, dtype=dtype, device=device)

    def __call__(self, output_tensor: torch.Tensor, input_tensor: torch.Tensor, group: Any, op: Any,
                 async_op: bool = False) -> None:
        average = _is_op(op, "AVG")
        if not average and not _is_op(op, "SUM"):
            raise ValueError(f"op: detred's reduce-scatter takes SUM or AVG, got {op}")
        self.comm.reduce_scatter(input_tensor.reshape(-1), output_tensor.reshape(-1), method=self.method)
        if average:
            output_tensor.div_(self.comm.size)
        return None


def _is_op(op: Any, name: str) -> bool:
    reduce_op = getattr(dist.ReduceOp, name)
    try:
        return op == reduce_op or op == getattr(dist.ReduceOp.RedOpType, name)
    except (AttributeError, TypeError):
        return False
