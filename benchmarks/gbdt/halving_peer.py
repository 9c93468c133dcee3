#!/usr/bin/python3
"""scikit-learn's successive halving over the trees grid of issue 39, for benchmarks/gbdt/halving.mts.

HalvingGridSearchCV (scikit-learn 1.2, still experimental there) on HistGradientBoostingRegressor with
its resource set to the boosting iterations (resource='max_iter', max_resources = the rounds), factor
and first rung as given, the folds given as index lists (Trainpool's own contiguous folds of the
training rows, so both search the same held-out rows), scoring by MSE, n_jobs as given.

The grid is Trainpool's 3 eta x 3 depth x 3 subsample x 2 min-child-weight. scikit-learn 1.2's HGB has
no row subsampling: that axis becomes three copies of l2_regularization = 1 (Trainpool's lambda), so
the search still holds 54 candidates and does the same count of fits. min_child_weight maps to
min_samples_leaf: a squared-error row's hessian is 1, so a leaf's hessian sum is its row count.

Usage: halving_peer.py REQUEST.json   (prints one JSON line)
  request: {"x": PATH, "y": PATH, "rows": N, "features": F, "folds": [[begin, end], ...],
            "grid": {"eta": [...], "maxDepth": [...], "subsample": [...], "minChildWeight": [...]},
            "rounds": R, "factor": 3, "minRounds": r | null (null: scikit-learn's "exhaust",
            the first rung that makes the last one use all R), "jobs": 2, "maxBin": 256, "seed": S}
  reply: {"sklearn": version, "seconds": wall, "best": {params}, "bestValidationMse": m,
          "candidates": [per rung count], "resources": [per rung iterations], "fits": total fits,
          "scores": [{params, "validationMse": m}] for every candidate of the last rung (the full
          grid's, when the first rung is the rounds: what a halving's pick is judged by)}
"""
import json
import sys
import time

import numpy as np


def main():
    req = json.load(open(sys.argv[1]))
    import sklearn
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.model_selection import HalvingGridSearchCV

    n, f = req["rows"], req["features"]
    x = np.fromfile(req["x"], dtype="<f4").reshape(n, f).astype(np.float64)
    y = np.fromfile(req["y"], dtype="<f4").astype(np.float64)
    every = np.arange(n)
    cv = [(np.concatenate([every[:b], every[e:]]), every[b:e]) for b, e in req["folds"]]
    g = req["grid"]
    grid = {
        "learning_rate": g["eta"],
        "max_depth": g["maxDepth"],
        "l2_regularization": [1.0] * len(g["subsample"]),
        "min_samples_leaf": [int(v) for v in g["minChildWeight"]],
    }
    model = HistGradientBoostingRegressor(
        max_bins=min(255, req["maxBin"] - 1),
        early_stopping=False,
        random_state=req["seed"],
    )
    search = HalvingGridSearchCV(
        model,
        grid,
        factor=req["factor"],
        resource="max_iter",
        max_resources=req["rounds"],
        min_resources=req["minRounds"] if req.get("minRounds") is not None else "exhaust",
        cv=cv,
        scoring="neg_mean_squared_error",
        n_jobs=req["jobs"],
        refit=False,
        random_state=req["seed"],
    )
    started = time.perf_counter()
    search.fit(x, y)
    seconds = time.perf_counter() - started
    best = search.best_params_
    results = search.cv_results_
    last = [i for i, it in enumerate(results["iter"]) if it == max(results["iter"])]
    print(
        json.dumps(
            {
                "sklearn": sklearn.__version__,
                "seconds": seconds,
                "best": {
                    "eta": best["learning_rate"],
                    "maxDepth": best["max_depth"],
                    "minChildWeight": best["min_samples_leaf"],
                },
                "bestValidationMse": -float(search.best_score_),
                "candidates": [int(c) for c in search.n_candidates_],
                "resources": [int(r) for r in search.n_resources_],
                "fits": int(sum(c * len(cv) for c in search.n_candidates_)),
                "scores": [
                    {
                        "eta": results["params"][i]["learning_rate"],
                        "maxDepth": results["params"][i]["max_depth"],
                        "minChildWeight": results["params"][i]["min_samples_leaf"],
                        "validationMse": -float(results["mean_test_score"][i]),
                    }
                    for i in last
                ],
            }
        )
    )


if __name__ == "__main__":
    main()
