/**
 * The SPA runs under `script-src 'self'` without 'unsafe-eval' (src/rpc/security-headers.ts). Zod
 * compiles object parsers with `new Function` unless told not to, and its probe for that is
 * reported as a CSP violation even though the failure is caught. scripts/build-web.ts injects this
 * module ahead of everything else in the bundle.
 */
import { z } from "zod";
// The server's Chinese validation messages, installed before any page validates a form (issue 12).
import "../src/lib/zod-messages.ts";

z.config({ jitless: true });
