/**
 * The SPA runs under `script-src 'self'` without 'unsafe-eval' (src/rpc/security-headers.ts). Zod
 * compiles object parsers with `new Function` unless told not to, and its probe for that is
 * reported as a CSP violation even though the failure is caught. In the SPA build every `import
 * … from "zod"` resolves to this module (scripts/build-web.ts, plugin "zod-via-no-eval"), so zod is
 * configured wherever it is first loaded — in the chunk of the first page that validates, not on
 * the first page of every visit — before any schema is built.
 */
import { z } from "zod";
// The server's Chinese validation messages, installed before any page validates a form (issue 12).
import "../src/lib/zod-messages.ts";

z.config({ jitless: true });

export * from "zod";
