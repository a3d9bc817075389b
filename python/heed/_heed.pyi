# Types of heed's C++ module (python/heed_module.cc); the package (__init__.py) wraps it.
from typing import Optional

import numpy as np
import numpy.typing as npt

__version__: str

class TranslationResult:
    source: list[str]
    truncated: bool
    hypotheses: list[list[str]]
    texts: list[str]
    scores: list[float]
    log_probs: list[float]
    attention: list[npt.NDArray[np.float32]]

class ScoringResult:
    source: list[str]
    tokens: list[str]
    log_prob: float
    log_probs: list[float]
    attention: Optional[npt.NDArray[np.float32]]

class Prediction:
    tokens: list[str]
    label: int
    probabilities: npt.NDArray[np.float32]
    attention: Optional[npt.NDArray[np.float32]]
    redundancy: float

class Translator:
    def __init__(self, model_dirs: list[str], *, threads: int = 0,
                 compute_type: str = "float32", wait_k: int = 0,
                 hard_marginal: bool = False) -> None: ...
    def translate_batch(self, sources: list[str], *, beam_size: int = 1, num_hypotheses: int = 1,
                        length_penalty: float = 1.0, max_decoding_length: int = 0,
                        max_len_ratio: float = 2.0, max_batch_size: int = 32,
                        max_input_length: int = 1024, return_scores: bool = False,
                        return_attention: bool = False, attention_layer: int = -1,
                        attention_head: int = -1,
                        replace_unknowns: bool = False) -> list[TranslationResult]: ...
    def score_batch(self, sources: list[str], targets: list[str], *, max_batch_size: int = 32,
                    max_input_length: int = 1024, return_attention: bool = False,
                    attention_layer: int = -1,
                    attention_head: int = -1) -> list[ScoringResult]: ...
    def translate_file(self, input_path: str, output_path: str, *, beam_size: int = 1,
                       num_hypotheses: int = 1, length_penalty: float = 1.0,
                       max_decoding_length: int = 0, max_len_ratio: float = 2.0,
                       max_batch_size: int = 32, max_input_length: int = 1024,
                       replace_unknowns: bool = False) -> dict[str, float]: ...

class Classifier:
    def __init__(self, model_dirs: list[str], *, threads: int = 0) -> None: ...
    def classify(self, sentences: list[str], *, return_attention: bool = False,
                 batch_size: int = 64) -> list[Prediction]: ...
    @property
    def num_classes(self) -> int: ...

class Recognizer:
    def __init__(self, model_dir: str, *, threads: int = 0, lm: str = "") -> None: ...
    def transcribe(self, audio: list[object], *, beam: int = 1, n_best: int = 1,
                   lm_weight: float = 0.5, lm_bonus: float = 0.0, timestamps: bool = False,
                   batch_size: int = 16) -> list[list[dict[str, object]]]: ...

def train(options: dict[str, object], threads: int = 0) -> dict[str, object]: ...
