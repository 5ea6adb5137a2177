import { expect, it } from "vitest"
import { printable } from "../../../src/observability/printable.js"

it("control characters, DEL, C1 and bidi overrides are escaped; ordinary text (accents included) is kept; long text is cut", () => {
  expect(printable("\u001b[2J\u0007\r\n\u0000\u007f\u009b\u202e\u2028ok")).toBe("\\u001b[2J\\u0007\\u000d\\u000a\\u0000\\u007f\\u009b\\u202e\\u2028ok")
  expect(printable("Accès refusé: l'administrateur a dit non")).toBe("Accès refusé: l'administrateur a dit non")
  expect(printable("x".repeat(500), 10)).toBe("xxxxxxxxxx...")
})
