// NonMaxSuppression (10, 11): greedy per (batch, class) selection of boxes
// in descending score order (ties: lower box index first), dropping a box
// whose IoU with an already selected one exceeds iou_threshold. Boxes are
// [y1, x1, y2, x2] with either corner order (center_point_box = 0) or
// [x_center, y_center, width, height] (center_point_box = 1). With a
// score_threshold, only scores strictly above it are candidates; a NaN score
// never is. A missing max_output_boxes_per_class means 0 (nothing selected).
#include <algorithm>
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"

namespace parity::ops::nn {

namespace {

struct Box {
  double x_min, y_min, x_max, y_max;
};

Box ReadBox(const Tensor& boxes, int64_t at, bool center) {
  const double a = boxes.GetDouble(at), b = boxes.GetDouble(at + 1);
  const double c = boxes.GetDouble(at + 2), d = boxes.GetDouble(at + 3);
  if (center) return {a - c / 2, b - d / 2, a + c / 2, b + d / 2};
  return {std::min(b, d), std::min(a, c), std::max(b, d), std::max(a, c)};
}

// True when IoU(p, q) > threshold; boxes with no area never suppress.
bool Suppresses(const Box& p, const Box& q, double threshold) {
  const double ix = std::min(p.x_max, q.x_max) - std::max(p.x_min, q.x_min);
  const double iy = std::min(p.y_max, q.y_max) - std::max(p.y_min, q.y_min);
  if (!(ix > 0) || !(iy > 0)) return false;
  const double inter = ix * iy;
  const double area_p = (p.x_max - p.x_min) * (p.y_max - p.y_min);
  const double area_q = (q.x_max - q.x_min) * (q.y_max - q.y_min);
  const double uni = area_p + area_q - inter;
  if (!(area_p > 0) || !(area_q > 0) || !(uni > 0)) return false;
  return inter / uni > threshold;
}

}  // namespace

KernelResult NonMaxSuppression(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* boxes, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* scores, ctx.RequireTensor(1));
  if (boxes->rank() != 3 || boxes->dim(2) != 4) return ctx.Error("boxes must be [batches, boxes, 4], got ", boxes->Description());
  if (scores->rank() != 3 || scores->dim(0) != boxes->dim(0) || scores->dim(2) != boxes->dim(1)) {
    return ctx.Error("scores must be [", boxes->dim(0), ", classes, ", boxes->dim(1), "], got ", scores->Description());
  }
  int64_t max_per_class = 0;
  if (ctx.has_input(2) && ctx.tensor(2).size() > 0) max_per_class = std::max<int64_t>(ctx.tensor(2).GetInt64(0), 0);
  double iou_threshold = 0.0;
  if (ctx.has_input(3) && ctx.tensor(3).size() > 0) iou_threshold = ctx.tensor(3).GetDouble(0);
  const bool has_score_threshold = ctx.has_input(4) && ctx.tensor(4).size() > 0;
  const double score_threshold = has_score_threshold ? ctx.tensor(4).GetDouble(0) : 0.0;
  const int64_t center = ctx.GetInt("center_point_box", 0);
  if (center != 0 && center != 1) return ctx.Error("center_point_box must be 0 or 1, got ", center);

  const int64_t batches = boxes->dim(0), classes = scores->dim(1), count = boxes->dim(1);
  std::vector<int64_t> selected;  // (batch, class, box) triples
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t score_base = (b * classes + c) * count;
      order.clear();
      for (int64_t i = 0; i < count; ++i) {
        const double s = scores->GetDouble(score_base + i);
        if (std::isnan(s) || (has_score_threshold && !(s > score_threshold))) continue;
        order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return scores->GetDouble(score_base + p) > scores->GetDouble(score_base + q);
      });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        const Box box = ReadBox(*boxes, (b * count + i) * 4, center == 1);
        bool keep = true;
        for (const Box& other : kept) {
          if (Suppresses(box, other, iou_threshold)) {
            keep = false;
            break;
          }
        }
        if (!keep) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  const int64_t n = static_cast<int64_t>(selected.size()) / 3;
  return Single(Tensor::FromInt64s({n, 3}, selected));
}

}  // namespace parity::ops::nn
