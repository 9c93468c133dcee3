#!/usr/bin/env python3
# PyTorch CPU on the MLP's shape, side by side with Trainpool in `npm run bench` (benchmarks/run.mjs):
# N regressors features → hidden (ReLU) → 1, Adam, mini-batches in one shuffled order per epoch shared
# by all models, the loss a SUM of per-model mean squared errors (so no model's gradient is divided
# by N), timed two ways with one intra-op thread (torch.set_num_threads):
#   loop    — the models one after another, each an nn.Sequential with its own torch.optim.Adam;
#   stacked — all N in one program: the first layer is one GEMM of the batch against all models'
#             weights side by side [F, N·H] (the layout Trainpool's batched program uses), the output
#             layer a multiply-and-sum, one Adam over the stacked parameters.
# With --lrs a,b,… model i trains with learning rate lrs[i ÷ (N ÷ len(lrs))] (a model set's grid of
# learning rates × seeds): the loop gives each model its own torch.optim.Adam; the stacked program
# steps Adam by hand with a per-model learning-rate vector laid over the stacked parameters (what
# users of torch.func are told to write: functorch #782, #996).
# With --objective binary the models are classifiers: a 0/1 target (the regression target above its
# median), one logit a model, BCEWithLogitsLoss (the stacked program: the same loss per model, summed).
# Same data sizes, epochs and hyperparameters as Trainpool's run; not the same numbers (PyTorch's own
# init and random data): this is a speed reference. Prints one JSON line.
# Usage: python3 benchmarks/pytorch/mlp.py --rows 10000 --models 50 --hidden 64 --epochs 3 --batch-size 512 --repeats 3
import argparse
import json
import time

import torch

p = argparse.ArgumentParser()
p.add_argument('--rows', type=int, default=10000)
p.add_argument('--features', type=int, default=100)
p.add_argument('--models', type=int, default=50)
p.add_argument('--hidden', type=int, default=64)
p.add_argument('--epochs', type=int, default=3)
p.add_argument('--batch-size', type=int, default=512)
p.add_argument('--lr', type=float, default=0.01)
p.add_argument('--lrs', type=str, default='', help='comma-separated learning rates, one per configuration (models split evenly)')
p.add_argument('--test-split', type=float, default=0.2)
p.add_argument('--repeats', type=int, default=3)
p.add_argument('--threads', type=int, default=1)
p.add_argument('--objective', choices=['regression', 'binary'], default='regression')
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)

test = round(a.rows * a.test_split)
train = a.rows - test
F, H, N, B = a.features, a.hidden, a.models, a.batch_size
X = torch.rand(a.rows, F)
teacher = torch.randn(F, 1) / F ** 0.5
Y = torch.tanh(X @ teacher * 3) + 0.1 * torch.randn(a.rows, 1)
if a.objective == 'binary':
    Y = (Y > Y.median()).float()
Xtr, Ytr, Xte, Yte = X[:train], Y[:train], X[train:], Y[train:]


def model_loss(out, y):
    """each model's mean loss over the rows: out, y [rows, models] (or [rows, 1])"""
    if a.objective == 'binary':
        return torch.nn.functional.binary_cross_entropy_with_logits(out, y.expand_as(out), reduction='none').mean(0)
    return ((out - y) ** 2).mean(0)
orders = [torch.randperm(train) for _ in range(a.epochs)]
# foreach=False: PyTorch 1.13's per-tensor Adam, faster here than its default multi-tensor path for
# these few small tensors (measured 0.53 vs 1.03 ms per one-model step): PyTorch at its best
ADAM = dict(lr=a.lr, betas=(0.9, 0.999), eps=1e-7, foreach=False)
LRS = [float(x) for x in a.lrs.split(',')] if a.lrs else [a.lr]
# model i's learning rate: configurations in order, each N / len(LRS) models (seeds)
lr_of = [LRS[min(len(LRS) - 1, i * len(LRS) // N)] for i in range(N)]


def loop():
    mses = []
    for i in range(N):
        torch.manual_seed(i + 1)
        model = torch.nn.Sequential(torch.nn.Linear(F, H), torch.nn.ReLU(), torch.nn.Linear(H, 1))
        opt = torch.optim.Adam(model.parameters(), **{**ADAM, 'lr': lr_of[i]})
        for order in orders:
            for s in range(0, train, B):
                idx = order[s:s + B]
                opt.zero_grad(set_to_none=True)
                loss = model_loss(model(Xtr[idx]), Ytr[idx]).sum()
                loss.backward()
                opt.step()
        with torch.no_grad():
            mses.append(model_loss(model(Xte), Yte).item())
    return mses


def stacked():
    torch.manual_seed(1)
    lim1, lim2 = (6 / (F + H)) ** 0.5, (6 / (H + 1)) ** 0.5
    w1 = ((torch.rand(F, N * H) * 2 - 1) * lim1).requires_grad_()
    b1 = torch.zeros(N * H, requires_grad=True)
    w2 = ((torch.rand(N, H) * 2 - 1) * lim2).requires_grad_()
    b2 = torch.zeros(N, requires_grad=True)
    params = [w1, b1, w2, b2]
    uniform = len(set(lr_of)) == 1
    opt = torch.optim.Adam(params, **ADAM) if uniform else None
    # per-model learning rates laid over each stacked parameter (w1/b1: a model's H columns; w2, b2: its row)
    lr = torch.tensor(lr_of)
    lr_layout = [lr.repeat_interleave(H).view(1, N * H), lr.repeat_interleave(H), lr.view(N, 1), lr]
    state = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    step = [0]

    def adam_per_model():
        step[0] += 1
        c1, c2 = 1 - 0.9 ** step[0], 1 - 0.999 ** step[0]
        with torch.no_grad():
            for p, (m, v), lr_p in zip(params, state, lr_layout):
                m.mul_(0.9).add_(p.grad, alpha=0.1)
                v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                p.sub_(m * (lr_p / c1) / ((v / c2).sqrt_() + 1e-7))
                p.grad = None

    def predict(x):
        h = torch.relu(torch.addmm(b1, x, w1)).view(x.shape[0], N, H)
        return (h * w2).sum(-1) + b2  # [rows, N]

    for order in orders:
        for s in range(0, train, B):
            idx = order[s:s + B]
            if opt:
                opt.zero_grad(set_to_none=True)
            loss = model_loss(predict(Xtr[idx]), Ytr[idx]).sum()
            loss.backward()
            opt.step() if opt else adam_per_model()
    with torch.no_grad():
        return model_loss(predict(Xte), Yte).tolist()


def timed(fn):
    fn()  # warm-up (allocator, kernels), as Trainpool warms its workers before the clock
    times = []
    for _ in range(a.repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return {'medianMs': times[len(times) // 2] * 1000, 'minMs': times[0] * 1000, 'maxMs': times[-1] * 1000}


print(json.dumps({'torch': torch.__version__, 'threads': torch.get_num_threads(), 'rows': a.rows, 'train': train, 'models': N, 'lrs': LRS, 'objective': a.objective,
                  'loop': timed(loop), 'stacked': timed(stacked)}))
