/**
 * The `_id` shape (24 lowercase hex: DESIGN §6) as zod schemas, one definition for every feature's
 * schema.ts. zod only, so the SPA can import it (rpc/ids.ts makes ids with node:crypto).
 */
import { z } from "zod";

export const ID_PATTERN = /^[0-9a-f]{24}$/;

/** A record id; `message` is the error the caller shows (it names the field). */
export const recordId = (message = "id 格式错误") => z.string().regex(ID_PATTERN, message);

/** The `_id` of an edit form: absent or "" means a new record. */
export const optionalId = recordId()
  .optional()
  .or(z.literal("").transform(() => undefined));

/** `{ id }`: the body of the back office's delete calls. */
export const idInput = z.object({ id: recordId() });
