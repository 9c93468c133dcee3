#!/usr/bin/env bash
# Installs the Debian packages the test suite needs: Chromium (browser-mode E2E, PDF reports),
# poppler-utils (pdftotext/pdftoppm in report tests), and Mesa 25's lavapipe from bookworm-backports
# (WebGPU on CPU through Dawn/Vulkan; bookworm's Mesa 22 is too old for Dawn), and XGBoost 1.7
# (libxgboost0 + python3-xgboost: the reference the GBDT engine is checked against), and ONNX 1.12
# (python3-onnx: its checker validates the exported MLP models), and Slurm 22.05 with munge
# (slurm-wlm + munge: the one-node cluster scripts/slurm-cluster.sh brings up for the Slurm tests;
# without recommends, 9 packages instead of 43; the install starts no daemon here), shellcheck
# (the GPU check's script is checked with it), and PyTorch 1.13 (python3-torch: the MLP's losses,
# gradients and Adam steps are checked against it; ~1 min, 166 packages without recommends).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v pdftotext >/dev/null || need+=(poppler-utils)
/usr/bin/python3 -c 'import xgboost' 2>/dev/null || need+=(python3-xgboost)
ls /usr/lib/*/libxgboost.so* >/dev/null 2>&1 || need+=(libxgboost0)
/usr/bin/python3 -c 'import onnx' 2>/dev/null || need+=(python3-onnx)
command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
command -v shellcheck >/dev/null || need+=(shellcheck)
/usr/bin/python3 -c 'import torch' 2>/dev/null || need+=(python3-torch)
have_lavapipe() { ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 && dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null | grep -qv '^22\.'; }
if [ ${#need[@]} -eq 0 ] && have_lavapipe; then echo "system deps: present"; exit 0; fi
if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "deb http://deb.debian.org/debian bookworm-backports main" > /etc/apt/sources.list.d/bookworm-backports.list
fi
apt-get update -qq
[ ${#need[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${need[@]}" fonts-dejavu-core >/dev/null
have_lavapipe || apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libvulkan1 >/dev/null
echo "system deps: chromium $(chromium --version 2>/dev/null | awk '{print $2}'), mesa $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers), xgboost $(/usr/bin/python3 -c 'import xgboost; print(xgboost.__version__)'), onnx $(/usr/bin/python3 -c 'import onnx; print(onnx.__version__)'), slurm $(dpkg-query -W -f='${Version}' slurm-client), munge $(dpkg-query -W -f='${Version}' munge), shellcheck $(shellcheck --version | awk '/^version:/ {print $2}'), torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
