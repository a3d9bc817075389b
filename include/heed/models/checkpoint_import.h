// Transformers trained by other toolkits as heed model directories, so that heed decodes them,
// scores them and shows their attention: OpenNMT-py's checkpoints (torch.save .pt files, read
// without PyTorch: io/torch_file.h) and Marian's (.npz).
//
// OpenNMT-py (onmt/encoders/transformer.py, onmt/decoders/transformer.py, its state dict's names
// as CTranslate2's converter reads them): a pre-norm Transformer, embeddings scaled by sqrt(d)
// plus its position table (kept as heed's learned table, whatever its layout), separate Q, K, V
// projections fused into heed's [Q; K; V] and [K; V], LayerNorm epsilon norm_eps (1e-6), the
// generator as an untied output layer, decoding from <s>, sources without EOS.
// Vocabularies are reordered to heed's specials first (<pad> for OpenNMT-py's <blank>, <s>, </s>,
// <unk>), the rows of every table moved with them; a special the checkpoint lacks gets a zero
// embedding and an output bias of -1e9, so it is never written.
//
// Marian (src/models/transformer.h, its .npz names as CTranslate2's converter reads them): x W
// products (heed's weights are their transposes), post-norm ("dan") or pre-norm ("n", "da", top
// "n") layers, one embedding table for both sides and the output when tied, Marian's sinusoids
// (sine then cosine halves, dimEmb / 2 timescales log-spaced from 1 to 10000) or its Wpos table,
// LayerNorm epsilon 1e-9, sources ending in </s>, the decoder starting from a zero embedding (the
// <s> heed adds: a zero row that is never written). Vocabularies: Marian's .yml ("token: id").
// Leaves out: relative positions, rotary and ALiBi, exact (erf) GELU, multi-query attention,
// source features, OpenNMT-py 2's torchtext vocabularies, Marian's SentencePiece vocabularies,
// RNN models, embedding LayerNorm, swish and GELU: Errors naming the option.
#pragma once

#include <string>
#include <vector>

namespace heed {

// Writes heed's model directory `out_dir` (created; an Error when it holds a model) from an
// OpenNMT-py checkpoint; returns the files written.
std::vector<std::string> import_opennmt_py(const std::string& checkpoint,
                                           const std::string& out_dir);
// The same from a Marian model (.npz) and its vocabularies (one .yml for both sides, or the
// source's then the target's).
std::vector<std::string> import_marian(const std::string& npz,
                                       const std::vector<std::string>& vocabs,
                                       const std::string& out_dir);

}  // namespace heed
