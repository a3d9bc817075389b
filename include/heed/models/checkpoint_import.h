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
// Leaves out: relative positions, rotary and ALiBi, exact (erf) GELU, multi-query attention,
// source features, OpenNMT-py 2's torchtext vocabularies: Errors naming the option.
#pragma once

#include <string>
#include <vector>

namespace heed {

// Writes heed's model directory `out_dir` (created; an Error when it holds a model) from an
// OpenNMT-py checkpoint; returns the files written.
std::vector<std::string> import_opennmt_py(const std::string& checkpoint,
                                           const std::string& out_dir);

}  // namespace heed
