// Every op of the autograd engine, one header per family under ops/.
// Leaves out: layers (nn/), which compose these.
#pragma once

#include "heed/autograd/graph.h"
#include "heed/autograd/ops/activation.h"
#include "heed/autograd/ops/additive.h"
#include "heed/autograd/ops/arithmetic.h"
#include "heed/autograd/ops/attention.h"
#include "heed/autograd/ops/conv1d.h"
#include "heed/autograd/ops/ctc.h"
#include "heed/autograd/ops/dropout.h"
#include "heed/autograd/ops/embedding.h"
#include "heed/autograd/ops/hard_marginal.h"
#include "heed/autograd/ops/layer_norm.h"
#include "heed/autograd/ops/linear_cross_entropy.h"
#include "heed/autograd/ops/loss.h"
#include "heed/autograd/ops/matmul.h"
#include "heed/autograd/ops/monotonic.h"
#include "heed/autograd/ops/packing.h"
#include "heed/autograd/ops/reduce.h"
#include "heed/autograd/ops/rnn_cell.h"
#include "heed/autograd/ops/shape.h"
#include "heed/autograd/ops/softmax.h"
