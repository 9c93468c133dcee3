#!/usr/bin/env python3
"""Train real XGBoost (1.7.x, tree_method=hist, nthread=1) on data passed as files; print JSON.

Usage: xgb_reference.py SPEC.json

SPEC.json:
  {
    "train": {"x": "xtrain.f32", "y": "ytrain.f32", "rows": 8000, "features": 100},
    "test":  {"x": "xtest.f32",  "y": "ytest.f32",  "rows": 2000},
    "models": [ {"rounds": 100, "maxDepth": 6, "eta": 0.1, "lambda": 1, "alpha": 0, "gamma": 0,
                 "minChildWeight": 1, "maxBin": 256, "subsample": 1, "colsampleBytree": 1,
                 "baseScore": 0.5, "seed": 0,
                 "objective": "regression" | "binary" | "multiclass", "classes": K}, ... ],
    "trees": "first" | "all" | "none"      (default "first"),
    "predictions": false                   (true: each model's test outputs too)
  }
objective: reg:squarederror (default), binary:logistic, or multi:softprob with num_class = classes
(labels are class indices).
x files: row-major little-endian float32 (NaN = missing); y files: float32.

Output (stdout, one JSON object):
  {"xgboost": "1.7.4", "dmatrixSeconds": s,
   "models": [{"mse": m, "seconds": s, "cpuSeconds": c, "trees": [ {node arrays} ],
               "predictions": [...] (with "predictions": the test outputs, row-major [rows, K])}]}
mse: of the predictions; a classifier's: of its probabilities against the one-hot label.
Each tree, nodes in XGBoost's order (breadth-first for depth-wise growth):
  {"left": [...], "right": [...], "feature": [...] (-1 = leaf), "threshold": [...] (split value;
   leaf value for leaves), "defaultLeft": [...]}
"""
import json
import sys
import time

import numpy as np
import xgboost as xgb


def load(path, shape):
    a = np.fromfile(path, dtype="<f4")
    return a.reshape(shape)


OBJECTIVES = {"regression": "reg:squarederror", "binary": "binary:logistic", "multiclass": "multi:softprob"}


def booster_params(m):
    objective = m.get("objective", "regression")
    extra = {"num_class": m["classes"]} if objective == "multiclass" else {}
    return {
        **extra,
        "objective": OBJECTIVES[objective],
        "tree_method": "hist",
        "grow_policy": "depthwise",
        "nthread": 1,
        "max_depth": m.get("maxDepth", 6),
        "eta": m.get("eta", 0.1),
        "lambda": m.get("lambda", 1),
        "alpha": m.get("alpha", 0),
        "gamma": m.get("gamma", 0),
        "min_child_weight": m.get("minChildWeight", 1),
        "max_bin": m.get("maxBin", 256),
        "subsample": m.get("subsample", 1),
        "colsample_bytree": m.get("colsampleBytree", 1),
        "base_score": m.get("baseScore", 0.5),
        "seed": m.get("seed", 0),
        "verbosity": 0,
    }


def trees_of(booster, which):
    if which == "none":
        return []
    model = json.loads(booster.save_raw(raw_format="json"))
    trees = model["learner"]["gradient_booster"]["model"]["trees"]
    if which == "first":
        trees = trees[:1]
    out = []
    for t in trees:
        left = t["left_children"]
        out.append(
            {
                "left": left,
                "right": t["right_children"],
                "feature": [(-1 if left[i] == -1 else f) for i, f in enumerate(t["split_indices"])],
                "threshold": t["split_conditions"],
                "defaultLeft": t["default_left"],
            }
        )
    return out


def main():
    spec = json.load(open(sys.argv[1]))
    tr, te = spec["train"], spec["test"]
    F = tr["features"]
    xtr = load(tr["x"], (tr["rows"], F))
    ytr = load(tr["y"], (tr["rows"],))
    xte = load(te["x"], (te["rows"], F))
    yte = load(te["y"], (te["rows"],)).astype(np.float64)
    t0 = time.perf_counter()
    dtrain = xgb.DMatrix(xtr, label=ytr, missing=np.nan, nthread=1)
    dtest = xgb.DMatrix(xte, missing=np.nan, nthread=1)
    dm_seconds = time.perf_counter() - t0
    results = []
    for m in spec["models"]:
        params = booster_params(m)
        w0, c0 = time.perf_counter(), time.process_time()
        booster = xgb.train(params, dtrain, num_boost_round=m.get("rounds", 100))
        seconds, cpu = time.perf_counter() - w0, time.process_time() - c0
        pred = booster.predict(dtest)
        out = pred.astype(np.float64)
        objective = m.get("objective", "regression")
        if objective == "multiclass":
            target = np.eye(m["classes"])[yte.astype(np.int64)]
            mse = float(np.mean(np.sum((out - target) ** 2, axis=1)))
        else:
            mse = float(np.mean((out - yte) ** 2))
        result = {
            "mse": mse,
            "seconds": seconds,
            "cpuSeconds": cpu,
            "trees": trees_of(booster, spec.get("trees", "first")),
        }
        if spec.get("predictions"):
            result["predictions"] = [float(v) for v in pred.reshape(-1)]
        results.append(result)
    print(json.dumps({"xgboost": xgb.__version__, "dmatrixSeconds": dm_seconds, "models": results}))


if __name__ == "__main__":
    main()
