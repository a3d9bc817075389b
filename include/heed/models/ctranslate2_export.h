// A heed Transformer as a CTranslate2 model directory, so that it runs where CTranslate2 runs:
// model.bin (io/ctranslate2.h) laid out as CTranslate2's TransformerSpec (revision 7,
// python/ctranslate2/specs/transformer_spec.py), config.json, and its vocabularies as
// source_vocabulary.json and target_vocabulary.json (shared_vocabulary.json when they are one).
//
// heed's Transformer is CTranslate2's: embeddings scaled by sqrt(d) plus a position table
// (heed's sinusoid table, its sine and cosine interleaved, or the learned one, written as
// position_encodings), post- or pre-norm layers (pre: a final LayerNorm on each side), the
// self-attention's fused [Q; K; V] projection as linear_0 and the output as linear_1, the
// cross-attention's query as linear_0, its fused [K; V] as linear_1 and the output as linear_2,
// the feed-forward's two layers as linear_0 and linear_1, the output layer as projection (the
// target embedding itself when tied: an alias), ReLU or tanh-GELU, LayerNorm epsilon 1e-5.
// Sources are given to CTranslate2 as heed's units (words, characters, or pieces of the
// SentencePiece models copied beside), without BOS or EOS.
// Leaves out: what CTranslate2 cannot run as heed trained it (monotonic cross-attention, a
// causal or wait-k encoder, joint CTC, audio front ends): those are Errors naming the option.
#pragma once

#include <string>

#include "heed/io/ctranslate2.h"

namespace heed {

// The model.bin contents of a heed Transformer's directory.
ct2::ModelBin ctranslate2_model_bin(const std::string& model_dir);

// Writes the CTranslate2 directory `out_dir` (created; an Error when it holds a model already)
// for heed's `model_dir`; returns the files written.
std::vector<std::string> export_ctranslate2(const std::string& model_dir,
                                            const std::string& out_dir);

}  // namespace heed
