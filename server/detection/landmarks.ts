/**
 * 68 face landmarks in the iBUG 300-W layout, taken from MediaPipe FaceMesh's 468-point mesh by
 * the usual correspondence (each iBUG point is the mesh vertex at the same place on the face), and
 * split into the Detection API's named lists. "Right" and "left" are the person's own: the right
 * eye is on the image's left in a frontal photo.
 *
 *   faceContour 0-16 (jaw, from the right temple over the chin to the left), eyebrowRight 17-21,
 *   eyebrowLeft 22-26, noseBridge 27-30, noseBall 31-35 (the nostrils' lower edge), eyeRight 36-41,
 *   eyeLeft 42-47, mouthOuter 48-59, mouthInner 60-67, plus eyeRightCenter and eyeLeftCenter (the
 *   mean of each eye's six points).
 */
export type Point2 = [number, number];

/** FaceMesh vertex of each iBUG point, 0..67. */
export const MESH_TO_IBUG68: readonly number[] = [
  162, 234, 93, 58, 172, 136, 149, 148, 152, 377, 378, 365, 397, 288, 323, 454, 389, // jaw
  71, 63, 105, 66, 107, // right eyebrow
  336, 296, 334, 293, 301, // left eyebrow
  168, 197, 5, 4, // nose bridge
  75, 97, 2, 326, 305, // nose bottom
  33, 160, 158, 133, 153, 144, // right eye
  362, 385, 387, 263, 373, 380, // left eye
  61, 39, 37, 0, 267, 269, 291, 405, 314, 17, 84, 181, // outer lips
  78, 82, 13, 312, 308, 317, 14, 87, // inner lips
]; // prettier-ignore

export const LANDMARK_GROUPS = {
  faceContour: [0, 17],
  eyebrowRight: [17, 22],
  eyebrowLeft: [22, 27],
  noseBridge: [27, 31],
  noseBall: [31, 36],
  eyeRight: [36, 42],
  eyeLeft: [42, 48],
  mouthOuter: [48, 60],
  mouthInner: [60, 68],
} as const;

export type LandmarkName = keyof typeof LANDMARK_GROUPS | "eyeRightCenter" | "eyeLeftCenter";

/** The 68 points from a mesh of 468 (x, y) points. */
export function ibug68(mesh: readonly Point2[]): Point2[] {
  if (mesh.length < 468) throw new Error(`a FaceMesh has 468 points, got ${mesh.length}`);
  return MESH_TO_IBUG68.map((i) => mesh[i]!);
}

const mean = (pts: readonly Point2[]): Point2 => [pts.reduce((s, p) => s + p[0], 0) / pts.length, pts.reduce((s, p) => s + p[1], 0) / pts.length];
const round1 = (p: Point2): Point2 => [Math.round(p[0] * 10) / 10, Math.round(p[1] * 10) / 10];

/** The named lists of the Detection API (coordinates rounded to 0.1 px). */
export function namedLandmarks(points68: readonly Point2[]): Record<LandmarkName, Point2[]> {
  const out = {} as Record<LandmarkName, Point2[]>;
  for (const [name, [a, b]] of Object.entries(LANDMARK_GROUPS)) out[name as LandmarkName] = points68.slice(a, b).map(round1);
  out.eyeRightCenter = [round1(mean(points68.slice(36, 42)))];
  out.eyeLeftCenter = [round1(mean(points68.slice(42, 48)))];
  return out;
}
