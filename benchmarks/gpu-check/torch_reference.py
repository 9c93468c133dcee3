#!/usr/bin/env python3
"""PyTorch reference for Trainpool's GPU check: the same workload as `trainpool bench` (N MLPs
100 -> 64 ReLU -> 1, Adam lr 0.01, batch 512, 3 epochs, MSE, 10 000 rows x 100 features, 80/20
split; one shared mini-batch order per epoch) trained two ways on one device:

  loop  - a Python loop over the N models, one after another (Trainpool's `sequential`)
  vmap  - one ensemble: torch.func.stack_module_state + vmap(functional_call), every step
          advances all N models in the same kernels; loss = SUM of per-model mean losses, so no
          model's gradient is divided by N (Trainpool's `batched`)

Each way: one untimed warm-up, then R timed repeats (model init + training, ending with
torch.cuda.synchronize()); prints one JSON object with median/min/max milliseconds and the
per-model test-MSE agreement between the two ways. TF32 is off so both do float32 math.
--loop-models K trains only K models in the loop (a long loop at many rows) and scales its time to N,
saying so ("loop.scaledFrom"). Usage: python3 torch_reference.py [--rows 10000] [--models 50]
[--loop-models K] [--repeats 3] [--device cuda]
"""
import argparse
import copy
import json
import statistics
import sys
import time


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10_000)
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--loop-models", type=int, default=0, help="models the loop trains (its time scaled to --models); 0: all")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--test-split", type=float, default=0.2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()

    try:
        import torch
        from torch import nn
        from torch.func import functional_call, stack_module_state, vmap
    except Exception as e:  # noqa: BLE001 - report any import problem as JSON
        print(json.dumps({"ok": False, "error": f"torch not importable: {e}"}))
        return 2
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print(json.dumps({"ok": False, "error": "torch.cuda.is_available() is False", "torch": torch.__version__}))
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(a.device)

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    # Data: X ~ U(0,1); y = a fixed seeded teacher MLP of X plus noise (so the models learn).
    g = torch.Generator().manual_seed(a.seed)
    X = torch.rand(a.rows, a.features, generator=g)
    w1 = torch.randn(a.features, 16, generator=g) / a.features ** 0.5
    w2 = torch.randn(16, 1, generator=g)
    y = torch.tanh(X @ w1 - 0.5) @ w2 + 0.1 * torch.randn(a.rows, 1, generator=g)
    n_test = max(1, int(round(a.rows * a.test_split)))
    n_train = a.rows - n_test
    Xtr, ytr = X[:n_train].to(dev), y[:n_train].to(dev)
    Xte, yte = X[n_train:].to(dev), y[n_train:].to(dev)
    # one mini-batch order per epoch, shared by all models and both ways
    orders = [torch.randperm(n_train, generator=torch.Generator().manual_seed(a.seed * 1000 + e)).to(dev) for e in range(a.epochs)]
    batches = [[o[i:i + a.batch_size] for i in range(0, n_train, a.batch_size)] for o in orders]

    def make_model(i: int) -> "nn.Module":
        torch.manual_seed(a.seed + i + 1)
        return nn.Sequential(nn.Linear(a.features, a.hidden), nn.ReLU(), nn.Linear(a.hidden, 1)).to(dev)

    def train_loop(n_models: int, epochs: int):
        mses = []
        for i in range(n_models):
            m = make_model(i)
            opt = torch.optim.Adam(m.parameters(), lr=a.lr)
            for e in range(epochs):
                for idx in batches[e]:
                    opt.zero_grad(set_to_none=True)
                    loss = torch.mean((m(Xtr[idx]) - ytr[idx]) ** 2)
                    loss.backward()
                    opt.step()
            with torch.no_grad():
                mses.append(torch.mean((m(Xte) - yte) ** 2))
        sync()
        return [float(v) for v in torch.stack(mses).cpu()]

    def train_vmap(n_models: int, epochs: int):
        models = [make_model(i) for i in range(n_models)]
        params, buffers = stack_module_state(models)
        params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        base = copy.deepcopy(models[0]).to("meta")

        def fmodel(pr, bu, x):
            return functional_call(base, (pr, bu), (x,))

        ensemble = vmap(fmodel, in_dims=(0, 0, None))
        opt = torch.optim.Adam(list(params.values()), lr=a.lr)
        for e in range(epochs):
            for idx in batches[e]:
                opt.zero_grad(set_to_none=True)
                pred = ensemble(params, buffers, Xtr[idx])  # [N, batch, 1]
                loss = torch.mean((pred - ytr[idx]) ** 2, dim=(1, 2)).sum()
                loss.backward()
                opt.step()
        with torch.no_grad():
            mses = torch.mean((ensemble(params, buffers, Xte) - yte) ** 2, dim=(1, 2))
        sync()
        return [float(v) for v in mses.cpu()]

    def timed(fn, n_models=a.models):
        fn(min(2, n_models), 1)  # warm-up: CUDA context, cuBLAS, vmap tracing
        runs, last = [], None
        scale = a.models / n_models
        for _ in range(a.repeats):
            sync()
            t0 = time.perf_counter()
            last = fn(n_models, a.epochs)
            runs.append((time.perf_counter() - t0) * 1000 * scale)
        out = {"medianMs": statistics.median(runs), "minMs": min(runs), "maxMs": max(runs), "runsMs": runs}
        if n_models != a.models:
            out["scaledFrom"] = n_models
        return out, last

    loop_models = a.loop_models if 0 < a.loop_models < a.models else a.models
    loop, loop_mse = timed(train_loop, loop_models)
    vm, vmap_mse = timed(train_vmap)
    rel = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(loop_mse, vmap_mse[:loop_models]))
    print(json.dumps({
        "ok": True,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "shape": {"rows": a.rows, "features": a.features, "models": a.models, "hidden": a.hidden, "epochs": a.epochs,
                  "batchSize": a.batch_size, "lr": a.lr, "testSplit": a.test_split, "repeats": a.repeats},
        "loop": loop,
        "vmap": vm,
        "speedupVmapVsLoop": loop["medianMs"] / vm["medianMs"],
        "meanTestMse": statistics.fmean(vmap_mse),
        "maxRelMseDiffLoopVsVmap": rel,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
