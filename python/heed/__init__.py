"""heed from Python: translate, score, classify and train with heed's C++ core.

    import heed
    t = heed.Translator("en-de", threads=1)
    r = t.translate_batch(["a man rides a bike ."], beam_size=5, return_attention=True)
    r[0].hypotheses[0]   # ['ein', 'mann', ...]
    r[0].attention[0]    # numpy float32 [len(output) + 1, len(source)]

    heed.train({"model": "rnn", "train_src": "...", "train_tgt": "...", "save": "m"})
    heed.train("recipes/multi30k-transformer.toml", train_src="...", save="m")

Every option is a keyword argument; the work runs in C++ with the GIL released, so several
Python threads can translate at once. heed's errors arrive as ValueError (bad input or option,
with heed's message naming the file, line or option) and FileNotFoundError (a missing model
or file).
"""
from __future__ import annotations

import difflib
import errno
import os
import tomllib
from typing import Iterable, Iterator, Mapping, Sequence, Union

from . import _heed
from ._heed import Prediction, ScoringResult, TranslationResult

__version__ = _heed.__version__
__all__ = ["Translator", "Classifier", "Recognizer", "TranslationResult", "ScoringResult",
           "Prediction", "train", "__version__"]


# translate_batch's keyword options (python/heed_module.cc), for the TypeError that names an
# unknown one (tests/python/test_heed.py passes each of them to the C++ function)
_TRANSLATE_OPTIONS = ("beam_size", "num_hypotheses", "length_penalty", "max_decoding_length",
                      "max_len_ratio", "max_batch_size", "max_input_length", "return_scores",
                      "return_attention", "attention_layer", "attention_head", "replace_unknowns")


def _check_keywords(function: str, given: Iterable[str], known: Sequence[str]) -> None:
    for name in given:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise TypeError(f"{function}() got an unexpected keyword argument '{name}'{hint} "
                            f"(its options: {', '.join(known)})")


class Translator(_heed.Translator):
    """An encoder-decoder (or an ensemble of several) loaded once for many translations.

    model_dirs: a model directory (`heed train --save`) or a list of them (an ensemble).
    threads: threads of every kernel and GEMM, for the process (0: leave as is, all cores).
    compute_type: "float32" or "int8" (weights quantised per row at load time).
    wait_k: > 0: a wait-k model (trained with --wait-k) decodes at this k (heed translate --wait-k).
    hard_marginal: a model with hard attention trained exactly decodes with the marginal over
        positions it was trained on (heed translate --hard-marginal).
    """

    def __init__(self, model_dirs: Union[str, os.PathLike, Sequence[str]], *, threads: int = 0,
                 compute_type: str = "float32", wait_k: int = 0,
                 hard_marginal: bool = False) -> None:
        if isinstance(model_dirs, (str, os.PathLike)):
            model_dirs = [model_dirs]
        super().__init__([os.fspath(d) for d in model_dirs], threads=threads,
                         compute_type=compute_type, wait_k=wait_k, hard_marginal=hard_marginal)

    def translate_batch(self, sources: Union[Sequence[str], Sequence[Sequence[str]]],
                        **options) -> list[TranslationResult]:
        """Translates a list of sentences, or of token lists (the model's source units, as
        CTranslate2's translate_batch takes them: `[["a", "man", "rides"], ...]`), returning
        results in input order; the options are keywords (an unknown one is a TypeError naming
        it and the known ones):
        """
        _check_keywords("translate_batch", options, _TRANSLATE_OPTIONS)
        return super().translate_batch(sources, **options)

    translate_batch.__doc__ += _heed.Translator.translate_batch.__doc__ or ""

    def translate_iterable(self, sources: Iterable[str], *, max_batch_size: int = 32,
                           read_batches: int = 50, **options) -> Iterator[TranslationResult]:
        """Translates sources as they come, yielding one result per source in order.

        sources: sentences, or the lines of a file as Python reads them (a line's end, "\\n" or
        "\\r\\n", is not part of its sentence). Reads max_batch_size * read_batches sources at a
        time (batches of similar length are formed within them, as `heed translate` does);
        options are translate_batch's.
        """
        _check_keywords("translate_iterable", options, _TRANSLATE_OPTIONS)
        if read_batches < 1:
            raise ValueError(f"read_batches must be >= 1, got {read_batches}")
        window = max_batch_size * read_batches
        chunk: list[str] = []
        for s in sources:
            chunk.append(s[:-1] if s.endswith("\n") else s)  # open(path) yields "line\n"
            if chunk[-1].endswith("\r"):
                chunk[-1] = chunk[-1][:-1]
            if len(chunk) == window:
                yield from self.translate_batch(chunk, max_batch_size=max_batch_size, **options)
                chunk = []
        if chunk:
            yield from self.translate_batch(chunk, max_batch_size=max_batch_size, **options)


class Classifier(_heed.Classifier):
    """A sentence classifier (`heed train --task classify`), or an ensemble of several.

    model_dirs: a model directory or a list of them (an ensemble: the mean of their class
        probabilities, the label its argmax; tokens and attention are the first model's).
    classify(sentences, *, return_attention=False, batch_size=64) -> list[Prediction]:
    labels, class probabilities and, for self-attentive models, the hops' attention.
    """

    def __init__(self, model_dirs: Union[str, os.PathLike, Sequence[str]], *,
                 threads: int = 0) -> None:
        if isinstance(model_dirs, (str, os.PathLike)):
            model_dirs = [model_dirs]
        super().__init__([os.fspath(d) for d in model_dirs], threads=threads)


class Recognizer(_heed.Recognizer):
    """A speech recognizer (`heed train --format audio`), loaded once for many transcriptions.

    model_dir: the recognizer's directory. lm: an ARPA n-gram model of its output units
    (`heed lm --format audio`), used by the beam search (beam >= 2). compute_type: "float32"
    or "int8" (weight matrices quantised per row at load time: faster, slightly different
    scores; `heed transcribe --compute-type`).
    transcribe(audio, *, beam=1, n_best=1, lm_weight=0.5, lm_bonus=0.0, timestamps=False,
    batch_size=16) -> per audio (a path, or a 1-D float array of 16 kHz samples in [-1, 1)),
    its n_best transcripts as dicts: text, log_prob, and with timestamps words [{word, start,
    end}] in seconds; what `heed transcribe` prints.
    """

    def __init__(self, model_dir: Union[str, os.PathLike], *, threads: int = 0,
                 lm: Union[str, os.PathLike] = "", compute_type: str = "float32") -> None:
        super().__init__(os.fspath(model_dir), threads=threads, lm=os.fspath(lm),
                         compute_type=compute_type)


def train(config: Union[str, os.PathLike, Mapping[str, object], None] = None, *,
          threads: int = 0, **options) -> dict:
    """Trains a model as `heed train` does, in this process (the same library call, on the
    same typed options); progress goes to stderr.

    config: a TOML recipe (its [train] section, as `heed train --config`) or a dict of
    `heed train`'s flags ("d-model" or d_model = 128; a switch True or False, its negation's
    name too: unidirectional=True); keyword options are more flags and win over both. Each
    value has its flag's type (int, number, bool, a name, a list of ints) and bounds.
    threads: as `heed --threads` (0: all cores). Returns what the run reached: metric,
    best_metric, best_step, steps, epochs, minutes, save (and test_accuracy with a test file).
    Raises ValueError for a bad option or input, FileNotFoundError for a missing file.
    """
    flags: dict[str, object] = {}
    if isinstance(config, (str, os.PathLike)):
        recipe = os.fspath(config)
        if not os.path.isfile(recipe):
            raise FileNotFoundError(errno.ENOENT, "no such recipe file", recipe)
        # the recipe's [train] section, under the keywords (the command line's precedence)
        with open(recipe, "rb") as f:
            try:
                section = tomllib.load(f).get("train", {})
            except tomllib.TOMLDecodeError as e:
                raise ValueError(f"{recipe}: {e}") from None
        flags.update({str(k).replace("_", "-"): v for k, v in section.items()})
    elif isinstance(config, Mapping):
        flags.update({str(k).replace("_", "-"): v for k, v in config.items()})
    elif config is not None:
        raise ValueError("train: config must be a TOML path or a dict of flags")
    flags.update({str(k).replace("_", "-"): v for k, v in options.items()})
    return _heed.train(flags, int(threads))

