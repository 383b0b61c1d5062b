// CANN custom operator ReluGradCustom: definition, shape/dtype inference and
// tiling (UNTESTED: no CANN here). The tiling is relugrad's own
// (src/ascend/host/relu_grad_tiling_host.cc); the kernel is
// src/ascend/kernel/relu_grad_kernel.h through op_kernel/relu_grad_custom.cpp.
#include "ascend/host/relu_grad_tiling_host.h"
#include "core/semantics.h"
#include "register/op_def_registry.h"
#include "relugrad/relugrad.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {

static ge::graphStatus TilingFunc(gert::TilingContext* context) {
  relugrad::Dtype dtype;
  switch (context->GetInputDesc(0)->GetDataType()) {
    case ge::DT_FLOAT: dtype = relugrad::Dtype::kF32; break;
    case ge::DT_FLOAT16: dtype = relugrad::Dtype::kF16; break;
    case ge::DT_BF16: dtype = relugrad::Dtype::kBF16; break;
    default: return ge::GRAPH_FAILED;
  }
  const gert::RuntimeAttrs* attrs = context->GetAttrs();
  const char* preset_name = attrs->GetAttrPointer<char>(0);
  const float* threshold = attrs->GetAttrPointer<float>(1);
  const float* alpha = attrs->GetAttrPointer<float>(2);
  relugrad_preset preset = RELUGRAD_PRESET_TORCH;
  if (preset_name != nullptr && relugrad_preset_from_name(preset_name, &preset) != RELUGRAD_OK) {
    return ge::GRAPH_FAILED;
  }
  relugrad_options options;
  relugrad_options_init(&options, preset);
  if (threshold != nullptr) options.threshold = *threshold;
  if (alpha != nullptr) options.alpha = *alpha;
  relugrad::Rules sem;
  if (relugrad::ResolveOptions(&options, &sem) != RELUGRAD_OK) return ge::GRAPH_FAILED;
  const relugrad::KernelParams params = relugrad::MakeKernelParams(dtype, sem);

  auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  relugrad::ascend::TilingRequest request;
  request.dtype = dtype;
  request.n = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
  request.dx_address = 0;  // device addresses are unknown at tiling time; GE allocates 32-byte aligned
  request.cores = static_cast<int>(platform.GetCoreNumAiv());
  ReluGradTilingData* tiling = context->GetTilingData<ReluGradTilingData>();
  relugrad::WorkPlan plan;
  const char* why = "";
  if (!relugrad::ascend::MakeTiling(request, params, tiling, &plan, &why)) return ge::GRAPH_FAILED;
  context->SetBlockDim(tiling->blocks);
  size_t* workspace = context->GetWorkspaceSizes(1);
  workspace[0] = platform.GetLibApiWorkSpaceSize();
  return ge::GRAPH_SUCCESS;
}

}  // namespace optiling

namespace ge {

static ge::graphStatus InferShape(gert::InferShapeContext* context) {
  *context->GetOutputShape(0) = *context->GetInputShape(0);
  return GRAPH_SUCCESS;
}

static ge::graphStatus InferDataType(gert::InferDataTypeContext* context) {
  context->SetOutputDataType(0, context->GetInputDataType(0));
  return GRAPH_SUCCESS;
}

}  // namespace ge

namespace ops {

class ReluGradCustom : public OpDef {
 public:
  explicit ReluGradCustom(const char* name) : OpDef(name) {
    const std::vector<ge::DataType> types = {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16};
    const std::vector<ge::Format> formats = {ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND};
    this->Input("dy").ParamType(REQUIRED).DataType(types).Format(formats).UnknownShapeFormat(formats);
    this->Input("s").ParamType(REQUIRED).DataType(types).Format(formats).UnknownShapeFormat(formats);
    this->Output("dx").ParamType(REQUIRED).DataType(types).Format(formats).UnknownShapeFormat(formats);
    this->Attr("preset").AttrType(OPTIONAL).String("torch");
    this->Attr("threshold").AttrType(OPTIONAL).Float(0.0);
    this->Attr("alpha").AttrType(OPTIONAL).Float(0.0);
    this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
    this->AICore().SetTiling(optiling::TilingFunc);
    this->AICore().AddConfig("ascend910b");
  }
};

OP_ADD(ReluGradCustom);

}  // namespace ops
