"""detred.torch.distributed on 4 GPUs where 4 are visible, else 2 (marker ``gpu``; skipped, saying why, with fewer GPUs
or without PyTorch): the collectives give the rank-order sums of the CPU bit for bit, a DDP model with
``allreduce_hook`` and an FSDP2 model with ``ReduceScatter`` get the gradients of the rank-order sum, the micro-batch
reduce gives the bits of one GPU holding every micro-batch, DDP training is bitwise reproducible between two runs, and
training with the micro-batch reduce gives the same weights on 2 and 4 GPUs. Each test spawns one process per GPU
(torch.multiprocessing) with an NCCL process group; DETRED_TEST_GPUS=2 keeps to 2."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

import detred

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not detred.cuda_available() or torch.cuda.device_count() < 2,
                       reason="needs 2 CUDA GPUs and detred's CUDA backend"),
]


def rank_data(rank: int, n: int, dtype) -> torch.Tensor:
    """Ill-conditioned data of one rank, made on the CPU (the same on every process)."""
    g = torch.Generator().manual_seed(1000 + rank)
    spread = 8 if dtype in (torch.float16, torch.bfloat16) else 24  # float16 stays finite
    x = torch.randn(n, generator=g, dtype=torch.float64) * 2.0 ** torch.randint(0, spread, (n,), generator=g)
    return x.to(dtype)


def reference_sum(columns: np.ndarray, dtype) -> np.ndarray:
    """Rank-order tree sums of each column of [P, n] float32 values, rounded once to dtype (the C++ contract:
    detred::sum<float> of the P values)."""
    sums = np.array([detred.sum(np.ascontiguousarray(columns[:, j])) for j in range(columns.shape[1])], np.float32)
    t = torch.from_numpy(sums)
    return t.to(dtype)


def run(rank: int, world: int, init_file: str, body, result_file: str) -> None:
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS for the training tests
    torch.cuda.set_device(rank)
    torch.distributed.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=world,
                                         device_id=torch.device("cuda", rank))
    try:
        body(rank, world)
        if rank == 0:
            open(result_file, "w").write("ok")
    finally:
        torch.distributed.destroy_process_group()


def visible_gpus() -> int:
    """The GPUs the tests use: 4 where 4 are visible, else 2 (the micro-batch tests split 4 and 8 micro-batches
    evenly); DETRED_TEST_GPUS=2 keeps to 2."""
    return 4 if min(torch.cuda.device_count(), int(os.environ.get("DETRED_TEST_GPUS", "4"))) >= 4 else 2


def spawn(body, world: int = 0) -> None:
    world = world or visible_gpus()
    with tempfile.TemporaryDirectory() as d:
        result = os.path.join(d, "result")
        torch.multiprocessing.spawn(run, args=(world, os.path.join(d, "init"), body, result), nprocs=world)
        assert os.path.exists(result)


def collectives_body(rank: int, world: int) -> None:
    from detred.torch import distributed as dd

    comm = dd.new_communicator()
    n = 4096 + 7
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        data = [rank_data(r, n, dtype) for r in range(world)]
        stack = np.stack([d.float().numpy() for d in data])
        expected = reference_sum(stack, dtype)
        for method in ("tree", "exact"):
            x = data[rank].cuda()
            out = torch.empty_like(x)
            comm.all_reduce(x, out, method=method)
            if method == "tree":
                assert torch.equal(out.cpu().view(torch.int16 if dtype != torch.float32 else torch.int32),
                                   expected.view(torch.int16 if dtype != torch.float32 else torch.int32)), dtype
            else:  # exact: the correctly rounded sum of each element's P values
                name = str(dtype).replace("torch.", "")
                want = []
                for j in range(0, n, 37):
                    acc = detred.ExactAccumulator("float32")
                    acc.add(np.ascontiguousarray(stack[:, j]))
                    want.append(float(acc.value(dtype=name)))
                got = out.cpu().float()[0:n:37]
                torch.testing.assert_close(got, torch.tensor(want, dtype=torch.float32), rtol=0, atol=0,
                                           equal_nan=True, msg=f"exact {dtype}")
        shard = 512
        full = rank_data(rank + 10, shard * world, dtype).cuda()
        rs = torch.empty(shard, dtype=dtype, device="cuda")
        comm.reduce_scatter(full, rs)
        ar = torch.empty_like(full)
        comm.all_reduce(full, ar)
        assert torch.equal(rs, ar[rank * shard:(rank + 1) * shard]), "reduce-scatter != all-reduce's shard"
        ag = torch.empty(shard * world, dtype=dtype, device="cuda")
        comm.all_gather(rs, ag)
        assert torch.equal(ag, ar), "all-gather of the shards != all-reduce"


def test_collectives_have_the_rank_order_bits():
    spawn(collectives_body)


def micro_batches_body(rank: int, world: int) -> None:
    from detred import _nccl
    from detred.torch import distributed as dd

    comm = dd.new_communicator()
    m, n = 8, 3000
    rows = [rank_data(100 + g, n, torch.float32) for g in range(m)]  # the global micro-batches, in order
    per_rank = m // world
    mine = torch.stack(rows[rank * per_rank:(rank + 1) * per_rank]).cuda()
    for method in ("tree", "exact"):
        out = torch.empty(n, device="cuda")
        dd.all_reduce_micro_batches(mine, out, comm, method=method)
        # One GPU holding all M micro-batches: a communicator of one rank.
        alone = _nccl.Communicator(_nccl.unique_id(), 1, 0, rank)
        out1 = torch.empty(n, device="cuda")
        alone.all_reduce_micro_batches(torch.stack(rows).cuda(), out1, method=method)
        alone.close()
        assert torch.equal(out.view(torch.int32), out1.view(torch.int32)), f"P={world} != P=1 ({method})"


def test_micro_batch_gradients_do_not_depend_on_the_gpu_count():
    spawn(micro_batches_body)


def local_grads(model_factory, inputs):
    model = model_factory().cuda()
    model(inputs).square().sum().backward()
    return [p.grad.detach().clone() for p in model.parameters()]


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Tanh(), torch.nn.Linear(256, 32))


def expected_average(grads_by_rank, world):
    """The rank-order tree sum of each gradient element over the ranks, divided by the rank count."""
    out = []
    for tensors in zip(*grads_by_rank):
        stack = np.stack([t.cpu().float().numpy().reshape(-1) for t in tensors])
        total = reference_sum(stack, torch.float32)
        out.append((total / world).reshape(tensors[0].shape))
    return out


def ddp_body(rank: int, world: int) -> None:
    from detred.torch import distributed as dd

    comm = dd.new_communicator()
    inputs = [torch.randn(16, 64, generator=torch.Generator().manual_seed(r)).cuda() for r in range(world)]
    grads = [local_grads(make_model, x) for x in inputs]
    expected = expected_average(grads, world)
    ddp = torch.nn.parallel.DistributedDataParallel(make_model().cuda(), device_ids=[rank])
    ddp.register_comm_hook(dd.AllReduceState(comm), dd.allreduce_hook)
    ddp(inputs[rank]).square().sum().backward()
    for p, e in zip(ddp.parameters(), expected):
        assert torch.equal(p.grad.cpu().view(torch.int32), e.view(torch.int32)), "DDP gradient != rank-order mean"


def test_ddp_comm_hook():
    spawn(ddp_body)


def fsdp_body(rank: int, world: int) -> None:
    from torch.distributed.fsdp import fully_shard

    from detred.torch import distributed as dd

    comm = dd.new_communicator()
    inputs = [torch.randn(16, 64, generator=torch.Generator().manual_seed(r)).cuda() for r in range(world)]
    grads = [local_grads(make_model, x) for x in inputs]
    expected = expected_average(grads, world)
    model = make_model().cuda()
    fully_shard(model)
    model.set_custom_reduce_scatter(dd.ReduceScatter(comm))
    model(inputs[rank]).square().sum().backward()
    for p, e in zip(model.parameters(), expected):
        local = p.grad.to_local() if hasattr(p.grad, "to_local") else p.grad
        rows = local.shape[0]
        start = rank * ((e.shape[0] + world - 1) // world)
        want = e[start:start + rows]
        assert torch.equal(local.cpu().view(torch.int32), want.view(torch.int32)), "FSDP2 shard != rank-order mean"


def test_fsdp2_custom_reduce_scatter():
    spawn(fsdp_body)


# Training: a few SGD steps of a small model on fixed data, the global batch cut into M = 4 micro-batches in one global
# order (micro-batch g on rank g // rows). The final weights go to a file (rank 0).
STEPS, MICRO_BATCHES = 3, 4


def micro_batch(step: int, g: int):
    gen = torch.Generator().manual_seed(10_000 * step + g)
    return torch.randn(8, 64, generator=gen), torch.randn(8, 32, generator=gen)


def train_ddp_body(rank: int, world: int, out_file: str) -> None:
    """DDP with allreduce_hook: each rank's micro-batches summed locally, the gradients all-reduced by detred."""
    from detred.torch import distributed as dd

    torch.use_deterministic_algorithms(True)
    comm = dd.new_communicator()
    model = torch.nn.parallel.DistributedDataParallel(make_model().cuda(), device_ids=[rank])
    model.register_comm_hook(dd.AllReduceState(comm), dd.allreduce_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    rows = MICRO_BATCHES // world
    for step in range(STEPS):
        opt.zero_grad()
        xs, ys = zip(*[micro_batch(step, rank * rows + k) for k in range(rows)])
        x, y = torch.cat(xs).cuda(), torch.cat(ys).cuda()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    comm.synchronize()
    if rank == 0:
        torch.save([p.detach().cpu() for p in model.parameters()], out_file)


def train_micro_batches_body(rank: int, world: int, out_file: str) -> None:
    """Every micro-batch's gradient on its own, then all_reduce_micro_batches over the M rows in global order: the
    reduced gradient, and so every step, has the same bits for every rank count that splits the M rows evenly."""
    from detred.torch import distributed as dd

    torch.use_deterministic_algorithms(True)
    comm = dd.new_communicator()
    model = make_model().cuda()
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.05)
    rows = MICRO_BATCHES // world
    n = sum(p.numel() for p in params)
    for step in range(STEPS):
        grads = torch.empty(rows, n, device="cuda")
        for k in range(rows):
            x, y = micro_batch(step, rank * rows + k)
            model.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            grads[k] = torch.cat([p.grad.reshape(-1) for p in params])
        total = torch.empty(n, device="cuda")
        dd.all_reduce_micro_batches(grads, total, comm)
        total.div_(MICRO_BATCHES)
        offset = 0
        for p in params:
            p.grad = total[offset:offset + p.numel()].view_as(p).clone()
            offset += p.numel()
        opt.step()
    comm.synchronize()
    if rank == 0:
        torch.save([p.detach().cpu() for p in params], out_file)


def train(body, world: int):
    with tempfile.TemporaryDirectory() as d:
        weights = os.path.join(d, "weights.pt")

        spawn(_Bound(body, weights), world)
        return torch.load(weights)


class _Bound:
    """A picklable body(rank, world) that passes the weights file on (spawn pickles its arguments)."""

    def __init__(self, body, path):
        self.body, self.path = body, path

    def __call__(self, rank, world):
        self.body(rank, world, self.path)


def same_bits(a, b) -> bool:
    return all(torch.equal(x.view(torch.int32), y.view(torch.int32)) for x, y in zip(a, b))


def test_ddp_training_is_bitwise_reproducible():
    world = 4 if visible_gpus() >= 4 else 2
    first, second = train(train_ddp_body, world), train(train_ddp_body, world)
    assert same_bits(first, second), f"two DDP runs on {world} GPUs gave different weights"


def test_micro_batch_training_gives_the_same_weights_on_2_and_4_gpus():
    two = train(train_micro_batches_body, 2)
    assert same_bits(two, train(train_micro_batches_body, 2)), "two runs on 2 GPUs differ"
    if visible_gpus() < 4:
        pytest.skip("the comparison with 4 GPUs needs 4 visible GPUs (2-GPU runs were reproducible)")
    four = train(train_micro_batches_body, 4)
    assert same_bits(two, four), "2 and 4 GPUs gave different weights"
