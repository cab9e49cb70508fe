/** The activations TF fuses into _FusedConv2D / _FusedMatMul (`fused_ops`), for both translators. */
import type { OpContext } from "../context";
import type { Value } from "../onnx-graph";

/**
 * Applies a TF activation name to `y`. `layout` says where the channel axis is, which matters only
 * for PRelu: TF's alpha broadcasts over the last (NHWC) axis, so a channels-first (NCHW) value
 * needs it reshaped to [C,1,1].
 */
export function fusedActivation(ctx: OpContext, y: Value, act: string, alpha: Value | undefined, layout: "channels-first" | "channels-last"): Value {
  const out = { dtype: y.dtype, shape: y.shape };
  switch (act) {
    case "":
      return y;
    case "relu":
      return ctx.op1("Relu", [y], {}, out, "/relu");
    case "relu6":
      return ctx.op1("Clip", [y, ctx.g.scalar("float32", 0), ctx.g.scalar("float32", 6)], {}, out, "/relu6");
    case "elu":
      return ctx.op1("Elu", [y], { alpha: { f: 1 } }, out, "/elu");
    case "sigmoid":
      return ctx.op1("Sigmoid", [y], {}, out, "/sigmoid");
    case "tanh":
      return ctx.op1("Tanh", [y], {}, out, "/tanh");
    case "leakyrelu":
      return ctx.op1("LeakyRelu", [y], { alpha: { f: ctx.attrs.float("leakyrelu_alpha", 0.2) } }, out, "/leakyrelu");
    case "prelu": {
      if (!alpha) return ctx.fail("Prelu needs an alpha argument", "INVALID_ARGUMENT");
      if (layout === "channels-last") return ctx.op1("PRelu", [y, alpha], {}, out, "/prelu");
      const a = alpha.data
        ? ctx.g.constant("float32", [alpha.shape.reduce((p, q) => p * q, 1), 1, 1], alpha.data)
        : ctx.op1("Reshape", [alpha, ctx.g.int64([-1, 1, 1])], {}, { dtype: "float32", shape: [-1, 1, 1] }, "/prelu_alpha");
      return ctx.op1("PRelu", [y, a], {}, out, "/prelu");
    }
    default:
      return ctx.fail(`fused activation "${act}" is not supported`);
  }
}
