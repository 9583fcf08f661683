/**
 * The SPA runs under `script-src 'self'` without 'unsafe-eval' (src/rpc/security-headers.ts). Zod
 * compiles object parsers with `new Function` unless told not to, and its probe for that is
 * reported as a CSP violation even though the failure is caught. scripts/build-web.ts injects this
 * module ahead of everything else in the bundle.
 */
import { z } from "zod";

z.config({ jitless: true });
