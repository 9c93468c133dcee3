#!/usr/bin/env bash
# Trainpool GPU check: on a bare Linux machine with an NVIDIA GPU (driver + CUDA, no Node, no
# network), probe the WebGPU adapter (a CPU adapter is REFUSED, never reported as the GPU), record
# nvidia-smi, then run a fixed list of parts — each a `trainpool bench` (or the PyTorch reference)
# with its own time limit — and write ONE JSON (rewritten after every part, so a cut-off run still
# leaves what it measured). Parts, in priority order (a part that would overrun --budget is skipped
# and said so; --plan prints each part's expected time and limit):
#   mlp-10k, mlp-200k   the article's 50 MLPs (100→64→1, 3 epochs) on `webgpu`: every strategy
#   mlp-busy            50 MLPs × 200 000 rows batched for 1 000 epochs: ≥ 15 s of device work, so
#                       ≥ 10 GPU-busy samples at 1 Hz (the JSON says whether it got them)
#   torch-10k, torch-200k  PyTorch CUDA: a Python loop and a torch.func vmap ensemble (the loop at
#                       200 000 rows trains 5 models, its time scaled to 50 and said so)
#   trees-10k, trees-200k  the article's 50 GBDT models (100 rounds, depth 6) batched on `webgpu`
#   trees-seq           10 GBDT models sequential on `webgpu` (time a model)
#   cpu-scaling         onnxruntime on the box's CPU: 64 models, pool W = 1, 2, 4, 8, 16
#   trees-profile       where the WGSL trees' time goes: per-kernel device ms (Dawn's timestamp
#                       quantisation asked off, and whether it took effect said), histogram
#                       updates/s, counters (benchmarks/gbdt/webgpu-profile.mts --suite, bundled by
#                       build:gpu-check)
#   calibrate, auto     `trainpool calibrate`, then what `--backend auto` picks at the article's shape
#   mlp-all             every backend but plain-JS cpu (`--backend all` less cpu: minutes at this
#                       shape) at the article's shape, batched, with its verdict
#   trees-cpu-200k      Trainpool's CPU trees engine, 48 models, pool W=16, 200 000 rows
# Each part's JSON keeps its summary, the device counters per measurement (dispatches, submits,
# readbacks, bytes read back, host ms between submits) and GPU busy from its telemetry; `targets`
# checks the numbers issues 32 and 33 ask for.
#
# Prepare (on a machine with the project, Node and network):
#   npm run build:gpu-check && ../shared/gpu/pack.sh gpu-pack
# On the GPU machine, in the folder that holds gpu-pack/:
#   eval "$(gpu-pack/unpack.sh)"            # lays out .gpu-node/ and .gpu-project/, cds into the project
#   benchmarks/gpu-check.sh                 # or: ./gpu-check.sh --project .gpu-project
#
# Options:
#   --probe-only          probe the adapter (and find NVIDIA's Vulkan ICD), print it, stop
#   --plan                print the parts' expected times and limits and the budget arithmetic (JSON), stop
#   --out FILE            where the combined JSON goes (default: gpu-check-<UTC time>.json here)
#   --project DIR         the project root (default: this script's parent, else ./.gpu-project)
#   --only PARTS          run only these parts (comma-separated names from the list above)
#   --skip PARTS          run all but these parts
#   --budget S            seconds for the whole check from its start, probe included (default 400:
#                         with unpacking and a part's kill grace it fits a 480 s device command)
#   --timeout S           every part's limit is S seconds instead of its own (see --plan)
#   --quick               tiny shapes for every part (plumbing checks on lavapipe; not GPU numbers)
#   --skip-torch          do not run the PyTorch reference
#   --allow-cpu-adapter   go on with a CPU (software) adapter — plumbing tests only; the JSON says so
# Exit: 0 done (see the JSON for each part's status); 2 bad usage or no node/project;
#       3 the WebGPU adapter is a CPU adapter (llvmpipe/lavapipe/SwiftShader); 4 no WebGPU adapter;
#       5 the project is not built (out/main/cli.js, or out/bench/webgpu-profile.mjs for trees-profile).
set -uo pipefail

# --- the plan: one home for the budget arithmetic (docs/benchmarks.md explains the numbers) ---------
# The device command may last 480 s: unpacking (`eval "$(gpu-pack/unpack.sh)"`: 12.5–15 s measured
# for ../shared/gpu/pack.sh's 47 MB on 2 busy cores, 5 s of it CPU; allowed 40 s) + the budget (400 s,
# every step of the check inside it) + the grace a part past its limit gets before SIGKILL (10 s) +
# the last combine and print (2 s) = 452 s, 28 s to spare.
DEVICE_COMMAND_S=480; UNPACK_ALLOWANCE_S=40; DEFAULT_BUDGET_S=400; KILL_GRACE_S=10; FINAL_COMBINE_S=2
# NAME:EXPECTED:LIMIT in priority order. EXPECTED (s, on an H200, start-up included) decides whether
# a part still fits the budget; LIMIT is its own time limit, so a hung part costs at most that.
PLAN="mlp-10k:30:60 torch-10k:40:60 mlp-200k:60:120 mlp-busy:45:90 trees-10k:30:60 trees-200k:90:150
trees-seq:40:60 cpu-scaling:30:60 trees-profile:75:110 torch-200k:40:60 calibrate:40:60 auto:20:40
mlp-all:90:120 trees-cpu-200k:40:60"
# mlp-busy: 160 000 training rows / batch 512 = 313 steps an epoch × 4 dispatches a step (the WGSL
# MLP's own count) × 12.5 µs a dispatch (the H200's chained-dispatch floor, research/gpu.md) =
# 15.7 ms an epoch at least, so 1 000 epochs (the CLI's maximum) ≥ 15.6 s of device work; at the
# issue's reading (30 epochs ≈ 1 s) about 33 s.
MLP_BUSY_EPOCHS=1000
QUICK_EXPECTED_S=5   # --quick: tiny shapes, a part is expected to take seconds
PROFILE_INNER_BUDGET_S=60   # webgpu-profile --suite starts no shape after this (its limit covers the last)
t_start=$(date +%s)

plan_only=0; probe_only=0; skip_torch=0; allow_cpu=0; out=""; project=""; only=""; skip=""; budget=$DEFAULT_BUDGET_S; limit_all=""; quick=0
die() { echo "gpu-check: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --plan) plan_only=1 ;;
    --probe-only) probe_only=1 ;;
    --skip-torch) skip_torch=1 ;;
    --allow-cpu-adapter) allow_cpu=1 ;;
    --quick) quick=1 ;;
    --out) out="${2:?--out needs a file}"; shift ;;
    --project) project="${2:?--project needs a folder}"; shift ;;
    --only) only="${2:?--only needs part names}"; shift ;;
    --skip) skip="${2:?--skip needs part names}"; shift ;;
    --budget) budget="${2:?--budget needs seconds}"; shift ;;
    --timeout) limit_all="${2:?--timeout needs seconds}"; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
case "$budget" in ''|*[!0-9]*) die "--budget takes whole seconds (got '$budget')" ;; esac
case "$limit_all" in *[!0-9]*) die "--timeout takes whole seconds, at least 1 (got '$limit_all')" ;; esac
budget=$((10#$budget))   # base 10: bash reads 08 as octal
if [ -n "$limit_all" ]; then
  limit_all=$((10#$limit_all))
  [ "$limit_all" -ge 1 ] || die "--timeout takes whole seconds, at least 1 (got '$limit_all'; 0 would be no limit)"
fi
part_names=" $(for p in $PLAN; do printf '%s ' "${p%%:*}"; done)"
for name in ${only//,/ } ${skip//,/ }; do
  case "$part_names" in *" $name "*) ;; *) die "no part named '$name' (parts:$part_names)" ;; esac
done

# plan_of NAME → "EXPECTED LIMIT" as this run uses them (--quick, --timeout applied)
plan_of() {
  local p
  for p in $PLAN; do
    [ "${p%%:*}" = "$1" ] || continue
    local rest="${p#*:}"
    local expected="${rest%%:*}" limit="${rest#*:}"
    [ $quick = 1 ] && expected=$QUICK_EXPECTED_S
    [ -n "$limit_all" ] && limit=$limit_all
    echo "$expected $limit"
    return 0
  done
  return 1
}

if [ $plan_only = 1 ]; then
  parts_json=""
  for p in $PLAN; do
    read -r e l <<<"$(plan_of "${p%%:*}")"
    parts_json="$parts_json${parts_json:+,}{\"name\":\"${p%%:*}\",\"expectedS\":$e,\"limitS\":$l}"
  done
  printf '{"deviceCommandS":%s,"unpackAllowanceS":%s,"budgetS":%s,"killGraceS":%s,"finalCombineS":%s,"worstCaseS":%s,"mlpBusyEpochs":%s,"profileInnerBudgetS":%s,"parts":[%s]}\n' \
    $DEVICE_COMMAND_S $UNPACK_ALLOWANCE_S "$budget" $KILL_GRACE_S $FINAL_COMBINE_S \
    $((UNPACK_ALLOWANCE_S + budget + KILL_GRACE_S + FINAL_COMBINE_S)) $MLP_BUSY_EPOCHS $PROFILE_INNER_BUDGET_S "$parts_json"
  exit 0
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "gpu-check: $*" >&2; }
wanted() {
  if [ -n "$only" ]; then case ",$only," in *",$1,"*) ;; *) return 1 ;; esac; fi
  case ",$skip," in *",$1,"*) return 1 ;; esac
  return 0
}

# --- project and node ---------------------------------------------------------------------------
if [ -z "$project" ]; then
  if [ -f "$here/gpu-check/combine.mjs" ]; then project="$here/.."
  elif [ -f "./.gpu-project/benchmarks/gpu-check/combine.mjs" ]; then project="./.gpu-project"
  else die "no project found: pass --project DIR (the Trainpool folder, with benchmarks/gpu-check/)"; fi
fi
project="$(cd "$project" 2>/dev/null && pwd)" || die "no such project folder: $project"
[ -f "$project/benchmarks/gpu-check/combine.mjs" ] || die "$project is not a Trainpool project (no benchmarks/gpu-check/combine.mjs)"
for nb in "$project/../.gpu-node/bin" "./.gpu-node/bin"; do
  if [ -x "$nb/node" ]; then PATH="$(cd "$nb" && pwd):$PATH"; break; fi
done
export PATH
command -v node >/dev/null 2>&1 || die "node not found (run gpu-pack/unpack.sh first, or put node on PATH)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/trainpool-gpu-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out="gpu-check-$(date -u +%Y%m%dT%H%M%SZ).json"
combine() { node "$project/benchmarks/gpu-check/combine.mjs" "$work" >"$out.tmp" && mv "$out.tmp" "$out"; }
flag() { [ "$1" = 1 ] && echo true || echo false; }
json_string() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }

# --- built? The parts run the built CLI, not bin/trainpool.js (which only says "not built"): stop at once.
cli="$project/out/main/cli.js"
profile_js="$project/out/bench/webgpu-profile.mjs"
if [ $probe_only = 0 ]; then
  missing=""
  for f in "$cli" "$project/out/main/worker.js"; do [ -f "$f" ] || missing="$missing ${f#"$project"/}"; done
  fix="run \`npm run build:gpu-check\` before packing"
  if [ -z "$missing" ] && wanted trees-profile && [ ! -f "$profile_js" ]; then
    missing=" ${profile_js#"$project"/}"; fix="$fix, or --skip trees-profile"
  fi
  if [ -n "$missing" ]; then
    why="the project is not built:$missing missing in $project ($fix)"
    printf '{"startedAt":"%s","stopped":"%s"}\n' "$started" "$(json_string "$why")" >"$work/meta.json"
    if combine 2>/dev/null; then json="JSON: $out"; else json="no JSON: combine.mjs failed"; fi
    echo "gpu-check: STOPPED: $why; nothing ran ($json)" >&2
    exit 5
  fi
fi
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
(cd "$project" && timeout -k 5 60 node -e "$probe_js") >"$work/probe.out" 2>"$work/probe.err"
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
  timeout 30 nvidia-smi -L >"$work/nvidia-smi-L.txt" 2>&1 || true
  timeout 30 nvidia-smi --query-gpu=index,name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv,noheader >"$work/nvidia-smi-query.txt" 2>&1 || true
else
  log "nvidia-smi not found: no GPU list and no GPU telemetry"
fi
cat >"$work/meta.json" <<META
{"startedAt":"$started","softwareAdapter":$(flag $software),"options":{"only":"$only","skip":"$skip","budget":$budget,"timeout":${limit_all:-null},"quick":$(flag $quick),"allowCpuAdapter":$(flag $allow_cpu),"skipTorch":$(flag $skip_torch)},
 "vulkan":{"VK_DRIVER_FILES":"${VK_DRIVER_FILES:-}","nvidiaIcd":"$icd","setByGpuCheck":$(flag $icd_set_by_us)}}
META
combine || die "could not combine the results"

# --- the parts --------------------------------------------------------------------------------------
# shapes: full (the issues' numbers) or --quick (tiny, for plumbing on a CPU adapter)
if [ $quick = 1 ]; then
  mlp_small=1000; mlp_large=3000; mlp_models=4; mlp_busy_epochs=2; torch_loop=2
  trees_small=1000; trees_large=2000; trees_models=4; trees_seq_models=2; trees_rounds=3; scaling_models=4; scaling_workers=1,2; w_many=2
else
  mlp_small=10000; mlp_large=200000; mlp_models=50; mlp_busy_epochs=$MLP_BUSY_EPOCHS; torch_loop=5
  trees_small=10000; trees_large=200000; trees_models=50; trees_seq_models=10; trees_rounds=100; scaling_models=64; scaling_workers=1,2,4,8,16; w_many=16
fi
# the MLP backends the mlp-all part compares: every one a packed GPU box can run but plain-JS cpu
# (tensorflow needs tfjs-node-gpu, which a box without network cannot install)
mlp_all_backends=webgpu,onnxruntime,wasm
# part NAME KIND ARGS…: runs when wanted and the budget still holds its expected time, under its own
# limit (or what is left of the budget, if less); KIND bench|torch|calibrate|profile
part() {
  local name="$1" kind="$2"; shift 2
  wanted "$name" || return 0
  local expected limit
  read -r expected limit <<<"$(plan_of "$name")"
  [ -n "$limit" ] || die "part $name is not in the plan"
  local left=$(( budget - ($(date +%s) - t_start) ))
  if [ "$left" -lt "$expected" ]; then
    echo "the budget (--budget $budget s) had $left s left, this part needs about $expected s" >"$work/part-$name.skipped"
    log "$name: skipped ($left s of the budget left)"; combine; return 0
  fi
  local cap=$(( left < limit ? left : limit ))
  log "$name: $kind $* (limit $cap s)"
  local t0; t0=$(date +%s.%N)
  # timeout signals the part's whole process group (its workers too), then SIGKILL after the grace
  local run=(timeout -k "$KILL_GRACE_S" "$cap")
  case "$kind" in
    bench) (cd "$project" && "${run[@]}" node "$cli" bench "$@" --no-save --json "$work/part-$name.json" 2>&1) | tail -n 200 >"$work/part-$name.log" ;;
    calibrate) (cd "$project" && "${run[@]}" node "$cli" calibrate "$@" 2>&1) | tail -n 200 >"$work/part-$name.log" ;;
    torch) "${run[@]}" python3 "$project/benchmarks/gpu-check/torch_reference.py" "$@" >"$work/part-$name.json" 2>"$work/part-$name.log" ;;
    profile) (cd "$project" && "${run[@]}" node "$profile_js" "$@" >"$work/part-$name.json" 2>"$work/part-$name.log") ;;
  esac
  local code=${PIPESTATUS[0]}
  echo "$code" >"$work/part-$name.exit"
  echo "$cap" >"$work/part-$name.limit_s"   # the limit it ran under: its own, or what the budget had left
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' >"$work/part-$name.wall_s"
  case "$code" in
    0) ;;
    124|137) log "$name: stopped past its limit of $cap s (exit $code)"; tail -n 5 "$work/part-$name.log" >&2 ;;
    *) log "$name: exited $code"; tail -n 5 "$work/part-$name.log" >&2 ;;
  esac
  combine
}
mlp() { echo --backend webgpu --models "$mlp_models" --epochs 3 "$@"; }
trees() { echo --model gbdt --backend webgpu --preset article --rounds "$trees_rounds" "$@"; }
torch_ok=1
if [ $skip_torch = 1 ]; then echo "--skip-torch" >"$work/torch.skipped"; torch_ok=0
elif ! command -v python3 >/dev/null 2>&1; then echo "python3 not found" >"$work/torch.skipped"; torch_ok=0
elif ! timeout 60 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  echo "python3 cannot import torch with CUDA available" >"$work/torch.skipped"; torch_ok=0
fi

# shellcheck disable=SC2046  # the helpers print word lists on purpose
{
part mlp-10k bench $(mlp --sizes "$mlp_small" --strategies sequential,pool,batched --workers 1,4 --repeats 3)
[ $torch_ok = 1 ] && part torch-10k torch --rows "$mlp_small" --models "$mlp_models" --repeats 3
part mlp-200k bench $(mlp --sizes "$mlp_large" --strategies sequential,pool,batched --workers 1,4 --repeats 1)
part mlp-busy bench --backend webgpu --models "$mlp_models" --sizes "$mlp_large" --strategies batched --workers 1 --repeats 1 --epochs "$mlp_busy_epochs"
part trees-10k bench $(trees --sizes "$trees_small" --models "$trees_models" --strategies batched --workers 1 --repeats 1)
part trees-200k bench $(trees --sizes "$trees_large" --models "$trees_models" --strategies batched --workers 1 --repeats 1)
part trees-seq bench $(trees --sizes "$trees_small" --models "$trees_seq_models" --strategies sequential --workers 1 --repeats 1)
part cpu-scaling bench --backend onnxruntime --sizes "$mlp_small" --models "$scaling_models" --epochs 3 --strategies pool --workers "$scaling_workers" --repeats 1
part trees-profile profile --suite --budget "$PROFILE_INNER_BUDGET_S" $([ $quick = 1 ] && echo --quick)
[ $torch_ok = 1 ] && part torch-200k torch --rows "$mlp_large" --models "$mlp_models" --loop-models "$torch_loop" --repeats 1
if wanted calibrate || wanted auto; then
  if (cd "$project" && timeout 30 node "$cli" calibrate --help >/dev/null 2>&1); then
    part calibrate calibrate
    part auto bench --backend auto --sizes "$mlp_small" --models "$mlp_models" --epochs 3 --strategies batched --workers 1 --repeats 3
  else
    echo "this build has no \`trainpool calibrate\`" >"$work/part-calibrate.skipped"
  fi
fi
# every backend but plain-JS cpu: its 50 models fused at this shape take minutes (an H100 box's
# 16 cores: one model 55 ms a step), so `--backend all` ran out of the part's limit there
part mlp-all bench --backend "$mlp_all_backends" --sizes "$mlp_small" --models "$mlp_models" --epochs 3 --strategies batched --workers "1,$w_many" --repeats 1
part trees-cpu-200k bench --model gbdt --backend cpu --preset article --rounds "$trees_rounds" --sizes "$trees_large" --models "$(( trees_models - trees_models % w_many ))" --strategies pool --workers "$w_many" --repeats 1
}

combine || die "could not combine the results"
cat "$out"
log "wrote $out in $(( $(date +%s) - t_start )) s (budget $budget s)"
node -e 'const c=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));for(const t of c.targets??[])console.error(`gpu-check: ${t.met===null?"n/a ":t.met?"MET ":"MISS"} ${t.what}: ${t.text}`)' "$out"
exit 0
