#!/usr/bin/env bash
# Trainpool GPU check: on a bare Linux machine with an NVIDIA GPU (driver + CUDA, no Node, no
# network), probe the WebGPU adapter (a CPU adapter is REFUSED, never reported as the GPU), record
# nvidia-smi, run the article's shape on `webgpu` (NVIDIA's Vulkan driver through Dawn), and, when
# python3 can import torch with CUDA, the same 50 MLPs under PyTorch (a Python loop and a
# torch.func vmap ensemble) — then write ONE JSON with all of it. A few minutes in all.
# Then the article's trees experiment on the machine's own XGBoost with CUDA (`--backend xgboost`,
# TRAINPOOL_XGBOOST_DEVICE=cuda: 50 boosters, sequential vs a pool of 5, 10k–200k rows): run when a
# CUDA-enabled libxgboost is found (TRAINPOOL_XGBOOST_LIB, or python3's pip `xgboost`), otherwise
# the JSON and the log say there is none, and why.
# Then trees on the GPU (issue 13): the article's 50 GBDT models (100 rounds, depth 6) at 10 000 rows
# on `--backend webgpu` (Trainpool's WGSL trees engine), batched (all 50 per dispatch) and sequential
# (one per dispatch), and the ratio the issue asks for: batched vs XGBoost CUDA in a pool of 5 (from
# the XGBoost part, when it ran), else vs WebGPU sequential (target ≥ 10×), in the JSON's `trees`.
#
# Prepare (on a machine with the project, Node and network):
#   npm run build && ../shared/gpu/pack.sh gpu-pack
#   copy gpu-pack/ (and, if you changed it since the last commit, benchmarks/gpu-check.sh and
#   benchmarks/gpu-check/) to the GPU machine.
# On the GPU machine, in the folder that holds gpu-pack/:
#   gpu-pack/unpack.sh                      # lays out .gpu-node/ and .gpu-project/ here
#   .gpu-project/benchmarks/gpu-check.sh    # or: ./gpu-check.sh --project .gpu-project
# (unpack.sh puts the committed project, this script included, in .gpu-project/; this script
# finds .gpu-node/bin/node by itself.)
#
# Options:
#   --probe-only          probe the adapter (and find NVIDIA's Vulkan ICD), print it, stop
#   --out FILE            where the combined JSON goes (default: gpu-check-<UTC time>.json here);
#                         it is printed on stdout too
#   --project DIR         the project root (default: this script's parent, else ./.gpu-project)
#   --sizes/--models/--workers/--repeats/--epochs  the trainpool shape (default 10000/50/1,2/3/3)
#   --skip-torch          do not run the PyTorch reference
#   --allow-cpu-adapter   go on with a CPU (software) adapter — plumbing tests only; the JSON says so
#   --timeout S           limit for each of the trainpool, torch, xgboost and trees runs (default 900)
#   --skip-xgboost        do not run the XGBoost (CUDA) experiment
#   --xgb-sizes/--xgb-models/--xgb-workers/--xgb-repeats  its shape (default 10000,50000,100000,200000/50/5/1)
#   --skip-trees          do not run the trees on webgpu
#   --trees-sizes/--trees-models/--trees-repeats/--trees-rounds  their shape (default 10000/50/1/100)
# Exit: 0 done (see the JSON for each part's status); 2 bad usage or no node/project;
#       3 the WebGPU adapter is a CPU adapter (llvmpipe/lavapipe/SwiftShader); 4 no WebGPU adapter;
#       5 the trainpool run failed (the JSON is still written). The XGBoost and trees parts'
#       outcomes are in the JSON (`xgboost`, `trees`, `treesComparison`), as the PyTorch reference's is.
set -uo pipefail

probe_only=0; skip_torch=0; allow_cpu=0; out=""; project=""
sizes=10000; models=50; workers=1,2; repeats=3; epochs=3; limit=900
skip_xgb=0; xgb_sizes=10000,50000,100000,200000; xgb_models=50; xgb_workers=5; xgb_repeats=1
skip_trees=0; trees_sizes=10000; trees_models=50; trees_repeats=1; trees_rounds=100
die() { echo "gpu-check: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --probe-only) probe_only=1 ;;
    --skip-torch) skip_torch=1 ;;
    --allow-cpu-adapter) allow_cpu=1 ;;
    --out) out="${2:?--out needs a file}"; shift ;;
    --project) project="${2:?--project needs a folder}"; shift ;;
    --sizes) sizes="${2:?}"; shift ;;
    --models) models="${2:?}"; shift ;;
    --workers) workers="${2:?}"; shift ;;
    --repeats) repeats="${2:?}"; shift ;;
    --epochs) epochs="${2:?}"; shift ;;
    --timeout) limit="${2:?}"; shift ;;
    --skip-xgboost) skip_xgb=1 ;;
    --xgb-sizes) xgb_sizes="${2:?}"; shift ;;
    --xgb-models) xgb_models="${2:?}"; shift ;;
    --xgb-workers) xgb_workers="${2:?}"; shift ;;
    --xgb-repeats) xgb_repeats="${2:?}"; shift ;;
    --skip-trees) skip_trees=1 ;;
    --trees-sizes) trees_sizes="${2:?}"; shift ;;
    --trees-models) trees_models="${2:?}"; shift ;;
    --trees-repeats) trees_repeats="${2:?}"; shift ;;
    --trees-rounds) trees_rounds="${2:?}"; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "gpu-check: $*" >&2; }

# --- project and node ---------------------------------------------------------------------------
if [ -z "$project" ]; then
  if [ -f "$here/../bin/trainpool.js" ]; then project="$here/.."
  elif [ -f "./.gpu-project/bin/trainpool.js" ]; then project="./.gpu-project"
  else die "no project found: pass --project DIR (the folder with bin/trainpool.js)"; fi
fi
project="$(cd "$project" && pwd)" || die "no such project folder"
[ -f "$project/bin/trainpool.js" ] || die "$project has no bin/trainpool.js"
for nb in "$project/../.gpu-node/bin" "./.gpu-node/bin"; do
  if [ -x "$nb/node" ]; then PATH="$(cd "$nb" && pwd):$PATH"; break; fi
done
export PATH
command -v node >/dev/null 2>&1 || die "node not found (run gpu-pack/unpack.sh first, or put node on PATH)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/trainpool-gpu-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# --- Vulkan: point the loader at NVIDIA's ICD when it is not where the loader looks -------------
std_icd_dirs=(/etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d)
icd=""
for d in "${std_icd_dirs[@]}"; do [ -f "$d/nvidia_icd.json" ] && { icd="$d/nvidia_icd.json"; break; }; done
icd_set_by_us=0
if [ -z "$icd" ] && [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  for c in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/icd.d/nvidia_icd.json \
           /usr/lib/x86_64-linux-gnu/nvidia/nvidia_icd.json /opt/nvidia/nvidia_icd.json; do
    [ -f "$c" ] && { icd="$c"; break; }
  done
  if [ -z "$icd" ]; then
    icd="$(timeout 30 find /usr /etc /opt /run -xdev -name nvidia_icd.json -type f 2>/dev/null | head -n 1 || true)"
  fi
  if [ -n "$icd" ]; then
    export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"   # new and old loader spellings
    icd_set_by_us=1
    log "Vulkan: using NVIDIA's ICD $icd (VK_DRIVER_FILES)"
  else
    log "Vulkan: no nvidia_icd.json found (the adapter probe will tell what Dawn sees)"
  fi
fi

# --- WebGPU adapter probe (Dawn, the `webgpu` package) ------------------------------------------
probe_js='const{create,globals}=require("webgpu");Object.assign(globalThis,globals);create([]).requestAdapter({powerPreference:"high-performance"}).then(a=>{const i=(a&&a.info)||{};console.log("ADAPTER_JSON "+JSON.stringify(a?{found:true,vendor:i.vendor||"",architecture:i.architecture||"",device:i.device||"",description:i.description||"",isFallbackAdapter:!!a.isFallbackAdapter}:{found:false}));process.exit(0)},e=>{console.log("ADAPTER_JSON "+JSON.stringify({found:false,error:String(e)}));process.exit(0)})'
(cd "$project" && timeout 120 node -e "$probe_js") >"$work/probe.out" 2>"$work/probe.err"
adapter_json="$(sed -n 's/^ADAPTER_JSON //p' "$work/probe.out" | tail -n 1)"
if [ -z "$adapter_json" ]; then
  log "the WebGPU adapter probe failed:"; tail -n 20 "$work/probe.err" "$work/probe.out" >&2
  exit 4
fi
case "$adapter_json" in
  *'"found":false'*) log "no WebGPU adapter: $adapter_json"; log "install NVIDIA's Vulkan ICD (nvidia_icd.json) or set VK_DRIVER_FILES"; exit 4 ;;
esac
software=0
if printf '%s' "$adapter_json" | grep -Eqi 'llvmpipe|lavapipe|swiftshader|"architecture":"software"|microsoft basic render|"isFallbackAdapter":true'; then
  software=1
fi
printf '%s\n' "$adapter_json" >"$work/adapter.json"
if [ $software = 1 ]; then
  desc="$(printf '%s' "$adapter_json" | sed -n 's/.*"description":"\([^"]*\)".*/\1/p')"
  msg="the WebGPU adapter is a CPU (software) adapter, not the GPU: ${desc:-$adapter_json}"
  if [ $allow_cpu = 0 ]; then
    echo "gpu-check: REFUSED: $msg." >&2
    echo "gpu-check: point the Vulkan loader at NVIDIA's driver, e.g. export VK_DRIVER_FILES=/path/to/nvidia_icd.json (find / -name nvidia_icd.json), then rerun." >&2
    exit 3
  fi
  log "WARNING: $msg (--allow-cpu-adapter: going on; these are NOT GPU numbers)"
fi
log "adapter: $adapter_json"
if [ $probe_only = 1 ]; then printf '%s\n' "$adapter_json"; exit 0; fi

# --- nvidia-smi -----------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi -L >"$work/nvidia-smi-L.txt" 2>&1 || true
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv,noheader >"$work/nvidia-smi-query.txt" 2>&1 || true
else
  log "nvidia-smi not found: no GPU list and no GPU telemetry"
fi
cat >"$work/meta.json" <<META
{"startedAt":"$started","softwareAdapter":$([ $software = 1 ] && echo true || echo false),"options":{"sizes":"$sizes","models":"$models","workers":"$workers","repeats":$repeats,"epochs":$epochs,"allowCpuAdapter":$([ $allow_cpu = 1 ] && echo true || echo false),
 "trees":{"skip":$([ $skip_trees = 1 ] && echo true || echo false),"sizes":"$trees_sizes","models":"$trees_models","repeats":$trees_repeats,"rounds":$trees_rounds}},
 "vulkan":{"VK_DRIVER_FILES":"${VK_DRIVER_FILES:-}","nvidiaIcd":"$icd","setByGpuCheck":$([ $icd_set_by_us = 1 ] && echo true || echo false)}}
META

# --- trainpool: the article's shape on webgpu -----------------------------------------------------
log "trainpool bench --backend webgpu --sizes $sizes --models $models --workers $workers --repeats $repeats --epochs $epochs"
t0=$(date +%s.%N)
(cd "$project" && timeout "$limit" node bin/trainpool.js bench --backend webgpu --sizes "$sizes" --models "$models" \
  --workers "$workers" --repeats "$repeats" --epochs "$epochs" --no-save --json "$work/trainpool.json" 2>&1) \
  | tee "$work/trainpool.log" >&2
tp_exit=${PIPESTATUS[0]}
t1=$(date +%s.%N)
echo "$tp_exit" >"$work/trainpool.exit"
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$work/trainpool.wall_s"
[ $tp_exit = 0 ] || log "trainpool exited $tp_exit (124: it ran past --timeout $limit s)"

# --- PyTorch reference ------------------------------------------------------------------------------
if [ $skip_torch = 1 ]; then
  echo "--skip-torch" >"$work/torch.skipped"
elif ! command -v python3 >/dev/null 2>&1; then
  echo "python3 not found" >"$work/torch.skipped"
elif ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  echo "python3 cannot import torch with CUDA available" >"$work/torch.skipped"
else
  log "PyTorch reference: $models MLPs as a Python loop and as a torch.func vmap ensemble"
  first_size="${sizes%%,*}"; first_models="${models%%,*}"
  timeout "$limit" python3 "$project/benchmarks/gpu-check/torch_reference.py" --rows "$first_size" --models "$first_models" \
    --repeats "$repeats" --epochs "$epochs" >"$work/torch.json" 2>"$work/torch.log"
  torch_exit=$?
  [ $torch_exit = 0 ] || { log "the PyTorch reference exited $torch_exit:"; tail -n 20 "$work/torch.log" >&2; }
fi

# --- XGBoost on CUDA: the article's trees on the machine's own libxgboost -------------------------
if [ $skip_xgb = 1 ]; then
  echo "--skip-xgboost" >"$work/xgboost.skipped"
else
  log "XGBoost (CUDA): trainpool bench --model gbdt --backend xgboost --preset article --sizes $xgb_sizes --models $xgb_models --workers $xgb_workers --repeats $xgb_repeats (TRAINPOOL_XGBOOST_DEVICE=cuda)"
  (cd "$project" && TRAINPOOL_XGBOOST_DEVICE=cuda timeout "$limit" node bin/trainpool.js bench --model gbdt --backend xgboost --preset article \
    --sizes "$xgb_sizes" --models "$xgb_models" --workers "$xgb_workers" --repeats "$xgb_repeats" --no-save --json "$work/xgboost.json" 2>&1) \
    | tee "$work/xgboost.log" >&2
  xgb_exit=${PIPESTATUS[0]}
  echo "$xgb_exit" >"$work/xgboost.exit"
  if [ "$xgb_exit" != 0 ] && grep -q 'backend xgboost is not available here' "$work/xgboost.log"; then
    why="$(sed -n 's/.*backend xgboost is not available here: //p' "$work/xgboost.log" | tail -n 1)"
    echo "no CUDA-enabled libxgboost here: $why" >"$work/xgboost.skipped"
    log "XGBoost (CUDA): not run: no CUDA-enabled libxgboost here ($why)"
  elif [ "$xgb_exit" != 0 ]; then
    log "the XGBoost run exited $xgb_exit (124: it ran past --timeout $limit s)"
  fi
fi

# --- trees on the GPU: the article's GBDT models on webgpu (WGSL), batched vs sequential ------------
if [ $skip_trees = 1 ]; then
  echo "--skip-trees" >"$work/trees.skipped"
else
  log "trees on webgpu: trainpool bench --model gbdt --backend webgpu --preset article --sizes $trees_sizes --models $trees_models --rounds $trees_rounds --strategies sequential,batched --workers 1 --repeats $trees_repeats"
  t0=$(date +%s.%N)
  (cd "$project" && timeout "$limit" node bin/trainpool.js bench --model gbdt --backend webgpu --preset article --sizes "$trees_sizes" \
    --models "$trees_models" --rounds "$trees_rounds" --strategies sequential,batched --workers 1 --repeats "$trees_repeats" \
    --no-save --json "$work/trees.json" 2>&1) | tee "$work/trees.log" >&2
  trees_exit=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  echo "$trees_exit" >"$work/trees.exit"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$work/trees.wall_s"
  [ "$trees_exit" = 0 ] || log "the trees run exited $trees_exit (124: it ran past --timeout $limit s)"
fi

# --- one JSON -----------------------------------------------------------------------------------------
[ -n "$out" ] || out="gpu-check-$(date -u +%Y%m%dT%H%M%SZ).json"
node "$project/benchmarks/gpu-check/combine.mjs" "$work" >"$out" || die "could not combine the results"
cat "$out"
log "wrote $out"
trees_note="$(node -e 'const c=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));if(c.treesComparison)console.log(c.treesComparison.note)' "$out" 2>/dev/null)"
[ -z "$trees_note" ] || log "trees: $trees_note"
[ $tp_exit = 0 ] || exit 5
exit 0
