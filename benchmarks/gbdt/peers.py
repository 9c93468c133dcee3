#!/usr/bin/env python3
"""The Python peers of Trainpool's trees engine: XGBoost (hist) and scikit-learn's
HistGradientBoostingRegressor / HistGradientBoostingClassifier, one thread, driven line by line by
benchmarks/gbdt/peers.mts.

Protocol: JSON lines. On start this prints {"xgboost": version | null, "sklearn": version | null,
"errors": {...}} (a peer that cannot be imported is null, never fatal). Then, one request per line
on stdin, one JSON reply per line on stdout:
  {"cmd": "load", "x": PATH, "y": PATH, "rows": N, "train": T, "features": F}
      x: row-major little-endian float32 [N × F], y: float32 [N]; the first T rows train, the rest test.
      Reply {"loadSeconds": s}. A small warm-up fit of each peer runs here (not timed).
  {"cmd": "fit", "engine": "xgboost" | "sklearn", "params": {rounds, maxDepth, eta, lambda, alpha,
      gamma, minChildWeight, maxBin, baseScore, seed, objective?: "regression" | "binary" | "multiclass",
      classes?: K}}
      Reply {"seconds": wall, "cpuSeconds": cpu, "mse": test MSE} — a classifier's: {"seconds", "cpuSeconds",
      "logloss", "accuracy"} (scikit-learn's log_loss on the predicted probabilities; labels are 0 … K−1).
  {"cmd": "quit"}
What is timed (the same definition as the Trainpool column: binning + all rounds, from float
features already in memory): XGBoost — xgb.train on a DMatrix built outside the timer, fresh for
every fit (1.7 builds and caches its hist bin index inside the first train on a DMatrix, so a reused
one would skip the binning); scikit-learn — fit(X, y) on float64 arrays converted outside the timer
(fit bins every time). Prediction of the test rows for the MSE is outside the timer.
"""
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

errors = {}
try:
    import xgboost as xgb
except Exception as e:  # noqa: BLE001
    xgb = None
    errors["xgboost"] = str(e)
try:
    import sklearn
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.metrics import log_loss
except Exception as e:  # noqa: BLE001
    sklearn = None
    errors["sklearn"] = str(e)


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def objective_of(p):
    return p.get("objective", "regression")


def xgb_objective(p):
    o = objective_of(p)
    if o == "binary":
        return {"objective": "binary:logistic"}
    if o == "multiclass":
        return {"objective": "multi:softprob", "num_class": p["classes"]}
    return {"objective": "reg:squarederror"}


def xgb_params(p):
    return {
        **xgb_objective(p),
        "tree_method": "hist",
        "grow_policy": "depthwise",
        "nthread": 1,
        "max_depth": p["maxDepth"],
        "eta": p["eta"],
        "lambda": p["lambda"],
        "alpha": p["alpha"],
        "gamma": p["gamma"],
        "min_child_weight": p["minChildWeight"],
        "max_bin": p["maxBin"],
        "subsample": 1,
        "colsample_bytree": 1,
        "base_score": p["baseScore"],
        "seed": p.get("seed", 0),
        "verbosity": 0,
    }


def sklearn_model(p):
    # the settings: sklearn's max_bins is at most 255 (one more bin is kept for missing values);
    # its classifier's loss is log loss (binary or multinomial, read from the labels)
    classifier = objective_of(p) != "regression"
    kind = HistGradientBoostingClassifier if classifier else HistGradientBoostingRegressor
    return kind(
        loss="log_loss" if classifier else "squared_error",
        max_iter=p["rounds"],
        max_depth=p["maxDepth"],
        max_leaf_nodes=None,
        max_bins=min(255, p["maxBin"]),
        l2_regularization=p["lambda"],
        min_samples_leaf=1,
        early_stopping=False,
        learning_rate=p["eta"],
        random_state=p.get("seed", 0),
    )


class Data:
    def __init__(self, req):
        n, t, f = req["rows"], req["train"], req["features"]
        x = np.fromfile(req["x"], dtype="<f4").reshape(n, f)
        y = np.fromfile(req["y"], dtype="<f4")
        self.xtr32, self.ytr32 = x[:t], y[:t]
        self.xte32, self.yte = x[t:], y[t:].astype(np.float64)
        self.xtr64 = np.ascontiguousarray(self.xtr32, dtype=np.float64)
        self.ytr64 = self.ytr32.astype(np.float64)
        self.xte64 = np.ascontiguousarray(self.xte32, dtype=np.float64)


def fit(data, engine, p):
    if engine == "xgboost":
        dtrain = xgb.DMatrix(data.xtr32, label=data.ytr32, missing=np.nan, nthread=1)
        w0, c0 = time.perf_counter(), time.process_time()
        booster = xgb.train(xgb_params(p), dtrain, num_boost_round=p["rounds"])
        seconds, cpu = time.perf_counter() - w0, time.process_time() - c0
        pred = booster.predict(xgb.DMatrix(data.xte32, missing=np.nan, nthread=1)) if len(data.yte) else None
    else:
        model = sklearn_model(p)
        w0, c0 = time.perf_counter(), time.process_time()
        model.fit(data.xtr64, data.ytr64)
        seconds, cpu = time.perf_counter() - w0, time.process_time() - c0
        if objective_of(p) == "regression":
            pred = model.predict(data.xte64) if len(data.yte) else None
        else:
            proba = model.predict_proba(data.xte64) if len(data.yte) else None
            pred = None if proba is None else proba[:, 1] if objective_of(p) == "binary" else proba
    if objective_of(p) != "regression":
        return {"seconds": seconds, "cpuSeconds": cpu, **class_scores(p, pred, data.yte)}
    mse = float(np.mean((pred.astype(np.float64) - data.yte) ** 2)) if pred is not None else None
    return {"seconds": seconds, "cpuSeconds": cpu, "mse": mse}


def class_scores(p, pred, y):
    """Log loss and accuracy of a classifier's probabilities (binary: p(class 1); multiclass: [rows, K])."""
    if pred is None:
        return {"logloss": None, "accuracy": None}
    labels = y.astype(np.int64)
    if objective_of(p) == "binary":
        return {"logloss": float(log_loss(labels, pred, labels=[0, 1])), "accuracy": float(np.mean((pred > 0.5) == labels))}
    k = p["classes"]
    return {"logloss": float(log_loss(labels, pred, labels=list(range(k)))), "accuracy": float(np.mean(pred.argmax(1) == labels))}


def warm_up(data, p):
    small = {**p, "rounds": 2}
    head = Data.__new__(Data)
    k = min(1000, len(data.ytr32))
    head.xtr32, head.ytr32, head.xte32, head.yte = data.xtr32[:k], data.ytr32[:k], data.xte32[:0], data.yte[:0]
    head.xtr64, head.ytr64, head.xte64 = data.xtr64[:k], data.ytr64[:k], data.xte64[:0]
    if xgb is not None:
        fit(head, "xgboost", small)
    if sklearn is not None:
        fit(head, "sklearn", small)


def main():
    reply(
        {
            "xgboost": xgb.__version__ if xgb is not None else None,
            "sklearn": sklearn.__version__ if sklearn is not None else None,
            "errors": errors,
        }
    )
    data = None
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            if req["cmd"] == "quit":
                break
            if req["cmd"] == "load":
                t0 = time.perf_counter()
                data = Data(req)
                load = time.perf_counter() - t0
                if "warmUp" in req:
                    warm_up(data, req["warmUp"])
                reply({"loadSeconds": load})
            elif req["cmd"] == "fit":
                reply(fit(data, req["engine"], req["params"]))
            else:
                reply({"error": f"unknown command {req['cmd']}"})
        except Exception as e:  # noqa: BLE001
            reply({"error": f"{type(e).__name__}: {e}"})


if __name__ == "__main__":
    main()
