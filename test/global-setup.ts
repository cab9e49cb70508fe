/** Builds the Next.js app once before the integration suites start servers from it. */
import { buildIfNeeded } from "../scripts/build-if-needed";

export default function setup() {
  buildIfNeeded(process.cwd());
}
