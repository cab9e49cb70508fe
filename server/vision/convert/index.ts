/**
 * TF.js graph model -> ONNX converter. Offers:
 *  - `convertGraphModelFile(jsonFile, opts)` / `convertGraphModel(model, opts)`: ONNX bytes (opset 13)
 *    plus the input/output names, dtypes and shapes and the ops translated;
 *  - `readGraphModel(jsonFile)`: model.json + decoded weights (float16 / uint8 / uint16 quantisation);
 *  - `supportedOps()`: the TF ops it translates (anything else fails with an UNIMPLEMENTED ObscuraError
 *    naming the op and node);
 *  - `CONVERTER_VERSION`: part of every cache key of converted models.
 * The converted-model cache lives in server/vision/models.ts.
 */
export { CONVERTER_VERSION, convertGraphModel, convertGraphModelFile, type ConvertOptions, type ConvertResult, type TensorInfo } from "./convert";
export { supportedOps } from "./ops";
export { readGraphModel, readWeights, type DType, type GraphModel } from "./tfjs-model";
