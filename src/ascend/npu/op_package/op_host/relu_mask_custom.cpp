// CANN custom operators ReluV2Custom (x -> y, mask) and ReluGradV2Custom
// (dy, mask -> dx): definitions, shape/dtype inference and tiling (UNTESTED:
// no CANN here). The mask is relugrad's flat one: uint8, ceil(n/8) bytes,
// bit i = element i, LSB first. The tiling is relugrad's own
// (src/ascend/host/relu_v2_tiling_host.cc).
#include "ascend/host/relu_v2_tiling_host.h"
#include "core/semantics.h"
#include "register/op_def_registry.h"
#include "relugrad/relugrad.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {

template <relugrad::ascend::MaskOp kOp>
static ge::graphStatus MaskTilingFunc(gert::TilingContext* context) {
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
  const char* preset_name = context->GetAttrs()->GetAttrPointer<char>(0);
  relugrad_preset preset = RELUGRAD_PRESET_TORCH;
  if (preset_name != nullptr && relugrad_preset_from_name(preset_name, &preset) != RELUGRAD_OK) {
    return ge::GRAPH_FAILED;
  }
  relugrad_options options;
  relugrad_options_init(&options, preset);
  relugrad::Rules sem;
  if (relugrad::ResolveOptions(&options, &sem) != RELUGRAD_OK) return ge::GRAPH_FAILED;
  const relugrad::KernelParams params = relugrad::MakeKernelParams(dtype, sem);
  auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  relugrad::ascend::MaskTilingRequest request;
  request.op = kOp;
  request.dtype = dtype;
  request.n = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
  request.cores = static_cast<int>(platform.GetCoreNumAiv());
  ReluV2TilingData* tiling = context->GetTilingData<ReluV2TilingData>();
  const char* why = "";
  if (!relugrad::ascend::MakeReluV2Tiling(request, params, tiling, &why)) return ge::GRAPH_FAILED;
  context->SetBlockDim(tiling->blocks);
  size_t* workspace = context->GetWorkspaceSizes(1);
  workspace[0] = platform.GetLibApiWorkSpaceSize();
  return ge::GRAPH_SUCCESS;
}

}  // namespace optiling

namespace ge {

static ge::graphStatus InferShapeV2(gert::InferShapeContext* context) {
  const int64_t n = context->GetInputShape(0)->GetShapeSize();
  *context->GetOutputShape(0) = *context->GetInputShape(0);
  gert::Shape* mask = context->GetOutputShape(1);
  mask->SetDimNum(1);
  mask->SetDim(0, (n + 7) / 8);
  return GRAPH_SUCCESS;
}

static ge::graphStatus InferDataTypeV2(gert::InferDataTypeContext* context) {
  context->SetOutputDataType(0, context->GetInputDataType(0));
  context->SetOutputDataType(1, ge::DT_UINT8);
  return GRAPH_SUCCESS;
}

static ge::graphStatus InferShapeGradV2(gert::InferShapeContext* context) {
  *context->GetOutputShape(0) = *context->GetInputShape(0);
  return GRAPH_SUCCESS;
}

static ge::graphStatus InferDataTypeGradV2(gert::InferDataTypeContext* context) {
  context->SetOutputDataType(0, context->GetInputDataType(0));
  return GRAPH_SUCCESS;
}

}  // namespace ge

namespace ops {

const std::vector<ge::DataType> kTypes = {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16};
const std::vector<ge::DataType> kMaskTypes = {ge::DT_UINT8, ge::DT_UINT8, ge::DT_UINT8};
const std::vector<ge::Format> kFormats = {ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND};

class ReluV2Custom : public OpDef {
 public:
  explicit ReluV2Custom(const char* name) : OpDef(name) {
    this->Input("x").ParamType(REQUIRED).DataType(kTypes).Format(kFormats).UnknownShapeFormat(
        kFormats);
    this->Output("y").ParamType(REQUIRED).DataType(kTypes).Format(kFormats).UnknownShapeFormat(
        kFormats);
    this->Output("mask")
        .ParamType(REQUIRED)
        .DataType(kMaskTypes)
        .Format(kFormats)
        .UnknownShapeFormat(kFormats);
    this->Attr("preset").AttrType(OPTIONAL).String("torch");
    this->SetInferShape(ge::InferShapeV2).SetInferDataType(ge::InferDataTypeV2);
    this->AICore().SetTiling(optiling::MaskTilingFunc<relugrad::ascend::MaskOp::kForward>);
    this->AICore().AddConfig("ascend910b");
  }
};

class ReluGradV2Custom : public OpDef {
 public:
  explicit ReluGradV2Custom(const char* name) : OpDef(name) {
    this->Input("dy").ParamType(REQUIRED).DataType(kTypes).Format(kFormats).UnknownShapeFormat(
        kFormats);
    this->Input("mask")
        .ParamType(REQUIRED)
        .DataType(kMaskTypes)
        .Format(kFormats)
        .UnknownShapeFormat(kFormats);
    this->Output("dx").ParamType(REQUIRED).DataType(kTypes).Format(kFormats).UnknownShapeFormat(
        kFormats);
    this->Attr("preset").AttrType(OPTIONAL).String("torch");
    this->SetInferShape(ge::InferShapeGradV2).SetInferDataType(ge::InferDataTypeGradV2);
    this->AICore().SetTiling(optiling::MaskTilingFunc<relugrad::ascend::MaskOp::kBackward>);
    this->AICore().AddConfig("ascend910b");
  }
};

OP_ADD(ReluV2Custom);
OP_ADD(ReluGradV2Custom);

}  // namespace ops
