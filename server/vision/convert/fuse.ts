/**
 * Peephole fusions found on the TF graph before translation. MobileNetV3's hard-swish arrives as
 * four ops, `mul(mul(x, c), relu6(add(x, 3)))` with c ~ 1/6; it becomes ONNX HardSwish (x *
 * clip(x/6 + 1/2, 0, 1)) times 6c, two passes over the activation instead of four. The bypassed
 * nodes are dropped from the ONNX model when nothing else reads them.
 */
import { numbers } from "./onnx-graph";
import { type GraphModel, type TfNode, parseInput } from "./tfjs-model";

export interface Fusion {
  op: "HardSwish";
  /** The TF tensor the fused op reads. */
  input: string;
  /**
   * The model's constants are float16-rounded (1/6 -> 0.16662598), so its function is
   * HardSwish(x) * (6 * c): the converted graph multiplies by `scale` to stay faithful.
   */
  scale: number;
}

const near = (a: number, b: number) => Math.abs(a - b) < 1e-3;

export function findFusions(model: GraphModel): Map<string, Fusion> {
  const fusions = new Map<string, Fusion>();
  const node = (ref: string): TfNode | undefined => model.nodes.get(parseInput(ref).node);
  const scalarConst = (ref: string): number | null => {
    const n = node(ref);
    const w = n?.op === "Const" ? model.weights.get(n.name) : undefined;
    return w && w.data.length === 1 ? numbers(w.data)[0] : null;
  };
  /** `ref` = op(x, c) (either order) with c close to `c0` -> [x, c] */
  const withConst = (ref: string, ops: string[], c0: number): [string, number] | null => {
    const n = node(ref);
    if (!n || !ops.includes(n.op) || n.input?.length !== 2) return null;
    const [a, b] = n.input;
    const cb = scalarConst(b);
    if (cb !== null && near(cb, c0)) return [a, cb];
    const ca = scalarConst(a);
    if (ca !== null && near(ca, c0)) return [b, ca];
    return null;
  };
  for (const n of model.nodes.values()) {
    if (n.op !== "Mul" || n.input?.length !== 2) continue;
    for (const [p, q] of [n.input, [...n.input].reverse()]) {
      const relu6 = node(q);
      if (relu6?.op !== "Relu6" || !relu6.input?.[0]) continue;
      const add = withConst(relu6.input[0], ["Add", "AddV2"], 3);
      const mul = withConst(p, ["Mul"], 1 / 6);
      // The add must be exactly 3 (it shifts the clip window); 1/6 may be rounded (see Fusion.scale).
      if (add && mul && add[0] === mul[0] && add[1] === 3) {
        fusions.set(n.name, { op: "HardSwish", input: add[0], scale: 6 * mul[1] });
        break;
      }
    }
  }
  return fusions;
}
