/**
 * face-api's SSD MobileNetV1 face network written the way face-api writes it
 * (src/ssdMobilenetv1/*.ts: tf.conv2d / depthwiseConv2d / batchNorm / clipByValue and its box
 * decoding), on whatever TF.js backend is active: the reference for the ONNX rebuild
 * (server/vision/ssd-face.ts) in test/ssd-face.test.ts (CPU backend) and bench/models.ts (wasm).
 */
import * as tf from "@tensorflow/tfjs-core";
import type { ConstTensor } from "../server/vision/convert/tfjs-model";
import { SSD_SIZE } from "../server/vision/ssd-face";

/** face-api's forward pass (src/ssdMobilenetv1/*.ts) on TF.js, from the same decoded weights. */
export function ssdReference(w: Map<string, ConstTensor>, pixels: Float32Array): { boxes: Float32Array; scores: Float32Array } {
  const t = (name: string) => tf.tensor(w.get(name)!.data as Float32Array, w.get(name)!.shape) as unknown as tf.Tensor1D;
  return tf.tidy(() => {
    const pw = (x: tf.Tensor4D, p: string, s: number) => tf.clipByValue(tf.add(tf.conv2d(x, t(`${p}/weights`) as unknown as tf.Tensor4D, s, "same"), t(`${p}/convolution_bn_offset`)), 0, 6) as tf.Tensor4D;
    let x = tf.sub(tf.div(tf.tensor4d(pixels, [1, SSD_SIZE, SSD_SIZE, 3]), 127.5), 1) as tf.Tensor4D;
    x = pw(x, "MobilenetV1/Conv2d_0_pointwise", 2);
    let conv11 = x;
    for (let i = 1; i <= 13; i++) {
      const p = `MobilenetV1/Conv2d_${i}_depthwise`;
      const s = [2, 4, 6, 12].includes(i) ? 2 : 1;
      let d = tf.depthwiseConv2d(x, t(`${p}/depthwise_weights`) as unknown as tf.Tensor4D, s, "same");
      d = tf.batchNorm<tf.Rank.R4>(d, t(`${p}/BatchNorm/moving_mean`), t(`${p}/BatchNorm/moving_variance`), t(`${p}/BatchNorm/beta`), t(`${p}/BatchNorm/gamma`), 0.0010000000474974513);
      x = pw(tf.clipByValue(d, 0, 6) as tf.Tensor4D, `MobilenetV1/Conv2d_${i}_pointwise`, 1);
      if (i === 11) conv11 = x;
    }
    const extra: tf.Tensor4D[] = [];
    let e = x;
    for (let k = 0; k < 8; k++) {
      e = pw(e, `Prediction/Conv2d_${k}_pointwise`, k % 2 ? 2 : 1);
      if (k % 2) extra.push(e);
    }
    const inputs = [conv11, x, ...extra];
    const enc: tf.Tensor[] = [];
    const cls: tf.Tensor[] = [];
    inputs.forEach((f, k) => {
      const p = `Prediction/BoxPredictor_${k}`;
      enc.push(tf.reshape(tf.add(tf.conv2d(f, t(`${p}/BoxEncodingPredictor/weights`) as unknown as tf.Tensor4D, 1, "same"), t(`${p}/BoxEncodingPredictor/biases`)), [1, -1, 4]));
      cls.push(tf.reshape(tf.add(tf.conv2d(f, t(`${p}/ClassPredictor/weights`) as unknown as tf.Tensor4D, 1, "same"), t(`${p}/ClassPredictor/biases`)), [1, -1, 3]));
    });
    const a = tf.reshape(t("Output/extra_dim"), [-1, 4]);
    const b = tf.reshape(tf.concat(enc, 1), [-1, 4]);
    const [a0, a1, a2, a3] = tf.unstack(tf.transpose(a, [1, 0]));
    const [b0, b1, b2, b3] = tf.unstack(tf.transpose(b, [1, 0]));
    const s0 = tf.sub(a2!, a0!), s1 = tf.sub(a3!, a1!); // prettier-ignore
    const c0 = tf.add(a0!, tf.div(s0, 2)), c1 = tf.add(a1!, tf.div(s1, 2)); // prettier-ignore
    const h0 = tf.div(tf.mul(tf.exp(tf.div(b2!, 5)), s0), 2), h1 = tf.div(tf.mul(tf.exp(tf.div(b3!, 5)), s1), 2); // prettier-ignore
    const m0 = tf.add(tf.mul(tf.div(b0!, 10), s0), c0), m1 = tf.add(tf.mul(tf.div(b1!, 10), s1), c1); // prettier-ignore
    const boxes = tf.transpose(tf.stack([tf.sub(m0, h0), tf.sub(m1, h1), tf.add(m0, h0), tf.add(m1, h1)]), [1, 0]);
    const scores = tf.sigmoid(tf.slice(tf.concat(cls, 1), [0, 0, 1], [-1, -1, 1]));
    return { boxes: boxes.dataSync() as Float32Array, scores: scores.dataSync() as Float32Array };
  });
}

