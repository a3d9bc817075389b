// Data-parallel gradient sums (see the header).
#include "heed/train/gradient_sync.h"

#include <algorithm>

#include "heed/kernels/elementwise.h"
#include "heed/util/error.h"

namespace heed {

GradientSync::GradientSync(dist::Communicator& comm, int64_t bucket_floats)
    : comm_(comm), capacity_(bucket_floats) {}

void GradientSync::flush() {
  if (used_ == 0) return;
  comm_.allreduce_sum({bucket_.data(), static_cast<size_t>(used_)});
  for (const Packed& k : packed_)
    kernels::copy(bucket_.data() + k.offset, k.p->grad.data(), k.p->grad.numel());
  used_ = 0;
  packed_.clear();
}

// A row-sparse table: the union of the touched rows (every rank marks them, so that clipping
// and clearing see the same rows everywhere), then those rows' gradients summed, packed in row
// order (the same on every rank).
void GradientSync::reduce_rows(Parameter& p, float scale) {
  const int64_t rows = p.value.dim(0), width = p.value.shape().inner(0);
  flags_.assign(static_cast<size_t>(rows), 0);
  for (int32_t r : p.touched) flags_[r] = 1;
  comm_.allreduce_or(flags_);
  rows_.clear();
  for (int64_t r = 0; r < rows; ++r)
    if (flags_[r]) rows_.push_back(static_cast<int32_t>(r));
  // the union, in row order on every rank: the clipping norm sums the rows in this order
  p.touched = rows_;
  p.is_touched = flags_;
  const int64_t n = static_cast<int64_t>(rows_.size()) * width;
  if (static_cast<int64_t>(bucket_.size()) < n) bucket_.resize(static_cast<size_t>(n));
  for (size_t k = 0; k < rows_.size(); ++k)
    kernels::affine(p.grad.data() + rows_[k] * width, scale, 0.f,
                    bucket_.data() + static_cast<int64_t>(k) * width, width);
  comm_.allreduce_sum({bucket_.data(), static_cast<size_t>(n)});
  for (size_t k = 0; k < rows_.size(); ++k)
    kernels::copy(bucket_.data() + static_cast<int64_t>(k) * width,
                  p.grad.data() + rows_[k] * width, width);
}

void GradientSync::reduce(ParameterStore& params, float scale) {
  if (comm_.size() == 1) {  // one process: the gradient is already the batch's
    if (scale != 1.f)
      for (Parameter* p : params.all()) kernels::scale(p->grad.data(), scale, p->grad.numel());
    return;
  }
  if (static_cast<int64_t>(bucket_.size()) < capacity_)
    bucket_.resize(static_cast<size_t>(capacity_));
  for (Parameter* p : params.all()) {
    const int64_t n = p->grad.numel();
    if (p->row_sparse) {
      flush();  // the bucket is reused for the rows
      reduce_rows(*p, scale);
    } else if (n >= capacity_) {  // a bucket of its own: summed in place
      kernels::scale(p->grad.data(), scale, n);
      comm_.allreduce_sum({p->grad.data(), static_cast<size_t>(n)});
    } else {
      if (used_ + n > capacity_) flush();
      kernels::affine(p->grad.data(), scale, 0.f, bucket_.data() + used_, n);
      packed_.push_back({p, used_});
      used_ += n;
    }
  }
  flush();
}

void check_replicas_agree(dist::Communicator& comm, const ParameterStore& params,
                          const std::string& when) {
  if (comm.size() == 1) return;
  const auto all = params.all();
  std::vector<double> hi, lo;  // per tensor: its checksum, and minus it (max of -x: -min x)
  for (const Parameter* p : all) {
    const double s = kernels::sum_squares(p->value.data(), p->value.numel());
    hi.push_back(s);
    lo.push_back(-s);
  }
  comm.allreduce_max(hi);
  comm.allreduce_max(lo);
  for (size_t i = 0; i < all.size(); ++i)
    check(hi[i] == -lo[i], "data-parallel training: the ranks' replicas of ", all[i]->name,
          " differ ", when, " (sums of squares from ", -lo[i], " to ", hi[i],
          "): the ranks must build the same model from the same files and seed");
}

}  // namespace heed
