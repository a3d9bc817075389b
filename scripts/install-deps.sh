#!/usr/bin/env bash
# Installs the Debian packages heed needs to build, test and benchmark; a no-op when all are present.
# Called first by `make`, `make test`, `make demo` and `make bench`, so each works on a fresh machine.
# Optional parts, named as arguments, add their packages: `clang` (clang, libFuzzer and LLVM's
# OpenMP runtime, for `make fuzz` and `make test-tsan`); `torchaudio` (Debian's python3-torchaudio,
# about 250 packages with PyTorch: the Python test of `heed features` against its Kaldi fbank);
# `speech-corpus` (espeak-ng's and flite's libraries and festival with its kal voice: the
# speech synthesisers of tools/spoken_corpus.cc and scripts/make-spoken-corpus.sh).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libdnnl-dev libgtest-dev libgmock-dev libbenchmark-dev
      libcli11-dev nlohmann-json3-dev libsentencepiece-dev libcairo2-dev libcpp-httplib-dev
      fonts-dejavu-core
      libicu-dev  # Unicode categories and case mapping: sacreBLEU's tokenisers (metrics/)
      libsndfile1-dev libsamplerate0-dev libavutil-dev  # audio in, resampling, the fbank's FFT
      python3 python3-nltk
      pybind11-dev python3-dev python3-numpy python3-pytest  # the Python package and its tests
      python3-pip python3-venv python3-setuptools python3-wheel  # pip install . (offline)
      libopenmpi-dev openmpi-bin)  # data-parallel training (mpirun -np N heed train)
for part in "$@"; do
  case $part in
    clang) pkgs+=(clang-14 libclang-rt-14-dev libomp-14-dev) ;;
    torchaudio) pkgs+=(python3-torchaudio) ;;
    speech-corpus) pkgs+=(libespeak-ng-dev flite1-dev festival festvox-kallpc16k festlex-cmu) ;;
    *) echo "install-deps.sh: unknown part '$part' (known: clang, torchaudio, speech-corpus)" >&2
       exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "heed: installing missing Debian packages: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
