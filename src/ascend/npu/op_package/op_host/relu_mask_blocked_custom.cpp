// CANN custom operators ReluV2BlockedCustom (x -> y, mask) and
// ReluGradV2BlockedCustom (dy, mask -> dx): definitions, shape/dtype inference
// and tiling (UNTESTED: no CANN here). x is a 4-D float tensor (f32, f16,
// bf16) in NCHW or NHWC; y, dy and dx keep its layout. The mask is the 910B's
// blocked one, (N, C1 = ceil(C/16), H, W, 16) bits, as uint8
// (N, C1, H, W, 2) (the shape `relugrad mask-layout --to blocked` writes):
// bit ((n*C1 + c/16)*H*W + hw)*16 + c%16, LSB first, padding channels 0. The
// tiling is relugrad's own (src/ascend/host/relu_v2_tiling_host.cc,
// MakeReluV2BlockedTiling).
//
// The layout of x is the attr data_format ("NCHW", the default, or "NHWC"),
// not the tensor's format: the tensors are declared ND, as the flat ops', so
// GE inserts no TransData and the kernels read the bytes in the caller's
// order, which an ND format does not name. The attr states that order
// explicitly, as the CLI's --layout nchw|nhwc does; anything else is
// GRAPH_FAILED, never a guess.
#include <cstring>

#include "ascend/host/relu_v2_tiling_host.h"
#include "core/semantics.h"
#include "register/op_def_registry.h"
#include "relugrad/relugrad.h"
#include "tiling/platform/platform_ascendc.h"

namespace relugrad_blocked_op {

constexpr size_t kPresetAttr = 0;
constexpr size_t kFormatAttr = 1;

// data_format -> relugrad_x_format; false for anything but NCHW / NHWC.
inline bool FormatOf(const gert::RuntimeAttrs* attrs, relugrad_x_format* format) {
  const char* name = attrs == nullptr ? nullptr : attrs->GetAttrPointer<char>(kFormatAttr);
  if (name == nullptr || std::strcmp(name, "NCHW") == 0) {
    *format = RELUGRAD_X_NCHW;
    return true;
  }
  if (std::strcmp(name, "NHWC") == 0) {
    *format = RELUGRAD_X_NHWC;
    return true;
  }
  return false;
}

inline bool IsFloat(ge::DataType t) {
  return t == ge::DT_FLOAT || t == ge::DT_FLOAT16 || t == ge::DT_BF16;
}

// x's logical (N, C, H, W) from its 4-D shape in format.
struct Nchw {
  int64_t n, c, h, w;
};
inline Nchw DimsOf(const gert::Shape& x, relugrad_x_format format) {
  if (format == RELUGRAD_X_NHWC) return {x.GetDim(0), x.GetDim(3), x.GetDim(1), x.GetDim(2)};
  return {x.GetDim(0), x.GetDim(1), x.GetDim(2), x.GetDim(3)};
}

}  // namespace relugrad_blocked_op

namespace optiling {

template <relugrad::ascend::MaskOp kOp>
static ge::graphStatus MaskBlockedTilingFunc(gert::TilingContext* context) {
  relugrad::Dtype dtype;
  switch (context->GetInputDesc(0)->GetDataType()) {
    case ge::DT_FLOAT:
      dtype = relugrad::Dtype::kF32;
      break;
    case ge::DT_FLOAT16:
      dtype = relugrad::Dtype::kF16;
      break;
    case ge::DT_BF16:
      dtype = relugrad::Dtype::kBF16;
      break;
    default:
      return ge::GRAPH_FAILED;
  }
  const gert::RuntimeAttrs* attrs = context->GetAttrs();
  const char* preset_name = attrs->GetAttrPointer<char>(relugrad_blocked_op::kPresetAttr);
  relugrad_preset preset = RELUGRAD_PRESET_TORCH;
  if (preset_name != nullptr && relugrad_preset_from_name(preset_name, &preset) != RELUGRAD_OK) {
    return ge::GRAPH_FAILED;
  }
  relugrad_x_format format = RELUGRAD_X_NCHW;
  if (!relugrad_blocked_op::FormatOf(attrs, &format)) return ge::GRAPH_FAILED;
  const gert::Shape& x = context->GetInputShape(0)->GetStorageShape();
  if (x.GetDimNum() != 4) return ge::GRAPH_FAILED;
  relugrad_options options;
  relugrad_options_init(&options, preset);
  relugrad::Rules sem;
  if (relugrad::ResolveOptions(&options, &sem) != RELUGRAD_OK) return ge::GRAPH_FAILED;
  const relugrad::KernelParams params = relugrad::MakeKernelParams(dtype, sem);
  auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  const relugrad_blocked_op::Nchw dims = relugrad_blocked_op::DimsOf(x, format);
  relugrad::ascend::BlockedTilingRequest request;
  request.op = kOp;
  request.dtype = dtype;
  request.format = format;
  request.n = dims.n;
  request.c = dims.c;
  request.h = dims.h;
  request.w = dims.w;
  request.cores = static_cast<int>(platform.GetCoreNumAiv());
  ReluV2BlockedTilingData* tiling = context->GetTilingData<ReluV2BlockedTilingData>();
  const char* why = "";
  if (!relugrad::ascend::MakeReluV2BlockedTiling(request, params, tiling, &why)) {
    return ge::GRAPH_FAILED;
  }
  context->SetBlockDim(tiling->blocks);
  size_t* workspace = context->GetWorkspaceSizes(1);
  workspace[0] = platform.GetLibApiWorkSpaceSize();
  return ge::GRAPH_SUCCESS;
}

}  // namespace optiling

namespace ge {

// y = x's shape; mask (N, C1, H, W, 2) uint8. An unknown C stays unknown in C1.
static ge::graphStatus InferShapeV2Blocked(gert::InferShapeContext* context) {
  relugrad_x_format format = RELUGRAD_X_NCHW;
  if (!relugrad_blocked_op::FormatOf(context->GetAttrs(), &format)) return GRAPH_FAILED;
  const gert::Shape* x = context->GetInputShape(0);
  if (x->GetDimNum() != 4) return GRAPH_FAILED;
  const relugrad_blocked_op::Nchw dims = relugrad_blocked_op::DimsOf(*x, format);
  *context->GetOutputShape(0) = *x;
  gert::Shape* mask = context->GetOutputShape(1);
  mask->SetDimNum(5);
  mask->SetDim(0, dims.n);
  mask->SetDim(1, dims.c < 0 ? dims.c : (dims.c + 15) / 16);
  mask->SetDim(2, dims.h);
  mask->SetDim(3, dims.w);
  mask->SetDim(4, 2);
  return GRAPH_SUCCESS;
}

static ge::graphStatus InferDataTypeV2Blocked(gert::InferDataTypeContext* context) {
  if (!relugrad_blocked_op::IsFloat(context->GetInputDataType(0))) return GRAPH_FAILED;
  context->SetOutputDataType(0, context->GetInputDataType(0));
  context->SetOutputDataType(1, ge::DT_UINT8);
  return GRAPH_SUCCESS;
}

// dx = dy's shape; the mask must be dy's (N, C1, H, W, 2) where both are known.
static ge::graphStatus InferShapeGradV2Blocked(gert::InferShapeContext* context) {
  relugrad_x_format format = RELUGRAD_X_NCHW;
  if (!relugrad_blocked_op::FormatOf(context->GetAttrs(), &format)) return GRAPH_FAILED;
  const gert::Shape* dy = context->GetInputShape(0);
  if (dy->GetDimNum() != 4) return GRAPH_FAILED;
  const relugrad_blocked_op::Nchw dims = relugrad_blocked_op::DimsOf(*dy, format);
  const gert::Shape* mask = context->GetInputShape(1);
  const int64_t want[5] = {dims.n, dims.c < 0 ? dims.c : (dims.c + 15) / 16, dims.h, dims.w, 2};
  if (mask->GetDimNum() != 5) return GRAPH_FAILED;
  for (size_t i = 0; i < 5; ++i) {
    const int64_t got = mask->GetDim(i);
    if (got >= 0 && want[i] >= 0 && got != want[i]) return GRAPH_FAILED;
  }
  *context->GetOutputShape(0) = *dy;
  return GRAPH_SUCCESS;
}

static ge::graphStatus InferDataTypeGradV2Blocked(gert::InferDataTypeContext* context) {
  if (!relugrad_blocked_op::IsFloat(context->GetInputDataType(0))) return GRAPH_FAILED;
  if (context->GetInputDataType(1) != ge::DT_UINT8) return GRAPH_FAILED;
  context->SetOutputDataType(0, context->GetInputDataType(0));
  return GRAPH_SUCCESS;
}

}  // namespace ge

namespace ops {

const std::vector<ge::DataType> kBlockedTypes = {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16};
const std::vector<ge::DataType> kBlockedMaskTypes = {ge::DT_UINT8, ge::DT_UINT8, ge::DT_UINT8};
const std::vector<ge::Format> kBlockedFormats = {ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND};

class ReluV2BlockedCustom : public OpDef {
 public:
  explicit ReluV2BlockedCustom(const char* name) : OpDef(name) {
    this->Input("x")
        .ParamType(REQUIRED)
        .DataType(kBlockedTypes)
        .Format(kBlockedFormats)
        .UnknownShapeFormat(kBlockedFormats);
    this->Output("y")
        .ParamType(REQUIRED)
        .DataType(kBlockedTypes)
        .Format(kBlockedFormats)
        .UnknownShapeFormat(kBlockedFormats);
    this->Output("mask")
        .ParamType(REQUIRED)
        .DataType(kBlockedMaskTypes)
        .Format(kBlockedFormats)
        .UnknownShapeFormat(kBlockedFormats);
    this->Attr("preset").AttrType(OPTIONAL).String("torch");
    this->Attr("data_format").AttrType(OPTIONAL).String("NCHW");
    this->SetInferShape(ge::InferShapeV2Blocked).SetInferDataType(ge::InferDataTypeV2Blocked);
    this->AICore().SetTiling(optiling::MaskBlockedTilingFunc<relugrad::ascend::MaskOp::kForward>);
    this->AICore().AddConfig("ascend910b");
  }
};

class ReluGradV2BlockedCustom : public OpDef {
 public:
  explicit ReluGradV2BlockedCustom(const char* name) : OpDef(name) {
    this->Input("dy")
        .ParamType(REQUIRED)
        .DataType(kBlockedTypes)
        .Format(kBlockedFormats)
        .UnknownShapeFormat(kBlockedFormats);
    this->Input("mask")
        .ParamType(REQUIRED)
        .DataType(kBlockedMaskTypes)
        .Format(kBlockedFormats)
        .UnknownShapeFormat(kBlockedFormats);
    this->Output("dx")
        .ParamType(REQUIRED)
        .DataType(kBlockedTypes)
        .Format(kBlockedFormats)
        .UnknownShapeFormat(kBlockedFormats);
    this->Attr("preset").AttrType(OPTIONAL).String("torch");
    this->Attr("data_format").AttrType(OPTIONAL).String("NCHW");
    this->SetInferShape(ge::InferShapeGradV2Blocked)
        .SetInferDataType(ge::InferDataTypeGradV2Blocked);
    this->AICore().SetTiling(optiling::MaskBlockedTilingFunc<relugrad::ascend::MaskOp::kBackward>);
    this->AICore().AddConfig("ascend910b");
  }
};

OP_ADD(ReluV2BlockedCustom);
OP_ADD(ReluGradV2BlockedCustom);

}  // namespace ops
