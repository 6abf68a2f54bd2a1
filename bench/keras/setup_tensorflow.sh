#!/usr/bin/env bash
# The TensorFlow peer of bench/keras/compare_tensorflow.sh: TensorFlow 2.21
# (CPU wheel, tensorflow-cpu from PyPI) in a virtual environment of its own,
# bench/.venv-tensorflow (ignored by git). Bench-only: no test needs it.
#
#   bench/keras/setup_tensorflow.sh [VENV_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$here/../.venv-tensorflow}"
version="${TENSORFLOW_VERSION:-2.21.0}"
python="${PYTHON:-python3}"
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import tensorflow as tf, sys; sys.exit(tf.__version__ != '$version')" 2>/dev/null; then
  echo "tensorflow-cpu $version already in $venv"
  exit 0
fi
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet "tensorflow-cpu==$version"
"$venv/bin/python" -c "import tensorflow as tf; print('tensorflow', tf.__version__, 'in $venv')"
